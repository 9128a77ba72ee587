"""OSC adapter: python-osc's asyncio UDP server on the control loop, and a small client.

``[control]`` only. Every datagram is timestamped on arrival, parsed with python-osc's
``OscPacket`` (bundles unpacked; a future timetag schedules its messages at that time), turned
into a ``Command`` by ``bridge.commands.parse_osc`` and handed to the daemon. Nothing is
swallowed: a packet that does not parse, a message that does not validate and a sender over
its rate limit are counted and answered with ``/wb/error`` (rate-limit answers are themselves
limited to one a second per sender). Senders outside ``allow`` (loopback by default) are
dropped and counted. Engine events come back through :meth:`OscServer.post_event`, which is
thread-safe, and are answered to the address that sent the job's command.
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import queue
import socket
import time

from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_message import OscMessage
from pythonosc.osc_message_builder import OscMessageBuilder
from pythonosc.osc_packet import OscPacket
from pythonosc.osc_server import AsyncIOOSCUDPServer

from .commands import parse_osc
from .protocol import WavebridgeError

log = logging.getLogger("wavebridge.osc")

MAX_FUTURE_S = 60.0           # a bundle timetag further ahead than this is refused
MAX_PENDING = 4096            # timetagged messages waiting at once; more are refused (memory bound)
MAX_ERR_MSG = 200
MAX_BUNDLE = 256              # messages in one datagram (a bundle); more are refused whole


def build(address: str, *args) -> bytes:
    """One OSC message as bytes (ints → i, floats → f, str → s)."""
    b = OscMessageBuilder(address=address)
    for a in args:
        if isinstance(a, bool):
            b.add_arg(int(a), "i")
        elif isinstance(a, int):
            b.add_arg(a, "i" if -(2 ** 31) <= a < 2 ** 31 else "h")
        elif isinstance(a, float):
            b.add_arg(a, "f")
        else:
            b.add_arg(str(a), "s")
    return b.build().dgram


class _RateLimiter:
    """Token bucket per sender address."""

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst = rate, burst
        self._b: dict = {}
        self._last_warn: dict = {}

    def allow(self, key, now: float, cost: float = 1.0) -> bool:
        tokens, t = self._b.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - t) * self.rate)
        ok = tokens >= cost
        self._b[key] = (tokens - cost if ok else tokens, now)
        if len(self._b) > 4096:
            self._b.clear()
        return ok

    def should_warn(self, key, now: float) -> bool:
        if now - self._last_warn.get(key, 0.0) >= 1.0:
            self._last_warn[key] = now
            return True
        return False


class _Intake(Dispatcher):
    """python-osc dispatcher whose packet entry point hands raw datagrams to the server."""

    def __init__(self, server: "OscServer"):
        super().__init__()
        self._server = server

    def call_handlers_for_packet(self, data, client_address):  # noqa: D401 — python-osc hook
        self._server.datagram(data, client_address, time.monotonic_ns())
        return []


class OscServer:
    """Serves the ``/wb/*`` address space for one :class:`bridge.daemon.Daemon`. ``[control]``"""

    def __init__(self, daemon, host: str = "127.0.0.1", port: int = 9137, allow=None,
                 rate: float = 2000.0, burst: float = 500.0):
        self.daemon = daemon
        self.host, self.port = host, port
        nets = allow if allow else ["127.0.0.0/8", "::1/128"]
        self.allow = [ipaddress.ip_network(n, strict=False) for n in nets]
        self.limiter = _RateLimiter(rate, burst)
        self.transport = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._events: queue.SimpleQueue = queue.SimpleQueue()
        self.stats = {"packets_good": 0, "packets_bad": 0, "messages": 0, "errors": 0, "denied": 0,
                      "rate_limited": 0, "scheduled": 0}
        self.on_command = None        # hook for tests/metrics: callable(Command)
        self.event_hooks: list = []   # callables(Event), run on the loop after the reply
        self._pending = 0             # scheduled messages not yet run
        self._err_budget = None       # error replies left for the datagram being handled

    async def start(self) -> tuple[str, int]:
        """Bind the UDP socket; returns the actual (host, port)."""
        self.loop = asyncio.get_running_loop()
        server = AsyncIOOSCUDPServer((self.host, self.port), _Intake(self), self.loop)
        self.transport, _ = await server.create_serve_endpoint()
        sock = self.transport.get_extra_info("socket")
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        except OSError:
            pass
        self.host, self.port = self.transport.get_extra_info("sockname")[:2]
        return self.host, self.port

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None

    # ------------------------------------------------------------------ input
    def _allowed(self, addr) -> bool:
        try:
            ip = ipaddress.ip_address(addr[0])
        except (ValueError, TypeError, IndexError):
            return False
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in n for n in self.allow)

    def datagram(self, data: bytes, addr, arrival_ns: int) -> None:
        """Entry point for every datagram. Never raises."""
        try:
            self._datagram(data, addr, arrival_ns)
        except Exception as e:  # noqa: BLE001 — the daemon never dies from input
            log.exception("unexpected failure handling a datagram")
            self.stats["errors"] += 1
            self.daemon.count_error("internal")
            self.reply(addr, "/wb/error", -1, "internal", f"internal error: {type(e).__name__}")

    def _datagram(self, data: bytes, addr, arrival_ns: int) -> None:
        if not self._allowed(addr):
            self.stats["denied"] += 1
            return
        now = time.monotonic()
        if not self.limiter.allow(addr, now):
            self._rate_limited(addr, now)
            return
        try:
            packet = OscPacket(data)
            msgs = packet.messages
        except Exception as e:  # noqa: BLE001 — ParseError and anything the parser trips on
            self.stats["packets_bad"] += 1
            self.stats["errors"] += 1
            self.daemon.count_error("malformed")
            self.reply(addr, "/wb/error", -1, "malformed", f"not a valid OSC packet ({type(e).__name__}: "
                                                            f"{str(e)[:80]})")
            return
        self.stats["packets_good"] += 1
        if len(msgs) > MAX_BUNDLE:               # one datagram must not smuggle a flood past the limiter
            self._error(addr, WavebridgeError("busy", f"a bundle of {len(msgs)} messages; the limit is {MAX_BUNDLE}"))
            return
        if len(msgs) > 1 and not self.limiter.allow(addr, now, cost=len(msgs) - 1):
            self._rate_limited(addr, now)        # each message of a bundle counts
            return
        wall = time.time()
        # a bundle of many bad messages is answered with one error, not one per message
        self._err_budget = 1 if len(msgs) > 1 else None
        try:
            self._bundle(msgs, addr, arrival_ns, wall)
        finally:
            self._err_budget = None

    def _rate_limited(self, addr, now: float) -> None:
        self.stats["rate_limited"] += 1
        self.daemon.count_error("rate_limited")
        if self.limiter.should_warn(addr, now):
            self.reply(addr, "/wb/error", -1, "rate_limited", "too many messages; slow down")

    def _bundle(self, msgs, addr, arrival_ns: int, wall: float) -> None:
        refused = 0
        for tm in msgs:
            delay = (tm.time - wall) if tm.time else 0.0
            if delay > MAX_FUTURE_S:
                self._error(addr, WavebridgeError("bad_value", f"bundle timetag {delay:.1f} s ahead; the limit is "
                                                               f"{MAX_FUTURE_S:.0f} s"))
                continue
            if delay > 0.0005:
                if self._pending >= MAX_PENDING:
                    refused += 1
                    continue
                self._pending += 1
                self.stats["scheduled"] += 1
                self.loop.call_later(delay, self._scheduled, tm.message, addr)
            else:
                self.message(tm.message, addr, arrival_ns)
        if refused:
            self._error(addr, WavebridgeError("busy", f"{refused} timetagged message(s) refused: {MAX_PENDING} "
                                                      "are already waiting"))

    def _scheduled(self, msg: OscMessage, addr) -> None:
        self._pending -= 1
        try:
            self.message(msg, addr, time.monotonic_ns())
        except Exception:  # noqa: BLE001
            log.exception("scheduled message failed")

    def message(self, msg: OscMessage, addr, arrival_ns: int) -> None:
        """Validate and act on one message. ``[control]``"""
        self.stats["messages"] += 1
        d = self.daemon
        try:
            address = msg.address
            args = list(msg.params)
        except Exception as e:  # noqa: BLE001
            self._error(addr, WavebridgeError("malformed", f"undecodable message: {type(e).__name__}"))
            return
        try:
            cmd = parse_osc(address, args, len(d.slots), d.params())
            cmd.arrival_ns = arrival_ns
            cmd.reply_to = addr
            if self.on_command is not None:
                self.on_command(cmd)
            if cmd.kind == "ping":
                self.reply(addr, "/wb/pong")
            elif cmd.kind == "status":
                for row in d.status():
                    self.reply(addr, "/wb/slot", row["slot"], row["state"], row["prompt"][:200],
                               float(row["buffered_s"]), int(min(row["underrun_frames"], 2 ** 31 - 1)))
                # after the normative rows: which backend and where audio is stitched
                self.reply(addr, "/wb/engine", d.backend.name, getattr(d, "dsp_path", "numpy"), len(d.slots))
            elif cmd.kind == "play":
                job = d.submit(cmd)
                self.reply(addr, "/wb/started", cmd.slot, job)
            else:
                d.submit(cmd)
        except WavebridgeError as e:
            self._error(addr, e)

    def _error(self, addr, e: WavebridgeError) -> None:
        self.stats["errors"] += 1
        self.daemon.count_error(e.code)
        if self._err_budget is not None:
            if self._err_budget <= 0:
                return                      # counted, not answered again for this datagram
            self._err_budget -= 1
        self.reply(addr, "/wb/error", int(e.slot), e.code, e.message[:MAX_ERR_MSG])

    # ------------------------------------------------------------------ output
    def reply(self, addr, address: str, *args) -> None:
        if self.transport is None or addr is None:
            return
        try:
            self.transport.sendto(build(address, *args), addr)
        except Exception:  # noqa: BLE001 — a reply that cannot go out is not fatal
            log.debug("reply to %s failed", addr, exc_info=True)

    def post_event(self, ev) -> None:
        """Thread-safe: called from the engine thread; answered on the loop."""
        self._events.put(ev)
        loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._drain)
            except RuntimeError:
                pass

    def _drain(self) -> None:
        while True:
            try:
                ev = self._events.get_nowait()
            except queue.Empty:
                return
            if ev.kind == "first_audio":
                self.reply(ev.reply_to, "/wb/first_audio", ev.slot, ev.job, float(ev.ms))
            elif ev.kind == "done":
                # trailing metering arguments after the normative (slot, job)
                x = ev.extra
                self.reply(ev.reply_to, "/wb/done", ev.slot, ev.job, float(x.get("audio_s", 0.0)),
                           float(x.get("compute_s", 0.0)), float(x.get("cost", 0.0)))
            elif ev.kind == "error":
                self.stats["errors"] += 1
                self.reply(ev.reply_to, "/wb/error", int(ev.slot), ev.code, ev.message[:MAX_ERR_MSG])
            for hook in self.event_hooks:
                try:
                    hook(ev)
                except Exception:  # noqa: BLE001
                    log.exception("event hook failed")


class OscClient:
    """A blocking OSC client (python-osc's ``UDPClient``), so replies come back to its socket
    (tests, CLI, bench). Arguments are typed as :func:`build` types them."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9137, timeout: float = 2.0):
        from pythonosc.udp_client import UDPClient

        self.addr = (host, port)
        self.timeout = timeout
        self._client = UDPClient(host, port, timeout=timeout)
        self.sock = self._client._sock           # bound now, so a recv before any send has an address
        self.sock.bind(("::1" if self.sock.family == socket.AF_INET6 else "127.0.0.1", 0))

    def send(self, address: str, *args) -> float:
        """Send; returns the monotonic time of sending."""
        t = time.monotonic()
        self._client.send(OscMessage(build(address, *args)))
        return t

    def send_raw(self, data: bytes) -> None:
        self.sock.sendto(data, self.addr)

    def recv(self, timeout: float | None = None):
        """(address, args) of the next reply, or None on timeout."""
        data = self._client.receive(self.timeout if timeout is None else max(1e-3, timeout))
        if not data:
            return None
        try:
            m = OscMessage(data)
            return m.address, list(m.params)
        except Exception:  # noqa: BLE001
            return ("?", [data])

    def wait_for(self, address: str, timeout: float = 5.0, match=None):
        """Read replies until one at ``address`` (and ``match(args)``); returns args or None."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r = self.recv(left)
            if r is None:
                return None
            if r[0] == address and (match is None or match(r[1])):
                return r[1]

    def close(self) -> None:
        self._client.close()
