"""The HTTP listener's connections: how many, how long idle, how framed, how printed. ``[control]``

aiohttp serves every request; this module decides which TCP connections it gets and for how long:

- :class:`GatedSite` — an aiohttp site (the documented ``web.BaseSite`` extension point, as
  ``TCPSite``) whose protocol factory is a :class:`ConnectionGate`.
- :class:`ConnectionGate` — counts open connections (all, and per peer host beyond loopback),
  closes a connection that has not started a request within ``head_timeout_s`` of connecting
  or of its last response (an unfinished or trickled request head, a forgotten keep-alive),
  and at ``max_connections`` makes room by closing the connection idle the longest; when every
  connection is busy with a request, a new one is answered ``503`` and closed before aiohttp
  sees it. aiohttp's own ``keepalive_timeout`` (armed at connect since aiohttp 3.10, so it also
  ends unfinished heads) is the first line; the gate holds whatever aiohttp version runs.
- :class:`MaskCheck` — RFC 6455 §5.1: a server must close a connection whose client sends an
  unmasked frame. aiohttp's reader accepts them; each connection's WebSocket parser is wrapped
  (``RequestHandler.set_parser``) so an unmasked frame becomes aiohttp's own protocol error
  (close code 1002). This and ``_Conn`` are the only places that lean on aiohttp's handler
  class; ``tests/test_web_connections.py`` fails if aiohttp changes under them.
- :func:`request_started` / :func:`request_ended` — called by the service's error middleware,
  so the gate knows which connections are busy.
- :func:`is_disconnect`, :func:`gone`, :class:`QuietClientErrors` — an ordinary client disconnect
  (a reset, a broken pipe, a write to a closed transport) and a client's unparseable bytes are
  one DEBUG line without a traceback, ours and aiohttp's; real errors keep theirs.
- :func:`host_port`, :func:`http_url`, :func:`exposure_warning` — addresses printed right
  (``[::1]:8137``) and the one line a bind beyond loopback prints.
"""
from __future__ import annotations

import asyncio
import collections
import json
import logging
import time

from aiohttp import ClientConnectionResetError, web
from aiohttp.http_exceptions import HttpProcessingError

from bridge.control.netguard import host_key, is_loopback_bind, parse_ip

log = logging.getLogger("wavebridge.http")

__all__ = ["ConnectionGate", "GatedSite", "MaskCheck", "QuietClientErrors", "exposure_warning", "gone", "host_port",
           "http_url", "is_disconnect", "quiet_client_errors", "request_ended", "request_started"]


# ---------------------------------------------------------------------- addresses
def host_port(host: str, port: int) -> str:
    """``host:port`` with an IPv6 address in brackets (``[::]:8137``). ``[control]``"""
    h = str(host)
    if ":" in h and not h.startswith("["):
        h = f"[{h}]"
    return f"{h}:{int(port)}"


def http_url(host: str, port: int, path: str = "/") -> str:
    """``http://host:port/path`` with an IPv6 address in brackets. ``[control]``"""
    return f"http://{host_port(host, port)}{path}"


def exposure_warning(host: str, port: int) -> str | None:
    """The WARNING line for an HTTP API bound beyond loopback (None on loopback). ``[control]``"""
    if is_loopback_bind(host):
        return None
    ip = parse_ip(host)
    where = "every interface" if ip is not None and ip.is_unspecified else "a network interface"
    return (f"WARNING: the HTTP API listens on {host_port(host, port)} ({where}): every request needs an "
            f"API key (wavebridge keys add NAME); bind 127.0.0.1 to keep it on this machine")


# ---------------------------------------------------------------------- disconnects
#: a reset, a broken pipe, aiohttp's "Connection lost" (drain) and "Cannot write to closing transport"
_DISCONNECTS = (ConnectionError, ClientConnectionResetError)


def is_disconnect(exc: BaseException | None) -> bool:
    """True for what a client going away looks like: a reset, a broken pipe, a closed transport,
    a cancelled handler. ``[control]``"""
    if exc is None:
        return False
    if isinstance(exc, (asyncio.CancelledError, *_DISCONNECTS)):
        return True
    if isinstance(exc, RuntimeError) and "closing transport" in str(exc).lower():
        return True
    return isinstance(exc, OSError) and exc.errno in (32, 104, 103)   # EPIPE, ECONNRESET, ECONNABORTED


def gone(request: web.BaseRequest) -> web.StreamResponse:
    """After a client disconnect: its connection closed now, and a response that is never written
    (aiohttp finds the transport gone and notes it at debug). ``[control]``"""
    proto = request.protocol
    if proto is not None:
        proto.force_close()
    return web.Response(status=499)


class QuietClientErrors(logging.Filter):
    """On ``aiohttp.server``: a client's garbage (an HTTP parse error, answered 400) or its going
    away is one DEBUG line without a traceback; every other error keeps its level and traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and (
                is_disconnect(exc) or isinstance(exc, HttpProcessingError)):
            record.msg = " ".join(f"{record.getMessage()}: {type(exc).__name__}: {str(exc)[:200]}".split())
            record.args = None
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def quiet_client_errors() -> None:
    """Install :class:`QuietClientErrors` on ``aiohttp.server`` (once). ``[control]``"""
    lg = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, QuietClientErrors) for f in lg.filters):
        lg.addFilter(QuietClientErrors())


# ---------------------------------------------------------------------- RFC 6455 masking
class MaskCheck:
    """Frame boundaries of a client's WebSocket byte stream, to find an unmasked frame. ``[control]``

    :meth:`feed` returns ``(ok, bad)``: the bytes that may go on to the real parser and whether an
    unmasked frame starts right after them. A lone first header byte is held back until the
    second (the one with the mask bit) arrives, so the real parser never sees half of a bad header.
    """

    __slots__ = ("_held", "_ext", "_ext_need", "_skip", "failed")

    def __init__(self):
        self._held = b""
        self._ext = bytearray()
        self._ext_need = 0
        self._skip = 0
        self.failed = False

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        if self._held:
            data, self._held = self._held + bytes(data), b""
        i, n = 0, len(data)
        while i < n:
            if self._skip:
                k = min(self._skip, n - i)
                self._skip -= k
                i += k
            elif self._ext_need:
                k = min(self._ext_need - len(self._ext), n - i)
                self._ext += data[i:i + k]
                i += k
                if len(self._ext) == self._ext_need:
                    self._skip = 4 + int.from_bytes(self._ext, "big")   # mask key + payload
                    self._ext_need, self._ext = 0, bytearray()
            else:                                   # a frame header starts here
                if n - i < 2:
                    self._held = bytes(data[i:])
                    return data[:i], False
                b1 = data[i + 1]
                if not b1 & 0x80:
                    self.failed = True
                    return data[:i], True
                ln = b1 & 0x7F
                i += 2
                if ln == 126:
                    self._ext_need = 2
                elif ln == 127:
                    self._ext_need = 8
                else:
                    self._skip = 4 + ln
        return data, False


#: a frame header aiohttp's reader refuses with WSCloseCode.PROTOCOL_ERROR (RSV2 set, RFC 6455 §5.2)
_PROTOCOL_ERROR_FRAME = b"\xa2\x80"


class _MaskedParser:
    """aiohttp's WebSocket parser behind a :class:`MaskCheck`. ``[control]``"""

    __slots__ = ("inner", "check", "peer")

    def __init__(self, inner, peer):
        self.inner, self.check, self.peer = inner, MaskCheck(), peer

    def feed_data(self, data):
        if self.check.failed:
            return True, b""
        ok, bad = self.check.feed(data)
        eof, tail = self.inner.feed_data(ok) if ok else (False, b"")
        if bad and not eof:
            log.debug("closing the WebSocket of %s: a client frame is not masked (RFC 6455 5.1)", self.peer)
            eof, tail = self.inner.feed_data(_PROTOCOL_ERROR_FRAME)
        return eof, tail

    def feed_eof(self):
        self.inner.feed_eof()


# ---------------------------------------------------------------------- connections
_REFUSAL_BODY = json.dumps({"event": "error", "reason": "busy",
                            "message": "too many open connections; retry shortly"}).encode()
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
           b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(_REFUSAL_BODY)) + _REFUSAL_BODY


class _Conn(web.RequestHandler):
    """aiohttp's request handler, counted by its gate, with masked WebSocket frames enforced."""

    __slots__ = ("gate", "admitted", "host")

    def __init__(self, gate: "ConnectionGate", manager, **kw):
        super().__init__(manager, **kw)
        self.gate, self.admitted, self.host = gate, False, "?"

    def connection_made(self, transport) -> None:
        if not self.gate.admit(self, transport):
            try:
                transport.write(REFUSAL)
            finally:
                transport.close()
            return
        super().connection_made(transport)

    def connection_lost(self, exc) -> None:
        if not self.admitted:
            return
        self.gate.lost(self)
        super().connection_lost(exc)

    def set_parser(self, parser, data_received_cb=None) -> None:
        super().set_parser(_MaskedParser(parser, self.host), data_received_cb=data_received_cb)


class ConnectionGate:
    """The listener's protocol factory: admits, counts and times out connections. ``[control]``"""

    def __init__(self, runner: web.BaseRunner, *, max_connections: int = 512, max_per_host: int = 64,
                 head_timeout_s: float = 10.0, handler_kwargs: dict | None = None):
        self.runner = runner
        self.max_connections = max(1, int(max_connections))
        self.max_per_host = max(1, int(max_per_host))
        self.head_timeout_s = float(head_timeout_s)
        self.handler_kwargs = dict(handler_kwargs or {})
        self.open: dict[_Conn, str] = {}                          # admitted → host key
        self.idle: collections.OrderedDict[_Conn, float] = collections.OrderedDict()   # no request running
        self.per_host: collections.Counter[str] = collections.Counter()
        self.refused = self.evicted = self.timed_out = 0
        self._sweeper: asyncio.Task | None = None

    def __call__(self) -> _Conn:
        return _Conn(self, self.runner.server, loop=asyncio.get_running_loop(), **self.handler_kwargs)

    # -- accounting (on the loop, from _Conn)
    def admit(self, conn: _Conn, transport) -> bool:
        peer = transport.get_extra_info("peername")
        host = peer[0] if isinstance(peer, tuple) and peer else "?"
        key = host_key(host)
        conn.host = host
        if key != "loopback" and self.per_host[key] >= self.max_per_host:
            self.refused += 1
            log.debug("refused a connection from %s: %d open from that host", host, self.per_host[key])
            return False
        if len(self.open) >= self.max_connections and not self._evict_idlest():
            self.refused += 1
            log.debug("refused a connection from %s: %d connections busy", host, len(self.open))
            return False
        conn.admitted = True
        self.open[conn] = key
        self.per_host[key] += 1
        self.idle[conn] = time.monotonic()
        return True

    def lost(self, conn: _Conn) -> None:
        key = self.open.pop(conn, None)
        if key is not None:
            self.per_host[key] -= 1
            if self.per_host[key] <= 0:
                del self.per_host[key]
        self.idle.pop(conn, None)

    def _evict_idlest(self) -> bool:
        if not self.idle:
            return False
        conn, _ = self.idle.popitem(last=False)
        self.evicted += 1
        self._close(conn)
        return True

    def _close(self, conn: _Conn) -> None:
        self.lost(conn)
        conn.force_close()

    def started(self, conn) -> None:
        self.idle.pop(conn, None)

    def ended(self, conn) -> None:
        if conn in self.open:
            self.idle[conn] = time.monotonic()
            self.idle.move_to_end(conn)

    # -- the head deadline
    def start(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="wavebridge-http-conns")

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    def sweep(self, now: float | None = None) -> int:
        """Close every connection idle (no request started) past ``head_timeout_s``; how many."""
        now = time.monotonic() if now is None else now
        n = 0
        while self.idle:
            conn, since = next(iter(self.idle.items()))
            if now - since < self.head_timeout_s:
                break
            self.idle.popitem(last=False)
            self._close(conn)
            n += 1
        self.timed_out += n
        return n

    async def _sweep(self) -> None:
        period = min(1.0, max(0.05, self.head_timeout_s / 4))
        while True:
            await asyncio.sleep(period)
            try:
                self.sweep()
            except Exception:  # noqa: BLE001 — the sweeper must outlive any one connection
                log.exception("connection sweep failed")


def request_started(request: web.BaseRequest) -> None:
    """A request began on its connection (the error middleware). ``[control]``"""
    conn = request.protocol
    if isinstance(conn, _Conn):
        conn.gate.started(conn)


def request_ended(request: web.BaseRequest) -> None:
    """The request's handler returned: its connection is idle again. ``[control]``"""
    conn = request.protocol
    if isinstance(conn, _Conn):
        conn.gate.ended(conn)


class GatedSite(web.BaseSite):
    """A TCP site whose connections go through a :class:`ConnectionGate`. ``[control]``"""

    __slots__ = ("_host", "_port", "gate")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, gate: ConnectionGate, backlog: int = 128):
        super().__init__(runner, backlog=backlog)
        self._host, self._port, self.gate = host, port, gate

    @property
    def name(self) -> str:
        return http_url(self._host, self._port, "")

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self.gate, self._host, self._port, backlog=self._backlog,
                                                reuse_address=True)
        self.gate.start()

    async def stop(self) -> None:
        self.gate.stop()
        await super().stop()
