"""``wavebridge bench --web-load`` (and ``scripts/web-load-check``): issue #20's loads at full size.

A ``wavebridge serve`` child with one DAW slot playing the synth, read in real time by an
independent reader in this process (128-frame blocks on a fixed clock), and four loads one after
another, each at the issue's size:

- ``ws``: 500 WebSocket sessions that send a ``play`` and never read;
- ``flood``: 32 sessions sending plays at 19 a second each for 10 s (and reading the replies);
- ``sse``: 20 ``POST /v1/audio/generate`` SSE streams of 600 s nobody reads;
- ``slow``: 1000 slow connections: unfinished request heads, heads trickled a byte at a time,
  keep-alives idle after one request, bodies trickled a byte at a time.

Per load: what the server admitted and refused, the DAW slot's underrun frames (the load and the
10 s after it), the child's RSS and open fds (``/proc/PID``) idle → peak → 10 s after the load.
The slow-connection load is also what ``tests/test_web_load.py`` runs at CI size. ``[control]``
(a client, never inside the daemon)
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

PROMPTS = ["deep house in A minor with piano, warm bass and drums, 122 bpm",
           "dreamy ambient pads and a slow bell melody in D major", "funky disco groove with slap bass"]
AFTER_S = 10.0


# ------------------------------------------------------------------------------------ the daemon side
class DawReader:
    """An independent real-time reader of one DAW ring: 128-frame blocks on a fixed grid."""

    def __init__(self, slot: str):
        from plugin_stub.player import attach_when_ready

        self.r = attach_when_ready(slot, max_block=128)
        self.out = np.zeros((128, self.r.channels), np.float32)
        self._stop = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True, name="web-load-daw-reader")

    def _run(self):
        from plugin_stub.player import host_ticks

        for _k, _late in host_ticks(128 / self.r.sample_rate, self._stop, late_after=8):
            self.r.read_into(self.out)

    def start(self) -> "DawReader":
        self.th.start()
        return self

    @property
    def underruns(self) -> int:
        return int(self.r.underrun_frames)

    def stop(self) -> None:
        self._stop.set()
        self.th.join(2)
        self.r.detach()


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def fd_count(pid: int) -> int:
    """Open file descriptors of ``pid`` (sockets included)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


class Sampler:
    """RSS and fd count of a process every ``period`` s, keeping the peaks since :meth:`reset`."""

    def __init__(self, pid: int, period: float = 0.1):
        self.pid, self.period = pid, period
        self.peak_rss = self.peak_fds = 0.0
        self._stop = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True, name="web-load-sampler")

    def reset(self) -> None:
        self.peak_rss, self.peak_fds = rss_mb(self.pid), fd_count(self.pid)

    def _run(self):
        while not self._stop.wait(self.period):
            self.peak_rss = max(self.peak_rss, rss_mb(self.pid))
            self.peak_fds = max(self.peak_fds, fd_count(self.pid))

    def start(self) -> "Sampler":
        self.reset()
        self.th.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.th.join(2)


def wait_until(pred, timeout: float, step: float = 0.1) -> bool:
    end = time.monotonic() + timeout
    while True:
        try:
            if pred():
                return True
        except Exception:  # noqa: BLE001 — a probe that fails is a no, for now
            pass
        if time.monotonic() >= end:
            return False
        time.sleep(step)


def healthz_streams(host: str, port: int) -> int:
    """``/healthz``'s ``streams`` (open web streams), by a plain one-shot request."""
    return int(json.loads(http_request(host, port, "GET", "/healthz")[1])["streams"])


def start_daemon(http_config: dict | None = None, prompt: str = "steady house groove, 124 bpm"):
    """A ``wavebridge serve`` child with one DAW slot playing, read in real time. Returns
    ``(DaemonProcess, DawReader, cleanup)``; ``http_config`` adds ``[http]`` keys to its config."""
    from bridge.ops.demo import DaemonProcess

    tmp = tempfile.mkdtemp(prefix="wb-webload-")
    slot = "L" + secrets.token_hex(5)
    cfg = os.path.join(tmp, "config.toml")
    with open(cfg, "w") as f:
        f.write(f'[engine]\nslot_names = ["{slot}"]\n')
        if http_config:
            f.write("[http]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in http_config.items()))
    d = DaemonProcess("--config", cfg, "--metrics-port", "off", "--http", "127.0.0.1:0",
                      "--state-dir", os.path.join(tmp, "state"))
    reader = None

    def cleanup():
        if reader is not None:
            reader.stop()
        d.terminate()
        from plugin_stub.protocol import shm_path
        try:
            os.unlink(shm_path(slot))
        except FileNotFoundError:
            pass

    try:
        d.url = "http://%s:%d" % d.http
        d.slot = slot
        reader = DawReader(slot).start()
        st, body = http_request(*d.http, "POST", f"/v1/slots/{slot}/play", {"prompt": prompt})
        if st != 200:
            raise RuntimeError(f"play on the DAW slot: {st} {body[:200]!r}")
        if not wait_until(lambda: reader.r.playing and reader.r.buffered() > 0, 10):
            raise RuntimeError("the DAW slot did not start playing")
        time.sleep(1.5)
        s, _ = raw_ws(*d.http)                # warm the web path once, then let it settle
        s.close()
        wait_until(lambda: healthz_streams(*d.http) == 0, 10)
    except BaseException:
        cleanup()
        raise
    return d, reader, cleanup


# ------------------------------------------------------------------------------------ raw clients
def http_request(host, port, method, path, body=None, timeout=10.0) -> tuple[int, bytes]:
    """One request on its own connection (JSON body, if any); (status, body)."""
    data = b"" if body is None else json.dumps(body).encode()
    ctype = "Content-Type: application/json\r\n" if body is not None else ""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
                  f"{ctype}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        buf = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    return (int(head.split()[1]) if head else 0), rest


def raw_connect(host, port, rcvbuf=4096) -> socket.socket:
    """A TCP connection with a small receive buffer (set before connecting, so the window stays small)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect((host, port))
    return s


def read_head(s: socket.socket) -> tuple[int, bytes]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    head = buf.split(b"\r\n\r\n")[0]
    return (int(head.split()[1]) if head else 0), head


def ws_frame(text: str) -> bytes:
    """One masked text frame (a client's, RFC 6455)."""
    data = text.encode()
    mask = os.urandom(4)
    n = len(data)
    hdr = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    return hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def raw_ws(host, port, path="/v1/stream?format=pcm_s16le") -> tuple[socket.socket, int]:
    """A WebSocket handshake by hand; returns (socket, HTTP status). The socket is never read after."""
    s = raw_connect(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    status, _ = read_head(s)
    return s, status


def raw_sse(host, port, seconds=600.0) -> socket.socket:
    s = raw_connect(host, port)
    body = json.dumps({"prompt": PROMPTS[0], "duration_seconds": seconds}).encode()
    s.sendall(b"POST /v1/audio/generate HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n"
              b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
              % (host.encode(), port, len(body), body))
    return s


# ------------------------------------------------------------------------------------ the loads
def load_unread_ws(host, port, n: int = 500, cutoff_s: float = 30.0) -> dict:
    """``n`` sessions that play and never read, held until the server has cut every one off."""
    socks, statuses = [], []
    try:
        for i in range(n):
            try:
                s, st = raw_ws(host, port)
            except OSError:
                statuses.append(0)
                continue
            statuses.append(st)
            if st == 101:
                s.sendall(ws_frame(json.dumps({"type": "play", "prompt": PROMPTS[i % 3], "seed": i})))
            socks.append(s)
        t0 = time.monotonic()
        cut = wait_until(lambda: healthz_streams(host, port) == 0, cutoff_s, step=0.2)
        took = time.monotonic() - t0
    finally:
        for s in socks:
            s.close()
    return {"admitted": statuses.count(101), "refused": sum(st != 101 for st in statuses),
            "refusals": sorted(set(statuses) - {101}), "all_cut_off": cut, "cut_off_s": round(took, 1)}


def load_unread_sse(host, port, n: int = 20, cutoff_s: float = 40.0) -> dict:
    """``n`` SSE streams of 600 s whose bodies nobody reads, held until the server has cut them off."""
    socks = []
    try:
        for _ in range(n):
            socks.append(raw_sse(host, port))
        statuses = []
        for s in socks:
            try:
                statuses.append(read_head(s)[0])
            except OSError:
                statuses.append(0)
        cut = wait_until(lambda: healthz_streams(host, port) == 0, cutoff_s, step=0.2)
    finally:
        for s in socks:
            s.close()
    return {"admitted": statuses.count(200), "refused": sum(st != 200 for st in statuses),
            "refusals": sorted(set(statuses) - {200}), "all_cut_off": cut}


def load_flood(url: str, n: int = 32, rate: float = 19.0, seconds: float = 10.0) -> dict:
    """``n`` sessions each sending ``rate`` plays a second for ``seconds`` (and reading what comes)."""
    import aiohttp

    async def one(i, c):
        notices = 0
        try:
            async with c.ws_connect(url + "/v1/stream?format=opus") as ws:
                await ws.receive_json()

                async def reader():
                    nonlocal notices
                    async for m in ws:
                        if m.type == aiohttp.WSMsgType.TEXT:
                            notices += json.loads(m.data).get("code") == "rate_limited"
                rt = asyncio.create_task(reader())
                end = time.monotonic() + seconds
                k = 0
                while time.monotonic() < end and not ws.closed:
                    await ws.send_json({"type": "play", "prompt": f"{PROMPTS[k % 3]} take {k}", "seed": k})
                    k += 1
                    await asyncio.sleep(1 / rate)
                await asyncio.sleep(0.3)
                await ws.close()
                rt.cancel()
        except aiohttp.WSServerHandshakeError as e:
            return None, e.status
        except (aiohttp.ClientError, OSError):
            return None, 0
        return notices, k

    async def go():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as c:
            return await asyncio.gather(*(one(i, c) for i in range(n)))

    res = asyncio.run(go())
    ok = [r for r in res if r[0] is not None]
    return {"admitted": len(ok), "refused": n - len(ok), "refusals": sorted({st for e, st in res if e is None}),
            "sent": sum(k for _, k in ok), "rate_limited_notices": sum(e for e, _ in ok),
            "notices_per_session": [e for e, _ in ok]}


@dataclass
class SlowResult:
    """What each kind of slow connection met: ``closed`` [seconds after connecting, or None if the
    server still held it open at the end], ``status`` [the first HTTP status it was sent, 0 none]."""

    kinds: dict = field(default_factory=dict)          # kind → list of (closed_s | None, status)
    open_at_peak: int = 0

    def closed(self, kind: str) -> int:
        return sum(c is not None for c, _ in self.kinds.get(kind, []))

    def closed_before(self, seconds: float) -> int:
        """Closed without an answer within ``seconds`` of connecting (before any timeout: made room for
        others at ``max_connections``)."""
        return sum(c is not None and c < seconds and st == 0 for v in self.kinds.values() for c, st in v)

    def still_open(self) -> int:
        return sum(c is None for v in self.kinds.values() for c, _ in v)

    def statuses(self, kind: str) -> dict:
        out: dict = {}
        for _, st in self.kinds.get(kind, []):
            out[st] = out.get(st, 0) + 1
        return out

    def summary(self) -> dict:
        out = {}
        for k, v in self.kinds.items():
            times = [c for c, _ in v if c is not None]
            out[k] = {"n": len(v), "closed": len(times), "statuses": self.statuses(k),
                      "closed_p50_s": round(float(np.median(times)), 2) if times else None,
                      "closed_max_s": round(max(times), 2) if times else None}
        return out


def load_slow_connections(host, port, heads: int = 450, trickled_heads: int = 25, idle: int = 500,
                          trickled_bodies: int = 25, hold_s: float = 20.0, until=None,
                          connect_burst: int = 50) -> SlowResult:
    """Slow and idle connections, held until the server closes each (or ``hold_s`` passes, or
    ``until()`` is true): ``heads`` send an unfinished request head and stall, ``trickled_heads``
    send a head a byte each 0.3 s, ``idle`` complete one ``GET /healthz`` and then idle on
    keep-alive, ``trickled_bodies`` send a ``POST`` whose 2000-byte body comes a byte each 0.2 s.
    Connections are opened ``connect_burst`` at a time (so the listen backlog is never the limit)."""
    hp = f"{host}:{port}".encode()
    partial = b"GET /healthz HTTP/1.1\r\nHost: " + hp + b"\r\nUser-Agent: slow\r\nX-Pad: "
    full_get = b"GET /healthz HTTP/1.1\r\nHost: " + hp + b"\r\n\r\n"
    body_len = 2000
    post_head = (b"POST /v1/audio/generate HTTP/1.1\r\nHost: " + hp + b"\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % body_len)
    res = SlowResult()

    async def watch(reader) -> int:
        """Read until EOF; the first status line's code (0 if none came)."""
        status, buf = 0, b""
        while True:
            try:
                d = await reader.read(65536)
            except (ConnectionError, OSError):
                return status
            if not d:
                return status
            if not status:
                buf += d
                if b"\r\n" in buf:
                    try:
                        status = int(buf.split(b"\r\n", 1)[0].split()[1])
                    except (IndexError, ValueError):
                        status = -1

    async def trickle(writer, data: bytes, every: float, done: asyncio.Event):
        for i in range(len(data)):
            if done.is_set() or writer.is_closing():
                return
            try:
                writer.write(data[i:i + 1])
                await writer.drain()
            except (ConnectionError, OSError, RuntimeError):
                return
            await asyncio.sleep(every)

    async def one(kind: str, stop: asyncio.Event, opened: list):
        t0 = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 15)
        except (OSError, asyncio.TimeoutError):
            return kind, (0.0, -2)                  # never connected
        opened[0] += 1
        done = asyncio.Event()
        tr = None
        try:
            if kind == "head":
                writer.write(partial)
            elif kind == "idle":
                writer.write(full_get)
            elif kind == "trickled_head":
                tr = asyncio.create_task(trickle(writer, partial + b"x" * 400, 0.3, done))
            elif kind == "trickled_body":
                writer.write(post_head)
                tr = asyncio.create_task(trickle(writer, b"{" + b" " * (body_len - 2) + b"}", 0.2, done))
            w = asyncio.create_task(watch(reader))
            s = asyncio.create_task(stop.wait())
            await asyncio.wait({w, s}, return_when=asyncio.FIRST_COMPLETED)
            done.set()
            if w.done():
                s.cancel()
                return kind, (time.monotonic() - t0, w.result())
            w.cancel()
            return kind, (None, 0)
        except (ConnectionError, OSError):
            return kind, (time.monotonic() - t0, 0)
        finally:
            done.set()
            if tr is not None:
                tr.cancel()
            writer.close()

    async def go():
        stop = asyncio.Event()
        opened = [0]
        kinds = (["head"] * heads + ["trickled_head"] * trickled_heads + ["idle"] * idle
                 + ["trickled_body"] * trickled_bodies)
        rng = np.random.default_rng(20)
        kinds = [kinds[i] for i in rng.permutation(len(kinds))]
        tasks = []
        for i in range(0, len(kinds), connect_burst):
            tasks += [asyncio.create_task(one(k, stop, opened)) for k in kinds[i:i + connect_burst]]
            await asyncio.sleep(0.02)
        end = time.monotonic() + hold_s
        while time.monotonic() < end and not all(t.done() for t in tasks):
            if until is not None and await asyncio.to_thread(until):
                break
            await asyncio.sleep(0.2)
        res.open_at_peak = opened[0]
        stop.set()
        for kind, r in await asyncio.gather(*tasks):
            res.kinds.setdefault(kind, []).append(r)

    asyncio.run(go())
    return res


# ------------------------------------------------------------------------------------ the check
def _measure(name, d, reader, sampler, fn) -> dict:
    pid = d.proc.pid
    rss0, fds0, u0 = rss_mb(pid), fd_count(pid), reader.underruns
    sampler.reset()
    t0 = time.monotonic()
    _say(f"{name}: idle RSS {rss0:.0f} MB, {fds0} fds …")
    out = fn()
    took = time.monotonic() - t0
    peak_rss, peak_fds = sampler.peak_rss, sampler.peak_fds
    time.sleep(AFTER_S)
    row = {"load": name, **out, "seconds": round(took, 1), "daw_underrun_frames": reader.underruns - u0,
           "rss_mb": [round(rss0, 1), round(peak_rss, 1), round(rss_mb(pid), 1)],
           "fds": [fds0, int(peak_fds), fd_count(pid)]}
    _say(json.dumps(row))
    return row


def _say(msg: str) -> None:
    print(f"web-load: {msg}", file=sys.stderr, flush=True)


def run_web_load(sizes: dict | None = None, loads=("ws", "flood", "sse", "slow"), http_config=None) -> list[dict]:
    """Issue #20's loads, at full size unless ``sizes`` says otherwise; one row per load."""
    import resource

    z = {"ws": 500, "flood": 32, "flood_rate": 19.0, "flood_s": 10.0, "sse": 20, "slow": 1000, **(sizes or {})}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 4 * z["slow"] + 1024))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))   # the child inherits it too
    d, reader, cleanup = start_daemon(http_config)
    sampler = Sampler(d.proc.pid).start()
    host, port = d.http
    rows = []
    try:
        for name in loads:
            if name == "ws":
                rows.append(_measure(f"{z['ws']} unread WebSocket sessions", d, reader, sampler,
                                     lambda: load_unread_ws(host, port, z["ws"])))
            elif name == "flood":
                rows.append(_measure(f"{z['flood']} sessions x {z['flood_rate']:g} plays/s, {z['flood_s']:g} s", d,
                                     reader, sampler,
                                     lambda: load_flood(d.url, z["flood"], z["flood_rate"], z["flood_s"])))
            elif name == "sse":
                rows.append(_measure(f"{z['sse']} unread SSE streams", d, reader, sampler,
                                     lambda: load_unread_sse(host, port, z["sse"])))
            elif name == "slow":
                n = z["slow"]

                def slow():
                    r = load_slow_connections(host, port, heads=n * 45 // 100, trickled_heads=n // 40,
                                              idle=n // 2, trickled_bodies=n - n * 45 // 100 - n // 40 - n // 2, hold_s=30.0)
                    refused = sum(r.statuses(k).get(503, 0) for k in r.kinds)
                    return {"admitted": r.open_at_peak - refused, "refused": refused,
                            "closed_at_the_cap": r.closed_before(0.9 * (http_config or {}).get(
                                "keepalive_timeout_s", 5.0)),
                            "held_open_by_server_at_end": r.still_open(), "kinds": r.summary()}
                rows.append(_measure(f"{n} slow connections", d, reader, sampler, slow))
    finally:
        sampler.stop()
        cleanup()
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'load':44} {'admitted':>8} {'refused':>7} {'DAW underruns':>13}  {'RSS MB idle→peak→after':>24}  "
          f"{'fds idle→peak→after':>20}")
    for r in rows:
        rss = "→".join(f"{x:.0f}" for x in r["rss_mb"])
        fds = "→".join(str(x) for x in r["fds"])
        print(f"{r['load']:44} {r['admitted']:>8} {r['refused']:>7} {r['daw_underrun_frames']:>13}  {rss:>24}  "
              f"{fds:>20}")


def run(args=None) -> int:
    """``wavebridge bench --web-load``: every load at full size; a table (and a JSON line with --json).
    Exit 1 if a load cost the DAW frames or the RSS did not come back within 20 MB."""
    from bridge.ops.bench.common import machine_info

    rows = run_web_load()
    print_table(rows)
    if getattr(args, "json", False):
        print(json.dumps({"machine": machine_info(), "loads": rows}))
    bad = [r["load"] for r in rows if r["daw_underrun_frames"] or r["rss_mb"][2] > r["rss_mb"][0] + 20]
    if bad:
        print("web-load: FAILED: " + "; ".join(bad))
    return 1 if bad else 0
