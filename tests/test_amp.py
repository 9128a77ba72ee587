"""The guitar amp and cabinet (engine.synth.amp) and the parts that go through it.

Properties, not bytes: the amp leaves a part at the level it came in with, its distortion is the
same whatever that level, more drive is more distortion with even harmonics (asymmetric
clipping), the cabinet keeps the fizz above 8 kHz down, silence stays silent; through
FluidSynth an amped guitar is distorted and compressed where the clean one is not, sits where
its pan puts it, and the composer drives metal's guitars harder than rock's and leaves every
other instrument clean.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.score import DRUM_CHANNEL, Note, Part, Score
from engine.synth.amp import Amp

SR = 48000
BLOCK = 4096


def run(amp: Amp, x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64).copy()
    for i in range(0, y.size, BLOCK):
        amp.process(y[i:i + BLOCK])
    return y


def tone(f: float, seconds: float, level: float) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return level * np.sin(2 * np.pi * f * t)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x ** 2)))


def harmonics(y: np.ndarray, f0: float, k: int) -> np.ndarray:
    """Amplitudes of harmonics 1..k of ``f0`` in ``y`` (a whole number of periods is not needed:
    a Hann window and the peak bin around each)."""
    w = np.hanning(y.size)
    spec = np.abs(np.fft.rfft(y * w))
    fr = np.fft.rfftfreq(y.size, 1 / SR)
    out = []
    for h in range(1, k + 1):
        sel = np.abs(fr - h * f0) < 3.0
        out.append(spec[sel].max())
    return np.array(out)


@pytest.mark.parametrize("level", [0.01, 0.1, 0.5])
def test_the_part_leaves_at_the_level_it_came_in_with(level):
    x = tone(220.0, 3.0, level)
    y = run(Amp(SR, 1.0), x)
    settle = SR                       # the followers' τ is 0.3 s
    assert 20 * np.log10(rms(y[settle:]) / rms(x[settle:])) == pytest.approx(0.0, abs=1.0)


def test_drive_means_the_same_distortion_whatever_the_level():
    quiet = run(Amp(SR, 0.8), tone(220.0, 3.0, 0.02))[SR:]
    loud = run(Amp(SR, 0.8), tone(220.0, 3.0, 0.4))[SR:]
    hq, hl = harmonics(quiet, 220.0, 8), harmonics(loud, 220.0, 8)
    # the same spectrum shape: harmonics relative to the fundamental agree within 1 dB
    assert np.allclose(20 * np.log10(hq[1:] / hq[0]), 20 * np.log10(hl[1:] / hl[0]), atol=1.0)


def test_more_drive_more_distortion_with_even_harmonics():
    x = tone(220.0, 2.0, 0.1)
    thd = []
    for d in (0.0, 0.5, 1.0):
        h = harmonics(run(Amp(SR, d), x)[SR // 2:], 220.0, 10)
        thd.append(np.sqrt((h[1:] ** 2).sum()) / h[0])
        if d == 1.0:
            assert h[1] > 0.01 * h[0], "no second harmonic: the clipping is symmetric"
    assert thd[0] < thd[1] < thd[2]
    assert thd[2] > 0.3


def test_the_cabinet_keeps_the_fizz_down():
    y = run(Amp(SR, 1.0), tone(220.0, 2.0, 0.3))[SR // 2:]
    spec = np.abs(np.fft.rfft(y * np.hanning(y.size))) ** 2
    fr = np.fft.rfftfreq(y.size, 1 / SR)
    above = spec[fr > 8000].sum() / spec.sum()
    assert above < 1e-3, f"{10 * np.log10(above):.1f} dB of the energy above 8 kHz"


def test_silence_stays_silent():
    amp = Amp(SR, 1.0)
    assert not run(amp, np.zeros(SR)).any()
    y = run(amp, np.concatenate([tone(110.0, 1.0, 0.2), np.zeros(2 * SR)]))
    assert np.isfinite(y).all()
    assert rms(y[-SR // 2:]) < 1e-4                 # the filters' tails have died away


# ------------------------------------------------------------------------------ through FluidSynth
@pytest.fixture(scope="module")
def pool():
    from engine.synth import fluid
    try:
        p = fluid.FluidPool(size=2)
        p.warmup()
    except fluid.FluidUnavailable as e:
        pytest.skip(f"FluidSynth: {e}")
    yield p
    p.close()


def chord_score(part: Part, index: int = 0) -> Score:
    """An E power chord (E2, B2, E3) struck every beat for 8 beats on ``part`` (the score's part
    ``index``), 120 bpm."""
    def bar(i):
        if i >= 2:
            return [], []
        return [Note(index, i * 4 + b, 0.9, k, 100) for b in range(4) for k in (40, 47, 52)], []
    return Score(prompt="test", seed=0, bpm=120.0, meter=(4, 4), key_root=4, mode="minor", genre="test",
                 parts=[part], make_bar=bar)


def perform_part(pool, part: Part, seconds: float = 4.0) -> np.ndarray:
    from engine.synth.perform import Performance
    perf = Performance(chord_score(part), pool.instrument(), SR)
    try:
        return perf.read(int(seconds * SR)).astype(np.float64)
    finally:
        perf.close()


def guitar(drive: float, pan: float = 0.0) -> Part:
    return Part("distorted guitar", "chords", 30, 0, level=0.8, pan=pan, reverb=0.0, drive=drive)


def test_an_amped_guitar_is_distorted_and_compressed(pool):
    """More drive: more of the energy in the amp's upper harmonics (1.5–5 kHz, below the
    cabinet's fall) and a flatter envelope (clipping compresses)."""
    seg = slice(SR // 2, int(3.5 * SR))

    def upper_share(y):
        p = np.abs(np.fft.rfft(y[seg] * np.hanning(y[seg].size))) ** 2
        fr = np.fft.rfftfreq(y[seg].size, 1 / SR)
        return float(p[(fr > 1500) & (fr < 5000)].sum() / p.sum())

    def crest(y):
        env = np.sqrt(np.convolve(y[seg] ** 2, np.ones(480) / 480, mode="valid"))
        return float(env.max() / env.mean())

    takes = [perform_part(pool, guitar(d)).mean(axis=1) for d in (0.0, 0.45, 1.0)]
    shares = [upper_share(y) for y in takes]
    assert shares[0] < shares[1] < shares[2], shares
    assert shares[2] > 1.5 * shares[0], shares
    assert crest(takes[2]) < crest(takes[0]) - 0.1


def test_an_amped_guitar_sits_where_its_pan_puts_it(pool):
    left = perform_part(pool, guitar(1.0, pan=-0.8))
    seg = slice(SR // 2, int(3.5 * SR))
    l, r = rms(left[seg, 0]), rms(left[seg, 1])
    assert l > 4 * r, (l, r)
    right = perform_part(pool, guitar(1.0, pan=0.8))
    assert rms(right[seg, 1]) > 4 * rms(right[seg, 0])


def test_parts_without_drive_are_not_amped(pool):
    """A clean part beside an amped one renders as it does alone (its audio group is the mix's),
    its reverb too — even with the amped part on MIDI channel 0."""
    from engine.synth.perform import Performance
    piano = Part("piano", "chords", 0, 1, level=0.8, pan=0.0, reverb=0.4)
    alone = perform_part(pool, piano)

    sc = chord_score(piano, index=1)
    sc.parts = [Part("silent guitar", "chords", 30, 0, level=0.8, drive=1.0), piano]   # on channel 0, silent
    perf = Performance(sc, pool.instrument(), SR)
    try:
        both = perf.read(alone.shape[0]).astype(np.float64)
    finally:
        perf.close()
    assert np.abs(both - alone).max() < 1e-6


# ------------------------------------------------------------------------------ the composer
def drives(prompt: str) -> dict:
    from engine.compose import compose
    s = compose(prompt, 1)
    return {p.name: p.drive for p in s.parts}, s


@pytest.mark.parametrize("prompt", ["thrash metal", "doom metal", "black metal"])
def test_metal_guitars_are_driven_hardest(prompt):
    d, s = drives(prompt)
    guitars = [p for p in s.parts if p.program in (29, 30)]
    assert guitars and all(p.drive >= 0.75 for p in guitars), d
    rock = {p.program: p.drive for p in drives("rock")[1].parts if p.program in (29, 30)}
    assert all(p.drive > rock.get(p.program, 0.0) for p in guitars if p.program in rock)


def test_other_instruments_stay_clean():
    for prompt in ("jazz trio", "deep house", "bossa nova", "punk rock", "string quartet", "blues"):
        _, s = drives(prompt)
        for p in s.parts:
            assert (p.drive > 0) == (p.program in (29, 30) and not p.is_drums), (prompt, p)


def test_a_named_distortion_guitar_is_amped_in_any_style():
    _, s = drives("reggae with a distortion guitar")
    assert any(p.program == 30 and p.drive > 0 for p in s.parts), [(p.name, p.program) for p in s.parts]


def test_only_a_score_with_amped_parts_plays_on_an_instance_with_audio_groups(pool):
    """Audio groups cost every stream their mixing: a clean score plays on a plain instance; an
    amped one swaps the plain instance it was given, unplayed, back into the pool for one with
    groups, and its end refills the pool with its own kind."""
    plain_free, amped_free, made = len(pool._free), len(pool._free_amped), len(pool._all)
    clean = pool.instrument()
    clean.setup([guitar(0.0)])
    assert not pool.is_amped(clean.h)
    amped = pool.instrument()
    amped.setup([guitar(1.0)])
    assert pool.is_amped(amped.h)
    assert len(pool._free) == plain_free - 1          # the amped one's plain instance came back
    assert len(pool._all) == made                     # and none was made for it
    for inst in (clean, amped):
        inst.close()
    assert (len(pool._free), len(pool._free_amped)) == (plain_free, amped_free)
