"""Harmony link: the chords a player steers a slot with, spliced in at the read head.

A chord comes as a symbol (``/wb/chord SLOT "Am7/G"``) or as the keys held on a MIDI channel
mapped to the slot as harmony (:mod:`bridge.control.midi`). It is named
(:mod:`engine.compose.chordread`: a single key is a root, a cluster its strongest triad), the
key is inferred from the chords played so far, and the slot's music follows from its next beat
(or bar, or at once, by the command's ``quantize``): a continuation of the playing stream whose
score has the chord from that beat on (:meth:`engine.backend.Backend.steer`) is spliced in like
a re-timed restart, its crossfade ending just before the beat — so the chord is struck on the
beat, the drums and the form go on untouched, and the change is heard within one beat plus the
splice guard and the crossfade. An empty symbol (or, without ``latch``, all keys up) gives the
composed progression back the same way. A chord held while a new prompt starts is the new
job's harmony from its first beat.

A chord for a slot in a crossfade, or whose beat lies beyond what the ring holds yet, waits
(:meth:`HarmonyLink.turn` tries again every engine turn); a newer chord replaces a waiting one.
Owned by :class:`bridge.core.engine_loop.EngineThread`. ``[engine]``
"""
from __future__ import annotations

import collections
import logging
import time
from dataclasses import dataclass, field

from engine.compose.chordread import infer_key, name_chord, parse_symbol
from engine.hostsync import stream_frame

from bridge.core.events import Event
from bridge.core.slotstate import PLAYING

log = logging.getLogger("wavebridge.harmony")

MARGIN_S = 0.004          # the crossfade ends this long before the chord's beat
SETTLE_S = 0.015          # keys pressed together arrive a few ms apart: a keyboard's chord settles first
HISTORY = 8               # chords remembered for the key


@dataclass
class Pending:
    """A chord change planned on one job's stream, waiting to be spliced."""

    cmd: object
    chord: object             # Chord, or None: the composed progression
    key: tuple | None
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
        elif cmd.source == "midi" and cmd.latch:
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
        self._try(slot, st)

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
            tonic, mode, _ = infer_key(st.history)
            return tonic, mode
        if home is not None:
            tonic, mode = home
            steps = (0, 2, 3, 5, 7, 8, 10) if mode == "minor" else (0, 2, 4, 5, 7, 9, 11)
            if all((pc - tonic) % 12 in steps for pc in chord.pcs):
                return home
        return chord.root, ("minor" if 3 in chord.intervals and 4 not in chord.intervals else "major")

    def started(self, slot, job) -> None:
        """A new job on ``slot``: a held chord is its harmony from the first beat. ``[engine]``"""
        st = self.slots.get(slot.name)
        if st is None or st.chord is None or job.stream is None:
            return
        try:
            self.owner.backend.steer_start(job.stream, st.chord, st.key)
        except Exception:  # noqa: BLE001 — the prompt still plays, composed
            log.exception("slot %s: could not carry chord %s into the new job", slot.name, st.chord.symbol)
        st.pending = None

    def forget(self, slot_name) -> None:
        self.slots.pop(slot_name, None)

    def turn(self) -> None:
        """Try every waiting chord change again. ``[engine]``"""
        for name, st in list(self.slots.items()):
            if st.pending is not None:
                slot = self.owner.slots.get(name)
                if slot is None:
                    self.slots.pop(name, None)
                    continue
                self._try(slot, st)

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
        q = p.cmd.quantize if p.cmd.quantize in ("beat", "bar", "off") else "beat"
        f_b = grid.next_boundary_frame(f_min, q)
        p.job, p.origin, p.f_beat = job, origin[1], f_b
        p.beat = grid.tempo.beat_at(f_b)
        if q != "off":
            p.beat = float(round(p.beat, 6))
        return True

    def _try(self, slot, st: SlotHarmony) -> None:
        d = self.owner
        p = st.pending
        sm = slot.sm
        job = sm.job
        if job is None or job.done or sm.state != PLAYING:
            if job is None or job.done:
                st.pending = None              # nothing plays: the chord waits for the next job
            return
        if d.backend.beat_grid(job.stream) is None:
            st.pending = None
            d.emit(Event("error", slot=slot.name, code="unsupported",
                         message=f"the {d.backend.name} backend has no score to steer: /wb/chord needs the synth",
                         reply_to=p.cmd.reply_to))
            return
        if (p.cmd.notes or p.cmd.source == "midi") and time.monotonic_ns() - (p.cmd.arrival_ns or 0) < SETTLE_S * 1e9:
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
        try:
            stream = d.backend.steer(job.stream, f_at, job.job, p.beat, p.chord, p.key)
        except Exception as e:  # noqa: BLE001 — the slot plays on as it was
            st.pending = None
            log.exception("slot %s: chord change failed", slot.name)
            d.emit(Event("error", slot=slot.name, code="internal", message=f"chord change failed: {e}",
                         reply_to=p.cmd.reply_to))
            return
        if stream is None:
            st.pending = None
            return
        self.commands.splice_continuation(slot, job, stream, at, f_at)
        st.pending = None
        self.changes += 1
        arrival = p.cmd.arrival_ns or time.monotonic_ns()
        heard_in = (at + xf + int(MARGIN_S * rr) - ring.read_index) / rr
        self.latency_ms.append(1e3 * ((time.monotonic_ns() - arrival) * 1e-9 + heard_in))
        log.info("slot %s: chord %s (key %s) from beat %.2f, ring frame %d", slot.name,
                 "composed" if p.chord is None else p.chord.symbol,
                 "-" if p.key is None else f"{_NAMES[p.key[0]]} {p.key[1]}", p.beat, at)


_NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
