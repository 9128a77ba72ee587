"""A tune a player gives becomes the lead's theme: cleaned, transposed, developed, harmonised.

The composer's side without a daemon (clean, motif, the lead and the harmony under it, a MIDI
file in and out), then a running daemon: a tune sent as a MIDI file, and one recorded from the
keys played on the slot's MIDI channel, sung from the slot's next bar; an empty recording is a
clear error that changes nothing.
"""
from __future__ import annotations

import io
import queue
import time
from types import SimpleNamespace

import mido
import pytest

from bridge.control.midi import MidiMap, MidiMapper
from bridge.core.commands import Command, parse_osc
from engine.compose import compose
from engine.compose.composer import composer_of, with_theme
from engine.compose.form import SECTION_BARS
from engine.compose.theme import ThemeError, clean, from_seconds, motif_of
from engine.midifile import read_tune
from plugin_stub.protocol import WavebridgeError
from coredaemon import core_daemon, drain
from polling import wait

# "Twinkle, twinkle" in G: two bars of four beats each, then two more
TWINKLE = [(0, 1, 67), (1, 1, 67), (2, 1, 74), (3, 1, 74), (4, 1, 76), (5, 1, 76), (6, 2, 74),
           (8, 1, 72), (9, 1, 72), (10, 1, 71), (11, 1, 71), (12, 1, 69), (13, 1, 69), (14, 2, 67)]
# a minor tune in 3/4 (D minor): D F A | G F E | D
WALTZ = [(0, 1, 62), (1, 1, 65), (2, 1, 69), (3, 1, 67), (4, 1, 65), (5, 1, 64), (6, 3, 62)]


def tune(notes, legato=0.9, vel=90):
    return [(t, d * legato, p, vel) for t, d, p in notes]


def intervals(ps):
    return [b - a for a, b in zip(ps, ps[1:])]


def lead_of(score):
    c = composer_of(score)
    return [j for j, pl in enumerate(c.plans) if pl.role == "lead"]


def lead_bars(score, i0, n):
    lead = set(lead_of(score))
    bpb = score.beats_per_bar
    return [[n_ for n_ in score.bar(i)[0] if n_.part in lead] for i in range(i0, i0 + n)], bpb


# ------------------------------------------------------------------ cleaning a phrase
def test_a_played_phrase_is_cleaned_to_one_note_at_a_time_on_the_grid():
    sloppy = [(0.03, 0.9, 67, 80), (0.98, 0.4, 67, 70), (1.02, 0.2, 55, 60),     # a stray low key with it
              (2.04, 0.06, 74, 40), (2.1, 0.85, 74, 90),                            # a bounce, then the note
              (3.0, 1.4, 74, 90), (3.6, 0.5, 76, 90)]                               # legato into the next
    th = clean(sloppy)
    assert [n[2] for n in th.notes] == [67, 67, 74, 74, 76]
    assert [n[0] for n in th.notes] == [0.0, 1.0, 2.0, 3.0, 3.5]                  # on 16ths from the first
    assert all(b[0] >= a[0] + a[1] - 1e-9 for a, b in zip(th.notes, th.notes[1:]))   # never two at once
    assert th.bars == 1 and th.beats_per_bar == 4.0


def test_chords_played_with_a_tune_leave_the_top_line_and_a_long_take_is_cut_to_four_bars():
    notes = []
    for k, (t, d, p) in enumerate(TWINKLE * 2):
        t += 16 * (k // len(TWINKLE))
        notes += [(t, d * 0.9, p, 80), (t, d * 0.9, p - 12, 95), (t, d * 0.9, p - 8, 95)]
    th = clean(notes)
    assert [n[2] for n in th.notes] == [p for _, _, p in TWINKLE]              # the top line, 4 bars
    assert th.bars == 4


def test_compound_meters_clean_to_eighths_and_nothing_playable_is_an_error():
    th = clean([(0.0, 0.4, 60, 90), (0.55, 0.4, 62, 90), (1.1, 0.9, 64, 90)], meter=(6, 8))
    assert [n[0] for n in th.notes] == [0.0, 0.5, 1.0]
    for bad in ([], [(0.0, 0.01, 60, 90)], [(0.0, 1.0, 200, 90)]):
        with pytest.raises(ThemeError):
            clean(bad)


def test_seconds_become_beats_at_the_tempo():
    th = clean(from_seconds([(0.0, 0.45, 60, 90), (0.5, 0.95, 62, 90), (1.0, 1.9, 64, 90)], 120.0))
    assert [(n[0], n[2]) for n in th.notes] == [(0.0, 60), (1.0, 62), (2.0, 64)]


def test_the_tunes_key_is_heard_and_the_motif_is_the_tune_in_the_pieces_key():
    th = clean(tune(TWINKLE))
    assert th.key() == (7, "major")
    assert clean(tune(WALTZ), meter=(3, 4)).key() == (2, "minor")
    cells = motif_of(th, 2, (2, 4, 6, 7, 9, 11, 1), 4.0)                        # into D major
    from engine.compose.theme import pitches_of_motif
    ps = pitches_of_motif(cells, 2, (2, 4, 6, 7, 9, 11, 1), 62)
    assert intervals(ps) == intervals([p for _, _, p in TWINKLE])                # every step kept
    assert len(cells) == 4 and [len(r) for r in cells] == [4, 3, 4, 3]


# ------------------------------------------------------------------ the lead sings it
@pytest.mark.parametrize("prompt, seed", [
    ("pop with piano chords, bass and drums", 1), ("lofi hip hop with dusty piano", 2),
    ("ambient pads and bells", 3), ("funk with slap bass and clavinet", 4), ("jazz trio with walking bass", 5),
])
def test_the_lead_sings_the_tune_as_played_then_develops_it(prompt, seed):
    th = clean(tune(TWINKLE))
    sc = compose(prompt, seed, theme=th)
    c = composer_of(sc)
    assert sc.key_root == 7 and sc.mode == "major"              # no key asked: the tune's own, G major
    bars, bpb = lead_bars(sc, c.theme_bar0, SECTION_BARS)
    first = [n for b in bars[:4] for n in b]
    assert [n.pitch % 12 for n in first] == [p % 12 for _, _, p in TWINKLE]
    assert intervals([n.pitch for n in first]) == intervals([p for _, _, p in TWINKLE])
    starts = [round((n.start - c.theme_bar0 * bpb) * 4) / 4 for n in first]   # humanised by a few ms
    assert starts == [float(t) for t, _, _ in TWINKLE]
    # the rest of the phrase develops it: moved along the scale, its rhythm varied, ending home
    rest = [n for b in bars[4:7] for n in b]
    assert rest and [n.pitch for n in rest] != [n.pitch for n in first][:len(rest)]
    assert bars[7] and bars[7][0].pitch % 12 == 7 and len(bars[7]) == 1
    # and the next phrase states it again
    again, _ = lead_bars(sc, c.theme_bar0 + SECTION_BARS, 4)
    if composer_of(sc).section_of(c.theme_bar0 + SECTION_BARS) not in ("solo",):
        assert intervals([n.pitch for b in again for n in b]) == intervals([p for _, _, p in TWINKLE])


def test_a_key_in_the_prompt_moves_the_tune_and_a_minor_tune_stays_minor_in_three():
    sc = compose("pop with piano chords, bass and drums in Bb major", 1, theme=clean(tune(TWINKLE)))
    c = composer_of(sc)
    first = [n for b in lead_bars(sc, c.theme_bar0, 4)[0] for n in b]
    assert sc.key_root == 10 and first[0].pitch % 12 == 10
    assert intervals([n.pitch for n in first]) == intervals([p for _, _, p in TWINKLE])
    w = compose("a waltz in 3/4 with strings and piano", 2, theme=clean(tune(WALTZ), meter=(3, 4)))
    cw = composer_of(w)
    assert w.meter == (3, 4) and (w.key_root, w.mode) == (2, "minor")
    bars, bpb = lead_bars(w, cw.theme_bar0, 3)
    assert [n.pitch % 12 for b in bars for n in b] == [p % 12 for _, _, p in WALTZ]


def test_the_harmony_is_fitted_under_the_tune():
    for prompt in ("pop with piano chords, bass and drums", "folk with acoustic guitar and fiddle"):
        th = clean(tune(TWINKLE))
        sc = compose(prompt, 3, theme=th)
        c = composer_of(sc)
        plain = composer_of(compose(prompt, 3))
        held = total = 0
        for b in range(4):
            i = c.theme_bar0 + b
            for t, d, p in TWINKLE:
                if b * 4 <= t < b * 4 + 4 and t == int(t):
                    ch = next(cc for a, e, cc in c.chords_of_bar(i) if a <= t - b * 4 < e)
                    held += p % 12 in ch.pcs
                    total += 1
        assert held >= 0.7 * total, (prompt, held, total)
        assert plain.theme_cells == () and c.theme_cells                     # the tune is what changed


def test_a_tune_given_live_changes_nothing_before_its_bar():
    sc = compose("deep house in C major with rhodes chords and a warm bass", 2)
    th = clean(tune(TWINKLE))
    live = with_theme(sc, th, 11)
    bpb = sc.beats_per_bar
    a = [(n.part, round(n.start, 4), n.pitch) for n in sc.notes_between(0, 10 * bpb)]
    b = [(n.part, round(n.start, 4), n.pitch) for n in live.notes_between(0, 10 * bpb)]
    assert a == b
    first = [n for bar in lead_bars(live, 11, 4)[0] for n in bar]
    assert intervals([n.pitch for n in first]) == intervals([p for _, _, p in TWINKLE])
    assert with_theme(live, None, 20).make_bar.__self__.theme_cells == ()


def test_a_piece_without_a_melody_gets_a_lead_for_the_tune():
    sc = compose("solo drums, a breakbeat", 1)
    assert not lead_of(sc)
    live = with_theme(sc, clean(tune(TWINKLE)), 4)
    assert lead_of(live) and len(live.parts) == len(sc.parts) + 1
    assert len({p.channel for p in live.parts}) == len(live.parts)


# ------------------------------------------------------------------ MIDI files
def smf(notes, tpq=480, with_chords=True, with_drums=True) -> bytes:
    mid = mido.MidiFile(type=1, ticks_per_beat=tpq)
    for ch, transpose, vel in [(0, 0, 90)] + ([(1, -12, 70)] if with_chords else []):
        tr = mido.MidiTrack()
        mid.tracks.append(tr)
        ev = []
        for t, d, p in notes:
            ev += [(int((t + 0.5) * tpq), "note_on", p + transpose, vel), (int((t + 0.5 + d * 0.9) * tpq), "note_off", p + transpose, 0)]
        now = 0
        for at, kind, p, v in sorted(ev):
            tr.append(mido.Message(kind, channel=ch, note=p, velocity=v, time=at - now))
            now = at
    if with_drums:
        tr = mido.MidiTrack()
        mid.tracks.append(tr)
        for k in range(16):
            tr.append(mido.Message("note_on", channel=9, note=36, velocity=100, time=0 if k == 0 else tpq - 10))
            tr.append(mido.Message("note_off", channel=9, note=36, velocity=0, time=10))
    buf = io.BytesIO()
    mid.save(file=buf)
    return buf.getvalue()


def test_a_midi_files_top_line_is_the_tune():
    notes = read_tune(smf(TWINKLE))
    assert min(n[0] for n in notes) == 0.0
    th = clean(notes)
    assert [n[2] for n in th.notes] == [p for _, _, p in TWINKLE]
    with pytest.raises(ValueError, match="not a Standard MIDI File"):
        read_tune(b"RIFF....WAVEfmt ")
    with pytest.raises(ValueError, match="no notes"):
        read_tune(smf([], with_chords=False))


def test_wb_theme_is_validated_on_arrival():
    c = parse_osc("/wb/theme", [1, smf(TWINKLE)], 2)
    assert c.kind == "theme" and len(c.theme_notes) >= len(TWINKLE)
    assert parse_osc("/wb/theme", [2, "record"], 2).chord == "record"
    for args, code in [([1, "sing"], "bad_value"), ([1, b"junk"], "bad_value"), ([1, 3], "bad_type"),
                       ([1, b"M" * 40000], "bad_value"), ([3, "stop"], "bad_slot"), ([1], "bad_args")]:
        with pytest.raises(WavebridgeError) as e:
            parse_osc("/wb/theme", args, 2)
        assert e.value.code == code, (args, e.value.code)


def test_render_theme_writes_the_tune_into_the_lead_of_the_midi_file(tmp_path):
    from bridge.ops.render import run_render

    (tmp_path / "tune.mid").write_bytes(smf(TWINKLE))
    args = SimpleNamespace(prompt="pop with piano chords, bass and drums", seconds=20.0, out=str(tmp_path / "t.wav"),
                           seed=1, bpm=None, midi=str(tmp_path / "t.mid"), soundfont=None, renderer="oscillators",
                           sample_rate=22050, explain=False, theme=str(tmp_path / "tune.mid"))
    assert run_render(args) == 0
    mid = mido.MidiFile(str(tmp_path / "t.mid"))
    lead = [tr for tr in mid.tracks if any(m.type == "track_name" and m.name == "lead" for m in tr)]
    assert lead, [next((m.name for m in tr if m.type == "track_name"), "?") for tr in mid.tracks]
    t, ons = 0, []
    for m in lead[0]:
        t += m.time
        if m.type == "note_on" and m.velocity > 0:
            ons.append((t / mid.ticks_per_beat, m.note))
    ps = [p for _, p in sorted(ons)]
    want = intervals([p for _, _, p in TWINKLE])
    found = any(intervals(ps[k:k + len(TWINKLE)]) == want for k in range(len(ps) - len(TWINKLE) + 1))
    assert found and sorted(ons)[0][0] < 8 * 4                                  # within the first 8 bars
    args.theme = str(tmp_path / "missing.mid")
    assert run_render(args) == 2


# ------------------------------------------------------------------ a running daemon
@pytest.fixture
def daemon():
    yield from core_daemon("th")


def _playing(d, prompt="pop with piano chords, bass and drums in D major at 120 bpm"):
    from plugin_stub.reader import RingReader

    r = RingReader(d.name, max_block=1024).attach()
    d.submit(Command("play", slot=d.name, prompt=prompt, seed=2))
    assert wait(lambda: r.playing and r.buffered() >= 1024, 10)
    return r


def _keep_reading(r, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if r.buffered() >= 1024:
            r.read(1024)
        time.sleep(0.01)


def _theme_of(d):
    job = d.slots[d.name].sm.job
    return composer_of(job.stream.state.score)


def test_a_tune_sent_as_a_midi_file_is_sung_from_the_next_bar(daemon):
    d = daemon
    r = _playing(d)
    try:
        _keep_reading(r, 1.0)
        cmd = parse_osc("/wb/theme", [1, smf(TWINKLE)], 1)
        cmd.slot = d.name
        d.submit(cmd)
        assert wait(lambda: _theme_of(d).theme_cells != (), 6, step=0.01)
        c = _theme_of(d)
        sc = d.slots[d.name].sm.job.stream.state.score
        first = [n for b in lead_bars(sc, c.theme_bar0, 4)[0] for n in b]
        assert intervals([n.pitch for n in first]) == intervals([p for _, _, p in TWINKLE])
        assert first[0].pitch % 12 == 2                                         # into the piece's D major
        assert d.slots[d.name].theme == f"{len(TWINKLE)} notes"
        assert not [e for e in _drain(d) if e.kind == "error"]
    finally:
        r.detach()


def _drain(d):
    return drain(d)


def test_a_tune_played_on_the_slots_channel_while_recording_becomes_its_theme(daemon):
    d = daemon
    r = _playing(d)
    try:
        m = MidiMapper(MidiMap.from_dict({"channels": {"1": 1}}), 1, armed=d.theme_armed)
        rec = parse_osc("/wb/theme", [1, "record"], 1)
        rec.slot = 1
        d.theme_armed.add(1)                  # what Daemon.submit does for slot 1's record …
        rec.slot = d.name                     # … for the test's own ring
        d.theme_armed.add(d.name)
        d.submit(rec)
        t0 = time.monotonic_ns()
        sent = []
        for t, dur, p in TWINKLE:             # played at 120 bpm: a beat is 0.5 s (arrival times)
            for msg, at in ((mido.Message("note_on", note=p, velocity=90), t), (mido.Message("note_off", note=p), t + dur * 0.9)):
                for c in m.translate(msg, t0 + int(at * 0.5e9)):
                    assert c.kind == "theme_key"           # recording: no prompt starts
                    c.slot = d.name
                    sent.append(c)
        sent.sort(key=lambda c: c.arrival_ns)
        for c in sent:
            d.submit(c)
        stop = parse_osc("/wb/theme", [1, "stop"], 1)
        stop.slot = d.name
        d.submit(stop)
        _keep_reading(r, 0.3)
        assert wait(lambda: _theme_of(d).theme_cells != (), 6, step=0.01)
        c = _theme_of(d)
        sc = d.slots[d.name].sm.job.stream.state.score
        first = [n for b in lead_bars(sc, c.theme_bar0, 4)[0] for n in b]
        assert intervals([n.pitch for n in first]) == intervals([p for _, _, p in TWINKLE])
        assert d.name not in d.theme_armed
    finally:
        r.detach()


def test_an_empty_recording_is_a_clear_error_and_leaves_the_slot_as_it_was(daemon):
    d = daemon
    r = _playing(d)
    try:
        for what in ("record", "stop"):
            d.submit(Command("theme", slot=d.name, chord=what))
        assert wait(lambda: any(e.kind == "error" for e in list(d.events.queue)), 5)
        err = [e for e in _drain(d) if e.kind == "error"]
        assert [e.code for e in err] == ["no_theme"] and "play a few notes" in err[0].message
        _keep_reading(r, 0.5)
        assert _theme_of(d).theme_cells == () and d.slots[d.name].theme == ""
        assert r.underrun_frames == 0
    finally:
        r.detach()


def test_a_tune_in_three_varied_splits_its_held_note_on_a_beat():
    """Where the theme's rhythm is varied, a held bar-long note splits on two (one beat and two),
    never into two dotted quarters — a hemiola that would be heard as a bar of two."""
    for seed in range(4):
        w = compose("a waltz in 3/4 with strings and piano", seed, theme=clean(tune(WALTZ), meter=(3, 4)))
        lead = {j for j, p in enumerate(w.parts) if p.role == "lead"}
        for i in range(composer_of(w).theme_bar0, 48):
            on = sorted(n.start - i * 3 for n in w.bar(i)[0] if n.part in lead)
            assert not (len(on) == 2 and abs(on[0]) < 0.05 and 1.1 < on[1] < 1.9), (seed, i, on)
