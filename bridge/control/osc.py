"""OSC adapter: python-osc's asyncio UDP server on the control loop, and a small client.

``[control]`` only. Every datagram is timestamped on arrival and decoded by our own bounded
decoder (:mod:`bridge.control.oscdecode`; python-osc's parser is never handed received bytes: it
trusts declared sizes and can be made to loop). Bundles are unpacked; a future timetag
schedules its messages at that time. Each message becomes a ``Command`` through
``bridge.core.commands.parse_osc`` and goes to the daemon. Nothing is swallowed: a packet that does
not decode, a message that does not validate and a sender over its budget are counted and
answered with ``/wb/error`` (budget answers at most once a second per host).

Limits, all per *host* (:func:`bridge.control.netguard.host_key`: an IPv4 address, an IPv6 /64, all of
loopback as one), with bounded state (:class:`bridge.control.netguard.HostBudgets`):

- messages: ``rate``/s with bursts of ``burst`` (each message of a bundle counts);
- CPU: the loop's CPU time spent on a host's datagrams (decoding, validating, replying,
  measured with the thread's CPU clock) is charged to it; a host in debt is refused until it
  has paid it back (``cpu_rate`` CPU-seconds per second);
- timetagged messages waiting: ``MAX_PENDING`` in all and ``MAX_PENDING_PER_HOST`` each, so one
  sender cannot fill the queue for everyone;
- replies: every source is unverified (UDP source addresses can be forged), so the replies to
  one datagram never exceed ``AMPLIFICATION`` × its size. ``/wb/status`` answers in pages that
  fit (``/wb/status i page [, b padding]``; a bigger request gets a bigger page); an error
  message is shortened to fit, or not sent when even that does not fit.

Senders outside ``allow`` (loopback by default) are dropped and counted. Engine events come
back through the daemon's event bus (:meth:`OscServer.on_event`, on the loop) and are answered
to the address that sent the job's command. :meth:`OscServer.exempt` names the daemon's own
watchdog probe socket, which skips the budgets but is otherwise served like anyone
(so its answer proves that commands are being served).
"""
from __future__ import annotations

import asyncio
import logging
import socket
import time

from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_message_builder import OscMessageBuilder
from pythonosc.osc_server import AsyncIOOSCUDPServer

from bridge.core.commands import parse_osc
from bridge.control.netguard import AllowList, HostBudgets, host_key, parse_ip
from bridge.control.oscdecode import OscDecodeError, decode
from plugin_stub.protocol import WavebridgeError

log = logging.getLogger("wavebridge.osc")

MAX_FUTURE_S = 60.0           # a bundle timetag further ahead than this is refused
MAX_PENDING = 4096            # timetagged messages waiting at once; more are refused (memory bound)
MAX_PENDING_PER_HOST = 1024   # … of which one host may hold this many
MAX_ERR_MSG = 200
MAX_EVENT_ERR_MSG = 120       # engine error events: small next to the command that caused them
MAX_BUNDLE = 256              # messages in one datagram (a bundle); more are refused whole
AMPLIFICATION = 10            # reply bytes per received byte, at most, for one datagram
MAX_STATUS_PROMPT = 200       # bytes of a prompt in a /wb/slot row


def build(address: str, *args) -> bytes:
    """One OSC message as bytes (ints → i, floats → f, bytes → b, str → s)."""
    b = OscMessageBuilder(address=address)
    for a in args:
        if isinstance(a, bool):
            b.add_arg(int(a), "i")
        elif isinstance(a, int):
            b.add_arg(a, "i" if -(2 ** 31) <= a < 2 ** 31 else "h")
        elif isinstance(a, float):
            b.add_arg(a, "f")
        elif isinstance(a, (bytes, bytearray)):
            b.add_arg(bytes(a), "b")
        else:
            b.add_arg(str(a), "s")
    return b.build().dgram


def _padded(n: int) -> int:
    """Bytes of an OSC-string of ``n`` bytes: its NUL, padded to 4."""
    return (n + 4) & ~3


def osc_size(address: str, *args) -> int:
    """``len(build(address, *args))``, computed without building."""
    n = _padded(len(address.encode())) + _padded(1 + len(args))
    for a in args:
        if isinstance(a, bool) or (isinstance(a, int) and -(2 ** 31) <= a < 2 ** 31) or isinstance(a, float):
            n += 4
        elif isinstance(a, int):
            n += 8
        elif isinstance(a, (bytes, bytearray)):
            n += 4 + ((len(a) + 3) & ~3)
        else:
            n += _padded(len(str(a).encode()))
    return n


def cut_utf8(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` UTF-8 bytes, on a character boundary."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    return raw[:max(0, limit)].decode("utf-8", "ignore")


def status_pages(sizes: list[int], budget: int, last_size: int, more_size: int) -> list[tuple[int, int]]:
    """Rows ``[i, j)`` of each page: rows packed in order while the page, with its terminator
    (``last_size`` on the last page, ``more_size`` on the others), fits ``budget``. A row that
    does not fit alone gets a page of its own (its prompt is then shortened to fit)."""
    pages = []
    n = len(sizes)
    i = 0
    while i < n:
        j, used = i, 0
        while j < n and used + sizes[j] + (last_size if j + 1 == n else more_size) <= budget:
            used += sizes[j]
            j += 1
        if j == i:
            j = i + 1
        pages.append((i, j))
        i = j
    return pages or [(0, 0)]


class _ReplyBudget:
    """Reply bytes still allowed for one datagram (shared by its scheduled messages)."""

    __slots__ = ("left",)

    def __init__(self, left: int):
        self.left = left


class _Intake(Dispatcher):
    """python-osc dispatcher whose packet entry point hands raw datagrams to the server."""

    def __init__(self, server: "OscServer"):
        super().__init__()
        self._server = server

    def call_handlers_for_packet(self, data, client_address):  # noqa: D401 — python-osc hook
        self._server.datagram(data, client_address, time.monotonic_ns())
        return []


class OscServer:
    """Serves the ``/wb/*`` address space for one :class:`bridge.core.daemon.Daemon`. ``[control]``"""

    def __init__(self, daemon, host: str = "127.0.0.1", port: int = 9137, allow=None,
                 rate: float = 2000.0, burst: float = 500.0, cpu_rate: float = 0.2, cpu_burst: float = 0.05,
                 max_hosts: int = 1024):
        self.daemon = daemon
        self.host, self.port = host, port
        self.allow_list = AllowList(allow)
        self.limiter = HostBudgets(rate, burst, cpu_rate, cpu_burst, max_hosts=max_hosts)
        self.transport = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stats = {"packets_good": 0, "packets_bad": 0, "messages": 0, "errors": 0, "denied": 0,
                      "rate_limited": 0, "cpu_limited": 0, "scheduled": 0, "replies_capped": 0}
        self.on_command = None        # hook for tests/metrics: callable(Command)
        self._pending = 0             # scheduled messages not yet run
        self._pending_by_host: dict[str, int] = {}   # only hosts with some waiting (bounded by _pending)
        self._err_budget = None       # error replies left for the datagram being handled
        self._budget: _ReplyBudget | None = None     # reply bytes left for the datagram being handled
        self._exempt: set = set()     # (host, port) of the daemon's own probe sockets

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
        self.daemon.bus.subscribe(self.on_event)
        return self.host, self.port

    def close(self) -> None:
        self.daemon.bus.unsubscribe(self.on_event)
        if self.transport is not None:
            self.transport.close()
            self.transport = None

    def exempt(self, addr) -> None:
        """Let ``addr`` (the daemon's own probe socket) skip the per-host budgets."""
        self._exempt.add((addr[0], addr[1]))

    # ------------------------------------------------------------------ input
    def _allowed(self, addr) -> bool:
        try:
            return self.allow_list.allows(addr[0])
        except (TypeError, IndexError):
            return False

    def datagram(self, data: bytes, addr, arrival_ns: int) -> None:
        """Entry point for every datagram. Never raises."""
        t_cpu = time.thread_time()
        key = None
        try:
            key = self._datagram(data, addr, arrival_ns)
        except Exception as e:  # noqa: BLE001 — the daemon never dies from input
            log.exception("unexpected failure handling a datagram")
            self.stats["errors"] += 1
            self.daemon.count_error("internal")
            self.reply(addr, "/wb/error", -1, "internal", f"internal error: {type(e).__name__}")
        finally:
            self._budget = None
            self._err_budget = None
        if key is not None:
            self.limiter.charge(key, time.monotonic(), time.thread_time() - t_cpu)

    def _datagram(self, data: bytes, addr, arrival_ns: int):
        """Handle one datagram; returns the host key to charge its CPU to (None: nobody)."""
        exempt = (addr[0], addr[1]) in self._exempt if addr else False
        if not exempt and not self._allowed(addr):
            self.stats["denied"] += 1
            return None
        self._budget = _ReplyBudget(AMPLIFICATION * len(data))
        now = time.monotonic()
        key = None if exempt else host_key(addr[0])
        if key is not None:
            why = self.limiter.admit(key, now)
            if why:
                self._limited(addr, key, now, why)
                return None
        try:
            msgs = decode(data, max_messages=MAX_BUNDLE)
        except OscDecodeError as e:
            if e.code == "busy":                 # one datagram must not smuggle a flood past the limiter
                self.stats["packets_good"] += 1
                self._error(addr, WavebridgeError("busy", e.message))
                return key
            self.stats["packets_bad"] += 1
            self.stats["errors"] += 1
            self.daemon.count_error("malformed")
            self.reply_error(addr, -1, "malformed", f"not a valid OSC packet: {e.message}")
            return key
        self.stats["packets_good"] += 1
        if key is not None and len(msgs) > 1 and not self.limiter.take(key, now, len(msgs) - 1):
            self._limited(addr, key, now, "rate")    # each message of a bundle counts
            return key
        wall = time.time()
        # a bundle of many bad messages is answered with one error, not one per message
        self._err_budget = 1 if len(msgs) > 1 else None
        self._bundle(msgs, addr, arrival_ns, wall, key)
        return key

    def _limited(self, addr, key: str, now: float, why: str) -> None:
        self.stats["cpu_limited" if why == "cpu" else "rate_limited"] += 1
        self.daemon.count_error("rate_limited")
        if self.limiter.should_warn(key, now):
            text = ("too much work from this host (CPU budget); slow down" if why == "cpu"
                    else "too many messages from this host; slow down")
            self.reply_error(addr, -1, "rate_limited", text)

    def _bundle(self, msgs, addr, arrival_ns: int, wall: float, key) -> None:
        refused = 0
        for tm in msgs:
            delay = (tm.time - wall) if tm.time else 0.0
            if delay > MAX_FUTURE_S:
                self._error(addr, WavebridgeError("bad_value", f"bundle timetag {delay:.1f} s ahead; the limit is "
                                                               f"{MAX_FUTURE_S:.0f} s"))
                continue
            if delay > 0.0005:
                mine = self._pending_by_host.get(key, 0)
                if self._pending >= MAX_PENDING or mine >= MAX_PENDING_PER_HOST:
                    refused += 1
                    continue
                self._pending += 1
                self._pending_by_host[key] = mine + 1
                self.stats["scheduled"] += 1
                self.loop.call_later(delay, self._scheduled, tm.message, addr, key, self._budget)
            else:
                self.message(tm.message, addr, arrival_ns)
        if refused:
            mine = self._pending_by_host.get(key, 0)
            self._error(addr, WavebridgeError(
                "busy", f"{refused} timetagged message(s) refused: {self._pending} are waiting "
                        f"({mine} from this host; limits {MAX_PENDING} and {MAX_PENDING_PER_HOST} per host)"))

    def _scheduled(self, msg, addr, key, budget: _ReplyBudget) -> None:
        self._pending -= 1
        left = self._pending_by_host.get(key, 1) - 1
        if left > 0:
            self._pending_by_host[key] = left
        else:
            self._pending_by_host.pop(key, None)
        t_cpu = time.thread_time()
        self._budget = budget
        try:
            self.message(msg, addr, time.monotonic_ns())
        except Exception:  # noqa: BLE001
            log.exception("scheduled message failed")
        finally:
            self._budget = None
        if key is not None:
            self.limiter.charge(key, time.monotonic(), time.thread_time() - t_cpu)

    def message(self, msg, addr, arrival_ns: int) -> None:
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
                self._status(addr, int(cmd.page))
            elif cmd.kind == "play":
                job = d.submit(cmd)
                self.reply(addr, "/wb/started", cmd.slot, job)
            else:
                d.submit(cmd)
        except WavebridgeError as e:
            self._error(addr, e)

    def _status(self, addr, page: int) -> None:
        """One page of ``/wb/slot`` rows, then ``/wb/engine`` (last page) or
        ``/wb/status_page i page, i pages`` (more pages exist). ``[control]``"""
        d = self.daemon
        rows = []
        for r in d.status():
            rows.append([r["slot"], r["state"], cut_utf8(r["prompt"], MAX_STATUS_PROMPT), float(r["buffered_s"]),
                         int(min(r["underrun_frames"], 2 ** 31 - 1))])
        renderer = getattr(d.backend, "describe", None)     # e.g. the synth's "fluidsynth:FluidR3_GM.sf2"
        engine = (d.backend.name, getattr(d, "dsp_path", "numpy"), len(d.slots),
                  str(renderer() if renderer else d.backend.name)[:120])
        budget = self._budget.left if self._budget is not None else 1 << 30
        more_size = osc_size("/wb/status_page", 0, 0)
        last_size = osc_size("/wb/engine", *engine)
        pages = status_pages([osc_size("/wb/slot", *r) for r in rows], budget, last_size, more_size)
        if not 0 <= page < len(pages):
            raise WavebridgeError("bad_value", f"/wb/status: page {page} does not exist (0..{len(pages) - 1} "
                                               "for a request of this size)")
        i, j = pages[page]
        last = j >= len(rows)
        term = last_size if last else more_size
        if j - i == 1:                          # a row alone on its page: shorten its prompt to fit
            r = rows[i]
            over = osc_size("/wb/slot", *r) + term - budget
            if over > 0:
                room = (_padded(len(r[2].encode())) - over) // 4 * 4
                r[2] = cut_utf8(r[2], max(0, room - 1))
        for r in rows[i:j]:
            self.reply(addr, "/wb/slot", *r)
        if last:
            self.reply(addr, "/wb/engine", *engine)
        else:
            self.reply(addr, "/wb/status_page", page, len(pages))

    def _error(self, addr, e: WavebridgeError) -> None:
        self.stats["errors"] += 1
        self.daemon.count_error(e.code)
        if self._err_budget is not None:
            if self._err_budget <= 0:
                return                      # counted, not answered again for this datagram
            self._err_budget -= 1
        self.reply_error(addr, int(e.slot), e.code, e.message[:MAX_ERR_MSG])

    def reply_error(self, addr, slot: int, code: str, message: str) -> None:
        """``/wb/error``, its message shortened to fit what this datagram may still be answered."""
        if self._budget is not None:
            room = self._budget.left - osc_size("/wb/error", slot, code, "")
            if room < 0:
                self.stats["replies_capped"] += 1
                return
            message = cut_utf8(message, (room // 4) * 4 + 3)
        self.reply(addr, "/wb/error", slot, code, message)

    # ------------------------------------------------------------------ output
    def reply(self, addr, address: str, *args) -> None:
        """Send one reply; within a datagram's handling, only while its reply budget lasts."""
        if self.transport is None or addr is None:
            return
        try:
            data = build(address, *args)
            b = self._budget
            if b is not None:
                if len(data) > b.left:
                    self.stats["replies_capped"] += 1
                    return
                b.left -= len(data)
            self.transport.sendto(data, addr)
        except Exception:  # noqa: BLE001 — a reply that cannot go out is not fatal
            log.debug("reply to %s failed", addr, exc_info=True)

    def on_event(self, ev) -> None:
        """Answer an engine event to whoever asked (subscribed to the daemon's bus). ``[control]``"""
        if ev.kind == "first_audio":
            self.reply(ev.reply_to, "/wb/first_audio", ev.slot, ev.job, float(ev.ms))
        elif ev.kind == "done":
            # trailing metering arguments after the normative (slot, job)
            x = ev.extra
            self.reply(ev.reply_to, "/wb/done", ev.slot, ev.job, float(x.get("audio_s", 0.0)),
                       float(x.get("compute_s", 0.0)), float(x.get("cost", 0.0)))
        elif ev.kind == "error":
            self.stats["errors"] += 1
            self.reply(ev.reply_to, "/wb/error", int(ev.slot), ev.code, ev.message[:MAX_EVENT_ERR_MSG])


class _ProbeProtocol(asyncio.DatagramProtocol):
    def __init__(self, probe: "ServingProbe"):
        self.probe = probe

    def datagram_received(self, data, addr):  # noqa: D401 — asyncio hook
        self.probe.received(data, addr)


class ServingProbe:
    """Proof that the OSC path serves, for :class:`bridge.ops.systemd.Watchdog`. ``[control]``

    Its own UDP socket sends ``/wb/ping`` to the server's port; the server handles it like any
    datagram (decode, validate, reply; only the per-host budgets are skipped, so a flood cannot
    make the daemon look dead), and the ``/wb/pong`` that comes back stamps ``answered_ns`` and
    calls ``on_answer``. A loop that is stuck, or no longer reads the socket, answers nothing.
    """

    PING = build("/wb/ping")

    def __init__(self, server: OscServer):
        self.server = server
        self.answered_ns = 0
        self.sent = 0
        self.answered = 0
        self.on_answer = None
        self.transport = None
        self.target = None

    async def start(self) -> "ServingProbe":
        host = self.server.host
        ip = parse_ip(host)
        if ip is None or ip.is_unspecified:
            host = "::1" if ip is not None and ip.version == 6 else "127.0.0.1"
        self.target = (host, self.server.port)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        loop = asyncio.get_running_loop()
        self.transport, _ = await loop.create_datagram_endpoint(lambda: _ProbeProtocol(self),
                                                                local_addr=(host, 0), family=family)
        self.server.exempt(self.transport.get_extra_info("sockname"))
        return self

    def send(self) -> None:
        if self.transport is None:
            return
        try:
            self.transport.sendto(self.PING, self.target)
            self.sent += 1
        except Exception:  # noqa: BLE001 — a probe that cannot go out proves nothing; no ping
            log.debug("watchdog probe could not be sent", exc_info=True)

    def received(self, data, addr) -> None:
        if addr is None or (addr[0], addr[1]) != (self.target[0], self.target[1]):
            return
        try:
            msgs = decode(data)
        except OscDecodeError:
            return
        if msgs and msgs[0].message.address == "/wb/pong":
            self.answered += 1
            self.answered_ns = time.monotonic_ns()
            if self.on_answer is not None:
                self.on_answer(self.answered_ns)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None


class OscClient:
    """A blocking OSC client on a UDP socket of its own, bound before the first send so replies
    come back to it (tests, CLI, bench). Arguments are typed as :func:`build` types them."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9137, timeout: float = 2.0):
        family, _, _, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
        self.addr = addr
        self.timeout = timeout
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))

    def send(self, address: str, *args) -> float:
        """Send; returns the monotonic time of sending."""
        t = time.monotonic()
        self.sock.sendto(build(address, *args), self.addr)
        return t

    def send_raw(self, data: bytes) -> None:
        self.sock.sendto(data, self.addr)

    def recv(self, timeout: float | None = None):
        """(address, args) of the next reply, or None on timeout."""
        self.sock.settimeout(self.timeout if timeout is None else max(1e-3, timeout))
        try:
            data = self.sock.recv(65536)
        except (TimeoutError, BlockingIOError):
            return None
        if not data:
            return None
        try:
            m = decode(data)[0].message
            return m.address, list(m.params)
        except (OscDecodeError, IndexError):
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

    def status(self, timeout: float = 2.0, pad: int = 1024):
        """``(rows, engine)`` of every slot, paging through ``/wb/status`` with padded requests
        (a request of N bytes may be answered with up to 10 N). ``engine`` is None if the last page
        did not come."""
        rows, page = [], 0
        while True:
            self.send("/wb/status", page, bytes(pad))
            while True:
                r = self.recv(timeout)
                if r is None:
                    return rows, None
                if r[0] == "/wb/slot":
                    rows.append(r[1])
                elif r[0] == "/wb/engine":
                    return rows, r[1]
                elif r[0] == "/wb/status_page" and r[1][:1] == [page]:
                    break
                elif r[0] == "/wb/error":
                    return rows, None
            page += 1

    def close(self) -> None:
        self.sock.close()
