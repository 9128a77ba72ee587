"""What the ``[engine]`` thread does for each action a slot's machine returns.

:class:`~bridge.core.slotstate.SlotMachine` decides; :class:`SlotActions` executes: one
``_do_<action>`` method per action type of :mod:`bridge.core.slotstate` (``End`` →
:meth:`SlotActions._do_end`, ``Write`` → the write pipeline, …), called in order by
:meth:`SlotActions.handle`. Owned by :class:`bridge.core.engine_loop.EngineThread` (its
``actions``); it uses the daemon that owns the thread, the write pipeline and the thread's
``offer`` — all given to its constructor. ``[engine]``
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from engine.scheduler import Job

from bridge.core.events import Event
from bridge.core.slot import Slot
from bridge.core.slotstate import (ERROR, IDLE, STARTING, Drop, End, Error, FadeRing, FirstAudio, Flush, Hold,
                                   Reattach, Release, SetParam, SetPlaying, SetRate, Tail, Write)

log = logging.getLogger("wavebridge")


class SlotActions:
    """The slot machine's actions, executed on the engine thread. ``[engine]``

    ``owner``: the :class:`bridge.core.daemon.Daemon` (scheduler, backend, config, events);
    ``writer``: the :class:`bridge.core.writer.WritePipeline`; ``offer(slot)``: hand a slot's held
    chunks to its machine (:meth:`bridge.core.engine_loop.EngineThread.offer`).
    """

    def __init__(self, owner, writer, offer: Callable[[Slot], None]):
        self.owner = owner                       # bridge.core.daemon.Daemon
        self.writer = writer                     # bridge.core.writer.WritePipeline
        self.offer = offer
        self.clock_ns = owner.clock_ns
        self._reported: dict[int, None] = {}     # job ids already answered with /wb/done (recent)

    def handle(self, slot: Slot, ev) -> None:
        """Feed one event to the slot's machine and execute what it returns, in order. ``[engine]``"""
        for a in slot.sm.handle(ev):
            getattr(self, "_do_" + type(a).__name__.lower())(slot, a)

    def _do_end(self, slot: Slot, a: End) -> None:
        self.release(a.job, slot)
        cur = slot.sm.job
        if a.reason == "replaced" and cur is not None and cur.cont_of is a.job:
            cur.cont_of = None                  # (no chain of ended jobs kept alive)
            return                              # replaced by its own re-timed continuation: still playing
        self.done(slot, a.job, a.reason, a.reply_to)

    def _do_release(self, slot: Slot, a: Release) -> None:
        self.release(a.job, slot)

    def release(self, job: Job, slot: Slot) -> None:
        """The job's resampler is dropped and its scheduler stream ended (if not yet). ``[engine]``"""
        slot.resamplers.pop(id(job), None)
        if not job.done:
            self.owner.scheduler.end(job)

    def _do_reattach(self, slot: Slot, a: Reattach) -> None:
        self.owner.scheduler.attach(a.job)

    def _do_write(self, slot: Slot, a: Write) -> None:
        self.writer.write(slot, a)

    def _do_fadering(self, slot: Slot, a: FadeRing) -> None:
        self.writer.fade(slot, a)

    def _do_tail(self, slot: Slot, a: Tail) -> None:
        self.writer.tail(slot, a.frames)

    def _do_drop(self, slot: Slot, a: Drop) -> None:
        ring = slot.ring
        if ring.write_index > ring.read_index:
            ring.publish(ring.read_index)

    def _do_setplaying(self, slot: Slot, a: SetPlaying) -> None:
        slot.ring.set_playing(a.playing)

    def _do_firstaudio(self, slot: Slot, a: FirstAudio) -> None:
        job = a.job
        if job.retimed:                         # a re-timed continuation: the job sounded long ago
            return
        ms = (self.clock_ns() - slot.arrival_ns) / 1e6
        self.owner.first_audio_ms.append(ms)
        self.owner.emit(Event("first_audio", slot=slot.name, job=job.job, ms=ms, reply_to=job.tag or slot.reply_to))

    def _do_setrate(self, slot: Slot, a: SetRate) -> None:
        ring = slot.ring
        log.info("slot %s: host runs at %d Hz, resampling from %d Hz", slot.name, a.rate,
                 self.owner.backend.sample_rate)
        ring.set_sample_rate(a.rate)
        slot.resamplers.clear()
        # the reader resyncs to write_index when it sees the new epoch: new audio waits until it
        # has read once since (one host block; at most 50 ms), or it would skip it
        slot.gate_ns = self.clock_ns()
        job = slot.sm.job
        slot.reanchor = job.job if job is not None and slot.sm.sounded else None

    def _do_hold(self, slot: Slot, a: Hold) -> None:
        slot.held.append(a.chunk)

    def _do_flush(self, slot: Slot, a: Flush) -> None:
        self.offer(slot)

    def _do_error(self, slot: Slot, a: Error) -> None:
        self.owner.emit(Event("error", slot=slot.name, code=a.code, message=a.message, reply_to=a.reply_to))

    def _do_setparam(self, slot: Slot, a: SetParam) -> None:
        if a.name == "gain":
            slot.gain_target = a.value
            if slot.sm.state in (IDLE, ERROR, STARTING):   # nothing heard yet: no ramp needed
                slot.gain = a.value
        elif a.name == "xfade_ms":
            slot.xfade_ms = a.value
        else:
            slot.params[a.name] = a.value
            if a.job is not None and not a.job.done:
                self.owner.backend.set_param(a.job.stream, a.name, a.value)

    def done(self, slot: Slot, job: Job, reason: str, reply_to=None) -> None:
        """Answer the job with ``done`` (once per job id, its continuations included). ``[engine]``"""
        if job.job in self._reported:           # a job and its continuation end once
            return
        self._reported[job.job] = None
        if len(self._reported) > 4096:
            self._reported.pop(next(iter(self._reported)))
        slot.jobs_done += 1
        d = self.owner
        cost = job.compute_s * d.config.price_per_hour / 3600.0
        d.emit(Event("done", slot=slot.name, job=job.job, reply_to=reply_to or job.tag or slot.reply_to,
                     extra={"reason": reason, "compute_s": job.compute_s, "cost": cost,
                            "audio_s": (job.prior_frames + job.frames_out) / max(1, d.backend.sample_rate)}))
