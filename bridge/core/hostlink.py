"""Host link: the DAW's transport inside the daemon — tempo and bar lock, quantized changes.

Owns, per slot, the last ``/wb/transport`` the plugin sent (the host's bpm, meter, speed and
beat at the ring frame its read head was playing, plus the command's arrival time) and applies
it to the slot's playing stream through the backend's beat grid (:mod:`engine.hostsync`):

- **lock** (:meth:`HostLink.transport`): the ring frame becomes a stream frame (the job's first
  frame was written at ring frame ``start_at``; the backend's rate may differ from the ring's)
  and the stream's tempo map follows the host from its render head on;
- **start** (:meth:`HostLink.started`): a job started while the host rolls begins in phase —
  where its first frame will be heard is estimated on the wall clock (an idle ring plays it at
  the next host block; a splice lands ``guard`` frames ahead of the read head);
- **quantize** (:meth:`HostLink.defer`): ``/wb/play … beat|bar`` on a playing slot is held back
  (a timer puts it back on the engine queue) so that its crossfade ends on the next beat or bar
  line, and the new stream's grid starts so that its first beat line is that line. The grid is
  the host's when the slot follows one, else the playing stream's own. A newer play or stop on
  the slot drops a held one (answered with ``/wb/done … replaced``);
- **musicgen** gets the host's tempo in its prompt (``…, 97 bpm``) unless it names one.

All of it runs on the ``[engine]`` thread (called by :class:`bridge.core.engine_loop.EngineThread`), except
the timers, which only enqueue. Never raises into the engine loop for bad host data: a report
that does not fit the slot's stream is ignored.
"""
from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass

from engine.hostsync import HostPosition, stream_frame

from bridge.core.events import Event

log = logging.getLogger("wavebridge.hostlink")

RETIME_RATIO = 0.005              # a host tempo this far from the audible one restarts the stream re-timed
RETIME_EVERY_S = 1.5              # at most one re-timed restart per slot per this much audio (tempo ramps glide)
RELOCATE_BEATS = 0.25             # a bar phase this far off (a relocate, a loop of odd length) restarts in phase
RETIME_MARGIN_S = 0.050           # the continuation's start-up (its 0.5 s preroll, first block) before its splice
MAX_AGE_NS = 2_000_000_000        # a transport report older than this no longer places a start
SCHED_MARGIN_S = 0.015            # a held play's start-up (compose, first chunk) before it splices
EARLY_S = 0.080                   # a held play with an exact splice frame is applied this much sooner
_BPM_WORD = re.compile(r"\b\d{2,3}(\.\d+)?\s*bpm\b", re.I)


@dataclass
class HostState:
    """The last transport report of one slot."""

    speed: float
    bpm: float
    beats_per_bar: float
    beat: float                   # absolute host beat at ring frame ``read_index``
    read_index: int               # -1: the plugin had no ring
    arrival_ns: int

    def beat_at_ns(self, t_ns: int) -> float:
        """The host's beat at monotonic time ``t_ns``, extrapolated on the wall clock."""
        return self.beat + (t_ns - self.arrival_ns) * 1e-9 * self.bpm * self.speed / 60.0


class HostLink:
    """Host transport for every slot of one daemon. ``[engine]``"""

    def __init__(self, engine):
        self.engine = engine                      # bridge.core.engine_loop.EngineThread
        self.host: dict[int, HostState] = {}
        self.start_at: dict[int, tuple[int, int]] = {}    # slot → (job, ring frame of its frame 0)
        self._gen: dict[int, int] = {}            # slot → bumped by every play/stop applied
        self._timers: dict[int, threading.Timer] = {}
        self._splice_at: dict[int, int] = {}      # job → the ring frame its crossfade starts at
        self._dropped: set[int] = set()           # held jobs already answered with /wb/done
        self._retimed: dict[int, tuple] = {}      # slot → (ring epoch, ring frame) of its last re-timed restart

    @property
    def daemon(self):
        return self.engine.owner

    # ------------------------------------------------------------------ reports
    def transport(self, cmd) -> None:
        """A ``/wb/transport``: remember it, and lock the slot's playing stream to it. ``[engine]``"""
        t = cmd.transport
        st = HostState(t.speed, t.bpm, t.beats_per_bar, t.beat, t.read_index, cmd.arrival_ns or time.monotonic_ns())
        self.host[cmd.slot] = st
        slot = self.daemon.slots[cmd.slot]
        job = slot.job
        if job is None or st.speed <= 0 or st.read_index < 0 or slot.pending:
            return
        origin = self.start_at.get(cmd.slot)
        if origin is None or origin[0] != job.job or st.read_index < origin[1]:
            return                                # the reader has not reached this job yet
        grid = self.daemon.backend.beat_grid(job.stream)
        if grid is None:
            return
        ring = slot.ring
        if ring.read_index - st.read_index > ring.capacity:
            return                                # stale (the ring moved on a whole lap)
        frame = stream_frame(st.read_index, origin[1], ring.sample_rate, self.daemon.backend.sample_rate)
        pos = HostPosition(st.bpm, st.beat, frame, st.beats_per_bar, st.speed)
        try:
            grid.update(pos, self.daemon.backend.render_head(job.stream))
        except ValueError as ex:                  # bad numbers: ignore this report
            log.debug("slot %s: transport ignored: %s", cmd.slot, ex)
            return
        self._maybe_retime(slot, grid, st, origin[1])

    def _maybe_retime(self, slot, grid, st: HostState, origin: int) -> None:
        """A new host tempo reaches the render head at once, but the ring already holds about a
        second at the old one; a relocate leaves that second in the old bar phase. When what lies
        past the splice point (read head + guard) is at another tempo, or off the host's bar phase,
        restart the stream there, re-timed and in phase
        (:meth:`bridge.core.engine_commands.CommandApplier.retime`). ``[engine]``"""
        ring = slot.ring
        rr, sr = ring.sample_rate, self.daemon.backend.sample_rate
        last = self._retimed.get(slot.name)
        if last is not None and last[0] == ring.epoch and 0 <= ring.read_index - last[1] < RETIME_EVERY_S * rr:
            return
        at = ring.read_index + self.engine.writer.guard(slot) + int(RETIME_MARGIN_S * rr)
        f_at = stream_frame(at, origin, rr, sr)
        # how much of what lies between the splice point and the render head is at another
        # tempo than the host's: more than a beat and a half is a stale tempo (a beat or two
        # played a little faster or slower is the phase lock at work)
        head = self.daemon.backend.render_head(slot.job.stream)
        stale = [(a, b, bpm) for a, b, bpm in grid.tempo.spans(f_at, head)
                 if abs(bpm - st.bpm) > RETIME_RATIO * st.bpm]
        stale_beats = sum(b - a for a, b, _ in stale) * st.bpm / (60.0 * sr)
        rate = st.bpm * st.speed / (60.0 * rr)    # host beats per ring frame

        def host_beat_at(f: float) -> float:
            return st.beat + (f - st.read_index) * rate

        # the bar phase the ring holds at the splice point against the host's there: far off
        # after a relocate (the lock would hold a beat for up to a bar); the restart then moves
        # the music by the difference (the nearer way round), so it plays on in the host's bars
        unit = grid.beats_per_bar if abs(st.beats_per_bar - grid.beats_per_bar) < 1e-6 else 1.0
        off = (host_beat_at(at) - grid.tempo.beat_at(f_at)) % unit
        off = off - unit if off > unit / 2 else off
        relocated = abs(off) > RELOCATE_BEATS
        if stale_beats <= 1.5 and not relocated:
            return
        log.debug("slot %s: stale tempo spans %s (host %.2f, from %d to head %d), bar phase off %.3f beats",
                  slot.name, [(int(a), int(b), round(v, 2)) for a, b, v in stale], st.bpm, int(f_at),
                  int(head), off)
        if self.engine.commands.retime(slot, at, origin, host_beat_at, off if relocated else 0.0):
            self._retimed[slot.name] = (ring.epoch, at)
            what = []
            if stale_beats > 1.5:
                what.append(f"host tempo {st.bpm:.2f} bpm (was {stale[0][2]:.2f}): re-timed")
            if relocated:
                what.append(f"host bar phase {off:+.2f} beats away: moved into phase")
            log.info("slot %s: %s from ring frame %d", slot.name, "; ".join(what), at)

    def host_beat_fn(self, slot):
        """The host's beat at a ring frame of ``slot``, from its last transport report (``None``
        without one). ``[engine]``"""
        st = self.host.get(slot.name)
        if st is None:
            return None
        rate = st.bpm * st.speed / (60.0 * slot.ring.sample_rate)
        return lambda f: st.beat + (f - st.read_index) * rate

    def place_continuation(self, slot, job, at: int, host_beat_at) -> None:
        """A re-timed continuation's frame 0 is spliced exactly at ring frame ``at``; its grid
        keeps the score's beat there and follows the host from its next beat line. ``[engine]``"""
        self._splice_at[job.job] = at
        grid = self.daemon.backend.beat_grid(job.stream)
        st = self.host.get(slot.name)
        if grid is None or st is None:
            return
        grid.update(HostPosition(st.bpm, host_beat_at(at), 0.0, st.beats_per_bar, st.speed), 0, start=False)

    def published(self, slot, job, start_at: int) -> None:
        """The job's first frame went into the ring at ``start_at``. ``[engine]``"""
        self.start_at[slot.name] = (job.job, int(start_at))

    def splice_frame(self, job) -> int | None:
        """Where a held play's crossfade must start (its first chunk's splice), or None. ``[engine]``"""
        return self._splice_at.pop(job.job, None)

    def following(self, slot_number: int) -> HostState | None:
        """The slot's host, when it rolls and reported recently."""
        st = self.host.get(slot_number)
        if st is None or st.speed <= 0 or time.monotonic_ns() - st.arrival_ns > MAX_AGE_NS:
            return None
        return st

    # ------------------------------------------------------------------ plays
    def prompt_for(self, slot_number: int, prompt: str) -> str:
        """musicgen hears the host's tempo in words; other backends get it through the grid."""
        st = self.host.get(slot_number)
        if st is None or self.daemon.backend.name != "musicgen" or _BPM_WORD.search(prompt):
            return prompt
        return f"{prompt}, {st.bpm:.0f} bpm"

    def _lead_s(self, slot) -> float:
        """How long before a boundary a held play must be applied: the splice guard, the
        crossfade and the loop's slack."""
        ring = slot.ring
        guard = ring.guard_frames(self.daemon.config.guard_ms) / ring.sample_rate
        return guard + self.engine.writer.xfade_frames(slot) / ring.sample_rate + SCHED_MARGIN_S

    def defer(self, cmd) -> bool:
        """Hold a quantized play on a playing slot until just before its boundary. Returns True
        when held (the timer puts it back on the queue). ``[engine]``"""
        slot_number = cmd.slot
        gen = self._gen.get(slot_number, 0) + 1
        self._gen[slot_number] = gen              # this play supersedes anything held before
        old = self._timers.pop(slot_number, None)
        if old is not None:
            old.cancel()
            self._drop(old.args[0])
        q = cmd.quantize
        if q == "off" or cmd.held:
            return False
        slot = self.daemon.slots[slot_number]
        if slot.job is None or slot.pending:
            return False                          # nothing playing: start now (in phase)
        delay, at = self._until_boundary(slot, q)
        if delay is None or delay <= 0.002:
            return False
        cmd.held = gen
        if at is not None:
            cmd.splice_at = at
        t = threading.Timer(delay, self._release, args=(cmd,))
        t.daemon = True
        self._timers[slot_number] = t
        t.start()
        return True

    def _until_boundary(self, slot, q: str):
        """``(seconds from now until the held play is applied, ring frame its crossfade starts
        at or None)``. With a ring frame (the boundary is known on the ring) the play is applied
        ``EARLY_S`` ahead and spliced exactly there; otherwise it is timed on the wall clock."""
        ring = slot.ring
        rr = ring.sample_rate
        xf = self.engine.writer.xfade_frames(slot)
        lead = self._lead_s(slot)
        read = ring.read_index
        st = self.following(slot.name)
        if st is not None:
            unit = st.beats_per_bar if q == "bar" else 1.0
            rate = st.bpm * st.speed / (60.0 * rr)             # host beats per ring frame
            if st.read_index >= 0 and 0 <= read - st.read_index <= ring.capacity:
                earliest = read + (lead + EARLY_S) * rr
                hb = st.beat + (earliest - st.read_index) * rate
                nb = -(-hb // unit) * unit
                line = st.read_index + (nb - st.beat) / rate
                at = int(round(line)) - xf
                return (at - read) / rr - lead - EARLY_S + SCHED_MARGIN_S, at
            now = time.monotonic_ns()
            hb = st.beat_at_ns(now + int(lead * 1e9))
            nb = -(-hb // unit) * unit                          # ceil to the boundary
            return (nb - hb) * 60.0 / (st.bpm * st.speed), None
        job = slot.job
        grid = self.daemon.backend.beat_grid(job.stream)
        origin = self.start_at.get(slot.name)
        if grid is None or origin is None or origin[0] != job.job:
            return None, None
        sr = self.daemon.backend.sample_rate
        f_now = stream_frame(read, origin[1], rr, sr)
        f_b = grid.next_boundary_frame(f_now + (lead + EARLY_S) * sr, q)
        at = origin[1] + int(round(f_b * rr / sr)) - xf
        return (at - read) / rr - lead - EARLY_S + SCHED_MARGIN_S, at

    def _release(self, cmd) -> None:
        """Timer thread: only enqueue (the engine applies it)."""
        try:
            self.engine.q.put_nowait(cmd)
        except Exception:  # noqa: BLE001 — a full queue: answer as replaced rather than hang
            self._drop(cmd)

    def _drop(self, cmd) -> None:
        job = cmd.job_id
        if job in self._dropped:                  # a timer cancelled after it had fired
            return
        self._dropped.add(job)
        if len(self._dropped) > 1024:
            self._dropped.clear()
        self.daemon.emit(Event("done", slot=cmd.slot, job=job, reply_to=cmd.reply_to,
                          extra={"reason": "replaced", "compute_s": 0.0, "cost": 0.0, "audio_s": 0.0}))

    def stale(self, cmd) -> bool:
        """A held play whose slot got a newer play or stop meanwhile. ``[engine]``"""
        held = cmd.held
        if held and held != self._gen.get(cmd.slot, 0):
            self._drop(cmd)
            return True
        if held:
            self._timers.pop(cmd.slot, None)
        return False

    def stopped(self, slot_number: int) -> None:
        """A stop drops a held play. ``[engine]``"""
        self._gen[slot_number] = self._gen.get(slot_number, 0) + 1
        t = self._timers.pop(slot_number, None)
        if t is not None:
            t.cancel()
            self._drop(t.args[0])

    def started(self, slot, job, replacing: bool, cmd) -> None:
        """A new job: put its first frame in phase with the host (or, for a quantized change
        without a host, with the grid it replaces). ``[engine]``"""
        quantize = cmd.quantize
        at = cmd.splice_at if replacing else None
        if at is not None:
            self._splice_at[job.job] = at
            if len(self._splice_at) > 256:        # jobs that never sounded
                self._splice_at.pop(next(iter(self._splice_at)))
        grid = self.daemon.backend.beat_grid(job.stream)
        if grid is None:
            return
        ring = slot.ring
        xf_s = self.engine.writer.xfade_frames(slot) / ring.sample_rate
        st = self.following(slot.name)
        if st is not None:
            if at is not None and st.read_index >= 0:           # frame 0 lands exactly at `at`
                beat0 = st.beat + (at - st.read_index) * st.bpm * st.speed / (60.0 * ring.sample_rate)
            else:
                ahead = ring.guard_frames(self.daemon.config.guard_ms) if replacing else (ring.reader_block_frames or 256)
                beat0 = st.beat_at_ns(time.monotonic_ns() + int(ahead / ring.sample_rate * 1e9))
            grid.update(HostPosition(st.bpm, beat0, 0.0, st.beats_per_bar, st.speed), 0)
        elif replacing and quantize != "off":
            # the crossfade ends on the old grid's line: the new grid's first beat line is there
            lead = xf_s if at is not None else self._lead_s(slot) - ring.guard_frames(self.daemon.config.guard_ms) / ring.sample_rate
            grid.tempo.align(0, -max(0.0, lead) * grid.tempo.bpm / 60.0)

    def close(self) -> None:
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()
