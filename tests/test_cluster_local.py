"""``wavebridge cluster up|status|down`` (#23): a Ray head of its own (``ray start --head``, free
ports, its own token and session directory), the engine deployed on it, a daemon playing from it
through ``--engine http://…`` read by an independent reader, and ``down`` ending that head only."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("ray")

from bridge.ops.bench.webload import DawReader, http_request  # noqa: E402
from bridge.ops.demo import DaemonProcess  # noqa: E402
from tests.polling import wait  # noqa: E402


def wb(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "bridge", *args], capture_output=True, text=True, timeout=timeout)


def test_cluster_up_status_down_and_a_daemon_playing_from_it(tmp_path):
    state = str(tmp_path / "state")
    ray_tmp = tempfile.mkdtemp(prefix="wbray", dir="/tmp")     # Ray's socket paths must stay short
    up = wb("cluster", "--state-dir", state, "up", "--num-cpus", "0.5", "--temp-dir", ray_tmp,
            "--log", str(tmp_path / "head.log"), "--timeout", "90")
    try:
        assert up.returncode == 0, (up.stdout, up.stderr[-2000:])
        st = json.load(open(os.path.join(state, "cluster.json")))
        assert oct(os.stat(os.path.join(state, "cluster.json")).st_mode & 0o777) == "0o600"
        assert oct(os.stat(st["token_path"]).st_mode & 0o777) == "0o600"
        assert f"--engine {st['http']}" in up.stdout
        again = wb("cluster", "--state-dir", state, "up")
        assert again.returncode == 2 and "already up" in again.stderr
        s = wb("cluster", "--state-dir", state, "status")
        assert s.returncode == 0, s.stderr[-2000:]
        assert "RUNNING" in s.stdout and "2 running" in s.stdout and "1 node," in s.stdout, s.stdout
        # a second node joins with the cluster's token (as on a second machine)
        env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=st["token_path"], RAY_worker_niceness="0")
        node = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "ray"), "start", "--block",
                                 f"--address={st['address']}", "--num-cpus=1", "--disable-usage-stats"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        assert wait(lambda: "2 nodes" in wb("cluster", "--state-dir", state, "status").stdout, 60, step=2), \
            "the second node never joined"

        name = "K" + os.urandom(4).hex()
        cfg = tmp_path / "config.toml"
        cfg.write_text(f'[engine]\nslot_names = ["{name}"]\n')
        d = DaemonProcess("--config", str(cfg), "--engine", st["http"], "--http", "127.0.0.1:0",
                          "--metrics-port", "off", "--state-dir", str(tmp_path / "wbstate"))
        reader = None
        try:
            assert "backend remote" in "".join(d.lines)
            code, body = http_request(*d.http, "POST", f"/v1/slots/{name}/play", {"prompt": "lofi hip hop with rhodes"})
            assert code == 200, body
            reader = DawReader(name).start()
            assert wait(lambda: reader.r.playing and reader.r.buffered() > 24000, 30)
            assert wait(lambda: reader.r.read_index > 3 * 48000, 20)
            assert reader.underruns == 0
        finally:
            if reader is not None:
                reader.stop()
            d.terminate()
    finally:
        if "node" in locals():
            os.killpg(node.pid, signal.SIGTERM)
            try:
                node.wait(45)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
        down = wb("cluster", "--state-dir", state, "down", timeout=120)
    assert down.returncode == 0, down.stderr[-2000:]
    assert not os.path.exists(os.path.join(state, "cluster.json"))
    pid = st["pid"]
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    gone = wb("cluster", "--state-dir", state, "status")
    assert gone.returncode == 2 and "no cluster is up" in gone.stderr
    shutil.rmtree(ray_tmp, ignore_errors=True)


def test_bench_cluster_measures_a_replica_and_models_capacity_from_it():
    r = wb("bench", "--cluster", "--quick", "--json", "--price-per-hour", "2.0", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert [s["streams"] for s in res["streams"]] == [2, 4] and all(s["keep_up"] for s in res["streams"])
    # the synth gains nothing from a batch (it renders a batch's streams in turn), so its replica
    # renders one stream a call (musicgen's are batched: tests/test_cluster_batch.py)
    assert all(s["chunks_per_render"] == 1.0 for s in res["streams"]), res["streams"]
    spr = res["streams_per_replica"]
    assert spr == 4
    personal = {p["listeners"]: p for p in res["plans"] if p["kind"] == "personal"}
    assert personal[10_000]["replicas"] == -(-10_000 // (spr * 0.75))
    assert personal[10_000]["cost_per_hour"] == 2.0 * personal[10_000]["replicas"]
    assert "upscale_30s" in res["day"] and res["day"]["upscale_30s"]["peak_replicas"] >= 10_000 / spr
