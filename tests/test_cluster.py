"""The engine as a Ray Serve deployment: a local Ray (2 CPUs), two replicas of half a CPU each.

A stream from the cluster is bit for bit what the daemon's own backend plays for the same
prompt and seed (streaming == one-shot, across the Serve hop); streams spread over the replicas;
a replica killed mid-stream costs that stream only, and the next one is served; bad input is an
error for that call, never a dead replica. The HTTP route streams the same bytes.
"""
from __future__ import annotations

import os
import signal
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

import ray                              # installed by make setup (pyproject's cluster extra)
from ray import serve

from bridge.cluster.replica import build
from engine.synth.backend import render_stream

PROMPT = "house with piano, bass and drums"


def free_port() -> int:
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    port = free_port()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _temp_dir=str(tmp_path_factory.mktemp("ray")))
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    handle = serve.run(build("synth", replicas=2, capacity=4, num_cpus=0.5), name="wb-test", route_prefix="/")
    handle.port = port
    yield handle
    serve.shutdown()
    ray.shutdown()


def pcm(chunks) -> np.ndarray:
    return np.concatenate([np.frombuffer(c, dtype="<f4") for c in chunks]).reshape(-1, 2)


def test_a_stream_from_the_cluster_is_what_the_daemon_plays(cluster):
    chunks = list(cluster.options(stream=True).stream.remote(PROMPT, 3, 1.5))
    assert all(len(c) == 4800 * 2 * 4 for c in chunks[:-1])                  # 100 ms chunks
    a = pcm(chunks)
    assert a.shape == (72000, 2)
    assert np.array_equal(a, render_stream(PROMPT, 3, 72000))
    assert np.abs(a).max() > 0.05


def test_streams_spread_over_the_replicas_and_a_dead_one_costs_only_its_stream(cluster):
    pids = {cluster.info.remote().result()["pid"] for _ in range(12)}
    assert len(pids) == 2
    gens = [cluster.options(stream=True).stream.remote(PROMPT, s, 1.0) for s in (1, 2, 3, 4)]
    outs = [pcm(g) for g in gens]
    for s, a in zip((1, 2, 3, 4), outs):
        assert np.array_equal(a, render_stream(PROMPT, s, 48000))
    # kill one replica's process mid-stream: that stream ends in an error; Serve starts another
    # replica, and every stream after that is served whole
    victim = cluster.info.remote().result()["pid"]
    live = cluster.options(stream=True).stream.remote(PROMPT, 8, 30.0)
    next(iter(live))
    os.kill(victim, signal.SIGKILL)
    end, whole = time.monotonic() + 60, 0
    while whole < 4 and time.monotonic() < end:
        try:
            a = pcm(cluster.options(stream=True).stream.remote(PROMPT, 5 + whole, 0.5))
        except Exception:  # noqa: BLE001 — routed to the dead replica before Serve noticed
            time.sleep(0.5)
            continue
        assert np.array_equal(a, render_stream(PROMPT, 5 + whole, 24000))
        whole += 1
    assert whole == 4
    end = time.monotonic() + 60
    while time.monotonic() < end and len({cluster.info.remote().result()["pid"] for _ in range(12)} - {victim}) < 2:
        time.sleep(0.5)
    assert len({cluster.info.remote().result()["pid"] for _ in range(12)} - {victim}) == 2   # two again


def test_bad_input_is_an_error_for_that_call_and_the_replica_serves_on(cluster):
    for args in (("", 1, 1.0), (PROMPT, 2 ** 40, 1.0), (PROMPT, 1, 0.0), (PROMPT, 1, float("nan")), (PROMPT, 1, 1e9)):
        with pytest.raises(Exception):
            list(cluster.options(stream=True).stream.remote(*args))
    assert pcm(cluster.options(stream=True).stream.remote(PROMPT, 9, 0.2)).shape == (9600, 2)


def test_the_http_route_streams_the_same_audio(cluster):
    q = urllib.parse.urlencode({"prompt": PROMPT, "seed": 4, "seconds": 0.5})
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.port}/?{q}", timeout=60) as r:
        assert r.headers["x-sample-rate"] == "48000" and r.headers["x-channels"] == "2"
        body = r.read()
    a = np.frombuffer(body, dtype="<f4").reshape(-1, 2)
    assert np.array_equal(a, render_stream(PROMPT, 4, 24000))
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"http://127.0.0.1:{cluster.port}/?prompt=&seconds=1", timeout=60)
    assert e.value.code == 400
