"""The HTTP listener's connections (``bridge.web.conn``), as a slow or hostile client meets them: an
idle keep-alive and an unfinished request head are closed after their (short, configured) timeouts,
a trickled body gets 408, over the connection cap the idlest connection makes room and, with every
connection busy, a new one gets 503 while the DAW side still plays; an unmasked client frame closes
the WebSocket with 1002 (RFC 6455 §5.1); clients that vanish mid-stream leave no ERROR and no
traceback in the log (a real error still has both); a bind beyond loopback warns once and an IPv6
address is printed in brackets; the web path is warmed at start. Clients send JSON with its content
type and no Origin (the guard's contract for non-browser clients on loopback).
"""
from __future__ import annotations

import base64
import json
import logging
import os
import socket
import struct
import time

import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("av")

from bridge.web import conn  # noqa: E402
from tests.httpserver import InProcessServer  # noqa: E402

PROMPT = "lofi hip hop with rhodes and vinyl drums"


@pytest.fixture
def make_srv(tmp_path):
    made = []

    def make(**kw):
        s = InProcessServer(tmp_path / f"state{len(made)}", **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def connect(srv, timeout=10.0) -> socket.socket:
    s = socket.create_connection((srv.host, srv.port), timeout=timeout)
    s.settimeout(timeout)
    return s


def host(srv) -> bytes:
    return f"{srv.host}:{srv.port}".encode()


def closed_by_server(s: socket.socket) -> bool:
    """True once the server closed ``s`` (EOF or reset); False if it is still open after the socket's
    timeout (generous: the server's timeouts in these tests are a fraction of it)."""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def read_response(s: socket.socket) -> tuple[int, dict, bytes]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    n = int(headers.get("content-length", "0"))
    while len(body) < n:
        d = s.recv(65536)
        if not d:
            break
        body += d
    return status, headers, body


def get(srv, path: str, s: socket.socket | None = None, keep=False) -> tuple[int, dict, bytes]:
    own = s is None
    s = s or connect(srv)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (path.encode(), host(srv),
                                                         b"" if keep else b"Connection: close\r\n"))
    try:
        return read_response(s)
    finally:
        if own:
            s.close()


def post_head(srv, path: str, length: int) -> bytes:
    return (b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (path.encode(), host(srv), length))


# ---------------------------------------------------------------------- timeouts
def test_idle_keepalive_is_closed_after_its_timeout(make_srv):
    srv = make_srv(keepalive_timeout_s=0.3, head_timeout_s=60.0)
    s = connect(srv)
    status, headers, _ = get(srv, "/healthz", s, keep=True)
    assert status == 200 and headers.get("connection", "").lower() != "close"
    assert closed_by_server(s)                 # idle after its response: closed (fds 29 → 2029 before)
    s.close()


def test_unfinished_head_is_closed_by_aiohttps_keepalive_timer(make_srv):
    # pins what aiohttp ≥ 3.10 does (its keep-alive timer is armed at connect): fails if that changes
    srv = make_srv(keepalive_timeout_s=0.3, head_timeout_s=60.0)
    s = connect(srv)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: " + host(srv) + b"\r\nX-Slow")
    assert closed_by_server(s)
    s.close()


@pytest.mark.parametrize("sent", [b"", b"GET /healthz HTTP/1.1\r\nHo"], ids=["nothing", "half a head"])
def test_unfinished_head_is_closed_by_the_gate(make_srv, sent):
    # aiohttp's timer out of the way: the gate's own head deadline holds
    srv = make_srv(keepalive_timeout_s=600.0, head_timeout_s=0.3)
    s = connect(srv)
    if sent:
        s.sendall(sent)
    assert closed_by_server(s)
    s.close()
    assert srv.http.gate.timed_out >= 1
    assert get(srv, "/healthz")[0] == 200     # the server serves on


def test_a_request_in_progress_is_not_timed_out_as_idle(make_srv):
    srv = make_srv(keepalive_timeout_s=0.2, head_timeout_s=0.2, body_timeout_s=600.0)
    s = connect(srv, timeout=2.0)
    s.sendall(post_head(srv, "/v1/audio/generate", 100) + b'{"prompt": ')
    assert not closed_by_server(s)            # 2 s, ten head timeouts: a body is being read
    s.close()


def test_a_trickled_body_gets_408_and_the_connection_closes(make_srv):
    srv = make_srv(body_timeout_s=0.3, body_min_rate=1e6, head_timeout_s=60.0, keepalive_timeout_s=60.0)
    s = connect(srv)
    body = json.dumps({"prompt": PROMPT, "duration_seconds": 1}).encode()
    s.sendall(post_head(srv, "/v1/audio/generate", len(body)) + body[:10])
    status, headers, raw = read_response(s)
    assert status == 408
    assert json.loads(raw)["event"] == "error" and "not received" in json.loads(raw)["message"]
    assert headers.get("connection", "").lower() == "close"
    assert closed_by_server(s)
    s.close()


def test_a_whole_body_within_the_floor_is_served(make_srv):
    srv = make_srv(body_timeout_s=5.0, body_min_rate=4096.0)
    s = connect(srv)
    body = json.dumps({"prompt": PROMPT, "duration_seconds": 0.5, "format": "wav"}).encode()
    s.sendall(post_head(srv, "/v1/audio/generate", len(body)).replace(b"\r\n\r\n", b"\r\nAccept: audio/wav\r\n"
                                                                       b"Connection: close\r\n\r\n") + body)
    status, headers, _ = read_response(s)
    s.close()
    assert status == 200


# ---------------------------------------------------------------------- the connection cap
def test_over_the_cap_the_idlest_connection_makes_room(make_srv):
    srv = make_srv(max_connections=6, head_timeout_s=60.0, keepalive_timeout_s=60.0)
    idle = [connect(srv) for _ in range(6)]
    for s in idle:
        s.sendall(b"G")                        # slow heads: idle, no request started
    time.sleep(0.2)
    # a DAW-side request (the local admin's slot play) still gets in: the oldest idle one is closed
    s = connect(srv)
    body = json.dumps({"prompt": PROMPT, "seconds": 2}).encode()
    s.sendall(post_head(srv, f"/v1/slots/{srv.names[0]}/play", len(body)) + body)
    status, _, raw = read_response(s)
    s.close()
    assert status == 200, raw
    assert srv.http.gate.evicted >= 1
    assert closed_by_server(idle[0])
    assert len(srv.http.gate.open) <= 6
    for c in idle:
        c.close()


def test_with_every_connection_busy_a_new_one_gets_503_and_the_daw_plays_on(make_srv):
    srv = make_srv(max_connections=4, head_timeout_s=60.0, keepalive_timeout_s=60.0, body_timeout_s=600.0)
    busy = [connect(srv) for _ in range(4)]
    for s in busy:                             # each stuck in the middle of its body: busy
        s.sendall(post_head(srv, "/v1/audio/generate", 100) + b"{")
    time.sleep(0.3)
    s = connect(srv)
    status, headers, raw = read_response(s)    # answered before it sent a byte
    assert status == 503 and headers.get("retry-after") == "1"
    assert json.loads(raw)["reason"] == "busy"
    assert closed_by_server(s)
    s.close()
    assert srv.http.gate.refused >= 1
    # the DAW side (OSC's path into the daemon) still plays
    from bridge.core.commands import Command

    slot = srv.daemon.slots[srv.names[0]]
    srv.daemon.submit(Command("play", slot=srv.names[0], prompt=PROMPT, seconds=2.0, source="osc"))
    end = time.monotonic() + 20
    while time.monotonic() < end and slot.ring.write_index == 0:
        time.sleep(0.05)
    assert slot.ring.write_index > 0
    for c in busy:
        c.close()
    end = time.monotonic() + 10                # once they are gone, HTTP is served again
    while time.monotonic() < end and len(srv.http.gate.open) >= 4:
        time.sleep(0.05)
    assert get(srv, "/healthz")[0] == 200


class _Transport:
    def __init__(self, peer):
        self.peer = peer

    def get_extra_info(self, name):
        return (self.peer, 40000) if name == "peername" else None


def test_per_host_cap_applies_beyond_loopback_only():
    g = conn.ConnectionGate(runner=None, max_connections=100, max_per_host=2)

    class C:
        host = "?"
        admitted = False

        def force_close(self):
            pass

    remote = [C() for _ in range(3)]
    assert [g.admit(c, _Transport("203.0.113.7")) for c in remote] == [True, True, False]
    assert g.admit(C(), _Transport("203.0.113.8"))            # another host has its own count
    assert all(g.admit(C(), _Transport("127.0.0.1")) for _ in range(5))   # loopback: the total cap only
    g.lost(remote[0])
    assert g.admit(C(), _Transport("203.0.113.7"))
    assert g.refused == 1


# ---------------------------------------------------------------------- RFC 6455 masking
def ws_handshake(srv, path="/v1/status/ws") -> socket.socket:
    s = connect(srv)
    key = base64.b64encode(os.urandom(16))
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path.encode(), host(srv), key))
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    assert buf.startswith(b"HTTP/1.1 101"), buf[:200]
    return s


def frame(payload: bytes, opcode=1, masked=True) -> bytes:
    n = len(payload)
    head = bytes([0x80 | opcode])
    ln = (bytes([n]) if n < 126 else bytes([126]) + struct.pack(">H", n) if n < 65536
          else bytes([127]) + struct.pack(">Q", n))
    if not masked:
        return head + ln + payload
    m = os.urandom(4)
    return head + bytes([ln[0] | 0x80]) + ln[1:] + m + bytes(b ^ m[i % 4] for i, b in enumerate(payload))


def close_code(s: socket.socket) -> int | None:
    """Read server frames until a close frame: its code (None if the socket ends without one)."""
    buf = b""
    while True:
        try:
            d = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return None
        if not d:
            return None
        buf += d
        while len(buf) >= 2:
            op, n = buf[0] & 0x0F, buf[1] & 0x7F
            i = 2
            if n == 126:
                if len(buf) < 4:
                    break
                n, i = struct.unpack(">H", buf[2:4])[0], 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n, i = struct.unpack(">Q", buf[2:10])[0], 10
            if len(buf) < i + n:
                break
            if op == 8:
                return struct.unpack(">H", buf[i:i + 2])[0] if n >= 2 else 1005
            buf = buf[i + n:]


@pytest.mark.parametrize("split", [False, True], ids=["one write", "byte by byte"])
def test_an_unmasked_client_frame_closes_the_websocket_with_1002(make_srv, split):
    srv = make_srv()
    s = ws_handshake(srv)
    good, bad = frame(b"ping me", opcode=9), frame(b'{"type": "hello"}', masked=False)
    if split:                       # up to the bad header's mask bit, a byte at a time: then it is closed
        for b in good + bad[:2]:
            s.sendall(bytes([b]))
            time.sleep(0.002)
    else:
        s.sendall(good + bad)
    assert close_code(s) == 1002
    s.close()


def test_masked_frames_pass(make_srv):
    srv = make_srv()
    s = ws_handshake(srv)
    big = b"x" * 70000                                  # 64-bit length: dropped by max_msg_size (1009)
    s.sendall(frame(b"hi", opcode=9))                    # a masked ping
    s.settimeout(3.0)
    buf = b""
    end = time.monotonic() + 5
    while b"\x8a\x02hi" not in buf and time.monotonic() < end:
        try:
            buf += s.recv(65536)
        except socket.timeout:
            break
    assert b"\x8a\x02hi" in buf                          # its pong: the connection lives
    s.sendall(frame(big))
    assert close_code(s) == 1009                         # aiohttp's own limit, not a masking error
    s.close()


def test_mask_check_follows_frame_boundaries_across_chunks():
    frames = frame(b"a" * 5) + frame(b"b" * 300) + frame(b"c" * 70000) + frame(b"", opcode=9)
    for step in (1, 3, 7, 1000, len(frames)):
        mc, out = conn.MaskCheck(), b""
        for i in range(0, len(frames), step):
            ok, bad = mc.feed(frames[i:i + step])
            assert not bad
            out += ok
        assert out == frames                              # nothing lost, nothing held at the end
    mc = conn.MaskCheck()
    good, bad = frame(b"ok"), frame(b"no", masked=False)
    ok, is_bad = mc.feed(good + bad + good)
    assert is_bad and ok == good and mc.failed


# ---------------------------------------------------------------------- disconnects in the log
def _sse_request(srv, fmt="opus", accept="text/event-stream", seconds=6) -> bytes:
    body = json.dumps({"prompt": PROMPT, "duration_seconds": seconds, "format": fmt}).encode()
    return post_head(srv, "/v1/audio/generate", len(body)).replace(
        b"\r\n\r\n", b"\r\nAccept: " + accept.encode() + b"\r\n\r\n") + body


def _reset(s: socket.socket) -> None:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_clients_that_vanish_leave_no_error_and_no_traceback(make_srv, caplog):
    srv = make_srv(slots=1, max_streams=8)
    caplog.set_level(logging.DEBUG)
    for _ in range(3):
        for fmt, accept in (("opus", "text/event-stream"), ("mp3", "audio/mpeg"), ("wav", "audio/wav")):
            s = connect(srv)
            s.sendall(_sse_request(srv, fmt, accept))
            s.recv(2000)                                   # streaming: then gone, reset or closed
            time.sleep(0.3)
            _reset(s) if fmt != "wav" else s.close()
        s = ws_handshake(srv)                              # a status socket dropped
        s.recv(100)
        _reset(s)
        try:
            s = ws_handshake(srv, "/v1/stream?format=opus")   # a live session dropped mid-stream
            s.sendall(frame(json.dumps({"type": "play", "prompt": PROMPT, "seconds": 5}).encode()))
            time.sleep(0.5)
            _reset(s)
        except AssertionError:                             # admission said 503 on a loaded machine
            pass
        s = connect(srv)                                   # garbage instead of HTTP
        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(40) + b"\r\n\r\n")
        time.sleep(0.1)
        _reset(s)
        s = connect(srv)                                   # a second request of garbage
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: " + host(srv) + b"\r\n\r\n\x81\xb6" + os.urandom(30))
        time.sleep(0.1)
        _reset(s)
    time.sleep(1.5)
    assert get(srv, "/healthz")[0] == 200
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [(r.name, r.levelname, r.getMessage()[:200]) for r in bad]
    assert any("client went away" in r.getMessage() or "Error handling request" in r.getMessage()
               for r in caplog.records if r.levelno == logging.DEBUG)


def test_a_real_error_still_logs_its_traceback(make_srv, caplog):
    from aiohttp.test_utils import make_mocked_request

    srv = make_srv()
    caplog.set_level(logging.DEBUG)

    async def broken(request):
        raise ValueError("a bug")

    async def gone(request):
        raise ConnectionResetError("Cannot write to closing transport")

    async def run(handler):
        req = make_mocked_request("GET", "/v1/status", app=srv.http.runner.app)
        return await srv.http._errors(req, handler)

    resp = srv.call(run(broken))
    assert resp.status == 500
    errs = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errs and errs[0].exc_info and "a bug" in str(errs[0].exc_info[1])
    caplog.clear()
    srv.call(run(gone))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


def test_aiohttps_own_client_error_lines_are_quieted_but_real_ones_kept():
    f = conn.QuietClientErrors()
    from aiohttp.http_exceptions import BadHttpMethod

    def rec(exc):
        return logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, "Error handling request from %s",
                                 ("127.0.0.1",), (type(exc), exc, None))

    for exc in (ConnectionResetError("Connection lost"), BrokenPipeError(), BadHttpMethod("\x81\xb6\nline two")):
        r = rec(exc)
        assert f.filter(r) and r.levelno == logging.DEBUG and r.exc_info is None and "\n" not in r.getMessage()
    r = rec(KeyError("bug"))
    assert f.filter(r) and r.levelno == logging.ERROR and r.exc_info is not None


# ---------------------------------------------------------------------- printing
def test_addresses_are_printed_with_ipv6_in_brackets():
    from bridge.ops.serve import http_url

    assert conn.host_port("::", 8137) == "[::]:8137"
    assert http_url("::", 8137) == "http://[::]:8137/"
    assert http_url("::1", 80, "/metrics") == "http://[::1]:80/metrics"
    assert http_url("127.0.0.1", 8137) == "http://127.0.0.1:8137/"
    assert http_url("[::1]", 8137) == "http://[::1]:8137/"
    assert http_url("localhost", 1) == "http://localhost:1/"


def test_a_bind_beyond_loopback_warns_in_one_line(capsys, caplog):
    from bridge.ops.serve import _warn_http_exposure

    assert conn.exposure_warning("127.0.0.1", 8137) is None
    assert conn.exposure_warning("::1", 8137) is None
    assert conn.exposure_warning("localhost", 8137) is None
    caplog.set_level(logging.WARNING)
    _warn_http_exposure("0.0.0.0", 8137)
    _warn_http_exposure("::", 8137)
    _warn_http_exposure("127.0.0.1", 8137)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith("wavebridge: WARNING: the HTTP API listens on 0.0.0.0:8137 (every interface)")
    assert "[::]:8137 (every interface)" in out[1] and "API key" in out[1]
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.WARNING]


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback")
def test_serve_prints_the_ipv6_url_bracketed_and_warms_the_web_path(daemon_proc, tmp_path, slot_name):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[engine]\nslot_names = ["{slot_name}"]\n')
    d = daemon_proc("--config", str(cfg), "--metrics-port", "off", "--http", "[::1]:0", "--state-dir",
                    str(tmp_path / "state"), "--log-level", "INFO")
    text = "".join(d.lines)
    assert "HTTP API and web page on http://[::1]:" in text, text
    assert d.http[0] == "[::1]"
    time.sleep(0.5)
    assert any("web path warm in" in ln for ln in d.lines + d.err_lines), d.err_lines[-20:]
    assert "WARNING: the HTTP API" not in text           # loopback: no warning


# ---------------------------------------------------------------------- warm-up
def test_warm_up_exercises_every_encoder_and_a_private_slot(make_srv):
    srv = make_srv()
    ms = srv.call(srv.http.warm_up(), timeout=60)
    w = srv.http.warmed
    from bridge.web.encoding import FORMATS

    assert set(FORMATS) | {"opus_packets"} <= set(w["formats"])
    assert w["private_slot_frames"] > 0                   # a private slot played, was read and closed
    assert w["healthz"] == 200                             # aiohttp's request path ran once
    # … and a POST through the guard's Content-Type check, the body's read and the generate
    # validators, refused by the last one: nothing admitted, played or billed, and not counted
    assert w["generate_refused"] == 400
    assert w["admission"] is True                          # the tier and headroom checks ran, read only
    assert not any(k[0] == "/v1/audio/generate" for k in srv.http.auth.meters.requests)
    assert srv.http.auth.store.usage("local")["requests"] == 0
    assert ms == w["ms"] >= 0
    assert not srv.http.streams                            # the warm-up's slot is given back
    assert get(srv, "/healthz")[0] == 200


# ---------------------------------------------------------------------- config
def test_the_connection_limits_come_from_the_http_section_and_are_checked(tmp_path):
    from bridge.ops.config import ConfigError, parse, resolve
    from bridge.web.app import serve

    out = parse({"http": {"keepalive_timeout_s": 1.5, "head_timeout_s": 2, "body_timeout_s": 3.0,
                          "body_min_rate": 1000.0, "max_connections": 100, "max_connections_per_host": 10}})
    assert out == {"keepalive_timeout_s": 1.5, "head_timeout_s": 2.0, "body_timeout_s": 3.0, "body_min_rate": 1000.0,
                   "max_connections": 100, "max_connections_per_host": 10}
    for bad in ({"head_timeout_s": 0}, {"keepalive_timeout_s": -1.0}, {"body_timeout_s": float("inf")},
                {"body_min_rate": 0.0}, {"max_connections": 0}, {"max_connections_per_host": 1.5},
                {"head_timeout_s": "10"}):
        with pytest.raises(ConfigError) as e:
            parse({"http": bad})
        assert next(iter(bad)) in e.value.message
    cfg = tmp_path / "c.toml"
    cfg.write_text("[http]\nlisten = \"127.0.0.1:0\"\nkeepalive_timeout_s = 0.5\nhead_timeout_s = 0.7\n"
                   "body_timeout_s = 0.9\nmax_connections = 33\nmax_connections_per_host = 3\n")
    settings = resolve({"config": str(cfg), "state_dir": str(tmp_path / "served")}, environ={"HOME": str(tmp_path)})
    srv = InProcessServer(tmp_path / "state")
    svc = None
    try:
        svc = srv.call(serve(srv.daemon, settings))
        c, g = svc.cfg, svc.gate
        assert (c.keepalive_timeout_s, c.head_timeout_s, c.body_timeout_s, c.body_min_rate) == (0.5, 0.7, 0.9, 4096.0)
        assert (g.max_connections, g.max_per_host, g.head_timeout_s) == (33, 3, 0.7)
        s = socket.create_connection(("127.0.0.1", svc.port), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % svc.port)   # a head never finished
        assert closed_by_server(s)
        s.close()
    finally:
        if svc is not None:
            srv.call(svc.close())
        srv.close()
