"""The open web streams and the one lease every streaming handler holds. ``[control]``

:class:`StreamHub` is the bounded set of open private streams (slot name → ``PrivateStream``,
at most ``max_streams``) plus the thread pool their encoders run on. :class:`StreamLease` is one
web stream from admission to teardown — its private slot, its encoder, its count against the
key's concurrency, the audio seconds it reserved, and its bill:

    with hub.lease(auth, p, lambda s: Encoder(fmt, s.rate, s.channels), reserve_s=dur) as lease:
        ...                     # read lease.stream, encode with lease.enc, count lease.frames

Leaving the block (or :meth:`StreamLease.release`, earlier, at most once) gives everything back in
one order: the key's counts first (a client that starts its next request the moment this one ends
finds its quota free), then the slot, then the encoder (its CPU time to the meters), then the bill
of what was not billed yet (:meth:`StreamLease.bill`, which a long session also calls as it goes).
Everything runs on the asyncio loop; encoders run on the pool's worker threads.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from bridge.web.admission import Admission, KeyBuckets
from bridge.web.api import ApiError
from bridge.web.auth import Auth
from bridge.web.store import Principal
from bridge.web.stream import PrivateStream


class StreamHub:
    """The open private streams of one daemon, at most ``max_streams`` at once. ``[control]``"""

    def __init__(self, daemon, max_streams: int):
        self.d = daemon
        self.max_streams = max_streams
        self.streams: dict = {}                       # private slot name → PrivateStream
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wavebridge-encode")
        self.admission = Admission(daemon, max_streams)   # a lease's stream is admitted by headroom
        self.key_buckets = KeyBuckets()               # live sessions' message rate, per key
        self.realtime: set = set()                    # names of the streams read in real time (live sessions)

    def open(self) -> PrivateStream:
        """A private slot and its reader, registered for its engine events; ApiError 503 when full. ``[control]``"""
        if len(self.streams) >= self.max_streams:
            raise ApiError(503, "busy", f"{self.max_streams} web streams are open; try again shortly",
                           {"Retry-After": "1"})
        s = PrivateStream.open(self.d)
        self.streams[s.name] = s
        return s

    def close(self, s: PrivateStream) -> None:
        """Unregister a private stream and give its slot back; the last one to close hands the
        heap its sessions freed back to the system (RSS returns to idle after a load). ``[control]``"""
        self.streams.pop(s.name, None)
        self.realtime.discard(s.name)
        s.close()
        if not self.streams:
            _trim_heap()

    def close_all(self) -> None:
        """End every stream and the encoders' pool (at shutdown). ``[control]``"""
        for s in list(self.streams.values()):
            self.close(s)
        self.pool.shutdown(wait=False, cancel_futures=True)

    def lease(self, auth: Auth, p: Principal, make_encoder, reserve_s: float = 0.0,
              realtime: bool = False) -> "StreamLease":
        """One stream for ``p`` (see :class:`StreamLease`); enter it with ``with``. ``realtime``: read in
        real time (a live session), admitted by the engine's headroom. ``[control]``"""
        return StreamLease(self, auth, p, make_encoder, reserve_s, realtime)


class StreamLease:
    """One web stream's slot, encoder, counts and bill; a context manager. ``[control]``"""

    def __init__(self, hub: StreamHub, auth: Auth, p: Principal, make_encoder, reserve_s: float,
                 realtime: bool = False):
        self.hub, self.auth, self.p = hub, auth, p
        self.realtime = realtime
        self._make_encoder = make_encoder
        self.reserve_s = reserve_s
        self.stream: PrivateStream | None = None
        self.enc = None
        self.frames = 0                   # audio frames served so far (the handler counts them)
        self.billed_frames = 0
        self._billed_compute = 0.0
        self._billed_once = False
        self._released = True
        self._counted = False

    def __enter__(self) -> "StreamLease":
        """Admit the stream by the engine's headroom and open its slot (ApiError 503 when there is no
        room: before any upgrade or body), count the stream, make its encoder."""
        self.hub.admission.check(len(self.hub.streams), len(self.hub.realtime) if self.realtime else None)
        self.stream = self.hub.open()
        if self.realtime:
            self.hub.realtime.add(self.stream.name)
        self.stream.owner = self.p.key_id     # whose stream: /v1/status shows it to that key and the admin only
        self._released = False
        self._counted = True
        self.auth.active[self.p.key_id] += 1
        self.auth.reserved[self.p.key_id] += self.reserve_s
        try:
            self.enc = self._make_encoder(self.stream)
        except BaseException:
            self.release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def bill(self) -> None:
        """Meter the audio and compute not billed yet; the first bill counts the request. ``[control]``"""
        s = self.stream
        frames = self.frames - self.billed_frames
        compute = s.compute_s - self._billed_compute
        self.billed_frames = self.frames
        self._billed_compute = s.compute_s
        requests = 0 if self._billed_once else 1
        self._billed_once = True
        self.auth.meter(self.p.key_id, self.p.tier, frames / s.rate, compute, self.auth.cost(compute),
                        requests=requests)

    def uncount(self) -> None:
        """Take the stream off the key's concurrency and reservation now, once, before the rest of
        the teardown awaits anything (a reconnect then finds the key's stream free). ``[control]``"""
        if self._counted:
            self._counted = False
            self.auth.active[self.p.key_id] -= 1
            self.auth.reserved[self.p.key_id] -= self.reserve_s

    def release(self) -> None:
        """Give everything back and bill the rest, once (later calls do nothing). ``[control]``"""
        if self._released:
            return
        self._released = True
        self.uncount()
        self.hub.close(self.stream)
        if self.enc is not None:
            self.auth.encode_stats(self.enc)
            self.enc.close()
        self.bill()


def _trim_heap() -> None:
    """glibc's ``malloc_trim(0)``: free heap pages go back to the system (elsewhere: nothing)."""
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC = None

STREAMS = web.AppKey("wavebridge.streams", StreamHub)
