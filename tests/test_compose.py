"""The composer (prompt → Score) and the MIDI writer: properties of the notes, not golden data."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from collections import Counter

from engine.compose import genres as G
from engine.compose import compose, composer_of, read_prompt
from engine.midifile import write_midi
from engine.score import DRUM_CHANNEL

GENRE_NAMES = sorted(G.GENRES)
DRUM_GENRES = [g for g in GENRE_NAMES if any(p.role == "drums" for p in G.GENRES[g].parts)]


def notes_of(score, b0, b1):
    out = []
    for i in range(b0, b1):
        out.extend(score.bar(i)[0])
    return out


def drum_part(score):
    return next(i for i, p in enumerate(score.parts) if p.is_drums)


def place(score, i):
    """Bar ``i``'s place in its 8-bar section (the intro is the last bars of section 0)."""
    return (i + composer_of(score).offset) % 8


def section_start(score, k):
    """The piece's bar where section ``k`` starts (section 0, the intro, starts before bar 0)."""
    return k * 8 - composer_of(score).offset


def bars_of_kind(score, kinds, n=400, skip_fills=True):
    """Bars whose section kind is in ``kinds`` (not a section's fill bars, unless asked)."""
    out = []
    for i in range(n):
        if score.section_of(i) in kinds and (not skip_fills or place(score, i) not in (3, 7)):
            out.append(i)
    return out


# --- reading the prompt ---------------------------------------------------------------------------
@pytest.mark.parametrize("prompt,bpm,key,meter,genre", [
    ("deep house in A minor with piano 124 bpm", 124, "A minor", (4, 4), "deep house"),
    ("lofi hip hop beat with rhodes in F# dorian", None, "F# dorian", (4, 4), "lofi"),
    ("a jazz waltz in Bb major", None, "Bb major", (3, 4), "jazz waltz"),
    ("waltz in E minor", None, "E minor", (3, 4), "waltz"),
    ("cinematic piece in 6/8, key of D minor, 90 bpm", 90, "D minor", (6, 8), "cinematic"),
    ("techno at 133 bpm in eb phrygian", 133, "Eb phrygian", (4, 4), "techno"),
    ("drum & bass in C#m", None, "C# minor", (4, 4), "drum and bass"),
    ("string quartet in G major 3/4", None, "G major", (3, 4), "classical"),
    ("reggae one drop tempo 76", 76, None, (4, 4), "reggae"),
    ("metal in a dark mood", None, None, (4, 4), "metal"),
])
def test_prompt_is_read(prompt, bpm, key, meter, genre):
    s = compose(prompt, 0)
    if bpm:
        assert s.beat_bpm == pytest.approx(bpm)
    if key:
        assert s.key_name == key
    assert s.meter == meter
    assert s.genre == genre
    lo, hi = G.GENRES[genre].bpm
    if not bpm:
        assert lo * 0.7 <= s.beat_bpm <= hi * 1.15


def test_a_modal_mood_is_a_colour_a_named_mode_is_the_key():
    """"dreamy" asks for lydian's colour, not for the key: like a style's own colour it plays a
    third of the time and the plain key otherwise; "in Eb lydian" is always lydian."""
    dreamy = [compose(f"dreamy lofi beat, take {t}", 0).mode for t in range(30)]
    assert set(dreamy) == {"lydian", "major"} and 5 <= dreamy.count("lydian") <= 15, Counter(dreamy)
    assert {compose(f"lofi beat in Eb lydian, take {t}", 0).key_name for t in range(10)} == {"Eb lydian"}
    assert {compose(f"dreamy lofi beat in A minor, take {t}", 0).key_name for t in range(10)} == {"A minor"}


@pytest.mark.parametrize("prompt", ["lofi beat in Eb lydian", "shoegaze in F lydian", "dream pop in G lydian"])
def test_lydian_holds_its_tonic_under_the_raised_fourth(prompt):
    """Lydian's II sounds over the tonic in the bass: I–II over a moving bass is IV–V of the key a
    fifth above (a shoegaze in F lydian heard C major); over the pedal it is heard on its tonic."""
    from engine.compose.harmony import parse_chord

    assert parse_chord("II/I", 5, G.MODES["lydian"]).bass == 5 and parse_chord("II/I", 5, G.MODES["lydian"]).root == 7
    for seed in range(3):
        s = compose(prompt, seed)
        assert s.mode == "lydian"
        bass = [k for k, p in enumerate(s.parts) if p.role == "bass"]
        notes = [n for i in range(2, 18) for n in s.bar(i)[0] if n.part in bass]
        on_beat = Counter((n.pitch - s.key_root) % 12 for n in notes if abs(n.start % s.beats_per_bar) < 0.05)
        assert on_beat and on_beat[2] == 0, (seed, on_beat)        # never the II's own root on a downbeat
        assert on_beat[0] >= 0.6 * sum(on_beat.values()), (seed, on_beat)


@pytest.mark.parametrize("prompt,bpm", [
    ("dubstep wobble bass half time 140", 140), ("techno, 130, dark", 130), ("trance 138.5", 138.5),
    ("house 4x4 120", 120), ("808 trap beat", None), ("80s synthwave", None), ("90's hip hop", None),
    ("12 bar blues", None), ("30 seconds of ambient", None), ("top 40 pop", None), ("1999 disco", None),
    ("tr-909 house", None), ("a 64 step sequence", None), ("2 guitars and 100 strings", None),
    ("waltz in 3/4", None), ("funk 110bpm, 95 bars", 110),
])
def test_a_bare_number_is_a_tempo_only_when_it_reads_as_one(prompt, bpm):
    assert read_prompt(prompt).bpm == bpm


def test_bpm_argument_overrides_the_prompt_and_in_a_is_not_a_key():
    assert compose("house 124 bpm", 0, bpm=100).bpm == 100
    assert read_prompt("rock in a garage").key_root is None
    assert read_prompt("pop in a minor").key_root == 9
    assert read_prompt("pop in A").key_root == 9
    with pytest.raises(ValueError):
        compose("house", 0, bpm=-3)
    with pytest.raises(TypeError):
        compose(None)  # type: ignore[arg-type]


def test_open_choices_come_from_the_hash_and_bad_words_are_harmless():
    a, b = compose("purple elephant staircase", 0), compose("purple elephant staircase", 1)
    for s in (a, b):
        assert 30 <= s.bpm <= 300 and s.parts and s.genre in G.GENRES
        assert s.bar(0)[0] or s.bar(1)[0]
    assert (a.genre, a.key_name, a.bpm) != (b.genre, b.key_name, b.bpm)
    s = compose("", 0)
    assert notes_of(s, 0, 8)
    with pytest.raises(ValueError):
        s.make_bar(-1)


def test_negations_remove_roles_and_only_keeps_them():
    s = compose("house with no drums and without bass", 0)
    assert not any(p.role in ("drums", "bass") for p in s.parts)
    s = compose("solo piano in C major", 0)
    assert {p.program for p in s.parts} == {0} and not any(p.is_drums for p in s.parts)   # the pianist's two hands
    assert {p.role for p in compose("just bass and drums", 0).parts} == {"bass", "drums"}
    assert {p.role for p in compose("drums only", 3).parts} == {"drums"}


# --- determinism, purity, performance-shaped API --------------------------------------------------
def test_same_prompt_and_seed_give_identical_notes_in_any_order():
    a = compose("funk with slap bass and clavinet", 7)
    b = compose("funk with slap bass and clavinet", 7)
    order = [37, 5, 200, 0, 1, 36, 37]
    got_b = {i: b.make_bar(i) for i in order}
    for i in order:
        assert a.make_bar(i) == got_b[i]
    assert a.parts == b.parts and a.bpm == b.bpm and a.key_name == b.key_name
    c = compose("funk with slap bass and clavinet", 8)
    assert notes_of(a, 8, 24) != notes_of(c, 8, 24)


def test_bars_far_into_an_endless_stream_work():
    s = compose("trance in F minor", 2)
    notes, _ = s.make_bar(1_000_003)
    bpb = s.beats_per_bar
    assert notes and all(1_000_003 * bpb - 0.1 <= n.start < 1_000_004 * bpb for n in notes)


# --- notes are well formed -------------------------------------------------------------------------
@pytest.mark.parametrize("genre", GENRE_NAMES + ["jazz in 7/8", "lofi 5/8", "reggae in 1/16", "funk 15/16",
                                                 "pop 2/2", "trap 12/8"])
def test_notes_are_well_formed_and_never_overlap_on_one_pitch(genre):
    for seed in (0, 1):
        s = compose(f"{genre} song", seed)
        bpb = s.beats_per_bar
        by: dict = {}
        for i in range(0, 96):
            notes, controls = s.bar(i)
            for n in notes:
                assert n.dur > 0 and 1 <= n.vel <= 127 and 0 <= n.pitch <= 127
                assert i * bpb - 0.1 <= n.start < (i + 1) * bpb, (genre, i, n)
                assert 0 <= n.part < len(s.parts)
                by.setdefault((n.part, n.pitch), []).append(n)
            for c in controls:
                assert c.kind in ("cc", "bend")
                if c.kind == "bend":
                    assert -2 <= c.value <= 2
                else:
                    assert 0 <= c.value <= 127 and 0 <= c.number <= 127
        for key, ns in by.items():
            ns.sort(key=lambda n: n.start)
            for x, y in zip(ns, ns[1:]):
                assert x.start + x.dur < y.start, (genre, seed, s.parts[key[0]].name, x, y)


def test_every_genre_names_itself_and_has_its_tempo_meter_and_kit():
    for name, g in G.GENRES.items():
        s = compose(g.aliases[0], 0)
        assert s.genre == name
        assert s.meter == g.meter
        lo, hi = g.bpm
        assert lo * 0.7 - 1 <= s.beat_bpm <= hi * 1.15 + 1
        drums = [p for p in s.parts if p.is_drums]
        if drums:
            assert drums[0].program == g.kit
    assert len(G.GENRES) >= 40


@pytest.mark.parametrize("prompt,genre,has", [
    ("afrobeat with talking drums", "afrobeat", None), ("trip hop", "trip hop", None), ("hyperpop", "synthpop", None),
    ("grime", "drill", None), ("hardstyle kick", "techno", None), ("uk garage 2-step", "uk garage", None),
    ("edm festival drop", "house", None), ("reggaeton", "reggaeton", None), ("mazurka", "waltz", None),
    ("chiptune", "chiptune", 80), ("celtic folk", "celtic", 110), ("bluegrass", "bluegrass", 105),
    ("argentine tango", "tango", 23), ("film noir jazz", "jazz", None),
    ("folk with distorted guitar", "folk", 30),           # a named instrument wins over the style's
])
def test_styles_are_reached_by_their_neighbours_with_their_instruments(prompt, genre, has):
    s = compose(prompt, 0)
    assert s.genre == genre
    if has is not None:
        assert has in [p.program for p in s.parts]
    if "distorted" in prompt:
        assert 25 not in [p.program for p in s.parts if p.role == "chords"]


@pytest.mark.parametrize("prompt,programs,absent", [
    ("post-hardcore in 7/8. Two guitars (one clean and arpeggiated, one overdriven), distorted bass", {27, 29}, {30}),
    ("indie rock, two guitars: one acoustic and one electric", {25, 27}, set()),
    ("jazz with two saxes, one alto and the other tenor.", {65, 66}, set()),
    ("a pair of guitars, one nylon, one steel, bossa nova", {24, 25}, set()),
])
def test_a_pair_named_by_what_tells_them_apart_is_two_instruments(prompt, programs, absent):
    """"Two guitars (one clean …, one overdriven)": both play, each its own kind — read whole, the
    clean one was a second distorted guitar."""
    for seed in (0, 1):
        s = compose(prompt, seed)
        have = {p.program for p in s.parts}
        comping = {p.program for p in s.parts if p.role in ("chords", "arp")}
        assert programs <= have and not absent & comping, (seed, s.describe())


@pytest.mark.parametrize("prompt", ["Disco polo jak z lat 90.: tani keyboard, syntezatorowy bas, w a-moll",
                                    "pop song with a cheap casio keyboard melody", "eurodance, home keyboard riffs"])
def test_a_cheap_home_keyboard_is_a_synth_not_the_styles_piano(prompt):
    s = compose(prompt, 0)
    named = [p for p in s.parts if "keyboard" in p.name]
    assert named and all(80 <= p.program < 96 for p in named), s.describe()
    # a plain keyboard may still be the style's piano or a synth: only the cheap one is told apart
    assert any(p.program in (*range(0, 8), *range(80, 96)) for p in compose("rock with keyboard and guitar", 0).parts)
    # "casino" is no Casio, and a "casio choir pad" is a pad
    for prompt in ("northern soul stomper, wigan casino allnighter energy", "dungeon synth, lo-fi casio choir pads"):
        assert not any(p.role == "lead" and p.program == 81 for p in compose(prompt, 1).parts), prompt


def test_every_section_but_a_break_touches_the_tonic():
    """A key detector (and a listener) finds home: no section outside a break loops a progression
    that never lands on the tonic (soul's "ii7 iii7 IVmaj7 V7" read as the relative minor)."""
    from engine.compose.form import SECTION_BARS
    for name in G.GENRES:
        for mode in ("major", "minor"):
            for seed in range(6):
                s = compose(f"{name} in E {mode}", seed)
                for k in range(6):
                    bars = range(k * SECTION_BARS, (k + 1) * SECTION_BARS)
                    if s.section_of(bars[0]) == "break":
                        continue
                    roots = {s.chord_of(i)[0] % 12 for i in bars}
                    assert s.key_root in roots, (name, mode, seed, k, s.section_of(bars[0]))


@pytest.mark.parametrize("prompt", ["string quartet in G major", "string quartet in D minor"])
def test_a_quartets_inner_voices_never_leave_out_the_third(prompt):
    """Each of the two inner voices voice-led on its own settled on the common tones: the third
    went missing and the music sat on the dominant (a key detector heard G major as D major)."""
    for seed in range(6):
        s = compose(prompt, seed)
        inner = [k for k, p in enumerate(s.parts) if p.role == "chords"]
        assert len(inner) == 2
        held = 0
        for i in range(32):
            chord = s.chord_of(i)
            notes = [n for n in s.bar(i)[0] if n.part in inner]
            if len(chord) < 3 or not notes:
                continue
            held += 1
            first = [n.pitch % 12 for n in notes if n.start < i * s.beats_per_bar + 0.5]
            assert chord[1] % 12 in first, (seed, i, chord, first)
        assert held >= 16


# --- meter --------------------------------------------------------------------------------------
def beat_strength(score, bars):
    """Drum and bass onset strength per beat (velocity-weighted onsets near each beat)."""
    bpb = score.beats_per_bar
    nb = int(round(bpb))
    out = np.zeros(len(bars) * nb)
    for k, i in enumerate(bars):
        for n in score.bar(i)[0]:
            role = score.parts[n.part].role
            if role not in ("drums", "bass"):
                continue
            pos = n.start - i * bpb
            b = int(round(pos))
            if abs(pos - b) < 0.08 and 0 <= b < nb:
                w = 2.0 if n.pitch in (35, 36) or role == "bass" else 1.0
                out[k * nb + b] += n.vel * w
    return out


def autocorr(x, lag):
    x = x - x.mean()
    return float(np.dot(x[:-lag], x[lag:]) / (len(x) - lag))


@pytest.mark.parametrize("prompt", ["waltz in D major", "jazz waltz", "folk ballad in 3/4 with acoustic guitar",
                                    "pop song in 3/4"])
def test_three_four_repeats_every_three_beats(prompt):
    s = compose(prompt, 0)
    assert s.beats_per_bar == 3
    x = beat_strength(s, list(range(8, 72)))
    ac = {lag: autocorr(x, lag) for lag in range(1, 9)}
    assert ac[3] > ac[4] and ac[3] > ac[2] and ac[6] > ac[4], ac


def test_four_four_repeats_every_four_beats():
    s = compose("rock in E minor", 0)
    x = beat_strength(s, list(range(8, 72)))
    ac = {lag: autocorr(x, lag) for lag in range(1, 9)}
    assert ac[4] > ac[3], ac


def test_six_eight_groups_in_dotted_quarters():
    s = compose("cinematic ballad in 6/8", 0)
    assert s.beats_per_bar == 3
    d = drum_part(s) if any(p.is_drums for p in s.parts) else None
    if d is not None:
        onsets = [round((n.start - i * 3) * 2) % 6 for i in range(8, 40) for n in s.bar(i)[0]
                  if n.part == d and n.pitch in (35, 36)]
        assert onsets and onsets.count(0) >= len(onsets) / 2


# --- instruments ----------------------------------------------------------------------------------
def test_the_instrument_table_is_large_and_uses_gm_programs():
    assert len(G.INSTRUMENTS) >= 60
    assert all(0 <= prog <= 127 and role in ("bass", "chords", "pad", "lead", "arp", "perc")
               for prog, role, _ in G.INSTRUMENTS.values())
    named = {"rhodes": 4, "wurlitzer": 5, "clavinet": 7, "organ": 16, "piano": 0, "nylon guitar": 24,
             "steel guitar": 25, "distorted guitar": 30, "electric guitar": 27, "upright bass": 32,
             "slap bass": 36, "808": 38, "synth bass": 38, "strings": 48, "violin": 40, "cello": 42,
             "choir": 52, "brass": 61, "trumpet": 56, "sax": 65, "flute": 73, "clarinet": 71, "vibes": 11,
             "marimba": 12, "bells": 14, "celesta": 8, "harp": 46, "sitar": 104, "koto": 107, "taiko": 116,
             "pad": 89, "lead": 81, "pluck": 84}
    for w, prog in named.items():
        assert G.INSTRUMENTS[w][0] == prog, w


@pytest.mark.parametrize("word", sorted(G.INSTRUMENTS))
def test_each_instrument_word_gets_its_program_and_plays(word):
    from engine.compose.band import _GENERIC
    prog = G.INSTRUMENTS[word][0]
    # a bare "woodblock" is the percussion block (drum keys); GM's melodic one carries a tune
    s = compose(f"pop song with {word}" + (" melody" if word == "woodblock" else ""), 0)
    kind = _GENERIC.get(word, ())          # "guitar" is pop's own acoustic guitar, "synth" its synth lead
    parts = [k for k, p in enumerate(s.parts) if not p.is_drums and
             ((p.name == word and p.program == prog) or p.program in kind)]
    assert parts, (word, s.describe())
    played = {n.part for n in notes_of(s, 0, 48)}
    assert played & set(parts), (word, s.describe())


@pytest.mark.parametrize("prompt", ["gentle lullaby in 6/8 with a soft triangle", "irish jig with a triangle",
                                    "slow blues in 12/8 with a tambourine"])
def test_named_percussion_in_a_compound_meter_plays_its_beats(prompt):
    """A hand-percussion word's pattern is written in 4/4 quarters; in 6/8, 9/8 or 12/8 its
    'on the beat' hits land on the dotted quarters (a triangle in quarters across a 6/8 bar was
    three against two: the lullaby read in 2-eighth beats)."""
    lane = {"triangle": (81,), "tambourine": (54,)}["triangle" if "triangle" in prompt else "tambourine"]
    for seed in range(3):
        s = compose(prompt, seed)
        assert s.meter[1] == 8 and s.meter[0] % 3 == 0
        bpb = s.beats_per_bar
        pos = Counter(round((n.start - b * bpb) * 2, 1) % (2 * bpb) for b in range(4, 24)
                      for n in s.bar(b)[0] if n.part == drum_part(s) and n.pitch in lane)
        beats = {float(3 * k) for k in range(s.meter[0] // 3)}           # in eighths
        on = sum(v for q, v in pos.items() if min(abs(q - b) for b in beats) < 0.1)
        assert on >= 0.9 * sum(pos.values()) and on >= 10, (prompt, seed, pos)


def test_drum_words_change_the_kit_and_the_groove():
    s = compose("lofi beat with brushes", 0)
    assert s.parts[drum_part(s)].program == 40
    s = compose("pop song with 808s", 0)
    assert s.parts[drum_part(s)].program == 25
    assert any(p.role == "bass" and p.program == 38 for p in s.parts)
    s = compose("ambient with congas and shaker", 0)
    d = drum_part(s)
    pitches = {n.pitch for n in notes_of(s, 8, 40) if n.part == d}
    assert pitches == {63, 64, 70}           # a style without drums: a percussionist, not a drum kit
    s = compose("ambient meditation with wind chimes", 0)
    assert {n.pitch for n in notes_of(s, 0, 40) if n.part == drum_part(s)} == {84}
    s = compose("ambient with a shaker and a breakbeat", 0)   # a groove word brings the kit
    assert {36, 38, 70} <= {n.pitch for n in notes_of(s, 8, 40) if n.part == drum_part(s)}
    plain = compose("pop song", 0)
    hats = compose("pop song with hats", 0)

    def n_hats(sc):
        dd = drum_part(sc)
        return sum(1 for n in notes_of(sc, 8, 24) if n.part == dd and n.pitch == 42)
    assert n_hats(hats) > n_hats(plain)
    brk = compose("pop song with breakbeat", 0)
    assert composer_of(brk).groove == G.SPECIAL_GROOVES["break"]


# --- grooves --------------------------------------------------------------------------------------
def groove_signature(score):
    """The drum onsets of a main-groove bar: (pitch, position on a 1/12-beat grid), accents only."""
    d = drum_part(score)
    for i in bars_of_kind(score, ("A", "B", "drop")):
        bpb = score.beats_per_bar
        sig = frozenset((n.pitch, round((n.start - i * bpb) * 12) % int(bpb * 12))
                        for n in score.bar(i)[0] if n.part == d and n.vel > 60 and n.pitch != 49)
        if sig:
            return sig
    raise AssertionError("no groove bar")


def test_genre_grooves_differ_pairwise():
    sigs = {g: groove_signature(compose(g, 0)) for g in DRUM_GENRES}
    for a, b in itertools.combinations(sigs, 2):
        assert sigs[a] != sigs[b], (a, b)


def onsets(score, pitches, part=None, bars=None):
    d = drum_part(score) if part is None else part
    bpb = score.beats_per_bar
    out = []
    for i in bars:
        out.extend(n.start - i * bpb for n in score.bar(i)[0] if n.part == d and n.pitch in pitches and n.vel > 45)
    return out


def near(xs, t, tol=0.08):
    return [x for x in xs if abs(x - t) < tol]


def test_jazz_swings_on_the_ride_with_the_hat_on_two_and_four():
    for seed in range(3):
        s = compose("jazz trio", seed)
        bars = bars_of_kind(s, ("A", "B", "solo"))[:8]
        ride = onsets(s, (51,), bars=bars)
        assert len(near(ride, 0.0)) >= len(bars) - 1 and len(near(ride, 1.0)) >= len(bars) - 1
        assert len(near(ride, 1.667, 0.06)) >= len(bars) // 2       # the swung "and" of two
        assert not near(ride, 1.5, 0.04)
        hat = onsets(s, (44,), bars=bars)
        assert len(near(hat, 1.0, 0.06)) + len(near(hat, 3.0, 0.06)) >= len(bars)


def test_reggae_is_a_one_drop():
    for seed in range(4):
        s = compose("roots reggae", seed)
        bars = bars_of_kind(s, ("A", "B"))[:10]
        kick = onsets(s, (35, 36), bars=bars)
        assert not near(kick, 0.0, 0.1), seed
        assert len(near(kick, 2.0, 0.06)) >= len(bars) - 1
        snare = onsets(s, (37, 38), bars=bars)
        assert len(near(snare, 2.0, 0.06)) >= len(bars) - 1


def test_four_on_the_floor_only_where_it_belongs():
    def four(prompt, seed=0):
        s = compose(prompt, seed)
        bars = bars_of_kind(s, ("A", "B", "drop"))[:8]
        kick = onsets(s, (35, 36), bars=bars)
        return all(len(near(kick, float(b))) >= len(bars) - 1 for b in range(4))
    assert four("deep house") and four("techno") and four("disco")
    for g in ("drum and bass", "trap", "dubstep", "reggae", "jazz", "bossa nova", "lofi", "funk"):
        assert not four(g), g


def test_trap_has_hat_rolls_and_gliding_808():
    s = compose("dark trap beat", 0)
    d = drum_part(s)
    hats = sorted(n.start for n in notes_of(s, 8, 40) if n.part == d and n.pitch == 42)
    gaps = np.diff(hats)
    assert (gaps < 0.2).sum() >= 4                                  # 32nd / triplet rolls
    bass = next(k for k, p in enumerate(s.parts) if p.role == "bass")
    bends = [c for i in range(8, 40) for c in s.bar(i)[1] if c.part == bass and c.kind == "bend"]
    assert bends and min(c.value for c in bends) < 0 or max(c.value for c in bends) > 0
    assert s.parts[d].program == 25


def test_metal_double_kick_and_dubstep_half_time():
    s = compose("thrash metal", 0)
    bars = bars_of_kind(s, ("A", "B"))[:4]
    assert len(onsets(s, (35, 36), bars=bars)) >= 8 * len(bars)
    s = compose("dubstep", 0)
    bars = bars_of_kind(s, ("A", "B", "drop"))[:6]
    snare = onsets(s, (38, 39, 40), bars=bars)
    assert len(near(snare, 2.0)) >= len(bars) - 1 and not near(snare, 1.0) and not near(snare, 3.0)


def test_bossa_plays_the_clave_on_the_rim():
    s = compose("bossa nova", 0)
    bars = bars_of_kind(s, ("A", "B"), skip_fills=False)[:8]
    rim = onsets(s, (37,), bars=[b for b in bars if place(s, b) not in (3, 7)])
    assert rim and any(abs((x % 1) - 0.5) < 0.05 for x in rim)       # off-beat clave strokes


def test_walking_bass_in_jazz_plays_every_beat():
    s = compose("jazz in F major", 0)
    bass = next(k for k, p in enumerate(s.parts) if p.role == "bass")
    bars = bars_of_kind(s, ("A", "B"))[:8]
    for i in bars:
        ns = [n for n in s.bar(i)[0] if n.part == bass]
        assert len(ns) == 4
        assert len({n.pitch for n in ns}) >= 3


# --- harmony --------------------------------------------------------------------------------------
@pytest.mark.parametrize("genre", ["pop", "trance", "rock", "house", "cinematic", "jazz", "classical", "lofi",
                                   "synthwave", "metal", "waltz"])
def test_minor_keys_have_a_major_v_with_the_raised_seventh(genre):
    s = compose(f"{genre} in A minor", 0)
    assert s.mode == "minor"
    c = composer_of(s)
    chords = [ch for i in range(0, 64) for _, _, ch in c.chords_of_bar(i)]
    assert any(ch.root == 4 and 8 in ch.pcs for ch in chords)           # E major: G# is A minor's raised 7th
    assert sum(ch.root == 9 and 0 in ch.pcs for ch in chords) >= 4       # and the tonic is A minor


@pytest.mark.parametrize("symbol", ["Imaj7", "ii7", "iii7", "IVmaj7", "V7", "vi7", "viih7"])
def test_a_voicing_never_doubles_the_seventh(symbol):
    """A doubled seventh is the chord's sharpest note twice (a rootless Bbmaj7 with two A's is heard
    as D minor): a four-note voicing of a seventh chord doubles its root, or in a rootless voicing
    its fifth (its third where the fifth is left out), in every register a comping part plays in."""
    from engine.compose.harmony import parse_chord, voice
    major = (0, 2, 4, 5, 7, 9, 11)
    for tonic in range(12):
        c = parse_chord(symbol, tonic, major)
        seventh = (c.root + c.intervals[3]) % 12
        for lo in range(48, 62, 3):
            for rootless in (False, True):
                v = voice(c, lo, lo + 19, 4, None, lo + 9, rootless)
                pcs = [p % 12 for p in v]
                assert pcs.count(seventh) == 1, (symbol, tonic, lo, rootless, v)
                if rootless:
                    assert c.root not in pcs, (symbol, tonic, v)


def test_melody_over_the_major_v_uses_the_raised_seventh():
    for seed in range(6):
        s = compose("cinematic in A minor with violin", seed)
        c = composer_of(s)
        lead = next(k for k, p in enumerate(s.parts) if p.role == "lead")
        for i in range(8, 120):
            ch = c.chords_of_bar(i)
            if len(ch) == 1 and ch[0][2].root == 4 and 8 in ch[0][2].pcs:
                pcs = {n.pitch % 12 for n in s.bar(i)[0] if n.part == lead}
                assert 7 not in pcs, (seed, i)


def test_different_seeds_give_different_progressions():
    for prompt in ("pop song in C major", "trance in F minor", "jazz ballad", "rock"):
        progs = set()
        for seed in range(6):
            c = composer_of(compose(prompt, seed))
            progs.add(tuple(ch.symbol for i in range(8, 40) for _, _, ch in c.chords_of_bar(i)))
        assert len(progs) >= 4, prompt


def test_seeds_change_the_groove_details_and_the_melody():
    a, b = compose("house", 0), compose("house", 1)
    assert groove_signature(a) != groove_signature(b) or \
        [n.pitch for n in notes_of(a, 8, 16)] != [n.pitch for n in notes_of(b, 8, 16)]


def test_chord_parts_move_by_small_steps():
    s = compose("soul with rhodes in Eb major", 0)
    c = composer_of(s)
    k = next(j for j, p in enumerate(s.parts) if p.name == "rhodes")
    for sec in (1, 2, 3):
        vs = [v for row in c.section(sec).voicings[k] for v in row]
        moves = [sum(abs(x - y) for x, y in zip(sorted(a), sorted(b))) / len(a) for a, b in zip(vs, vs[1:])]
        assert np.mean(moves) <= 3.0
        assert all(50 <= p <= 79 for v in vs for p in v)


def test_the_melody_sits_on_chord_tones_on_the_beat():
    s = compose("pop song with flute in D major", 1)
    c = composer_of(s)
    lead = next(k for k, p in enumerate(s.parts) if p.role == "lead")
    hits = total = 0
    for i in range(8, 72):
        for n in s.bar(i)[0]:
            pos = n.start - i * 4
            if n.part == lead and abs(pos - round(pos)) < 0.05:
                ch = next(ch for a, b, ch in c.chords_of_bar(i) if a <= round(pos) < b)
                hits += n.pitch % 12 in ch.pcs
                total += 1
    assert total > 20 and hits / total >= 0.7


# --- form -----------------------------------------------------------------------------------------
def test_the_form_is_not_a_loop():
    s = compose("deep house in A minor", 0)
    kinds = [s.section_of(section_start(s, k)) for k in range(1, 60)]
    assert any(kinds[k] != kinds[k + 4] for k in range(len(kinds) - 4))
    assert any(kinds[k] != kinds[k + 8] for k in range(len(kinds) - 8))

    def shape(i):
        return sorted((n.part, n.pitch) for n in s.bar(i)[0])
    assert sum(shape(i) != shape(i + 32) for i in range(32, 160)) > 20


def test_sections_add_and_drop_instruments_and_fill_at_their_ends():
    s = compose("pop song", 0)

    def playing(i):
        return {s.parts[n.part].role for n in s.bar(i)[0]}
    intro = composer_of(s).intro_bars
    assert intro == 2                                                            # two bars, then the band
    assert "lead" not in set().union(*(playing(i) for i in range(0, intro)))    # the intro keeps the melody back
    sets = [frozenset().union(*(playing(i) for i in range(section_start(s, k), section_start(s, k) + 8)))
            for k in range(1, 12)]
    assert len(set(sets)) >= 2
    d = drum_part(s)
    fills = mids = 0
    for k in range(1, 12):
        last, mid = section_start(s, k + 1) - 1, section_start(s, k) + 1
        tom_snare = lambda i: sum(1 for n in s.bar(i)[0] if n.part == d and n.pitch in (38, 41, 43, 45, 47, 48, 50))
        fills += tom_snare(last)
        mids += tom_snare(mid)
    assert fills > mids * 1.5


def test_edm_breakdowns_drop_the_kick():
    s = compose("trance", 0)
    d = drum_part(s)
    br = [i for i in range(400) if s.section_of(i) == "break" and place(s, i) < 6]
    assert br
    assert not [n for i in br for n in s.bar(i)[0] if n.part == d and n.pitch == 36]


# --- micro-timing ---------------------------------------------------------------------------------
def test_swing_and_humanisation_are_in_the_note_starts():
    s = compose("lofi hip hop with hats", 0)
    assert s.swing > 0
    d = drum_part(s)
    offs = [((n.start - i * 4) * 4) % 2 for i in range(8, 24) for n in s.bar(i)[0] if n.part == d and n.pitch == 42]
    odd = [x for x in offs if 0.5 < x < 1.6]
    assert odd and np.mean(odd) > 1.1                                    # swung 16ths land late
    straight = compose("techno", 0)
    d = drum_part(straight)
    st = [n.start for i in range(8, 24) for n in straight.bar(i)[0] if n.part == d]
    dev = [abs(x * 4 - round(x * 4)) / 4 for x in st]
    assert max(dev) < 0.01                                               # tight, ≤ ~4 ms at 130 bpm
    rock = compose("rock", 0)
    d = drum_part(rock)
    st = [n.start for i in range(8, 24) for n in rock.bar(i)[0] if n.part == d]
    dev = [abs(x * 4 - round(x * 4)) / 4 for x in st]
    ms = np.array(dev) * 60000 / rock.bpm
    assert 0.5 < ms.mean() < 8 and ms.max() < 15                         # a few ms, never a flam
    vels = {n.vel for i in range(8, 24) for n in rock.bar(i)[0] if n.part == d and n.pitch in (42, 51)}
    assert len(vels) >= 6


# --- mix ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("genre", GENRE_NAMES)
def test_the_mix_is_stereo_and_centred_where_it_should_be(genre):
    s = compose(genre, 0)
    assert len({p.channel for p in s.parts}) == len(s.parts)
    for p in s.parts:
        assert 0 < p.level <= 1 and -1 <= p.pan <= 1 and 0 <= p.reverb <= 1 and 0 <= p.chorus <= 1
        assert (p.channel == DRUM_CHANNEL) == (p.role == "drums")
        if p.role in ("drums", "bass"):
            assert p.pan == 0
    assert min(p.pan for p in s.parts) < -0.1 and max(p.pan for p in s.parts) > 0.1
    assert sum(p.pan * p.level for p in s.parts) / sum(p.level for p in s.parts) == pytest.approx(0, abs=0.15)


# --- MIDI file ------------------------------------------------------------------------------------
def test_write_midi_round_trips_through_mido(tmp_path):
    mido = pytest.importorskip("mido")
    s = compose("funk in E minor with slap bass and clavinet 104 bpm", 3)
    path = tmp_path / "take.mid"
    n = write_midi(s, path, bars=16)
    expected = len(notes_of(s, 0, 16))
    assert n == expected
    mid = mido.MidiFile(path)
    tempo = [m.tempo for m in mid.tracks[0] if m.type == "set_tempo"]
    assert tempo and mido.tempo2bpm(tempo[0]) == pytest.approx(104, abs=0.01)
    ts = [m for m in mid.tracks[0] if m.type == "time_signature"][0]
    assert (ts.numerator, ts.denominator) == (4, 4)
    assert [m.key for m in mid.tracks[0] if m.type == "key_signature"] == ["Em"]
    progs = {}
    ons = 0
    for tr in mid.tracks[1:]:
        for m in tr:
            if m.type == "program_change":
                progs[m.channel] = m.program
            if m.type == "note_on" and m.velocity > 0:
                ons += 1
    assert ons == n
    for p in s.parts:
        assert progs[p.channel] == p.program
    assert progs[9] == s.parts[drum_part(s)].program
    # no note is left hanging: every note_on has its note_off on the same channel and pitch
    for tr in mid.tracks[1:]:
        held = {}
        for m in tr:
            if m.type == "note_on" and m.velocity > 0:
                assert held.get((m.channel, m.note), 0) == 0
                held[(m.channel, m.note)] = 1
            elif m.type in ("note_off", "note_on"):
                held[(m.channel, m.note)] = 0
        assert not any(held.values())


@pytest.mark.parametrize("prompt", ["kankyō ongaku, no beat at all", "schubert style lied — voice and piano",
                                    "anatolian rock, fuzz bağlama, barış manço", "城市流行 city pop, 夜"])
def test_write_midi_takes_a_prompt_in_any_script(tmp_path, prompt):
    """The prompt is the file's name (its first track's name): written as UTF-8, read back whole —
    a macron, an em dash or Chinese in the prompt once stopped `render --midi` with an encoding error."""
    mido = pytest.importorskip("mido")
    path = tmp_path / "take.mid"
    assert write_midi(compose(prompt, 1), path, bars=2) > 0
    names = [m.name for m in mido.MidiFile(path, charset="utf-8").tracks[0] if m.type == "track_name"]
    assert names == [f"wavebridge: {prompt}"[:120]]


def test_write_midi_by_seconds_and_meter(tmp_path):
    mido = pytest.importorskip("mido")
    s = compose("trap in A minor 140 bpm", 0)
    path = tmp_path / "t.mid"
    write_midi(s, path, seconds=10)
    mid = mido.MidiFile(path)
    assert mid.length == pytest.approx(10, abs=0.2)
    assert any(m.type == "pitchwheel" for tr in mid.tracks for m in tr)
    s = compose("waltz in 3/4", 0)
    write_midi(s, path, bars=4)
    ts = [m for m in mido.MidiFile(path).tracks[0] if m.type == "time_signature"][0]
    assert (ts.numerator, ts.denominator) == (3, 4)


# --- the key is heard ----------------------------------------------------------------------------
_KK_MAJOR = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
_KK_MINOR = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


def estimated_key(score, bars=range(0, 48)):
    """Krumhansl–Schmuckler estimate from the pitched notes (duration × velocity per pitch class)."""
    h = np.zeros(12)
    for i in bars:
        for n in score.bar(i)[0]:
            if not score.parts[n.part].is_drums:
                h[n.pitch % 12] += min(n.dur, 2.0) * n.vel
    _, root, mode = max((np.corrcoef(h, np.roll(prof, r))[0, 1], r, m)
                        for r in range(12) for prof, m in ((_KK_MAJOR, "major"), (_KK_MINOR, "minor")))
    return root, mode


def test_minor_keys_are_heard_as_minor_not_as_the_relative_major():
    right = total = relative = 0
    for g in GENRE_NAMES:
        for seed in (0, 1):
            for key, root, mode in (("A minor", 9, "minor"), ("C major", 0, "major")):
                est = estimated_key(compose(f"{g} in {key}", seed))
                total += 1
                right += est == (root, mode)
                relative += est == ((root + 3) % 12, "major") if mode == "minor" else est == ((root - 3) % 12, "minor")
    assert right / total >= 0.85, (right, total)
    assert relative / total <= 0.1


# --- any prompt ---------------------------------------------------------------------------------
_VOCAB = sorted(set(G.INSTRUMENTS) | set(G.DRUM_WORDS) | set(G.MOODS) | {a for g in G.GENRES.values() for a in g.aliases}
                | {"in", "a", "minor", "major", "dorian", "bpm", "120", "3/4", "6/8", "7/8", "no", "drums", "bass",
                   "with", "and", "solo", "only", "f#", "bb", "key", "of", "tempo", "swing", "straight", "slow",
                   "1/16", "5/8", "15/16", "2/2", "just"})


def test_any_prompt_composes_into_well_formed_bars():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies

    @hyp.settings(max_examples=60, deadline=None)
    @hyp.given(words=st.lists(st.sampled_from(_VOCAB), max_size=9), junk=st.text(max_size=12),
               seed=st.integers(0, 2**31), bar=st.integers(0, 10_000))
    def check(words, junk, seed, bar):
        s = compose(" ".join(words) + " " + junk, seed)
        bpb = s.beats_per_bar
        assert 30 <= s.bpm <= 300 and s.parts and s.meter[0] >= 1
        for i in (0, bar, bar + 1):
            notes, _ = s.make_bar(i)
            for n in notes:
                assert n.dur > 0 and 0 <= n.pitch <= 127 and 1 <= n.vel <= 127
                assert i * bpb - 0.1 <= n.start < (i + 1) * bpb
    check()


def test_every_progression_and_groove_in_the_tables_is_valid():
    from engine.compose.harmony import parse_chord
    tables = [G.PROGRESSIONS, G.JAZZ, G.BOSSA, G.BLUES, G.SOUL, G.CLASSICAL, G.AMBIENT, G.EDM] + \
        [g.progressions for g in G.GENRES.values()]
    for table in tables:
        for fam, progs in table.items():
            assert fam in G.MODES
            for prog in progs:
                assert len(prog.split()) in (4, 8)
                for tok in prog.split():
                    for sym in tok.split("-"):
                        c = parse_chord(sym, 0, G.MODES[fam])
                        assert 0 <= c.root < 12 and c.intervals[0] == 0
    for g in list(G.GENRES.values()):
        for groove in g.grooves:                # a groove is written for one bar length (a meter)
            bar = min(len(p) for p in groove.values())
            for lane, pat in groove.items():
                assert lane.rstrip("+") in G.LANES, (g.name, lane)
                assert set(pat) <= set(".oxX?rt"), (g.name, lane)
                assert len(pat) % bar == 0, (g.name, lane)
        for pat in g.bass_pats:
            assert set(pat) <= set("R5l837 62Ag-.") and pat[0] != "-", (g.name, pat)
        for pat in g.comp_pats:
            assert set(pat) <= set("xXosSutb-.") and pat[0] != "-", (g.name, pat)
        steps = g.meter[0] * 16 // g.meter[1]
        assert any(len(p) % steps == 0 for p in g.bass_pats) or not g.bass_pats, g.name
        assert any(len(p) % steps == 0 for p in g.comp_pats) or not g.comp_pats, g.name


@pytest.mark.parametrize("prompt", ["solo flute, peaceful", "just a violin", "solo sax at 70 bpm",
                                    "solo piano", "cello solo, sad"])
def test_a_solo_instrument_is_never_silent_for_a_whole_bar(prompt):
    """A prompt that names one melody instrument sounds from its first bar on, in every section
    (the intro once dropped the lead, and a solo flute started with 8 silent bars)."""
    s = compose(prompt, 0)
    silent = [i for i in range(80) if not s.bar(i)[0]]
    assert not silent, f"{prompt!r}: silent bars {silent[:8]}"


@pytest.mark.parametrize("prompt,style", [("Forró pé de serra", "forro"), ("norteño polka", "polka"),
                                          ("reggaetón", "reggaeton"), ("karşılama in 9/8", "karsilama"),
                                          ("funk carioca, tamborzão", "reggaeton"), ("a Händel suite", "baroque")])
def test_accents_are_read_as_plain_letters(prompt, style):
    """A word typed with its accents or without them is one word: "forró" and "forro", "cajón"
    and "cajon" (the prompt is folded to plain letters, the tables too)."""
    assert read_prompt(prompt).genre == style, read_prompt(prompt).genre_why
    assert read_prompt(prompt.replace("ó", "o")).genre == style
    assert "cajon" in read_prompt("rumba with a cajón").drum_words
    assert "cajon" in read_prompt("rumba with a cajon").drum_words
    assert G.fold("Čoček ÉTUDE for cuíca") == "cocek etude for cuica"


def test_the_guira_is_merengues_scraper_however_it_is_typed():
    """The güira (a metal scraper) plays merengue's figure on its own lane (GM cabasa), typed with
    its accent or without — not a gourd güiro's sixteenths."""
    for prompt in ("merengue with güira and tambora", "merengue with guira and tambora"):
        c = composer_of(compose(prompt, 0))
        assert "guira" in c.groove and G.LANES["guira"] == 69 and "guiro" not in c.groove, c.groove


def test_the_tables_words_are_written_plain():
    """The prompt is read folded (no accents), so a table word or style name with an accent could
    never be matched: every one is written in plain letters."""
    accented = [w for table in (G.INSTRUMENTS, G.DRUM_WORDS, G.MODE_ALIASES) for w in table if G.fold(w) != w]
    accented += [a for g in G.GENRES.values() for a in g.aliases if G.fold(a) != a]
    assert not accented, accented


@pytest.mark.parametrize("prompt,instrument,drum", [
    ("yung lean / clams casino vibe", None, None),          # a name, not "claps"
    ("like carlos vives, with accordion", "accordion", None),   # not the vibraphone
    ("808 kick and clapz", None, "claps"),                  # z for a plural's s: a typo
    ("a salsa with congs", None, "conga"),                  # a neighbouring key
])
def test_a_short_word_one_letter_off_is_read_only_as_a_slip_of_the_finger(prompt, instrument, drum):
    sp = read_prompt(prompt)
    assert "vibes" not in sp.instruments and (instrument is None or instrument in sp.instruments), sp.instruments
    assert (drum in sp.drum_words) if drum else "claps" not in sp.drum_words, sp.drum_words


def test_a_303_line_is_an_acid_bassline_not_the_tune():
    s = compose("acid house with a squelchy 303 line", 0)
    acid = [p for p in s.parts if p.name == "303"]
    assert acid and acid[0].role == "arp" and acid[0].program == 87, s.describe()
    assert "303" not in read_prompt("acid house with a squelchy 303 line").as_lead


def test_a_named_drum_the_style_plays_keeps_the_styles_figure():
    """A forró's triangle named is the forró's triangle (sixteenths, open on the and), not the
    word's generic quarters; a word denser than the style's lane ("hats") still adds its hits."""
    def lane(prompt, name):
        c = composer_of(compose(prompt, 0))
        return c.groove.get(name)
    assert lane("forró with zabumba and triangle", "triangle_mute") == lane("forró", "triangle_mute")
    assert lane("pop song with hats", "chat").count("x") + lane("pop song with hats", "chat").count("o") >= 16


@pytest.mark.parametrize("prompt", ["polka", "country two-step", "calypso", "bossa nova", "jazz trio"])
def test_over_the_home_chord_the_bass_fifth_is_lighter_than_its_root(prompt):
    """A root–fifth bass that gives the fifth the root's weight puts the key a fifth up (set C's
    kompa in A and set D's forró in Ab were heard in the dominant): over the home chord the fifth
    is the lighter note."""
    from engine.compose.composer import composer_of as comp

    roots, fifths = [], []
    for seed in range(3):
        s = compose(prompt, seed)
        c = comp(s)
        bass = {k for k, p in enumerate(s.parts) if p.role == "bass"}
        home = s.key_root % 12
        for i in range(2, 26):
            k, b = divmod(i + c.offset, 8)
            chords = c.section(k).chords[b]
            for n in s.bar(i)[0]:
                if n.part not in bass:
                    continue
                t = n.start - i * s.beats_per_bar
                ch = next((ch for a, e, ch in chords if a - 0.1 <= t < e), chords[-1][2])
                if ch.root % 12 != home:
                    continue
                (roots if (n.pitch - home) % 12 == 0 else fifths if (n.pitch - home) % 12 == 7 else []).append(n.vel)
    assert roots and fifths, prompt
    assert np.mean(fifths) <= 0.85 * np.mean(roots), (prompt, np.mean(fifths), np.mean(roots))


@pytest.mark.parametrize("prompt,key,mode", [
    ("tango en La menor", 9, "minor"), ("forró em Ré maior", 2, "major"), ("chanson en ré majeur", 2, "major"),
    ("valse en si bémol mineur", 10, "minor"), ("ballata in Do maggiore", 0, "major"),
    ("salsa en mib menor", 3, "minor"), ("fa# menor bolero", 6, "minor"),
    ("a fugue in fis-moll", 6, "minor"), ("Es-Dur hymn", 3, "major"), ("h-moll mass", 11, "minor"),
    ("b-moll nocturne", 10, "minor"), ("in A-Dur", 9, "major"),
])
def test_keys_named_in_solfege_or_in_german(prompt, key, mode):
    """"la menor", "ré majeur", "fis-moll", "h-moll" (B minor), "b-moll" (B flat minor) — and a
    solfège syllable with no mode word is no key ("la bamba", "do it slow")."""
    sp = read_prompt(prompt)
    assert (sp.key_root, sp.mode) == (key, mode), (prompt, sp.key_root, sp.mode)
    assert compose(prompt, 0).key_root == key
    assert read_prompt("la bamba party").key_root is None
    assert read_prompt("do it slow in A minor").key_root == 9


def _tonic_share(progressions) -> float:
    """The share of bars (a bar split "a-b" counts half each) whose chord is built on the tonic."""
    import re as _re
    on = total = 0.0
    for prog in progressions:
        for tok in prog.split():
            halves = tok.split("-")
            for h in halves:
                m = _re.match(r"^(b|#)?(VII|VI|V|IV|III|II|I|vii|vi|v|iv|iii|ii|i)(?![IVXiv])", h)
                total += 1 / len(halves)
                on += (m is not None and not m.group(1) and m.group(2) in ("i", "I") and "/" not in h) / len(halves)
    return on / total


def test_a_modal_vamp_lives_on_its_tonic():
    """Dorian and mixolydian are heard by their tonic: a vamp that gave the dorian IV7 (the parent
    major's V7) half of every phrase was heard in the parent major (a funk in Ab dorian as Db major,
    sets A, D, E, H, I). Every style's dorian and mixolydian progressions spend at least half their
    bars on the tonic chord."""
    tables = [("default", G.PROGRESSIONS), ("blues", G.BLUES)] + [(n, g.progressions) for n, g in G.GENRES.items()]
    for name, table in tables:
        for mode in ("dorian", "mixolydian"):
            if table.get(mode):
                assert _tonic_share(table[mode]) >= 0.5, (name, mode, table[mode])


# --- media briefs (set N): a scene is no style, meters said as counts, words after the list ---------------

@pytest.mark.parametrize("prompt,genre", [
    ("Tavern scene for a fantasy game. Celtic jig in 6/8, 116 bpm to the dotted quarter", "celtic"),
    ("Horror game, flooded cellar level. Doom metal crawl at 58 bpm", "doom"),
    ("Match highlights edit for a football club's TikTok. UK drill, 142 bpm", "drill"),
    ("Reveal trailer for a mech-combat game. Djent / prog metal in 7, 150 bpm", "metal"),
    ("Pirate ship deck scene. Rowdy sea shanty, concertina", "sea shanty"),
    ("Beer festival TV ad. Oom-pah polka, allegro, accordion, tuba", "polka"),
    ("carnival season, power soca at 158", "soca"),
    # a scene alone still names its style
    ("horror soundtrack, creeping strings", "cinematic"), ("tavern music for a fantasy inn", "sea shanty"),
    ("an oom-pah band", "marching band"),
])
def test_a_scene_gives_way_to_the_style_its_brief_names(prompt, genre):
    assert compose(prompt, 1).genre == genre


@pytest.mark.parametrize("prompt,meter", [
    ("Town theme for a cozy RPG. In 3, about 96 bpm, F major.", (3, 4)),
    ("Bluegrass breakdown in a fast 2, around 140, in A.", (2, 4)),
    ("Valse musette à trois temps, tempo vif", (3, 4)),
    ("a march in two, brass band", (2, 4)),
    ("lofi beat, split in 3 parts", (4, 4)), ("ambient, done in 2 minutes", (4, 4)), ("rock in two parts", (4, 4)),
])
def test_a_meter_said_as_a_count_of_beats(prompt, meter):
    assert compose(prompt, 1).meter == meter


def test_words_said_no_to_after_the_list_and_keys_in_solfege_with_english_modes():
    """Turkish and Hindi put "without" after what they leave out ("synth ve bateri yok", "synth
    bilkul nahi"); Turkish names a key "Mi minör"; "roman havası" is the Thracian Roma's 9/8 karşılama."""
    s = compose("İstanbul'da bir düğün sahnesi: 9/8 roman havası, 138 BPM, Mi minör. Klarnet solo önde, "
                "keman cevap versin, darbuka ve def ritmi tutsun. Synth ve bateri yok.", 1)
    assert s.genre == "karsilama" and s.meter == (9, 8) and (s.key_root, s.mode) == (4, "minor")
    progs = {p.program for p in s.parts}
    assert {71, 40} <= progs and not progs & set(range(80, 104))
    kit = [p for p in s.parts if p.is_drums]
    notes = [n.pitch for i in range(4, 12) for n in s.bar(i)[0] if kit and n.part == s.parts.index(kit[0])]
    assert notes and not {35, 36, 38, 40} & set(notes)          # the darbuka plays, no kit
    s = compose("Sangeet scene ke liye ek Bollywood dance number, 100 BPM. Dhol aur tabla heavy rakho, "
                "shehnai pe hook, harmonium chords. Synth bilkul nahi, ekdum desi feel chahiye.", 1)
    assert not {p.program for p in s.parts} & set(range(80, 104)) and 111 in {p.program for p in s.parts}
    assert read_prompt("we do major chords").key_root is None          # English stays English


def test_a_japanese_brief_in_katakana():
    s = compose("深夜ドライブ系YouTubeチャンネルのオープニング曲。80年代シティポップ風、BPM112、キーはEメジャー。"
                "エレピ、チョッパーベース、カッティングギター、ブラスのキメ、シンセストリングス。ボーカルなし、サックスソロも不要です。", 1)
    progs = {p.program for p in s.parts}
    assert s.genre == "pop" and s.bpm == 112 and (s.key_root, s.mode) == (4, "major")
    assert {4, 36, 28, 61, 50} <= progs and not progs & {52, 53, 54, 85}, s.describe()


@pytest.mark.parametrize("prompt,absent,present", [
    ("rock anthem, no guitar solo", set(), {29, 30, 27, 25}),         # the guitar stays: only its solo goes
    ("string quartet, no violin solo", set(), {40}), ("klezmer, no clarinet solo", set(), {71}),
    ("Classic cumbia. Accordion on the melody, congas. Keep it light under the voice-over.", {52, 53, 54, 85}, {21}),
    ("K-drama OST ballad, 6/8, piano, strings. Leave space for the vocal. No drums.", {52, 53, 54, 85}, {0}),
    ("Hybrid orchestral trailer, low strings, French horns. No choir, vocals get added in the mix later.",
     {52, 53, 54, 85}, {42, 60}),
    ("Liquid drum and bass, 174 bpm. Reese bass, airy pads. Avoid vocal-like leads.", {52, 53, 54, 85}, {39}),
    ("Acid House, 124 BPM, a-Moll. Piano-Stabs. Bitte keine Vocals und keine Gitarre.",
     set(range(24, 32)) | {52, 53, 54, 85}, {0}),
    ("Oud and qanun over low strings, darbuka and riq. No Western drum kit, no synth pads. maqam", set(range(88, 96)), {42}),
])
def test_what_a_brief_leaves_out_is_left_out_and_what_it_names_plays(prompt, absent, present):
    for seed in (0, 1):
        progs = {p.program for p in compose(prompt, seed).parts if not p.is_drums}
        assert not progs & absent and (not present or progs & present), (prompt, seed, progs)


def test_a_brief_s_own_words_are_not_misread():
    """"Clarinet lead" is the clarinet's tune (no synth lead beside it); "avoid vocal-like leads" keeps a
    lead; a Spanish "clase" is no clave; a "bell pattern" is the agogo's timeline, not tubular bells;
    "Juno pads" one pad; a style's own "low strings" named is that part, not a second one."""
    s = compose("Klezmer freylekhs. Clarinet lead with all the krekhts, violin, cimbalom, accordion, tuba.", 1)
    assert 71 in {p.program for p in s.parts} and not any(p.role == "lead" and p.program == 81 for p in s.parts)
    assert any(p.role == "lead" for p in compose("Liquid drum and bass. Avoid vocal-like leads.", 1).parts)
    assert "clave" not in read_prompt("Música para el calentamiento de una clase de tango.").drum_words
    spec = read_prompt("Ghanaian highlife: two clean guitars, a bell pattern, light shakers")
    assert "bell pattern" in spec.drum_words and "bell" not in spec.instruments
    s = compose("Synthwave / outrun, 118 bpm, Juno pads, a saw lead", 1)
    assert sum(p.role == "pad" for p in s.parts) == 1
    s = compose("Hybrid orchestral trailer: low strings ostinato, French horns carrying the theme, taiko hits", 1)
    assert sum(p.name == "low strings" for p in s.parts) == 1


@pytest.mark.parametrize("prompt,keys", [("salsa, no drum kit, just congas and bongos", {62, 63, 64, 60, 61}),
                                         ("Arabic maqam score. Oud, darbuka and riq. No Western drum kit", {60, 64}),
                                         ("a roman havasi in 9/8 with darbuka, no drums", {60, 64})])
def test_hand_percussion_named_plays_when_the_kit_is_said_no_to(prompt, keys):
    """"No drum kit, just congas": the percussionist plays what is named and the kit stays out —
    the kit said no to used to silence the congas too."""
    s = compose(prompt, 1)
    kit = [k for k, p in enumerate(s.parts) if p.is_drums]
    played = {n.pitch for i in range(4, 12) for n in s.bar(i)[0] if kit and n.part == kit[0]}
    assert played & keys and not played & {35, 36, 38, 40, 42, 44, 46, 49, 51}, played
    assert not any(p.is_drums for p in compose("lofi, no drums", 1).parts)


@pytest.mark.parametrize("prompt,want", [
    # a scene keeps its style against a style said no to or one that colours an instrument
    ("epic boss battle music, NOT metal, orchestral with choir", "cinematic"),
    ("horror score, think strings, not synthwave", "cinematic"),
    ("an adventure game overworld theme, not chiptune, full orchestra", "cinematic"),
    ("epic trailer with a gospel choir", "cinematic"), ("horror trailer with a jazz trumpet", "cinematic"),
    ("epic trailer with rock drums and strings", "cinematic"),
    ("epic trailer music with industrial percussion and braams", "cinematic"),
    ("meditation music with a soul-soothing bamboo flute", "ambient"),
    ("club track with a funky bassline", "house"), ("horror trailer, trap beat, 140", "trap"),
    # "hawaiian" and "hula" name a style only alone
    ("hawaiian reggae (jawaiian) with ukulele, offbeat skank", "reggae"), ("Hawaiian shirt summer pop song", "pop"),
    ("a hula hoop workout track, high energy EDM", "house"),
])
def test_a_brief_s_style_is_not_taken_by_a_word_that_only_colours_it(prompt, want):
    assert compose(prompt, 1).genre == want


@pytest.mark.parametrize("prompt,role,programs", [
    ("rock song, avoid too much reverb on the drums", "drums", None),
    ("rock song, avoid muddy bass", "bass", None), ("pop, avoid the bass clashing with the kick", "bass", None),
    ("soul, vocals are added in the second verse", None, {52, 53, 54, 85}),
    ("rap vocals come on top of a boom bap beat", "drums", None),
    ("a whispered female voice over lush pads, ambient", None, {52, 53, 54, 85}),
    ("rock ballad, no guitar solo", None, set(range(24, 32))),
])
def test_a_wish_about_a_part_or_a_voice_described_keeps_it(prompt, role, programs):
    """"avoid muddy bass" is a wish about the bass, not "no bass"; vocals that come in later in the
    song, or a voice over pads, are parts of it."""
    s = compose(prompt, 1)
    if role:
        assert any(p.role == role for p in s.parts), s.describe()
    if programs:
        assert {p.program for p in s.parts} & programs, s.describe()


def test_numbers_and_counts_that_are_no_tempo_or_meter_and_words_that_only_say_like():
    s = compose("trap beat 140 bpm 808 bass", 1)
    assert s.bpm == 140 and any(p.program == 38 for p in s.parts)
    for prompt in ("the drop hits in 2:30, house", "count-in 3, 2, 1 then the drop, EDM",
                   "jazz, verse in 4, chorus in 3", "the arrangement splits in two, first half piano, pop"):
        assert compose(prompt, 1).meter == (4, 4), prompt
    s = compose("piano ballad, no drums, a shaker-like texture from the synth", 1)
    assert not any(p.is_drums for p in s.parts)
    assert "supersaw lead" not in read_prompt("trance, avoid cheesy supersaw leads").instruments


def test_more_languages_said_no_and_keys():
    assert (read_prompt("La minör'de hüzünlü bir şarkı").key_root, read_prompt("La minör'de").mode) == (9, "minor")
    assert read_prompt("Si bemol minör, arabesk").key_root == 10
    assert "drums" in read_prompt("Davul yok, klarnet solo").no_roles
    assert {52, 53} <= read_prompt("vokal olmasın, pop").no_programs
    assert {52, 53} <= read_prompt("mujhe vocals nahi chahiye, lofi").no_programs
    spec = read_prompt("木琴のマーチ")
    assert "xylophone" in spec.instruments and "koto" not in spec.instruments
    assert read_prompt("ドラムンベース、キーボード").genre == "drum and bass"
    s = compose("ロックバラード ギターソロなし", 1)
    assert s.genre != "folk" and any(p.program in range(24, 32) for p in s.parts), s.describe()


# --- fusions and producers' words (set O) ---------------------------------------------------------

@pytest.mark.parametrize("prompt,genre", [
    ("folk metal in the Eluveitie mould: fiddle and bagpipes over palm-muted guitars, no blast beats", "metal"),
    ("jazz-hop beat ~86, swung 16ths on the hats, dusty Rhodes", "lofi"),
    ("trap soul, Bryson Tiller type beat. 68 bpm, 808s with long glides", "r&b"),
    ("orchestral dubstep, 140 half-time. huge string ostinato, French horns, wobble bass drop", "dubstep"),
    ("baroque pop in waltz time, harpsichord, string quartet", "pop"),
    ("psychedelic cumbia / chicha: surf guitar lead, Farfisa organ", "cumbia"),
    ("pianoforte neoclassico alla Ólafur Arnalds, in 3/4, 70 bpm, niente batteria", "classical"),
    ("감성 K-pop 발라드, 6/8, 68 BPM, 키는 Eb. 피아노랑 스트링 위주로, 일렉기타는 빼주세요", "pop"),
    ("psychedelic rock jam", "rock"),
])
def test_a_fusion_is_read_as_the_style_that_carries_its_groove(prompt, genre):
    assert compose(prompt, 1).genre == genre


def test_producers_words_in_fusion_briefs():
    """A bare tempo before a chord-name key ("afro house 122 Am,"); a kind of beat said no to is that
    groove, not the drums ("no blast beats"); palm-muted guitars in metal are distorted; a string
    ostinato plays strings; "sem metais", "niente batteria", Korean "빼주세요" leave out."""
    assert (read_prompt("afro house 122 Am, congas + shaker").key_root, read_prompt("afro house 122 Am, x").mode) \
        == (9, "minor")
    assert read_prompt("techno -1 db, chords").key_root is None
    s = compose("folk metal: fiddle and bagpipes over palm-muted guitars, no blast beats", 1)
    assert any(p.is_drums for p in s.parts) and 30 in {p.program for p in s.parts if p.role == "chords"}
    assert "drums" in read_prompt("ambient, no beats").no_roles
    s = compose("orchestral dubstep, 140 half-time. huge string ostinato, French horns on the theme", 1)
    assert 48 in {p.program for p in s.parts}
    s = compose("samba-rock estilo Jorge Ben Jor: violão, órgão Hammond, cuíca, pandeiro, sem metais", 1)
    assert not {p.program for p in s.parts} & set(range(56, 64))
    assert not any(p.is_drums for p in compose("pianoforte neoclassico, pad morbidi, archi, niente batteria", 1).parts)
    s = compose("감성 K-pop 발라드, 6/8, 68 BPM, 키는 Eb. 피아노랑 스트링 위주로, 일렉기타는 빼주세요", 1)
    progs = {p.program for p in s.parts}
    assert s.key_root == 3 and s.meter == (6, 8) and 0 in progs and not progs & set(range(26, 32))
    assert "breakbeat" not in read_prompt("nu-disco façon Todd Terje / Breakbot, 118 BPM").drum_words


@pytest.mark.parametrize("prompt,genre,absent,present", [
    # Korean: 록 only as a word, 기타 as "other"/"etc." is no guitar, lists and 없음 leave out
    ("잠들 수 있도록 잔잔한 피아노 음악", None, set(range(24, 32)), {0}),
    ("기타 요청사항: 보컬 없이, 피아노", None, set(range(24, 32)) | {52, 53, 54, 85}, {0}),
    ("피아노, 첼로, 기타 등 어쿠스틱 악기", None, set(range(24, 32)), {0, 42}),
    ("보컬 없음, 피아노 발라드", None, {52, 53, 54, 85}, {0}),
    ("드럼과 베이스는 빼주세요, 피아노", None, set(range(32, 40)), {0}),
    ("일렉기타는 빼주세요, 록 음악", "rock", set(range(26, 32)), set()),
    ("다장조 피아노", None, set(), {0}),
    # psychedelic stays psychedelic rock unless a fusion is named
    ("psychedelic, trippy, not country", "rock", set(), set()),
    ("psychedelic guitar jam, jazz drums, fuzz", "rock", set(), set()),
    # neoclassical is classical (a piano named stays)
    ("neoclassical piano, sad, rainy", "classical", set(), {0}),
    ("modern classical string quartet, dissonant", "classical", set(), {40, 42}),
    ("quartetto d'archi e pianoforte", "classical", {48}, {0, 40}),
    ("metal ballad with clean muted guitar intro", "metal", set(), {28}),
])
def test_fusion_round_words_do_not_overreach(prompt, genre, absent, present):
    s = compose(prompt, 1)
    progs = {p.program for p in s.parts if not p.is_drums}
    assert (genre is None or s.genre == genre) and not progs & absent and present <= progs, (s.genre, progs)


def test_grooves_and_numbers_said_no_to_stay_narrow():
    assert "drums" in read_prompt("piano ballad no drums big strings").no_roles
    assert not any(p.is_drums for p in compose("no trap drums, just piano", 1).parts)
    assert "drums" not in read_prompt("no 4 on the floor beat, house").no_roles
    assert read_prompt("radio jingle for 98 FM, upbeat pop").key_root is None
    assert read_prompt("house track, bar 64 Am, bar 65 F").key_root is None
    assert read_prompt("가단조, 첼로").key_root == 9 and read_prompt("가단조, 첼로").mode == "minor"


def test_an_ensemble_and_a_talking_drum_named_in_another_style_play():
    """"baroque pop … harpsichord, string quartet": the quartet plays its strings in the pop band
    (a string quartet alone is still the classical quartet); a talking drum plays its toms."""
    s = compose("baroque pop in waltz time, harpsichord, string quartet, oboe counter-melody", 1)
    assert s.genre == "pop" and {6, 48, 68} <= {p.program for p in s.parts}
    assert compose("string quartet in D minor", 1).genre == "classical"
    s = compose("afro-dancehall riddim, plucky marimba lead, rimshots, shaker, talking drum fills", 1)
    kit = next(k for k, p in enumerate(s.parts) if p.is_drums)
    assert {n.pitch for i in range(2, 10) for n in s.bar(i)[0] if n.part == kit} & {48, 50, 47}


# --- set P's readings ------------------------------------------------------------------------------

@pytest.mark.parametrize("prompt,genre", [
    ("acid jazz groove a la Jamiroquai, slap bass, clavinet, congas, 112bpm", "funk"),
    ("glitch idm in the vein of Autechre, skittering beats, music box melody, 95 bpm", "electro"),
    ("classic honky tonk shuffle, crying pedal steel, telecaster, barroom piano", "country"),
    # a feel after a style word that is no shared dance stays that style's
    ("texas shuffle in E, strat", "blues shuffle"),
    ("shuffle in A with harmonica", "blues shuffle"),
])
def test_set_p_style_words(prompt, genre):
    assert compose(prompt, 1).genre == genre


def test_set_p_instrument_words():
    """A piano accordion is one accordion; a doubled letter is a slip ("guitarrs" are guitars, not a
    nylon guitarra); a flatpicked guitar in bluegrass is its guitar while the mandolin is named too;
    a clean lead in metal a clean electric guitar; a makam named is its mode."""
    progs = [p.program for p in compose("zydeco two-step, piano accordion and rubboard, fiddle", 1).parts if not p.is_drums]
    assert 21 in progs and 0 not in progs
    spec = read_prompt("shoegaze, wall of fuzzy guitarrs, dreamy vocals")
    assert "guitars" in spec.instruments and "guitarra" not in spec.instruments
    s = compose("shoegaze in a slow 6/8 sway, wall of fuzzy guitarrs", 1)
    assert 24 not in {p.program for p in s.parts} and {29, 30} & {p.program for p in s.parts}
    s = compose("bluegrass breakdown in A, banjo rolls, flatpicked guitar, fiddle, mandolin chop, upright bass", 1)
    names = [p.name for p in s.parts]
    assert names.count("mandolin") == 1 and "guitar" in names, names
    s = compose("djent riff in 5/4, palm-muted chugs, atmospheric clean lead on top, 130 bpm", 1)
    assert 27 in {p.program for p in s.parts if p.role == "lead"}
    assert read_prompt("Turkish karsilama in 9/8, oud and clarinet, Hicaz makam").mode == "freygish"
    assert read_prompt("longa in nahawand, oud").mode == "minor"


def test_a_gentle_film_cue_has_no_war_drums():
    """"whimsical … film score waltz … gentle": piano, celesta, oboe and pizzicato strings, no kit,
    taiko or timpani; an epic cue keeps them, and a gentle one keeps a taiko it names."""
    gentle = compose("whimsical Ghibli-esque film score waltz, solo piano + celesta + oboe, pizzicato strings, "
                     "F major, gentle tempo", 1)
    progs = {p.program for p in gentle.parts}
    assert not any(p.is_drums for p in gentle.parts) and not progs & {116, 47} and {0, 8, 68, 45} <= progs
    # the waltz's piano plays its oom-pah-pah on the three beats, not even eighths (heard as 6/8)
    piano = next(i for i, p in enumerate(gentle.parts) if p.program == 0)
    bpb = gentle.beats_per_bar
    offs = [n.start - b * bpb for b in range(2, 10) for n in gentle.bar(b)[0] if n.part == piano]
    assert {round(x) for x in offs} == {0, 1, 2} and all(abs(x - round(x)) < 0.1 for x in offs), offs
    epic = compose("epic trailer cue, hybrid orchestra, taiko hits, C minor", 1)
    assert 116 in {p.program for p in epic.parts}
    named = compose("gentle film score, soft taiko pulse, strings", 1)
    assert 116 in {p.program for p in named.parts}


@pytest.mark.parametrize("prompt", ["oriental metal, distorted guitars doubling a hijaz riff, 10/8",
                                    "arabic trap beat, 145, oud playing hijaz phrases, darbuka",
                                    "Turkish karsilama in 9/8, oud and clarinet, Hicaz makam"])
def test_a_hijaz_asked_for_is_played(prompt):
    """The mode a prompt asks for is the one its notes are in, in a style that has no progressions
    of its own for it (metal, trap): the flat second and the major third, never the minor third."""
    s = compose(prompt, 1)
    assert s.mode == "freygish"
    degrees = {(n.pitch - s.key_root) % 12 for b in range(16) for n in s.bar(b)[0] if not s.parts[n.part].is_drums}
    assert {1, 4} <= degrees and 3 not in degrees and 2 not in degrees, sorted(degrees)


@pytest.mark.parametrize("prompt,meter", [
    ("a baroque harpsichord minuet in G major", (3, 4)),
    ("baroque chaconne in D minor, solo violin", (3, 4)),
    ("passacaglia for organ", (3, 4)),
    ("bach style gigue for harpsichord", (6, 8)),
    ("baroque allemande for harpsichord", (4, 4)),
])
def test_a_suites_dance_named_beside_another_style_word_keeps_its_meter(prompt, meter):
    """"a baroque … minuet": the style word comes first, the dance still says the meter."""
    assert compose(prompt, 1).meter == meter


def test_balafon_and_metallophones_play_mallets():
    progs = {p.program for p in compose("west african kora and balafon, gentle, 100 bpm", 1).parts}
    assert {46, 12} <= progs
    assert 11 in {p.program for p in compose("balinese gamelan, metallophones and gongs, slow", 1).parts}


@pytest.mark.parametrize("prompt,genre,progs", [
    ("garage punk, 3 chords, fast, snotty", "punk", set()),
    ("canción de cuna con guitarra, muy suave", "lullaby", set()),
    ("ninna nanna con pianoforte", "lullaby", {0}),
    ("musique de film triste, piano et violoncelle, lent", "cinematic", {0, 42}),
    ("Colonna sonora malinconica, pianoforte e violoncello", "cinematic", {0, 42}),
    ("Walzer für Streichquartett in D-Dur", "waltz", {40, 41, 42}),  # the quartet's players, in the waltz
])
def test_words_of_the_probes_after_set_p(prompt, genre, progs):
    s = compose(prompt, 1)
    assert s.genre == genre and progs <= {p.program for p in s.parts if not p.is_drums}, s.describe()
    if "Walzer" in prompt:
        assert s.meter == (3, 4)


# --- the review of set P's round, and set Q's readings ------------------------------------------------

@pytest.mark.parametrize("prompt,genre", [
    # a texture word yields to the style named with it; alone it is IDM (electro)
    ("glitch effects on a lofi beat, rhodes, vinyl", "lofi"),
    ("cyberpunk glitch synthwave, neon", "synthwave"),
    ("trailer music with glitch hits, braams", "cinematic"),
    ("Aphex Twin Selected Ambient Works vibe, soft pads, no drums", "ambient"),
    ("idm", "electro"),
    # a style said no to gives way
    ("glitch-free, polished pop production with piano", "pop"),
    ("not idm, a warm deep house groove", "deep house"),
    ("not acid jazz, a straight bebop quartet", "bebop"),
    ("incognito mode lofi beat to study to", "lofi"),
    # a shuffle is honky tonk's only after honky tonk (not after a ballad, nor one said no to)
    ("love ballad, texas shuffle", "blues shuffle"),
    ("not honky tonk, a texas shuffle with a stratocaster", "blues shuffle"),
    ("piano accordion and double bass", "polka"),
    # set Q
    ("somthing like take five, alto sax n piano, chill", "cool jazz"),
    ("Musique mandingue de griot, 6/8 doux, kora et balafon, djembé discret, en Fa majeur, sans basse", "mande"),
    ("chinese guzheng and erhu duet, pentatonic, slow, like a wuxia drama opening, no drums", "cinematic"),
])
def test_review_and_set_q_style_words(prompt, genre):
    assert compose(prompt, 1).genre == genre


def test_review_and_set_q_parts():
    progs = lambda s: {p.program for p in s.parts if not p.is_drums}
    drums = lambda s: any(p.is_drums for p in s.parts)
    assert 27 not in progs(compose("synth pop with clean lead vocals and a drum machine", 1))
    assert 27 not in progs(compose("trance with a clean lead synth", 1))
    assert 27 in progs(compose("djent riff, atmospheric clean lead on top", 1))
    for p in ("calm orchestral underscore with drums", "soft and gentle trailer music that builds to a massive climax"):
        assert drums(compose(p, 1)), p
    for p in ("cinematic piano, not a waltz, in 4/4", "epic orchestral, piano, definitely not a waltz"):
        assert compose(p, 1).meter == (4, 4), p
    # set Q: a walking bass "in 2" is its feel; "pas de batterie", "senza percussioni"; a ride's
    # bell is no tubular bell; the cencerro a cowbell; "guitarras" in doom metal its distortion;
    # "no band" leaves the named instruments alone; the piano that "leads the head" no synth lead
    s = compose("Jazz ballad, 64 bpm, Db major. Quartet: piano leads the head, upright bass walks in 2, "
                "brushes on the snare, muted trumpet answers each piano phrase.", 1)
    assert s.meter == (4, 4) and not progs(s) & set(range(80, 88)), s.describe()
    assert not drums(compose("Jazz manouche à 200 bpm, en la mineur, guitare, violon, contrebasse, pas de batterie.", 1))
    s = compose("Colonna sonora malinconica, lento, in Mi minore: pianoforte e violoncello, senza percussioni", 1)
    assert not drums(s) and not progs(s) & {47, 116}
    s = compose("Djent, 130 bpm, F# minor. Palm-muted 8-string guitar, bass doubles the kick, ride bell on quarters.", 1)
    assert 14 not in progs(s)
    assert "cencerro" in read_prompt("salsa dura, congas, timbales y cencerro").drum_words
    assert 24 not in progs(compose("doom metal bem lento e arrastado, guitarras afinadas bem grave, um órgão", 1))
    s = compose("old delta blues on a porch, slide guitar n harmonica, no band just raw", 1)
    assert progs(s) <= set(range(24, 32)) | {22}, s.describe()
    assert compose("Flamenco por bulerías, guitarra flamenca, palmas y cajón", 1).meter == (12, 8)
    assert compose("somthing like take five, alto sax n piano", 1).meter == (5, 4)


def test_mande_is_the_griots_music():
    """Kora (harp) and ngoni (banjo) over the djembe and dundun in a lilting 6/8, a balafon's
    patterns; a named kora and balafon play, "sans basse" leaves out the bass."""
    s = compose("mandinka kora music", 1)
    assert s.genre == "mande" and s.meter == (6, 8) and {46, 12, 105} <= {p.program for p in s.parts}
    assert s.beat == 1.5 and 76 <= s.beat_bpm <= 100
    s = compose("Musique mandingue de griot, 6/8 doux, kora et balafon, djembé discret, en Fa majeur, sans basse", 1)
    assert s.key_root == 5 and not any(p.role == "bass" for p in s.parts)
    for b in range(2, 10):
        assert any(s.parts[n.part].is_drums for n in s.bar(b)[0])


def test_a_slide_guitar_in_rock_is_its_guitar_and_triple_is_no_tiple():
    """"harmonized slide guitars … a triple guitar solo" in southern rock: the style's overdriven
    guitar plays (named), no tiple; a slide guitar in rock is no extra acoustic one."""
    s = compose("southern rock jam like allman brothers, harmonized slide guitars, honky tonk piano, hammond, "
                "long jam that builds into a triple guitar solo", 1)
    assert 29 in {p.program for p in s.parts if p.role == "chords"} and "tiple" not in [p.name for p in s.parts]
    assert 25 not in {p.program for p in compose("southern rock with slide guitar, 110 bpm", 1).parts}


def test_a_duo_alone_has_one_tune_and_one_accompanist():
    """"slide guitar n harmonica, no band": the guitar comps (its bass and chords) under the
    harmonica's tune — not both on the tune in unison, with silence between the phrases."""
    s = compose("old delta blues on a porch, slide guitar n harmonica, foot stomp, no band just raw", 1)
    roles = {(p.name, p.role) for p in s.parts if not p.is_drums}
    assert roles == {("slide guitar", "chords"), ("slide guitar", "bass"), ("harmonica", "lead")}, roles
    guitar = next(i for i, p in enumerate(s.parts) if p.name == "slide guitar" and p.role == "chords")
    bars_with_guitar = sum(any(n.part == guitar for n in s.bar(b)[0]) for b in range(2, 10))
    assert bars_with_guitar == 8


def test_a_turkish_karsilama_is_no_balkan_brass_band():
    """The Thracian karşılama: clarinet, violin, kanun and ud over the darbuka in 9/8 (2+2+2+3) —
    no tuba, accordion or trumpet (the daychovo's brass band); its düm on the bar's first beat."""
    s = compose("Turkish karsilama in 9/8, oud and clarinet trading the melody, darbuka, kanun flourishes, Hicaz makam", 1)
    progs = {p.program for p in s.parts if not p.is_drums}
    assert s.genre == "karsilama" and s.meter == (9, 8) and s.groups == (2, 2, 2, 3) and s.mode == "freygish"
    assert {71, 107, 24} <= progs and not progs & {58, 21, 56}
    drums = next(i for i, p in enumerate(s.parts) if p.is_drums)
    bpb = s.beats_per_bar
    for b in range(2, 10):
        assert any(n.part == drums and n.pitch == 64 and abs(n.start - b * bpb) < 0.1 for n in s.bar(b)[0]), b
    assert compose("daychovo brass band", 1).genre == "daychovo"


@pytest.mark.parametrize("prompt,genre,meter", [
    # the second review: everyday phrases are no style or meter words
    ("take five minutes to relax, ambient pads", "ambient", (4, 4)),
    ("take 5 and relax with some bossa nova", "bossa nova", (4, 4)),
    ("lofi beat to take five to", "lofi", (4, 4)),
    ("corrente elettrica, techno", "techno", (4, 4)),
    ("jazz free form improvisation, ambient textures", "jazz", None),
    ("lofi free flowing beat with jazz chords", "lofi", None),
    # a region's colour or a medium yields to the style named with it
    ("chinese traditional instruments over a lofi hip hop beat", "lofi", None),
    ("wuxia-inspired trap beat", "trap", None),
    ("chinese folk rock with distorted guitar", "rock", None),
    ("banda sonora de tango", "tango", None),
    ("trilha sonora de novela com bossa nova", "bossa nova", None),
    ("griot storytelling over hip hop beat", "boom bap", None),
    ("malian music meets house", "house", None),
    ("mandinka kora music", "mande", (6, 8)),
    ("a love song for barbara", None, None),
    ("quarteto de cordas", "classical", None),
])
def test_second_review_words(prompt, genre, meter):
    s = compose(prompt, 1)
    assert (genre is None or s.genre == genre) and (meter is None or s.meter == meter), s.describe()
    assert s.genre != "mande" or "kora" in prompt


def test_second_review_parts():
    drums_or_war_drums = lambda s: any(p.is_drums or p.program in (47, 116) for p in s.parts)
    for p in ("gentle orchestral piece, no drums", "calm cinematic piano without drums",
              "chinese guzheng and erhu duet, pentatonic, slow, like a wuxia drama opening, no drums",
              "epic orchestral, no drums, strings and choir"):
        assert not drums_or_war_drums(compose(p, 1)), p
    assert any(p.role == "perc" for p in compose("trailer, no drums, big percussion hits", 1).parts)
    progs = {p.program for p in compose("metal with clean lead vocals and harsh screams", 1).parts}
    assert 53 in progs and 81 not in progs
    assert "dunun" not in read_prompt("Trakya karşılaması, düğün havası, klarnet").drum_words
    assert "sangban" not in read_prompt("shangaan electro, frantic 180 bpm").drum_words
    s = compose("a duo for cello and piano", 1)          # (the piano's left hand: its bass)
    assert {(p.program, p.role) for p in s.parts} == {(42, "lead"), (0, "chords"), (0, "bass")}, s.describe()


def test_a_piano_ballad_said_just_piano_is_no_duo():
    """"Just grand piano … strings sneak in … the drums enter at the bridge": the strings stay a pad
    (only a duo's solo instrument — a cello, a sax, a violin — takes the tune beside the piano)."""
    s = compose("Emotional piano ballad, 6/8, 68 bpm, Db major. Just grand piano through the first verse and "
                "chorus, strings sneak in on verse two, the drums only enter at the bridge", 1)
    assert {(p.program, p.role) for p in s.parts if not p.is_drums} == {(0, "chords"), (48, "pad")}, s.describe()


@pytest.mark.parametrize("prompt,want", [
    ("solo cello", {(42, "lead")}),
    # (the accompanist's left hand or thumb plays the bass)
    ("guitar and piano, no band", {(25, "lead"), (0, "chords"), (0, "bass")}),
    ("mandolin and guitar, no band, bluegrass", {(25, "lead"), (25, "chords"), (25, "bass")}),
])
def test_alone_or_in_a_duo_someone_carries_the_tune(prompt, want):
    s = compose(prompt, 1)
    assert {(p.program, p.role) for p in s.parts if not p.is_drums} == want, s.describe()


@pytest.mark.parametrize("prompt,style", [
    ("oud and darbuka", "arabic"), ("a taksim on the ud", "arabic"), ("E hicaz on the oud", "arabic"),
    ("riq and qanun", "arabic"), ("kora and djembe", "mande"), ("sitar and tabla, slow", "raga"),
    ("talking drum groove", "afrobeat"), ("gaida and kaval", "balkan"), ("bodhran and uilleann pipes", "celtic"),
    ("surdo and cuica", "samba"), ("solo acoustic guitar", "folk"), ("acoustic guitar and 808s", "trap"),
    ("metal riff with an oud", "metal"), ("sitar over a house beat", "house"),
])
def test_a_folk_instrument_or_a_makam_names_its_music_when_no_style_is_named(prompt, style):
    """An oud, a kora, a sitar, a darbuka or a makam's name alone says where the music is from (an
    oud solo had been a house track, a taksim rock); a style named beside them still wins, and an
    acoustic guitar names folk only where no drum word names another style."""
    assert compose(prompt, 1).genre == style


@pytest.mark.parametrize("prompt,root,mode", [
    ("D hijaz, 90 bpm", 2, "freygish"), ("E hicaz on the oud", 4, "freygish"), ("maqam hijaz on D", 2, "freygish"),
    ("hijaz on A, oud", 9, "freygish"), ("bayati on Eb", 3, "phrygian"), ("dorian on a, funk", 9, "dorian"),
    ("a hijaz riff, metal", None, "freygish"), ("hijaz on a kanun", None, "freygish"),
])
def test_a_note_beside_a_makam_is_its_tonic(prompt, root, mode):
    """"D hijaz", "hijaz on D": the tonic; "a hijaz riff" and "hijaz on a kanun" name none."""
    spec = read_prompt(prompt)
    assert (spec.key_root, spec.mode) == (root, mode)


@pytest.mark.parametrize("prompt,programs", [
    ("solo acoustic guitar", {25}), ("bossa nova, solo nylon guitar", {24}), ("solo piano, jazz ballad", {0}),
    ("flamenco guitar alone", {24}), ("jazz ballad for solo guitar", {26}), ("just a ukulele", {24}),
    ("upright bass and piano, no band", {32, 0}), ("organ only", {16}),
])
def test_an_instrument_alone_plays_its_own_tune_over_its_own_chords(prompt, programs):
    """A guitarist, pianist or organist alone carries the tune over their own chords (and, alone,
    their own bass) — it had strummed or comped chords for 30 s with no tune. The tune sits
    above the chords and keeps going."""
    s = compose(prompt, 1)
    assert {p.program for p in s.parts} == programs and not any(p.is_drums for p in s.parts), s.describe()
    lead = [k for k, p in enumerate(s.parts) if p.role == "lead"]
    comp = [k for k, p in enumerate(s.parts) if p.role in ("chords", "arp", "pad")]
    assert len(lead) == 1 and comp, s.describe()
    notes = [(i, n) for i in range(16) for n in s.bar(i)[0]]
    tune = [n for _, n in notes if n.part == lead[0]]
    under = [n for _, n in notes if n.part in comp]
    assert len({i for i, n in notes if n.part == lead[0]}) >= 8, s.describe()
    assert sorted(n.pitch for n in tune)[len(tune) // 2] > sorted(n.pitch for n in under)[len(under) // 2]


@pytest.mark.parametrize("prompt", ["solo sax over a funk band", "a solo piano intro then the band, jazz",
                                    "jazz ballad, solo piano, brushes", "a jazz ballad with a piano solo"])
def test_a_solo_in_a_band_keeps_the_band(prompt):
    assert any(p.is_drums for p in compose(prompt, 1).parts)


@pytest.mark.parametrize("prompt,meter", [
    ("Jump blues in twelve-eight at 120, in B-flat", (12, 8)), ("a girl-group ballad in a slow twelve-eight", (12, 8)),
    ("pirate metal, galloping compound duple", (6, 8)), ("a nine-eight dance", (9, 8)), ("song in three four", (3, 4)),
    ("simple triple, stately", (3, 4)), ("five four-bar phrases", None), ("six eight-bar phrases", None),
])
def test_a_meter_in_words_is_that_meter(prompt, meter):
    """"Twelve-eight", "compound duple", "nine-eight": the meter (a jump blues in twelve-eight had
    been a 4/4 shuffle) — not "five four-bar phrases"."""
    assert read_prompt(prompt).meter == meter


@pytest.mark.parametrize("prompt,bpm", [
    ("galloping compound duple at about 180: accordion lead", 180.0), ("Persian reng, lively, around 132: santur", 132.0),
    ("house at roughly 124", 124.0), ("the drop at 2:30 is big", None),
])
def test_a_tempo_said_about_or_before_a_colon_is_read(prompt, bpm):
    assert read_prompt(prompt).bpm == bpm


@pytest.mark.parametrize("prompt,style", [
    ("Late-90s nu skool breaks at 132", "big beat"), ("Axé baiano anos 90, 140 bpm", "samba"),
    ("Carimbó from Pará, banjo and sax", "cumbia"), ("Finnish humppa, breakneck oom-pa", "polka"),
    ("Spaghetti western showdown in 3", "cinematic"), ("Late-Romantic adagietto for strings and harp", "classical"),
    ("chipmunk soul beat like early kanye", "boom bap"), ("Ratchet West Coast club beat, Mustard-type", "g-funk"),
    ("Drone-Metal, extrem langsam", "doom"), ("Mbalax à la Youssou N'Dour", "afrobeat"), ("Kenyan benga", "afrobeat"),
    ("1950s kwela, pennywhistle over acoustic guitar", "afrobeat"), ("Late-80s pop raï from Oran", "arabic"),
    ("Persian reng in six-eight", "arabic"), ("Korean trot, ppongjjak rhythm", "polka"),
    ("dance-punk in the DFA mold", "disco"), ("パラパラ用のユーロビート", "disco"),
])
def test_set_r_style_words_reach_their_style(prompt, style):
    assert compose(prompt, 1).genre == style


@pytest.mark.parametrize("prompt,root,mode", [("ユーロビート、BPM155、嬰ハ短調", 1, "minor"), ("変ロ長調のバラード", 10, "major"),
                                              ("ホ短調", 4, "minor")])
def test_a_key_in_japanese_is_read(prompt, root, mode):
    spec = read_prompt(prompt)
    assert (spec.key_root, spec.mode) == (root, mode)


@pytest.mark.parametrize("prompt", ["Cumbia villera, 98 bpm: teclado agudo, güiro y timbales. Sin acordeón.",
                                    "cumbia, no acordeon"])
def test_a_misspelt_or_foreign_instrument_said_no_to_is_left_out(prompt):
    """"Sin acordeón": the Spanish word (one edit from the French "accordéon") is left out, as the
    English one is — it had been read as an accordion asked for."""
    s = compose(prompt, 1)
    assert 21 in read_prompt(prompt).no_programs and all(p.program != 21 for p in s.parts if not p.is_drums)


def test_just_one_instrument_and_nothing_else_is_that_instrument_alone():
    """The words that say how it sounds ("bolts and felt on the strings", "half gamelan, half drum")
    name no one else when the prompt says "just the prepared piano, nothing else"."""
    s = compose("Prepared-piano study: bolts and felt on the strings so it sounds half gamelan, half drum. "
                "An 11/8 loop at 144, just the prepared piano, nothing else.", 1)
    assert {p.program for p in s.parts} == {0} and not any(p.is_drums for p in s.parts), s.describe()
    assert {p.role for p in compose("just drums and bass, nothing else", 1).parts} == {"drums", "bass"}


@pytest.mark.parametrize("prompt,key", [
    ("Khaleeji wedding groove: oud riffs, qanun, thick layered handclaps and mirwas drums, no drum kit.", 39),
    ("Gamelan-inspired piece: metallophone patterns, gongs marking each cycle, kendang drums. No Western drum kit.", 52),
])
def test_claps_and_a_gong_named_beside_no_drum_kit_still_play(prompt, key):
    """Hand claps and a gong are no drum kit: "no drum kit" leaves the kit out, not them."""
    s = compose(prompt, 1)
    d = [k for k, p in enumerate(s.parts) if p.is_drums]
    hits = {n.pitch for i in range(8) for n in s.bar(i)[0] if n.part in d}
    assert key in hits and not hits & {35, 36, 38, 40, 42}, hits


# --- the review of the readings above: what they must not take -------------------------------------
@pytest.mark.parametrize("prompt,not_style", [
    ("¿Puede Ud. hacer una canción alegre?", "arabic"), ("ud i naturen, rolig musik", "arabic"),
    ("yea or nay, game show music", "arabic"), ("yaman bir şarkı, hızlı", "raga"), ("kalyan station, indie film", "raga"),
    ("lyra's theme, soft piano", "balkan"), ("benga style dubstep, 140", "afrobeat"), ("detroit jit, fast footwork", "afrobeat"),
    ("ratchet sound effect, mechanical, industrial", "g-funk"), ("chipmunk voices, kids song", "boom bap"),
    ("persian rug of sound, ambient", "arabic"), ("rai of sunshine, happy pop", "arabic"),
    ("oud, piano and cello", "arabic"), ("acoustic guitar and electric guitar, drums", "folk"),
    ("acoustic guitar with djembe and shaker, warm", "mande"), ("frame drum and synth, dark", "arabic"),
    ("tabla and bass, groove", "raga"), ("kora and 808s", "mande"),
])
def test_a_word_with_another_meaning_names_no_style(prompt, not_style):
    """Spanish "Ud." and Danish "ud" are no oud, "yaman" Turkish slang, Kalyan a town, Benga a dubstep
    producer, a ratchet a tool; a folk instrument among others it does not lead, or a world drum
    beside a bass, synth or another music's instruments, names no style."""
    assert compose(prompt, 1).genre != not_style


@pytest.mark.parametrize("prompt,bpm", [
    ("psalm 121: hymn for choir", None), ("route 66: road trip rock", None), ("studio 54: disco", None),
    ("at about 30 secs the beat comes in", None), ("key change at about 60 percent", None),
    ("at around 15 years old i wrote this, pop punk", None), ("at about 10 minutes long ambient", None),
])
def test_a_number_that_is_a_name_or_an_amount_is_no_tempo(prompt, bpm):
    assert read_prompt(prompt).bpm == bpm


@pytest.mark.parametrize("prompt", ["backbeat on two four", "kick on one, snare on two four, rock",
                                    "two four-minute tracks, techno", "a song for five four-year-olds",
                                    "seven eight-year-olds singing, choir"])
def test_numbers_in_words_that_are_no_meter(prompt):
    assert read_prompt(prompt).meter is None


@pytest.mark.parametrize("prompt,roles", [
    ("just piano and drums, nothing else", {"drums"}), ("just guitar and bass, nothing else", {"bass"}),
    ("only piano and cello, nothing else", {"lead"}),
])
def test_just_two_and_nothing_else_keeps_both(prompt, roles):
    assert roles <= {p.role for p in compose(prompt, 1).parts}


@pytest.mark.parametrize("prompt", ["epic orchestral, solo trumpet", "rock anthem, solo guitar", "metal, solo guitar",
                                    "smooth jazz with solo sax", "tango, solo bandoneon", "lofi hip hop, solo piano, rainy",
                                    "trance, solo synth", "solo vibraphone, cool jazz", "reggae, solo melodica"])
def test_a_solo_instrument_beside_a_style_is_a_solo_in_its_band(prompt):
    """"solo X" before the instrument is a piece for X alone only for a piano or guitar in a style
    where a player alone is a form of its own (jazz, classical, folk …): a "solo trumpet" in an
    orchestra, a "solo guitar" in rock, a "solo piano" over a lofi beat are solos in the band."""
    assert len(compose(prompt, 1).parts) >= 3


def test_words_of_other_meanings_are_no_instruments():
    """Tama makes drum kits (Senegal's tama only beside a sabar); a tele-novela has no Telecaster;
    a baroque "clavier" is its harpsichord, not a saw lead; a steel-string guitar in jazz, or gypsy
    jazz's, is no archtop; "guitar, oud and percussion" keeps its guitar beside the oud."""
    assert "tama" not in read_prompt("rock with tama drums").drum_words
    assert "tama" in read_prompt("mbalax, sabar et tama").drum_words
    assert "tele" not in read_prompt("a tele-novela theme, dramatic").instruments
    progs = {p.program for p in compose("clavier, baroque prelude", 1).parts}
    assert 6 in progs and 81 not in progs
    assert 25 in {p.program for p in compose("jazz, steel string guitar", 1).parts}
    assert 25 in {p.program for p in compose("gypsy jazz, guitar and violin", 1).parts}
    progs = [p.program for p in compose("guitar, oud and percussion", 1).parts]
    assert 24 in progs and 25 in progs
    assert compose("voci nella notte, piano", 1).genre == "romantic piano"


# --- the second review: what the readings must not take ---------------------------------------------
@pytest.mark.parametrize("prompt,not_style", [
    ("choir singing amen over an organ", "drum and bass"), ("a choir sings hallelujah and amen", "drum and bass"),
    ("tambura and accordion, croatian kolo", "raga"), ("een oud liedje op piano", "arabic"),
    ("wimbo wa siku ya kuzaliwa, piano", "huayno"), ("sitar and bass", "raga"), ("sitar and synthesizer", "raga"),
    ("bodhran heartbeat, dark and tense", "celtic"), ("dark acoustic guitar, spooky", "folk"),
    ("late romantic orchestral", "classical"), ("70s poliziottesco funk", "cinematic"),
    ("un sottomarino giallo, canzone allegra", "cinematic"), ("two four minute tracks for a podcast", "minuet"),
])
def test_the_second_reviews_words_name_no_style(prompt, not_style):
    """"Amen" in a choir is no amen break; a Balkan tambura is no tanpura; Dutch "oud" is old and
    Swahili "siku" a day; a sitar beside a bass or synth, a bodhrán or acoustic guitar in a dark cue,
    an era ("late romantic") or a genre film ("poliziottesco") beside another style, Italian
    "giallo" (yellow) and "minute" (no minuet) name no style of their own."""
    assert compose(prompt, 1).genre != not_style


@pytest.mark.parametrize("prompt,bpm", [
    ("the drop hits at around 45", None), ("tuned at about 432", None), ("at about 11 pm, chill", None),
    ("at around 10 am, morning coffee jazz", None), ("at about 40 degrees, desert, arabic", None),
    ("tempo 140 beats, dubstep", 140.0), ("at 90 beats per min, lofi", 90.0), ("at 160 steps per minute, running music", 160.0),
])
def test_an_about_tempo_is_a_tempo_only_in_a_tempos_range_and_units(prompt, bpm):
    assert read_prompt(prompt).bpm == bpm


@pytest.mark.parametrize("prompt", ["two four minute tracks for a podcast", "give me five four minute tracks",
                                    "twelve eight minute ambient pieces", "the band has five four piece horns"])
def test_counts_of_things_in_words_are_no_meter(prompt):
    assert read_prompt(prompt).meter is None


@pytest.mark.parametrize("prompt", ["acoustic guitar chords only, no melody", "rhodes chords only",
                                    "piano accompaniment only for a singer", "harp arpeggios alone",
                                    "backing track, just guitar chords, no lead"])
def test_an_instrument_alone_asked_to_accompany_plays_no_tune(prompt):
    assert not any(p.role == "lead" for p in compose(prompt, 1).parts)


@pytest.mark.parametrize("prompt,kept", [
    ("just piano, with a cello joining later, nothing else", 42), ("only strings, nothing else, with a harp", 46),
    ("just the choir, nothing else, with organ accompaniment", None),
])
def test_what_is_named_after_nothing_else_still_plays(prompt, kept):
    progs = {p.program for p in compose(prompt, 1).parts}
    assert kept is None and len(progs) >= 2 or kept in progs, progs


def test_the_second_reviews_instruments_and_drums():
    """"Tele" is television, a "clavier" without a synth is a piano, claps beside a cajón leave the
    cajón in, "epic orchestral, solo piano" keeps its orchestra; 拍 (beats) leaves a piano piece."""
    for p in ("musique pour la tele, joyeuse", "tele theme tune, upbeat", "Musik fürs Tele, fröhlich"):
        assert 27 not in {x.program for x in compose(p, 1).parts if x.role == "lead"} and "tele" not in read_prompt(p).instruments
    assert 81 not in {x.program for x in compose("une berceuse au clavier", 1).parts}
    s = compose("palmas and cajon, no drum kit, flamenco", 1)
    d = [k for k, x in enumerate(s.parts) if x.is_drums]
    hits = {n.pitch for i in range(8) for n in s.bar(i)[0] if n.part in d}
    assert 39 in hits and hits & {35, 37}, hits
    assert len(compose("epic orchestral, solo piano", 1).parts) >= 4
    assert compose("ピアノ 3拍子", 1).genre == "romantic piano"


# --- set S: dances, classes, games ------------------------------------------------------------------
@pytest.mark.parametrize("prompt,bpm", [
    # (salsa's beat is the half note — its bar holds the two-bar clave: a cha-cha's 32 bars are 64)
    ("Quickstep at 50 bars per minute, big band swing", 200.0), ("cha cha, 32 bars per minute", 64.0),
    ("ballroom samba, 2/4 at 50 bars per minute", 100.0), ("jive, 44 bars/min, honking sax", 176.0),
    ("Slow waltz, 29 bars per minute in 3/4", 87.0), ("a jig at 40 MPM", 80.0), ("tango 31 bars per minute", 124.0),
])
def test_a_dance_teachers_bars_per_minute_are_the_meters_beats(prompt, bpm):
    """Bars a minute × the beats of the bar asked for, or the style's (a 6/8 jig's two dotted quarters)."""
    assert read_prompt(prompt).bpm == bpm


@pytest.mark.parametrize("prompt,style", [
    ("quickstep for my bronze medal class", "swing"), ("slow foxtrot", "swing"), ("paso doble, 60 bars per minute", "marching band"), ("cha-cha for latin technique class", "salsa"),
    ("west coast swing practice, slinky", "r&b"), ("kizomba para a minha aula", "dancehall"),
    ("Kuku at around 140 bpm, two djembes", "mande"), ("Highland schottische for our ceilidh", "reel"), ("schottische for a barn dance", "polka"),
    ("savasana sound bath, singing bowls", "ambient"), ("final boss: orchestral metal in 7/8", "metal"),
    ("la Gavotte de Gossec en ré majeur", "baroque"), ("ii–V–I drill in B♭ for my jazz piano students", "jazz"),
    ("नवरात्रि गरबा क्लास के लिए म्यूज़िक चाहिए – 6/8 की ताल में, ढोल, शहनाई और हारमोनियम", "bhangra"),
    ("Vinyasa flow: tanpura drone tuned to C#, slow bansuri alap, soft tabla", "raga"),
    ("main menu music, slow evolving synth pads, a soft music-box arpeggio, no drums", "ambient"),
    ("cozy pixel RPG shop theme: pizzicato strings, a bouncy bassoon", "classical"),
])
def test_set_s_words_reach_their_style(prompt, style):
    assert compose(prompt, 1).genre == style


def test_set_s_dances_paces_and_words():
    """A slow waltz and a foxtrot at a walk; "drone on A" and "tuned to C#" are keys; Korean and
    Hindi drum and instrument words; "las cuatro coplas" has no cuatro; a chip's triangle wave is its
    bass, no triangle; "no piano on the track" and "sans violon" leave them out though named elsewhere;
    "no melody instruments" is the drums alone; the voices a podcast bed sits under are no choir."""
    assert 80 <= compose("slow waltz for a wedding", 1).bpm <= 96 and 108 <= compose("slow foxtrot", 1).bpm <= 124
    assert read_prompt("drone on A, for intonation practice").key_root == 9
    assert read_prompt("tanpura drone tuned to C#").key_root == 1
    assert {"kick", "clap"} <= set(read_prompt("킥이랑 클랩은 또렷하게, 신스 베이스").drum_words)
    sp = read_prompt("गरबा, ढोल, शहनाई और हारमोनियम")
    assert "dhol" in sp.drum_words and {"shehnai", "harmonium"} <= set(sp.instruments)
    assert "cuatro" not in read_prompt("Sevillanas: las cuatro coplas seguidas, dos guitarras").instruments
    sp = read_prompt("8-bit dungeon: pulse-wave lead, triangle-wave bassline and noise-channel hats")
    assert "triangle" not in sp.drum_words and "triangle-wave bassline" in sp.instruments
    s = compose("ii–V–I drill for my jazz piano students, upright bass and ride. No piano on the track.", 1)
    assert all(p.program not in range(0, 4) for p in s.parts)
    s = compose("Accompagnement pour l'examen de violon : juste le piano, sans violon dans l'enregistrement.", 1)
    assert {p.program for p in s.parts} == {0}, s.describe()
    s = compose("Drum solo for belly dance: darbuka leading, riq and a big tabl. No melody instruments.", 1)
    assert all(p.is_drums for p in s.parts), s.describe()
    s = compose("Podcast bed under two people talking, jazzy hip hop, nothing fighting the voices", 1)
    assert not any(p.program in (52, 53, 54) for p in s.parts), s.describe()


# --- the third review ----------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt,bpm", [
    ("samba 50 bars per minute", 100.0), ("salsa class 48 bars per minute", 96.0), ("paso doble 60 bars per minute", 120.0),
    ("2/2 march, 60 bars per minute", 120.0), ("viennese waltz 60 MPM", 180.0), ("quickstep 52 MPM", 208.0),
    ("techno loop 16 bars Amin", None), ("treadmill song 15 mpm", None), ("running playlist, 10 mpm pace, energetic", None),
])
def test_bars_per_minute_count_the_dances_own_bar(prompt, bpm):
    """A samba's bar is 2/4 (two in the style's 4/4), salsa's beat the half note, a 2/2 bar two
    beats; "16 bars Amin" is a loop in A minor and "15 mpm" a runner's pace — no tempo."""
    assert read_prompt(prompt).bpm == bpm


@pytest.mark.parametrize("prompt,style", [
    ("foxtrot, dixieland band", "dixieland"), ("quickstep march for pipe band", "marching band"),
    ("regimental quickstep, military band", "military march"), ("ii-v-i in bossa nova", "bossa nova"),
    ("I-vi-ii-V doo wop ballad", "doo-wop"), ("vi-ii-V-I turnaround, 50s rock and roll", "rock"),
    ("gavotte from a classical symphony, prokofiev", "classical"), ("sound bath style pads under a house beat", "house"),
    ("west african dance, highlife guitars", "afrobeat"), ("schottische for a barn dance, fiddle and accordion", "polka"),
    ("upbeat happy track with a synth pad and punchy drums", "pop"),
])
def test_a_shared_progression_or_dance_gives_way_to_the_style_named(prompt, style):
    assert compose(prompt, 1).genre == style


@pytest.mark.parametrize("prompt,not_style", [
    ("foxtrot alpha, military drone cue", "swing"), ("delta foxtrot, sci-fi command center ambience", "swing"),
    ("a quick step up in energy at the drop, edm", "swing"), ("kuku the chicken song for kids", "mande"),
    ("wcs blues, gritty guitar", "r&b"), ("orchestral metal hits for a trailer, braams", "metal"),
    ("organ drone, dark and ominous", "soul"), ("lush pads, big drums, anthem", "ambient"),
    ("pads and drums, 90 bpm", "ambient"), ("frog jumping on lily pads, bouncy", "ambient"),
    ("pizzicato bass and brushes", "classical"), ("pizzicato synth pluck melody, uplifting", "classical"),
])
def test_the_third_reviews_words_name_no_style(prompt, not_style):
    assert compose(prompt, 1).genre != not_style


def test_the_third_reviews_negations_moments_and_words():
    """A "no X" at a moment ("last chorus without the piano", "sem cavaquinho no refrão") leaves X in;
    "nicht nur die Gitarre" is not the guitar alone; "no melody instruments" beside a backing band
    leaves the lead out only (a drum solo leaves the drums alone); the talking drum under a kora plays;
    a cuatro's strums are a cuatro; "not a slow waltz" is no slow waltz; 리드미컬 (rhythmical) no lead."""
    assert 25 in {p.program for p in compose("samba com cavaquinho, sem cavaquinho no refrão", 1).parts}
    assert 0 in {p.program for p in compose("piano and strings, no piano in the track's outro", 1).parts}
    assert not read_prompt("nicht nur die Gitarre, auch Bass und Schlagzeug").solo
    assert not read_prompt("no solamente el piano, sino también la guitarra y la batería").solo
    roles = {p.role for p in compose("jazz backing track, no melody instruments, just piano bass and drums", 1).parts}
    assert {"drums", "bass", "chords"} <= roles and "lead" not in roles
    assert "talking drum" in read_prompt("kora over the talking drum, mande").drum_words
    assert "cuatro" in read_prompt("joropo: arpa, cuatro strums and maracas").instruments
    assert compose("not a slow waltz, a fast viennese one", 1).bpm >= 130
    assert "lead" not in read_prompt("리드미컬한 힙합 비트").text


def test_the_fourth_reviews_paces_bars_and_dances():
    """A runner's "12 MPM" is no dance tempo beside "dance pop"; a merengue's bar is 2/4; a paso
    doble gives way to flamenco named beside it; a highland schottische is Scotland's (a reel's band)."""
    assert read_prompt("easy jog 12 MPM, dance pop playlist").bpm is None
    assert read_prompt("merengue 60 bars per minute").bpm == 120.0
    assert compose("paso doble flamenco guitar", 1).genre == "flamenco"
    assert compose("highland schottische bagpipes", 1).genre == "reel"
