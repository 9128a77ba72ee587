"""One slot: its ring, its state machine and the engine's per-slot audio state.

Written by the ``[engine]`` thread; the ``[control]`` thread reads plain fields for status (a
read of a field the engine is changing sees the old or the new value, both fine for status).
"""
from __future__ import annotations

import collections
import logging

from dsp import Resampler
from engine.scheduler import Job

from bridge.core.ring import RingWriter
from bridge.core.slotstate import ERROR, IDLE, REPLACING, STARTING, SWITCHING, SlotMachine

log = logging.getLogger("wavebridge")

#: the reader pid flipping this often within 3 s: two readers take turns on one ring
_PID_FLIPS = 2
#: ``read_index`` stepping back this often within 3 s: two readers publishing their own positions.
#: One reader moves it back only when it overtook a splice (and resyncs), or not at all; however
#: fast it reads (a render, a DAW's offline bounce, a web stream read as fast as it is generated),
#: it moves it forward only — a speed says nothing about how many read
_BACK_STEPS = 3


class Slot:
    """One slot. ``name`` is its key in ``Daemon.slots`` and its ring's name: the OSC slot number
    (an ``int``) of a DAW slot, a configured slot name, or a private web stream's ring name (a
    ``str`` such as ``web1234-1``, with :attr:`private` set)."""

    def __init__(self, name: int | str, ring: RingWriter):
        self.name = name
        self.ring = ring
        self.sm = SlotMachine(name)
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
        self.last_read: int | None = None            # read_index as the last turn saw it
        self.back_steps: collections.deque = collections.deque(maxlen=8)
        self.readers = 1
        self.readers_since = 0
        self.private = False                         # a web stream's slot: privately named ring, read in-process
        self.chord = ""                              # the chord a player steers it with ("": composed)
        self.chord_key = ""                          # … and the key those chords imply
        self.theme = ""                              # the tune it sings: "", "recording", "12 notes"
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

    def unregister_gpu(self) -> None:
        """Drop the ring's CUDA registration (the mapping changed, or the slot closes): the slot
        writes on the host path from now on. ``[engine]`` (``[control]`` at close)"""
        reg, self.gpu_reg = self.gpu_reg, None
        if reg is not None:
            try:
                reg.close()
            except Exception:  # noqa: BLE001
                log.exception("unregistering slot %s from CUDA failed", self.name)

    def watch_reader(self, read: int, reader_alive: bool, now: int) -> str:
        """Two readers on one ring: the reader pid flipping back and forth (readers of two
        processes attaching in turn), or ``read_index`` stepping back and forth (each reader keeps
        its own position and publishes it, so the index alternates between them). Returns
        ``"flips"`` or ``"interleaved"`` when two readers are first seen (the caller reports it),
        else ``""``; shown in status as ``readers: 2`` until it has not been seen for 5 s. ``[engine]``"""
        try:
            pid = self.ring.reader_pid
        except Exception:  # noqa: BLE001 — a closing ring
            return ""
        if pid != self.reader_pid:
            if self.reader_pid and pid:
                self.pid_changes.append(now)
            self.reader_pid = pid
        if reader_alive and self.last_read is not None and read < self.last_read:
            self.back_steps.append(now)
        self.last_read = read
        flips = sum(1 for t in self.pid_changes if now - t < 3_000_000_000) >= _PID_FLIPS
        two = flips or sum(1 for t in self.back_steps if now - t < 3_000_000_000) >= _BACK_STEPS
        if two and self.readers == 1:
            self.readers, self.readers_since = 2, now
            return "flips" if flips else "interleaved"
        if two:
            self.readers_since = now
        elif self.readers == 2 and now - self.readers_since > 5_000_000_000:
            self.readers = 1
        return ""
