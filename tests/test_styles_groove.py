"""The groove family of the style library (engine/compose/styles/groove.py): pop, k-pop, disco,
funk, soul, r&b, gospel, gospel ballad, motown, jazz, swing, bebop, cool jazz, jazz waltz, lounge.

Each test reads the notes the composer writes for a prompt and checks one property a player of
the style would name: its words reach it, its groove is its own, its instruments are there and its
meter, tempo and swing are as stated. Scores only (no audio): fast.
"""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from engine.compose import compose, composer_of, read_prompt
from engine.compose import genres as G

MINE = ("pop", "k-pop", "disco", "funk", "soul", "r&b", "new jack swing", "gospel", "gospel ballad", "motown",
        "jazz", "swing",
        "bebop", "cool jazz", "jazz waltz", "lounge")
SEEDS = range(4)


def drum_part(s):
    return next(k for k, p in enumerate(s.parts) if p.is_drums)


def part_of(s, program, role=None):
    return [k for k, p in enumerate(s.parts) if p.program == program and not p.is_drums
            and (role is None or p.role == role)]


def main_bars(s, n=12, kinds=("A", "B", "drop", "solo")):
    """Bars of the main sections, leaving out the fill bars (a section's 4th and 8th)."""
    off = composer_of(s).offset
    out = [i for i in range(200) if s.section_of(i) in kinds and (i + off) % 8 not in (3, 7)]
    return out[:n]


def hits(s, pitches, bars, part=None, vmin=45):
    """Drum onsets (beats from the bar line) of ``pitches`` in ``bars``, one list per bar."""
    d = drum_part(s) if part is None else part
    bpb = s.beats_per_bar
    return [[n.start - i * bpb for n in s.bar(i)[0] if n.part == d and n.pitch in pitches and n.vel > vmin]
            for i in bars]


def on(per_bar, t, tol=0.07):
    """How many bars have an onset within ``tol`` beats of ``t``."""
    return sum(any(abs(x - t) < tol for x in xs) for xs in per_bar)


def first_note_s(s, parts, bars=40):
    """Seconds until the first note of any of ``parts`` (inf if none in ``bars`` bars)."""
    spb = 60.0 / s.bpm
    for i in range(bars):
        for n in s.bar(i)[0]:
            if n.part in parts:
                return n.start * spb
    return float("inf")


# --- words ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt,style", [
    ("pop", "pop"), ("a catchy top 40 chart pop song", "pop"), ("indie pop in D major", "pop"),
    ("k-pop", "k-pop"), ("kpop idol dance track", "k-pop"), ("korean pop comeback single", "k-pop"),
    ("j-pop anime opening", "k-pop"),
    ("disco", "disco"), ("italo disco at night", "disco"), ("dissco", "disco"),
    ("funk", "funk"), ("p-funk jam", "funk"), ("go-go groove", "funk"), ("fnuk", "funk"),
    ("soul", "soul"), ("memphis soul with horns", "soul"), ("stax soul", "soul"), ("neo soul with rhodes", "soul"),
    ("r&b", "r&b"), ("contemporary rnb slow jam", "r&b"), ("90s r&b", "r&b"), ("rhythm and blues", "r&b"),
    ("new jack swing ~106bpm, teddy riley vibes", "new jack swing"), ("njs", "new jack swing"),
    ("a swingbeat jam", "new jack swing"),
    ("gospel", "gospel"), ("sunday service praise break", "gospel"), ("gospel choir", "gospel"),
    ("gospell", "gospel"),
    ("gospel ballad", "gospel ballad"), ("slow gospel in E major", "gospel ballad"),
    ("motown", "motown"), ("a northern soul stomper", "motown"), ("detroit soul", "motown"), ("motwon", "motown"),
    ("jazz trio", "jazz"), ("hard bop quintet", "jazz"), ("film noir jazz", "jazz"),
    ("big band swing", "swing"), ("lindy hop", "swing"), ("swing era dance band", "swing"),
    ("bebop", "bebop"), ("fast jazz", "bebop"), ("be-bop", "bebop"), ("bebopp", "bebop"),
    ("cool jazz", "cool jazz"), ("west coast jazz", "cool jazz"), ("birth of the cool", "cool jazz"),
    ("jazz waltz", "jazz waltz"), ("a jazz waltz in Bb major", "jazz waltz"),
    ("lounge", "lounge"), ("cocktail lounge", "lounge"), ("easy listening", "lounge"), ("loungue", "lounge"),
])
def test_each_style_is_reached_by_its_words(prompt, style):
    s = compose(prompt, 0)
    assert s.genre == style, (prompt, composer_of(s).explain()["why"])
    assert composer_of(s).explain()["style"] == style


def test_every_alias_of_the_family_is_unique_across_the_library():
    owners: dict[str, list[str]] = {}
    for g in G.GENRES.values():
        for a in g.aliases:
            owners.setdefault(a, []).append(g.name)
    for name in MINE:
        g = G.GENRES[name]
        assert g.aliases[0] == name
        for a in g.aliases:
            assert owners[a] == [name], (a, owners[a])
            assert read_prompt(a).genre == name, a


def test_the_family_brings_its_words_without_overriding_any():
    assert G.INSTRUMENTS["flugelhorn"][0] == 56 and G.INSTRUMENTS["wah guitar"][0] == 28
    s = compose("cool jazz with flugelhorn", 0)
    assert part_of(s, 56, "lead")
    s = compose("pop with walking bass", 0)
    k = next(k for k, p in enumerate(s.parts) if p.name == "walking bass")
    assert composer_of(s).plans[k].style == "walking"
    s = compose("lounge with cross-stick", 0)
    assert "rim" in composer_of(s).named_lanes


# --- grooves -----------------------------------------------------------------------------------------
_FAMILIES = {"kick": ("kick", "kick2", "kick_lo"), "snare": ("snare", "rim", "clap", "esnare", "swirl", "side",
                                                             "hclap", "snare2", "hclap"),
             "hats": ("chat", "phat", "ohat", "ride", "ride2", "bell", "shaker")}


def accents(groove):
    """A groove's played (not ghost) onsets per lane family — kick, snare, hats — without the
    chorus-only lanes: what the ear hears as its pattern."""
    out = []
    n = max(len(p) for p in groove.values())
    for fam, lanes in _FAMILIES.items():
        pos = set()
        for lane, pat in groove.items():
            if lane in lanes:
                pos |= {q for q, ch in enumerate(pat * (n // len(pat))) if ch in "xXrt"}
        out.append(frozenset(pos))
    return n, tuple(out)


def test_each_groove_differs_from_every_other_styles_grooves():
    theirs = {name: {accents(gr) for gr in g.grooves} for name, g in G.GENRES.items()}
    for name in MINE:
        assert len(G.GENRES[name].grooves) >= 2, name
        for gr in G.GENRES[name].grooves:
            sig = accents(gr)
            assert any(sig[1]), (name, gr)
            clash = [o for o, sigs in theirs.items() if o != name and sig in sigs]
            assert not clash, (name, gr, clash)


def test_the_composed_grooves_of_the_family_differ_pairwise():
    def sig(s):
        d = drum_part(s)
        bpb = s.beats_per_bar
        i = main_bars(s, 1)[0]
        return frozenset((n.pitch, round((n.start - i * bpb) * 12)) for n in s.bar(i)[0]
                         if n.part == d and n.vel > 60 and n.pitch != 49)
    for seed in (0, 1):
        sigs = {name: sig(compose(name, seed)) for name in MINE}
        for a, b in itertools.combinations(MINE, 2):
            assert sigs[a] != sigs[b], (seed, a, b)


def test_every_style_has_its_bass_and_comping_idiom_and_harmony():
    from engine.compose.harmony import parse_chord
    for name in MINE:
        g = G.GENRES[name]
        assert len(g.bass_pats) >= 2 or g.bass in ("walking", "soul", "octave", "funk"), name
        assert len(g.comp_pats) >= 2 or g.chords in ("comp", "soul", "stab", "chop8", "funk16", "piano8"), name
        assert set(g.modes) <= set(G.MODES)
        for fam, progs in g.progressions.items():
            for prog in progs:
                assert len(prog.split()) in (4, 8)
                for tok in prog.split():
                    for sym in tok.split("-"):
                        parse_chord(sym, 0, G.MODES[fam])
        assert -1 <= g.tone <= 1 and 0 < g.reverb < 0.6 and g.family in ("pop", "soul", "jazz")


# --- tempo, meter, swing ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MINE)
def test_tempo_and_meter_are_the_styles(name):
    g = G.GENRES[name]
    lo, hi = g.bpm
    for seed in SEEDS:
        s = compose(name, seed)
        assert s.meter == g.meter
        assert lo * 0.7 <= s.beat_bpm <= hi * 1.15, (seed, s.beat_bpm)


def test_jazz_swings_in_simple_meters_and_never_in_compound_ones():
    for name in ("jazz", "swing", "bebop", "cool jazz", "jazz waltz", "lounge"):
        assert compose(name, 0).swing >= 0.15, name
        assert compose(f"{name} in 6/8", 0).swing == 0, name
        assert compose(f"{name} in 12/8", 0).swing == 0, name
    s = compose("jazz", 0)
    ride = hits(s, (51,), main_bars(s, 8))
    assert on(ride, 1.667, 0.05) >= 4 and on(ride, 1.5, 0.04) == 0         # the swung "and" of two


def test_the_gospel_ballad_is_in_12_8_with_an_even_dotted_quarter_pulse():
    for seed in SEEDS:
        s = compose("gospel ballad in E major", seed)
        assert s.meter == (12, 8) and s.beat == 1.5 and s.swing == 0
        bars = main_bars(s, 8)
        back = hits(s, (38, 39), bars)
        assert on(back, 1.5) >= len(bars) - 1 and on(back, 4.5) >= len(bars) - 1     # 2 and 4 of four
        assert on(back, 0.0) == 0
        kick = hits(s, (35, 36), bars)
        assert on(kick, 0.0) >= len(bars) - 1
        eighths = [x for xs in hits(s, (42, 51, 54), bars) for x in xs]
        piano = part_of(s, 0, "chords")[0]
        eighths += [n.start - i * 6 for i in bars for n in s.bar(i)[0] if n.part == piano]
        assert len(eighths) >= 8 * len(bars)                                            # the triplet pulse
        assert max(abs(x * 2 - round(x * 2)) / 2 for x in eighths) < 0.03             # even eighths, unswung
        assert any(abs(x % 1.5 - 1.0) < 0.03 for x in eighths)                         # the third eighth of a beat


def test_the_jazz_waltz_is_a_swung_three_with_the_ride_on_one():
    for seed in SEEDS:
        s = compose("jazz waltz", seed)
        assert s.beats_per_bar == 3 and s.swing > 0.2
        bars = main_bars(s, 8)
        ride = hits(s, (51,), bars)
        assert on(ride, 0.0) >= len(bars) - 1
        assert on(ride, 1.65, 0.06) + on(ride, 2.65, 0.06) >= len(bars) // 2          # the swung skip notes
        assert on(ride, 1.5, 0.03) + on(ride, 2.5, 0.03) == 0
        bass = part_of(s, 32, "bass")[0]
        for i in bars:
            assert len([n for n in s.bar(i)[0] if n.part == bass]) == 3              # walking in three


@pytest.mark.parametrize("name", MINE)
def test_each_styles_tune_is_heard_within_eight_seconds(name):
    """A slow style's bars are long: a 12/8 ballad or a 60 bpm slow jam keeps its intro to one bar."""
    for seed in SEEDS:
        s = compose(name, seed)
        leads = [k for k, p in enumerate(s.parts) if p.role == "lead"]
        assert leads and first_note_s(s, leads) < 8.0, seed
        assert composer_of(s).intro_bars <= 2


# --- each style's idiom -------------------------------------------------------------------------------
def test_pop_backbeat_piano_and_a_lead():
    for seed in SEEDS:
        s = compose("pop", seed)
        bars = main_bars(s, 8)
        snare = hits(s, (38,), bars)
        assert on(snare, 1.0) >= len(bars) - 1 and on(snare, 3.0) >= len(bars) - 1
        assert part_of(s, 0, "chords") and part_of(s, 33, "bass") and part_of(s, 85, "lead")


def test_k_pop_is_bright_punchy_and_its_synth_hook_plays_from_the_start():
    for seed in range(6):
        s = compose("k-pop", seed)
        assert s.parts[drum_part(s)].program == 16                                   # the power kit
        hook, lead = part_of(s, 80, "arp"), part_of(s, 81, "lead")
        assert hook and lead
        assert first_note_s(s, hook) < 2 * 4 * 60.0 / s.bpm, seed                     # the hook from bar one
        assert first_note_s(s, lead) < float("inf")
        assert G.GENRES["k-pop"].tone >= 0.5 > G.GENRES["pop"].tone
        chorus = main_bars(s, 8, ("B", "drop"))
        clap = hits(s, (39,), chorus)
        assert on(clap, 1.0) >= len(chorus) - 1 and on(clap, 3.0) >= len(chorus) - 1   # the chorus claps
        assert G.GENRES["k-pop"].bpm[0] >= 100


def test_disco_is_four_on_the_floor_with_open_hats_off_the_beat_and_octave_bass():
    for seed in SEEDS:
        s = compose("disco", seed)
        bars = main_bars(s, 8)
        kick = hits(s, (35, 36), bars)
        assert all(on(kick, float(b)) >= len(bars) - 1 for b in range(4))
        ohat = hits(s, (46,), bars)
        assert all(on(ohat, b + 0.5) >= len(bars) - 2 for b in range(4))
        bass = part_of(s, 33, "bass")[0]
        octaves = sum(any(b.pitch - a.pitch == 12 for a in ns for b in ns)
                      for i in bars for ns in [[n for n in s.bar(i)[0] if n.part == bass]])
        assert octaves >= len(bars) // 2            # (an octave above the register folds onto the root)


def test_funk_is_on_the_one_with_ghost_notes_and_fingered_bass_dead_notes():
    """Funk's bass is the fingered electric bass (33) with its dead notes; slap (36) when asked."""
    for seed in SEEDS:
        s = compose("funk", seed)
        bars = main_bars(s, 8)
        assert on(hits(s, (35, 36), bars), 0.0) >= len(bars) - 1
        d = drum_part(s)
        bpb = s.beats_per_bar
        ghosts = [n for i in bars for n in s.bar(i)[0] if n.part == d and n.pitch == 38 and n.vel < 75
                  and ((n.start - i * bpb) * 4) % 4 > 0.5]
        assert len(ghosts) >= len(bars)                                               # 16th ghost notes
        bass = part_of(s, 33, "bass")
        assert bass and part_of(s, 7, "chords") and part_of(s, 28, "chords")
        dead = [n for i in bars for n in s.bar(i)[0] if n.part == bass[0] and n.vel < 64]
        assert dead
        assert part_of(compose("funk with slap bass", seed), 36, "bass")


def test_soul_lays_back_on_rhodes_and_organ():
    for seed in SEEDS:
        s = compose("soul", seed)
        assert part_of(s, 4) and part_of(s, 16)
        bars = main_bars(s, 12)
        snare = [x for xs in hits(s, (38,), bars, vmin=80) for x in xs]
        late = [x - round(x) for x in snare if abs(x - round(x)) < 0.15]
        assert late and np.mean(late) > 0.003                                          # behind the beat


def test_r_and_b_is_slow_with_the_backbeat_on_2_and_4_and_16th_hats_with_rolls():
    for seed in SEEDS:
        s = compose("r&b", seed)
        assert 60 * 0.7 <= s.bpm <= 80 * 1.15
        assert part_of(s, 4, "chords")
        bars = main_bars(s, 8)
        back = hits(s, (38, 39), bars, vmin=70)
        assert on(back, 1.0) >= len(bars) - 1 and on(back, 3.0) >= len(bars) - 1
        assert on(back, 0.0) == 0 and on(back, 2.0) == 0
        hat = hits(s, (42,), bars, vmin=20)
        assert np.mean([len(xs) for xs in hat]) >= 12                                  # 16ths
        gaps = np.diff(sorted(x + k * 4 for k, xs in enumerate(hat) for x in xs))
        assert (gaps < 0.2).sum() >= 1                                                 # a 32nd or triplet roll


def test_new_jack_swing_is_a_swung_drum_machine_with_its_kick_pushed_off_the_beat():
    """100–115 bpm on a drum machine swung in 16ths, snare and clap hard on two and four, the kick
    off the beat in every bar (the "a" of two, the "and" of three), synth bass and synth-brass stabs
    — not r&b's 60–80 slow jam, which is what the words played before."""
    for seed in SEEDS:
        s = compose("new jack swing", seed)
        assert 98 * 0.9 <= s.bpm <= 114 * 1.1 and s.swing >= 0.15, (s.bpm, s.swing)
        assert s.parts[drum_part(s)].program in (24, 25)
        assert part_of(s, 62, "chords") and part_of(s, 38, "bass")
        bars = main_bars(s, 8)
        back = hits(s, (38, 39), bars, vmin=70)
        assert on(back, 1.0) >= len(bars) - 1 and on(back, 3.0) >= len(bars) - 1
        assert on(back, 0.0) == 0 and on(back, 2.0) == 0
        kick = hits(s, (36,), bars)
        assert sum(any(abs(x - round(x)) > 0.1 for x in xs) for xs in kick) >= len(bars) - 1, kick


def test_gospel_has_handclaps_on_2_and_4_organ_piano_and_choir():
    for seed in SEEDS:
        s = compose("gospel", seed)
        assert part_of(s, 16) and part_of(s, 0) and part_of(s, 52)
        bars = main_bars(s, 8)
        clap = hits(s, (39,), bars)
        assert on(clap, 1.0) >= len(bars) - 1 and on(clap, 3.0) >= len(bars) - 1
        assert on(clap, 0.0) == 0 and on(clap, 2.0) == 0


def test_motown_has_tambourine_and_snare_on_every_beat_and_a_melodic_eighth_note_bass():
    for seed in SEEDS:
        s = compose("motown", seed)
        bars = main_bars(s, 8)
        tamb = hits(s, (54,), bars)
        assert all(on(tamb, float(b)) >= len(bars) - 1 for b in range(4)), seed
        snare = hits(s, (38,), bars)
        assert all(on(snare, float(b)) >= len(bars) - 1 for b in range(4)), seed     # the Motown beat
        bass = part_of(s, 33, "bass")[0]
        melodic = 0
        for i in bars:
            ns = [n for n in s.bar(i)[0] if n.part == bass]
            melodic += len(ns) >= 6 and len({n.pitch for n in ns}) >= 4
        assert melodic >= len(bars) - 2, seed
        assert part_of(s, 48) and part_of(s, 27, "chords")                           # strings, 2-and-4 guitar


def test_jazz_combo_walks_and_the_big_band_brings_brass_and_feathered_four():
    s = compose("jazz", 0)
    bass = part_of(s, 32, "bass")[0]
    for i in main_bars(s, 8):
        ns = [n for n in s.bar(i)[0] if n.part == bass]
        assert len(ns) == 4 and len({n.pitch for n in ns}) >= 3
    for seed in SEEDS:
        s = compose("big band swing", seed)
        assert part_of(s, 61, "chords") and part_of(s, 56, "lead") and part_of(s, 66)
        bars = main_bars(s, 8)
        kick = hits(s, (35, 36), bars, vmin=60)
        assert all(on(kick, float(b)) >= len(bars) - 1 for b in range(4)), seed       # four on the bass drum
        hat = hits(s, (44,), bars) if composer_of(s).groove.get("phat") else hits(s, (37,), bars)
        assert on(hat, 1.0) >= len(bars) - 1 and on(hat, 3.0) >= len(bars) - 1


def test_bebop_is_fast_with_sax_and_trumpet_over_a_fast_walk():
    for seed in SEEDS:
        s = compose("bebop", seed)
        assert s.bpm >= 180 * 0.95
        assert part_of(s, 65, "lead") and part_of(s, 56, "lead")
        bass = part_of(s, 32, "bass")[0]
        for i in main_bars(s, 6):
            assert len([n for n in s.bar(i)[0] if n.part == bass]) == 4
        alto = part_of(s, 65, "lead")[0]
        eighths = [n for i in main_bars(s, 16) for n in s.bar(i)[0] if n.part == alto and n.dur < 0.6]
        assert len(eighths) >= 40                                                      # bebop lines, not a tune


def test_cool_jazz_plays_brushes_and_muted_trumpet():
    for seed in SEEDS:
        s = compose("cool jazz", seed)
        assert s.parts[drum_part(s)].program == 40
        assert 110 * 0.7 <= s.bpm <= 140 * 1.15 and s.swing < compose("jazz", seed).swing
        assert part_of(s, 59, "lead")
        assert sum(len(xs) for xs in hits(s, (40,), main_bars(s, 8))) >= 8             # the swirl


def test_lounge_is_vibes_and_organ_on_a_two_beat_bass():
    for seed in SEEDS:
        s = compose("lounge", seed)
        assert part_of(s, 11, "lead") and part_of(s, 16)
        bass = part_of(s, 32, "bass")[0]
        bars = main_bars(s, 8)
        two = sum(sum(1 for n in s.bar(i)[0] if n.part == bass and n.dur >= 1.2) >= 1 for i in bars)
        assert two >= len(bars) - 1                                    # a two-beat feel: half notes, not a walk


def test_the_family_keeps_each_styles_own_colour():
    tone = {n: G.GENRES[n].tone for n in MINE}
    assert tone["k-pop"] > tone["pop"] > tone["soul"] > tone["cool jazz"]
    assert tone["r&b"] < 0 and tone["lounge"] < 0 and tone["disco"] > 0
    assert G.GENRES["gospel"].reverb > G.GENRES["funk"].reverb


def test_dixieland_is_a_two_beat_tuba_banjo_chunk_and_three_horns_at_once():
    """New Orleans: the tuba on one and three, the banjo on every beat, and trumpet, clarinet and
    trombone all playing the same bars (collective improvisation), swung."""
    for seed in range(3):
        s = compose("new orleans dixieland", seed)
        assert s.genre == "dixieland" and s.swing > 0.2, s.describe()
        main = main_bars(s, 8)
        tuba = [k for k, p in enumerate(s.parts) if p.program == 58]
        banjo = [k for k, p in enumerate(s.parts) if p.program == 105]
        horns = {p.program: k for k, p in enumerate(s.parts) if p.role == "lead"}
        assert tuba and banjo and set(horns) == {56, 71, 57}, s.describe()
        bpb = s.beats_per_bar
        t_on = Counter(round(n.start - i * bpb) for i in main for n in s.bar(i)[0] if n.part == tuba[0])
        assert t_on[0] >= len(main) - 1 and t_on[2] >= len(main) - 1 and t_on[1] + t_on[3] <= len(main), t_on
        b_on = Counter(round(n.start - i * bpb) % 4 for i in main for n in s.bar(i)[0] if n.part == banjo[0])
        assert all(b_on[q] >= len(main) - 1 for q in range(4)), b_on
        together = sum(all(any(n.part == k for n in s.bar(i)[0]) for k in horns.values()) for i in main)
        assert together >= len(main) // 2, (seed, together)
