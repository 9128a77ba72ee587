"""The engine's inbox: a bounded command queue that a flood of control input cannot clog.

``[control]`` threads (OSC, MIDI, HTTP, the host link's timers) put; the ``[engine]`` thread takes.
"""
from __future__ import annotations

import collections
import queue
import threading

from bridge.core.commands import Command


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
            # a waiting param or chord of the slot takes the newer value (a keyboard's chord
            # arrives note by note: only the last state of the keys matters)
            key = (cmd.slot, cmd.name) if cmd.kind == "param" else (cmd.slot, "\0chord") if cmd.kind == "chord" \
                else None
            if key is not None and key in self._params:
                waiting = self._params[key]
                waiting.value, waiting.reply_to = cmd.value, cmd.reply_to
                waiting.chord, waiting.notes, waiting.quantize, waiting.latch = cmd.chord, cmd.notes, cmd.quantize, \
                    cmd.latch
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
                    if cmd.job_id >= last.job_id:
                        last.superseded = True
                        self.coalesced += 1
                        self._last[cmd.slot] = cmd
                    # else an older play (a quantized one its timer put back, bridge.core.hostlink) behind a
                    # newer one: the newer one, applied first, drops it
                else:
                    self._last[cmd.slot] = cmd
            self._dq.append(cmd)
            self._cv.notify()

    def get(self, timeout: float | None = None) -> Command:
        with self._cv:
            if not self._dq:
                self._cv.wait(timeout)
                if not self._dq:
                    raise queue.Empty
            cmd = self._dq.popleft()
            if cmd.kind in ("param", "chord"):
                key = (cmd.slot, cmd.name) if cmd.kind == "param" else (cmd.slot, "\0chord")
                if self._params.get(key) is cmd:
                    del self._params[key]
            elif self._last.get(cmd.slot) is cmd:
                del self._last[cmd.slot]
            return cmd

    def get_nowait(self) -> Command:
        return self.get(timeout=0)

    def qsize(self) -> int:
        return len(self._dq)
