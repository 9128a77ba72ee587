"""Whole tracks: the SQLite queue, rendering in a private slot, local and S3 storage, kill -9."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("av")

from tests.httpserver import InProcessServer, decode, rms_db  # noqa: E402
from tests.test_http import PROMPT, PROMPT2, RATE, get, post, reference  # noqa: E402
from plugin_stub.protocol import shm_dir, shm_path  # noqa: E402


def _wait_done(url, tid, headers=None, timeout=90.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st, _, raw = get(f"{url}/v1/tracks/{tid}", headers)
        row = json.loads(raw)
        if row["state"] in ("done", "error"):
            return row
        time.sleep(0.1)
    raise AssertionError(f"track {tid} did not finish: {row}")


def test_track_is_queued_rendered_stored_and_downloaded(tmp_path):
    srv = InProcessServer(tmp_path / "state")
    try:
        st, h, raw = post(srv.url + "/v1/tracks", {"prompt": PROMPT, "seconds": 4.0, "format": "wav", "seed": 11})
        assert st == 202, raw
        row = json.loads(raw)
        tid = row["id"]
        assert h["Location"] == f"/v1/tracks/{tid}" and row["state"] in ("queued", "running")
        row = _wait_done(srv.url, tid)
        assert row["state"] == "done", row
        assert row["progress"] == 1.0 and row["download_url"] == f"/v1/tracks/{tid}/audio"
        assert row["compute_s"] > 0 and row["cost_usd"] > 0 and row["render_s"] > 0
        st, h, data = get(srv.url + row["download_url"])
        assert st == 200 and h["Content-Type"] == "audio/wav" and len(data) == row["bytes"]
        audio, rate, ch = decode(data, "wav")
        assert (rate, ch) == (RATE, 2) and audio.shape[0] == 4 * RATE
        ref = reference(PROMPT, 11, 4.0)
        assert np.max(np.abs(audio[:-960] - ref[:4 * RATE - 960])) < 2e-4
        files = os.listdir(tmp_path / "state" / "tracks")
        assert files == [f"{tid}.wav"]                        # named by the server's id, no .part left
        st, _, raw = get(srv.url + "/v1/tracks")
        assert [t["id"] for t in json.loads(raw)["tracks"]] == [tid]
        # bad requests
        for body in ({"prompt": PROMPT, "seconds": 601}, {"prompt": PROMPT, "seconds": 0},
                     {"prompt": PROMPT, "seconds": 5, "format": "../../x"}, {"seconds": 5},
                     {"prompt": PROMPT, "seconds": 5, "id": "../../etc/passwd"} | {"seconds": "5"}):
            st, _, raw = post(srv.url + "/v1/tracks", body)
            assert st == 400, (body, raw)
        st, _, _ = get(srv.url + "/v1/tracks/" + "0" * 32 + "/audio")
        assert st == 404
    finally:
        srv.close()


def test_tracks_belong_to_their_key(tmp_path):
    srv = InProcessServer(tmp_path / "state")
    try:
        a = srv.on_loop(srv.http.store.add_key, "a", "pro")
        b = srv.on_loop(srv.http.store.add_key, "b", "pro")
        st, _, raw = post(srv.url + "/v1/tracks", {"prompt": PROMPT, "seconds": 1.0},
                          headers={"Authorization": f"Bearer {a}"})
        assert st == 202
        tid = json.loads(raw)["id"]
        st, _, _ = get(f"{srv.url}/v1/tracks/{tid}", {"Authorization": f"Bearer {b}"})
        assert st == 404
        assert _wait_done(srv.url, tid, {"Authorization": f"Bearer {a}"})["state"] == "done"
        st, _, _ = get(f"{srv.url}/v1/tracks/{tid}/audio", {"Authorization": f"Bearer {b}"})
        assert st == 404
    finally:
        srv.close()


def _serve(tmp_path, names):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[engine]\nslot_names = {json.dumps(names)}\n[http]\ntrack_workers = 1\n")
    from bridge.ops.demo import DaemonProcess

    return DaemonProcess("--config", str(cfg), "--metrics-port", "off", "--http", "127.0.0.1:0",
                         "--state-dir", str(tmp_path / "state"))


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


@pytest.mark.slow
def test_the_queue_survives_kill_9_and_finishes_after_restart(tmp_path):
    names = [f"k{os.getpid()}x{i}" for i in range(1)]
    d = _serve(tmp_path, names)
    try:
        url = "http://%s:%d" % d.http
        t1 = _post(url + "/v1/tracks", {"prompt": PROMPT, "seconds": 60.0, "format": "opus", "seed": 1})["id"]
        t2 = _post(url + "/v1/tracks", {"prompt": PROMPT2, "seconds": 8.0, "format": "wav", "seed": 2})["id"]
        end = time.monotonic() + 30
        while time.monotonic() < end:
            r1 = _get(f"{url}/v1/tracks/{t1}")
            if r1["state"] == "running" and r1["progress"] > 0:
                break
            time.sleep(0.02)
        assert r1["state"] == "running" and r1["progress"] < 1.0, r1
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(10)
    finally:
        d.kill()
    dead = d.proc.pid
    assert [n for n in os.listdir(shm_dir()) if n.startswith(f"wavebridge.web{dead}-")]   # left by the kill
    assert any(f.endswith(".part") for f in os.listdir(tmp_path / "state" / "tracks"))   # it was mid-render
    for n in names:                                       # the killed daemon's named ring
        try:
            os.unlink(shm_path(n))
        except FileNotFoundError:
            pass
    d2 = _serve(tmp_path, names)
    try:
        url = "http://%s:%d" % d2.http
        rows = {}
        end = time.monotonic() + 120
        while time.monotonic() < end:
            rows = {t: _get(f"{url}/v1/tracks/{t}") for t in (t1, t2)}
            if all(r["state"] in ("done", "error") for r in rows.values()):
                break
            time.sleep(0.2)
        assert [rows[t]["state"] for t in (t1, t2)] == ["done", "done"], rows
        assert not [n for n in os.listdir(shm_dir()) if n.startswith(f"wavebridge.web{dead}-")]  # cleaned
        with urllib.request.urlopen(f"{url}/v1/tracks/{t1}/audio", timeout=30) as r:
            audio, rate, ch = decode(r.read(), "opus")
        assert (rate, ch) == (RATE, 2) and audio.shape[0] == 60 * RATE and rms_db(audio) > -35
        with urllib.request.urlopen(f"{url}/v1/tracks/{t2}/audio", timeout=30) as r:
            audio, _, _ = decode(r.read(), "wav")
        ref = reference(PROMPT2, 2, 8.0)
        assert audio.shape[0] == 8 * RATE and np.max(np.abs(audio[:-960] - ref[:8 * RATE - 960])) < 2e-4
        assert sorted(os.listdir(tmp_path / "state" / "tracks")) == sorted([f"{t1}.opus", f"{t2}.wav"])
    finally:
        rc, _ = d2.terminate()
        assert rc == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3_server(monkeypatch):
    pytest.importorskip("boto3")
    try:
        import moto.server  # noqa: F401
    except ImportError as e:
        pytest.skip(f"moto[server] is not installable here: {e}")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1).read()
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.monotonic() > end or proc.poll() is not None:
                proc.kill()
                pytest.skip("moto server did not start")
            time.sleep(0.2)
    for k, v in {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                 "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    yield url
    proc.kill()
    proc.wait()


def test_tracks_stored_in_an_s3_bucket(tmp_path, s3_server):
    import boto3

    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="wbtracks")
    srv = InProcessServer(tmp_path / "state", storage="s3://wbtracks/renders")
    try:
        st, _, raw = post(srv.url + "/v1/tracks", {"prompt": PROMPT, "seconds": 3.0, "format": "opus"})
        assert st == 202
        tid = json.loads(raw)["id"]
        row = _wait_done(srv.url, tid)
        assert row["state"] == "done", row
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="wbtracks")["Contents"]]
        assert keys == [f"renders/{tid}.opus"]
        st, h, data = get(srv.url + row["download_url"])
        assert st == 200 and h["Content-Type"] == "audio/ogg"
        audio, rate, _ = decode(data, "opus")
        assert rate == RATE and audio.shape[0] == 3 * RATE and rms_db(audio) > -35
        assert not os.listdir(tmp_path / "state" / "spool")     # nothing left spooled
    finally:
        srv.close()


def test_serve_http_flags_a_taken_port_and_sigterm_mid_stream(tmp_path):
    names = [f"f{os.getpid()}x0"]
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[engine]\nslot_names = {json.dumps(names)}\n")
    from bridge.ops.demo import DaemonProcess

    off = DaemonProcess("--config", str(cfg), "--metrics-port", "off", "--http", "off",
                        "--state-dir", str(tmp_path / "s1"))
    try:
        assert off.http is None
    finally:
        assert off.terminate()[0] == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        d = DaemonProcess("--config", str(cfg), "--metrics-port", "off", "--http", f"127.0.0.1:{port}",
                          "--state-dir", str(tmp_path / "s2"))
        try:
            assert d.http is None and d.port                      # OSC still serves
        finally:
            assert d.terminate()[0] == 0
    d = DaemonProcess("--config", str(cfg), "--metrics-port", "off", "--http", "127.0.0.1:0",
                      "--state-dir", str(tmp_path / "s3"))
    try:
        url = "http://%s:%d" % d.http
        assert _get(url + "/healthz")["ok"] is True
        req = urllib.request.Request(url + "/v1/audio/generate", method="POST", headers={
                                     "Accept": "audio/ogg", "Content-Type": "application/json"},
                                     data=json.dumps({"prompt": PROMPT, "duration_seconds": 300}).encode())
        r = urllib.request.urlopen(req, timeout=10)
        assert r.read(4) == b"OggS"
    finally:
        rc, took = d.terminate(timeout=10)
    assert rc == 0 and took < 8
    assert not [n for n in os.listdir(shm_dir()) if n.startswith(f"wavebridge.web{d.proc.pid}-")]


def test_sighup_applies_new_tier_limits(tmp_path):
    names = [f"g{os.getpid()}x0"]
    cfg = tmp_path / "config.toml"
    base = f"[engine]\nslot_names = {json.dumps(names)}\n[http]\nstate_dir = \"{tmp_path / 'state'}\"\n"
    cfg.write_text(base + "[http.tiers.custom]\naudio_s_per_day = 5.0\n")
    r = subprocess.run([sys.executable, "-m", "bridge", "keys", "--config", str(cfg), "add", "k", "--tier", "custom"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()
    from bridge.ops.demo import DaemonProcess

    d = DaemonProcess("--config", str(cfg), "--metrics-port", "off", "--http", "127.0.0.1:0")
    try:
        url = "http://%s:%d/v1/usage" % d.http

        def limit():
            req = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())["limits"]["audio_s_per_day"]
        assert limit() == 5.0
        cfg.write_text(base + "[http.tiers.custom]\naudio_s_per_day = 50.0\n")
        d.proc.send_signal(signal.SIGHUP)
        end = time.monotonic() + 10
        while limit() != 50.0 and time.monotonic() < end:
            time.sleep(0.1)
        assert limit() == 50.0
    finally:
        assert d.terminate()[0] == 0


def test_http_meters_are_on_the_daemons_metrics_endpoint(tmp_path):
    import re

    names = [f"m{os.getpid()}x0"]
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[engine]\nslot_names = {json.dumps(names)}\n")
    from bridge.ops.demo import DaemonProcess

    d = DaemonProcess("--config", str(cfg), "--metrics-port", "0", "--http", "127.0.0.1:0",
                      "--state-dir", str(tmp_path / "state"), "--price-per-hour", "3.6")
    try:
        url = "http://%s:%d" % d.http
        req = urllib.request.Request(url + "/v1/audio/generate", method="POST",
                                     headers={"Content-Type": "application/json"},
                                     data=json.dumps({"prompt": PROMPT, "duration_seconds": 1.0}).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            events = [json.loads(x[6:]) for x in r.read().split(b"\n\n") if x.startswith(b"data: ")]
        assert events[-1]["event"] == "completed"
        m = re.search(r"metrics on (http://\S+/metrics)", "".join(d.lines))
        assert m, d.lines
        end = time.monotonic() + 5              # metered as the handler finishes, just after the last byte
        while True:
            text = urllib.request.urlopen(m.group(1), timeout=10).read().decode()
            if "wavebridge_http_audio_seconds_total{" in text or time.monotonic() > end:
                break
            time.sleep(0.05)
        assert 'wavebridge_http_audio_seconds_total{tier="local"} 1.0' in text
        cost = float(re.search(r'wavebridge_http_cost_usd_total\{tier="local"\} (\S+)', text).group(1))
        compute = float(re.search(r'wavebridge_http_compute_seconds_total\{tier="local"\} (\S+)', text).group(1))
        assert compute > 0 and cost == pytest.approx(compute * 3.6 / 3600, rel=1e-6)
        assert 'wavebridge_http_requests_total{endpoint="/v1/audio/generate",status="200",tier="local"} 1.0' in text
    finally:
        d.terminate()
