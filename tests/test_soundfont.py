"""The SoundFont side of the renderer: the kit keys whose onsets click are played softened, the
Vorbis SoundFont loads with its shipped calibration, and the score's ``tone`` colours the mix.

Properties, not golden audio: a lone hit of each clicking key breaks the click rule when played
plainly and not when played as the renderer plays it; a tone −1 take is several dB darker in
2–8 kHz than the same score at +1, both at −14 LUFS ±1; a render stays bit-exact per score.
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from engine.score import DRUM_CHANNEL, Note, Part, Score
from engine.synth import fluid
from engine.synth.perform import TARGET_LUFS, Performance

from scorekit import make_score  # noqa: E402
from test_render import jumps  # noqa: E402

SR = 48000
FLUIDR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
MUSESCORE = "/usr/share/sounds/sf3/MuseScore_General_Full.sf3"


@pytest.fixture(scope="module")
def pool():
    if not os.path.isfile(FLUIDR3):
        pytest.skip("fluid-soundfont-gm is not installed")
    p = fluid.FluidPool(FLUIDR3, SR, size=2)
    p.warmup()
    yield p
    p.close()


def play(pool, score, seconds, soften=True):
    """``score`` as the synth backend plays it (calibrated starting gain, the mix), or with the
    clicking keys left on the kit's own channel (``soften=False``: the render path before the fix)."""
    inst = pool.instrument()
    if not soften:
        inst.pool = _Plain(pool)
    perf = Performance(score, inst, SR)
    est = pool.expected_lufs(score, inst)
    if est is not None:
        perf.mix.set_initial(perf.mix.target - est)
    try:
        return perf.read(int(seconds * SR))
    finally:
        perf.close()


class _Plain:
    """The pool as seen by an instrument, minus the clicking-key table."""

    def __init__(self, pool):
        self._pool = pool

    def click_keys(self, kit):
        return frozenset()

    def __getattr__(self, name):
        return getattr(self._pool, name)


def lone_hits(kit: int, key: int, vel: int) -> Score:
    parts = [Part("drums", "drums", kit, DRUM_CHANNEL, reverb=0.0)]
    return Score("hits", 0, 120.0, (4, 4), 0, "major", "test", parts,
                 make_bar=lambda i: ([Note(0, 0.25 + k, 0.25, key, vel) for k in range(4)] if i == 0 else [], []))


#: keys FluidR3 clicks on alone (toms, congas, guiro; the Room kit's kick), as measured through the mix
CLICKING = [(0, 41), (0, 45), (0, 47), (0, 48), (0, 64), (0, 74), (8, 35), (8, 45), (32, 45), (40, 48)]


@pytest.mark.parametrize("kit,key", CLICKING)
def test_clicking_kit_keys_are_played_softened_and_no_longer_click(pool, kit, key):
    assert key in pool.click_keys(kit), "the shipped calibration marks the key"
    plain = sum(jumps(play(pool, lone_hits(kit, key, v), 2.5, soften=False)).size for v in (40, 80, 120))
    assert plain > 0, "played plainly the key clicks (else this test proves nothing)"
    for vel in (40, 80, 120):
        x = play(pool, lone_hits(kit, key, vel), 2.5)
        assert np.abs(x).max() > 0.05, "the softened hit still sounds"
        bad = jumps(x)
        assert bad.size == 0, f"kit {kit} key {key} vel {vel}: {bad.size} clicks at {bad[:4] / SR} s"


def test_a_softened_key_keeps_its_kit_and_the_others_stay_plain(pool):
    """The twin channel plays the same preset (same loudness within a few dB); keys the
    calibration did not mark play on the kit's own channel, exactly as before."""
    inst = pool.instrument()
    try:
        inst.setup([Part("drums", "drums", 0, DRUM_CHANNEL)])
        assert inst.twin[0] >= 16 and inst._key_channel(0, 41) == inst.twin[0]
        assert inst._key_channel(0, 38) == inst._key_channel(0, 42) == inst.chan[0] == 9
    finally:
        inst.close()
    soft = play(pool, lone_hits(0, 41, 100), 2.0).astype(np.float64)
    plain = play(pool, lone_hits(0, 41, 100), 2.0, soften=False).astype(np.float64)
    db = 10 * np.log10((soft ** 2).mean() / (plain ** 2).mean())
    assert abs(db) < 3.0, db
    snare = play(pool, lone_hits(0, 38, 100), 2.0)
    assert np.array_equal(snare, play(pool, lone_hits(0, 38, 100), 2.0, soften=False))


def test_the_calibration_round_trips_click_keys():
    lv = {(0, 1): -20.0, ("kit", 0): -18.5, ("click", 0, 41): 1.0}
    assert fluid._decode(fluid._encode(lv)) == lv


@pytest.mark.skipif(not os.path.isfile(MUSESCORE), reason="musescore-general-soundfont is not installed")
def test_the_vorbis_soundfont_loads_with_its_shipped_calibration(monkeypatch):
    """libfluidsynth reads MuseScore General's .sf3 (Ogg Vorbis samples), and its calibration is
    shipped (no measuring at warmup); a note through it sounds."""
    monkeypatch.setattr(fluid, "calibrate", lambda p: pytest.fail("calibrated at warmup"))
    p = fluid.FluidPool(MUSESCORE, SR, size=1)
    p.warmup()
    try:
        assert len([k for k in p.levels if k[0] == 0]) == 128 and p.click_keys(0)
        sc = make_score(roles=("chords",), bpm=120.0)
        x = play(p, sc, 2.0)
        assert np.abs(x).max() > 0.05
    finally:
        p.close()


def presence_db(x: np.ndarray) -> float:
    m = x.mean(axis=1).astype(np.float64)
    spec = np.abs(np.fft.rfft(m)) ** 2
    f = np.fft.rfftfreq(m.size, 1 / SR)
    return 10 * np.log10(spec[(f >= 2000) & (f < 8000)].sum() / spec.sum())


def test_a_dark_tone_renders_darker_than_a_bright_one_at_the_same_loudness(pool):
    pyln = pytest.importorskip("pyloudnorm")
    meter = pyln.Meter(SR)
    base = make_score(bpm=100.0, seed=3)
    got = {}
    for tone in (-1.0, 0.0, 1.0):
        sc = dataclasses.replace(base, tone=tone, _cache={})
        x = play(pool, sc, 20.0)[8 * SR:]                # past the balance's settling
        got[tone] = (presence_db(x), meter.integrated_loudness(x.astype(np.float64)))
    (dark, _), (mid, _), (bright, _) = got[-1.0], got[0.0], got[1.0]
    assert dark < mid < bright, got
    assert bright - dark >= 6.0, got
    for _, lufs in got.values():
        assert abs(lufs - TARGET_LUFS) <= 1.0, got
    sc = dataclasses.replace(base, tone=-1.0, _cache={})
    assert np.array_equal(play(pool, sc, 3.0), play(pool, dataclasses.replace(sc, _cache={}), 3.0))


@pytest.mark.parametrize("program", [24, 25, 46, 105])
def test_a_fast_strum_on_plucked_strings_does_not_start_loud(pool, program):
    """Sixteenth-note strums on a nylon or steel guitar, a harp, a banjo: each short note rings on
    past its length, which the calibrated starting gain counts (``perform.RINGING``) — counted as
    long as written, the first seconds played 4–6 LU over the target before the follower caught up
    (a bluegrass breakdown, a festejo, a griot's kora)."""
    chord = (52, 55, 59, 64)
    parts = [Part("guitar", "chords", program, 0, reverb=0.1)]
    score = Score("strum", 0, 120.0, (4, 4), 4, "minor", "test", parts,
                  make_bar=lambda i: ([Note(0, i * 4 + k * 0.25, 0.1, p, 90) for k in range(16) for p in chord], []))
    y = play(pool, score, 3.0)
    pyln = pytest.importorskip("pyloudnorm")
    assert pyln.Meter(SR).integrated_loudness(y.astype(np.float64)) <= TARGET_LUFS + 2.5


def k_loudness(x: np.ndarray) -> float:
    """BS.1770's K-weighted loudness of ``x`` without the gate (what the estimate guesses)."""
    from engine.synth.perform import k_weighting_power

    n = x.shape[0]
    spec = np.fft.rfft(x.astype(np.float64), axis=0)
    ms = 2.0 * (np.abs(spec) ** 2 * k_weighting_power(n, SR)[:, None]).sum() / (n * n)
    return -0.691 + 10 * np.log10(ms + 1e-20)


def _held_render(pool, score, seconds, monkeypatch):
    """``score``'s first ``seconds`` as the instrument plays it at the calibrated starting gain
    held (no follower, no balance), aimed 10 dB under the target so that the limiter never
    touches it (a piano's attack at the target's gain would be held down), and that gain."""
    from engine.synth import perform

    inst = pool.instrument()
    perf = Performance(score, inst, SR)
    est = pool.expected_lufs(score, inst)
    perf.mix.set_initial(perf.mix.target - 10.0 - est)
    perf.mix.balance = None
    monkeypatch.setattr(perform.Mix, "_follow", lambda self, x: self.gain_db)
    try:
        return perf.read(int(seconds * SR)), perf.mix.gain_db
    finally:
        perf.close()


@pytest.mark.parametrize("program, vel, length", [
    (0, 40, 1.0),      # a soft piano: FluidSynth's velocity curve is (vel/100)⁴ in power, not ³
    (0, 115, 0.25),    # staccato: a piano's short note rings on after the key is let go
    (0, 70, 4.0),      # whole notes at 60 bpm: a held piano note dies away
    (33, 100, 0.5),    # a fingered bass
    (48, 60, 4.0),     # strings sustain: as long as held
    (89, 90, 0.25),    # a pad's short notes never swell to its level
])
def test_the_starting_gain_puts_the_first_bars_at_the_target(pool, program, vel, length, monkeypatch):
    """The renderer's guess of a score's loudness (its starting gain) from the calibration: the
    first four bars played at that gain measure the target within 1 dB, soft or loud, short or
    long notes, decaying or sustained. Before the guess knew the velocity curve and each
    program's energy by note length, a soft piano started 4 dB quiet, staccato piano 5 dB loud
    and held piano notes 3 dB quiet; a stream then swelled or sank for its first seconds."""
    bpm = 60.0
    chord = (40, 60, 72)           # the calibration's (a register's own colour is not what this tests)
    per_bar = max(1, int(round(4 / length)))
    parts = [Part("p", "chords", program, 0, level=0.8, reverb=0.2, chorus=0.1)]
    score = Score("est", 0, bpm, (4, 4), 4, "major", "test", parts,
                  make_bar=lambda i: ([Note(0, i * 4 + k * 4 / per_bar, length, p, vel)
                                       for k in range(per_bar) for p in chord], []))
    y, gain = _held_render(pool, score, 4 * 4 * 60 / bpm, monkeypatch)
    assert abs(k_loudness(y) - (TARGET_LUFS - 10.0)) <= 1.0, (k_loudness(y), gain)


@pytest.mark.parametrize("prompt", ["polka", "klezmer", "bebop", "forro"])
def test_a_bright_bands_first_seconds_are_not_lifted_over_the_target(pool, prompt):
    """The mix's tonal balance lifts a bright acoustic band by about 3 dB within its first second;
    the loudness follower meets that lift at once (it follows the balance's own effect as its
    filters move) and slews only the music's level. Slewed as one, these styles played their
    first 3 s at −10.7 … −11.3 LUFS."""
    from engine.compose import compose

    y = play(pool, compose(prompt, 1), 3.0)
    assert pyln_meter().integrated_loudness(y.astype(np.float64)) <= TARGET_LUFS + 1.5


def pyln_meter():
    pyln = pytest.importorskip("pyloudnorm")
    return pyln.Meter(SR)


def test_a_flugelhorn_is_the_trumpet_darker(pool):
    """GM has no flugelhorn: a part named so plays the trumpet with its filter 1.5 octaves down
    (the conical bore's rounder tone) — the same notes, a lower spectral centroid."""
    import dataclasses

    base = make_score(roles=("lead",), programs={"lead": 56}, lead_long=True)
    out = {}
    for name in ("trumpet", "flugelhorn"):
        score = dataclasses.replace(base, parts=[dataclasses.replace(base.parts[0], name=name)], _cache={})
        x = play(pool, score, 8.0)[SR:, 0]
        spec = np.abs(np.fft.rfft(x * np.hanning(x.size)))
        f = np.fft.rfftfreq(x.size, 1 / SR)
        out[name] = float((spec * f).sum() / spec.sum())
    assert out["flugelhorn"] < 0.8 * out["trumpet"], out
