"""The ``[engine]`` thread: the one thread that owns the backend, and its loop.

Each :meth:`EngineThread.turn` applies queued commands (for at most ~2 ms), sends every slot's
:class:`~bridge.core.slotstate.SlotMachine` a ``Progress`` event (read/write heads, the reader's
rate and liveness) and runs one scheduler step. Every decision about a slot's lifecycle is its
machine's; this thread only executes the actions the machine returns (its ``actions``, a
:class:`~bridge.core.engine_actions.SlotActions`) and applies commands (its ``commands``, a
:class:`~bridge.core.engine_commands.CommandApplier`). Audio goes through
:class:`~bridge.core.writer.WritePipeline`; the host's transport through
:class:`~bridge.core.hostlink.HostLink`. Events go back through the daemon's event bus, which
only enqueues: the thread never waits on the control thread.
"""
from __future__ import annotations

import logging
import queue
import threading
import time

from dsp import array_module
from engine.scheduler import Chunk

from bridge.core.commands import Command
from bridge.core.engine_actions import SlotActions
from bridge.core.engine_commands import CommandApplier
from bridge.core.events import Event
from bridge.core.hostlink import HostLink
from bridge.core.inbox import CommandQueue
from bridge.core.slot import Slot
from bridge.core.slotstate import (DRAINING, FADING, PLAYING, QUICK_FADE_S, REPLACING, SWITCHING, ChunkReady, Failed,
                                   Fault, PlayedOut, Progress, RingView, Stop)
from bridge.core.writer import WritePipeline
from plugin_stub.protocol import RingFault, pid_alive

log = logging.getLogger("wavebridge")

#: a private web stream's batch waits (to the next step) while a ring slot's buffered lead would
#: drop below this share of ``Config.target_s`` during it: the DAW is served first, by construction
DAW_MIN_LEAD = 0.5
#: … and web streams are generated in batches of about this much compute, so the ring slots' leads
#: are looked at again that often within a step
WEB_BATCH_S = 0.05


class EngineThread(threading.Thread):
    """The one thread that owns the backend. ``[engine]``

    ``owner`` is the :class:`bridge.core.daemon.Daemon` that owns the thread (``daemon`` stays
    :class:`threading.Thread`'s daemonic flag). It owns the inbox (``q``), the host link, the
    write pipeline (``writer``), the slot machines' action executor (``actions``) and the
    command applier (``commands``).
    """

    def __init__(self, owner):
        super().__init__(name="wavebridge-engine", daemon=True)
        self.owner = owner                       # bridge.core.daemon.Daemon
        self.q = CommandQueue(owner.config.queue_max)
        self.clock_ns = owner.clock_ns
        self.alive_ns = self.clock_ns()          # watchdog: last loop iteration
        self._halt = threading.Event()
        self.step_ema: float | None = None       # seconds per generating step (recent average)
        #: the share of wall time spent generating (steps), over the last ~second: the engine's
        #: measured real-time load, which the web side admits new streams by (bridge.web.admission)
        self.duty = 0.0
        self._duty_busy = 0.0
        self._duty_t0 = time.perf_counter()
        #: DAW slots whose job failed because the engine's cluster went away: slot → the play that
        #: brings them back when the backend says it is available again (a play or stop of the
        #: slot in the meantime forgets it)
        self.lost: dict = {}
        self._lost_check = 0.0
        self.hostlink = HostLink(self)           # the DAW's transport: tempo/bar lock, quantize
        self.writer = WritePipeline(owner, self.hostlink)
        self.actions = SlotActions(owner, self.writer, self.offer)
        self.commands = CommandApplier(owner, self.hostlink, self.writer, self.actions, self.view)

    def stop(self) -> None:
        self._halt.set()
        self.hostlink.close()
        try:
            self.q.put_nowait(Command("wake"))
        except queue.Full:
            pass

    def run(self) -> None:
        while not self._halt.is_set():
            self.turn(self._idle_timeout())
        self.shutdown()

    def turn(self, timeout: float = 0.0) -> None:
        """One loop iteration: commands (for at most ~2 ms), slot progress, one scheduler step. ``[engine]``"""
        d = self.owner
        self.alive_ns = self.clock_ns()
        try:
            cmd = self.q.get(timeout=timeout) if timeout > 0 else self.q.get_nowait()
        except queue.Empty:
            cmd = None
        # a burst of plays (each one encodes a prompt) must not starve the slots already playing
        t_cmd = time.perf_counter()
        while cmd is not None:
            if self.lost and cmd.kind in ("play", "stop"):
                self.lost.pop(cmd.slot, None)
            self.commands.apply_safely(cmd)
            if time.perf_counter() - t_cmd > 0.002:
                break
            try:
                cmd = self.q.get_nowait()
            except queue.Empty:
                cmd = None
        if self._halt.is_set():
            return
        try:
            if self.lost:
                self._bring_back()
            self.commands.harmony.turn()
            self._progress_all()
            t_fill = time.perf_counter()
            self._fill()
            self._meter_duty(t_fill)
            if d.midi_out is not None:
                d.midi_out.collect(self.hostlink)
        except Exception as e:  # noqa: BLE001 — keep the engine alive, report the fault
            log.exception("engine step failed")
            d.emit(Event("error", code="internal", message=f"engine step failed: {e}"))
            time.sleep(0.01)

    def _bring_back(self) -> None:
        """Play the slots lost with the engine again once it answers (asked at most twice a second)."""
        now = time.monotonic()
        if now - self._lost_check < 0.5:
            return
        self._lost_check = now
        available = getattr(self.owner.backend, "available", None)
        if available is None or not available():
            return
        lost, self.lost = self.lost, {}
        for name, cmd in lost.items():
            log.info("slot %s: the engine is back; playing %r again", name, cmd.prompt[:60])
            try:
                self.owner.submit(cmd)
            except Exception as e:  # noqa: BLE001 — a full queue: that slot stays stopped, the user plays it
                log.warning("slot %s: could not play again: %s", name, e)

    def _meter_duty(self, t_fill: float) -> None:
        """Add one step's time to the duty meter; every 0.5 s of wall time the meter's window
        closes and :attr:`duty` moves halfway to that window's busy share."""
        now = time.perf_counter()
        self._duty_busy += now - t_fill
        wall = now - self._duty_t0
        if wall >= 0.5:
            self.duty = 0.5 * self.duty + 0.5 * min(1.0, self._duty_busy / wall)
            self._duty_busy, self._duty_t0 = 0.0, now

    # --------------------------------------------------------------------- waiting
    def _idle_timeout(self) -> float:
        d = self.owner
        sched = d.scheduler
        states = [s.sm.state for s in d.slots.values()]
        if SWITCHING in states or any(s.held and s.gate_ns is not None for s in d.slots.values()):
            return 0.001
        busy = FADING in states or DRAINING in states
        if not sched.jobs:
            return 0.01 if busy else 0.05
        if any(d.slots[s].sm.state == REPLACING for s in sched.jobs):
            return 0.0                           # a prompt change waits for its first chunk
        dl = sched.next_deadline_s(self._buffered())
        if dl is None:
            return 0.05
        return float(min(0.01 if busy else 0.02, max(0.0, dl)))

    # --------------------------------------------------------------------- what a slot's machine sees
    def view(self, slot: Slot) -> RingView:
        """Where the slot's ring heads are, its rates and whether its reader is there. ``[engine]``"""
        ring = slot.ring
        hb = ring.reader_heartbeat_ns
        alive = self.clock_ns() - hb < 500_000_000
        left = hb != 0 and not alive
        if slot.private:    # its one reader is this process's web stream, there until close_slot; its
            alive, left = True, False   # heartbeat waits while the stream's encoder works
        return RingView(ring.read_index, ring.write_index, self.writer.guard(slot), ring.sample_rate,
                        ring.reader_sample_rate, alive, left, None if slot.private else ring.void_read)

    # --------------------------------------------------------------------- per turn
    def _progress_all(self) -> None:
        """Every slot's ring is checked (a shrunk segment, overwritten header fields), its machine
        hears where the ring's heads are (and, while nobody reads it, where the writer's void
        clock stands), and held audio is offered again.

        A slot nobody reads (:meth:`_read_by_someone`) plays out into the void: its timed job ends
        once its whole length has played by the void's clock (:meth:`_played_out`), and when the
        slot falls silent so the ring's ``epoch`` is bumped, so that a reader resuming later
        resyncs to the live edge instead of hearing audio nobody heard in its time. The writer
        never stores ``read_index``."""
        now = self.clock_ns()
        for slot in self.owner.slots.values():
            try:
                slot.ring.check()
            except RingFault as e:
                self._ring_fault(slot, e)
            if not slot.private:                 # a private slot's reader is there until it closes
                slot.ring.play_out(None if self._read_by_someone(slot, now) else now)
            view = self.view(slot)
            self._watch_reader(slot, view, now)
            was_busy = slot.sm.busy
            self.actions.handle(slot, Progress(view))
            if view.void is not None:
                self._played_out(slot, view.void)
                if was_busy and not slot.sm.busy and not slot.ring.fault:
                    slot.ring.bump_epoch()       # a stream reset: a later reader starts at the live edge
            if slot.held:
                self.offer(slot)

    def _read_by_someone(self, slot: Slot, now: int) -> bool:
        """A reader is there: its heartbeat is under 1 s old, or it attached (its process is
        alive) and has not read yet. Otherwise the ring plays out into the void: a clock private
        to the writer (:meth:`~bridge.core.ring.RingWriter.play_out`), never ``read_index``,
        which is the reader's alone. ``[engine]``"""
        ring = slot.ring
        hb = ring.reader_heartbeat_ns
        if hb:
            return now - hb < 1_000_000_000
        return pid_alive(ring.reader_pid)

    def _played_out(self, slot: Slot, void: int) -> None:
        """Nobody reads the slot: its playing timed job ends (``done``, reason ``finished``) once
        the void's clock has passed where the job's audio ends — what is written plus what it
        has still to make (held chunks included), in ring frames. Until the ring is full that is
        the job made and played in its time; once full (nobody frees room) the clock runs on
        past ``write_index`` and the rest counts as played. ``[engine]``"""
        sm = slot.sm
        job = sm.job
        if sm.state != PLAYING or job is None or job.done or job.remaining is None:
            return
        ring = slot.ring
        pending = max(0, job.remaining) + sum(int(c.audio.shape[0]) for c in slot.held if c.job is job)
        end = ring.write_index + pending * ring.sample_rate // max(1, self.owner.backend.sample_rate)
        if void >= end:
            self.actions.handle(slot, PlayedOut(job))

    def _ring_fault(self, slot: Slot, e: RingFault) -> None:
        """Answer a ring problem (already logged by the ring). A fatal one (the segment shrank: the
        ring now runs on private memory) is the machine's :class:`~bridge.core.slotstate.Fault`: every
        job ends at once, the slot is in error, and its next play gets a fresh ring
        (``RingWriter.recover`` in :meth:`CommandApplier._play`). ``[engine]``"""
        self.owner.emit(Event("error", slot=slot.name, code=e.code, message=e.message, reply_to=slot.reply_to))
        if e.fatal:
            slot.unregister_gpu()
            slot.held, slot.gate_ns = [], None
            self.actions.handle(slot, Fault(slot.reply_to))

    def _watch_reader(self, slot: Slot, view: RingView, now: int) -> None:
        """Two readers advancing one ring (:meth:`Slot.watch_reader`): logged once, counted as the
        error code ``two_readers``, shown in status as ``readers: 2``."""
        seen = slot.watch_reader(view.read, view.reader_alive, now)
        if seen:
            log.warning("slot %s: two readers are advancing read_index (reader pid %s%s): each hears part "
                        "of the stream; give every plugin instance its own slot", slot.name, slot.reader_pid,
                        ", pids alternating" if seen == "flips" else ", read_index stepping back and forth")
            self.owner.count_error("two_readers")

    # --------------------------------------------------------------------- generation
    def _buffered(self) -> dict[int, int]:
        """Each generating slot's buffered audio in backend frames, held chunks included."""
        d = self.owner
        out = {}
        for s in d.scheduler.jobs:
            slot = d.slots[s]
            # nobody reads: ahead of the writer's void clock (RingWriter.lead), so a timed job is made in its time
            b = 0 if slot.sm.state in (REPLACING, SWITCHING) else slot.ring.lead()
            if slot.ring.sample_rate != d.backend.sample_rate:     # the scheduler counts backend frames
                b = b * d.backend.sample_rate // slot.ring.sample_rate
            out[s] = b + sum(int(c.audio.shape[0]) for c in slot.held)
        return out

    def _free(self) -> dict[int, int]:
        """Each generating slot's room in backend frames; a slot being replaced plans as if nearly empty."""
        d = self.owner
        free: dict[int, int] = {}
        for s in list(d.scheduler.jobs):
            slot = d.slots[s]
            ring = slot.ring
            if slot.sm.state in (REPLACING, SWITCHING):
                # the new stream replaces what lies beyond the guard: plan as if nearly empty
                f = ring.capacity - self.writer.guard(slot)
            else:
                f = ring.capacity - ring.buffered()
            if ring.sample_rate != d.backend.sample_rate:
                f = f * d.backend.sample_rate // ring.sample_rate - 64
            free[s] = f - sum(int(c.audio.shape[0]) for c in slot.held)
        return free

    def _sink(self, chunks) -> None:
        """Write each batch as soon as it exists; one slot's fault ends that job only."""
        d = self.owner
        for ch in chunks:
            job = ch.job
            slot = d.slots[job.slot]
            if job is not slot.sm.job:
                continue                        # stale (replaced or stopped meanwhile)
            slot.held.append(ch)
            try:
                self.offer(slot)
            except Exception as e:  # noqa: BLE001 — one slot's fault ends that job only
                log.exception("writing slot %s failed", job.slot)
                d.emit(Event("error", slot=slot.name, job=job.job, code="internal",
                             message=f"writing the ring failed: {type(e).__name__}: {e}",
                             reply_to=job.tag or slot.reply_to))
                slot.held = []
                self.actions.handle(slot, Failed(job, self.view(slot)))

    def _fill(self) -> None:
        d = self.owner
        sched = d.scheduler
        if not sched.jobs:
            return
        buffered = self._buffered()
        free = self._free()
        t0 = self.clock_ns()
        # waiting commands (a burst of plays) go first once the slots still to be served have a
        # safe margin: each play then starts within a step, not after every other slot's refill
        margin = int(d.backend.sample_rate * max(0.1, 4 * (sched.call_s or 0.0)))
        q = self.q

        def yield_to(frames: int) -> bool:
            return frames >= margin and q.qsize() > 0

        # the ring slots (read by a DAW) before the private web streams, and the streams only while
        # every ring slot keeps a safe lead through their batch
        daw = {s for s in sched.jobs if not d.slots[s].private}
        res = sched.step(buffered, free, sink=self._sink, yield_to=yield_to, priority=daw,
                         defer=(lambda est_s: self._daw_short(daw, est_s)) if daw else None,
                         later_batch_s=WEB_BATCH_S if daw else None)
        if res.chunks:
            dt = (self.clock_ns() - t0) / 1e9
            self.step_ema = dt if self.step_ema is None else 0.8 * self.step_ema + 0.2 * dt
        d.metrics_step(res)
        for f in res.failures:
            job = f.job
            slot = d.slots[job.slot]
            d.emit(Event("error", slot=job.slot, job=job.job, code=f.code, message=f.message,
                         reply_to=job.tag or slot.reply_to))
            if job is slot.sm.job:
                slot.held = []
                if f.code == "engine_unavailable" and not slot.private:
                    self.lost[job.slot] = Command("play", slot=job.slot, prompt=job.prompt, seed=job.seed,
                                                  seconds=job.seconds, source="engine", reply_to=slot.reply_to)
                self.actions.handle(slot, Failed(job, self.view(slot)))
            if not job.done:
                sched.end(job)

    def _daw_short(self, daw: set, est_s: float) -> bool:
        """True when a ring slot in ``daw`` would hold less than half its target lead after
        ``est_s`` more seconds of other work (its held chunks count, its reader moves on). ``[engine]``"""
        d = self.owner
        floor_s = DAW_MIN_LEAD * d.config.target_s + est_s
        for s in daw:
            slot = d.slots.get(s)
            job = d.scheduler.jobs.get(s)
            if slot is None or job is None or job.done or (job.remaining is not None and job.remaining <= 0):
                continue                        # nothing more to make for it: its lead may run out
            ring = slot.ring
            held = sum(int(c.audio.shape[0]) for c in slot.held)
            if ring.lead() / ring.sample_rate + held / d.backend.sample_rate < floor_s:
                return True
        return False

    def offer(self, slot: Slot) -> None:
        """Hand the slot's held chunks to its machine as one chunk, once they may be written:
        not while a rate change waits for the reader, and — before a job's first audio — not
        until they cover the time the next steps take. ``[engine]``

        A job's audio is first published when it holds at least ``2.5 ×`` the recent step time's
        worth of frames, so the reader never runs dry while the chunks grow. A fast backend (the
        synth: ~1 ms steps) publishes its first small chunk at once; a slow one (a neural model on
        a CPU) waits for a few chunks rather than stutter.
        """
        sm = slot.sm
        if sm.state == SWITCHING:
            return
        if slot.gate_ns is not None:
            if slot.ring.reader_heartbeat_ns <= slot.gate_ns and self.clock_ns() - slot.gate_ns < 50_000_000:
                return
            slot.gate_ns = None
        held = [c for c in slot.held if c.job is sm.job]
        if not held:
            slot.held = []
            return
        if not sm.sounded:
            frames = sum(int(c.audio.shape[0]) for c in held)
            sched = self.owner.scheduler
            est = max(self.step_ema or 0.0, sched.call_s or 0.0)
            need = int(2.5 * est * self.owner.backend.sample_rate)
            if frames < need and not held[-1].last and frames < sched.target_frames:
                slot.held = held
                return
        slot.held = []
        if len(held) == 1:
            ch = held[0]
        else:
            xp = array_module(held[0].audio)
            ch = Chunk(held[0].job, xp.concatenate([c.audio for c in held], axis=0),
                       first=held[0].first, last=held[-1].last)
        self.actions.handle(slot, ChunkReady(ch.job, ch, ch.first, ch.last))
        self.actions.handle(slot, Progress(self.view(slot)))

    # --------------------------------------------------------------------- shutdown
    def shutdown(self) -> None:
        """Fade every audible slot to silence (20 ms) at the read head. ``[engine]`` (or
        ``[control]`` at close when the thread never ran)"""
        for slot in self.owner.slots.values():
            sm = slot.sm
            if not sm.busy:
                continue
            try:
                view = self.view(slot)
                self.actions.handle(slot, Stop(int(QUICK_FADE_S * view.rate), None, view))
                if sm.state == FADING:          # less buffered than the fade: a mirrored tail ends it
                    self.writer.tail(slot, int(QUICK_FADE_S * view.rate))
                    self.actions.handle(slot, Progress(view._replace(write=sm.env.end)))
                slot.ring.set_playing(False)
                for j in (sm.job, sm.old, sm.tail):
                    if j is not None and not j.done:
                        self.actions.release(j, slot)
                        self.actions.done(slot, j, "stopped")
                sm.reset()
            except Exception:  # noqa: BLE001
                log.exception("fade-out of slot %s failed", slot.name)
