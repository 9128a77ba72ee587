"""Track storage and the daemon's files: a hung or failing S3 never touches encoding or live streams,
a missing object is 410, storage down is 503, usage is billed before the database closes, and
every file the daemon writes is 0600 in a 0700 directory it owns."""
from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
import time

import pytest

pytest.importorskip("aiohttp")

import aiohttp  # noqa: E402

from tests.httpserver import InProcessServer, parse_sse  # noqa: E402
from tests.test_http import PROMPT, RATE, get, post  # noqa: E402

JSON = {"Content-Type": "application/json"}


def _wait_track(url, tid, states=("done", "error"), timeout=60.0):
    end = time.monotonic() + timeout
    row = None
    while time.monotonic() < end:
        st, _, raw = get(f"{url}/v1/tracks/{tid}")
        row = json.loads(raw)
        if row["state"] in states:
            return row
        time.sleep(0.1)
    raise AssertionError(f"track {tid} did not reach {states}: {row}")


def _queue(url, seconds=1.0, fmt="wav"):
    st, _, raw = post(url + "/v1/tracks", {"prompt": PROMPT, "seconds": seconds, "format": fmt, "seed": 3},
                      headers=JSON)
    assert st == 202, raw
    return json.loads(raw)["id"]


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ---------------------------------------------------------------------------------------- metering
def test_open_sessions_are_billed_before_the_database_closes(tmp_path, caplog):
    from bridge.web.store import Store

    srv = InProcessServer(tmp_path / "state")
    received = [0, 0, 0]
    try:
        async def sessions():
            async with aiohttp.ClientSession() as c:
                wss = [await c.ws_connect(srv.url + "/v1/stream?format=pcm_s16le") for _ in received]
                for ws in wss:
                    assert (await ws.receive_json())["type"] == "ready"
                    await ws.send_json({"type": "play", "prompt": PROMPT, "seed": 5})
                flowing = [asyncio.Event() for _ in wss]

                async def drink(i, ws):            # every byte until the server closes the socket
                    async for m in ws:
                        if m.type == aiohttp.WSMsgType.BINARY:
                            received[i] += len(m.data) // 4
                            if received[i] >= RATE:
                                flowing[i].set()
                drinkers = [asyncio.create_task(drink(i, ws)) for i, ws in enumerate(wss)]
                await asyncio.wait_for(asyncio.gather(*(f.wait() for f in flowing)), 30)
                # the service closes with the three sessions streaming
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(srv.http.close(), srv.loop))
                srv.http = None
                await asyncio.wait_for(asyncio.gather(*drinkers), 10)
        with caplog.at_level("WARNING"):
            asyncio.run(sessions())
    finally:
        srv.close()
    assert "closed database" not in caplog.text and "not billed" not in caplog.text, caplog.text
    store = Store(tmp_path / "state")
    try:
        u = store.usage("local")
    finally:
        store.close()
    assert u["requests"] == 3, u
    assert u["audio_s"] >= sum(received) / RATE - 1e-6, (u, received)      # all that was served was billed



# ---------------------------------------------------------------------------------------- local storage
def test_a_deleted_local_track_is_410_and_a_missing_id_404(tmp_path):
    srv = InProcessServer(tmp_path / "state")
    try:
        tid = _queue(srv.url, 0.5, "wav")
        assert _wait_track(srv.url, tid)["state"] == "done"
        os.unlink(tmp_path / "state" / "tracks" / f"{tid}.wav")          # deleted from the directory
        st, _, raw = get(f"{srv.url}/v1/tracks/{tid}/audio")
        body = json.loads(raw)
        assert st == 410 and body["reason"] == "bad_request" and "gone" in body["message"], raw
        st, _, raw = get(f"{srv.url}/v1/tracks/{'0' * 32}/audio")
        assert st == 404, raw
    finally:
        srv.close()


def test_storage_failing_mid_download_cuts_the_body_short_and_the_server_goes_on(tmp_path, caplog):
    from bridge.web.storage import StorageError

    srv = InProcessServer(tmp_path / "state")
    try:
        tid = _queue(srv.url, 2.0, "wav")                   # 384 KB: two reads of 256 KiB
        row = _wait_track(srv.url, tid)
        storage = srv.http.tracks.storage
        real, calls = storage.read, []

        async def failing_read(f, n=256 * 1024):
            calls.append(n)
            if len(calls) > 1:
                raise StorageError("the disk went away")
            return await real(f, n)
        storage.read = failing_read

        async def download():
            async with aiohttp.ClientSession() as c:
                async with c.get(f"{srv.url}/v1/tracks/{tid}/audio") as r:
                    assert r.status == 200 and int(r.headers["Content-Length"]) == row["bytes"]
                    with pytest.raises(aiohttp.ClientPayloadError):
                        await r.read()
        with caplog.at_level("WARNING"):
            asyncio.run(download())
        assert "mid-download" in caplog.text and not [r for r in caplog.records if r.levelname == "ERROR"]
        storage.read = real
        st, _, data = get(f"{srv.url}/v1/tracks/{tid}/audio")
        assert st == 200 and len(data) == row["bytes"]
    finally:
        srv.close()

# ---------------------------------------------------------------------------------------- files
@pytest.fixture
def umask_022():
    old = os.umask(0o022)           # what a login shell gives: files 0644 unless the daemon says otherwise
    yield
    os.umask(old)


def test_every_file_is_0600_in_a_0700_directory(tmp_path, umask_022):
    state = tmp_path / "state"
    srv = InProcessServer(state)
    try:
        tid = _queue(srv.url, 1.0, "wav")
        assert _wait_track(srv.url, tid)["state"] == "done"
        st, _, _ = get(srv.url + "/v1/status")
        assert st == 200
    finally:
        srv.close()
    assert _mode(state) == 0o700 and _mode(state / "tracks") == 0o700
    assert (state / "wavebridge.db").is_file()
    for p in [*state.iterdir(), *(state / "tracks").iterdir()]:
        if p.is_file():
            assert _mode(p) == 0o600, (p, oct(_mode(p)))
    assert [p.name for p in (state / "tracks").iterdir()] == [f"{tid}.wav"]


def test_wal_and_shm_are_private_while_the_daemon_runs(tmp_path, umask_022):
    from bridge.web.store import Store

    s = Store(tmp_path / "state")
    try:
        s.add_key("k", "free")          # a write: SQLite creates the -wal and -shm now
        for side in ("", "-wal", "-shm"):
            assert _mode(s.path + side) == 0o600, side
    finally:
        s.close()


def test_existing_loose_modes_are_tightened(tmp_path, umask_022):
    from bridge.web.store import Store

    state = tmp_path / "state"
    s = Store(state)
    s.add_key("k", "free")
    s.close()
    os.chmod(state, 0o755)
    for side in ("", "-wal", "-shm"):
        if os.path.exists(f"{state}/wavebridge.db{side}"):
            os.chmod(f"{state}/wavebridge.db{side}", 0o644)
    s = Store(state)
    try:
        assert s.check_key("nope") is None and s.has_keys()        # the same database, adopted
        assert _mode(state) == 0o700
        for side in ("", "-wal", "-shm"):
            if os.path.exists(s.path + side):
                assert _mode(s.path + side) == 0o600, side
    finally:
        s.close()


def test_a_symlinked_state_dir_or_db_is_refused(tmp_path):
    from bridge.web.store import Store

    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "state"
    link.symlink_to(real)
    with pytest.raises(PermissionError, match="symlink"):
        Store(link)
    with pytest.raises(PermissionError, match="symlink"):
        InProcessServer(link)
    assert not os.listdir(real)                         # nothing was written through the link
    state = tmp_path / "s2"
    state.mkdir(mode=0o700)
    (state / "wavebridge.db").symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(PermissionError, match="symlink"):
        Store(state)
    assert not (tmp_path / "elsewhere.db").exists()



# ---------------------------------------------------------------------------------------- S3
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HungS3:
    """An S3 endpoint that accepts every connection, reads what it is sent and never answers."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self._t = threading.Thread(target=self._accept, daemon=True)
        self._t.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.settimeout(0.2)
            self.conns.append(c)
            threading.Thread(target=self._swallow, args=(c,), daemon=True).start()

    @staticmethod
    def _swallow(c):
        while True:
            try:
                if not c.recv(65536):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


@pytest.fixture
def aws_env(monkeypatch):
    pytest.importorskip("boto3")
    for k, v in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                 "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    return monkeypatch


async def _generate_and_live(url):
    """A 2 s generate (SSE, to its ``completed``) and a live session's first half second of audio."""
    async with aiohttp.ClientSession() as c:
        async def generate():
            async with c.post(url + "/v1/audio/generate", headers=JSON,
                              json={"prompt": PROMPT, "duration_seconds": 2.0, "format": "pcm_s16le"}) as r:
                assert r.status == 200, await r.text()
                return parse_sse(await r.read())

        async def live():
            async with c.ws_connect(url + "/v1/stream?format=pcm_s16le") as ws:
                assert (await ws.receive_json())["type"] == "ready"
                await ws.send_json({"type": "play", "prompt": PROMPT})
                frames = 0
                while frames < RATE // 2:
                    m = await ws.receive(timeout=5)
                    if m.type == aiohttp.WSMsgType.BINARY:
                        frames += len(m.data) // 4
                return frames
        return await asyncio.wait_for(asyncio.gather(generate(), live()), 15)


def test_a_hung_s3_never_holds_encoding_or_live_streams(tmp_path, aws_env):
    from bridge.web import storage

    hung = HungS3()
    aws_env.setenv("AWS_ENDPOINT_URL", hung.url)
    aws_env.setattr(storage, "READ_TIMEOUT_S", 60.0, raising=False)       # boto3 would wait a minute per attempt …
    aws_env.setattr(storage, "UPLOAD_TIMEOUT_S", 12.0, raising=False)     # … the storage call gives up sooner
    srv = InProcessServer(tmp_path / "state", storage="s3://hung/renders")
    try:
        tids = [_queue(srv.url, 0.5, "opus") for _ in range(2)]    # both track workers end up uploading
        end = time.monotonic() + 30
        while len(hung.conns) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        assert len(hung.conns) >= 2, "the uploads never reached the hung endpoint"
        events, live_frames = asyncio.run(_generate_and_live(srv.url))
        assert events[-1]["event"] == "completed", events[-1]
        assert live_frames >= RATE // 2
        assert [_wait_track(srv.url, t, states=("error", "done"))["state"] for t in tids] == ["error", "error"]
        for t in tids:
            st, _, raw = get(f"{srv.url}/v1/tracks/{t}")
            row = json.loads(raw)
            assert "storage" in row["error"] and "kept" in row["error"] and "did not answer" in row["error"], row
            kept = tmp_path / "state" / "spool" / f"{t}.opus"
            assert kept.stat().st_size == row["bytes"] > 0 and _mode(kept) == 0o600
            st, _, raw = get(f"{srv.url}/v1/tracks/{t}/audio")
            assert st == 409, raw
    finally:
        srv.close()
        hung.close()


def _moto(port):
    try:
        import moto.server  # noqa: F401
    except ImportError as e:
        pytest.skip(f"moto[server] is not installable here: {e}")
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).read()
            return proc
        except OSError:
            if time.monotonic() > end or proc.poll() is not None:
                proc.kill()
                pytest.skip("moto server did not start")
            time.sleep(0.2)


def test_s3_gone_object_is_410_down_is_503_and_a_refused_upload_is_kept_and_retried(tmp_path, aws_env):
    import boto3

    from bridge.web import storage

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    aws_env.setenv("AWS_ENDPOINT_URL", url)
    aws_env.setattr(storage, "CONNECT_TIMEOUT_S", 1.0, raising=False)
    aws_env.setattr(storage, "MAX_ATTEMPTS", 1, raising=False)
    moto = _moto(port)
    srv = None
    try:
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="wbt")
        srv = InProcessServer(tmp_path / "state", storage="s3://wbt/r")
        srv.http.tracks.retry_s = 3600.0          # the test offers kept tracks itself
        gone, kept = _queue(srv.url, 0.5, "wav"), _queue(srv.url, 0.5, "wav")
        assert [_wait_track(srv.url, t)["state"] for t in (gone, kept)] == ["done", "done"]
        s3.delete_object(Bucket="wbt", Key=f"r/{gone}.wav")         # deleted from the bucket
        st, _, raw = get(f"{srv.url}/v1/tracks/{gone}/audio")
        assert st == 410 and json.loads(raw)["reason"] == "bad_request", raw
        moto.kill()
        moto.wait()                                                  # S3 is down
        st, h, raw = get(f"{srv.url}/v1/tracks/{kept}/audio")
        assert st == 503 and int(h["Retry-After"]) > 0 and json.loads(raw)["reason"] == "busy", raw
        assert url not in raw.decode()                               # where the storage is stays in the log
        third = _queue(srv.url, 0.5, "wav")
        row = _wait_track(srv.url, third)
        assert row["state"] == "error" and "storage" in row["error"] and "kept" in row["error"], row
        spooled = tmp_path / "state" / "spool" / f"{third}.wav"
        assert spooled.stat().st_size == row["bytes"]
        assert srv.call(srv.http.tracks.retry_kept()) == 0               # still down: kept, not lost
        assert spooled.exists()
        moto = _moto(port)                                           # S3 is back (empty: a new bucket)
        s3.create_bucket(Bucket="wbt")
        assert srv.call(srv.http.tracks.retry_kept()) == 1
        row = _wait_track(srv.url, third)
        assert row["state"] == "done" and row["error"] is None, row
        st, _, data = get(f"{srv.url}/v1/tracks/{third}/audio")
        assert st == 200 and len(data) == row["bytes"] and not spooled.exists()
        st, _, raw = get(f"{srv.url}/v1/usage")
        assert json.loads(raw)["today"]["requests"] == 3             # the stored tracks, each billed once
    finally:
        if srv is not None:
            srv.close()
        moto.kill()
        moto.wait()
