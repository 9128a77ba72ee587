"""The embedded synth: prompt reading, determinism, continuity, batching, musical content."""
from __future__ import annotations

import numpy as np
import pytest

from dsp import seam_jump
from engine import get_backend
from engine.synth import arrange, render

SR = 48000


@pytest.mark.parametrize("prompt,bpm,key,mode,inst", [
    ("deep house in A minor with piano 124 bpm", 124, "A minor", "minor", {"drums", "piano", "bass"}),
    ("lofi hip hop beat with rhodes", 90, None, None, {"drums", "piano"}),
    ("ambient drone in F# lydian", None, "F# lydian", "lydian", {"pad"}),
    ("happy pop song in C major, no drums", None, "C major", "major", {"bass"}),
    ("techno 133 bpm", 133, None, None, {"drums", "bass"}),
])
def test_prompt_is_read(prompt, bpm, key, mode, inst):
    a = arrange(prompt, 0)
    if bpm:
        assert a.bpm == pytest.approx(bpm)
    if key:
        assert a.key_name == key
    if mode:
        assert a.mode == mode
    assert inst <= set(a.instruments)
    if "no drums" in prompt:
        assert "drums" not in a.instruments


def test_unknown_words_get_sensible_defaults_from_the_hash():
    a = arrange("purple elephant staircase", 0)
    b = arrange("purple elephant staircase", 1)
    for x in (a, b):
        assert 40 <= x.bpm <= 220 and x.instruments and x.mode
    assert (a.bpm, a.key_name, tuple(sorted(a.instruments))) != (b.bpm, b.key_name, tuple(sorted(b.instruments))) \
        or not np.array_equal(a.tables["lead_note"], b.tables["lead_note"])


def test_deterministic_per_prompt_and_seed():
    a = render([arrange("funk groove with bass", 5)], np.array([0]), 20000, SR)
    b = render([arrange("funk groove with bass", 5)], np.array([0]), 20000, SR)
    c = render([arrange("funk groove with bass", 6)], np.array([0]), 20000, SR)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("prompt", ["deep house with piano and arp", "jazz trio with drums", "ambient pads"])
def test_chunked_equals_one_shot_and_seams_are_continuous(prompt):
    arr = arrange(prompt, 3)
    total = SR * 3
    one = render([arr], np.array([0]), total, SR)[0]
    rng = np.random.default_rng(0)
    sizes, pos = [], 0
    while pos < total:
        n = int(min(rng.integers(1, 9000), total - pos))
        sizes.append(n)
        pos += n
    parts, pos, seams = [], 0, []
    for n in sizes:
        parts.append(render([arr], np.array([pos]), n, SR)[0])
        pos += n
        seams.append(pos)
    chunked = np.concatenate(parts)
    assert np.array_equal(chunked, one)
    at, inside = seam_jump(chunked, seams[:-1])
    assert at <= inside


def test_batch_equals_individual_streams():
    arrs = [arrange(p, i) for i, p in enumerate(["house", "ambient", "hip hop", "rock with lead"])]
    starts = np.array([0, 1000, 48000 * 60, 7])
    batch = render(arrs, starts, 4096, SR)
    for i, a in enumerate(arrs):
        assert np.array_equal(batch[i], render([a], starts[i:i + 1], 4096, SR)[0])


def test_sounds_like_music():
    """Stereo, in range, no NaN, not silent; harmonic content on the key's scale; drums on beats."""
    a = arrange("house in A minor with piano, bass and drums 120 bpm", 1)
    x = render([a], np.array([0]), SR * 8, SR)[0]
    assert x.shape == (SR * 8, 2) and x.dtype == np.float32
    assert np.isfinite(x).all() and np.abs(x).max() <= 1.0
    rms = np.sqrt(np.mean(x ** 2))
    assert 0.03 < rms < 0.5
    assert not np.array_equal(x[:, 0], x[:, 1])              # real stereo
    # harmony: without drums, nearly all tonal energy lies on the A-minor scale
    # (a chromatic spread would put 7/12 of it there)
    tonal = render([arrange("A minor with piano, bass, pad and a lead melody, no drums", 1)],
                   np.array([0]), SR * 8, SR)[0].mean(axis=1).astype(np.float64)
    spec = np.abs(np.fft.rfft(tonal * np.hanning(tonal.size))) ** 2
    freqs = np.fft.rfftfreq(tonal.size, 1 / SR)
    band = (freqs > 50) & (freqs < 1000)
    pcs = (np.round(12 * np.log2(freqs[band] / 440.0)) % 12).astype(int)   # 0 = A
    chroma = np.bincount(pcs, weights=spec[band], minlength=12)
    assert chroma[[0, 2, 3, 5, 7, 8, 10]].sum() / chroma.sum() > 0.9
    mono = x.mean(axis=1).astype(np.float64)
    # drums: energy envelope repeats with the beat (0.5 s at 120 bpm)
    env = np.sqrt(np.convolve(mono ** 2, np.ones(480) / 480, mode="same"))[::480]  # 10 ms hops
    env = env - env.mean()
    ac = np.correlate(env, env, "full")[env.size - 1:]
    assert ac[50] > 0.3 * ac[0]                                  # 500 ms lag


def test_backend_contract():
    b = get_backend("synth")
    b.warmup()
    s1 = b.start(1, "disco with strings", 0)
    s2 = b.start(2, "dark techno", 1)
    out = b.generate([s1, s2], 1024)
    assert len(out) == 2 and out[0].shape == (1024, 2)
    assert s1.frames_done == 1024
    nxt = b.generate([s1], 512)[0]
    ref = render([s1.state], np.array([0]), 1536, b.sample_rate)[0]
    assert np.array_equal(np.concatenate([out[0], nxt]), ref)


@pytest.mark.parametrize("prompt", ["lofi hip hop with rhodes", "techno with arp", "jazz trio", "qwerty"])
def test_a_stream_starts_from_silence(prompt):
    """Nothing rings in from 'before' the stream: the first frame is silent, the start has no click."""
    x = render([arrange(prompt, 2)], np.array([0]), 4800, SR)[0]
    assert np.abs(x[0]).max() == 0.0
    d = np.abs(np.diff(x, axis=0)).max(axis=1)
    assert d[:96].max() <= d[96:].max()           # the first 2 ms jump no more than the music does


def test_an_endless_stream_has_form_not_a_loop():
    """Four 8-bar sections: the contrasting ones differ from the first; a breakdown drops the kick."""
    for seed in range(4):
        a = arrange("house with drums, bass, piano and lead 124 bpm", seed)
        assert a.form[0] == "A" and len(set(a.form)) >= 3
        bar = int(round(SR * 60 / a.bpm * 4))
        sec = 8 * bar
        x = render([a], np.array([0]), 4 * sec, SR)[0].mean(axis=1)
        parts = [x[k * sec:(k + 1) * sec] for k in range(4)]
        low = []
        for p in parts:
            spec = np.abs(np.fft.rfft(p[:4 * bar]))
            f = np.fft.rfftfreq(4 * bar, 1 / SR)
            low.append(spec[(f > 30) & (f < 120)].sum())
        for k, kind in enumerate(a.form):
            if kind == "B":                                  # another progression, not a repeat
                assert not np.array_equal(a.chords[8 * k:8 * k + 8], a.chords[:8])
                assert np.corrcoef(parts[0], parts[k])[0, 1] < 0.95
            if kind == "D":                                  # first half of a breakdown: no kick, no bass
                assert low[k] < 0.3 * low[0]
