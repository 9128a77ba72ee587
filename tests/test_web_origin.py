"""Browser-origin safety of the HTTP API (``bridge.web.guard``), as a hostile page or a rebinding
DNS name would attack it: a foreign Host is 421, a foreign or ``null`` Origin is 403 before any
handler (WebSocket handshakes included), cross-site Fetch Metadata is 403, a state-changing request
that is not JSON is 415 — and each refusal changes nothing (no command reaches the daemon, no track
is queued). CORS answers listed origins only. The DAW slots need the local admin (an ``admin`` key,
the page token, or a key-less non-browser client on an open loopback server); a key sees only its
own streams in ``/v1/status``. The browser's view of all this is ``tests/test_web_browser.py``.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import stat

import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("av")

import aiohttp  # noqa: E402

from tests.httpserver import InProcessServer, ws_connect_busy_aware  # noqa: E402

PROMPT = "deep house in A minor with piano, warm bass and drums, 122 bpm"
SECRET = "a very private prompt about a secret chord"
EVIL = "http://evil.example"


class Spy:
    """Records every command submitted to the daemon for one of its DAW slots (and passes all on)."""

    def __init__(self, daemon):
        self.commands = []
        self._submit = daemon.submit
        self._daw = {n for n, s in daemon.slots.items() if not s.private}
        daemon.submit = self

    def __call__(self, cmd, *a, **kw):
        if cmd.slot in self._daw:
            self.commands.append(cmd)
        return self._submit(cmd, *a, **kw)


@pytest.fixture
def srv(tmp_path):
    s = InProcessServer(tmp_path / "state", slots=2)
    s.spy = Spy(s.daemon)
    yield s
    s.close()


def request(method, url, headers=None, body=None, data=None):
    """One request with exactly these headers (``body``: sent as JSON with its content type)."""
    async def go():
        async with aiohttp.ClientSession() as s:
            kw = {"json": body} if body is not None else {"data": data}
            async with s.request(method, url, headers=headers or {}, **kw) as r:
                return r.status, r.headers, await r.read()
    return asyncio.run(go())


def ws_status(url, headers=None):
    """The HTTP status of a WebSocket handshake (101 when it upgraded)."""
    async def go():
        async with aiohttp.ClientSession() as s:
            try:
                async with s.ws_connect(url, headers=headers or {}) as ws:
                    await ws.close()
                    return 101
            except aiohttp.WSServerHandshakeError as e:
                return e.status
    return asyncio.run(go())


def endpoints(srv):
    """(method, path, JSON body) of every endpoint, the DAW slot's play and stop among them."""
    slot = srv.names[0]
    return [("GET", "/", None), ("GET", "/web/app.js", None), ("GET", "/favicon.ico", None),
            ("GET", "/healthz", None), ("GET", "/v1/status", None), ("GET", "/v1/usage", None),
            ("GET", "/v1/tracks", None), ("GET", "/v1/tracks/" + "0" * 32, None),
            ("GET", "/v1/tracks/" + "0" * 32 + "/audio", None),
            ("POST", f"/v1/slots/{slot}/play", {"prompt": PROMPT}), ("POST", f"/v1/slots/{slot}/stop", {}),
            ("POST", "/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5}),
            ("POST", "/v1/tracks", {"prompt": PROMPT, "seconds": 1.0}),
            ("OPTIONS", "/v1/audio/generate", None)]


def assert_nothing_happened(srv):
    assert srv.spy.commands == [], srv.spy.commands
    assert srv.on_loop(srv.http.store.queue_depth) == {}
    assert not srv.http.streams


# ------------------------------------------------------------------------------------------ Host
@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.nip.io:{port}",
                                  "localhost:1", "[::1]:1", "evil.example:{port}@127.0.0.1", "{port}"])
def test_a_foreign_host_is_misdirected_everywhere_and_changes_nothing(srv, host):
    h = {"Host": host.format(port=srv.port)}
    for method, path, body in endpoints(srv):
        st, _, raw = request(method, srv.url + path, h, body)
        assert st == 421, (host, method, path, st, raw[:200])
        assert json.loads(raw)["reason"] == "misdirected"
    ws = srv.url.replace("http", "ws")
    assert ws_status(ws + "/v1/stream", h) == 421
    assert ws_status(ws + "/v1/status/ws", h) == 421
    assert_nothing_happened(srv)


def test_loopback_names_with_the_bound_port_are_served(srv):
    for host in (f"127.0.0.1:{srv.port}", f"localhost:{srv.port}", f"LOCALHOST.:{srv.port}", f"[::1]:{srv.port}",
                 f"127.3.2.1:{srv.port}", f"ip6-localhost:{srv.port}"):
        st, _, raw = request("GET", srv.url + "/v1/status", {"Host": host})
        assert st == 200, (host, raw[:200])
    st, _, raw = request("POST", srv.url + f"/v1/slots/{srv.names[0]}/play", {"Host": f"localhost:{srv.port}"},
                         {"prompt": PROMPT})
    assert st == 200, raw
    assert [c.kind for c in srv.spy.commands] == ["play"]


def test_guard_host_rules_for_wildcard_binds_and_listed_names(tmp_path):
    from bridge.web.guard import Guard

    g = Guard(lambda: ("0.0.0.0", 8137), "0.0.0.0", str(tmp_path), allowed_hosts=["studio.example", ".lan",
                                                                                   "proxy.example:443"])
    assert g.host_ok("192.168.1.20:8137") and g.host_ok("[fe80::1]:8137") and g.host_ok("localhost:8137")
    assert not g.host_ok("192.168.1.20:9999") and not g.host_ok("rebind.evil.example:8137")
    assert g.host_ok("studio.example") and g.host_ok("studio.example:8137") and g.host_ok("box.lan:8137")
    assert g.host_ok("lan:8137") and not g.host_ok("evillan:8137") and not g.host_ok("lan.evil:8137")
    assert g.host_ok("proxy.example:443") and not g.host_ok("proxy.example:80")
    g = Guard(lambda: ("10.0.0.5", 80), "10.0.0.5", str(tmp_path))
    assert g.host_ok("10.0.0.5") and g.host_ok("10.0.0.5:80") and not g.host_ok("10.0.0.6")
    with pytest.raises(ValueError):
        Guard(lambda: ("127.0.0.1", 1), "127.0.0.1", str(tmp_path), allowed_hosts=["a/b"])
    with pytest.raises(ValueError):
        Guard(lambda: ("127.0.0.1", 1), "127.0.0.1", str(tmp_path), allowed_origins=["null"])


# ---------------------------------------------------------------------------------------- Origin
@pytest.mark.parametrize("origin", [EVIL, "null", "http://127.0.0.1:1", "https://evil.example",
                                    "http://127.0.0.1.evil.example", "file://"])
def test_a_foreign_or_null_origin_is_refused_before_any_handler(srv, origin):
    h = {"Origin": origin}
    slot = srv.names[0]
    for method, path, body in endpoints(srv):
        if method == "GET" and path in ("/", "/web/app.js", "/favicon.ico"):
            continue
        st, hdr, raw = request(method, srv.url + path, h, body)
        assert st == 403, (origin, method, path, st, raw[:200])
        assert "Access-Control-Allow-Origin" not in hdr
    ws = srv.url.replace("http", "ws")
    assert ws_status(ws + "/v1/stream", h) == 403          # refused before the upgrade: never a 101
    assert ws_status(ws + "/v1/status/ws", h) == 403
    assert_nothing_happened(srv)
    assert srv.on_loop(srv.daemon.status)[0]["state"] == "idle"
    # the simple requests a form or a no-cors fetch would send are refused the same way
    for ctype, data in (("text/plain", json.dumps({"prompt": PROMPT})),
                        ("application/x-www-form-urlencoded", "prompt=" + PROMPT)):
        st, _, _ = request("POST", srv.url + f"/v1/slots/{slot}/play", {**h, "Content-Type": ctype}, data=data)
        assert st == 403
    assert_nothing_happened(srv)


def test_the_servers_own_origin_passes(srv):
    for origin in (srv.url, f"http://localhost:{srv.port}"):
        host = origin.split("//")[1]
        st, _, raw = request("POST", srv.url + "/v1/audio/generate", {"Origin": origin, "Host": host,
                                                                      "Sec-Fetch-Site": "same-origin"},
                             {"prompt": PROMPT, "duration_seconds": 0.3})
        assert st == 200, raw[:200]
    ws = srv.url.replace("http", "ws")
    assert ws_status(ws + "/v1/stream", {"Origin": srv.url}) == 101
    assert ws_status(ws + "/v1/status/ws", {"Origin": srv.url}) == 101
    # an origin with the same host but another port is another origin
    st, _, _ = request("GET", srv.url + "/v1/status", {"Origin": f"http://127.0.0.1:{srv.port + 1}"})
    assert st == 403


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_cross_site_fetch_metadata_without_an_origin_reads_nothing_but_the_page(srv, site):
    """A foreign ``<audio src>``/``<img>`` sends no Origin, but it sends Sec-Fetch-Site."""
    h = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "audio"}
    tid = srv.on_loop(srv.http.store.add_track, "local", PROMPT, 1.0, "opus", 1)
    for path in ("/v1/status", "/v1/tracks", f"/v1/tracks/{tid}", f"/v1/tracks/{tid}/audio", "/v1/usage",
                 "/healthz"):
        st, _, raw = request("GET", srv.url + path, h)
        assert st == 403 and json.loads(raw)["reason"] == "forbidden", (path, st)
    nav = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    for path in ("/", "/web/app.js", "/favicon.ico"):
        st, hdr, _ = request("GET", srv.url + path, nav)
        assert st == 200, path
    assert hdr.get("X-Content-Type-Options") == "nosniff"
    st, hdr, _ = request("GET", srv.url + "/", nav)
    assert hdr["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in hdr["Content-Security-Policy"]


# ---------------------------------------------------------------------------------------- JSON only
@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x",
                                   None])
def test_state_changing_requests_must_be_json(srv, ctype):
    slot = srv.names[0]
    h = {"Content-Type": ctype} if ctype else {}
    for path, body in ((f"/v1/slots/{slot}/play", {"prompt": PROMPT}), (f"/v1/slots/{slot}/stop", {}),
                       ("/v1/tracks", {"prompt": PROMPT, "seconds": 1.0}),
                       ("/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5})):
        st, _, raw = request("POST", srv.url + path, h, data=json.dumps(body).encode())
        assert st == 415, (ctype, path, st, raw[:200])
        assert "application/json" in json.loads(raw)["message"]
    assert_nothing_happened(srv)
    st, _, _ = request("POST", srv.url + f"/v1/slots/{slot}/play", {"Content-Type": "application/json; charset=utf-8"},
                       data=json.dumps({"prompt": PROMPT}).encode())
    assert st == 200 and len(srv.spy.commands) == 1


# ------------------------------------------------------------------------------------------ CORS
def test_no_wildcard_cors_and_preflight_only_for_listed_origins(tmp_path):
    app = "http://app.example:3000"
    srv = InProcessServer(tmp_path / "state", allowed_origins=(app,))
    try:
        spy = Spy(srv.daemon)
        pre = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
        st, h, _ = request("OPTIONS", srv.url + "/v1/audio/generate", {"Origin": EVIL, **pre})
        assert st == 403 and "Access-Control-Allow-Origin" not in h
        st, h, _ = request("OPTIONS", srv.url + "/v1/audio/generate", {"Origin": app, **pre})
        assert st == 204 and h["Access-Control-Allow-Origin"] == app and "Origin" in h.get("Vary", "")
        assert "Content-Type" in h["Access-Control-Allow-Headers"]
        # the listed origin's page may use the API (CORS echoes it) …
        st, h, raw = request("POST", srv.url + "/v1/audio/generate", {"Origin": app, "Sec-Fetch-Site": "cross-site"},
                             {"prompt": PROMPT, "duration_seconds": 0.3})
        assert st == 200 and h["Access-Control-Allow-Origin"] == app and "X-Wavebridge-Job" in \
            h["Access-Control-Expose-Headers"]
        ws = srv.url.replace("http", "ws")
        assert ws_status(ws + "/v1/stream", {"Origin": app}) == 101
        # … but it is not the local admin: no DAW slot, no DAW row
        st, _, _ = request("POST", srv.url + f"/v1/slots/{srv.names[0]}/play", {"Origin": app}, {"prompt": PROMPT})
        assert st == 403 and spy.commands == []
        st, h, raw = request("GET", srv.url + "/v1/status", {"Origin": app})
        assert st == 200 and not [r for r in json.loads(raw)["slots"] if not r["private"]]
        # no response ever says *
        for origin in (None, EVIL, app):
            for path in ("/v1/status", "/v1/usage", "/healthz", "/", "/v1/nope"):
                _, h, _ = request("GET", srv.url + path, {"Origin": origin} if origin else {})
                assert h.get("Access-Control-Allow-Origin") in (None, app), (origin, path, h)
    finally:
        srv.close()


# ----------------------------------------------------------------------------------- page token
def test_the_page_carries_the_install_token_and_only_it_makes_a_browser_the_admin(tmp_path):
    state = tmp_path / "state"
    srv = InProcessServer(state, slots=1)
    try:
        spy = Spy(srv.daemon)
        st, h, html = request("GET", srv.url + "/")
        tok = re.search(rb'name="wavebridge-token" content="([A-Za-z0-9_-]{32,})"', html).group(1).decode()
        assert h["Cache-Control"] == "no-store"
        path = state / "page-token"
        assert path.read_text().strip() == tok and stat.S_IMODE(os.stat(path).st_mode) == 0o600
        play = srv.url + f"/v1/slots/{srv.names[0]}/play"
        page = {"Origin": srv.url, "Sec-Fetch-Site": "same-origin"}
        # a same-origin browser request without the token is served, but not as the admin
        st, _, raw = request("POST", play, page, {"prompt": PROMPT})
        assert st == 403 and json.loads(raw)["reason"] == "forbidden"
        st, _, _ = request("POST", play, {**page, "X-Wavebridge-Token": "x" * len(tok)}, {"prompt": PROMPT})
        assert st == 403 and spy.commands == []
        st, _, raw = request("POST", play, {**page, "X-Wavebridge-Token": tok}, {"prompt": PROMPT})
        assert st == 200, raw
        st, _, raw = request("GET", srv.url + "/v1/status?token=" + tok, page)
        assert [r["slot"] for r in json.loads(raw)["slots"]] == srv.names
        st, _, raw = request("GET", srv.url + "/v1/status", page)
        assert json.loads(raw)["slots"] == []
        # what the user typed into the address bar (Sec-Fetch-Site: none) is the user's own request
        st, _, raw = request("GET", srv.url + "/v1/status", {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"})
        assert [r["slot"] for r in json.loads(raw)["slots"]] == srv.names
        # a non-browser client (no Origin, no Sec-Fetch-Site) on an open loopback server is the admin
        st, _, _ = request("POST", srv.url + f"/v1/slots/{srv.names[0]}/stop", {}, {"fade_s": 0.1})
        assert st == 200 and [c.kind for c in spy.commands] == ["play", "stop"]
    finally:
        srv.close()
    srv = InProcessServer(state, slots=1)        # the same install: the same token
    try:
        _, _, html = request("GET", srv.url + "/")
        assert tok.encode() in html
    finally:
        srv.close()


def test_a_page_token_file_that_is_a_symlink_is_refused_not_adopted(tmp_path):
    from bridge.web.guard import load_page_token
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    foreign = tmp_path / "planted"
    foreign.write_text("A" * 43 + "\n")
    (state / "page-token").symlink_to(foreign)
    with pytest.raises(PermissionError, match="symlink"):
        load_page_token(str(state))
    assert foreign.read_text() == "A" * 43 + "\n"           # nothing written through the link
    (state / "page-token").unlink()
    (state / "page-token").write_text("short\n")
    os.chmod(state / "page-token", 0o644)
    tok = load_page_token(str(state))                        # a malformed token is replaced, the file tightened
    assert len(tok) >= 32 and (state / "page-token").read_text().strip() == tok
    assert stat.S_IMODE(os.stat(state / "page-token").st_mode) == 0o600
    assert load_page_token(str(state)) == tok


# ------------------------------------------------------------------------------------ keys, admin
def test_only_an_admin_key_drives_a_daw_slot(srv):
    free = srv.on_loop(srv.http.store.add_key, "free-user", "free")
    pro = srv.on_loop(srv.http.store.add_key, "pro-user", "pro")
    admin = srv.on_loop(srv.http.store.add_key, "studio", "pro", "admin")
    play = srv.url + f"/v1/slots/{srv.names[0]}/play"
    body = {"prompt": PROMPT, "seconds": 86400}
    for key in (free, pro):
        st, _, raw = request("POST", play, {"Authorization": f"Bearer {key}"}, body)
        assert st == 403 and "admin" in json.loads(raw)["message"], raw
        st, _, _ = request("POST", srv.url + f"/v1/slots/{srv.names[0]}/stop", {"X-API-Key": key}, {})
        assert st == 403
    st, _, _ = request("POST", play, {}, body)               # keys exist: no key at all is 401
    assert st == 401
    assert srv.spy.commands == []
    st, _, raw = request("POST", play, {"Authorization": f"Bearer {admin}"}, body)
    assert st == 200, raw
    assert [c.kind for c in srv.spy.commands] == ["play"]
    # the page token is no key: on a server with keys it makes nobody the admin
    tok = srv.http.guard.token
    st, _, _ = request("POST", play, {"X-Wavebridge-Token": tok}, body)
    assert st == 401


def test_a_key_sees_only_its_own_streams_in_status(srv):
    a = srv.on_loop(srv.http.store.add_key, "alice", "pro")
    b = srv.on_loop(srv.http.store.add_key, "bob", "pro")
    admin = srv.on_loop(srv.http.store.add_key, "studio", "pro", "admin")
    st, _, _ = request("POST", srv.url + f"/v1/slots/{srv.names[0]}/play", {"X-API-Key": admin},
                       {"prompt": "the studio's own DAW prompt"})
    assert st == 200

    async def go():
        async with aiohttp.ClientSession() as s:
            # the DAW slot has just started: its lead may still be building (503 Retry-After)
            async with await ws_connect_busy_aware(s, srv.url + "/v1/stream?format=pcm_s16le&key=" + a) as ws:
                assert (await ws.receive_json())["type"] == "ready"
                await ws.send_json({"type": "play", "prompt": SECRET})
                while (await ws.receive()).type != aiohttp.WSMsgType.BINARY:
                    pass

                async def status(key):
                    async with s.get(srv.url + "/v1/status", headers={"X-API-Key": key}) as r:
                        return await r.json()

                async def status_ws(key):
                    async with s.ws_connect(srv.url + "/v1/status/ws?key=" + key) as sws:
                        return await sws.receive_json()

                return {k: (await status(v), await status_ws(v)) for k, v in
                        (("a", a), ("b", b), ("admin", admin))}

    seen = asyncio.run(go())
    for who in ("a", "b", "admin"):
        for view in seen[who]:
            text = json.dumps(view["slots"])
            assert (SECRET in text) == (who in ("a", "admin")), (who, view)
            assert ("the studio's own DAW prompt" in text) == (who == "admin"), (who, view)
            assert view["streams"] == (0 if who == "b" else 1)
    assert [r["private"] for r in seen["a"][0]["slots"]] == [True]
    assert seen["b"][0]["slots"] == [] and seen["b"][1]["slots"] == []


def test_a_database_of_the_last_version_gains_the_scope_column(tmp_path):
    from bridge.web.store import DB_NAME, Store

    os.makedirs(tmp_path, exist_ok=True)
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.executescript("CREATE TABLE keys (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, tier TEXT NOT NULL, "
                     "salt BLOB NOT NULL, hash BLOB NOT NULL, created REAL NOT NULL, revoked REAL);")
    db.close()
    s = Store(str(tmp_path))
    try:
        key = s.add_key("old", "free")
        assert s.check_key(key)["scope"] == ""
        assert s.check_key(s.add_key("boss", "pro", "admin"))["scope"] == "admin"
        assert [r["scope"] for r in s.list_keys()] == ["", "admin"]
    finally:
        s.close()
    s = Store(str(tmp_path))                          # a second open migrates nothing again
    s.close()


def test_cli_keys_add_scope_admin_and_config_origins(tmp_path, capsys):
    from bridge.ops.cli import main
    from bridge.ops.config import ConfigError, parse
    from bridge.web.store import Store

    assert main(["keys", "--state-dir", str(tmp_path), "add", "studio", "--tier", "pro", "--scope", "admin"]) == 0
    key = capsys.readouterr().out.strip()
    s = Store(str(tmp_path))
    try:
        assert s.check_key(key)["scope"] == "admin"
    finally:
        s.close()
    assert main(["keys", "--state-dir", str(tmp_path), "list"]) == 0
    assert "admin" in capsys.readouterr().out
    out = parse({"http": {"allowed_origins": ["http://localhost:5173"], "allowed_hosts": ["studio.example"]}})
    assert out["allowed_origins"] == ["http://localhost:5173"] and out["allowed_hosts"] == ["studio.example"]
    for bad in ({"allowed_origins": ["null"]}, {"allowed_origins": ["localhost:5173"]},
                {"allowed_hosts": ["a b"]}):
        with pytest.raises(ConfigError):
            parse({"http": bad})


def test_allow_origin_and_allow_host_flags_reach_the_guard(tmp_path):
    from bridge.ops.cli import build_parser
    from bridge.ops.config import resolve
    from bridge.ops.serve import cli_values
    from bridge.web.app import serve

    args = build_parser().parse_args(["serve", "--http", "127.0.0.1:0",
                                      "--state-dir", str(tmp_path / "served"), "--allow-origin",
                                      "http://app.example:3000", "--allow-host", "studio.example"])
    settings = resolve({k: v for k, v in cli_values(args).items() if k != "config"}, environ={"HOME": str(tmp_path)})
    assert settings.allowed_origins == ["http://app.example:3000"] and settings.allowed_hosts == ["studio.example"]
    srv = InProcessServer(tmp_path / "state")
    svc = None
    try:
        svc = srv.call(serve(srv.daemon, settings))
        url = f"http://127.0.0.1:{svc.port}"
        st, h, _ = request("GET", url + "/v1/status", {"Origin": "http://app.example:3000"})
        assert st == 200 and h["Access-Control-Allow-Origin"] == "http://app.example:3000"
        st, _, _ = request("GET", url + "/v1/status", {"Host": "studio.example"})
        assert st == 200
        st, _, _ = request("GET", url + "/v1/status", {"Host": "other.example"})
        assert st == 421
    finally:
        if svc is not None:
            srv.call(svc.close())
        srv.close()
