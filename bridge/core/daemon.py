"""Daemon core: slots, rings, the engine thread and the heartbeat — no sockets.

The rooms of the core, in the order a play passes them:

- :mod:`bridge.core.commands` — ``Command``, what every adapter's input becomes;
- :mod:`bridge.core.inbox` — ``CommandQueue``, the engine's bounded inbox;
- :mod:`bridge.core.engine_loop` — ``EngineThread``, the turn/apply/fill loop that owns the backend;
- :mod:`bridge.core.slot` and :mod:`bridge.core.slotstate` — one slot's state and its lifecycle table;
- :mod:`bridge.core.writer` — the write pipeline into the rings; :mod:`bridge.core.ring` (with
  :mod:`bridge.core.ringguard`) — the ring writer itself;
- :mod:`bridge.core.hostlink` — the DAW's transport; :mod:`bridge.core.events` — events back out.

Threads:
- ``[control]`` (the caller, normally the asyncio loop): :meth:`Daemon.submit` validates
  nothing further (adapters already made a ``Command``), assigns a job id and enqueues it;
  :meth:`Daemon.status` reads counters. Never runs inference.
- ``[engine]`` (:class:`~bridge.core.engine_loop.EngineThread`, one): owns the backend and the
  scheduler, applies commands, generates chunks in batches, applies gain and the limiter, writes
  and splices the rings. Events (``started`` is sent by the adapter; ``first_audio``, ``done``,
  ``error``) go back through the daemon's :class:`~bridge.core.events.EventBus` (``Daemon.bus``),
  which only enqueues and calls each subscriber on its own loop. It never waits on the control thread.
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
import gc
import logging
import math
import os
import queue
import threading
import time
from dataclasses import dataclass, field

from dsp import gpu
from engine import get_backend
from engine.backend import Backend
from engine.scheduler import Scheduler

from bridge.core.commands import COMMON_PARAMS, Command
from bridge.core.engine_loop import EngineThread
from bridge.core.events import Event, EventBus
from bridge.core.ring import RingWriter
from bridge.core.ringguard import served_by
from bridge.core.slot import Slot
from bridge.core.slotstate import Fault
from plugin_stub import protocol as P
from plugin_stub.protocol import RingError, WavebridgeError

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


def _slot_spans(names: list) -> str:
    """``1-4, 6`` for slot numbers (runs of consecutive ones as a span), names as they are."""
    nums = sorted(n for n in names if isinstance(n, int))
    parts, k = [], 0
    while k < len(nums):
        j = k
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[k]) if j == k else f"{nums[k]}-{nums[j]}")
        k = j + 1
    return ", ".join(parts + [str(n) for n in names if not isinstance(n, int)])


def refuse_served(names: list, pids: dict) -> None:
    """Refuse to start while any of ``names`` is served by another live writer. ``[control]``

    ``pids``: slot → the pid serving it (0: free, -1: held by a writer whose pid is not known
    yet). Raises one ``RingError('ring_busy')`` naming every such slot and pid, e.g. "slots 1-4
    are served by wavebridge pid 812; pick disjoint slots (engine.slot_names) or stop it": two
    daemons never split the DAW's slots between them.
    """
    by_pid: dict[int, list] = {}
    for n in names:
        if pids.get(n):
            by_pid.setdefault(pids[n], []).append(n)
    if not by_pid:
        return
    parts = []
    for pid, ns in by_pid.items():
        who = f"wavebridge pid {pid}" if pid > 0 else "another wavebridge that is starting"
        parts.append(f"slot{'s' if len(ns) > 1 else ''} {_slot_spans(ns)} {'are' if len(ns) > 1 else 'is'} "
                     f"served by {who}")
    raise RingError("ring_busy", f"{'; '.join(parts)}; pick disjoint slots (engine.slot_names in the "
                                 f"config) or stop {'it' if len(by_pid) == 1 else 'them'}")


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
        self.slots: dict[int | str, Slot] = {}      # by Slot.name
        self.scheduler: Scheduler | None = None
        self.engine: EngineThread | None = None
        self._hb_stop = threading.Event()
        self._hb: threading.Thread | None = None
        self._job_counter = 0
        self._private_counter = 0     # names of private (web stream) slots
        self.first_audio_ms: collections.deque = collections.deque(maxlen=1000)   # recent, for status
        self.retimes = 0                         # re-timed restarts: host tempo changes, relocates (bridge.core.hostlink)
        self.counters = {"commands": 0, "errors": 0}
        #: slots recording a tune (/wb/theme SLOT record): their MIDI channel's keys are the phrase
        self.theme_armed: set = set()
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
        names = cfg.slot_names or list(range(1, cfg.slots + 1))
        P.shm_dir()                     # a refused $WAVEBRIDGE_SHM_DIR refuses the daemon (RingError)
        refuse_served(names, {n: served_by(n) for n in names})   # before the backend's warm-up
        if self.backend is None:
            self.backend = get_backend(cfg.backend, **cfg.backend_kwargs)
        t0 = time.perf_counter()
        self.backend.warmup()
        self.warmup_s = time.perf_counter() - t0
        rate = int(self.backend.sample_rate)
        target = int(cfg.target_s * rate)
        cap = 1 << math.ceil(math.log2(max(2 * target + 2 * cfg.max_chunk, rate)))
        try:
            refused = {}
            for n in names:
                try:
                    ring = RingWriter.open(n, rate, self.backend.channels, cap)
                except RingError as e:          # that slot only (a foreign file, no room): the others start;
                    if e.code != "ring_busy":   # one held by a live writer refuses the daemon, below
                        log.error("slot %s refused: %s", n, e.message)
                    refused[n] = e
                    ring = RingWriter.unavailable(n, rate, self.backend.channels, cap, e)
                self.slots[n] = Slot(n, ring)
                if n in refused:                # in error until a play gets it a ring (no job: no actions)
                    self.slots[n].sm.handle(Fault())
                else:
                    log.info("slot %s: %s %s (%d frames, %d Hz, %d ch)", n,
                             "created" if ring.created else "re-attached", ring.path, cap, rate, ring.channels)
            # a ring held by a live writer (another daemon, or one starting now): that one serves it
            refuse_served(names, {n: served_by(n) or -1 for n, e in refused.items() if e.code == "ring_busy"})
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
        # the start-up's objects (imports, the backend and its warm-up) collected once and frozen
        # out of the collector: a full collection of them held the GIL for 40–50 ms (2-core VM)
        # and, landing on a prompt change, made it that much late (as the web's warm-up does)
        gc.collect()
        gc.freeze()
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
            self.engine.shutdown()    # never started (driven by turn()): fade out here
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
                    log.exception("unregistering slot %s from CUDA failed", s.name)
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

    def drop_private_slot(self, name) -> None:
        """Remove a private slot and close its ring. ``[engine]`` (after its jobs ended)"""
        slot = self.slots.get(name)
        if slot is None or not slot.private:
            return
        self.slots = {k: v for k, v in self.slots.items() if k != name}
        slot.unregister_gpu()
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
        if cmd.kind in ("play", "stop", "param", "chord", "theme", "theme_key") and cmd.slot not in self.slots:
            raise WavebridgeError("bad_slot", f"slot {cmd.slot} does not exist")
        if cmd.kind == "theme":
            (self.theme_armed.add if cmd.chord == "record" else self.theme_armed.discard)(cmd.slot)
        job = 0
        if cmd.kind == "play":
            self._job_counter += 1
            job = self._job_counter
            cmd.job_id = job
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
                "chord": s.chord, "chord_key": s.chord_key, "theme": s.theme,
            })
        return out

    def metrics_step(self, res) -> None:
        if self.on_step is not None:
            try:
                self.on_step(res)
            except Exception:  # noqa: BLE001
                pass
