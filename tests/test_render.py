"""The renderers (FluidSynth and the oscillator fallback) and the mix, on composed and hand-built scores.

Properties, not golden audio: no clicks at swung off-beats, chunking never changes the audio,
a 3/4 prompt sounds in threes, instruments sound like their programs, loudness sits at −14 LUFS
across prompts with true peaks under −1 dBTP, seeds differ; the fallback's vibrato and pads.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

from engine.compose import compose
from engine.compose.genres import INSTRUMENTS
from engine.synth.oscillators import OscInstrument
from engine.synth.perform import BLOCK, Performance
from engine.synth.backend import SynthBackend

from scorekit import make_score  # noqa: E402

SR = 48000
RENDERERS = ["fluidsynth", "oscillators"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def backends():
    made = {r: SynthBackend(renderer=r, pool_size=2, workers=1) for r in RENDERERS}
    for b in made.values():
        b.warmup()
    yield made
    for b in made.values():
        b.close()


def take(b: SynthBackend, prompt: str, seconds: float, seed: int = 0, chunk: int = 8192) -> np.ndarray:
    s = b.start(1, prompt, seed)
    n = int(seconds * SR)
    out = np.concatenate([b.generate([s], min(chunk, n - k))[0] for k in range(0, n, chunk)])
    b.end(s)
    return out


def jumps(x: np.ndarray) -> np.ndarray:
    """Frames whose one-sample jump exceeds 20× the local median jump (10 ms windows) and 0.05."""
    d = np.abs(np.diff(x.astype(np.float64), axis=0)).max(axis=1)
    w = 480
    m = d[: d.size // w * w].reshape(-1, w)
    med = np.median(m, axis=1)
    local = np.repeat(np.maximum.reduce([med, np.r_[med[1:], med[-1]], np.r_[med[0], med[:-1]]]), w)
    d = d[: local.size]
    return np.nonzero((d > 20 * local) & (d > 0.05))[0]


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("prompt", ["lofi hip hop beat with rhodes", "jazz trio with brushes and upright bass",
                                    "funk with slap bass and clavinet", "swing big band with horns"])
def test_swung_prompts_have_no_clicks(backends, renderer, prompt):
    assert compose(prompt, 0).swing > 0 or "big band" in prompt
    x = take(backends[renderer], prompt, 8.0)
    assert np.isfinite(x).all() and np.abs(x).max() > 0.05
    bad = jumps(x)
    assert bad.size == 0, f"{bad.size} clicks, first at {bad[:5] / SR} s"


@pytest.mark.parametrize("prompt,seed", [
    ("dark techno with rumbling kick and acid bass", 7),
    ('Town theme for a cozy 16-bit style RPG, the village you come back to between dungeons. '
     'In 3, about 96 bpm, F major. Flute melody over pizzicato strings and harp, a little '
     'celesta sparkle on the turnarounds. Has to loop cleanly. No drums.', 2),
    ('dub techno (Basic Channel, Deepchord), 4/4, 122bpm — a single filtered chord stab '
     'drowned in tape delay, sub bass, muffled kick, soft hats, no snare, no lead', 2)])
def test_raw_oscillator_presets_do_not_click_on_a_quiet_mix(backends, prompt, seed):
    """GM's synth bass / saw / square presets are raw waves: in a breakdown (kick out, acid
    bass and arp on their own) every period of the bass read as a click (138 in 30 s) until
    their filter was closed a little (``fluid.EDGE_FILTER_CENTS``); a square pulse bass under
    a drumless town theme clicked until its filter was closed further, a sub bass out of a
    near-silent dub techno bar until it swelled in (``fluid.SUB_ATTACK_CENTS``)."""
    x = take(backends["fluidsynth"], prompt, 30.0, seed=seed)
    bad = jumps(x)
    assert bad.size == 0, f"{bad.size} clicks, first at {bad[:5] / SR} s"


def test_the_shipped_soundfont_calibration_is_what_the_instrument_plays():
    """``fluid_levels.json`` (FluidR3_GM) equals a fresh measurement, through the same preset
    filters the instrument applies — it is regenerated whenever those change."""
    import json

    from engine.synth import fluid

    pool = fluid.FluidPool(size=1)
    try:
        pool.warmup()
        with open(fluid.LEVELS_FILE) as f:
            data = json.load(f)
        key = fluid._font_key(pool.path)
        assert key in data, f"the shipped calibration is for fluid-soundfont-gm's FluidR3_GM, not {key}"
        shipped = fluid._decode(data[key])
        fresh = fluid.calibrate(pool)
    finally:
        pool.close()
    assert set(fresh) == set(shipped)
    off = {k: (shipped[k], round(v, 2)) for k, v in fresh.items() if abs(shipped[k] - v) > 0.05}
    assert not off, off


def test_the_click_detector_finds_a_click():
    """The detector above is not blind: one step in a quiet passage is found."""
    t = np.arange(SR) / SR
    x = np.stack([0.1 * np.sin(2 * np.pi * 220 * t)] * 2, axis=1).astype(np.float32)
    x[SR // 2:, :] += 0.2
    assert jumps(x).size >= 1


@pytest.mark.parametrize("renderer", RENDERERS)
def test_streaming_equals_one_shot_for_any_chunk_sizes(backends, renderer):
    b = backends[renderer]
    prompt = "bossa nova with nylon guitar and flute"
    n = 3 * SR + 77
    one = take(b, prompt, n / SR, chunk=n)
    for size in (1, 64, 65, 2048, 8193):
        s = b.start(1, prompt, 0)
        parts, got = [], 0
        while got < n:
            k = min(size, n - got)
            parts.append(b.generate([s], k)[0])
            got += k
        b.end(s)
        assert np.array_equal(np.concatenate(parts), one), f"chunk size {size}"


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("beat", [1.37, 2.0, 3.0 + 1 / 3])
def test_events_land_on_their_frames(renderer, beat):
    """A note sounds from where the tempo map puts it: exactly for the oscillators, on FluidSynth's
    64-frame grid (the nearest multiple of 64 from the stream's start) for FluidSynth."""
    from engine.score import Note, Part, Score
    parts = [Part("piano", "chords", 0, 0, reverb=0.0)]
    sc = Score("t", 0, 120.0, (4, 4), 0, "major", "test", parts,
               make_bar=lambda i: ([Note(0, beat, 0.5, 60, 100)] if i == 0 else [], []))
    if renderer == "oscillators":
        inst, pool = OscInstrument(SR), None
    else:
        from engine.synth.fluid import FluidPool
        pool = FluidPool(size=1)
        pool.warmup()
        inst = pool.instrument()
    p = Performance(sc, inst, SR)
    p.mix.process = lambda blk: blk                # raw instrument output, no mix delay
    x = np.abs(p.read(SR * 3)).max(axis=1)
    p.close()
    if pool:
        pool.close()
    exact = beat * SR / 2                           # 120 bpm: a beat is half a second
    expect = int(round(exact)) if renderer == "oscillators" else int(round(exact / 64)) * 64
    first = int(np.argmax(x > 1e-6))
    assert x[:expect].max() < 1e-6                  # nothing before its frame (FluidSynth: ~1e-8 fx noise)
    assert expect <= first <= expect + 8, (first, expect)


def onset_strength(x: np.ndarray, hop: int = 480) -> np.ndarray:
    """Spectral flux on 40 log-spaced bands (30 Hz–16 kHz), 10 ms hops (like a mel onset envelope)."""
    mono = x.mean(axis=1).astype(np.float64)
    win = 4 * hop
    n = (mono.size - win) // hop
    frames = np.stack([mono[i * hop:i * hop + win] * np.hanning(win) for i in range(n)])
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    edges = np.unique((np.geomspace(30, 16000, 41) * win / SR).astype(int))
    bands = np.log10(np.add.reduceat(power, edges, axis=1)[:, :-1] + 1e-10)
    flux = np.maximum(0.0, np.diff(bands, axis=0)).sum(axis=1)
    return flux - flux.mean()


@pytest.mark.parametrize("prompt", ["viennese waltz with strings and piano", "a country waltz in 3/4 with guitar"])
def test_a_three_four_prompt_sounds_in_threes(backends, prompt):
    sc = compose(prompt, 0)
    assert sc.meter == (3, 4)
    x = take(backends["fluidsynth"], prompt, 24.0)
    env = onset_strength(x)
    beat = 60.0 / sc.bpm / 0.01                     # beats in 10 ms hops
    ac = np.correlate(env, env, "full")[env.size - 1:]

    def at(beats):
        lag = beats * beat
        lo, hi = int(np.floor(lag - 2)), int(np.ceil(lag + 2))
        return ac[lo:hi + 1].max()
    assert at(3) > at(2) and at(3) > at(4), (at(2), at(3), at(4))


WORDS = ["piano", "flute", "distorted guitar", "marimba", "trumpet", "organ", "violin", "clavinet"]


def test_instrument_words_get_their_programs_and_change_the_sound():
    from engine.synth.fluid import FluidPool
    pool = FluidPool(size=2)
    pool.warmup()

    def spectrum(score):
        p = Performance(score, pool.instrument(), SR)
        x = p.read(12 * SR).mean(axis=1).astype(np.float64)
        p.close()
        spec = np.abs(np.fft.rfft(x)) ** 2
        bands = np.add.reduceat(spec, np.geomspace(20, spec.size - 1, 40).astype(int))
        return 10 * np.log10(bands / bands.sum() + 1e-12)

    try:
        for word in WORDS:
            prog = INSTRUMENTS[word][0]
            sc = compose(f"slow ballad with {word}", 0)
            idx = [i for i, p in enumerate(sc.parts) if p.program == prog and not p.is_drums]
            assert idx, (word, prog, [(p.name, p.program) for p in sc.parts])
            k = idx[0]
            b0 = next((i for i in range(64) if any(n.part == k for n in sc.bar(i)[0])), None)
            assert b0 is not None, f"{word} plays nothing in 64 bars"
            sh = b0 * sc.beats_per_bar

            def solo_bar(i, sc=sc, k=k, b0=b0, sh=sh):               # that part alone, from its entry
                notes, ctls = sc.bar(i + b0)
                return ([dataclasses.replace(n, part=0, start=n.start - sh) for n in notes if n.part == k],
                        [dataclasses.replace(c, part=0, beat=c.beat - sh) for c in ctls if c.part == k])
            solo = dataclasses.replace(sc, parts=[sc.parts[k]], _cache={}, make_bar=solo_bar)
            other = 73 if prog != 73 else 0
            swapped = dataclasses.replace(solo, parts=[dataclasses.replace(solo.parts[0], program=other)], _cache={})
            same = spectrum(solo)
            assert np.array_equal(same, spectrum(solo))            # deterministic
            diff = np.abs(same - spectrum(swapped)).mean()
            assert diff > 0.5, f"{word}: the program barely changes the spectrum ({diff:.2f} dB)"
    finally:
        pool.close()


LOUDNESS_PROMPTS = ["deep house in A minor with piano 124 bpm", "lofi hip hop beat with rhodes",
                    "ambient drone in F# lydian", "heavy metal with distorted guitar and double kick",
                    "string quartet, classical, slow", "trap with 808s and hats", "reggae one drop with organ",
                    "bossa nova with nylon guitar and flute"]


@pytest.mark.parametrize("renderer", RENDERERS)
def test_loudness_is_normalised_across_prompts(backends, renderer):
    pyln = pytest.importorskip("pyloudnorm")
    from scipy.signal import resample_poly
    meter = pyln.Meter(SR)
    levels = []
    for p in LOUDNESS_PROMPTS:
        x = take(backends[renderer], p, 16.0).astype(np.float64)
        levels.append(meter.integrated_loudness(x))
        tp = np.abs(resample_poly(x, 4, 1, axis=0)).max()             # true peak, 4× oversampled
        assert 20 * np.log10(tp) <= -1.0, (p, 20 * np.log10(tp))
        mono = meter.integrated_loudness(np.repeat(x.mean(axis=1, keepdims=True), 2, axis=1))
        assert levels[-1] - mono < 4.5, (p, "loses too much summed to mono")
    assert max(levels) - min(levels) <= 6.0, levels
    assert all(-17.0 <= v <= -11.0 for v in levels), levels


def test_a_prompt_change_keeps_the_level(backends):
    """A new prompt's first seconds already sit near the target (calibrated starting gain)."""
    pyln = pytest.importorskip("pyloudnorm")
    meter = pyln.Meter(SR)
    firsts = [meter.integrated_loudness(take(backends["fluidsynth"], p, 4.0)[SR // 2:].astype(np.float64))
              for p in LOUDNESS_PROMPTS[:5]]
    assert max(firsts) - min(firsts) <= 7.0 and all(v > -21.0 for v in firsts), firsts


@pytest.mark.parametrize("renderer", RENDERERS)
def test_spectrum_is_balanced(backends, renderer):
    for p in ["lofi hip hop beat with rhodes", "trap with 808s and hats", "cinematic strings and choir"]:
        x = take(backends[renderer], p, 24.0).mean(axis=1).astype(np.float64)   # past the intros
        spec = np.abs(np.fft.rfft(x)) ** 2
        f = np.fft.rfftfreq(x.size, 1 / SR)
        presence = 10 * np.log10(spec[(f >= 2000) & (f < 8000)].sum() / spec.sum())
        low = spec[f < 60].sum() / spec.sum()
        tone = compose(p, 0).tone                 # a dark style (lofi) aims lower: −14 + 6·tone dB
        assert presence >= -18.0 + 6.0 * min(0.0, tone) - 1.0, (p, presence, tone)
        assert low <= 0.4, (p, low)


@pytest.mark.parametrize("renderer", RENDERERS)
def test_different_seeds_differ(backends, renderer):
    a = take(backends[renderer], "pop song with piano and drums", 4.0, seed=1)
    b = take(backends[renderer], "pop song with piano and drums", 4.0, seed=2)
    a2 = take(backends[renderer], "pop song with piano and drums", 4.0, seed=1)
    assert np.array_equal(a, a2)
    assert not np.allclose(a, b, atol=1e-3)


# --- the fallback's voices ------------------------------------------------------------------

def pitch_track(x: np.ndarray, f0: float, win: int = 2400, hop: int = 1200) -> np.ndarray:
    """Cents from ``f0`` per window: the strongest FFT peak near f0, parabolically interpolated."""
    out = []
    nfft = 1 << 16
    for i in range(0, x.size - win, hop):
        seg = x[i:i + win] * np.hanning(win)
        mag = np.abs(np.fft.rfft(seg, nfft))
        f = np.fft.rfftfreq(nfft, 1 / SR)
        band = np.nonzero((f > f0 * 0.9) & (f < f0 * 1.1))[0]
        k = band[np.argmax(mag[band])]
        a, b, c = np.log(mag[k - 1:k + 2] + 1e-20)
        k = k + 0.5 * (a - c) / (a - 2 * b + c)
        out.append(1200 * np.log2(k * SR / nfft / f0))
    return np.array(out)


@pytest.mark.parametrize("program", [73, 65, 56, 81])      # flute, alto sax, trumpet, saw lead
def test_fallback_vibrato_stays_within_a_few_cents(program):
    sc = make_score(roles=("lead",), programs={"lead": program}, lead_long=True, bpm=60.0)
    p = Performance(sc, OscInstrument(SR), SR)
    x = p.read(int(7.5 * SR)).mean(axis=1).astype(np.float64)        # one note held 8 beats = 8 s
    note = sc.bar(0)[0][0]
    cents = pitch_track(x[SR // 10:int(7.4 * SR)], 440 * 2 ** ((note.pitch - 69) / 12))
    assert np.abs(cents).max() <= 12.0, np.abs(cents).max()
    late = np.abs(cents[len(cents) // 2:]).max()
    early = np.abs(cents[len(cents) // 5:len(cents) // 2]).max()
    assert late <= early + 3.0                       # depth does not grow with the note's age


@pytest.mark.parametrize("program", [48, 89, 52, 19])      # strings, warm pad, choir, church organ
@pytest.mark.parametrize("same_chord", [True, False])
def test_fallback_pads_are_legato_across_bar_lines(program, same_chord):
    sc = make_score(roles=("pad",), programs={"pad": program}, bpm=90.0)
    if same_chord:
        base = sc.make_bar
        sc = dataclasses.replace(sc, make_bar=lambda i: ([dataclasses.replace(n, start=n.start + (i - 0) * 0)
                                                          for n in base(0)[0]] if i == 0 else
                                                         [dataclasses.replace(n, start=n.start + i * 4.0)
                                                          for n in base(0)[0]], []), _cache={})
    p = Performance(sc, OscInstrument(SR), SR)
    p.mix.process = lambda blk: blk
    x = p.read(int(12 * SR)).mean(axis=1).astype(np.float64)
    w = SR // 100                                    # 10 ms RMS
    rms = np.sqrt(np.mean(x[: x.size // w * w].reshape(-1, w) ** 2, axis=1))
    bar_s = 4 * 60 / 90.0
    for k in range(1, 5):
        at = int(k * bar_s * 100)
        around = rms[at - 15:at + 15]
        body = np.median(rms[at - 60:at - 20])
        assert around.min() >= body * 10 ** (-6 / 20), (k, 20 * np.log10(around.min() / body))


def test_fallback_hats_are_band_limited():
    from engine.score import DRUM_CHANNEL, Note, Part, Score
    parts = [Part("drums", "drums", 0, DRUM_CHANNEL)]
    sc = Score("hats", 0, 120.0, (4, 4), 0, "major", "test", parts,
               make_bar=lambda i: ([Note(0, i * 4 + k * 0.5, 0.1, 42, 100) for k in range(8)], []))
    inst = OscInstrument(SR)
    p = Performance(sc, inst, SR)
    p.mix.process = lambda blk: blk
    x = p.read(4 * SR).mean(axis=1).astype(np.float64)
    spec = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(x.size, 1 / SR)
    assert spec[f > 18000].sum() < 0.01 * spec.sum()
    assert spec[(f > 5000) & (f < 14000)].sum() > 0.8 * spec.sum()


def test_fallback_is_used_without_a_soundfont(monkeypatch, caplog):
    import logging

    import engine.synth.fluid as F
    monkeypatch.setattr(F, "DEFAULT_SOUNDFONTS", ("/nonexistent/none.sf2",))
    b = SynthBackend(pool_size=1, workers=1)
    with caplog.at_level(logging.INFO, logger="wavebridge"):
        b.warmup()
    try:
        assert b.renderer == "oscillators" and b.describe() == "oscillators"
        assert any("oscillator" in r.getMessage() for r in caplog.records)
        assert np.abs(take(b, "house with piano", 2.0)).max() > 0.05
    finally:
        b.close()
    with pytest.raises(Exception, match="SoundFont"):
        SynthBackend(soundfont="/nonexistent/x.sf2").warmup()      # asked for, not found: an error


def test_pool_shares_one_soundfont_and_refills():
    from engine.synth.fluid import FluidPool
    pool = FluidPool(size=2)
    pool.warmup()
    try:
        a, b = pool.instrument(), pool.instrument()
        c = pool.instrument()                      # beyond the pool: made on demand
        assert len({a.h, b.h, c.h}) == 3
        for i in (a, b, c):
            i.close()
        assert len(pool._free) == 2                # refilled to its size with fresh instances
        assert a.h == 0
    finally:
        pool.close()


def test_render_command_writes_audio_and_midi(tmp_path):
    import mido
    import soundfile as sf
    wav, flac, mid = tmp_path / "t.wav", tmp_path / "t.flac", tmp_path / "t.mid"
    cmd = [sys.executable, "-m", "bridge", "render", "jazz trio with brushes", "--seconds", "3",
           "--out", str(wav), "--midi", str(mid), "--seed", "4"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "real time" in r.stdout
    x, rate = sf.read(str(wav), dtype="float32")
    assert rate == SR and x.shape == (3 * SR, 2) and np.abs(x).max() > 0.05
    assert any(m.type == "note_on" for t in mido.MidiFile(str(mid)).tracks for m in t)
    r = subprocess.run(cmd[:7] + ["--out", str(flac), "--seed", "4"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    y, _ = sf.read(str(flac), dtype="float32")
    assert np.abs(x - y).max() < 1e-4               # same take, 24-bit
    bad = subprocess.run(cmd[:7] + ["--out", str(tmp_path / "t.mp9")], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert bad.returncode == 2 and "--out" in bad.stderr


def test_production_grid_is_a_fluidsynth_multiple():
    assert BLOCK % 64 == 0


#: bass-heavy and sparse scores: an 808 trap score, drill (808 slides, a sparse 2-bar intro), solo piano, a drone
TARGET_PROMPTS = ["trap with 808s and hats", "uk drill with sliding 808", "solo piano nocturne", "ambient drone in F# lydian"]


@pytest.mark.parametrize("prompt", TARGET_PROMPTS)
def test_a_long_take_measures_at_the_target(backends, prompt):
    """A 30 s take measures −14 ±1 LUFS integrated (BS.1770, pyloudnorm), true peak ≤ −1 dBTP.
    Two things kept such takes 1.5–2.5 LU under it: the balance lifts a sparse intro's presence
    (up to +18 dB), the band enters bright, and the follower's slow memory of that loud entry
    held the gain down for 10–20 s after the lift had relaxed; and the limiter's loss on 808
    peaks (0.5–1.8 LU), which the follower did not see (it measured before the limiter)."""
    pyln = pytest.importorskip("pyloudnorm")
    from scipy.signal import resample_poly
    x = take(backends["fluidsynth"], prompt, 30.0, seed=0).astype(np.float64)
    lufs = pyln.Meter(SR).integrated_loudness(x)
    tp = 20 * np.log10(np.abs(resample_poly(x, 4, 1, axis=0)).max())
    assert -15.0 <= lufs <= -13.0, (prompt, round(lufs, 2))
    assert tp <= -1.0, (prompt, round(tp, 2))



def test_set_ps_flugelhorn_ballad_does_not_click(backends):
    """Set P's flugelhorn over brushes had 22 clicks (seed 1): FluidR3's trumpet sample's buzzing
    edge, which the flugelhorn's darker filter leaves out (tests/test_soundfont.py)."""
    x = take(backends["fluidsynth"], "slow jazz waltz ballad in Ab, brushes on the snare, solo piano intro then "
             "flugelhorn takes the melody, Bill Evans style voicings", 30.0, seed=1)
    assert jumps(x).size == 0, f"{jumps(x).size} clicks"
