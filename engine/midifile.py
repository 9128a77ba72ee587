"""midifile: a :class:`~engine.score.Score` as a Standard MIDI File (mido), to drag into a DAW.

Type 1 file: a conductor track (tempo, time signature, key signature, the section names as
markers) and one track per part (name, program change, volume/pan/reverb/chorus CCs, notes,
controls and pitch bends). Drums are on channel 10. Runs where the ``render`` command runs (the
CLI, or the ``[engine]`` thread); mido is imported lazily.
"""
from __future__ import annotations

import math

from engine.score import Score

TICKS_PER_BEAT = 480
_SIG_NAMES = ["C", "Db", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]
_MINOR_NAMES = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "G#", "A", "Bb", "B"]
#: semitones from a mode's tonic down to its relative major (for the key signature)
_MODE_TO_MAJOR = {"major": 0, "lydian": 7, "mixolydian": 5, "dorian": 10, "phrygian": 8, "locrian": 1}


def key_signature_name(root: int, mode: str) -> str:
    """mido's key name for a tonic and mode: ``"Am"``, ``"F#m"``, ``"Bb"`` (modes by their signature)."""
    if mode == "minor":
        return _MINOR_NAMES[root % 12] + "m"
    return _SIG_NAMES[(root + _MODE_TO_MAJOR.get(mode, 0)) % 12]


def score_bars(score: Score, seconds: float | None = None, bars: int | None = None) -> int:
    """How many bars ``seconds`` (or ``bars``) of the score take; 32 bars when neither is given."""
    if bars is not None:
        n = int(bars)
    elif seconds is not None:
        n = math.ceil(float(seconds) * score.bpm / 60.0 / score.beats_per_bar - 1e-9)
    else:
        n = 32
    if n < 1:
        raise ValueError("need at least one bar")
    return n


def write_midi(score: Score, path, seconds: float | None = None, bars: int | None = None) -> int:
    """Write the first ``bars`` bars (or ``seconds`` of music) of ``score`` to ``path`` as a
    Standard MIDI File. Returns the number of notes written. ``[engine]`` (or the CLI)"""
    import mido

    n_bars = score_bars(score, seconds, bars)
    end_beat = n_bars * score.beats_per_bar
    if seconds is not None and bars is None:
        end_beat = min(end_beat, float(seconds) * score.bpm / 60.0)

    def tick(beat: float) -> int:
        return max(0, int(round(beat * TICKS_PER_BEAT)))

    mid = mido.MidiFile(type=1, ticks_per_beat=TICKS_PER_BEAT, charset="utf-8")   # a prompt in any script
    num, den = score.meter
    conductor = [(0, 0, mido.MetaMessage("track_name", name=f"wavebridge: {score.prompt}"[:120])),
                 (0, 0, mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(score.bpm))),
                 (0, 0, mido.MetaMessage("time_signature", numerator=num, denominator=den,
                                         clocks_per_click=24, notated_32nd_notes_per_beat=8)),
                 (0, 0, mido.MetaMessage("key_signature", key=key_signature_name(score.key_root, score.mode)))]
    if score.section_of is not None:
        last = None
        for i in range(n_bars):
            name = score.section_of(i)
            if name != last:
                conductor.append((tick(i * score.beats_per_bar), 1, mido.MetaMessage("marker", text=name)))
                last = name
    mid.tracks.append(_track(conductor, tick(end_beat)))

    per_part: list[list] = [[] for _ in score.parts]
    for k, p in enumerate(score.parts):
        ch = p.channel
        ev = per_part[k]
        ev.append((0, 0, mido.MetaMessage("track_name", name=p.name)))
        ev.append((0, 1, mido.Message("program_change", channel=ch, program=p.program & 127)))
        for num_, val in ((7, p.level), (10, (p.pan + 1) / 2), (91, p.reverb), (93, p.chorus)):
            ev.append((0, 2, mido.Message("control_change", channel=ch, control=num_,
                                          value=max(0, min(127, int(round(val * 127)))))))
        if not p.is_drums:
            for cc, val in ((101, 0), (100, 0), (6, 2), (38, 0)):   # pitch-bend range: ±2 semitones
                ev.append((0, 2, mido.Message("control_change", channel=ch, control=cc, value=val)))
    count = 0
    end_t = tick(end_beat)
    for i in range(n_bars):
        notes, controls = score.bar(i)
        for n in notes:
            if n.start >= end_beat:
                continue
            p = score.parts[n.part]
            t0 = tick(n.start)
            t1 = min(max(t0 + 1, tick(n.start + n.dur)), end_t)
            if t1 <= t0:
                continue
            per_part[n.part].append((t0, 4, mido.Message("note_on", channel=p.channel, note=n.pitch, velocity=n.vel)))
            per_part[n.part].append((t1, 3, mido.Message("note_off", channel=p.channel, note=n.pitch, velocity=0)))
            count += 1
        for c in controls:
            if c.beat >= end_beat:
                continue
            p = score.parts[c.part]
            if c.kind == "bend":
                pw = max(-8192, min(8191, int(round(c.value / 2.0 * 8191))))
                msg = mido.Message("pitchwheel", channel=p.channel, pitch=pw)
            else:
                msg = mido.Message("control_change", channel=p.channel, control=int(c.number) & 127,
                                   value=max(0, min(127, int(round(c.value)))))
            per_part[c.part].append((tick(c.beat), 2, msg))
    for ev in per_part:
        mid.tracks.append(_track(ev, end_t))
    mid.save(path)
    return count


def _track(events: list, end_tick: int):
    """Absolute-tick events → a track with delta times. At one tick: meta, program, controls,
    note-offs, then note-ons (the order key), so a repeated pitch is released before it sounds again."""
    import mido

    track = mido.MidiTrack()
    now = 0
    for t, _, msg in sorted(events, key=lambda e: (e[0], e[1])):
        track.append(msg.copy(time=t - now))
        now = t
    track.append(mido.MetaMessage("end_of_track", time=max(0, end_tick - now)))
    return track


MAX_TUNE_NOTES = 4096


def read_tune(data: bytes) -> list[tuple[float, float, int, int]]:
    """A Standard MIDI File's notes (every channel but the drums'), as ``(start_beat, dur_beats,
    pitch, velocity)`` in quarter-note beats from its first note — a tune for
    :func:`engine.compose.theme.clean`. Raises ``ValueError`` (one line) for bytes that are not
    a MIDI file, or a file without notes."""
    import io

    import mido

    try:
        mid = mido.MidiFile(file=io.BytesIO(bytes(data)))
    except Exception as e:  # noqa: BLE001 — mido raises OSError, EOFError, KeyError, ValueError …
        raise ValueError(f"not a Standard MIDI File ({type(e).__name__})") from None
    tpq = mid.ticks_per_beat or 480
    if mid.type == 2:
        raise ValueError("a type 2 MIDI file (independent patterns) is not a tune")
    notes, held = [], {}
    for track in mid.tracks:
        t = 0
        for msg in track:
            t += msg.time
            if msg.type not in ("note_on", "note_off") or msg.channel == 9:
                continue
            key = (msg.channel, msg.note)
            if msg.type == "note_on" and msg.velocity > 0:
                held[key] = (t, msg.velocity)
            elif key in held:
                t0, vel = held.pop(key)
                notes.append((t0 / tpq, (t - t0) / tpq, msg.note, vel))
            if len(notes) > MAX_TUNE_NOTES:
                raise ValueError(f"more than {MAX_TUNE_NOTES} notes: not a tune")
    if not notes:
        raise ValueError("the MIDI file has no notes (drums aside)")
    first = min(n[0] for n in notes)
    return sorted((a - first, d, p, v) for a, d, p, v in notes)
