"""Chords from a keyboard or a symbol, and the composer steered by them — no daemon.

What a player holds is named the way a musician names it (root, quality, inversion, slash bass),
a symbol is read the way a lead sheet writes it, the key is inferred from the chords played, and
a steered score voices bass, comping, pads, arpeggios and the lead to the chord from its beat on
while the drums and everything before the beat stay exactly as composed.
"""
from __future__ import annotations

import random

import mido
import pytest

from bridge.control.midi import MidiMap, MidiMapper
from bridge.core.commands import Command, parse_osc
from bridge.core.inbox import CommandQueue
from engine.compose import compose
from engine.compose.chordread import QUALITIES, infer_key, make_chord, name_chord, parse_symbol
from engine.compose.composer import composer_of, steer
from engine.compose.form import SECTION_BARS
from plugin_stub.protocol import WavebridgeError

NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
#: qualities whose root-position notes name one chord only (C6 = Am7/C and the symmetric
#: diminished seventh and augmented triads are told apart by the bass: root position here)
ALL = [q for q, _ in QUALITIES]


def pitches(chord, base=60):
    r = base + (chord.root - base) % 12
    ps = [r + i for i in chord.intervals]
    if chord.bass is not None:
        ps.append(r - 12 - (chord.root - chord.bass) % 12)
    return ps


# ------------------------------------------------------------------ naming what is held
@pytest.mark.parametrize("suffix", ALL)
def test_every_quality_in_root_position_on_every_root_is_named_back(suffix):
    for root in range(12):
        c = make_chord(root, suffix)
        got = name_chord(pitches(c, 48 + root))
        assert (got.root, got.intervals, got.bass) == (root, c.intervals, None), (NAMES[root] + suffix, got)
        assert got.symbol == NAMES[root] + suffix


@pytest.mark.parametrize("suffix", ["", "m", "7", "m7", "maj7", "dim", "m7b5"])
def test_inversions_keep_the_root_and_name_the_bass(suffix):
    for root in (0, 4, 9):
        c = make_chord(root, suffix)
        notes = [60 + root + i for i in c.intervals]
        for k in range(1, len(notes)):
            inv = notes[k:] + [n + 12 for n in notes[:k]]
            got = name_chord(inv)
            assert set(got.pcs) == set(c.pcs)
            if suffix in ("m7", "m7b5") and k == 1:
                # the same notes over the third are its sixth chord, as players name it (Cm7/Eb = Eb6)
                assert (got.root, got.bass, got.symbol) == (inv[0] % 12, None, NAMES[inv[0] % 12] +
                                                            ("6" if suffix == "m7" else "m6"))
                continue
            assert (got.root, got.intervals) == (root, c.intervals), (suffix, k, got)
            assert got.bass == inv[0] % 12
            assert got.symbol.endswith("/" + NAMES[inv[0] % 12])


def test_doublings_and_spread_voicings_do_not_change_the_chord():
    assert name_chord([36, 48, 55, 64, 67, 72, 76]).symbol == "C"
    assert name_chord([45, 57, 64, 72, 79]).symbol == "Am7"            # A E C G, spread
    assert name_chord([43, 53, 59, 62, 65]).symbol == "G7"


def test_a_single_key_is_a_root_with_the_keys_triad_and_two_keys_imply_one():
    assert [name_chord([n], (0, "major")).symbol for n in (60, 62, 64, 65, 67, 69, 71)] == \
        ["C", "Dm", "Em", "F", "G", "Am", "Bdim"]
    assert name_chord([66], (0, "major")).symbol == "F#"               # outside the key: major
    assert [name_chord([n], (9, "minor")).symbol for n in (57, 59, 60)] == ["Am", "Bdim", "C"]
    assert name_chord([62]).symbol == "D"                               # no key: major
    assert name_chord([40, 47]).symbol == "E5"                          # a bare fifth: a power chord
    assert name_chord([47, 52]).symbol == "E5/B"                        # … a fourth is one inverted
    assert name_chord([60, 64]).symbol == "C" and name_chord([60, 63]).symbol == "Cm"
    assert name_chord([64, 72]).symbol == "C/E"                         # a minor sixth: the triad above


def test_a_cluster_is_reduced_to_its_strongest_triad_and_nothing_raises():
    c = name_chord([60, 61, 62, 63])
    assert len(c.intervals) == 3 and len(set(c.pcs) & {0, 1, 2, 3}) >= 2, c
    c = name_chord([60, 62, 64, 65, 67, 69, 71])                        # every white key
    assert len(c.intervals) == 3 and set(c.pcs) <= {0, 2, 4, 5, 7, 9, 11}
    rng = random.Random(5)
    for _ in range(3000):
        notes = [rng.randrange(128) for _ in range(rng.randrange(1, 11))]
        c = name_chord(notes, (rng.randrange(12), rng.choice(["major", "minor"])))
        assert c is not None and 1 <= len(c.intervals) <= 5
        assert c.root in {n % 12 for n in notes} or len(set(n % 12 for n in notes)) <= 2 or len(c.intervals) == 3
    assert name_chord([]) is None and name_chord([200, -3]) is None


# ------------------------------------------------------------------ symbols
@pytest.mark.parametrize("text, symbol, root, ivs, bass", [
    ("Am7/G", "Am7/G", 9, (0, 3, 7, 10), 7), ("C", "C", 0, (0, 4, 7), None),
    ("F#m7b5", "F#m7b5", 6, (0, 3, 6, 10), None), ("Bbmaj7", "Bbmaj7", 10, (0, 4, 7, 11), None),
    ("Dsus4", "Dsus4", 2, (0, 5, 7), None), ("E5", "E5", 4, (0, 7), None), ("C/E", "C/E", 0, (0, 4, 7), 4),
    ("Cø", "Cm7b5", 0, (0, 3, 6, 10), None), ("Co7", "Cdim7", 0, (0, 3, 6, 9), None),
    ("Ebmin7", "Ebm7", 3, (0, 3, 7, 10), None), ("  G7  ", "G7", 7, (0, 4, 7, 10), None),
    ("CΔ7", "Cmaj7", 0, (0, 4, 7, 11), None), ("Ab-7", "Abm7", 8, (0, 3, 7, 10), None),
    ("Dbadd9", "C#add9", 1, (0, 4, 7, 14), None), ("B°", "Bdim", 11, (0, 3, 6), None),
    ("G+", "Gaug", 7, (0, 4, 8), None), ("a", "A", 9, (0, 4, 7), None), ("f#m", "F#m", 6, (0, 3, 7), None), ("F/A", "F/A", 5, (0, 4, 7), 9),
    ("Gsus", "Gsus4", 7, (0, 5, 7), None), ("D9", "D9", 2, (0, 4, 7, 10, 14), None),
])
def test_chord_symbols_as_lead_sheets_write_them(text, symbol, root, ivs, bass):
    c = parse_symbol(text)
    assert (c.symbol, c.root, c.intervals, c.bass) == (symbol, root, ivs, bass)


@pytest.mark.parametrize("text, words", [
    ("H7", "not a chord symbol"), ("Cxyz", "unknown chord quality"), ("", "not a chord symbol"),
    ("C/H", "not a chord symbol"), ("C" * 30, "not a chord symbol"), ("Am7/G/F", "not a chord symbol"),
])
def test_a_symbol_nobody_writes_is_a_clear_error(text, words):
    with pytest.raises(ValueError, match=words):
        parse_symbol(text)


@pytest.mark.parametrize("suffix", ALL)
def test_symbols_and_held_keys_agree(suffix):
    for root in range(12):
        c = parse_symbol(NAMES[root] + suffix)
        got = name_chord(pitches(c, 48))
        assert (got.root, got.intervals) == (c.root, c.intervals), (c.symbol, got.symbol)


def test_the_key_is_inferred_from_the_chords_played():
    for tonic in range(12):
        major = [make_chord(tonic + d, q) for d, q in ((0, ""), (5, ""), (7, ""), (0, ""))]
        assert infer_key(major)[:2] == (tonic, "major"), NAMES[tonic]
        minor = [make_chord(tonic + d, q) for d, q in ((0, "m"), (5, "m"), (7, "7"), (0, "m"))]
        assert infer_key(minor)[:2] == (tonic, "minor"), NAMES[tonic]
    tonic, mode, conf = infer_key([parse_symbol(s) for s in ("Dm7", "G7", "Cmaj7")])
    assert (tonic, mode) == (0, "major") and 0.5 < conf <= 1.0
    # the chord being played belongs to the key: F#m7 then Bbmaj7/D is not F# minor
    two = [parse_symbol("F#m7"), parse_symbol("Bbmaj7/D")]
    tonic, mode, _ = infer_key(two, holds=two[-1])
    steps = (0, 2, 4, 5, 7, 9, 11) if mode == "major" else (0, 2, 3, 5, 7, 8, 10, 11)
    assert all((pc - tonic) % 12 in steps for pc in (10, 2, 5)), (tonic, mode)


# ------------------------------------------------------------------ the steered score
PROMPTS = [
    ("pop with piano chords, bass, a pad and drums in C major at 120 bpm", 2),
    ("deep house with rhodes chords, a warm bass and a shaker", 3),
    ("jazz trio with walking bass, brushes and piano comping", 4),
    ("synthwave with arpeggios, warm pads and gated drums", 1),
    ("a waltz in 3/4 with strings and piano", 6),
    ("lively celtic jig in 6/8 with fiddle and bodhran", 2),
]


def _notes(score, b0, b1, parts):
    return [n for n in score.notes_between(b0, b1) if n.part in parts]


@pytest.mark.parametrize("prompt, seed", PROMPTS)
@pytest.mark.parametrize("symbol", ["F#m7", "Bb/D", "E5"])
def test_a_steered_score_plays_the_chord_from_its_beat_and_the_drums_do_not_notice(prompt, seed, symbol):
    sc = compose(prompt, seed)
    bpb = sc.beats_per_bar
    chord = parse_symbol(symbol)
    beat = 5 * bpb + (1.0 if bpb >= 3 else 0.0)       # mid-bar, after the intro
    st = steer(sc, beat, chord, (chord.root, "minor" if 3 in chord.intervals else "major"))
    roles = {j: pl.role for j, pl in enumerate(composer_of(sc).plans)}
    drums = {j for j, p in enumerate(sc.parts) if p.is_drums}
    harmonic = {j for j, r in roles.items() if r in ("chords", "pad", "arp")}
    bass = {j for j, r in roles.items() if r == "bass"}
    lead = {j for j, r in roles.items() if r == "lead"}
    pcs = set(chord.pcs) | ({chord.bass} if chord.bass is not None else set())
    end = beat + 6 * bpb
    # the harmony parts sound nothing but the chord's tones
    h = _notes(st, beat + 0.01, end, harmonic)
    assert harmonic and h, [p.name for p in sc.parts]
    assert all(n.pitch % 12 in pcs for n in h), sorted({NAMES[n.pitch % 12] for n in h})
    # the bass: its notes on the beat are chord tones, and the slash bass is its lowest root
    if bass:
        on_beat = [n for n in _notes(st, beat + 0.01, end, bass) if abs(n.start - round(n.start)) < 0.06]
        # (a walking bass passes through the scale between them)
        assert on_beat and sum(n.pitch % 12 in pcs for n in on_beat) >= 0.7 * len(on_beat)
        downbeats = [n for n in on_beat if abs((n.start / bpb) - round(n.start / bpb)) < 0.02]
        assert downbeats and all(n.pitch % 12 in pcs for n in downbeats)
        if chord.bass is not None:      # a slash chord stands on its bass (an oom-pah bass alternates its fifth)
            assert sum(n.pitch % 12 == chord.bass for n in downbeats) >= 0.5 * len(downbeats)
    # the lead: its strong notes (on a beat, longer than an eighth) land on the chord
    strong = [n for n in _notes(st, beat + 0.01, end, lead) if abs(n.start - round(n.start)) < 0.06 and n.dur >= 0.45]
    if len(strong) >= 4:
        assert sum(n.pitch % 12 in pcs for n in strong) >= 0.6 * len(strong)
    # the drums are exactly as composed, before the beat and after it
    a = [(round(n.start, 4), n.pitch, n.vel) for n in _notes(sc, 0, end + 4 * bpb, drums)]
    b = [(round(n.start, 4), n.pitch, n.vel) for n in _notes(st, 0, end + 4 * bpb, drums)]
    assert a == b
    # and every part is as composed up to the bar before the beat's
    upto = (int(beat // bpb) - 1) * bpb
    a = [(n.part, round(n.start, 4), n.pitch) for n in sc.notes_between(0, upto)]
    b = [(n.part, round(n.start, 4), n.pitch) for n in st.notes_between(0, upto)]
    assert a == b


def test_the_composed_progression_comes_back_when_the_chord_is_released():
    sc = compose(*PROMPTS[0])
    bpb = sc.beats_per_bar
    x = steer(sc, 4 * bpb, parse_symbol("F#"), (6, "major"))
    y = steer(x, 8 * bpb + 2, None)
    cx, cy, c0 = composer_of(x), composer_of(y), composer_of(sc)
    assert [c for _, _, c in cx.chords_of_bar(6)] == [parse_symbol("F#")]
    assert [c for _, _, c in cy.chords_of_bar(6)] == [parse_symbol("F#")]        # before the release: held
    assert cy.chords_of_bar(8)[-1][2] == c0.chords_of_bar(8)[-1][2]                # the bar it is released in
    for i in range(9, 24):
        assert cy.chords_of_bar(i) == c0.chords_of_bar(i), i                    # composed again after
    assert cy._steered_key(12) is None and cy._steered_key(6) == (6, (1, 3, 5, 6, 8, 10, 11))
    assert cx._steered_key(3) is None                                           # before the chord: its own key
    # steering again from an earlier beat replaces what was planned after it
    z = steer(y, 8 * bpb, parse_symbol("Dm"))
    assert [(b, c) for b, c, _ in composer_of(z).harmony] == [(4 * bpb, parse_symbol("F#")), (8 * bpb, parse_symbol("Dm"))]


def test_a_long_session_of_chord_changes_keeps_the_steering_small():
    sc = compose(*PROMPTS[0])
    names = ["C", "F", "G", "Am", "Dm", "E7"]
    for k in range(2000):                                # a chord every beat for 2000 beats
        sc = steer(sc, 8.0 + k, parse_symbol(names[k % 6]))
    h = composer_of(sc).harmony
    assert len(h) <= 2 * SECTION_BARS * 4 + 2
    last = 8.0 + 1999
    c = composer_of(sc)
    assert c.chords_of_bar(int(last // 4))[-1][2] == parse_symbol(names[1999 % 6])
    i = int(last // 4) - 4                               # a recent bar: a chord on every beat, as played
    assert [cc for _, _, cc in c.chords_of_bar(i)] == [parse_symbol(names[(4 * i + t - 8) % 6]) for t in range(4)]


def test_steering_is_deterministic_and_leaves_the_original_score_alone():
    sc = compose(*PROMPTS[1])
    before = [(n.part, n.start, n.pitch) for n in sc.notes_between(0, 64)]
    a = steer(sc, 20.0, parse_symbol("Ebmaj7"))
    b = steer(compose(*PROMPTS[1]), 20.0, parse_symbol("Ebmaj7"))
    assert [(n.part, n.start, n.pitch) for n in a.notes_between(0, 64)] == \
        [(n.part, n.start, n.pitch) for n in b.notes_between(0, 64)]
    sc._cache.clear()
    assert [(n.part, n.start, n.pitch) for n in sc.notes_between(0, 64)] == before
    assert composer_of(sc).harmony == ()


# ------------------------------------------------------------------ commands and MIDI
def test_wb_chord_is_validated_on_arrival():
    c = parse_osc("/wb/chord", [1, "am7/g"], 2)
    assert (c.kind, c.slot, c.chord, c.quantize) == ("chord", 1, "Am7/G", "beat")
    assert parse_osc("/wb/chord", [2, "", "bar"], 2).chord == ""
    assert parse_osc("/wb/chord", [2, b"F#", "off"], 2).quantize == "off"
    for args, code in [([1, "H7"], "bad_chord"), ([1, "C" * 40], "bad_chord"), ([1, 7], "bad_type"),
                       ([3, "C"], "bad_slot"), ([1], "bad_args"), ([1, "C", "bar", 1], "bad_args"),
                       ([1, "C", "soon"], "bad_value"), ([1.5, "C"], "bad_type")]:
        with pytest.raises(WavebridgeError) as e:
            parse_osc("/wb/chord", args, 2)
        assert e.value.code == code, (args, e.value.code)


def test_wb_keys_is_the_keys_held_now():
    c = parse_osc("/wb/keys", [2, 64, 60, 67, 60], 2)
    assert (c.kind, c.slot, c.notes, c.source, c.quantize) == ("chord", 2, (60, 64, 67), "keys", "beat")
    assert parse_osc("/wb/keys", [1], 2).notes == ()                    # none held: let go
    for args, code in [([1, 128], "bad_value"), ([1, -1], "bad_value"), ([1, "C"], "bad_type"),
                       ([1] + list(range(40, 57)), "bad_args"), ([], "bad_args"), ([9, 60], "bad_slot")]:
        with pytest.raises(WavebridgeError) as e:
            parse_osc("/wb/keys", args, 2)
        assert e.value.code == code, (args, e.value.code)


def test_a_waiting_chord_takes_the_newer_one_in_the_inbox():
    q = CommandQueue(8)
    q.put_nowait(Command("chord", slot=1, notes=(60,)))
    q.put_nowait(Command("chord", slot=2, chord="Dm"))
    q.put_nowait(Command("chord", slot=1, notes=(60, 64, 67)))
    q.put_nowait(Command("chord", slot=1, notes=(60, 64, 67, 70)))
    got = [q.get_nowait() for _ in range(q.qsize())]
    assert [(c.slot, c.notes, c.chord) for c in got] == [(1, (60, 64, 67, 70), ""), (2, (), "Dm")]
    q.put_nowait(Command("chord", slot=1, chord="E"))                # taken out: a new one queues again
    assert q.get_nowait().chord == "E"


def on(note, ch):
    return mido.Message("note_on", channel=ch - 1, note=note, velocity=90)


def off(note, ch):
    return mido.Message("note_off", channel=ch - 1, note=note)


def test_keys_on_the_harmony_channel_are_the_slots_chord():
    m = MidiMapper(MidiMap.default(), 4)
    assert m.translate(on(60, 16))[0].notes == (60,)
    assert m.translate(on(64, 16))[0].notes == (60, 64)
    cmds = m.translate(on(67, 16))
    assert [(c.kind, c.slot, c.notes, c.source, c.latch) for c in cmds] == [("chord", 1, (60, 64, 67), "midi", False)]
    assert m.translate(off(60, 16))[0].notes == (64, 67)
    m.translate(off(64, 16))
    assert m.translate(off(67, 16))[0].notes == ()                      # all keys up: released
    assert m.translate(off(67, 16)) == []                               # nothing changed: nothing sent
    assert m.stats["unmapped"] == 0
    assert [c.kind for c in m.translate(on(60, 1))] == ["param", "play"]   # other channels play prompts
    m.translate(on(62, 16))
    assert m.translate(mido.Message("control_change", channel=15, control=123, value=0))[0].notes == ()


def test_a_map_file_sets_the_harmony_channels_and_latch():
    assert MidiMapper(MidiMap.default(), 2).translate(on(60, 16))[0].quantize == "beat"
    mm = MidiMap.from_dict({"harmony": {"3": 2, "16": 1}, "harmony_latch": True, "harmony_quantize": "bar"})
    assert mm.harmony == {3: 2, 16: 1} and mm.harmony_latch and mm.harmony_quantize == "bar"
    m = MidiMapper(mm, 2)
    c = m.translate(on(57, 3))[0]
    assert (c.slot, c.notes, c.latch, c.quantize) == (2, (57,), True, "bar")
    assert "harmony.5: slot 9 does not exist (1..4)" in MidiMap.from_dict({"harmony": {"5": 9}}).check(4, {})
    assert MidiMap.from_dict({"harmony": {}}).harmony == {}              # none: channel 16 plays prompts
    for bad in ({"harmony": {"17": 1}}, {"harmony": {"2": 0}}, {"harmony_latch": "yes"}, {"harmony_quantize": "soon"}):
        with pytest.raises(Exception):
            MidiMap.from_dict(bad)
