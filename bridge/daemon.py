"""Daemon core: slots, rings, the engine thread and the heartbeat — no sockets.

Threads:
- ``[control]`` (the caller, normally the asyncio loop): :meth:`Daemon.submit` validates
  nothing further (adapters already made a ``Command``), assigns a job id and enqueues it;
  :meth:`Daemon.status` reads counters. Never runs inference.
- ``[engine]`` (:class:`EngineThread`, one): owns the backend and the scheduler, applies
  commands, generates chunks in batches, applies gain and the limiter, writes and splices the
  rings. Events (``started`` is sent by the adapter; ``first_audio``, ``done``, ``error``) go
  back through ``emit`` — a callable that must only enqueue (the adapter hands them to its
  loop thread-safely). It never waits on the control thread.
- heartbeat: refreshes every ring's ``writer_heartbeat_ns`` at 20 Hz.

Audio path of a play: datagram → ``Command`` → engine queue → ``Scheduler.start`` → first
small chunk → ``RingWriter.append`` (idle slot) or ``RingWriter.splice`` at the read head
(playing slot) → ``first_audio`` event with the measured milliseconds since arrival.
"""
from __future__ import annotations

import collections
import logging
import math
import os
import queue
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from dsp import Resampler, array_module, fade, fade_curve, gain_ramp, soft_limit, stitch_and_publish
from engine import get_backend
from engine.backend import Backend
from engine.scheduler import Chunk, Job, Scheduler

from .commands import COMMON_PARAMS, Command
from .hostlink import HostLink
from .protocol import RingError, RingFault, WavebridgeError
from .ring import RingWriter

log = logging.getLogger("wavebridge")


@dataclass
class Config:
    """Daemon settings (CLI flags and the TOML config map onto these)."""

    slots: int = 8
    backend: str = "synth"
    backend_kwargs: dict = field(default_factory=dict)
    target_s: float = 1.0             # ring depth the engine keeps ahead of the reader
    first_chunk: int = 2048           # frames (43 ms at 48 kHz): fast first audio, yet a burst of starts stays fed
    max_chunk: int = 8192
    xfade_ms: float = 50.0            # prompt-change crossfade
    guard_ms: float = 10.0            # splice distance ahead of the read head (min)
    end_fade_ms: float = 10.0         # fade at the end of a finite job
    queue_max: int = 1024
    splice: bool = True               # False: a new prompt waits behind the buffered audio (naive)
    price_per_hour: float = 1.0       # of the device the engine runs on; for cost metering
    slot_names: list | None = None    # default 1..slots


@dataclass
class Event:
    kind: str                         # first_audio | done | error | watchdog
    slot: int = -1
    job: int = 0
    ms: float = 0.0
    code: str = ""
    message: str = ""
    reply_to: object = None
    extra: dict = field(default_factory=dict)


class Slot:
    """Per-slot state shared by the engine (writer) and control (reader of plain fields)."""

    def __init__(self, number: int, ring: RingWriter):
        self.number = number
        self.ring = ring
        self.state = "idle"           # idle | playing | error
        self.job: Job | None = None
        self.old_job: Job | None = None
        self.pending = ""             # "" | "append" | "splice"
        self.prompt = ""
        self.job_started = 0.0
        self.gain = 1.0
        self.gain_target = 1.0
        self.xfade_ms: float | None = None
        self.params: dict[str, float] = {}
        self.arrival_ns = 0
        self.reply_to = None
        self.jobs_done = 0
        self.resampler: Resampler | None = None   # backend rate → ring rate, per job
        self.gpu_reg = None                       # the ring's data registered with CUDA (cupy path)
        self.held: list = []                      # a starting job's chunks not yet published
        self.tail_job: Job | None = None          # a finished job whose last audio is still buffered
        self.tail_end = 0                         # ring frame where that audio ends
        self.fade: dict | None = None             # a stop in progress: {job, pos, total, reply_to}
        self.rate_wait: tuple | None = None       # (since_ns, deadline) after a rate change
        self.private = False                      # a web stream's slot: privately named ring, read in-process


class EngineThread(threading.Thread):
    """The one thread that owns the backend. ``[engine]``"""

    def __init__(self, daemon: "Daemon"):
        super().__init__(name="wavebridge-engine", daemon=True)
        self.d = daemon
        self.q: queue.Queue = queue.Queue(maxsize=daemon.config.queue_max)
        self.alive_ns = time.monotonic_ns()     # watchdog: last loop iteration
        self._halt = threading.Event()
        self.step_ema: float | None = None      # seconds per generating step (recent average)
        self.hostlink = HostLink(self)          # the DAW's transport: tempo/bar lock, quantize

    def stop(self) -> None:
        self._halt.set()
        self.hostlink.close()
        try:
            self.q.put_nowait(Command("wake"))
        except queue.Full:
            pass

    def run(self) -> None:
        d = self.d
        while not self._halt.is_set():
            self.alive_ns = time.monotonic_ns()
            timeout = self._idle_timeout()
            try:
                cmd = self.q.get(timeout=timeout) if timeout > 0 else self.q.get_nowait()
            except queue.Empty:
                cmd = None
            # apply queued commands for at most ~2 ms, then refill: a burst of plays (each one
            # encodes a prompt) must not starve the slots already playing
            t_cmd = time.perf_counter()
            while cmd is not None:
                self._apply_safely(cmd)
                if time.perf_counter() - t_cmd > 0.002:
                    break
                try:
                    cmd = self.q.get_nowait()
                except queue.Empty:
                    cmd = None
            if self._halt.is_set():
                break
            try:
                self._check_slots()
                self._fill()
                if d.midi_out is not None:
                    d.midi_out.collect(self.hostlink)
            except Exception as e:  # noqa: BLE001 — keep the engine alive, report the fault
                log.exception("engine step failed")
                d.emit(Event("error", code="internal", message=f"engine step failed: {e}"))
                time.sleep(0.01)
        self._shutdown()

    # --------------------------------------------------------------------- waiting
    def _idle_timeout(self) -> float:
        d = self.d
        sched = d.scheduler
        if any(sl.rate_wait is not None for sl in d.slots.values()):
            return 0.001
        tails = any(sl.tail_job is not None or sl.fade is not None for sl in d.slots.values())
        if not sched.jobs:
            return 0.01 if tails else 0.05
        if any(d.slots[s].pending == "splice" for s in sched.jobs):
            return 0.0                          # a prompt change waits for its first chunk
        buffered = {}
        for s in sched.jobs:
            sl = d.slots[s]
            buffered[s] = sl.ring.buffered() + sum(c.audio.shape[0] for c in sl.held)
        dl = sched.next_deadline_s(buffered)
        if dl is None:
            return 0.05
        return float(min(0.01 if tails else 0.02, max(0.0, dl)))

    def _check_slots(self) -> None:
        """Per-loop slot housekeeping: release a job held for a rate change once the reader has
        followed it; finish a stop's long fade at once when no reader is there to hear it; a finite
        job is done once its last frame has been read (or no reader is there)."""
        now = time.monotonic_ns()
        for slot in self.d.slots.values():
            try:
                slot.ring.check()               # a shrunk segment, overwritten header fields
            except RingFault as e:
                self._ring_fault(slot, e)
            if slot.rate_wait is not None:
                self._release_rate_wait(slot)
            if slot.fade is not None and now - slot.ring.reader_heartbeat_ns > 500_000_000:
                self._stop_slot(slot, 0.02, slot.fade["reply_to"], now=True)
            job = slot.tail_job
            if job is None:
                continue
            ring = slot.ring
            reader_gone = now - ring.reader_heartbeat_ns > 500_000_000
            if ring.read_index >= slot.tail_end or reader_gone:
                slot.tail_job = None
                if slot.job is None:
                    slot.state = "idle"
                self._done(slot, job, "finished")

    def _ring_fault(self, slot: Slot, e: RingFault) -> None:
        """Answer a ring problem (already logged by the ring); a fatal one stops the slot, whose
        next play gets a fresh ring (``RingWriter.recover``)."""
        self.d.emit(Event("error", slot=slot.number, code=e.code, message=e.message, reply_to=slot.reply_to))
        if e.fatal:
            if slot.job is not None or slot.old_job is not None or slot.tail_job is not None:
                self._stop_slot(slot, 0.02, slot.reply_to, now=True)
            slot.state = "error"

    # --------------------------------------------------------------------- commands
    def _apply_safely(self, cmd: Command) -> None:
        if self.d.on_apply is not None:
            try:
                self.d.on_apply(cmd)
            except Exception:  # noqa: BLE001 — metrics never hurt the engine
                pass
        try:
            self._apply(cmd)
        except WavebridgeError as e:
            self.d.emit(Event("error", slot=cmd.slot, code=e.code, message=e.message, reply_to=cmd.reply_to))
        except Exception as e:  # noqa: BLE001
            log.exception("command %s failed", cmd.kind)
            code = getattr(e, "code", "internal")
            self.d.emit(Event("error", slot=cmd.slot, code=code if isinstance(code, str) else "internal",
                              message=f"{type(e).__name__}: {e}", reply_to=cmd.reply_to))

    def _apply(self, cmd: Command) -> None:
        d = self.d
        if cmd.kind == "play":
            self._play(cmd)
        elif cmd.kind == "stop":
            self.hostlink.stopped(cmd.slot)
            self._stop_slot(d.slots[cmd.slot], cmd.fade_s, cmd.reply_to)
        elif cmd.kind == "param":
            slot = d.slots[cmd.slot]
            if cmd.name == "gain":
                slot.gain_target = cmd.value
                if slot.job is None:      # silent now: no ramp needed
                    slot.gain = cmd.value
            elif cmd.name == "xfade_ms":
                slot.xfade_ms = cmd.value
            else:
                slot.params[cmd.name] = cmd.value
                if slot.job is not None:
                    d.backend.set_param(slot.job.stream, cmd.name, cmd.value)
        elif cmd.kind == "tempo":
            d.backend.set_tempo(cmd.value)
        elif cmd.kind == "close_slot":          # a private slot: end its job now, then drop it
            slot = d.slots[cmd.slot]
            if slot.job is not None or slot.old_job is not None or slot.tail_job is not None:
                self._stop_slot(slot, 0.0, now=True)
            d._drop_private_slot(cmd.slot)
        elif cmd.kind == "transport":
            self.hostlink.transport(cmd)
        elif cmd.kind == "wake":
            pass

    def _play(self, cmd: Command) -> None:
        d = self.d
        slot = d.slots[cmd.slot]
        if self.hostlink.stale(cmd) or self.hostlink.defer(cmd):
            return                              # superseded, or held for its beat/bar line
        cmd.prompt = self.hostlink.prompt_for(cmd.slot, cmd.prompt)
        if slot.ring.recover():                 # raises RingError while the slot has no ring
            slot.gpu_reg = None                 # the new mapping is not registered with CUDA
        try:
            job = d.scheduler.start(cmd.slot, cmd.extra["job"], cmd.prompt,
                                    0 if cmd.seed is None else cmd.seed, cmd.seconds, dict(slot.params))
        except Exception as e:  # noqa: BLE001
            code = getattr(e, "code", "backend")
            d.emit(Event("error", slot=cmd.slot, job=cmd.extra["job"], code=code if isinstance(code, str) else "backend",
                         message=f"could not start: {e}", reply_to=cmd.reply_to))
            return
        job.tag = cmd.reply_to                  # /wb/done for this job goes to whoever started it
        old = d.scheduler.attach(job)
        if old is not None and slot.old_job is None and slot.pending == "append":
            # the slot was idle and its job has not sounded yet: just start over with this one
            d.scheduler.end(old)
            self._done(slot, old, "replaced")
            old = None
        elif old is not None and slot.old_job is not None:
            # the job being replaced never got its first chunk out: drop it, and crossfade from
            # what is still playing (the older job's audio, in the ring)
            d.scheduler.end(old)
            self._done(slot, old, "replaced")
            old = slot.old_job
        if slot.fade is not None:               # replacing a job that was fading out after a stop
            f, slot.fade = slot.fade, None
            if old is f["job"]:
                d.scheduler.end(old)
                self._done(slot, old, "stopped", f["reply_to"])
                old = None
            slot.ring.set_playing(False)
        tail = slot.tail_job
        if tail is not None:                    # a finite job's last audio is still playing
            slot.tail_job = None
            self._done(slot, tail, "replaced")
        replacing = old is not None or slot.ring.buffered() > 0 and (tail is not None or slot.ring.playing)
        if replacing and not d.config.splice:     # naive mode: append behind what is buffered
            if old is not None:
                d.scheduler.end(old)
                self._done(slot, old, "replaced")
            old, replacing = None, False
        slot.old_job = old
        slot.pending = "splice" if replacing else "append"
        self.hostlink.started(slot, job, replacing, cmd)
        if replacing:                           # the first chunk holds the whole crossfade
            xf = self._xfade_frames(slot)
            job.next_chunk = max(d.scheduler.first_chunk, 1 << max(0, (xf + 1023).bit_length()))
            job.next_chunk = min(job.next_chunk, max(d.scheduler.max_chunk, slot.ring.capacity // 2))
        slot.job = job
        slot.held = []
        slot.rate_wait = None
        slot.prompt = cmd.prompt
        slot.state = "playing"
        slot.job_started = time.time()
        slot.arrival_ns = cmd.arrival_ns or time.monotonic_ns()
        slot.reply_to = cmd.reply_to
        self._meta(slot, job)

    def _meta(self, slot: Slot, job: Job, **extra) -> None:
        """Publish the job's metadata in the ring header (``start_at``/``splice_at``: frame positions)."""
        meta = {"slot": slot.number, "job": job.job, "prompt": job.prompt, "backend": self.d.backend.name,
                "seed": job.seed, "seconds": job.seconds, "sample_rate": slot.ring.sample_rate,
                "started_unix": slot.job_started}
        meta.update(extra)
        slot.ring.set_meta(meta)
        if "start_at" in extra:
            self.hostlink.published(slot, job, extra["start_at"])

    def _xfade_frames(self, slot: Slot) -> int:
        ms = slot.xfade_ms if slot.xfade_ms is not None else self.d.config.xfade_ms
        return max(1, int(slot.ring.sample_rate * ms / 1000.0))

    def _stop_slot(self, slot: Slot, fade_s: float, reply_to=None, now: bool = False) -> None:
        """Fade the slot out from just ahead of the read head. ``[engine]``

        The fade starts at ``read_index + guard`` (or at ``write_index`` if less is buffered,
        never on frames the reader may be copying). What the ring holds is faded in place; a
        fade longer than that keeps the job generating under the rest of the curve, and the
        job ends when the curve reaches zero. ``now`` (shutdown, faults) fades only what is
        buffered and ends the job at once.
        """
        d = self.d
        job, tail, ring = slot.job, slot.tail_job, slot.ring
        if job is None and slot.old_job is None and tail is None:
            d.emit(Event("error", slot=slot.number, code="not_playing",
                         message=f"slot {slot.number} is not playing", reply_to=reply_to))
            return
        n = max(1, int(fade_s * ring.sample_rate))
        if slot.fade is not None:               # already fading: a new stop only shortens it
            slot.fade["reply_to"] = reply_to or slot.fade["reply_to"]
            if not now and slot.fade["total"] - slot.fade["pos"] <= n:
                return
        if slot.old_job is not None:            # a prompt change was pending: that job stops too
            d.scheduler.end(slot.old_job)
            self._done(slot, slot.old_job, "stopped", reply_to)
            slot.old_job = None
        if job is None or now or slot.pending:
            at, end = ring.truncate_with_fade(n, d.config.guard_ms)
            ring.set_playing(False)
            for j in (job, tail):
                if j is not None:
                    self._meta(slot, j, stop_at=at, end_at=end)
                    d.scheduler.end(j)
                    self._done(slot, j, "stopped", reply_to)
            self._idle(slot)
            return
        at, done_frames, finished = ring.fade_out(n, d.config.guard_ms)
        self._meta(slot, job, stop_at=at, end_at=at + n)
        if finished:
            ring.set_playing(False)
            d.scheduler.end(job)
            self._done(slot, job, "stopped", reply_to)
            self._idle(slot)
        else:                                   # the rest of the fade comes from new chunks
            slot.fade = {"job": job, "pos": done_frames, "total": n, "reply_to": reply_to}

    def _idle(self, slot: Slot) -> None:
        slot.rate_wait = None
        slot.job = None
        slot.tail_job = None
        slot.fade = None
        slot.pending = ""
        slot.held = []
        slot.state = "idle"

    def _done(self, slot: Slot, job: Job, reason: str, reply_to=None) -> None:
        slot.jobs_done += 1
        cost = job.compute_s * self.d.config.price_per_hour / 3600.0
        self.d.emit(Event("done", slot=slot.number, job=job.job, reply_to=reply_to or job.tag or slot.reply_to,
                          extra={"reason": reason, "compute_s": job.compute_s, "cost": cost,
                                 "audio_s": job.frames_out / max(1, self.d.backend.sample_rate)}))

    # --------------------------------------------------------------------- audio
    def _fill(self) -> None:
        d = self.d
        sched = d.scheduler
        if not sched.jobs:
            return
        buffered: dict[int, int] = {}
        free: dict[int, int] = {}
        for s in list(sched.jobs):
            slot = d.slots[s]
            ring = slot.ring
            if slot.pending == "splice":
                # the new stream replaces what lies beyond the guard: plan as if nearly empty
                buffered[s] = 0
                free[s] = ring.capacity - ring.guard_frames(d.config.guard_ms)
            else:
                b = ring.buffered()
                free[s] = ring.capacity - b
                if ring.sample_rate != d.backend.sample_rate:   # scheduler counts backend frames
                    b = b * d.backend.sample_rate // ring.sample_rate
                    free[s] = free[s] * d.backend.sample_rate // ring.sample_rate - 64
                buffered[s] = b
            if slot.held:                       # generated but held back (see _prebuffer)
                h = sum(c.audio.shape[0] for c in slot.held)
                buffered[s] += h
                free[s] -= h
        t0 = time.perf_counter()
        written = []

        def sink(chunks):                       # write each batch as soon as it exists
            for ch in chunks:
                try:
                    self._write(ch)
                except Exception as e:  # noqa: BLE001 — one slot's fault ends that job only
                    log.exception("writing slot %s failed", ch.job.slot)
                    slot = d.slots[ch.job.slot]
                    d.emit(Event("error", slot=ch.job.slot, job=ch.job.job, code="internal",
                                 message=f"writing the ring failed: {type(e).__name__}: {e}",
                                 reply_to=ch.job.tag or slot.reply_to))
                    if slot.job is ch.job:
                        self._stop_slot(slot, 0.02, now=True)
                        slot.state = "error"
            written.extend(chunks)

        res = sched.step(buffered, free, sink=sink)
        if res.chunks:
            dt = time.perf_counter() - t0
            self.step_ema = dt if self.step_ema is None else 0.8 * self.step_ema + 0.2 * dt
        d.metrics_step(res)
        for f in res.failures:
            slot = d.slots[f.job.slot]
            d.emit(Event("error", slot=f.job.slot, job=f.job.job, code=f.code, message=f.message,
                         reply_to=slot.reply_to))
            if slot.job is f.job:
                self._stop_slot(slot, 0.02, now=True)
                slot.state = "error"
            else:
                sched.end(f.job)

    def _write(self, ch: Chunk) -> None:
        d = self.d
        job = ch.job
        slot = d.slots[job.slot]
        if slot.job is not job:
            return  # stale (replaced or stopped meanwhile)
        ring = slot.ring
        if slot.pending:
            ch = self._prebuffer(slot, ch)
            if ch is None:
                return
            if ch.first and slot.pending == "append" and ring.buffered() == 0:
                self._follow_host_rate(slot)
            if slot.rate_wait is not None:      # the reader has not seen the new rate yet: hold
                slot.held = [ch]
                return
        audio = ch.audio
        if array_module(audio) is not np:
            # the device path covers the steady state only: a splice, a resample, the first or
            # last chunk and a stop's fade-out (which goes on over new chunks) are done on the host
            if (slot.gpu_reg is not None and slot.pending != "splice" and slot.resampler is None
                    and slot.fade is None and ring.sample_rate == d.backend.sample_rate
                    and not ch.last and not ch.first and audio.ndim == 2 and audio.shape[1] == ring.channels):
                self._write_on_device(slot, audio)
                return
            audio = array_module(audio).asnumpy(audio)   # splice, resample, fades: on the host
        if audio.ndim == 1:
            audio = audio[:, None]
        if audio.shape[1] != ring.channels:
            audio = np.repeat(audio[:, :1], ring.channels, axis=1) if audio.shape[1] == 1 else audio[:, :ring.channels]
        if ch.first:
            slot.resampler = (Resampler(d.backend.sample_rate, ring.sample_rate, ring.channels)
                              if ring.sample_rate != d.backend.sample_rate else None)
        if slot.resampler is not None:
            audio = slot.resampler.push(np.ascontiguousarray(audio, dtype=np.float32), last=ch.last)
        g0, g1 = slot.gain, slot.gain_target
        if g0 != 1.0 or g1 != 1.0:
            audio = gain_ramp(audio, g0, g1)
            slot.gain = g1
        if ch.last:
            n = min(audio.shape[0], int(ring.sample_rate * d.config.end_fade_ms / 1000.0))
            if n:
                audio = audio.copy()
                audio[-n:] = fade(audio[-n:], "out")
        audio = soft_limit(np.ascontiguousarray(audio, dtype=np.float32))
        fading_done = False
        if slot.fade is not None and slot.fade["job"] is job:   # a stop's fade continues here
            f = slot.fade
            k = min(audio.shape[0], f["total"] - f["pos"])
            audio = audio[:k] * fade_curve(f["total"], f["pos"], k)[:, None]
            f["pos"] += k
            fading_done = f["pos"] >= f["total"]
        if slot.pending == "splice":
            old = slot.old_job
            # crossfade material beyond what the ring holds (not when resampling: rates differ)
            tail = self._old_tail(old) if old is not None and slot.resampler is None else None
            s, _ = ring.splice(audio, self._xfade_frames(slot), tail, d.config.guard_ms,
                               at=self.hostlink.splice_frame(job))
            if old is not None:
                d.scheduler.end(old)
                self._done(slot, old, "replaced")
                slot.old_job = None
            self._meta(slot, job, start_at=s, splice_at=s)
        else:
            at = max(ring.write_index, ring.read_index)    # where append puts it (reader may be ahead)
            ring.append(audio)
            if ch.first:
                self._meta(slot, job, start_at=at)
        if ch.first:
            ring.set_playing(True)
            slot.pending = ""
            ms = (time.monotonic_ns() - slot.arrival_ns) / 1e6
            d.first_audio_ms.append(ms)
            d.emit(Event("first_audio", slot=job.slot, job=job.job, ms=ms, reply_to=slot.reply_to))
        if fading_done:
            f, slot.fade = slot.fade, None
            ring.set_playing(False)
            d.scheduler.end(job)
            self._done(slot, job, "stopped", f["reply_to"])
            self._idle(slot)
        elif ch.last:                           # done once the reader has heard it (_check_slots)
            d.scheduler.end(job)
            ring.set_playing(False)
            slot.job = None
            slot.tail_job = job
            slot.tail_end = ring.write_index

    def _old_tail(self, old: Job):
        """Crossfade material: the replaced job's next frames, on the host, or None if it fails."""
        def tail(n):
            try:
                a = self.d.scheduler.extra(old, n)
            except Exception:  # noqa: BLE001 — then the crossfade fades from what the ring holds
                log.exception("crossfade material for job %s failed", old.job)
                return None
            if a is None:
                return None
            if array_module(a) is not np:
                a = array_module(a).asnumpy(a)
            return np.asarray(a, dtype=np.float32)
        return tail

    def _prebuffer(self, slot: Slot, ch: Chunk) -> Chunk | None:
        """Hold a starting job's chunks until they cover the time the next steps take.

        A job's audio is first published when it holds at least ``2.5 ×`` the recent step
        time's worth of frames, so the reader never runs dry while the chunks grow. A fast
        backend (the synth: ~1 ms steps) publishes its first small chunk at once; a slow one
        (a neural model on a CPU) waits for a few chunks rather than stutter. ``[engine]``
        """
        held = slot.held
        held.append(ch)
        frames = sum(c.audio.shape[0] for c in held)
        est = max(self.step_ema or 0.0, self.d.scheduler.call_s or 0.0)   # time until the next chunk
        need = int(2.5 * est * self.d.backend.sample_rate)
        if frames < need and not ch.last and frames < self.d.scheduler.target_frames:
            return None
        slot.held = []
        if len(held) == 1:
            return ch
        xp = array_module(ch.audio)
        audio = xp.concatenate([c.audio for c in held], axis=0)
        return Chunk(ch.job, audio, first=held[0].first, last=ch.last)

    def _write_on_device(self, slot: Slot, audio) -> None:
        """The CuPy path: gain ramp, limiter, interleave and store straight into the registered
        ring in one kernel, sync, then publish ``write_index`` on the host. ``[engine]``"""
        ring = slot.ring
        w, r = ring.write_index, ring.read_index
        w = max(w, r)
        n = min(audio.shape[0], ring.capacity - (w - r))
        stitch_and_publish(None, audio[:n].T, ring.data, w, 0, slot.gain, slot.gain_target,
                           publish=ring.publish)
        slot.gain = slot.gain_target

    def _follow_host_rate(self, slot: Slot) -> None:
        """An idle slot takes the host's rate (``reader_sample_rate``) so the reader needs no resampling."""
        ring = slot.ring
        want = ring.reader_sample_rate or self.d.backend.sample_rate
        if want != ring.sample_rate and 8000 <= want <= 384000:
            log.info("slot %s: host runs at %d Hz, resampling from %d Hz", slot.number, want,
                     self.d.backend.sample_rate)
            # the reader resyncs to write_index when it sees the new epoch: the job's first frames
            # wait until it has read once since (one host block; at most 50 ms), or it would skip them
            slot.rate_wait = (time.monotonic_ns(), time.monotonic() + 0.05)
            ring.set_sample_rate(want)

    def _release_rate_wait(self, slot: Slot) -> None:
        """Publish a starting job's held chunks once the reader has followed the rate change."""
        t_ns, deadline = slot.rate_wait
        if slot.ring.reader_heartbeat_ns < t_ns and time.monotonic() < deadline:
            return
        slot.rate_wait = None
        held, slot.held = slot.held, []
        if held and slot.job is held[0].job:
            self._write(held[0])

    def _shutdown(self) -> None:
        """Fade every playing slot to silence (20 ms) at the read head. ``[engine]``"""
        for slot in self.d.slots.values():
            if slot.job is not None or slot.old_job is not None or slot.tail_job is not None:
                try:
                    self._stop_slot(slot, 0.02, now=True)
                except Exception:  # noqa: BLE001
                    log.exception("fade-out of slot %s failed", slot.number)


class Daemon:
    """Rings + backend + engine thread + heartbeat, driven by ``Command`` objects."""

    def __init__(self, config: Config | None = None, emit=None, backend: Backend | None = None):
        self.config = config or Config()
        self._emit = emit or (lambda ev: None)
        self.backend = backend
        self.slots: dict[int, Slot] = {}
        self.scheduler: Scheduler | None = None
        self.engine: EngineThread | None = None
        self._hb_stop = threading.Event()
        self._hb: threading.Thread | None = None
        self._job_counter = 0
        self._private_counter = 0     # names of private (web stream) slots
        self.first_audio_ms: collections.deque = collections.deque(maxlen=1000)   # recent, for status
        self.counters = {"commands": 0, "errors": 0}
        self.errors_by_code: dict[str, int] = {}
        self.on_step = None           # metrics hook: callable(StepResult)
        self.on_apply = None          # metrics hook: callable(Command) as the engine takes it [engine]
        self.midi_out = None          # bridge.midiout.MidiOutput (serve --midi-out), fed by the engine
        self.started_at = time.time()
        self.ready = False
        self.dsp_path = "numpy"

    # ------------------------------------------------------------------ lifecycle [control]
    def open(self) -> "Daemon":
        """Load and warm the backend, create or re-attach the rings, start the threads. ``[control]``"""
        cfg = self.config
        if self.backend is None:
            self.backend = get_backend(cfg.backend, **cfg.backend_kwargs)
        t0 = time.perf_counter()
        self.backend.warmup()
        self.warmup_s = time.perf_counter() - t0
        rate = int(self.backend.sample_rate)
        target = int(cfg.target_s * rate)
        cap = 1 << math.ceil(math.log2(max(2 * target + 2 * cfg.max_chunk, rate)))
        names = cfg.slot_names or list(range(1, cfg.slots + 1))
        try:
            refused = {}
            for n in names:
                try:
                    ring = RingWriter.open(n, rate, self.backend.channels, cap)
                except RingError as e:          # that slot only: the others start
                    log.error("slot %s refused: %s", n, e.message)
                    refused[n] = e
                    ring = RingWriter.unavailable(n, rate, self.backend.channels, cap, e)
                self.slots[n] = Slot(n, ring)
                if n in refused:
                    self.slots[n].state = "error"
                else:
                    log.info("slot %s: %s %s (%d frames, %d Hz, %d ch)", n,
                             "created" if ring.created else "re-attached", ring.path, cap, rate, ring.channels)
            if refused and all(e.code == "ring_busy" for e in refused.values()) and len(refused) == len(names):
                raise next(iter(refused.values()))  # every ring held by a live daemon: that one serves
        except BaseException:
            for s in self.slots.values():
                s.ring.close(unlink=s.ring.created)
            raise
        self.ring_capacity = cap
        self.dsp_path = self._choose_dsp_path()
        self.scheduler = Scheduler(self.backend, target_frames=target, first_chunk=cfg.first_chunk,
                                   max_chunk=cfg.max_chunk)
        self.engine = EngineThread(self)
        self.engine.start()
        self._hb = threading.Thread(target=self._heartbeat, name="wavebridge-heartbeat", daemon=True)
        self._hb.start()
        self.ready = True
        return self

    def _choose_dsp_path(self) -> str:
        """``cupy`` when the backend's audio is on an NVIDIA GPU and CuPy works, else ``numpy``."""
        path = "numpy"
        if str(getattr(self.backend, "device", "cpu")).startswith("cuda"):
            try:
                from dsp import gpu

                if gpu.available():
                    gpu.warmup()
                    for s in self.slots.values():
                        s.gpu_reg = gpu.register_host(s.ring.data)
                    path = "cupy"
                else:
                    log.warning("backend runs on %s but CuPy has no usable device: stitching on the host",
                                self.backend.device)
            except Exception as e:  # noqa: BLE001 — the host path always works
                log.warning("CuPy path unavailable (%s): stitching on the host", e)
                for s in self.slots.values():
                    if s.gpu_reg is not None:
                        s.gpu_reg.close()
                        s.gpu_reg = None
        log.info("dsp path: %s", path)
        return path

    def close(self, unlink: bool = True, linger_s: float = 0.1) -> None:
        """Fade out, stop the threads, unlink the rings. ``[control]``"""
        stuck = False
        if self.engine is not None:
            self.engine.stop()
            self.engine.join(timeout=1.5)
            stuck = self.engine.is_alive()
            if stuck:                 # inside a long backend call: leave its memory alone
                log.error("engine thread did not stop within 1.5 s; exiting without its fade-out")
            elif linger_s > 0 and any(s.ring.buffered() for s in self.slots.values()):
                time.sleep(linger_s)  # let a live reader play the fade
        self._hb_stop.set()
        if self._hb is not None:
            self._hb.join(timeout=0.5)
        for s in self.slots.values():
            if s.gpu_reg is not None and not stuck:   # a stuck engine may still launch into it
                try:
                    s.gpu_reg.close()
                except Exception:  # noqa: BLE001
                    log.exception("unregistering slot %s from CUDA failed", s.number)
                s.gpu_reg = None
            s.ring.close(unlink=unlink, keep_mapping=stuck)
        if self.backend is not None and not stuck:
            try:
                self.backend.close()
            except Exception:  # noqa: BLE001
                log.exception("backend close failed")
        self.ready = False

    # ------------------------------------------------------------------ private slots [control]
    def open_private_slot(self, prefix: str = "web") -> Slot:
        """A slot for a web stream: a ring under a private name (``web<pid>-<n>``, unknown to any
        DAW) whose one reader is in this process. It plays like any slot (same scheduler, batching,
        splices) but :meth:`status` leaves it out and OSC cannot address it. Close it with
        :meth:`close_private_slot`. ``[control]``"""
        self._private_counter += 1
        name = f"{prefix}{os.getpid()}-{self._private_counter}"
        ring = RingWriter.open(name, int(self.backend.sample_rate), self.backend.channels, self.ring_capacity)
        slot = Slot(name, ring)
        slot.private = True
        self.slots = {**self.slots, name: slot}   # copy on write: other threads iterate the old dict
        return slot

    def close_private_slot(self, name) -> None:
        """Stop a private slot's job at once and drop the slot; done on the engine thread. ``[control]``"""
        slot = self.slots.get(name)
        if slot is None or not slot.private:
            return
        try:
            self.engine.q.put_nowait(Command("close_slot", slot=name, source="http"))
        except queue.Full:                      # retried by the caller's cleanup; the slot stays
            raise WavebridgeError("busy", "engine queue is full; try again", slot=-1) from None

    def _drop_private_slot(self, name) -> None:
        """Remove a private slot and close its ring. ``[engine]`` (after its job ended)"""
        slot = self.slots.get(name)
        if slot is None or not slot.private:
            return
        self.slots = {k: v for k, v in self.slots.items() if k != name}
        slot.ring.close(unlink=True)

    def _heartbeat(self) -> None:
        while not self._hb_stop.wait(0.05):
            for s in list(self.slots.values()):
                try:
                    s.ring.heartbeat()
                except Exception:  # noqa: BLE001 — ring closing under us at shutdown
                    pass

    # ------------------------------------------------------------------ control [control]
    def emit(self, ev: Event) -> None:
        if ev.kind == "error":
            self.errors_by_code[ev.code] = self.errors_by_code.get(ev.code, 0) + 1
        self._emit(ev)

    def count_error(self, code: str) -> None:
        self.counters["errors"] += 1
        self.errors_by_code[code] = self.errors_by_code.get(code, 0) + 1

    def params(self) -> dict:
        p = dict(COMMON_PARAMS)
        for k, v in getattr(self.backend, "params", {}).items():
            p.setdefault(k, v[:2])
        return p

    def submit(self, cmd: Command) -> int:
        """Enqueue a command for the engine; returns the job id for ``play`` (else 0). ``[control]``"""
        if cmd.kind in ("play", "stop", "param") and cmd.slot not in self.slots:
            raise WavebridgeError("bad_slot", f"slot {cmd.slot} does not exist")
        job = 0
        if cmd.kind == "play":
            self._job_counter += 1
            job = self._job_counter
            cmd.extra["job"] = job
        if not cmd.arrival_ns:
            cmd.arrival_ns = time.monotonic_ns()
        try:
            self.engine.q.put_nowait(cmd)
        except queue.Full:
            raise WavebridgeError("busy", "engine queue is full; try again", slot=cmd.slot) from None
        self.counters["commands"] += 1
        return job

    def status(self, private: bool = False) -> list[dict]:
        """One dict per slot: state, prompt, buffered seconds, underruns, job, age. ``[control]``

        Private (web stream) slots are left out unless ``private``."""
        out = []
        now = time.time()
        for n, s in self.slots.items():
            if s.private and not private:
                continue
            ring = s.ring
            job = s.job or s.tail_job
            out.append({
                "slot": n, "state": s.state if job is not None or s.state == "error" else "idle",
                "prompt": s.prompt if job is not None else "", "job": job.job if job else 0,
                "buffered_s": ring.buffered() / ring.sample_rate, "underrun_frames": ring.underrun_frames,
                "age_s": (now - s.job_started) if job is not None else 0.0,
                "reader_alive": (time.monotonic_ns() - ring.reader_heartbeat_ns) < 1_000_000_000,
                "splices_overtaken": ring.splices_overtaken, "dsp": self.dsp_path,
            })
        return out

    def metrics_step(self, res) -> None:
        if self.on_step is not None:
            try:
                self.on_step(res)
            except Exception:  # noqa: BLE001
                pass
