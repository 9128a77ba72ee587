"""The electronic, hip hop and ambient styles (engine/compose/styles/electronic.py): each reached by
its words, and its idiom in the notes — the groove, the bass, the instruments, the tempo.

Properties of composed scores (no audio); every test reads notes from :func:`engine.compose.compose`.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from engine.compose import compose, composer_of, read_prompt
from engine.compose import genres as G

sys.path.insert(0, str(Path(__file__).parent))
from test_styles import groove_profile  # noqa: E402

MINE = ("house", "deep house", "techno", "trance", "drum and bass", "jungle", "dubstep", "uk garage", "synthwave",
        "chiptune", "ambient", "lofi", "boom bap", "g-funk", "trap", "drill", "trip hop")
KICK, BACK, HATS = (35, 36), (37, 38, 39, 40), (42, 44, 46)


def drum_part(score):
    return next(i for i, p in enumerate(score.parts) if p.is_drums)


def part_of(score, role):
    return next(i for i, p in enumerate(score.parts) if p.role == role)


def main_bars(score, n=12, kinds=("A", "B", "drop")):
    """Bars of the main sections (no intro, no fill bars at a section's 4th and 8th bar)."""
    c = composer_of(score)
    return [i for i in range(c.intro_bars, 400)
            if score.section_of(i) in kinds and (i + c.offset) % 8 not in (3, 7)][:n]


def onsets(score, pitches, bars, part=None, vel=60):
    """Onsets (beats within their bar) of ``pitches`` on the drum part (or ``part``)."""
    d = drum_part(score) if part is None else part
    bpb = score.beats_per_bar
    return [n.start - i * bpb for i in bars for n in score.bar(i)[0]
            if n.part == d and (pitches is None or n.pitch in pitches) and n.vel > vel]


def hits_near(xs, t, tol=0.08):
    return sum(abs(x - t) < tol for x in xs)


def four_on_the_floor(score, bars):
    kick = onsets(score, KICK, bars)
    return all(hits_near(kick, float(b)) >= len(bars) - 1 for b in range(4))


# --- words ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt,style", [
    ("house", "house"), ("chicago house with a piano", "house"), ("club track", "house"),
    ("deep house", "deep house"), ("soulful house groove", "deep house"),
    ("techno", "techno"), ("berlin techno", "techno"), ("warehouse rave", "techno"),
    ("trance", "trance"), ("psytrance", "trance"), ("goa", "trance"),
    ("drum and bass", "drum and bass"), ("liquid dnb", "drum and bass"), ("drum n base", "drum and bass"),
    ("jungle", "jungle"), ("ragga jungle", "jungle"),
    ("dubstep", "dubstep"), ("brostep", "dubstep"), ("dub step", "dubstep"),
    ("uk garage", "uk garage"), ("2-step", "uk garage"), ("speed garage", "uk garage"),
    ("synthwave", "synthwave"), ("outrun", "synthwave"), ("retrowave", "synthwave"),
    ("chiptune", "chiptune"), ("8-bit video game music", "chiptune"), ("gameboy music", "chiptune"),
    ("ambient", "ambient"), ("new age", "ambient"), ("meditation music", "ambient"),
    ("lofi", "lofi"), ("lofi hip hop", "lofi"), ("chillhop", "lofi"), ("low fi beats", "lofi"),
    ("boom bap", "boom bap"), ("hip hop", "boom bap"), ("90s rap", "boom bap"), ("hiphop", "boom bap"),
    ("g-funk", "g-funk"), ("west coast g funk", "g-funk"), ("gfunk", "g-funk"), ("west coast hip hop", "g-funk"),
    ("trap", "trap"), ("phonk", "trap"),
    ("drill", "drill"), ("uk drill", "drill"), ("brooklyn drill", "drill"), ("grime", "drill"),
    ("trip hop", "trip hop"), ("bristol sound", "trip hop"), ("downtempo", "trip hop"),
])
def test_each_style_is_reached_by_its_words_and_neighbours(prompt, style):
    assert read_prompt(prompt).genre == style, (prompt, read_prompt(prompt).genre_why)


def test_words_that_belong_elsewhere_are_not_taken():
    assert read_prompt("acid jazz").genre != "techno"
    assert read_prompt("garage rock").genre != "uk garage"
    assert read_prompt("progressive rock").genre != "trance"
    assert read_prompt("relaxing jazz").genre == "jazz"


def test_every_style_has_its_family_tone_and_an_alias_of_its_own():
    seen = {}
    for g in G.GENRES.values():
        for a in g.aliases:
            seen.setdefault(a, []).append(g.name)
    for name in MINE:
        g = G.GENRES[name]
        assert g.family in ("electronic", "hiphop", "ambient"), name
        assert all(seen[a] == [name] for a in g.aliases), name
        assert g.swing == 0.0 or g.swing_unit == 0.25, name        # swung 16ths, never swung 8ths


# --- grooves -----------------------------------------------------------------------------------------
def test_every_groove_of_these_styles_differs_from_every_other_styles_grooves():
    """Each groove (each one, not just the one a seed draws) against every groove of every other
    style in the library: at most 80 % of their onsets shared (the library's measure)."""
    def profiles(name):
        out = []
        for gr in G.GENRES[name].grooves:
            s = compose(name, 0)
            c = composer_of(s)
            if all(len(p) % c.steps == 0 for p in gr.values()):
                c.groove = gr
                out.append(groove_profile(s))
        return out
    others = {n: profiles(n) for n, g in G.GENRES.items() if g.grooves and any(p.role == "drums" for p in g.parts)}
    same = []
    for name in MINE:
        for other, profs in others.items():
            if other == name:
                continue
            for (pa, sa) in others.get(name, []):
                for (pb, sb) in profs:
                    if sa == sb and pa and pb and len(pa & pb) / len(pa | pb) > 0.8:
                        same.append((name, other))
    assert not same, same


@pytest.mark.parametrize("name", ["house", "deep house", "techno", "trance"])
def test_the_floor_styles_keep_four_on_the_floor(name):
    for seed in range(3):
        s = compose(name, seed)
        assert four_on_the_floor(s, main_bars(s, 8)), (name, seed)


@pytest.mark.parametrize("name", ["drum and bass", "jungle", "dubstep", "uk garage", "lofi", "boom bap", "trap",
                                  "drill", "trip hop"])
def test_the_broken_beat_styles_do_not(name):
    for seed in range(3):
        s = compose(name, seed)
        assert not four_on_the_floor(s, main_bars(s, 8)), (name, seed)


def test_house_open_hats_on_the_offbeats_and_the_bass_between_the_kicks():
    for seed in range(3):
        s = compose("house", seed)
        bars = main_bars(s, 8)
        ohat = onsets(s, (46, 42), bars)
        assert all(hits_near(ohat, b + 0.5) >= len(bars) - 1 for b in range(4))
        bass = onsets(s, None, bars, part=part_of(s, "bass"), vel=0)
        off = sum(abs((x % 1) - 0.5) < 0.05 for x in bass)
        assert off >= 0.6 * len(bass), seed                          # the bass answers the kick


def test_deep_house_is_slower_warmer_and_plays_sevenths_on_rhodes_and_organ():
    for seed in range(4):
        s = compose("deep house", seed)
        assert 118 * 0.95 <= s.bpm <= 124 * 1.05
        progs = [p.program for p in s.parts]
        assert 4 in progs and 17 in progs
        c = composer_of(s)
        chords = [ch for i in range(8, 40) for _, _, ch in c.chords_of_bar(i)]
        assert sum(len(ch.intervals) >= 4 for ch in chords) >= 0.7 * len(chords), seed
    assert G.GENRES["deep house"].tone < G.GENRES["house"].tone
    assert max(G.GENRES["deep house"].bpm) < min(G.GENRES["techno"].bpm)


def test_techno_is_tight_with_a_rolling_16th_bass_and_an_acid_line():
    s = compose("techno", 0)
    bars = main_bars(s, 8)
    assert s.swing == 0
    bass = onsets(s, None, bars, part=part_of(s, "bass"), vel=0)
    sixteenths = sum(abs((x * 4) % 2 - 1) < 0.1 for x in bass)
    assert sixteenths >= 0.5 * len(bass)                            # the off 16ths: a rolling line
    arp = part_of(s, "arp")
    assert s.parts[arp].program == 87


def test_trance_tempo_supersaw_and_16th_arpeggio():
    s = compose("trance", 0)
    assert 136 * 0.95 <= s.bpm <= 142 * 1.05
    assert [p.program for p in s.parts if p.role == "lead"] == [81]
    arp = part_of(s, "arp")
    bars = main_bars(s, 6)
    xs = sorted(onsets(s, None, bars, part=arp, vel=0))
    assert len(xs) >= 12 * len(bars)


@pytest.mark.parametrize("name,snares", [("drum and bass", (1.0, 3.0)), ("dubstep", (2.0,)), ("trap", (2.0,))])
def test_the_backbeat_sits_where_the_style_puts_it(name, snares):
    for seed in range(3):
        s = compose(name, seed)
        bars = main_bars(s, 8)
        back = onsets(s, BACK, bars, vel=80)
        for t in snares:
            assert hits_near(back, t) >= len(bars) - 1, (name, seed, t)
        if name != "drum and bass":
            assert hits_near(back, 1.0) + hits_near(back, 3.0) == 0, (name, seed)   # half time


def test_drum_and_bass_is_fast_with_a_reese():
    s = compose("drum and bass", 0)
    assert 170 * 0.95 <= s.bpm <= 176 * 1.05
    assert s.parts[part_of(s, "bass")].program == 39


def test_jungle_chops_the_amen():
    """Snares off the backbeat — ghosts and the chopped "and"s of the Amen — over a long sub bass."""
    for seed in range(3):
        s = compose("jungle", seed)
        bars = main_bars(s, 8)
        snare = onsets(s, BACK, bars, vel=30)
        positions = {round(x * 4) % 16 for x in snare}
        assert len(positions - {4, 12}) >= 3, seed
        bass = [n for i in bars for n in s.bar(i)[0] if n.part == part_of(s, "bass")]
        assert np.median([n.dur for n in bass]) >= 1.0
        assert 160 * 0.95 <= s.bpm <= 170 * 1.05


def test_dubstep_wobbles():
    s = compose("dubstep", 0)
    b = part_of(s, "bass")
    cc = [c for i in main_bars(s, 4) for c in s.bar(i)[1] if c.part == b and c.kind == "cc" and c.number == 11]
    assert len(cc) >= 16 and max(c.value for c in cc) - min(c.value for c in cc) > 60


def test_uk_garage_is_2_step_with_swung_16ths():
    for seed in range(4):
        s = compose("uk garage 2-step", seed)
        assert s.genre == "uk garage"
        bars = main_bars(s, 8)
        kick = onsets(s, KICK, bars)
        assert hits_near(kick, 0.0) >= len(bars) - 1
        assert hits_near(kick, 1.0) + hits_near(kick, 3.0) <= 1, seed         # the skipped kicks
        back = onsets(s, BACK, bars, vel=80)
        assert hits_near(back, 1.0) >= len(bars) - 1 and hits_near(back, 3.0) >= len(bars) - 1
        hats = onsets(s, HATS, bars, vel=40)
        odd = [(x * 4) % 2 for x in hats if 0.6 < (x * 4) % 2 < 1.6]
        assert odd and np.mean(odd) > 1.12, seed                              # the off 16ths land late


def test_synthwave_gated_snare_and_clap_together_and_a_pumping_bass():
    s = compose("synthwave", 0)
    bars = main_bars(s, 8)
    for t in (1.0, 3.0):
        assert hits_near(onsets(s, (38,), bars), t) >= len(bars) - 1
        assert hits_near(onsets(s, (39,), bars), t) >= len(bars) - 1
    bass = onsets(s, None, bars, part=part_of(s, "bass"), vel=0)
    assert len(bass) >= 7 * len(bars)                                        # 8th notes, every bar
    assert 90 in [p.program for p in s.parts]


def test_a_fast_chiptune_is_fast_and_square():
    s = compose("fast chiptune", 0)
    assert s.genre == "chiptune" and s.bpm >= 160
    for seed in range(3):
        assert compose("chiptune", seed).bpm >= 140
    progs = {p.role: p.program for p in s.parts if not p.is_drums}
    assert progs["lead"] == 80 and progs["arp"] == 80 and progs["bass"] == 80
    bars = main_bars(s, 6)
    arp = onsets(s, None, bars, part=part_of(s, "arp"), vel=0)
    assert len(arp) >= 14 * len(bars)
    bass = [n.pitch for i in bars for n in s.bar(i)[0] if n.part == part_of(s, "bass")]
    assert len(set(np.diff(bass)) & {12, -12}) >= 1                           # the pulse bass jumps octaves
    assert s.swing == 0 and G.GENRES["chiptune"].reverb < 0.15


@pytest.mark.parametrize("prompt", ["ambient", "new age meditation", "calm ambient soundscape"])
def test_ambient_has_no_drums_and_long_notes(prompt):
    s = compose(prompt, 0)
    assert s.genre == "ambient"
    assert not any(p.is_drums for p in s.parts)
    ns = [n for i in range(0, 32) for n in s.bar(i)[0]]
    assert ns and not any(s.parts[n.part].is_drums for n in ns)
    pads = [n.dur for n in ns if s.parts[n.part].role == "pad"]
    assert np.median(pads) >= 2.0
    assert s.bpm <= 80 * 1.15


def test_lofi_is_dark_lazy_and_swung():
    s = compose("lofi", 0)
    assert s.tone <= -0.7 and s.swing > 0.1 and composer_of(s).laid_back > 0
    assert s.parts[drum_part(s)].program == 8 and 4 in [p.program for p in s.parts]
    darkest = min(G.GENRES[n].tone for n in MINE)
    assert G.GENRES["lofi"].tone == darkest


def test_boom_bap_hard_swung_drums_piano_and_upright():
    for seed in range(3):
        s = compose("boom bap", seed)
        assert 86 * 0.9 <= s.bpm <= 96 * 1.1
        bars = main_bars(s, 8)
        snare = onsets(s, (38,), bars, vel=90)
        assert hits_near(snare, 1.0, 0.1) >= len(bars) - 1 and hits_near(snare, 3.0, 0.1) >= len(bars) - 1
        assert s.swing >= 0.15 and composer_of(s).swing_unit == 0.25
        progs = [p.program for p in s.parts]
        assert 0 in progs and (32 in progs or 33 in progs)
    assert G.GENRES["boom bap"].tone > G.GENRES["lofi"].tone               # dusty, not as dark as lofi


def test_g_funk_lays_back_on_an_808_with_claps_a_moog_bass_and_a_high_lead():
    for seed in range(3):
        s = compose("g-funk", seed)
        assert 86 * 0.9 <= s.bpm <= 98 * 1.1 and s.mode in ("minor", "dorian")
        bars = main_bars(s, 8)
        clap = onsets(s, (39,), bars, vel=40)
        assert hits_near(clap, 1.0, 0.1) >= len(bars) - 1 and hits_near(clap, 3.0, 0.1) >= len(bars) - 1
        assert len(onsets(s, (42,), bars, vel=0)) >= 8 * len(bars)          # hats in sixteenths
        assert 0.0 < s.swing and composer_of(s).swing_unit == 0.25 and s.parts[drum_part(s)].program == 25
        progs = {p.role: p.program for p in s.parts}
        assert progs["bass"] == 38 and progs["chords"] == 4 and progs["lead"] == 80
        lead = [n.pitch for i in bars for n in s.bar(i)[0] if n.part == part_of(s, "lead")]
        assert lead and sorted(lead)[len(lead) // 2] >= 72                   # the whine sits high


def test_trap_and_drill_slide_their_808s_and_roll_their_hats():
    for name in ("trap", "drill"):
        s = compose(name, 0)
        bars = main_bars(s, 8)
        hats = sorted(onsets(s, (42,), bars, vel=40))
        assert (np.diff(hats) < 0.2).sum() >= 4, name
        b = part_of(s, "bass")
        assert s.parts[b].program == 38
        bends = [c for i in bars for c in s.bar(i)[1] if c.part == b and c.kind == "bend"]
        assert bends, name


def test_drill_is_half_time_with_the_offbeat_snare_and_hats_in_threes():
    for seed in range(3):
        s = compose("uk drill", seed)
        assert 138 * 0.95 <= s.bpm <= 145 * 1.05
        bars = main_bars(s, 12)
        back = onsets(s, BACK, bars, vel=70)
        assert hits_near(back, 2.0) >= len(bars) - 1                              # on three, every bar
        off = [x for x in back if abs(x - 2.0) > 0.1]
        assert off and all(abs(x - round(x)) > 0.2 for x in off), seed
        assert len(off) <= len(bars)                                              # … once in two bars
        hats = onsets(s, (42,), bars, vel=40)
        assert hits_near(hats, 0.75, 0.05) >= len(bars) - 2, seed                 # 3 + 3 + 2: the dotted 8ths


def test_trip_hop_is_slow_dark_and_wet_with_rhodes_and_strings():
    s = compose("trip hop", 0)
    g = G.GENRES["trip hop"]
    assert 70 * 0.9 <= s.bpm <= 90 * 1.1 and g.tone <= -0.4 and g.reverb >= 0.4
    progs = [p.program for p in s.parts]
    assert 4 in progs and 49 in progs
    bars = main_bars(s, 8)
    snare = onsets(s, (38,), bars, vel=80)
    assert hits_near(snare, 1.0) >= len(bars) - 1 and hits_near(snare, 3.0) >= len(bars) - 1
