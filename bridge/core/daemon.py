"""Daemon core: slots, rings, the engine thread and the heartbeat — no sockets.

Threads:
- ``[control]`` (the caller, normally the asyncio loop): :meth:`Daemon.submit` validates
  nothing further (adapters already made a ``Command``), assigns a job id and enqueues it;
  :meth:`Daemon.status` reads counters. Never runs inference.
- ``[engine]`` (:class:`EngineThread`, one): owns the backend and the scheduler, applies
  commands, generates chunks in batches, applies gain and the limiter, writes and splices the
  rings. Events (``started`` is sent by the adapter; ``first_audio``, ``done``, ``error``) go
  back through the daemon's :class:`~bridge.core.events.EventBus` (``Daemon.bus``), which only
  enqueues and calls each subscriber on its own loop. It never waits on the control thread.
- heartbeat: refreshes every ring's ``writer_heartbeat_ns`` at 20 Hz.

Audio path of a play: datagram → ``Command`` → engine queue → ``Scheduler.start`` → the
slot's :class:`~bridge.core.slotstate.SlotMachine` (``starting`` on a silent slot, ``replacing`` on an
audible one) → first small chunk → the write pipeline → appended, or spliced at the read head →
``first_audio`` event with the measured milliseconds since arrival. Every lifecycle decision
(when a job starts, is replaced, fades, drains, switches rate, ends) is the slot machine's; the
engine thread executes the actions it returns.
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

from dsp import Resampler, array_module, fade, scale_ring, soft_limit, stitch_and_publish
from engine import get_backend
from engine.backend import Backend
from engine.scheduler import Chunk, Job, Scheduler

from bridge.core.commands import COMMON_PARAMS, Command
from bridge.core.events import Event, EventBus
from bridge.core.hostlink import HostLink
from plugin_stub.protocol import OFF_READER_PID, RingError, RingFault, WavebridgeError
from bridge.core.ring import RingWriter
from bridge.core.slotstate import (DRAINING, ERROR, FADING, IDLE, PLAYING, QUICK_FADE_S, REPLACING, STARTING, SWITCHING, ChunkReady,
                        Close, Drop, End, Envelope, Error, Failed, FadeRing, FirstAudio, Flush, Fault, Hold, Param,
                        Play, Progress, Reattach, Release, RingView, SetParam, SetPlaying, SetRate, SlotMachine, Stop,
                        Tail, Write)

log = logging.getLogger("wavebridge")

#: run the write pipeline on the device when chunks are CuPy arrays and the ring is registered
DEVICE_PIPELINE = True


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


def validate_config(cfg: Config) -> None:
    """Refuse settings the engine cannot run with, naming the field (``ValueError``). ``[control]``"""
    def bad(msg):
        raise ValueError(f"invalid daemon config: {msg}")

    for name in ("first_chunk", "max_chunk", "queue_max", "slots"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            bad(f"{name} must be a positive integer, got {v!r}")
    if not 64 <= cfg.first_chunk <= cfg.max_chunk:
        bad(f"first_chunk must be 64..max_chunk ({cfg.max_chunk}) frames, got {cfg.first_chunk}")
    if cfg.max_chunk > 1 << 18:
        bad(f"max_chunk must be at most {1 << 18} frames, got {cfg.max_chunk}")
    for name, lo, hi in (("target_s", 0.05, 30.0), ("xfade_ms", 1.0, 500.0), ("guard_ms", 1.0, 500.0),
                         ("end_fade_ms", 0.0, 1000.0), ("price_per_hour", 0.0, 1e6)):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
            bad(f"{name} must be a number in [{lo:g}, {hi:g}], got {v!r}")


class CommandQueue:
    """The engine's inbox. ``[control]`` puts, ``[engine]`` takes.

    A bounded FIFO with two rules that keep a flood of control input harmless: a ``param`` for a
    (slot, name) already waiting is merged into the waiting command (the newest value wins, the
    place in line is kept), so a MIDI CC fanned out to every slot costs one entry per slot and
    name; ``stop`` (a note-off) and ``wake`` are accepted beyond the bound, so a full queue never
    leaves a note hanging; a ``play`` queued behind a still-waiting ``play`` of the same slot
    supersedes it (the engine reports the older job ``done``/``replaced`` without starting it:
    it would have been replaced before it sounded), so a burst of prompt changes costs one start.
    """

    URGENT = ("stop", "wake")

    def __init__(self, maxsize: int):
        self.maxsize = max(1, int(maxsize))
        self._dq: collections.deque = collections.deque()
        self._cv = threading.Condition()
        self._params: dict = {}
        self._last: dict = {}          # slot → its newest waiting play/stop
        self.coalesced = 0

    def put_nowait(self, cmd: Command) -> None:
        with self._cv:
            key = (cmd.slot, cmd.name) if cmd.kind == "param" else None
            if key is not None and key in self._params:
                waiting = self._params[key]
                waiting.value, waiting.reply_to = cmd.value, cmd.reply_to
                self.coalesced += 1
                return
            n = len(self._dq)
            if n >= self.maxsize and not (cmd.kind in self.URGENT and n < 4 * self.maxsize + 256):
                raise queue.Full
            if key is not None:
                self._params[key] = cmd
            elif cmd.kind in ("play", "stop"):
                last = self._last.get(cmd.slot)
                if cmd.kind == "play" and last is not None and last.kind == "play":
                    if cmd.extra.get("job", 0) >= last.extra.get("job", 0):
                        last.extra["superseded"] = True
                        self.coalesced += 1
                        self._last[cmd.slot] = cmd
                    # else an older play (a quantized one its timer put back, bridge.core.hostlink) behind a
                    # newer one: the newer one, applied first, drops it
                else:
                    self._last[cmd.slot] = cmd
            self._dq.append(cmd)
            self._cv.notify()

    put = put_nowait

    def get(self, timeout: float | None = None) -> Command:
        with self._cv:
            if not self._dq:
                self._cv.wait(timeout)
                if not self._dq:
                    raise queue.Empty
            cmd = self._dq.popleft()
            if cmd.kind == "param" and self._params.get((cmd.slot, cmd.name)) is cmd:
                del self._params[(cmd.slot, cmd.name)]
            elif self._last.get(cmd.slot) is cmd:
                del self._last[cmd.slot]
            return cmd

    def get_nowait(self) -> Command:
        return self.get(timeout=0)

    def qsize(self) -> int:
        return len(self._dq)


class Slot:
    """One slot: its ring, its :class:`~bridge.core.slotstate.SlotMachine` and the engine's per-slot
    audio state. Written by ``[engine]``; ``[control]`` reads plain fields for status."""

    def __init__(self, number, ring: RingWriter):
        self.number = number
        self.ring = ring
        self.sm = SlotMachine(number)
        self.prompt = ""
        self.job_started = 0.0
        self.gain = 1.0
        self.gain_target = 1.0
        self.xfade_ms: float | None = None
        self.params: dict[str, float] = {}
        self.arrival_ns = 0
        self.reply_to = None
        self.jobs_done = 0
        self.resamplers: dict[int, Resampler] = {}  # id(job) → its stream's resampler to the ring's rate
        self.gpu_reg = None                          # the ring's data registered with CUDA (cupy path)
        self.held: list = []                         # chunks not written yet (prebuffer, rate gate, switch)
        self.gate_ns: int | None = None              # after a rate change: hold audio until the reader follows
        # the reader watch (two readers on one ring)
        self.reader_pid = 0
        self.pid_changes: collections.deque = collections.deque(maxlen=8)
        self.read_mark: tuple | None = None
        self.fast_windows = 0
        self.readers = 1
        self.readers_since = 0
        self.private = False                         # a web stream's slot: privately named ring, read in-process
        self.reanchor: int | None = None             # job whose ring origin (bridge.core.hostlink) a rate switch moved

    # views for status, metrics and tests
    @property
    def state(self) -> str:
        st = self.sm.state
        return "error" if st == ERROR else ("idle" if st == IDLE else "playing")

    @property
    def job(self) -> Job | None:
        return self.sm.job

    @property
    def tail_job(self) -> Job | None:
        return self.sm.tail

    @property
    def pending(self) -> str:
        """The current job's first audio is not out yet: ``append`` (a silent slot) or ``splice``
        (it replaces what is audible); ``""`` otherwise (for :mod:`bridge.core.hostlink`)."""
        st = self.sm.state
        if st == REPLACING:
            return "splice"
        if st == STARTING or (st == SWITCHING and not self.sm.sounded):
            return "append"
        return ""


class EngineThread(threading.Thread):
    """The one thread that owns the backend. ``[engine]``

    Each :meth:`turn` applies queued commands, sends every slot's machine a ``Progress`` event
    (read/write heads, the reader's rate and liveness) and runs one scheduler step; every decision
    about a slot's lifecycle is its :class:`~bridge.core.slotstate.SlotMachine`'s, and this class only
    executes the actions it returns. Audio goes through one pipeline per chunk
    (:meth:`_write`): device → resample → gain → shape (fade-in, end fade) → limit → envelope →
    append or splice; on the CuPy path the gain, limiter, envelope, crossfade and ring store are
    one kernel writing into the registered ring.
    """

    def __init__(self, daemon: "Daemon"):
        super().__init__(name="wavebridge-engine", daemon=True)
        self.d = daemon
        self.q = CommandQueue(daemon.config.queue_max)
        self.clock_ns = daemon.clock_ns
        self.alive_ns = self.clock_ns()          # watchdog: last loop iteration
        self._halt = threading.Event()
        self.step_ema: float | None = None       # seconds per generating step (recent average)
        self.store_s = 0.0                       # slowest read-index-to-publish of a splice (decaying)
        self.hostlink = HostLink(self)           # the DAW's transport: tempo/bar lock, quantize
        self._reported: dict[int, None] = {}     # job ids already answered with /wb/done (recent)

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
        self._shutdown()

    def turn(self, timeout: float = 0.0) -> None:
        """One loop iteration: commands (for at most ~2 ms), slot progress, one scheduler step. ``[engine]``"""
        d = self.d
        self.alive_ns = self.clock_ns()
        try:
            cmd = self.q.get(timeout=timeout) if timeout > 0 else self.q.get_nowait()
        except queue.Empty:
            cmd = None
        # a burst of plays (each one encodes a prompt) must not starve the slots already playing
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
            return
        try:
            self._progress_all()
            self._fill()
            if d.midi_out is not None:
                d.midi_out.collect(self.hostlink)
        except Exception as e:  # noqa: BLE001 — keep the engine alive, report the fault
            log.exception("engine step failed")
            d.emit(Event("error", code="internal", message=f"engine step failed: {e}"))
            time.sleep(0.01)

    # --------------------------------------------------------------------- waiting
    def _idle_timeout(self) -> float:
        d = self.d
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

    def guard(self, slot: Slot) -> int:
        """Splice/fade distance ahead of the read head: the ring's guard (≥ 2 host blocks, ≥ guard_ms)
        plus twice the slowest recent read-index-to-publish time of this writer, in frames."""
        ring = slot.ring
        return ring.guard_frames(self.d.config.guard_ms) + int(math.ceil(2.0 * self.store_s * ring.sample_rate))

    def _view(self, slot: Slot) -> RingView:
        ring = slot.ring
        hb = ring.reader_heartbeat_ns
        alive = self.clock_ns() - hb < 500_000_000
        left = hb != 0 and not alive
        if slot.private:    # its one reader is this process's web stream, there until close_slot; its
            alive, left = True, False   # heartbeat waits while the stream's encoder works
        return RingView(ring.read_index, ring.write_index, self.guard(slot), ring.sample_rate,
                        ring.reader_sample_rate, alive, left)

    # --------------------------------------------------------------------- the machine
    def _handle(self, slot: Slot, ev) -> None:
        """Feed one event to the slot's machine and execute what it returns, in order. ``[engine]``"""
        for a in slot.sm.handle(ev):
            getattr(self, "_do_" + type(a).__name__.lower())(slot, a)

    def _do_end(self, slot: Slot, a: End) -> None:
        self._release(a.job, slot)
        cur = slot.sm.job
        if a.reason == "replaced" and cur is not None and cur.cont_of is a.job:
            cur.cont_of = None                  # (no chain of ended jobs kept alive)
            return                              # replaced by its own re-timed continuation: still playing
        self._done(slot, a.job, a.reason, a.reply_to)

    def _do_release(self, slot: Slot, a: Release) -> None:
        self._release(a.job, slot)

    def _release(self, job: Job, slot: Slot) -> None:
        slot.resamplers.pop(id(job), None)
        if not job.done:
            self.d.scheduler.end(job)

    def _do_reattach(self, slot: Slot, a: Reattach) -> None:
        self.d.scheduler.attach(a.job)

    def _do_write(self, slot: Slot, a: Write) -> None:
        self._write(slot, a)

    def _do_fadering(self, slot: Slot, a: FadeRing) -> None:
        self._fade_ring(slot, a)

    def _do_tail(self, slot: Slot, a: Tail) -> None:
        ring = slot.ring
        w = max(ring.write_index, ring.read_index)
        k = min(a.frames, ring.capacity // 4)
        tail = ring.load(w - k, k)[::-1] * Envelope.fade_out(0, k).gains(0, k)[:, None]
        ring.append(np.ascontiguousarray(tail, dtype=np.float32))

    def _do_drop(self, slot: Slot, a: Drop) -> None:
        ring = slot.ring
        if ring.write_index > ring.read_index:
            ring.publish(ring.read_index)

    def _do_setplaying(self, slot: Slot, a: SetPlaying) -> None:
        slot.ring.set_playing(a.playing)

    def _do_firstaudio(self, slot: Slot, a: FirstAudio) -> None:
        if a.job.retimed:                       # a re-timed continuation: the job sounded long ago
            return
        ms = (self.clock_ns() - slot.arrival_ns) / 1e6
        self.d.first_audio_ms.append(ms)
        self.d.emit(Event("first_audio", slot=slot.number, job=a.job.job, ms=ms, reply_to=a.job.tag or slot.reply_to))

    def _do_setrate(self, slot: Slot, a: SetRate) -> None:
        ring = slot.ring
        log.info("slot %s: host runs at %d Hz, resampling from %d Hz", slot.number, a.rate, self.d.backend.sample_rate)
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
        self._offer(slot)

    def _do_error(self, slot: Slot, a: Error) -> None:
        self.d.emit(Event("error", slot=slot.number, code=a.code, message=a.message, reply_to=a.reply_to))

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
                self.d.backend.set_param(a.job.stream, a.name, a.value)

    # --------------------------------------------------------------------- per turn
    def _progress_all(self) -> None:
        """Every slot's ring is checked (a shrunk segment, overwritten header fields), its machine
        hears where the ring's heads are, and held audio is offered again."""
        now = self.clock_ns()
        for slot in self.d.slots.values():
            try:
                slot.ring.check()
            except RingFault as e:
                self._ring_fault(slot, e)
            view = self._view(slot)
            self._watch_reader(slot, view, now)
            self._handle(slot, Progress(view))
            if slot.held:
                self._offer(slot)

    def _ring_fault(self, slot: Slot, e: RingFault) -> None:
        """Answer a ring problem (already logged by the ring). A fatal one (the segment shrank: the
        ring now runs on private memory) is the machine's :class:`~bridge.core.slotstate.Fault`: every
        job ends at once, the slot is in error, and its next play gets a fresh ring
        (``RingWriter.recover`` in :meth:`_play`). ``[engine]``"""
        self.d.emit(Event("error", slot=slot.number, code=e.code, message=e.message, reply_to=slot.reply_to))
        if e.fatal:
            self._unregister(slot)
            slot.held, slot.gate_ns = [], None
            self._handle(slot, Fault(slot.reply_to))

    def _unregister(self, slot: Slot) -> None:
        """The ring's mapping changed (retired to private memory, or recovered): its CUDA
        registration is stale; the slot writes on the host path from now on. ``[engine]``"""
        Daemon._unregister_slot(slot)

    def _mapped(self, slot: Slot) -> None:
        """Before the pipeline stores into ``ring.data`` directly: ``fstat`` the segment (one that
        shrank is retired to private memory before anything touches it). ``[engine]``"""
        ring = slot.ring
        ring.probe()
        if ring.fault is not None and slot.gpu_reg is not None:
            self._unregister(slot)

    def _watch_reader(self, slot: Slot, view: RingView, now: int) -> None:
        """Two readers advancing one ring: the reader pid flipping back and forth, or ``read_index``
        moving at well over the ring's rate for two seconds running. Logged once, counted as the
        error code ``two_readers``, shown in status as ``readers: 2``."""
        ring = slot.ring
        try:
            pid = int(ring._u32[OFF_READER_PID // 4])
        except Exception:  # noqa: BLE001 — a closing ring
            return
        if pid != slot.reader_pid:
            if slot.reader_pid and pid:
                slot.pid_changes.append(now)
            slot.reader_pid = pid
        mark = slot.read_mark
        if mark is None or now - mark[0] >= 1_000_000_000:
            if mark is not None and view.reader_alive and view.rate:
                speed = (view.read - mark[1]) * 1e9 / max(1, now - mark[0]) / view.rate
                slot.fast_windows = slot.fast_windows + 1 if 1.7 < speed < 8.0 else 0
            slot.read_mark = (now, view.read)
        flips = sum(1 for t in slot.pid_changes if now - t < 3_000_000_000) >= 2
        two = flips or slot.fast_windows >= 2
        if two and slot.readers == 1:
            slot.readers, slot.readers_since = 2, now
            log.warning("slot %s: two readers are advancing read_index (reader pid %s%s): each hears part "
                        "of the stream; give every plugin instance its own slot", slot.number, pid,
                        ", pids alternating" if flips else ", read at twice the rate")
            self.d.count_error("two_readers")
        elif two:
            slot.readers_since = now
        elif slot.readers == 2 and now - slot.readers_since > 5_000_000_000:
            slot.readers = 1

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
            self.hostlink.stopped(cmd.slot)     # a held quantized play is dropped
            slot = d.slots[cmd.slot]
            n = max(int(0.001 * slot.ring.sample_rate), int(cmd.fade_s * slot.ring.sample_rate))
            self._handle(slot, Stop(n, cmd.reply_to, self._view(slot)))
        elif cmd.kind == "param":
            self._handle(d.slots[cmd.slot], Param(cmd.name, cmd.value))
        elif cmd.kind == "tempo":
            d.backend.set_tempo(cmd.value)
        elif cmd.kind == "close_slot":          # a private slot: end its jobs now (no fade), then drop it
            slot = d.slots.get(cmd.slot)
            if slot is not None and slot.private:
                slot.held, slot.gate_ns = [], None
                self._handle(slot, Close())
                d._drop_private_slot(cmd.slot)
        elif cmd.kind == "transport":
            self.hostlink.transport(cmd)

    def _open_jobs(self) -> list[Job]:
        """Jobs holding a backend stream now (current, being replaced)."""
        out = [j for j in self.d.scheduler.jobs.values() if not j.done]
        out += [s.sm.old for s in self.d.slots.values() if s.sm.old is not None and not s.sm.old.done]
        return out

    def _play(self, cmd: Command) -> None:
        d = self.d
        sched = d.scheduler
        slot = d.slots[cmd.slot]
        sm = slot.sm
        job_id = cmd.extra["job"]
        if self.hostlink.stale(cmd):            # a held quantized play that a newer play or stop dropped
            return
        if cmd.extra.get("superseded"):         # a newer play of this slot waits behind it
            d.emit(Event("done", slot=cmd.slot, job=job_id, reply_to=cmd.reply_to,
                         extra={"reason": "replaced", "compute_s": 0.0, "cost": 0.0, "audio_s": 0.0}))
            return
        if self.hostlink.defer(cmd):
            return                              # held for its beat/bar line
        cmd.prompt = self.hostlink.prompt_for(cmd.slot, cmd.prompt)
        if slot.ring.recover():                 # an error slot's ring: raises RingError while it has none
            self._unregister(slot)              # the new mapping is not registered with CUDA
        if len(self._open_jobs()) >= sched.max_batch:
            # at capacity: this slot's own streams go first (a crossfade then fades from the ring)
            own = [j for j in (sm.old, sm.job) if j is not None and not j.done]
            if not own:
                d.emit(Event("error", slot=cmd.slot, job=job_id, code="busy",
                             message=f"the {d.backend.name} backend serves at most {sched.max_batch} streams and "
                                     f"all are playing; stop a slot first", reply_to=cmd.reply_to))
                return
            sched.end(own[0])
        try:
            job = sched.start(cmd.slot, job_id, cmd.prompt, 0 if cmd.seed is None else cmd.seed, cmd.seconds,
                              dict(slot.params))
        except Exception as e:  # noqa: BLE001
            code = getattr(e, "code", "backend")
            d.emit(Event("error", slot=cmd.slot, job=job_id, code=code if isinstance(code, str) else "backend",
                         message=f"could not start: {e}", reply_to=cmd.reply_to))
            return
        job.tag = cmd.reply_to                  # /wb/done for this job goes to whoever started it
        sched.attach(job)
        slot.prompt = cmd.prompt
        slot.job_started = time.time()
        slot.arrival_ns = cmd.arrival_ns or self.clock_ns()
        slot.reply_to = cmd.reply_to
        self._handle(slot, Play(job, self._view(slot)))
        self.hostlink.started(slot, job, sm.state == REPLACING, cmd)
        if sm.state == REPLACING:
            self._crossfade_chunk(slot, job)
        self._meta(slot, job)

    def _crossfade_chunk(self, slot: Slot, job: Job, extra: int = 0) -> None:
        """A replacing job's first chunk holds the whole crossfade (and ``extra`` ring frames)."""
        sched = self.d.scheduler
        xf = self._xfade_frames(slot) + extra
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
        d = self.d
        sm = slot.sm
        job = sm.job
        if sm.state != PLAYING or job is None or job.done or not d.config.splice:
            return False
        ring = slot.ring
        if not ring.read_index + self.guard(slot) <= at < ring.write_index:
            return False
        if len(self._open_jobs()) >= d.scheduler.max_batch:
            return False
        sr, rr = d.backend.sample_rate, ring.sample_rate
        f_at = int(round((at - origin) * sr / rr))
        if f_at <= 0 or f_at >= d.backend.render_head(job.stream):
            return False
        total = 0
        if job.frames_total:
            total = job.frames_total - f_at
            if total <= sr // 2:
                return False                    # nearly over: let it finish as it is
        stream = d.backend.continuation(job.stream, f_at, job.job, shift)
        if stream is None:
            return False
        new = Job(job=job.job, slot=job.slot, prompt=job.prompt, seed=job.seed, seconds=job.seconds,
                  stream=stream, frames_total=total, next_chunk=d.scheduler.first_chunk,
                  compute_s=job.compute_s, tag=job.tag, retimed=True, cont_of=job,
                  prior_frames=job.prior_frames + f_at)
        d.scheduler.attach(new)
        self._handle(slot, Play(new, self._view(slot)))
        self.hostlink.place_continuation(slot, new, at, host_beat_at)
        self._crossfade_chunk(slot, new, extra=2 * self.guard(slot))   # room to land late (see _splice)
        d.retimes += 1
        return True

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

    def _done(self, slot: Slot, job: Job, reason: str, reply_to=None) -> None:
        if job.job in self._reported:           # a job and its continuation end once
            return
        self._reported[job.job] = None
        if len(self._reported) > 4096:
            self._reported.pop(next(iter(self._reported)))
        slot.jobs_done += 1
        cost = job.compute_s * self.d.config.price_per_hour / 3600.0
        self.d.emit(Event("done", slot=slot.number, job=job.job, reply_to=reply_to or job.tag or slot.reply_to,
                          extra={"reason": reason, "compute_s": job.compute_s, "cost": cost,
                                 "audio_s": (job.prior_frames + job.frames_out) / max(1, self.d.backend.sample_rate)}))

    # --------------------------------------------------------------------- generation
    def _buffered(self) -> dict[int, int]:
        d = self.d
        out = {}
        for s in d.scheduler.jobs:
            slot = d.slots[s]
            b = 0 if slot.sm.state in (REPLACING, SWITCHING) else slot.ring.buffered()
            if slot.ring.sample_rate != d.backend.sample_rate:     # the scheduler counts backend frames
                b = b * d.backend.sample_rate // slot.ring.sample_rate
            out[s] = b + sum(int(c.audio.shape[0]) for c in slot.held)
        return out

    def _fill(self) -> None:
        d = self.d
        sched = d.scheduler
        if not sched.jobs:
            return
        buffered = self._buffered()
        free: dict[int, int] = {}
        for s in list(sched.jobs):
            slot = d.slots[s]
            ring = slot.ring
            if slot.sm.state in (REPLACING, SWITCHING):
                # the new stream replaces what lies beyond the guard: plan as if nearly empty
                f = ring.capacity - self.guard(slot)
            else:
                f = ring.capacity - ring.buffered()
            if ring.sample_rate != d.backend.sample_rate:
                f = f * d.backend.sample_rate // ring.sample_rate - 64
            free[s] = f - sum(int(c.audio.shape[0]) for c in slot.held)
        t0 = self.clock_ns()

        def sink(chunks):                       # write each batch as soon as it exists
            for ch in chunks:
                slot = d.slots[ch.job.slot]
                if ch.job is not slot.sm.job:
                    continue                    # stale (replaced or stopped meanwhile)
                slot.held.append(ch)
                try:
                    self._offer(slot)
                except Exception as e:  # noqa: BLE001 — one slot's fault ends that job only
                    log.exception("writing slot %s failed", ch.job.slot)
                    d.emit(Event("error", slot=slot.number, job=ch.job.job, code="internal",
                                 message=f"writing the ring failed: {type(e).__name__}: {e}",
                                 reply_to=ch.job.tag or slot.reply_to))
                    slot.held = []
                    self._handle(slot, Failed(ch.job, self._view(slot)))

        # waiting commands (a burst of plays) go first once the slots still to be served have a
        # safe margin: each play then starts within a step, not after every other slot's refill
        margin = int(d.backend.sample_rate * max(0.1, 4 * (sched.call_s or 0.0)))
        q = self.q

        def yield_to(frames: int) -> bool:
            return frames >= margin and q.qsize() > 0

        res = sched.step(buffered, free, sink=sink, yield_to=yield_to)
        if res.chunks:
            dt = (self.clock_ns() - t0) / 1e9
            self.step_ema = dt if self.step_ema is None else 0.8 * self.step_ema + 0.2 * dt
        d.metrics_step(res)
        for f in res.failures:
            slot = d.slots[f.job.slot]
            d.emit(Event("error", slot=f.job.slot, job=f.job.job, code=f.code, message=f.message,
                         reply_to=f.job.tag or slot.reply_to))
            if f.job is slot.sm.job:
                slot.held = []
                self._handle(slot, Failed(f.job, self._view(slot)))
            if not f.job.done:
                sched.end(f.job)

    def _offer(self, slot: Slot) -> None:
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
            est = max(self.step_ema or 0.0, self.d.scheduler.call_s or 0.0)
            need = int(2.5 * est * self.d.backend.sample_rate)
            if frames < need and not held[-1].last and frames < self.d.scheduler.target_frames:
                slot.held = held
                return
        slot.held = []
        if len(held) == 1:
            ch = held[0]
        else:
            xp = array_module(held[0].audio)
            ch = Chunk(held[0].job, xp.concatenate([c.audio for c in held], axis=0),
                       first=held[0].first, last=held[-1].last)
        self._handle(slot, ChunkReady(ch.job, ch, ch.first, ch.last))
        self._handle(slot, Progress(self._view(slot)))

    # --------------------------------------------------------------------- the audio pipeline
    def _write(self, slot: Slot, w: Write) -> None:
        """device → resample → shape → [gain → crossfade → limit → envelope → store] → publish. ``[engine]``

        The bracket is one :func:`dsp.stitch_and_publish` call: NumPy on the host path, one CuPy
        kernel writing into the registered ring on the device path (chunks that live on the GPU
        stay there: the resampler and the shaping run as CuPy too).
        """
        ch = w.chunk
        self._mapped(slot)
        if slot.reanchor is not None:
            self._reanchor(slot, w)
        audio = self._frames(slot, ch.audio)
        audio = self._resample(slot, ch.job, audio, ch.last)
        audio = self._shape(slot, audio, w.fade_in, ch.last)
        g0, g1 = slot.gain, slot.gain_target
        slot.gain = g1
        if w.splice and self.d.config.splice:
            self._splice(slot, ch.job, audio, g0, g1, w.old, w.env)
        else:
            self._append(slot, ch.job, audio, g0, g1, w.env, ch.first)

    def _reanchor(self, slot: Slot, w: Write) -> None:
        """A playing job carries on at the ring's new rate (after a rate switch): tell the host link
        which ring frame its stream frame 0 now maps to, from where this chunk lands (its first
        frame is the stream's ``frames_out - len``), so the transport lock and MIDI out keep
        counting the job's own frames. ``[engine]``"""
        ch, job = w.chunk, slot.reanchor
        slot.reanchor = None
        if ch.job.job != job or ch.first or (w.splice and self.d.config.splice):
            return
        ring = slot.ring
        at = max(ring.write_index, ring.read_index)
        f0 = ch.job.frames_out - int(ch.audio.shape[0])
        self.hostlink.published(slot, ch.job, at - int(round(f0 * ring.sample_rate / self.d.backend.sample_rate)))

    def _on_device(self, slot: Slot, audio) -> bool:
        return slot.gpu_reg is not None and array_module(audio) is not np

    def _frames(self, slot: Slot, audio):
        """``(n, channels)`` float32 of the ring's channel count; stays on the device on the CuPy path."""
        xp = array_module(audio)
        if xp is not np and (slot.gpu_reg is None or not DEVICE_PIPELINE):
            audio, xp = xp.asnumpy(audio), np
        if audio.ndim == 1:
            audio = audio[:, None]
        c = slot.ring.channels
        if audio.shape[1] != c:
            audio = xp.repeat(audio[:, :1], c, axis=1) if audio.shape[1] == 1 else audio[:, :c]
        return xp.ascontiguousarray(audio, dtype=np.float32)

    def _resample(self, slot: Slot, job: Job, audio, last: bool = False):
        """Backend rate → the ring's rate, with the job's own streaming resampler (CuPy kernel on the device)."""
        rate = slot.ring.sample_rate
        if rate == self.d.backend.sample_rate:
            return audio
        rs = slot.resamplers.get(id(job))
        if rs is None or rs.out_rate != rate:
            rs = slot.resamplers[id(job)] = Resampler(self.d.backend.sample_rate, rate, slot.ring.channels)
        return rs.push(audio, last=last)

    def _shape(self, slot: Slot, audio, fade_in: bool, last: bool):
        """A short fade-in when the stream starts from silence; a short fade-out at a job's end."""
        n = min(int(audio.shape[0]), int(slot.ring.sample_rate * self.d.config.end_fade_ms / 1000.0))
        if not n or not (fade_in or last):
            return audio
        audio = audio.copy()
        if fade_in:
            audio[:n] = fade(audio[:n], "in")
        if last:
            audio[-n:] = fade(audio[-n:], "out")
        return audio

    def _gains(self, slot: Slot, env: Envelope | None, at: int, n: int):
        """The envelope's gains for ring frames ``at…at+n`` where the writes happen (device or host)."""
        if env is None:
            return None
        g = env.gains(at, n)
        if slot.gpu_reg is not None and DEVICE_PIPELINE:
            from dsp import gpu

            return gpu._cupy().asarray(g)
        return g

    def _append(self, slot: Slot, job: Job, audio, g0: float, g1: float, env: Envelope | None, first: bool) -> None:
        ring = slot.ring
        r = ring.read_index
        w = max(ring.write_index, r)           # where append puts it (the reader may be ahead)
        n = int(audio.shape[0])
        if env is not None and env.end < w + n:
            n = max(0, env.end - w)            # nothing after the fade's end
        n = min(n, ring.capacity - (w - r))
        stitch_and_publish(audio[:n].T, ring.data, w, g0, g1, env=self._gains(slot, env, w, n), publish=ring.publish)
        if first:
            self._meta(slot, job, start_at=w)

    def _splice(self, slot: Slot, job: Job, new, g0: float, g1: float, old: Job | None,
                env: Envelope | None) -> None:
        """Replace not-yet-read audio from the read head on with ``new``, crossfading.

        The crossfade material — what the ring holds past the splice point, continued by the old
        job's next frames (generated first, through the old job's resampler, the gain, the limiter
        and the stop envelope when it was fading) — exists before the splice point is chosen;
        ``read_index`` is read just before the store, and the guard covers this writer's slowest
        recent store. The crossfade's mix is limited (it is one :func:`dsp.stitch_and_publish`:
        gain, crossfade, limiter, store). ``[engine]``
        """
        d = self.d
        ring = slot.ring
        xf = min(self._xfade_frames(slot), int(new.shape[0]))
        at = self.hostlink.splice_frame(job)   # a quantized change: its crossfade starts exactly there
        # 1. the old stream's continuation beyond the ring's end, as it would have been heard
        r0, w = ring.read_index, ring.write_index
        s0 = max(r0, min(w, r0 + self.guard(slot)))
        if at is not None and s0 < at <= w:
            s0 = at
        margin = int(ring.sample_rate * max(0.05, 3 * (d.scheduler.call_s or 0.0)))
        need = s0 + xf - w + margin
        material = None
        if need > margin and old is not None and not old.done:
            material = self._material(slot, old, env, w, need)
        # 2. place it: read_index re-read now
        t0 = self.clock_ns()
        r = ring.read_index
        w = ring.write_index
        s = r + self.guard(slot)
        if w < s:
            s = max(w, r)
        if at is not None and s < at <= w:
            s = int(at)
        skip = 0
        if at is not None and job.retimed and at < s and s - at < int(new.shape[0]) - xf:
            # a re-timed continuation is the same music from ``at`` on: when it lands late, it
            # starts that much into its audio, so its beats stay where the host expects them
            skip = s - at
            new = new[skip:]
        have = max(0, min(xf, w - s))
        prev = np.zeros((xf, ring.channels), dtype=np.float32)
        if have:
            prev[:have] = ring.load(s, have)
        if material is not None and have < xf:
            m0 = s + have - w
            part = material[m0:m0 + xf - have]
            prev[have:have + part.shape[0]] = part
        n = min(int(new.shape[0]), ring.capacity - (s - r))
        k = min(xf, n)
        pv = np.ascontiguousarray(prev[:k].T)
        self._mapped(slot)
        if array_module(new) is not np and slot.gpu_reg is None:   # the mapping was retired just now
            new = array_module(new).asnumpy(new)
        if self._on_device(slot, new):
            pv = array_module(new).asarray(pv)
        stitch_and_publish(new[:n].T, ring.data, s, g0, g1, prev=pv, publish=ring.publish)
        dt = (self.clock_ns() - t0) / 1e9
        self.store_s = max(0.98 * self.store_s, dt)
        if ring.read_index > s:
            ring.splices_overtaken += 1
        self._meta(slot, job, start_at=s - skip, splice_at=s)

    def _material(self, slot: Slot, old: Job, env: Envelope | None, at: int, frames: int):
        """``frames`` ring frames of ``old``'s continuation from ring frame ``at``, on the host,
        through the pipeline (resample, gain, limiter — a kernel on the device path —, envelope);
        None if the backend fails."""
        d = self.d
        ring = slot.ring
        nb = int(math.ceil(frames * d.backend.sample_rate / ring.sample_rate))
        if ring.sample_rate != d.backend.sample_rate:
            nb += 512                                  # the resampler's look-ahead
        try:
            a = d.scheduler.extra(old, nb)
        except Exception:  # noqa: BLE001 — then the crossfade fades from what the ring holds
            log.exception("crossfade material for job %s failed", old.job)
            return None
        if a is None:
            return None
        a = self._resample(slot, old, self._frames(slot, a))
        if slot.gain != 1.0:
            a = a * np.float32(slot.gain)
        xp = array_module(a)
        if xp is not np:
            from dsp import gpu

            a = xp.asnumpy(gpu.soft_limit(xp.ascontiguousarray(a, dtype=np.float32)))
        else:
            a = soft_limit(np.ascontiguousarray(a, dtype=np.float32))
        if env is not None:
            a = a * env.gains(at, int(a.shape[0]))[:, None]
        return a

    def _fade_ring(self, slot: Slot, a: FadeRing) -> None:
        """Rescale ring frames ``[at, write)`` from envelope ``a.old`` to ``a.new`` and end the stream
        at the new envelope's end. Frames nearer the read head than the guard are never touched."""
        ring = slot.ring
        self._mapped(slot)
        w = ring.write_index
        at = a.at
        end = min(w, a.new.end)
        if end > at:
            n = end - at
            g = a.old.rescale(a.new, at, n) if a.old is not None else a.new.gains(at, n)
            if slot.gpu_reg is not None and DEVICE_PIPELINE:      # a kernel through the mapped ring
                from dsp import gpu

                g = gpu._cupy().asarray(g)
            scale_ring(ring.data, at, g)
        if a.new.end < w:
            ring.publish(max(a.new.end, at))
        if ring.read_index > at:
            ring.splices_overtaken += 1
        if a.job is not None:
            self._meta(slot, a.job, stop_at=a.new.segments[-1][0], end_at=a.new.end)

    def _shutdown(self) -> None:
        """Fade every audible slot to silence (20 ms) at the read head. ``[engine]``"""
        for slot in self.d.slots.values():
            sm = slot.sm
            if not sm.busy:
                continue
            try:
                view = self._view(slot)
                self._handle(slot, Stop(int(QUICK_FADE_S * view.rate), None, view))
                if sm.state == FADING:          # less buffered than the fade: a mirrored tail ends it
                    self._do_tail(slot, Tail(int(QUICK_FADE_S * view.rate)))
                    self._handle(slot, Progress(view._replace(write=sm.env.end)))
                slot.ring.set_playing(False)
                for j in (sm.job, sm.old, sm.tail):
                    if j is not None and not j.done:
                        self._release(j, slot)
                        self._done(slot, j, "stopped")
                sm._set(IDLE)
            except Exception:  # noqa: BLE001
                log.exception("fade-out of slot %s failed", slot.number)


class Daemon:
    """Rings + backend + engine thread + heartbeat, driven by ``Command`` objects."""

    def __init__(self, config: Config | None = None, emit=None, backend: Backend | None = None,
                 clock_ns=None):
        self.config = config or Config()
        #: CLOCK_MONOTONIC in ns (the rings' heartbeats use it); injectable for simulated-time tests
        self.clock_ns = clock_ns or time.monotonic_ns
        #: engine events to the control surfaces (OSC, HTTP, metrics subscribe); ``emit`` is a tap
        self.bus = EventBus()
        if emit is not None:
            self.bus.tap(emit)
        self.backend = backend
        self.slots: dict[int, Slot] = {}
        self.scheduler: Scheduler | None = None
        self.engine: EngineThread | None = None
        self._hb_stop = threading.Event()
        self._hb: threading.Thread | None = None
        self._job_counter = 0
        self._private_counter = 0     # names of private (web stream) slots
        self.first_audio_ms: collections.deque = collections.deque(maxlen=1000)   # recent, for status
        self.retimes = 0                         # re-timed restarts: host tempo changes, relocates (bridge.core.hostlink)
        self.counters = {"commands": 0, "errors": 0}
        self.errors_by_code: dict[str, int] = {}
        self.on_step = None           # metrics hook: callable(StepResult)
        self.on_apply = None          # metrics hook: callable(Command) as the engine takes it [engine]
        self.midi_out = None          # bridge.control.midiout.MidiOutput (serve --midi-out), fed by the engine
        self.started_at = time.time()
        self.ready = False
        self.dsp_path = "numpy"

    # ------------------------------------------------------------------ lifecycle [control]
    def open(self, start_threads: bool = True) -> "Daemon":
        """Load and warm the backend, create or re-attach the rings, start the threads. ``[control]``

        ``start_threads=False`` leaves the engine unstarted: the caller turns it
        (``daemon.engine.turn()``), e.g. a test driving the daemon in simulated time.
        """
        cfg = self.config
        validate_config(cfg)
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
                if n in refused:                # in error until a play gets it a ring (no job: no actions)
                    self.slots[n].sm.handle(Fault())
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
                                   max_chunk=cfg.max_chunk, clock=lambda: self.clock_ns() / 1e9)
        if self.scheduler.max_batch < len(self.slots) + 1:
            log.warning("the %s backend serves at most %d streams at once and there are %d slots: a prompt "
                        "change at capacity crossfades from the buffered audio only, and a play beyond "
                        "capacity is refused with 'busy'", self.backend.name, self.scheduler.max_batch,
                        len(self.slots))
        self.engine = EngineThread(self)
        if start_threads:
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
        if self.engine is not None and not self.engine.is_alive() and self.engine.ident is None:
            self.engine._shutdown()   # never started (driven by turn()): fade out here
        elif self.engine is not None:
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
        splices, state machine) but :meth:`status` leaves it out and OSC cannot address it. Close
        it with :meth:`close_private_slot`. ``[control]``"""
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
        """Remove a private slot and close its ring. ``[engine]`` (after its jobs ended)"""
        slot = self.slots.get(name)
        if slot is None or not slot.private:
            return
        self.slots = {k: v for k, v in self.slots.items() if k != name}
        self._unregister_slot(slot)
        slot.ring.close(unlink=True)

    @staticmethod
    def _unregister_slot(slot: Slot) -> None:
        reg, slot.gpu_reg = slot.gpu_reg, None
        if reg is not None:
            try:
                reg.close()
            except Exception:  # noqa: BLE001
                log.exception("unregistering slot %s from CUDA failed", slot.number)

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
        self.bus.publish(ev)

    def count_error(self, code: str) -> None:
        self.counters["errors"] += 1
        self.errors_by_code[code] = self.errors_by_code.get(code, 0) + 1

    def params(self) -> dict:
        """Live parameters, name → (min, max): the common ones, where the backend declares a name its
        range wins (musicgen's guidance goes to 15); ``xfade_ms`` is the daemon's own."""
        p = dict(COMMON_PARAMS)
        for k, v in getattr(self.backend, "params", {}).items():
            if k != "xfade_ms":
                p[k] = tuple(v[:2])
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
                "lifecycle": s.sm.state, "readers": s.readers,
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
