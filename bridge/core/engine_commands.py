"""How the ``[engine]`` thread applies a command from its inbox: play, stop, param, tempo,
transport, close_slot — and the re-timed restart the host link asks for.

Owned by :class:`bridge.core.engine_loop.EngineThread` (its ``commands``); it uses the daemon
that owns the thread, the host link, the write pipeline, the slot actions and the thread's
``view`` — all given to its constructor. Errors become ``/wb/error`` events; nothing raises into
the loop. ``[engine]``
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

from engine.scheduler import Job

from bridge.core.commands import Command
from bridge.core.events import Event
from bridge.core.harmonylink import HarmonyLink
from bridge.core.slot import Slot
from bridge.core.slotstate import PLAYING, REPLACING, Close, Param, Play, RingView, Stop
from plugin_stub.protocol import WavebridgeError

log = logging.getLogger("wavebridge")


class CommandApplier:
    """Commands applied on the engine thread. ``[engine]``

    ``owner``: the :class:`bridge.core.daemon.Daemon` (slots, scheduler, backend, events);
    ``hostlink``: the :class:`bridge.core.hostlink.HostLink`; ``writer``: the
    :class:`bridge.core.writer.WritePipeline`; ``actions``: the
    :class:`bridge.core.engine_actions.SlotActions` a slot's machine is fed through;
    ``view(slot)``: the slot's :class:`~bridge.core.slotstate.RingView`
    (:meth:`bridge.core.engine_loop.EngineThread.view`).
    """

    def __init__(self, owner, hostlink, writer, actions, view: Callable[[Slot], RingView]):
        self.owner = owner                       # bridge.core.daemon.Daemon
        self.hostlink = hostlink                 # bridge.core.hostlink.HostLink
        self.writer = writer                     # bridge.core.writer.WritePipeline
        self.actions = actions                   # bridge.core.engine_actions.SlotActions
        self.view = view
        self.clock_ns = owner.clock_ns
        self.harmony = HarmonyLink(owner, hostlink, writer, self)

    def apply_safely(self, cmd: Command) -> None:
        """Apply one command; a failure becomes an ``error`` event, never an exception. ``[engine]``"""
        d = self.owner
        if d.on_apply is not None:
            try:
                d.on_apply(cmd)
            except Exception:  # noqa: BLE001 — metrics never hurt the engine
                pass
        try:
            self._apply(cmd)
        except WavebridgeError as e:
            d.emit(Event("error", slot=cmd.slot, code=e.code, message=e.message, reply_to=cmd.reply_to))
        except Exception as e:  # noqa: BLE001
            log.exception("command %s failed", cmd.kind)
            code = getattr(e, "code", "internal")
            d.emit(Event("error", slot=cmd.slot, code=code if isinstance(code, str) else "internal",
                         message=f"{type(e).__name__}: {e}", reply_to=cmd.reply_to))

    def _apply(self, cmd: Command) -> None:
        d = self.owner
        if cmd.kind == "play":
            self._play(cmd)
        elif cmd.kind == "stop":
            self.hostlink.stopped(cmd.slot)     # a held quantized play is dropped
            slot = d.slots[cmd.slot]
            n = max(int(0.001 * slot.ring.sample_rate), int(cmd.fade_s * slot.ring.sample_rate))
            self.actions.handle(slot, Stop(n, cmd.reply_to, self.view(slot)))
        elif cmd.kind == "param":
            self.actions.handle(d.slots[cmd.slot], Param(cmd.name, cmd.value))
        elif cmd.kind == "chord":
            self.harmony.chord(cmd)
        elif cmd.kind == "theme":
            self.harmony.theme(cmd)
        elif cmd.kind == "theme_key":
            self.harmony.theme_key(cmd)
        elif cmd.kind == "tempo":
            d.backend.set_tempo(cmd.value)
        elif cmd.kind == "close_slot":          # a private slot: end its jobs now (no fade), then drop it
            slot = d.slots.get(cmd.slot)
            if slot is not None and slot.private:
                slot.held, slot.gate_ns = [], None
                self.actions.handle(slot, Close())
                self.harmony.forget(slot.name)
                d.drop_private_slot(cmd.slot)
        elif cmd.kind == "transport":
            self.hostlink.transport(cmd)

    def _open_jobs(self) -> list[Job]:
        """Jobs holding a backend stream now (current, being replaced)."""
        out = [j for j in self.owner.scheduler.jobs.values() if not j.done]
        out += [s.sm.old for s in self.owner.slots.values() if s.sm.old is not None and not s.sm.old.done]
        return out

    def _play(self, cmd: Command) -> None:
        d = self.owner
        slot = d.slots[cmd.slot]
        if self.hostlink.stale(cmd):            # a held quantized play that a newer play or stop dropped
            return
        if cmd.superseded:                      # a newer play of this slot waits behind it
            d.emit(Event("done", slot=cmd.slot, job=cmd.job_id, reply_to=cmd.reply_to,
                         extra={"reason": "replaced", "compute_s": 0.0, "cost": 0.0, "audio_s": 0.0}))
            return
        if self.hostlink.defer(cmd):
            return                              # held for its beat/bar line
        cmd.prompt = self.hostlink.prompt_for(cmd.slot, cmd.prompt)
        if slot.ring.recover():                 # an error slot's ring: raises RingError while it has none
            slot.unregister_gpu()               # the new mapping is not registered with CUDA
        if not self._make_room(slot, cmd):
            return
        job = self._start_job(slot, cmd)
        if job is None:
            return
        sm = slot.sm
        self.actions.handle(slot, Play(job, self.view(slot)))
        self.harmony.started(slot, job)
        self.hostlink.started(slot, job, sm.state == REPLACING, cmd)
        if sm.state == REPLACING:
            self._crossfade_chunk(slot, job)
        self.writer.meta(slot, job)

    def _make_room(self, slot: Slot, cmd: Command) -> bool:
        """At the backend's capacity, this slot's own streams go first (a crossfade then fades
        from the ring); with none of its own, the play is refused ``busy``. False: refused."""
        d = self.owner
        sched = d.scheduler
        if len(self._open_jobs()) < sched.max_batch:
            return True
        sm = slot.sm
        own = [j for j in (sm.old, sm.job) if j is not None and not j.done]
        if not own:
            d.emit(Event("error", slot=cmd.slot, job=cmd.job_id, code="busy",
                         message=f"the {d.backend.name} backend serves at most {sched.max_batch} streams and "
                                 f"all are playing; stop a slot first", reply_to=cmd.reply_to))
            return False
        sched.end(own[0])
        return True

    def _start_job(self, slot: Slot, cmd: Command) -> Job | None:
        """The play's job, started by the scheduler and attached; None (error sent) if it fails."""
        d = self.owner
        sched = d.scheduler
        try:
            job = sched.start(cmd.slot, cmd.job_id, cmd.prompt, 0 if cmd.seed is None else cmd.seed, cmd.seconds,
                              dict(slot.params), priority=not slot.private)
        except Exception as e:  # noqa: BLE001
            code = getattr(e, "code", "backend")
            d.emit(Event("error", slot=cmd.slot, job=cmd.job_id, code=code if isinstance(code, str) else "backend",
                         message=f"could not start: {e}", reply_to=cmd.reply_to))
            return None
        job.tag = cmd.reply_to                  # /wb/done for this job goes to whoever started it
        sched.attach(job)
        slot.prompt = cmd.prompt
        slot.job_started = time.time()
        slot.arrival_ns = cmd.arrival_ns or self.clock_ns()
        slot.reply_to = cmd.reply_to
        return job

    def _crossfade_chunk(self, slot: Slot, job: Job, extra: int = 0) -> None:
        """A replacing job's first chunk holds the whole crossfade (and ``extra`` ring frames)."""
        sched = self.owner.scheduler
        xf = self.writer.xfade_frames(slot) + extra
        job.next_chunk = max(sched.first_chunk, 1 << max(0, (xf + 1023).bit_length()))
        job.next_chunk = min(job.next_chunk, max(sched.max_chunk, slot.ring.capacity // 2))

    def retime(self, slot: Slot, at: int, origin: int, host_beat_at, shift: float = 0.0) -> bool:
        """Restart the slot's playing job at ring frame ``at`` (ahead of the read head by the
        splice guard) with the same music re-timed: a continuation of its stream from there
        (:meth:`Backend.continuation`) is spliced in like a prompt change, with its grid locked
        to the host from its first beat line. So a host tempo change is heard from the next beat,
        not after the second of audio already in the ring. The job keeps its id; no
        ``/wb/started``, ``first_audio`` or ``done`` is sent for the switch. ``host_beat_at(f)``:
        the host's beat at ring frame ``f``; ``shift``: beats the music moves on (or back) there,
        to land in the host's bar phase after a relocate. Returns False when the slot or backend
        cannot.
        ``[engine]``"""
        d = self.owner
        job = slot.sm.job
        if job is None:
            return False
        f_at = int(round((at - origin) * d.backend.sample_rate / slot.ring.sample_rate))
        if not self.can_splice(slot, job, at, f_at):
            return False
        stream = d.backend.continuation(job.stream, f_at, job.job, shift)
        if stream is None:
            return False
        self._attach_continuation(slot, job, stream, at, f_at, host_beat_at)
        d.retimes += 1
        return True

    def can_splice(self, slot: Slot, job: Job, at: int, f_at: int) -> bool:
        """Whether a continuation of ``job`` (the slot's playing one) from its frame ``f_at`` can
        be spliced in at ring frame ``at`` now: the slot plays it, ``at`` lies between the splice
        guard and the ring's write index, the backend has rendered past ``f_at`` and has a stream
        to spare, and the job is not about to end. ``[engine]``"""
        d = self.owner
        sm = slot.sm
        if sm.state != PLAYING or sm.job is not job or job.done or not d.config.splice:
            return False
        ring = slot.ring
        if not ring.read_index + self.writer.guard(slot) <= at < ring.write_index:
            return False
        if len(self._open_jobs()) >= d.scheduler.max_batch:
            return False
        if f_at <= 0 or f_at >= d.backend.render_head(job.stream):
            return False
        return not (job.frames_total and job.frames_total - f_at <= d.backend.sample_rate // 2)  # nearly over

    def splice_continuation(self, slot: Slot, job: Job, stream, at: int, f_at: int) -> None:
        """Splice ``stream`` — a continuation of ``job``'s from its frame ``f_at`` (a chord
        change, :mod:`bridge.core.harmonylink`; checked with :meth:`can_splice`) — into the slot
        at ring frame ``at``, like a re-timed restart. ``[engine]``"""
        self._attach_continuation(slot, job, stream, at, f_at, self.hostlink.host_beat_fn(slot))

    def _attach_continuation(self, slot: Slot, job: Job, stream, at: int, f_at: int, host_beat_at) -> None:
        d = self.owner
        total = job.frames_total - f_at if job.frames_total else 0
        new = Job(job=job.job, slot=job.slot, prompt=job.prompt, seed=job.seed, seconds=job.seconds,
                  stream=stream, frames_total=total, next_chunk=d.scheduler.first_chunk,
                  compute_s=job.compute_s, tag=job.tag, retimed=True, cont_of=job,
                  prior_frames=job.prior_frames + f_at)
        d.scheduler.attach(new)
        self.actions.handle(slot, Play(new, self.view(slot)))
        self.hostlink.place_continuation(slot, new, at, host_beat_at)
        self._crossfade_chunk(slot, new, extra=2 * self.writer.guard(slot))   # room to land late (see splice_into)
