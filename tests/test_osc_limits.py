"""The OSC server's budgets in process, with a real Daemon (unique rings) and many source hosts:
per-host (not per-port) limits, bounded limiter state, the CPU budget, the per-host share of the
timetag queue, the 10x reply cap with status pages, and the watchdog's proof of serving."""
from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time

import pytest

from bridge.core.daemon import Config, Daemon
from bridge.control.osc import AMPLIFICATION, MAX_PENDING_PER_HOST, OscServer, ServingProbe
from bridge.control.oscdecode import decode
from bridge.ops.systemd import Notifier, Watchdog
from engine.synth.backend import SynthBackend
from oscwire import bundle, msg, timetag
from test_systemd import NotifySocket


class Capture:
    """Stands in for the UDP transport: keeps what the server sends."""

    def __init__(self):
        self.sent: list[tuple[bytes, tuple]] = []

    def sendto(self, data, addr):
        self.sent.append((bytes(data), addr))

    def to(self, addr):
        return [decode(d)[0].message for d, a in self.sent if a == addr]

    def bytes_to(self, addr):
        return sum(len(d) for d, a in self.sent if a == addr)

    def close(self):
        pass


@pytest.fixture
def daemon():
    names = ["L" + secrets.token_hex(5) for _ in range(16)]
    d = Daemon(Config(slot_names=names, slots=16, target_s=0.3), backend=SynthBackend()).open()
    yield d
    d.close(linger_s=0)


def server(daemon, **kw) -> OscServer:
    s = OscServer(daemon, allow=["10.0.0.0/8", "127.0.0.0/8", "2001:db8::/32"], **kw)
    s.transport = Capture()
    return s


def test_a_flood_from_300_ports_of_one_host_is_limited_as_one_host(daemon):
    s = server(daemon, rate=100.0, burst=20.0)
    t0 = time.monotonic()
    for port in range(20000, 20300):
        for _ in range(5):
            s.datagram(msg("/wb/ping"), ("10.1.2.3", port), time.monotonic_ns())
    elapsed = time.monotonic() - t0
    pongs = sum(1 for d, a in s.transport.sent if decode(d)[0].message.address == "/wb/pong")
    assert pongs <= 20 + 100 * elapsed + 1, (pongs, elapsed)      # one bucket for all 300 ports
    assert s.stats["rate_limited"] >= 1500 - pongs
    # the limit is answered at most once a second per host, not once per port
    assert sum(1 for d, a in s.transport.sent if decode(d)[0].message.address == "/wb/error") <= 1 + elapsed
    s.datagram(msg("/wb/ping"), ("10.9.9.9", 1), time.monotonic_ns())     # another host: its own budget
    assert s.transport.to(("10.9.9.9", 1))[0].address == "/wb/pong"
    # IPv6: one /64 is one host
    for k in range(100):
        s.datagram(msg("/wb/ping"), (f"2001:db8::{k:x}", 5000 + k, 0, 0), time.monotonic_ns())
    assert sum(1 for _, a in s.transport.sent if a[0].startswith("2001:db8::")) <= 22 + 100 * (time.monotonic() - t0)


def test_limiter_state_stays_bounded_with_many_hosts(daemon):
    s = server(daemon, max_hosts=256)
    for k in range(5000):
        s.datagram(msg("/wb/ping"), (f"10.{k // 65536}.{(k // 256) % 256}.{k % 256}", 9000), time.monotonic_ns())
        assert len(s.limiter) <= 256
    assert s.stats["rate_limited"] == 0                   # each host sent one: nobody was limited
    time.sleep(s.limiter.ttl_s + 0.05)
    s.datagram(msg("/wb/ping"), ("10.200.0.1", 1), time.monotonic_ns())
    assert len(s.limiter) == 1                            # idle entries expired


def test_the_cpu_budget_refuses_an_expensive_host_and_only_that_host(daemon):
    s = server(daemon, cpu_rate=1e-6, cpu_burst=1e-6)     # ~nothing: one datagram puts a host in debt
    for _ in range(5):
        s.datagram(msg("/wb/status", 0, b"\0" * 2000), ("10.0.0.1", 7), time.monotonic_ns())
    assert s.stats["cpu_limited"] >= 3
    got = s.transport.to(("10.0.0.1", 7))
    assert got[-1].address == "/wb/error" and got[-1].params[1] == "rate_limited" and "CPU" in got[-1].params[2]
    s.datagram(msg("/wb/ping"), ("10.0.0.2", 7), time.monotonic_ns())
    assert s.transport.to(("10.0.0.2", 7))[0].address == "/wb/pong"


def test_one_host_cannot_fill_the_timetag_queue_for_everyone(daemon):
    async def main():
        # the message rate and the CPU budget are out of the way: this is about the queue's share
        # (on a slow 2-core runner, 250 messages a datagram spent the default 50 ms CPU burst)
        s = server(daemon, rate=1e6, burst=1e6, cpu_rate=1e3, cpu_burst=1e3)
        s.loop = asyncio.get_running_loop()
        later = timetag(time.time() + 30)
        for _ in range(6):
            s.datagram(bundle(later, *[msg("/wb/ping")] * 250), ("10.0.0.1", 1), time.monotonic_ns())
        assert s.stats["cpu_limited"] == s.stats["rate_limited"] == 0
        assert s._pending_by_host["10.0.0.1"] == MAX_PENDING_PER_HOST
        errs = [m for m in s.transport.to(("10.0.0.1", 1)) if m.address == "/wb/error"]
        assert errs and errs[-1].params[1] == "busy" and "per host" in errs[-1].params[2]
        s.datagram(bundle(later, *[msg("/wb/ping")] * 10), ("10.0.0.2", 1), time.monotonic_ns())
        assert s._pending_by_host["10.0.0.2"] == 10       # another host still gets its share
        assert s._pending == MAX_PENDING_PER_HOST + 10
        soon = timetag(time.time() + 0.05)
        s.datagram(bundle(soon, msg("/wb/ping")), ("10.0.0.3", 1), time.monotonic_ns())
        await asyncio.sleep(0.3)
        assert [m.address for m in s.transport.to(("10.0.0.3", 1))] == ["/wb/pong"]
        assert "10.0.0.3" not in s._pending_by_host       # the count is freed when it runs

    asyncio.run(main())


def _play_all(daemon, prompt_len=200):
    from bridge.core.commands import Command

    for n in daemon.slots:
        daemon.submit(Command("play", slot=n, prompt=("slot %s " % n + "lush strings " * 40)[:prompt_len]))
    end = time.monotonic() + 10
    while time.monotonic() < end and not all(r["state"] == "playing" for r in daemon.status()):
        time.sleep(0.02)


def test_no_reply_exceeds_ten_times_its_request_and_status_pages_cover_every_slot(daemon):
    _play_all(daemon)
    s = server(daemon)
    src = iter(range(30000, 40000))

    def ask(data):
        addr = ("127.0.0.1", next(src))
        s.datagram(data, addr, time.monotonic_ns())
        assert s.transport.bytes_to(addr) <= AMPLIFICATION * len(data), (data[:40], s.transport.bytes_to(addr))
        return s.transport.to(addr)

    first = ask(msg("/wb/status"))                       # no arguments: the first page
    assert first[0].address == "/wb/slot" and first[-1].address == "/wb/status_page"
    assert first[-1].params[0] == 0 and first[-1].params[1] > 1
    for pad in (0, 40, 400, 4000):                       # pages of every size cover every slot once
        seen, page = [], 0
        while True:
            req = msg("/wb/status", page, b"\0" * pad) if pad else msg("/wb/status", page)
            got = ask(req)
            seen += [m.params[0] for m in got if m.address == "/wb/slot"]
            if got[-1].address == "/wb/engine":
                break
            assert got[-1].address == "/wb/status_page" and got[-1].params[0] == page
            page += 1
        assert seen == list(daemon.slots), pad
    whole = ask(msg("/wb/status", 0, b"\0" * 4000))
    assert [m.address for m in whole].count("/wb/slot") == 16 and whole[-1].address == "/wb/engine"
    assert all(m.params[2].startswith("slot") and len(m.params[2]) == 200 for m in whole[:-1])
    err = ask(msg("/wb/status", 99))
    assert err[0].address == "/wb/error" and err[0].params[1] == "bad_value"
    # errors are shortened to fit, or not sent at all
    for junk in (b"\0" * 4, b"/\0\0\0", b"\xff" * 8, msg("/wb/play", 1, "x" * 600), b"#bundle\0" + b"\0" * 12):
        ask(junk)
    tiny = ask(b"\0" * 4)                                # 40 bytes allowed: a shortened error
    assert [m.address for m in tiny] == ["/wb/error"] and tiny[0].params[1] == "malformed"
    assert ask(b"") == []                                # nothing allowed: nothing sent


def test_the_watchdog_pings_only_while_datagrams_are_served(tmp_path, daemon):
    """The loop and its timer keep running, but once the OSC socket is no longer read the pings
    stop; they come back when it is read again."""
    ns = NotifySocket(tmp_path)
    stop = threading.Event()
    reader = threading.Thread(target=lambda: [ns.read(0.05) for _ in iter(stop.is_set, True)], daemon=True)
    reader.start()                                       # keep the notify socket drained

    async def main():
        srv = OscServer(daemon, "127.0.0.1", 0)
        await srv.start()
        probe = await ServingProbe(srv).start()
        n = Notifier({"NOTIFY_SOCKET": ns.env, "WATCHDOG_USEC": "400000"})
        wd = Watchdog(n, daemon.engine, summary=lambda: "ok", probe=probe).start()
        try:
            await asyncio.sleep(1.0)
            healthy = wd.pings
            srv.transport.pause_reading()               # commands are no longer served
            await asyncio.sleep(0.2)
            p0, t0 = wd.pings, probe.sent
            await asyncio.sleep(1.2)
            stalled, probes_sent = wd.pings - p0, probe.sent - t0
            srv.transport.resume_reading()
            await asyncio.sleep(0.8)
            return healthy, stalled, probes_sent, wd.pings - p0 - stalled, wd.pings
        finally:
            wd.stop()
            srv.close()

    try:
        healthy, stalled, probes_sent, after, total = asyncio.run(main())
        stop.set()
        reader.join()
        assert healthy >= 3
        assert probes_sent >= 4                          # the timer kept running …
        assert stalled == 0                              # … but without served commands, no ping
        assert after >= 1
        statuses = [m.get("STATUS", "") for m in ns.messages]
        assert any("has not served its own probe" in st for st in statuses)
        assert sum(1 for m in ns.messages if m.get("WATCHDOG") == "1") == total     # each one was sent
    finally:
        stop.set()
        ns.close()


def test_the_probe_is_served_even_when_its_host_is_over_budget(daemon):
    async def main():
        srv = OscServer(daemon, "127.0.0.1", 0, rate=10.0, burst=5.0)
        await srv.start()
        probe = await ServingProbe(srv).start()
        flood = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        flood.setblocking(False)
        try:
            for _ in range(200):
                flood.sendto(msg("/wb/ping"), (srv.host, srv.port))
            await asyncio.sleep(0.1)
            assert srv.stats["rate_limited"] > 100        # loopback is over its budget …
            probe.send()
            await asyncio.sleep(0.2)
            return probe.answered
        finally:
            flood.close()
            probe.close()
            srv.close()

    assert asyncio.run(main()) == 1                      # … and the probe is still answered
