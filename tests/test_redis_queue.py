"""The track queue shared by several gateways (``--queue redis://…``): a Redis stream with a consumer
group, its rows in Redis, jobs of a dead gateway taken over, every track stored exactly once.

Each test starts its own ``redis-server`` on a free loopback port in a temp dir (no persistence);
skipped only where ``redis-server`` is not installed (``make setup`` installs it).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

redis = pytest.importorskip("redis")
pytest.importorskip("aiohttp")
pytest.importorskip("av")

from bridge.web.redisqueue import GROUP, ROW, STREAM, QueueError, RedisQueue, parse_queue_url, redact  # noqa: E402
from tests.httpserver import decode  # noqa: E402
from tests.test_http import PROMPT, PROMPT2, RATE, reference  # noqa: E402

REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server")
                                                else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path):
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (make setup installs it)")
    port = _free_port()
    d = tmp_path / "redis"
    d.mkdir()
    proc = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(d)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    r = redis.Redis(host="127.0.0.1", port=port)
    end = time.monotonic() + 10
    while True:
        try:
            r.ping()
            break
        except redis.exceptions.ConnectionError:
            if time.monotonic() > end or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    r.close()
    proc.kill()
    proc.wait(10)


def _sync(url: str) -> redis.Redis:
    return redis.Redis.from_url(url.split("?")[0], decode_responses=True)


# ---------------------------------------------------------------------- the queue itself
def test_urls_are_checked_and_a_password_is_never_shown():
    assert parse_queue_url("redis://h:6379/2") == ("redis://h:6379/2", 30.0)
    assert parse_queue_url("redis://h:6379/0?reclaim_s=2") == ("redis://h:6379/0", 2.0)
    for bad in ("http://h:6379/0", "redis://:6379/0", "redis://h:99999/0", "redis://h:6379/x",
                "redis://h/0?reclaim_s=0", "redis://h/0?reclaim_s=abc"):
        with pytest.raises(ValueError):
            parse_queue_url(bad)
    assert redact("redis://u:secret@h:1/0") == "redis://u:***@h:1/0"
    with pytest.raises(ValueError) as e:
        parse_queue_url("redis://u:secret@h:1/x")
    assert "secret" not in str(e.value)


def test_an_unreachable_redis_is_one_clear_error():
    q = RedisQueue(f"redis://127.0.0.1:{_free_port()}/0")
    with pytest.raises(QueueError) as e:
        asyncio.run(q.open())
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("the track queue redis://127.0.0.1:") and "not reachable" in msg


def test_rows_jobs_acks_and_a_dead_workers_jobs_taken_over(redis_url):
    url = redis_url + "?reclaim_s=0.5"

    async def go():
        a, b = RedisQueue(url, consumer="gw-a"), RedisQueue(url, consumer="gw-b")
        await a.open()
        await b.open()
        await b.open()                                        # the group exists already: fine
        try:
            t = [await a.add_track("k1", PROMPT, 1.5, "wav", 7 + i) for i in range(3)]
            row = await b.track(t[0])                         # every gateway sees every row
            assert row["state"] == "queued" and row["seconds"] == 1.5 and row["seed"] == 7
            assert row["error"] is None and row["attempts"] == 0 and isinstance(row["created"], float)
            assert [r["id"] for r in await b.tracks_of("k1")] == t[::-1]
            assert await b.tracks_of("nobody") == [] and await b.track("../x") is None
            got_a = await a.take(2, block_s=0.1)
            assert [r["id"] for _, r in got_a] == t[:2]
            got_b = await b.take(5, block_s=0.1)
            assert [r["id"] for _, r in got_b] == t[2:]     # a job goes to one consumer only
            assert await b.take(5, block_s=0.1) == []
            # a stores t0 and marks it done, then dies before its ack; t1 dies mid-render
            await a.set_track(t[0], state="done", progress=1.0)
            assert await b.touch([got_b[0][0]]) == set()      # b is alive: its job stays its own
            await asyncio.sleep(0.7)                          # a's jobs go idle past reclaim_s
            await b.touch([got_b[0][0]])
            taken = await b.take(5, block_s=0.1)
            assert [r["id"] for _, r in taken] == [t[1]]      # t0 done already: acked, not rendered again
            assert await a.touch([e for e, _ in got_a]) == {e for e, _ in got_a}   # a lost them both
            for eid, _ in taken + got_b:
                await b.ack(eid)
            r = _sync(redis_url)
            assert r.xlen(STREAM) == 0 and r.xpending(STREAM, GROUP)["pending"] == 0
            r.close()
            assert await b.queue_depth() == {"queued": 0, "running": 0}
        finally:
            await a.close()
            await b.close()

    asyncio.run(go())


def test_a_refused_store_is_rendered_again_and_a_redis_gone_is_503(tmp_path, redis_url):
    from bridge.web.storage import StorageError
    from tests.httpserver import InProcessServer
    from tests.test_http import get, post

    srv = InProcessServer(tmp_path / "state", queue=redis_url + "?reclaim_s=0.5")
    try:
        storage, real, refused = srv.http.storage, srv.http.storage.commit, []

        async def commit_once_refused(tid, fmt, path):
            if not refused:
                refused.append(tid)
                raise StorageError("the test refuses the first store")
            return await real(tid, fmt, path)

        storage.commit = commit_once_refused
        st, _, raw = post(srv.url + "/v1/tracks", {"prompt": PROMPT, "seconds": 1.0, "format": "wav", "seed": 5})
        assert st == 202, raw
        tid = json.loads(raw)["id"]
        end = time.monotonic() + 60
        while time.monotonic() < end:
            row = json.loads(get(f"{srv.url}/v1/tracks/{tid}")[2])
            if row["state"] == "done":
                break
            time.sleep(0.05)
        assert row["state"] == "done" and row["error"] is None and refused == [tid], row
        r = _sync(redis_url)
        assert json.loads(r.hget(ROW + tid, "attempts")) == 2           # rendered again after the refusal
        assert r.xlen(STREAM) == 0
        r.close()
        assert os.listdir(tmp_path / "state" / "tracks") == [f"{tid}.wav"]
        st, _, raw = get(f"{srv.url}/v1/tracks")
        assert st == 200 and [t["id"] for t in json.loads(raw)["tracks"]] == [tid]
        r = _sync(redis_url)
        r.shutdown(nosave=True)                                         # Redis goes away
        st, h, raw = get(f"{srv.url}/v1/tracks/{tid}")
        assert st == 503 and int(h["Retry-After"]) > 0 and json.loads(raw)["reason"] == "busy", raw
        assert "127.0.0.1" not in raw.decode()
    finally:
        srv.close()


# ---------------------------------------------------------------------- two gateways, one killed -9
def _gateway(tmp_path, name, url, storage):
    cfg = tmp_path / f"{name}.toml"
    slots = [f"q{os.getpid()}{name}"]
    cfg.write_text(f"[engine]\nslot_names = {json.dumps(slots)}\n[http]\ntrack_workers = 1\n")
    from bridge.ops.demo import DaemonProcess

    return DaemonProcess("--config", str(cfg), "--metrics-port", "off", "--http", "127.0.0.1:0",
                         "--state-dir", str(tmp_path / f"state-{name}"), "--storage", str(storage),
                         "--queue", url)


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()


@pytest.mark.slow
def test_20_tracks_from_two_gateways_one_killed_mid_render_are_each_stored_once(tmp_path, redis_url):
    url = redis_url + "?reclaim_s=2"
    storage = tmp_path / "tracks"
    r = _sync(redis_url)
    ga = _gateway(tmp_path, "a", url, storage)
    gb = None
    try:
        gb = _gateway(tmp_path, "b", url, storage)
        ua, ub = "http://%s:%d" % ga.http, "http://%s:%d" % gb.http
        want = {}
        for i in range(20):
            body = {"prompt": PROMPT if i % 2 else PROMPT2, "seconds": 1.0 + (i % 3) * 0.5, "format": "wav",
                    "seed": 100 + i}
            tid = _post((ua if i % 2 else ub) + "/v1/tracks", body)["id"]
            want[tid] = body
        # kill a mid-render: it holds a job it has not acked and that track's .part file is being written
        prefix = f"{socket.gethostname()}-{ga.proc.pid}-"
        held, seen = set(), False
        end = time.monotonic() + 60
        while time.monotonic() < end and not seen:
            for c in r.xinfo_consumers(STREAM, GROUP):
                if c["name"].startswith(prefix) and c["pending"] > 0:
                    held = {p["message_id"] for p in r.xpending_range(STREAM, GROUP, "-", "+", 10, c["name"])}
                    ids = [f["id"] for eid, f in r.xrange(STREAM) if eid in held]
                    seen = any(os.path.exists(storage / f"{t}.wav.part") for t in ids)
            if not seen:
                time.sleep(0.005)
        assert seen, "gateway a was never seen mid-render"
        ga.proc.send_signal(signal.SIGKILL)
        ga.proc.wait(10)
        held_tracks = [f["id"] for eid, f in r.xrange(STREAM) if eid in held]
        assert held_tracks                                    # its jobs are still in the stream, not acked
        rows = {}
        end = time.monotonic() + 180
        while time.monotonic() < end:
            rows = {t: json.loads(_get(f"{ub}/v1/tracks/{t}")) for t in want}      # a's tracks too, from b
            if all(v["state"] in ("done", "error") for v in rows.values()):
                break
            time.sleep(0.2)
        assert [t for t, v in rows.items() if v["state"] != "done"] == [], rows
        # each stored exactly once: one file per track, named by its id, nothing left over
        assert sorted(os.listdir(storage)) == sorted(f"{t}.wav" for t in want)
        for t in held_tracks:                                 # the killed gateway's jobs: rendered again by b
            assert json.loads(r.hget(ROW + t, "worker")).startswith(f"{socket.gethostname()}-{gb.proc.pid}-")
            assert json.loads(r.hget(ROW + t, "attempts")) >= 1
        for t, body in want.items():                          # and each is its own audio
            audio, rate, ch = decode(_get(f"{ub}/v1/tracks/{t}/audio"), "wav")
            n = int(round(body["seconds"] * RATE))
            assert (rate, ch) == (RATE, 2) and audio.shape[0] == n, (t, audio.shape)
            ref = reference(body["prompt"], body["seed"], body["seconds"])
            assert np.max(np.abs(audio[:-960] - ref[:n - 960])) < 2e-4, t
        assert r.xlen(STREAM) == 0 and r.xpending(STREAM, GROUP)["pending"] == 0   # every job acked
    finally:
        ga.kill()
        if gb is not None:
            rc, _ = gb.terminate()
            assert rc == 0
        r.close()


@pytest.mark.slow
def test_serve_with_an_unreachable_queue_says_so_in_one_line_and_exits_2(tmp_path):
    port = _free_port()
    p = subprocess.run([sys.executable, "-m", "bridge.ops.cli", "serve", "--osc-port", "0", "--metrics-port", "off",
                        "--http", "127.0.0.1:0", "--state-dir", str(tmp_path / "state"),
                        "--queue", f"redis://127.0.0.1:{port}/0"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("wavebridge:")]
    assert len(lines) == 1 and f"the track queue redis://127.0.0.1:{port}/0 is not reachable" in lines[0], p.stderr
    p = subprocess.run([sys.executable, "-m", "bridge.ops.cli", "serve", "--osc-port", "0", "--metrics-port", "off",
                        "--http", "127.0.0.1:0", "--state-dir", str(tmp_path / "state"),
                        "--queue", "redis://127.0.0.1:6379/nope"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "the database is a number" in p.stderr, (p.stdout, p.stderr)
