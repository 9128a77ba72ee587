"""The engine as a Ray Serve deployment: a local Ray (2 CPUs), two replicas of half a CPU each.

A stream from the cluster is bit for bit what the daemon's own backend plays for the same
prompt and seed (streaming == one-shot, across the Serve hop); streams spread over the replicas;
a replica killed mid-stream costs that stream only, and the next one is served; bad input is an
error for that call, never a dead replica. The HTTP route streams the same bytes.
"""
from __future__ import annotations

import os
import signal
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

from engine.synth.backend import render_stream
from tests.raycluster import serve_cluster      # Ray: installed by make setup (pyproject's cluster extra)

PROMPT = "house with piano, bass and drums"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from serve_cluster(tmp_path_factory, "wb-test", 4)


def pcm(chunks) -> np.ndarray:
    return np.concatenate([np.frombuffer(c, dtype="<f4") for c in chunks]).reshape(-1, 2)


def test_a_stream_from_the_cluster_is_what_the_daemon_plays(cluster):
    chunks = list(cluster.options(stream=True).stream.remote(PROMPT, 3, 1.5, None, None, 0, None))
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


# ------------------------------------------------------------------ a daemon whose engine is the cluster
def _read_live(readers, seconds, block=1024, during=None):
    """Read every ring in real time for ``seconds`` (``during(t)`` called each block)."""
    outs = [[] for _ in readers]
    t0 = time.monotonic()
    n = 0
    while n * block < seconds * 48000:
        lag = t0 + n * block / 48000 - time.monotonic()
        if lag > 0:
            time.sleep(lag)
        if during is not None:
            during(n * block / 48000)
        for k, r in enumerate(readers):
            end = time.monotonic() + 10
            while r.buffered() < block:
                assert time.monotonic() < end, "the ring ran dry"
                time.sleep(0.001)
            outs[k].append(r.read(block).copy())
        n += 1
    return [np.concatenate(o) for o in outs]


def test_a_daemon_plays_two_slots_from_the_cluster_and_a_replica_dying_is_not_heard(cluster):
    from bridge.cluster.remote import RemoteBackend
    from bridge.core.commands import Command
    from coredaemon import core_daemon
    from plugin_stub.reader import RingReader
    from polling import wait

    backend = RemoteBackend("local", app="wb-test")
    gen = core_daemon("cl", backend=backend, target_s=2.0)
    d = next(gen)
    try:
        d2gen = core_daemon("cm", backend=RemoteBackend("local", app="wb-test"), target_s=2.0)
        d2 = next(d2gen)
        try:
            pids, end = set(), time.monotonic() + 60
            while len(pids) < 2 and time.monotonic() < end:           # both replicas, idle
                pids.add(cluster.info.remote().result()["pid"])
            assert len(pids) == 2
            readers = []
            for dd, seed in ((d, 11), (d2, 12)):
                r = RingReader(dd.name, max_block=1024).attach()
                dd.submit(Command("play", slot=dd.name, prompt=PROMPT, seed=seed))
                readers.append(r)
            for r in readers:
                assert wait(lambda r=r: r.playing and r.buffered() >= 48000, 30, step=0.01)
            killed = {}

            def kill(t):
                # Serve routes a request to the less busy of two replicas: the one ``info`` does
                # not reach while the streams play is one serving them
                if t >= 2.0 and not killed:
                    idle = cluster.info.remote().result()["pid"]
                    victim = next(p for p in pids if p != idle)
                    os.kill(victim, signal.SIGKILL)
                    killed["pid"] = victim

            a, b = _read_live(readers, 6.0, during=kill)
            assert killed and all(r.underrun_frames == 0 for r in readers)
            resumed = [dd.slots[dd.name].sm.job.stream.state.resumes for dd in (d, d2)]
            assert sum(resumed) >= 1, resumed                   # a stream did move to the other replica
            from test_chord_daemon import groove_lag

            cut = int(2.0 * 48000)
            for audio, seed, r in ((a, 11, readers[0]), (b, 12, readers[1])):
                start = r.read_index - len(audio)
                ref = render_stream(PROMPT, seed, r.read_index + 48000)[start:start + len(audio)]
                assert np.corrcoef(audio[:cut, 0], ref[:cut, 0])[0, 1] > 0.999     # before: the same samples
                lag, corr = groove_lag(audio[cut:], ref[cut:])                      # after: the same music, in time
                assert lag == 0 and corr > 0.9, (seed, lag, corr)
            for r in readers:
                r.detach()
        finally:
            try:
                next(d2gen)
            except StopIteration:
                pass
    finally:
        try:
            next(gen)
        except StopIteration:
            pass


def test_an_unreachable_cluster_is_one_clear_line():
    from bridge.cluster.remote import RemoteBackend
    from engine.backend import BackendError

    with pytest.raises(BackendError, match="cannot reach the wavebridge cluster"):
        RemoteBackend("local", app="no-such-app", connect_timeout_s=3).warmup()
