"""What the web side may take from the engine: admission by headroom, message rates, back-pressure.

The DAW comes first. The engine serves its ring slots before the private web streams in every
step (``bridge.core.engine_loop``); this module keeps the web side from asking for more than the
engine has to spare, and from holding memory or a slot for a client that does not keep up:

- :class:`Admission` admits a new real-time web stream (a live session) only while the engine's
  measured real-time headroom covers it: the ring slots generating and the real-time streams
  open, each at the measured cost of an audio-second (``Scheduler.throughput``), plus the
  streams admitted in the last moments, stay under :data:`DUTY_MAX` of the engine's time; and
  any web stream only while every playing ring slot holds a safe lead; otherwise
  :class:`~bridge.web.api.ApiError` 503 with ``Retry-After`` (naming ``EngineThread.duty``, the
  share of wall time the engine spends generating), raised before any WebSocket upgrade or
  response body. ``max_streams`` stays the upper bound.
- :class:`Bucket` and :class:`MessageLimit`: a live session's messages pass its own token bucket
  and its key's (shared by all the key's sessions); a refused message is answered at most once a
  second, and a session that keeps flooding (its refusals outrun a third bucket) is closed.
- :func:`bound_send_buffer` and :func:`backlog`: a stream's socket gets a small kernel send
  buffer, and a handler looks at the transport's write buffer before it reads more audio, so
  unread audio piles up neither in the daemon nor in the kernel; a client that takes nothing for
  :data:`STALL_S` is cut off and its slot freed.
- :class:`KeyWatch`: an open stream looks its key up again once a second (a query on the same
  SQLite file ``wavebridge keys revoke`` writes from another process), so a revoked key's
  sessions end within a second.

Everything here runs on the ``[control]`` loop and only reads the engine's plain fields.
"""
from __future__ import annotations

import math
import socket
import time

from bridge.web.api import ApiError

#: the share of the engine's time the real-time streams (ring slots and live sessions) may take
#: with a new one (the rest is headroom for a burst of plays, the elastic streams, the loop and
#: the encoders on the same cores)
DUTY_MAX = 0.75
#: a stream admitted this recently is not in the engine's duty meter yet: it counts as pending
PENDING_S = 1.5
#: before any stream was measured: the engine's share one more real-time stream is taken to cost
DEFAULT_STREAM_DUTY = 0.02
#: a ring slot whose buffered lead is below this share of the target refuses new web streams
DAW_LEAD_MIN = 0.5

#: bytes a stream's transport may hold unsent before the handler stops reading audio for it
SEND_BUFFER_MAX = 32 * 1024
#: the kernel send buffer of a streaming socket (Linux doubles it)
SOCKET_SNDBUF = 32 * 1024
#: a client whose socket has taken nothing for this long is cut off (its slot is freed)
STALL_S = 3.0

#: per live session: messages a second, in bursts of …
SESSION_RATE, SESSION_BURST = 20.0, 40.0
#: per key, all its sessions together
KEY_RATE, KEY_BURST = 40.0, 80.0
#: refused messages a session may send (refilled at this rate) before it is closed as a flood
FLOOD_RATE, FLOOD_BURST = 20.0, 100.0
#: at most one reply a second to a session's refused messages
NOTICE_S = 1.0
#: how often an open stream looks its key up again
KEY_CHECK_S = 1.0


class Admission:
    """Admits web streams by the engine's measured headroom. ``[control]``"""

    def __init__(self, daemon, max_streams: int, duty_max: float = DUTY_MAX):
        self.d = daemon
        self.max_streams = max_streams
        self.duty_max = duty_max
        self._admitted: list[float] = []          # monotonic times of recent admissions
        self.refused = 0

    def headroom(self, realtime_streams: int = 0) -> dict:
        """The engine's real-time load and what one more real-time stream is expected to cost:
        every ring slot generating and every real-time web stream (``realtime_streams``) costs one
        audio-second a second at the engine's measured speed (``Scheduler.throughput``: audio-s per
        wall-s of its backend calls, so what the loop and the encoders take from it is in there);
        streams generated as fast as possible (``/v1/audio/generate``, tracks) are elastic — they
        get what is left, after the ring slots — and are not counted. ``[control]``"""
        d = self.d
        sched = d.scheduler
        tp = sched.throughput if sched is not None else None
        per = 1.0 / tp if tp else DEFAULT_STREAM_DUTY
        daw = 0
        for s, job in list(sched.jobs.items()) if sched is not None else ():
            slot = d.slots.get(s)
            if slot is not None and not slot.private and not job.done:
                daw += 1
        now = time.monotonic()
        self._admitted = [t for t in self._admitted if now - t < PENDING_S]
        load = per * (daw + realtime_streams)
        return {"duty": float(getattr(d.engine, "duty", 0.0) or 0.0), "load": load, "stream_cost": per,
                "pending": len(self._admitted), "predicted": load + per * (len(self._admitted) + 1)}

    def daw_lead_s(self) -> float:
        """The smallest buffered lead (seconds) among the ring slots that are generating. ``[control]``"""
        d = self.d
        best = math.inf
        sched = d.scheduler
        for s in list(sched.jobs) if sched is not None else ():
            slot = d.slots.get(s)
            job = sched.jobs.get(s)
            if slot is None or slot.private or job is None or job.done or not slot.sm.sounded:
                continue
            if job.remaining is not None and job.remaining <= 0:
                continue
            ring = slot.ring
            best = min(best, ring.buffered() / ring.sample_rate)
        return best

    def check(self, open_streams: int, realtime_streams: int | None = None) -> None:
        """Raise ApiError 503 (``Retry-After``) unless one more web stream fits: a real-time one
        (``realtime_streams``: how many are open now) by the headroom, an elastic one (None) only
        by ``max_streams`` and the ring slots' lead. ``[control]``"""
        if open_streams >= self.max_streams:
            raise ApiError(503, "busy", f"{self.max_streams} web streams are open; try again shortly",
                           {"Retry-After": "1"})
        lead = self.daw_lead_s()
        if lead < DAW_LEAD_MIN * self.d.config.target_s:
            self.refused += 1
            raise ApiError(503, "busy", "the engine is behind on the DAW slots; try again shortly",
                           {"Retry-After": "2"})
        if realtime_streams is None:
            return
        h = self.headroom(realtime_streams)
        if h["predicted"] > self.duty_max:
            self.refused += 1
            raise ApiError(503, "busy", f"no real-time headroom for another stream (the real-time streams take "
                                        f"{h['load']:.0%} of the engine, {h['duty']:.0%} busy); try again shortly",
                           {"Retry-After": "2"})
        self._admitted.append(time.monotonic())


class Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``burst``. ``[control]``"""

    __slots__ = ("rate", "burst", "tokens", "t")

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst = float(rate), float(burst)
        self.tokens = self.burst
        self.t = time.monotonic()

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.t) * self.rate)
        self.t = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


OK, NOTICE, SILENT, CLOSE = "ok", "notice", "silent", "close"


class MessageLimit:
    """One live session's message limit: its own bucket and its key's shared one. ``[control]``

    :meth:`take` answers :data:`OK` (handle the message), :data:`NOTICE` (refused: say so, at
    most once a second), :data:`SILENT` (refused, no reply) or :data:`CLOSE` (the session keeps
    flooding: close it with 1008)."""

    def __init__(self, key_bucket: Bucket):
        self.own = Bucket(SESSION_RATE, SESSION_BURST)
        self.key = key_bucket
        self.flood = Bucket(FLOOD_RATE, FLOOD_BURST)
        self.t_notice = -math.inf
        self.refused = 0

    def take(self) -> str:
        now = time.monotonic()
        if self.own.take(now) and self.key.take(now):
            return OK
        self.refused += 1
        if not self.flood.take(now):
            return CLOSE
        if now - self.t_notice >= NOTICE_S:
            self.t_notice = now
            return NOTICE
        return SILENT


class KeyBuckets:
    """The per-key message buckets, shared by each key's sessions. ``[control]``"""

    def __init__(self):
        self.buckets: dict[str, Bucket] = {}

    def of(self, key_id: str) -> Bucket:
        b = self.buckets.get(key_id)
        if b is None:
            if len(self.buckets) > 4096:          # only keys that exist get here; keep it bounded anyway
                self.buckets.clear()
            b = self.buckets[key_id] = Bucket(KEY_RATE, KEY_BURST)
        return b


class KeyWatch:
    """Looks a stream's key up again at most once a :data:`KEY_CHECK_S`. ``[control]``"""

    def __init__(self, store, key_id: str):
        self.store, self.key_id = store, key_id
        self.t = time.monotonic()
        self.revoked = False

    def check(self, force: bool = False) -> bool:
        """True while the key is valid (the local principal always is); one indexed query a second."""
        if self.revoked or self.key_id == "local":
            return not self.revoked
        now = time.monotonic()
        if not force and now - self.t < KEY_CHECK_S:
            return True
        self.t = now
        try:
            row = self.store.db.execute("SELECT revoked FROM keys WHERE id=?", (self.key_id,)).fetchone()
        except Exception:  # noqa: BLE001 — the database is closing (shutdown) or busy: look again later
            return True
        self.revoked = row is None or row[0] is not None
        return not self.revoked


def bound_send_buffer(transport) -> None:
    """Give a streaming connection early write back-pressure and a small kernel send buffer: a
    client that stops reading fills it within seconds (the kernel's own, autotuned to megabytes,
    would hide it for minutes), and 64 KiB in flight still carries ~640 KB/s at 100 ms RTT. ``[control]``"""
    if transport is None:
        return
    try:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_SNDBUF)
        transport.set_write_buffer_limits(high=SEND_BUFFER_MAX, low=SEND_BUFFER_MAX // 4)
    except (OSError, AttributeError, NotImplementedError, ValueError):
        pass


def backlog(transport) -> int:
    """Bytes the connection holds unsent (a closed one: a large number). ``[control]``"""
    if transport is None or transport.is_closing():
        return 1 << 30
    try:
        return transport.get_write_buffer_size()
    except (AttributeError, NotImplementedError):
        return 0
