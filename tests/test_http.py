"""The HTTP/WebSocket API against a real server on loopback: real clients (aiohttp, curl), the
audio decoded with PyAV and held against what the engine makes."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import subprocess

import numpy as np
import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("av")

import aiohttp  # noqa: E402

from tests.httpserver import InProcessServer, decode, parse_sse, rms_db, sse_audio  # noqa: E402
from plugin_stub.protocol import shm_dir  # noqa: E402

PROMPT = "deep house in A minor with piano, warm bass and drums, 122 bpm"
PROMPT2 = "dreamy ambient pads and a slow bell melody in D major"
RATE = 48000


@pytest.fixture
def server(tmp_path):
    s = InProcessServer(tmp_path / "state")
    yield s
    s.close()


def reference(prompt: str, seed: int, seconds: float) -> np.ndarray:
    """What the engine makes for (prompt, seed): the backend one-shot with the daemon's 10 ms
    fade-in of a stream that starts from silence, through the daemon's limiter."""
    from dsp import fade, soft_limit
    from engine import get_backend

    b = get_backend("synth")
    b.warmup()
    st = b.start(1, prompt, seed)
    a = np.array(b.generate([st], int(round(seconds * RATE)))[0], dtype=np.float32)
    b.end(st)
    n = min(a.shape[0], int(RATE * 0.010))      # Config.end_fade_ms
    a[:n] = fade(a[:n], "in")
    return soft_limit(np.ascontiguousarray(a, dtype=np.float32))


async def _post(url, body, headers=None, raw=False):
    async with aiohttp.ClientSession() as s:
        async with s.post(url, data=body if raw else json.dumps(body),
                          headers={"Content-Type": "application/json", **(headers or {})}) as r:
            return r.status, dict(r.headers), await r.read()


def post(url, body, headers=None, raw=False):
    return asyncio.run(_post(url, body, headers, raw))


def get(url, headers=None):
    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.get(url, headers=headers or {}) as r:
                return r.status, dict(r.headers), await r.read()
    return asyncio.run(go())


# ---------------------------------------------------------------------------------------- generate
@pytest.mark.parametrize("fmt", ["pcm_s16le", "wav", "opus", "mp3"])
def test_sse_generate_is_the_engines_music_in_every_format(server, fmt):
    status, headers, raw = post(server.url + "/v1/audio/generate",
                                {"prompt": PROMPT, "duration_seconds": 2.0, "seed": 7, "format": fmt})
    assert status == 200, raw[:300]
    assert headers["Content-Type"].startswith("text/event-stream")
    assert headers.get("X-Accel-Buffering") == "no"
    events = parse_sse(raw)
    chunks = [e for e in events if e["event"] == "audio_chunk"]
    assert len(chunks) >= 2 and [c["chunk_index"] for c in chunks] == list(range(len(chunks)))
    assert all(c["format"] == fmt for c in chunks)
    buffered = [c["duration_buffered"] for c in chunks]
    assert buffered == sorted(buffered) and buffered[-1] == pytest.approx(2.0, abs=1e-3)
    assert events[-1]["event"] == "completed", events[-1]
    done = events[-1]
    assert done["total_duration"] == pytest.approx(2.0, abs=1e-3)
    assert done["compute_seconds"] > 0 and done["cost_usd"] > 0 and done["total_elapsed_seconds"] > 0
    audio, rate, ch = decode(sse_audio(events), fmt)
    assert (rate, ch) == (RATE, 2)
    ref = reference(PROMPT, 7, 2.0)
    if fmt == "mp3":                       # the MP3 decoder adds its delay; length ≥ and near
        assert 2 * RATE <= audio.shape[0] <= 2 * RATE + 4096
    else:
        assert audio.shape[0] == 2 * RATE
    assert rms_db(audio) > -35.0
    body = slice(0, 2 * RATE - 960)        # the job's 10 ms end fade lies beyond
    if fmt in ("pcm_s16le", "wav"):
        assert np.max(np.abs(audio[body] - ref[body])) < 2e-4
    else:                                  # lossy: the same music, not the same samples
        if fmt == "mp3":
            lag = int(np.argmax(np.correlate(audio[:8192, 0], ref[:4096, 0], "valid")))
            audio = audio[lag:lag + 2 * RATE]
        a, r = audio[body].ravel(), ref[body].ravel()
        corr = float(np.dot(a, r) / np.sqrt(np.dot(a, a) * np.dot(r, r)))
        assert corr > 0.9, corr


def test_curl_raw_ogg_opus_stream_plays_as_a_file(server, tmp_path):
    if not shutil.which("curl"):
        pytest.skip("curl is not installed")
    out = tmp_path / "x.ogg"
    r = subprocess.run(["curl", "-sS", "-N", "-X", "POST", server.url + "/v1/audio/generate", "-H",
                        "Accept: audio/ogg", "-H", "Content-Type: application/json", "-d",
                        json.dumps({"prompt": PROMPT2, "duration_seconds": 1.5, "seed": 3}), "-o", str(out),
                        "-w", "%{http_code} %{content_type}"], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["200", "audio/ogg"], r.stdout + r.stderr
    data = out.read_bytes()
    assert data[:4] == b"OggS" and b"OpusHead" in data[:100]
    audio, rate, ch = decode(data, "opus")
    assert (rate, ch) == (RATE, 2) and audio.shape[0] == int(1.5 * RATE)
    assert rms_db(audio) > -35.0


def test_curl_sse_and_mpeg(server, tmp_path):
    if not shutil.which("curl"):
        pytest.skip("curl is not installed")
    r = subprocess.run(["curl", "-sS", "-N", "-X", "POST", server.url + "/v1/audio/generate", "-H",
                        "Content-Type: application/json", "-d",
                        json.dumps({"prompt": PROMPT, "duration_seconds": 1.0, "format": "mp3"})],
                       capture_output=True, timeout=60)
    events = parse_sse(r.stdout)
    assert events[-1]["event"] == "completed"
    audio, rate, _ = decode(sse_audio(events), "mp3")
    assert rate == RATE and audio.shape[0] >= RATE and rms_db(audio) > -35.0
    out = tmp_path / "x.mp3"
    r = subprocess.run(["curl", "-sS", "-N", "-X", "POST", server.url + "/v1/audio/generate", "-H",
                        "Accept: audio/mpeg", "-H", "Content-Type: application/json",
                        "-d", json.dumps({"prompt": PROMPT, "duration_seconds": 1.0}),
                        "-o", str(out), "-w", "%{content_type}"], capture_output=True, text=True, timeout=60)
    assert r.stdout == "audio/mpeg"
    audio, rate, _ = decode(out.read_bytes(), "mp3")
    assert rate == RATE and audio.shape[0] >= RATE


def test_raw_stream_arrives_in_pieces_before_the_end(server):
    """Chunked: the first Ogg pages come while the rest is still being generated."""
    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.post(server.url + "/v1/audio/generate", headers={"Accept": "audio/ogg"},
                              json={"prompt": PROMPT, "duration_seconds": 20.0}) as r:
                assert r.status == 200
                assert r.headers.get("Transfer-Encoding") == "chunked"
                first = await r.content.readany()
                return first, r
    first, _ = asyncio.run(go())
    assert first.startswith(b"OggS") and b"OpusHead" in first


# ---------------------------------------------------------------------------------------- bad input
def test_bad_and_hostile_requests_get_clear_4xx_and_the_server_keeps_serving(server):
    u = server.url + "/v1/audio/generate"
    cases = [
        (b"{not json", 400), (b"[1,2]", 400), (json.dumps({"duration_seconds": 1}).encode(), 400),
        (json.dumps({"prompt": "x", "duration_seconds": -1}).encode(), 400),
        (json.dumps({"prompt": "x", "duration_seconds": "long"}).encode(), 400),
        (json.dumps({"prompt": "x", "duration_seconds": 1e9}).encode(), 400),
        (json.dumps({"prompt": "x", "duration_seconds": 1, "format": "flac"}).encode(), 400),
        (json.dumps({"prompt": "x", "duration_seconds": 1, "seed": "abc"}).encode(), 400),
        (json.dumps({"prompt": "\x00\x01", "duration_seconds": 1}).encode(), 400),
        (json.dumps({"prompt": "x" * 5000, "duration_seconds": 1}).encode(), 400),
        (b"[" * 30000 + b"]" * 30000, 400), (b'{"prompt": "x", "duration_seconds": NaN}', 400),
        (json.dumps({"prompt": 5, "duration_seconds": 1}).encode(), 400),
        (b"x" * (200 * 1024), 413),
    ]
    for body, want in cases:
        st, _, raw = post(u, body, raw=True)
        assert st == want, (body[:60], st, raw[:200])
        e = json.loads(raw)
        assert e["event"] == "error" and e["reason"] == "bad_request" and e["message"]
    st, _, raw = post(u, {"prompt": "x", "duration_seconds": 1}, headers={"Accept": "image/png"})
    assert st == 406
    st, _, raw = post(u, {"prompt": "x", "duration_seconds": 1, "format": "mp3"}, headers={"Accept": "audio/ogg"})
    assert st == 400
    for path in ("/v1/tracks/..%2F..%2Fetc%2Fpasswd", "/v1/tracks/" + "a" * 32, "/v1/tracks/../../etc/passwd",
                 "/web/..%2Fhttp.py", "/web/%2Fetc%2Fpasswd", "/v1/tracks/%00/audio", "/nope"):
        st, _, raw = get(server.url + path)
        assert st == 404, (path, st)
    st, _, _ = get(u)
    assert st == 405
    st, _, raw = post(u, {"prompt": PROMPT, "duration_seconds": 0.5, "format": "wav"})
    assert st == 200 and parse_sse(raw)[-1]["event"] == "completed"


def test_a_client_that_goes_away_frees_its_slot(server):
    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.post(server.url + "/v1/audio/generate", headers={"Accept": "audio/ogg"},
                              json={"prompt": PROMPT, "duration_seconds": 60.0}) as r:
                await r.content.readany()
        for _ in range(100):
            await asyncio.sleep(0.05)
            if not server.http.streams and not any(s.private for s in server.daemon.slots.values()):
                return True
        return False
    assert asyncio.run(go())
    assert not [n for n in os.listdir(shm_dir()) if n.startswith(f"wavebridge.web{os.getpid()}-")]


# ---------------------------------------------------------------------------------------- WebSocket
async def _ws_session(url, prompts, seconds_each=0.8, fmt="pcm_s16le", messages=False):
    got = bytearray()
    msgs = []
    events = []
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url + f"/v1/stream?format={fmt}") as ws:
            msg = await ws.receive_json()
            assert msg["type"] == "ready" and msg["sample_rate"] == RATE and msg["channels"] == 2
            change_at = []
            for i, p in enumerate(prompts):
                change_at.append(len(got) // 4)
                await ws.send_json({"type": "play", "prompt": p, "seed": 5})
                end = asyncio.get_running_loop().time() + seconds_each
                while asyncio.get_running_loop().time() < end:
                    try:
                        m = await ws.receive(timeout=0.2)
                    except asyncio.TimeoutError:
                        continue
                    if m.type == aiohttp.WSMsgType.BINARY:
                        got += m.data
                        msgs.append(m.data)
                    elif m.type == aiohttp.WSMsgType.TEXT:
                        events.append(json.loads(m.data))
            await ws.send_json({"type": "param", "name": "gain", "value": 0.5})
            await ws.send_json({"type": "bogus"})
            await ws.send_str("{nope")
            await ws.send_json({"type": "stop", "fade_s": 0.05})
            end = asyncio.get_running_loop().time() + 1.0
            while asyncio.get_running_loop().time() < end:
                try:
                    m = await ws.receive(timeout=0.2)
                except asyncio.TimeoutError:
                    continue
                if m.type == aiohttp.WSMsgType.BINARY:
                    got += m.data
                    msgs.append(m.data)
                elif m.type == aiohttp.WSMsgType.TEXT:
                    events.append(json.loads(m.data))
                    if events[-1]["type"] == "done" and events[-1]["reason"] == "stopped":
                        break
    return (msgs if messages else bytes(got)), events, change_at


def test_websocket_session_plays_and_splices_a_prompt_change(server):
    data, events, change_at = asyncio.run(_ws_session(server.url, [PROMPT, PROMPT2]))
    kinds = [e["type"] for e in events]
    assert kinds.count("started") == 2 and kinds.count("first_audio") == 2, kinds
    assert sum(1 for e in events if e["type"] == "error" and e["reason"] == "bad_request") == 2
    done = [e for e in events if e["type"] == "done"]
    assert [d["reason"] for d in done] == ["replaced", "stopped"], done
    audio, _, _ = decode(data, "pcm_s16le")
    assert audio.shape[0] > RATE                      # ~1.6 s of real time streamed
    starts = [e for e in events if e["type"] == "first_audio"]
    j1, j2 = starts[0]["job"], starts[1]["job"]
    assert j2 != j1
    s = starts[1]["frame"]                            # where the new prompt was spliced in the stream
    assert s is not None and change_at[1] <= s < audio.shape[0]
    # the old prompt up to the splice, then the new prompt's own audio (past the 50 ms crossfade)
    xf = int(0.05 * RATE)
    n = min(RATE // 4, audio.shape[0] - s - xf)
    assert n > RATE // 10
    new_ref = reference(PROMPT2, 5, (xf + n) / RATE)
    assert np.max(np.abs(audio[s + xf:s + xf + n] - new_ref[xf:xf + n])) < 2e-4
    old_ref = reference(PROMPT, 5, s / RATE)
    k = min(s, RATE // 2)
    assert np.max(np.abs(audio[:k] - old_ref[:k])) < 2e-4
    assert rms_db(audio[:s]) > -35 and rms_db(audio[s + xf:s + xf + n]) > -35


def test_websocket_opus_frames_form_one_ogg_stream(server):
    data, events, _ = asyncio.run(_ws_session(server.url, [PROMPT], seconds_each=0.8, fmt="opus", messages=True))
    assert data and all(m[:4] == b"OggS" for m in data)      # every binary message is whole Ogg pages
    data = b"".join(data)
    audio, rate, ch = decode(data, "opus")
    assert (rate, ch) == (RATE, 2) and audio.shape[0] > RATE // 2 and rms_db(audio) > -35


def test_cors_preflight_and_headers(server):
    """No wildcard CORS: a foreign origin's preflight is refused (tests/test_web_origin.py has the rest)."""
    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.options(server.url + "/v1/audio/generate", headers={
                    "Origin": "http://example.test", "Access-Control-Request-Method": "POST"}) as r:
                return r.status, dict(r.headers)
    st, h = asyncio.run(go())
    assert st == 403 and "Access-Control-Allow-Origin" not in h
    st, h, _ = get(server.url + "/v1/status")
    assert st == 200 and "Access-Control-Allow-Origin" not in h


def test_websocket_rejects_unknown_format_before_upgrading(server):
    st, _, raw = get(server.url + "/v1/stream?format=flac")
    assert st == 400 and json.loads(raw)["reason"] == "bad_request"


# ---------------------------------------------------------------------------------------- keys, quotas
def test_keys_quota_429_and_revocation(tmp_path):
    tiers = {"tiny": {"audio_s_per_day": 2.0, "concurrent": 1, "max_request_s": 1.5}}
    s = InProcessServer(tmp_path / "state", tiers=tiers)
    try:
        u = s.url + "/v1/audio/generate"
        body = {"prompt": PROMPT, "duration_seconds": 1.0, "format": "pcm_s16le"}
        st, _, _ = post(u, body)
        assert st == 200                                   # no keys yet, loopback: open
        key = s.on_loop(s.http.store.add_key, "alice", "tiny")
        other = s.on_loop(s.http.store.add_key, "bob", "pro")
        st, h, raw = post(u, body)
        assert st == 401 and "WWW-Authenticate" in h       # keys exist now
        st, _, _ = post(u, body, headers={"Authorization": "Bearer wb_000000000000_" + "x" * 43})
        assert st == 401
        auth = {"Authorization": f"Bearer {key}"}
        st, _, raw = post(u, {**body, "duration_seconds": 1.6}, headers=auth)
        assert st == 400 and "1.5" in json.loads(raw)["message"]     # longest request of the tier
        st, _, raw = post(u, body, headers=auth)
        assert st == 200 and parse_sse(raw)[-1]["event"] == "completed"
        st, _, raw = post(u, body, headers={"X-API-Key": key})
        assert st == 200
        st, h, raw = post(u, body, headers=auth)                     # 2 s used of 2
        assert st == 429 and int(h["Retry-After"]) > 0 and json.loads(raw)["reason"] == "quota"
        st, _, raw = post(u, body, headers={"Authorization": f"Bearer {other}"})
        assert st == 200                                             # another key, its own allowance
        st, _, raw = get(s.url + "/v1/usage", headers=auth)
        u_ = json.loads(raw)
        assert u_["tier"] == "tiny" and u_["today"]["audio_s"] == pytest.approx(2.0, abs=0.01)
        assert u_["today"]["requests"] == 2 and u_["today"]["compute_s"] > 0 and u_["today"]["cost_usd"] > 0
        assert s.on_loop(s.http.store.revoke, "bob")
        st, _, _ = post(u, body, headers={"Authorization": f"Bearer {other}"})
        assert st == 401
        text = _metrics_text(s.http)
        assert 'wavebridge_http_audio_seconds_total{tier="tiny"} 2.0' in text
        assert 'wavebridge_http_quota_rejections_total{limit="daily",tier="tiny"} 1.0' in text
    finally:
        s.close()


def _metrics_text(svc) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    from bridge.web.app import HttpCollector

    r = CollectorRegistry()
    r.register(HttpCollector(svc))
    return generate_latest(r).decode()


def test_concurrent_stream_limit(tmp_path):
    tiers = {"one": {"audio_s_per_day": 1000.0, "concurrent": 1, "max_request_s": 60.0}}
    s = InProcessServer(tmp_path / "state", tiers=tiers)
    try:
        key = s.on_loop(s.http.store.add_key, "carol", "one")
        auth = {"Authorization": f"Bearer {key}"}

        async def go():
            async with aiohttp.ClientSession(headers=auth) as c:
                async with c.ws_connect(s.url + "/v1/stream?format=pcm_s16le") as ws:
                    assert (await ws.receive_json())["type"] == "ready"
                    async with c.post(s.url + "/v1/audio/generate",
                                      json={"prompt": PROMPT, "duration_seconds": 1}) as r:
                        return r.status, r.headers.get("Retry-After")
        st, ra = asyncio.run(go())
        assert st == 429 and ra == "1"
        async def ws_key():
            async with aiohttp.ClientSession() as c:
                async with c.ws_connect(s.url + f"/v1/stream?format=pcm_s16le&key={key}") as ws:
                    return (await ws.receive_json())["type"]
        assert asyncio.run(ws_key()) == "ready"
    finally:
        s.close()


def test_a_server_bound_beyond_loopback_needs_a_key(tmp_path):
    s = InProcessServer(tmp_path / "state", host="0.0.0.0")
    try:
        url = f"http://127.0.0.1:{s.port}"
        st, _, _ = post(url + "/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5})
        assert st == 401
        st, _, _ = get(url + "/v1/status")
        assert st == 401
        st, _, _ = get(url + "/")                 # the page itself loads; it asks for a key
        assert st == 200
    finally:
        s.close()


def test_keys_cli_add_list_revoke(tmp_path):
    import sys

    def cli(*a):
        return subprocess.run([sys.executable, "-m", "bridge", "keys", "--state-dir", str(tmp_path), *a],
                              capture_output=True, text=True, timeout=60)
    r = cli("add", "dave", "--tier", "pro")
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()
    assert key.startswith("wb_")
    assert cli("add", "dave").returncode == 1                      # names are unique
    assert cli("add", "eve", "--tier", "platinum").returncode == 2
    r = cli("list")
    assert "dave" in r.stdout and "pro" in r.stdout and "active" in r.stdout and key not in r.stdout
    raw = open(tmp_path / "wavebridge.db", "rb").read()
    assert key.split("_", 2)[2].encode() not in raw                # stored hashed
    assert cli("revoke", "dave").returncode == 0
    assert "revoked" in cli("list").stdout
    from bridge.web.store import Store

    st = Store(str(tmp_path))
    try:
        assert st.check_key(key) is None and st.has_keys()
    finally:
        st.close()


# ---------------------------------------------------------------------------------------- status
def test_status_lists_slots_and_status_ws_streams_levels(server):
    st, _, raw = get(server.url + "/v1/status")
    rows = json.loads(raw)["slots"]
    assert [r["slot"] for r in rows] == server.names and rows[0]["state"] == "idle"
    st, _, raw = post(server.url + f"/v1/slots/{server.names[0]}/play", {"prompt": PROMPT})
    assert st == 200 and json.loads(raw)["job"] > 0
    st, _, _ = post(server.url + "/v1/slots/nope/play", {"prompt": PROMPT})
    assert st == 404

    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(server.url + "/v1/status/ws") as ws:
                for _ in range(30):
                    m = await ws.receive_json(timeout=2)
                    row = m["slots"][0]
                    if row["state"] == "playing" and row["level_db"] > -40 and row["buffered_s"] > 0:
                        return row
        return None
    row = asyncio.run(go())
    assert row is not None and row["prompt"] == PROMPT
    st, _, _ = post(server.url + f"/v1/slots/{server.names[0]}/stop", {})
    assert st == 200


def test_raw_pcm_and_wav_streams(server):
    for accept, fmt, ctype in (("audio/L16", "pcm_s16le", "audio/L16"), ("audio/wav", "wav", "audio/wav")):
        st, h, data = post(server.url + "/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5, "seed": 4},
                           headers={"Accept": accept})
        assert st == 200 and h["Content-Type"].startswith(ctype), h
        audio, rate, ch = decode(data, fmt)
        assert (rate, ch) == (RATE, 2) and audio.shape[0] == RATE // 2
        ref = reference(PROMPT, 4, 0.5)
        assert np.max(np.abs(audio[:-960] - ref[:RATE // 2 - 960])) < 2e-4


def test_bench_http_quick_reports_every_figure(capsys):
    import argparse

    from bridge.ops.bench.web import run_http_bench

    rc = run_http_bench(argparse.Namespace(quick=True, json=True, price_per_hour=2.0, backend="synth"))
    assert rc == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for k in ("sse_first_audio_ms", "raw_opus_first_audio_ms", "ws_first_audio_ms", "ws_prompt_change_ms"):
        assert res[k]["n"] > 0 and res[k]["p50"] > 0, k
    assert res["opus_encode_cpu_per_stream_s"] > 0 and res["concurrent_runs"]
    assert res["track_30s"]["state"] == "done" and res["track_30s"]["cost_usd"] > 0


def test_a_live_session_is_stopped_when_the_daily_allowance_runs_out(tmp_path):
    tiers = {"mini": {"audio_s_per_day": 1.0, "concurrent": 2, "max_request_s": 60.0}}
    s = InProcessServer(tmp_path / "state", tiers=tiers)
    try:
        key = s.on_loop(s.http.store.add_key, "frank", "mini")

        async def go():
            events, frames = [], 0
            async with aiohttp.ClientSession() as c:
                async with c.ws_connect(s.url + f"/v1/stream?format=pcm_s16le&key={key}") as ws:
                    await ws.receive_json()
                    await ws.send_json({"type": "play", "prompt": PROMPT})
                    end = asyncio.get_running_loop().time() + 6
                    while asyncio.get_running_loop().time() < end:
                        try:
                            m = await ws.receive(timeout=0.5)
                        except asyncio.TimeoutError:
                            continue
                        if m.type == aiohttp.WSMsgType.BINARY:
                            frames += len(m.data) // 4
                        elif m.type == aiohttp.WSMsgType.TEXT:
                            events.append(json.loads(m.data))
                            if events[-1]["type"] == "done":
                                break
                    await ws.send_json({"type": "play", "prompt": PROMPT2})     # refused now
                    m = await ws.receive_json(timeout=5)
                    while m["type"] != "error":
                        m = await ws.receive_json(timeout=5)
                    events.append(m)
            return events, frames
        events, frames = asyncio.run(go())
        errs = [e for e in events if e["type"] == "error"]
        assert errs and all(e["reason"] == "quota" for e in errs) and errs[0]["retry_after"] > 0, events
        assert [e["reason"] for e in events if e["type"] == "done"] == ["stopped"]
        assert RATE <= frames < 4 * RATE                    # stopped soon after the 1 s allowance
        st, h, _ = post(s.url + "/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5},
                        headers={"Authorization": f"Bearer {key}"})
        assert st == 429 and int(h["Retry-After"]) > 0
    finally:
        s.close()


def test_a_websocket_flood_is_rate_limited_and_the_session_survives(server):
    async def go():
        async with aiohttp.ClientSession() as c:
            async with c.ws_connect(server.url + "/v1/stream?format=pcm_s16le") as ws:
                await ws.receive_json()
                for _ in range(100):
                    await ws.send_json({"type": "param", "name": "gain", "value": 0.9})
                errs = []
                end = asyncio.get_running_loop().time() + 3
                while asyncio.get_running_loop().time() < end and len(errs) < 50:
                    try:
                        m = await ws.receive_json(timeout=0.5)
                    except asyncio.TimeoutError:
                        break
                    errs.append(m)
                await asyncio.sleep(0.5)
                await ws.send_json({"type": "play", "prompt": PROMPT})
                while True:
                    m = await ws.receive(timeout=5)
                    if m.type == aiohttp.WSMsgType.BINARY:
                        return errs, True
    errs, audio = asyncio.run(go())
    # 60 of the 100 are refused, and answered once (one notice a second, #20), not 60 times
    assert len(errs) == 1 and errs[0].get("code") == "rate_limited", errs
    assert audio


def test_an_engine_oom_ends_that_request_with_an_error_event_and_nothing_else(tmp_path):
    from engine.backend import OutOfMemory
    from engine.synth.backend import SynthBackend

    class OomOnCue(SynthBackend):
        def generate(self, streams, frames):
            if any("oom" in st.prompt for st in streams):
                raise OutOfMemory("CUDA out of memory (test)")
            return super().generate(streams, frames)

    s = InProcessServer(tmp_path / "state", backend=OomOnCue())
    try:
        st, _, raw = post(s.url + "/v1/audio/generate", {"prompt": "oom please", "duration_seconds": 1.0})
        assert st == 200
        ev = parse_sse(raw)
        assert ev[-1]["event"] == "error" and ev[-1]["reason"] == "gpu_oom" and "memory" in ev[-1]["message"]
        st, _, raw = post(s.url + "/v1/tracks", {"prompt": "oom track", "seconds": 1.0})
        tid = json.loads(raw)["id"]
        for _ in range(100):
            row = json.loads(get(f"{s.url}/v1/tracks/{tid}")[2])
            if row["state"] in ("done", "error"):
                break
            time.sleep(0.05)
        assert row["state"] == "error" and row["error"].startswith("gpu_oom")
        st, _, raw = post(s.url + "/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5})
        assert st == 200 and parse_sse(raw)[-1]["event"] == "completed"          # still serving
    finally:
        s.close()


def test_a_client_that_stops_reading_is_cut_off_and_its_slot_freed(tmp_path):
    import socket as _socket

    s = InProcessServer(tmp_path / "state", send_timeout_s=1.0)
    try:
        c = _socket.create_connection((s.host, s.port))
        c.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVBUF, 4096)
        body = json.dumps({"prompt": PROMPT, "duration_seconds": 600, "format": "wav"}).encode()
        c.sendall(b"POST /v1/audio/generate HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: audio/wav\r\nContent-Type: "
                  b"application/json\r\nContent-Length: %d\r\n\r\n%s" % (s.port, len(body), body))
        seen = False
        for _ in range(200):                      # the stream opens, then the server gives up on us
            time.sleep(0.1)
            n = len(s.http.streams)
            seen = seen or n == 1
            if seen and n == 0:
                break
        assert seen and not s.http.streams
        c.close()
        st, _, raw = post(s.url + "/v1/audio/generate", {"prompt": PROMPT, "duration_seconds": 0.5})
        assert st == 200 and parse_sse(raw)[-1]["event"] == "completed"
    finally:
        s.close()


def test_websocket_opus_packets_for_webcodecs(server):
    import av

    async def go():
        pkts, ready = [], None
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(server.url + "/v1/stream?format=opus_packets") as ws:
                ready = await ws.receive_json()
                await ws.send_json({"type": "play", "prompt": PROMPT})
                end = asyncio.get_running_loop().time() + 1.0
                while asyncio.get_running_loop().time() < end:
                    try:
                        m = await ws.receive(timeout=0.2)
                    except asyncio.TimeoutError:
                        continue
                    if m.type == aiohttp.WSMsgType.BINARY:
                        pkts.append(m.data)
        return ready, pkts
    ready, pkts = asyncio.run(go())
    assert ready["container"] == "none" and ready["codec"] == "opus" and ready["frame_ms"] == 20
    assert len(pkts) > 25 and not any(p.startswith(b"OggS") for p in pkts)
    dec = av.CodecContext.create("libopus", "r")
    dec.sample_rate, dec.layout = RATE, "stereo"
    out = []
    for p in pkts:
        for fr in dec.decode(av.Packet(p)):
            assert fr.samples == 960                   # one 20 ms frame per message
            a = fr.to_ndarray()
            out.append(a.T if fr.format.is_planar else a.reshape(-1, 2))
    audio = np.concatenate(out).astype(np.float32)
    if audio.dtype != np.float32 or np.abs(audio).max() > 2:
        audio = audio / 32768.0
    assert rms_db(audio) > -35


def test_http_and_osc_accept_the_same_seeds():
    """One seed range for every surface: each boundary is accepted or refused by both alike."""
    from bridge.core.commands import SEED_MAX, SEED_MIN, parse_osc
    from bridge.web.api import ApiError, seed_of
    from plugin_stub.protocol import WavebridgeError

    def osc_ok(v):
        try:
            return parse_osc("/wb/play", [1, "jazz", 0.0, v], 4).seed == v
        except WavebridgeError:
            return False

    def http_ok(v):
        try:
            return seed_of({"seed": v}) == v
        except ApiError:
            return False

    cases = [SEED_MIN - 1, SEED_MIN, -1, 0, 64, SEED_MAX - 1, SEED_MAX]
    assert [osc_ok(v) for v in cases] == [http_ok(v) for v in cases] == [False, True, True, True, True, True, False]
