"""The in-process reader of a private daemon slot: one web stream's audio and engine events.

:class:`PrivateStream` owns one private daemon slot (``Daemon.open_private_slot``: a ring under
a private name that no DAW knows) and is its ring's only reader, on the asyncio loop (``[control]``). It reads
either as fast as the engine generates (``pace=None``: tracks, ``/v1/audio/generate``) or in
real time with a small lead (``pace="realtime"``: live sessions), never faster, so a prompt
change is spliced at the read head as on any ring. Engine events for its slot reach it through
:meth:`PrivateStream.on_event`, called on the loop by the HTTP service's event router
(``bridge.web.app.HttpService.on_event``).
"""
from __future__ import annotations

import asyncio
import time

import numpy as np

from bridge.core.commands import Command
from plugin_stub.reader import RingReader


class StreamError(Exception):
    """An engine error for a private stream's job: ``reason`` is one of the API's error reasons."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def error_reason(code: str) -> str:
    """Map an engine ``/wb/error`` code onto the web API's reasons. ``[control]``"""
    if code in ("oom", "gpu_oom"):
        return "gpu_oom"
    if code in ("bad_prompt", "prompt_too_long", "bad_value", "bad_args", "bad_type", "unknown_param"):
        return "bad_request"
    return "internal"


class PrivateStream:
    """One private slot and its reader. Create with :meth:`open`, end with :meth:`close`. ``[control]``"""

    LEAD_S = 0.04             # realtime pacing: how far ahead of the wall clock audio may be sent
    POLL_S = 0.01             # how often the ring is looked at while waiting (as fast as generated)
    IDLE_S = 0.1              # realtime, nothing playing: engine events wake the reader sooner
    PACE_S = 0.02             # realtime: one Opus frame's worth between sends
    BLOCK = 960               # realtime reads: frames per ring read (20 ms), so the splice guard stays 40 ms
    FAST_BLOCK = 8192         # fast reads: frames per ring read, within the protocol's reader block bound

    def __init__(self, daemon, slot):
        self.daemon = daemon
        self.slot = slot
        self.name = slot.name
        self.rate = slot.ring.sample_rate
        self.channels = slot.ring.channels
        self.reader = RingReader(self.name, max_block=self.BLOCK).attach()   # reads go into our own arrays
        self.job = 0                       # the job being played
        self.jobs: dict[int, dict] = {}    # job → {"first_frame", "done", "reason", "compute_s", ...}
        self.events: asyncio.Queue = asyncio.Queue()
        self.error: StreamError | None = None
        self.frames_read = 0               # frames handed out since the stream began
        self.compute_s = 0.0
        self.cost = 0.0
        self._waiter: asyncio.Future | None = None
        self._closed = False
        self._t0: float | None = None      # realtime pacing origin (None while idle)
        self._sent_since_t0 = 0

    @classmethod
    def open(cls, daemon) -> "PrivateStream":
        """Open a private slot and attach its reader. ``[control]``"""
        return cls(daemon, daemon.open_private_slot())

    # ------------------------------------------------------------------ control
    def play(self, prompt: str, seconds: float = 0.0, seed: int | None = None, arrival_ns: int = 0) -> int:
        """Start (or replace, with a splice) the slot's job; returns the job id. ``[control]``"""
        cmd = Command("play", slot=self.name, prompt=prompt, seconds=float(seconds), seed=seed,
                      arrival_ns=arrival_ns, source="http")
        job = self.daemon.submit(cmd)
        self.jobs[job] = {"first_frame": None, "done": False, "reason": "", "compute_s": 0.0, "first_ms": None}
        if len(self.jobs) > 64:                # a long session: forget the oldest jobs
            for old in sorted(self.jobs)[:-64]:
                del self.jobs[old]
        self.job = job
        self.error = None
        return job

    def param(self, name: str, value: float) -> None:
        """Set a live parameter of the slot (``/wb/param``). ``[control]``"""
        self.daemon.submit(Command("param", slot=self.name, name=name, value=float(value), source="http"))

    def stop(self, fade_s: float = 0.05) -> None:
        """Fade the slot's job out (``/wb/stop``). ``[control]``"""
        self.daemon.submit(Command("stop", slot=self.name, fade_s=float(fade_s), source="http"))

    def close(self) -> None:
        """Stop the job (if any) and give the slot back; safe to call twice. ``[control]``"""
        if self._closed:
            return
        self._closed = True
        try:
            self.reader.detach()
        except Exception:  # noqa: BLE001
            pass
        for _ in range(3):
            try:
                self.daemon.close_private_slot(self.name)
                return
            except Exception:  # noqa: BLE001 — queue full: the slot would leak; try once more
                time.sleep(0.01)

    def on_event(self, ev) -> None:
        """An engine event for this slot (on the loop). ``[control]``"""
        info = self.jobs.get(ev.job)
        if ev.kind == "first_audio" and info is not None:
            info["first_ms"] = ev.ms
            meta = self.reader.meta() if self.reader.attached else {}
            at = meta.get("start_at") if meta.get("job") == ev.job else None
            if at is not None:      # ring frame → stream frame (the stream began at ring frame 0)
                info["first_frame"] = int(at)
        elif ev.kind == "done" and info is not None:
            info["done"] = True
            info["reason"] = ev.extra.get("reason", "")
            c = float(ev.extra.get("compute_s", 0.0))
            info["compute_s"] = c
            self.compute_s += c
            self.cost += float(ev.extra.get("cost", 0.0))
        elif ev.kind == "error" and (ev.job in (0, self.job) or info is not None):
            if ev.code != "not_playing":
                self.error = StreamError(error_reason(ev.code), ev.message)
        self.events.put_nowait(ev)
        self._wakeup()

    # ------------------------------------------------------------------ audio
    def ring_frame(self) -> int:
        """Ring position of the next frame this stream will hand out. ``[control]``"""
        return self.reader.read_index

    @property
    def current_done(self) -> bool:
        """True once the current job's ``done`` event arrived. ``[control]``"""
        info = self.jobs.get(self.job)
        return bool(info and info["done"])

    def _read(self, n: int) -> np.ndarray:
        out = np.empty((n, self.channels), dtype=np.float32)
        k = self.reader.read_into(out)
        self.frames_read += k
        return out[:k]

    def _read_blocks(self, n: int, block: int) -> np.ndarray:
        """``n`` frames (fewer if the ring has less) in reads of at most ``block`` frames."""
        parts = []
        while n > 0:
            a = self._read(min(n, block))
            if a.shape[0] == 0:
                break
            parts.append(a)
            n -= a.shape[0]
        if not parts:
            return np.empty((0, self.channels), dtype=np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _heartbeat(self) -> None:
        self.reader.read_into(np.empty((0, self.channels), dtype=np.float32))

    def _wakeup(self, fut=None) -> None:
        fut = fut or self._waiter
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def _wait(self, s: float) -> None:
        """Sleep ``s`` or until an engine event for this slot arrives (no task per wait)."""
        loop = asyncio.get_running_loop()
        fut = self._waiter = loop.create_future()
        h = loop.call_later(s, self._wakeup, fut)
        try:
            await fut
        finally:
            h.cancel()
            self._waiter = None

    async def read_fast(self, max_frames: int = 48000) -> np.ndarray | None:
        """The next frames, as soon as the engine has them; ``None`` once the job is done.

        Raises :class:`StreamError` if the engine reported an error for the job. ``[control]``
        """
        while True:
            if self.error is not None:
                raise self.error
            n = self.reader.buffered()
            if n:
                return self._read_blocks(min(n, max_frames), self.FAST_BLOCK)
            if self.current_done:
                return None
            self._heartbeat()
            await self._wait(self.POLL_S)

    async def read_realtime(self, max_frames: int = 48000) -> np.ndarray:
        """The next frames, no faster than real time (plus ``LEAD_S``); empty while idle.

        Waits up to one poll interval; never zero-fills (the client's buffer absorbs a late
        engine). ``[control]``
        """
        await self._wait(self.PACE_S if self._t0 is not None else self.IDLE_S if not self.reader.playing
                         else self.POLL_S)
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        n = self.reader.buffered()
        now = time.monotonic()
        if self._t0 is None:
            if not n:
                self._heartbeat()
                return np.empty((0, self.channels), dtype=np.float32)
            self._t0, self._sent_since_t0 = now, 0
        lead = int(self.LEAD_S * self.rate)
        allowed = int((now - self._t0) * self.rate) + lead - self._sent_since_t0
        if allowed > 3 * lead and n < allowed:
            # behind the clock (the engine was late, or the stream paused): start the clock again
            # here rather than burst the backlog later, which would only grow the client's buffer
            # and with it the delay of every later prompt change
            self._t0 = now - self._sent_since_t0 / self.rate
            allowed = lead
        k = max(0, min(n, allowed, max_frames))
        if k == 0:
            if not n and not self.reader.playing:
                self._t0 = None     # idle: the next audio starts a new pacing origin
            self._heartbeat()
            return np.empty((0, self.channels), dtype=np.float32)
        # read in blocks of at most BLOCK frames: the ring's splice guard follows the largest block
        # its reader ever asked for, so one big catch-up read would slow every later prompt change
        a = self._read_blocks(k, self.BLOCK)
        self._sent_since_t0 += a.shape[0]
        return a
