"""Harmony link: the chords a player steers a slot with, and the tunes they give it, spliced
in at the read head.

A chord comes as a symbol (``/wb/chord SLOT "Am7/G"``) or as the keys held on a MIDI channel
mapped to the slot as harmony (:mod:`bridge.control.midi`). It is named
(:mod:`engine.compose.chordread`: a single key is a root, a cluster its strongest triad), the
key is inferred from the chords played so far, and the slot's music follows from its next beat
(or bar, or at once, by the command's ``quantize``): a continuation of the playing stream whose
score has the chord from that beat on (:meth:`engine.backend.Backend.continue_with`) is spliced in like
a re-timed restart, its crossfade ending just before the beat — so the chord is struck on the
beat, the drums and the form go on untouched, and the change is heard within one beat plus the
splice guard and the crossfade. An empty symbol (or, without ``latch``, all keys up) gives the
composed progression back the same way. A chord held while a new prompt starts is the new
job's harmony from its first beat.

A **tune** (``/wb/theme``) comes as a Standard MIDI File, or is recorded: ``/wb/theme SLOT
record`` arms the slot, and the keys then played on its MIDI channel (:mod:`bridge.control.midi`
sends them as ``theme_key`` commands, not as prompts) are the phrase, until ``/wb/theme SLOT
stop`` or :data:`REC_IDLE_S` without a key. The phrase is cleaned (:func:`engine.compose.theme.clean`:
one note at a time, on the meter's grid, at most 4 bars) and the lead sings it from the slot's
next bar line (:func:`engine.compose.composer.with_theme`: developed over each phrase, the
harmony fitted under it); ``clear`` gives the composer's own motifs back. A recording with no
playable note is a ``no_theme`` error and the slot stays as it was.

A change for a slot in a crossfade, or whose beat lies beyond what the ring holds yet, waits
(:meth:`HarmonyLink.turn` tries again every engine turn); a newer chord (or tune) replaces a
waiting one. Owned by :class:`bridge.core.engine_loop.EngineThread`. ``[engine]``
"""
from __future__ import annotations

import collections
import logging
import time
from dataclasses import dataclass, field

from engine.compose.chordread import infer_key, name_chord, parse_symbol
from engine.compose.composer import composer_of, steer, with_theme
from engine.compose.theme import ThemeError, clean, from_seconds
from engine.hostsync import stream_frame

from bridge.core.commands import Command
from bridge.core.events import Event
from bridge.core.slotstate import PLAYING

log = logging.getLogger("wavebridge.harmony")

MARGIN_S = 0.004          # the crossfade ends this long before the chord's beat
SETTLE_S = 0.015          # keys pressed together arrive a few ms apart: a keyboard's chord settles first
HISTORY = 8               # chords remembered for the key
REC_IDLE_S = 2.5          # a recording ends this long after the last key was let go
REC_MAX_S = 30.0          # … and never runs longer than this


@dataclass
class Pending:
    """A chord (or tune) change planned on one job's stream, waiting to be spliced."""

    cmd: object
    chord: object             # Chord, or None: the composed progression
    key: tuple | None
    theme: object = None      # a tune change: the Theme (None with ``clear``)
    is_theme: bool = False
    job: object = None        # the Job its beat was planned on
    origin: int = 0           # ring frame of that job's frame 0
    f_beat: int = 0           # the beat's stream frame
    beat: float = 0.0         # the music's beat it lands on


@dataclass
class SlotHarmony:
    chord: object = None                                      # in force (None: composed)
    key: tuple | None = None                                  # (tonic, mode) while steered
    history: collections.deque = field(default_factory=lambda: collections.deque(maxlen=HISTORY))
    pending: Pending | None = None
    theme: object = None                                      # the tune it sings (a Theme), or None
    pending_theme: Pending | None = None
    rec: dict | None = None                                   # a recording: {"t0", "last", "held", "notes"}


class HarmonyLink:
    """Chord steering for every slot of one daemon. ``[engine]``

    ``owner``: the daemon; ``hostlink``, ``writer``, ``commands``: the engine thread's host
    link, write pipeline and command applier (whose :meth:`splice_continuation` does the splice).
    """

    def __init__(self, owner, hostlink, writer, commands):
        self.owner = owner
        self.hostlink = hostlink
        self.writer = writer
        self.commands = commands
        self.slots: dict = {}                # slot name → SlotHarmony
        self.latency_ms: collections.deque = collections.deque(maxlen=256)   # arrival → beat at the read head
        self.changes = 0

    def state(self, name) -> SlotHarmony:
        st = self.slots.get(name)
        if st is None:
            st = self.slots[name] = SlotHarmony()
        return st

    # ------------------------------------------------------------------ commands
    def chord(self, cmd) -> None:
        """A ``chord`` command: name it, remember it, and plan its splice. ``[engine]``"""
        d = self.owner
        slot = d.slots[cmd.slot]
        st = self.state(slot.name)
        if cmd.notes:
            chord = name_chord(cmd.notes, st.key or self._score_key(slot))
        elif cmd.source in ("midi", "keys") and cmd.latch:
            return                             # all keys up on a latched channel: the chord holds
        elif cmd.chord:
            chord = parse_symbol(cmd.chord)    # validated on the control side already
        else:
            chord = None
        if chord is None and st.chord is None and st.pending is None:
            return                             # nothing steered: nothing to give back
        if chord is not None and st.pending is None and chord == st.chord:
            return                             # the same chord again (a key re-struck)
        key = self._key(slot, st, chord)
        st.chord, st.key = chord, key
        slot.chord = "" if chord is None else chord.symbol
        slot.chord_key = "" if key is None else f"{_NAMES[key[0]]} {key[1]}"
        st.pending = Pending(cmd, chord, key)
        self._try(slot, st, st.pending)

    def _score_key(self, slot) -> tuple[int, str] | None:
        job = slot.sm.job
        score = getattr(getattr(getattr(job, "stream", None), "state", None), "score", None)
        if score is None:
            return None
        return score.key_root, ("minor" if score.mode in ("minor", "dorian", "phrygian", "locrian") else "major")

    def _key(self, slot, st: SlotHarmony, chord) -> tuple[int, str] | None:
        """The key the chords played imply; one chord alone keeps the piece's key when it
        belongs to it, else is its own tonic. ``None`` when released (the piece's key)."""
        if chord is None:
            st.history.clear()
            return None
        st.history.append(chord)
        home = self._score_key(slot)
        if len(set(st.history)) >= 2:
            tonic, mode, _ = infer_key(st.history, holds=chord)
            return tonic, mode
        if home is not None:
            tonic, mode = home
            steps = (0, 2, 3, 5, 7, 8, 10) if mode == "minor" else (0, 2, 4, 5, 7, 9, 11)
            if all((pc - tonic) % 12 in steps for pc in chord.pcs):
                return home
        return chord.root, ("minor" if 3 in chord.intervals and 4 not in chord.intervals else "major")

    def started(self, slot, job) -> None:
        """A new job on ``slot``: a held chord is its harmony from the first beat, a given tune
        its lead's motif from the first bar after the intro. ``[engine]``"""
        st = self.slots.get(slot.name)
        if st is None or (st.chord is None and st.theme is None) or job.stream is None:
            return
        chord, key, theme = st.chord, st.key, st.theme

        def change(score):
            if theme is not None:
                score = with_theme(score, theme)
            return steer(score, 0.0, chord, key) if chord is not None else score

        try:
            self.owner.backend.restart_with(job.stream, change)
        except Exception:  # noqa: BLE001 — the prompt still plays, composed
            log.exception("slot %s: could not carry the chord or tune into the new job", slot.name)
        st.pending = st.pending_theme = None

    # ------------------------------------------------------------------ tunes
    def theme(self, cmd) -> None:
        """A ``theme`` command: record, stop, clear, or a tune given whole. ``[engine]``"""
        slot = self.owner.slots[cmd.slot]
        st = self.state(slot.name)
        what = cmd.chord
        if what == "record":
            st.rec = {"t0": cmd.arrival_ns or time.monotonic_ns(), "last": 0, "held": {}, "notes": []}
            slot.theme = "recording"
        elif what == "stop":
            self._end_recording(slot, st, cmd)
        elif what == "clear":
            st.rec = None
            self._set_theme(slot, st, None, cmd)
        elif cmd.theme_notes:
            try:
                self._set_theme(slot, st, clean(cmd.theme_notes, self._meter(slot)), cmd)
            except ThemeError as e:
                self._no_theme(slot, st, cmd, f"the MIDI file gives no tune: {e}")

    def theme_key(self, cmd) -> None:
        """A key on a recording slot's channel (note, velocity; velocity 0 lets go). ``[engine]``"""
        slot = self.owner.slots.get(cmd.slot)
        st = self.slots.get(getattr(slot, "name", None))
        if slot is None or st is None or st.rec is None or not cmd.notes:
            return
        rec, note, t = st.rec, int(cmd.notes[0]), cmd.arrival_ns or time.monotonic_ns()
        if cmd.value > 0:
            rec["held"][note] = (t, int(cmd.value))
        elif note in rec["held"]:
            t_on, vel = rec["held"].pop(note)
            rec["notes"].append(((t_on - rec["t0"]) * 1e-9, (t - rec["t0"]) * 1e-9, note, vel))
        rec["last"] = t

    def _meter(self, slot):
        score = getattr(getattr(getattr(slot.sm.job, "stream", None), "state", None), "score", None)
        return score.meter if score is not None else (4, 4)

    def _bpm(self, slot) -> float:
        job = slot.sm.job
        grid = None if job is None or job.done else self.owner.backend.beat_grid(job.stream)
        if grid is not None:
            return float(grid.tempo.bpm_at(self.owner.backend.render_head(job.stream)))
        score = getattr(getattr(getattr(job, "stream", None), "state", None), "score", None)
        return float(score.bpm) if score is not None else 120.0

    def _end_recording(self, slot, st: SlotHarmony, cmd) -> None:
        rec, st.rec = st.rec, None
        if rec is None:
            return
        now = time.monotonic_ns()
        notes = list(rec["notes"]) + [((t - rec["t0"]) * 1e-9, (now - rec["t0"]) * 1e-9, n, v)
                                      for n, (t, v) in rec["held"].items()]
        try:
            theme = clean(from_seconds(notes, self._bpm(slot)), self._meter(slot))
        except ThemeError as e:
            self._no_theme(slot, st, cmd, f"the recording gives no tune ({e}): play a few notes on the slot's "
                                          f"MIDI channel after /wb/theme {cmd.slot} record")
            return
        self._set_theme(slot, st, theme, cmd)

    def _no_theme(self, slot, st: SlotHarmony, cmd, message: str) -> None:
        self.owner.theme_armed.discard(slot.name)
        slot.theme = "" if st.theme is None else f"{len(st.theme.notes)} notes"
        self.owner.emit(Event("error", slot=slot.name, code="no_theme", message=message,
                              reply_to=getattr(cmd, "reply_to", None)))

    def _set_theme(self, slot, st: SlotHarmony, theme, cmd) -> None:
        self.owner.theme_armed.discard(slot.name)
        st.theme = theme
        slot.theme = "" if theme is None else f"{len(theme.notes)} notes"
        if theme is not None:
            log.info("slot %s: a tune of %d notes (%d bars): %s", slot.name, len(theme.notes), theme.bars,
                     " ".join(_NAMES[p % 12] + str(p // 12 - 1) for p in theme.pitches[:24]))
        st.pending_theme = Pending(cmd or Command("theme", slot=slot.name), None, None, theme=theme, is_theme=True)
        self._try(slot, st, st.pending_theme)

    def _recordings(self) -> None:
        now = time.monotonic_ns()
        for name, st in self.slots.items():
            rec = st.rec
            if rec is None:
                continue
            idle = rec["notes"] and not rec["held"] and now - rec["last"] > REC_IDLE_S * 1e9
            if idle or now - rec["t0"] > REC_MAX_S * 1e9:
                slot = self.owner.slots.get(name)
                if slot is not None:
                    self._end_recording(slot, st, None)

    def forget(self, slot_name) -> None:
        self.slots.pop(slot_name, None)

    def turn(self) -> None:
        """End recordings gone quiet; try every waiting change again. ``[engine]``"""
        self._recordings()
        for name, st in list(self.slots.items()):
            for p in (st.pending, st.pending_theme):
                if p is None:
                    continue
                slot = self.owner.slots.get(name)
                if slot is None:
                    self.slots.pop(name, None)
                    break
                self._try(slot, st, p)

    # ------------------------------------------------------------------ the splice
    def _plan(self, slot, p: Pending) -> bool:
        """Fix the beat the change lands on, on the playing job. False: not now."""
        d = self.owner
        job = slot.sm.job
        grid = d.backend.beat_grid(job.stream)
        if grid is None:
            return False
        origin = self.hostlink.start_at.get(slot.name)
        if origin is None or origin[0] != job.job:
            return False
        ring = slot.ring
        rr, sr = ring.sample_rate, d.backend.sample_rate
        lead = self.writer.guard(slot) + self.writer.xfade_frames(slot) + int(MARGIN_S * rr)
        f_min = stream_frame(max(ring.read_index, origin[1]) + lead, origin[1], rr, sr)
        q = getattr(p.cmd, "quantize", "beat")
        q = "bar" if p.is_theme else q if q in ("beat", "bar", "off") else "beat"
        f_b = grid.next_boundary_frame(f_min, q)
        p.job, p.origin, p.f_beat = job, origin[1], f_b
        p.beat = grid.tempo.beat_at(f_b)
        if q != "off":
            p.beat = float(round(p.beat, 6))
        return True

    def _done(self, st: SlotHarmony, p: Pending) -> None:
        if p.is_theme:
            st.pending_theme = None
        else:
            st.pending = None

    def _try(self, slot, st: SlotHarmony, p: Pending) -> None:
        d = self.owner
        sm = slot.sm
        job = sm.job
        if job is None or job.done or sm.state != PLAYING:
            if job is None or job.done:
                self._done(st, p)              # nothing plays: the change waits for the next job
            return
        if d.backend.beat_grid(job.stream) is None:
            self._done(st, p)
            d.emit(Event("error", slot=slot.name, code="unsupported",
                         message=f"the {d.backend.name} backend has no score to steer: "
                                 f"{'/wb/theme' if p.is_theme else '/wb/chord'} needs the synth",
                         reply_to=getattr(p.cmd, "reply_to", None)))
            return
        if not p.is_theme and (p.cmd.notes or p.cmd.source in ("midi", "keys")) and time.monotonic_ns() - (p.cmd.arrival_ns or 0) < SETTLE_S * 1e9:
            return                             # more keys of the same chord may be on their way
        if p.job is not job and not self._plan(slot, p):
            return
        ring = slot.ring
        rr, sr = ring.sample_rate, d.backend.sample_rate
        xf = self.writer.xfade_frames(slot)
        guard = self.writer.guard(slot)
        at = p.origin + int(round(p.f_beat * rr / sr)) - xf - int(MARGIN_S * rr)
        if at < ring.read_index + guard:
            p.job = None                       # the beat came too close (a slow turn): the next one
            if not self._plan(slot, p):
                return
            at = p.origin + int(round(p.f_beat * rr / sr)) - xf - int(MARGIN_S * rr)
        f_at = int(round((at - p.origin) * sr / rr))
        if not self.commands.can_splice(slot, job, at, f_at):
            return                             # not in the ring yet (or no stream to spare): wait
        if p.is_theme:
            bar0 = int(round(p.beat / composer_of(job.stream.state.score).bpb))
            change = (lambda score: with_theme(score, p.theme, bar0))  # noqa: E731
        else:
            change = (lambda score: steer(score, p.beat, p.chord, p.key))  # noqa: E731
        try:
            stream = d.backend.continue_with(job.stream, f_at, job.job, change)
        except Exception as e:  # noqa: BLE001 — the slot plays on as it was
            self._done(st, p)
            log.exception("slot %s: chord or tune change failed", slot.name)
            d.emit(Event("error", slot=slot.name, code="internal", message=f"chord or tune change failed: {e}",
                         reply_to=getattr(p.cmd, "reply_to", None)))
            return
        self._done(st, p)
        if stream is None:
            return
        self.commands.splice_continuation(slot, job, stream, at, f_at)
        if p.is_theme:
            log.info("slot %s: the tune from bar %d, ring frame %d", slot.name, bar0, at)
            return
        self.changes += 1
        arrival = getattr(p.cmd, "arrival_ns", 0) or time.monotonic_ns()
        heard_in = (at + xf + int(MARGIN_S * rr) - ring.read_index) / rr
        self.latency_ms.append(1e3 * ((time.monotonic_ns() - arrival) * 1e-9 + heard_in))
        log.info("slot %s: chord %s (key %s) from beat %.2f, ring frame %d", slot.name,
                 "composed" if p.chord is None else p.chord.symbol,
                 "-" if p.key is None else f"{_NAMES[p.key[0]]} {p.key[1]}", p.beat, at)


_NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
