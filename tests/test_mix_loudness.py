"""The master's loudness follower on music that alternates full and sparse passages, measured as a
loudness meter measures it (BS.1770, pyloudnorm) — the case where a follower that gates 85 ms blocks
and trusts the limiter's running loss comes out 1–3 LU under the target: an 808's decay between hits
fell under its gate (BS.1770's 400 ms blocks count it), and the loss it adds back lagged the loss
the limiter took. The signals are synthetic (a drill beat's shape: 808 hits with long tails on every
beat for two bars, then two bars of hats over a soft pad), so each case is exactly repeatable and
independent of the SoundFont; ``tests/test_render.py`` measures real takes.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.synth.perform import BLOCK, TARGET_LUFS, Mix

pyln = pytest.importorskip("pyloudnorm")

SR = 48000


def drops(decay: float, pad: float, seconds: float = 36.0, seed: int = 3) -> np.ndarray:
    """Two bars of an 808 on every beat at 140 bpm (a pitch-dropping 50 Hz sine, ``exp(-decay·t)``),
    then two bars of eighth-note hats over a soft A-major pad of ``pad`` per voice, and so on."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    x = np.zeros(n)
    beat = int(SR * 60 / 140)
    t = np.arange(beat) / SR
    hit = np.sin(2 * np.pi * 50 * t * (1 + 1.5 * np.exp(-t * 40))) * np.exp(-t * decay)
    hat = rng.standard_normal(int(0.03 * SR)) * np.exp(-np.arange(int(0.03 * SR)) / 300)
    for b in range(n // beat):
        i = b * beat
        if (b // 8) % 2 == 0:
            x[i:i + beat] += 0.5 * hit
        else:
            tt = (i + np.arange(beat)) / SR
            x[i:i + beat] += pad * sum(np.sin(2 * np.pi * f * tt) for f in (220.0, 277.18, 329.63))
        for k in range(2):
            j = i + k * beat // 2
            x[j:j + hat.size] += 0.02 * hat
    return np.stack([x, x], axis=1).astype(np.float32)


def master(x: np.ndarray, user_gain: float = 1.0) -> np.ndarray:
    """``x`` through a fresh :class:`Mix` (no tonal balance: the follower and limiter alone), block by block."""
    m = Mix(SR, initial_db=None, balance=False)
    m.user_gain = user_gain
    out = np.zeros_like(x)
    for i in range(0, x.shape[0] - BLOCK + 1, BLOCK):
        out[i:i + BLOCK] = m.process(x[i:i + BLOCK].copy())
    return out


def lufs(y: np.ndarray) -> float:
    return float(pyln.Meter(SR).integrated_loudness(y.astype(np.float64)))


@pytest.mark.parametrize("decay, pad", [(8.0, 0.005), (8.0, 0.02), (4.0, 0.005)])
def test_a_beat_of_808_drops_measures_at_the_target(decay, pad):
    got = lufs(master(drops(decay, pad)))
    assert abs(got - TARGET_LUFS) <= 1.0, round(got, 2)


def noise(seconds: float = 30.0) -> np.ndarray:
    return (0.05 * np.random.default_rng(1).standard_normal((int(seconds * SR), 2))).astype(np.float32)


def test_a_steady_mix_is_left_where_it_is():
    """Steady noise needs no correction: from 2 s on it measures the target, and the last 10 s the
    same as the first."""
    y = master(noise())
    a, b = lufs(y[2 * SR:12 * SR]), lufs(y[-10 * SR:])
    assert abs(a - TARGET_LUFS) <= 0.5 and abs(b - a) <= 0.3, (round(a, 2), round(b, 2))


def test_the_users_gain_is_not_undone():
    """The follower's corrections leave the user's fader alone: at −6 dB of user gain the music
    stays 6 dB under the target to the end (a correction that measured the output with the
    fader in it would lift it back by up to its 2 dB)."""
    y = master(noise(), user_gain=0.5)
    got = lufs(y[-10 * SR:])
    assert abs(got - (TARGET_LUFS - 6.02)) <= 0.5, round(got, 2)
