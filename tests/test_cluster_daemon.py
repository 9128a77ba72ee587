"""``wavebridge serve --engine``: a daemon whose engine is a Ray Serve cluster (#23).

A local Ray (2 CPUs) runs two :class:`~bridge.cluster.replica.EngineReplica` replicas of half a
CPU each behind Serve's HTTP proxy on a port of the test's own. The daemon is a real ``serve``
child with ``--engine http://…`` (rings, crossfades, OSC and HTTP stay in it), its DAW slots read
by independent real-time readers in this process (128-frame blocks): they count every frame the
ring did not have. Faults: a replica's process killed with -9 mid-stream (its streams resume on
the other replica from the frame they lacked: the same music, no gap); the cluster cut off (a
TCP relay between daemon and cluster stops relaying: the slots fade out with
``/wb/error engine_unavailable`` and play again when the relay is back); the cluster absent at
start (one line and exit 2, or with ``--engine-fallback`` the local synth).
"""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import socket
import threading
import time

import numpy as np
import pytest

pytest.importorskip("aiohttp")
import aiohttp  # noqa: E402

from bridge.cluster.remote import RemoteBackend  # noqa: E402
from bridge.ops.bench.webload import DawReader, http_request  # noqa: E402
from bridge.ops.demo import DaemonProcess  # noqa: E402
from engine.synth.backend import render_stream  # noqa: E402
from plugin_stub.player import PacedRecorder, attach_when_ready  # noqa: E402
from plugin_stub.protocol import shm_path  # noqa: E402
from tests.coredaemon import core_daemon, drain  # noqa: E402
from tests.polling import wait  # noqa: E402
from tests.raycluster import free_port, serve_cluster  # noqa: E402 — Ray: installed by make setup

PROMPTS = ["house with piano, bass and drums, 124 bpm", "dreamy ambient pads in D major",
           "funky disco groove with slap bass", "lofi hip hop with rhodes"]


class Relay:
    """A TCP relay in front of the cluster's HTTP port: ``cut()`` closes every connection and
    refuses new ones (the network gone), ``mend()`` relays again."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self.lsock.getsockname()[1]
        self.open = True
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            if not self.open:
                c.close()
                continue
            try:
                u = socket.create_connection(self.target, timeout=5)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.open = False
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass

    def mend(self):
        self.open = True

    def close(self):
        self.cut()
        self.lsock.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from serve_cluster(tmp_path_factory, "wavebridge", 8)


def replica_pids(handle, n=2, tries=40) -> set:
    pids = set()
    for _ in range(tries):
        pids.add(handle.info.remote().result(timeout_s=10)["pid"])
        if len(pids) >= n:
            break
    return pids


def longest_silence(a: np.ndarray, block: int = 128) -> float:
    """Seconds of the longest run of all-silent blocks in ``a`` (after its first sound)."""
    n = len(a) // block
    loud = np.abs(a[:n * block]).reshape(n, block, -1).max(axis=(1, 2)) > 1e-6
    first = int(np.argmax(loud)) if loud.any() else n
    run = best = 0
    for v in loud[first:]:
        run = 0 if v else run + 1
        best = max(best, run)
    return best * block / 48000


# ------------------------------------------------------------------------------------------ tests
def test_the_remote_backend_plays_what_the_local_synth_plays(cluster):
    """Through Serve's HTTP route: a stream is the daemon's own synth bit for bit, and the same
    stream resumed at a frame (as on another replica) is the same music, in time."""
    b = RemoteBackend(cluster.url)
    b.warmup()
    assert (b.sample_rate, b.channels, b.remote_name) == (48000, 2, "synth")
    chunks, _ = b.open_stream(PROMPTS[0], 7, 1.0, {}, 0)
    a = np.frombuffer(b"".join(chunks), "<f4").reshape(-1, 2)
    ref = render_stream(PROMPTS[0], 7, 48000)
    assert np.array_equal(a, ref)
    # resumed at a frame (on whichever replica): the synth's continuation, the same music in time
    from test_chord_daemon import groove_lag

    ref = render_stream(PROMPTS[0], 7, 4 * 48000)
    chunks, _ = b.open_stream(PROMPTS[0], 7, 4.0, {}, 48000)
    lag, corr = groove_lag(np.frombuffer(b"".join(chunks), "<f4").reshape(-1, 2), ref[48000:])
    assert lag == 0 and corr > 0.9, (lag, corr)
    # bad input is that call's error (a 400 with the reason), the replica serves on
    with pytest.raises(Exception, match="400.*seed out of range"):
        list(b.open_stream(PROMPTS[0], 2 ** 40, 1.0, {}, 0)[0])
    with pytest.raises(Exception, match="400.*seconds"):
        list(b.open_stream(PROMPTS[0], 1, 1e9, {}, 0)[0])
    with pytest.raises(Exception, match="400.*params"):
        b._http("/", {"prompt": "x", "params": "[1]"}, 5)
    assert b._info(5)["backend"] == "synth"


def test_a_daemon_on_the_cluster_plays_4_slots_and_8_web_streams_and_survives_a_dead_replica(cluster, tmp_path):
    names = ["C" + secrets.token_hex(4) for _ in range(4)]
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[engine]\nslot_names = {json.dumps(names)}\n")
    d = DaemonProcess("--config", str(cfg), "--engine", cluster.url, "--http", "127.0.0.1:0", "--metrics-port", "off",
                      "--state-dir", str(tmp_path / "state"), "--log-level", "INFO")
    readers = []
    pids = replica_pids(cluster)                # while idle: Serve routes info to the less busy replica
    try:
        assert len(pids) == 2
        assert "backend remote" in "".join(d.lines)
        for n, p in zip(names, PROMPTS):
            st, body = http_request(*d.http, "POST", f"/v1/slots/{n}/play", {"prompt": p, "seed": 5})
            assert st == 200, body
        readers = [DawReader(n).start() for n in names]
        assert wait(lambda: all(r.r.playing for r in readers), 20), "slots never played"
        # web streams are refused (503, Retry-After) while a DAW slot's lead is still building
        assert wait(lambda: all(r.r.buffered() > 0.8 * 48000 for r in readers), 20), "no lead"
        u0 = [r.underruns for r in readers]

        # 8 web streams on the same engine, read to the end
        async def web():
            async with aiohttp.ClientSession() as c:
                async def connect():
                    for _ in range(20):           # a client that honours Retry-After
                        try:
                            return await c.ws_connect("http://%s:%d/v1/stream?format=pcm_s16le" % d.http)
                        except aiohttp.WSServerHandshakeError as e:
                            if e.status != 503:
                                raise
                            await asyncio.sleep(1.0)
                    raise AssertionError("refused 20 times")

                async def one(i):
                    got = 0
                    async with await connect() as ws:
                        assert (await ws.receive_json())["type"] == "ready"
                        await ws.send_str(json.dumps({"type": "play", "prompt": PROMPTS[i % 4], "seconds": 4.0}))
                        async for m in ws:
                            if m.type == aiohttp.WSMsgType.BINARY:
                                got += len(m.data)
                            elif m.type == aiohttp.WSMsgType.TEXT and json.loads(m.data)["type"] in ("done", "error"):
                                return got, json.loads(m.data)
                    return got, None
                return await asyncio.gather(*(one(i) for i in range(8)))

        results = asyncio.run(web())
        for got, last in results:
            assert last and last["type"] == "done", last
            assert got >= 4.0 * 48000 * 2 * 2 * 0.95, got
        under_web = [r.underruns - u for r, u in zip(readers, u0)]
        print("DAW underruns during 8 web streams:", under_web)
        assert under_web == [0, 0, 0, 0]

        # a replica killed with -9 mid-stream: its streams resume on the other one, from the frame
        # they lacked; the readers hear no gap (the fetch buffer and the ring carry them over)
        rec_reader = attach_when_ready(names[0], max_block=128)
        rec = PacedRecorder(rec_reader, 14.0)
        th = threading.Thread(target=rec.run, daemon=True)
        u1 = [r.underruns for r in readers]
        time.sleep(0.5)
        th.start()
        time.sleep(3.0)
        idle = cluster.info.remote().result(timeout_s=10)["pid"]
        victim = next(p for p in pids if p != idle)    # both serve some of the 4 slots' streams
        os.kill(victim, signal.SIGKILL)
        th.join(30)
        under_kill = [r.underruns - u for r, u in zip(readers, u1)]
        silence = longest_silence(rec.captured)
        print("DAW underruns after the replica was killed:", under_kill, "longest silence", silence)
        assert under_kill == [0, 0, 0, 0]
        assert silence < 0.1            # the slot's music went on (a rest in the music, at most)
        assert np.abs(rec.captured[-48000:]).max() > 0.01
        rec_reader.detach()
        assert wait(lambda: any("resuming at frame" in ln for ln in d.lines + d.err_lines), 5), \
            "no stream noticed the dead replica"
    finally:
        for r in readers:
            r.stop()
        d.terminate()
        for n in names:
            try:
                os.unlink(shm_path(n))
            except FileNotFoundError:
                pass


def test_the_cluster_unreachable_at_start_is_one_line_or_the_local_engine(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RuntimeError) as e:
        DaemonProcess("--engine", dead, "--slots", "1", "--metrics-port", "off", startup_timeout=30)
    msg = str(e.value)
    assert "cannot reach the wavebridge cluster at " + dead in msg and "--engine-fallback" in msg
    said = [ln for ln in msg.splitlines() if ln.startswith("wavebridge: ")]
    assert len(said) == 1 and "cannot reach" in said[0], said           # one line says why (and the log)
    with pytest.raises(RuntimeError, match="ftp://x: not an engine address"):
        DaemonProcess("--engine", "ftp://x", "--slots", "1", "--metrics-port", "off", startup_timeout=30)
    with pytest.raises(RuntimeError, match="Ray Client cannot stream from a Serve deployment"):
        DaemonProcess("--engine", "ray://127.0.0.1:10001", "--slots", "1", "--metrics-port", "off", startup_timeout=30)
    d = DaemonProcess("--engine", dead, "--engine-fallback", "--slots", "1", "--metrics-port", "off")
    try:
        assert "backend synth" in "".join(d.lines)
        assert wait(lambda: any("cannot reach" in ln and "--engine-fallback" in ln for ln in d.err_lines), 3)
    finally:
        d.terminate()


def test_a_cut_off_cluster_fades_the_slot_out_and_it_plays_again_when_it_is_back(cluster):
    relay = Relay(("127.0.0.1", cluster.port))
    b = RemoteBackend(f"http://127.0.0.1:{relay.port}")
    gen = core_daemon("cut", backend=b)
    d = next(gen)
    try:
        from bridge.core.commands import Command

        d.submit(Command("play", slot=d.name, prompt=PROMPTS[1], seed=3))
        r = attach_when_ready(d.name, max_block=128)
        rec = PacedRecorder(r, 12.0)
        th = threading.Thread(target=rec.run, daemon=True)
        th.start()
        assert wait(lambda: r.playing, 15)
        time.sleep(1.5)
        relay.cut()
        t_cut = time.monotonic()
        u_cut = r.underrun_frames
        assert wait(lambda: any(e.kind == "error" and e.code == "engine_unavailable" for e in d.events.queue), 10)
        t_err = time.monotonic()
        assert wait(lambda: not r.playing, 5), "the slot did not stop"
        starved = r.underrun_frames - u_cut        # the ring ran dry before the fade (a machine too loaded)
        time.sleep(1.0)
        relay.mend()
        assert wait(lambda: r.playing, 15), "the slot did not come back"
        th.join(20)
        a = rec.captured
        ev = drain(d)
        print(f"engine_unavailable {t_err - t_cut:.2f} s after the cut")
        # the fade-out: no click where the music stopped (the last loud block is quieter than the
        # music's level), then silence, then music again
        env = np.abs(a[:len(a) // 480 * 480]).reshape(-1, 480, 2).max(axis=(1, 2))      # 10 ms envelope
        loud = env > 1e-4
        k0 = int(np.argmax(loud))
        gaps = np.flatnonzero(~loud[k0:]) + k0
        assert len(gaps) > 50, "never went silent"
        g0 = int(gaps[0])                                   # where the fade-out ended
        assert g0 - k0 > 100, "silent too soon"
        assert loud[g0 + 50:].any(), "no music after the cluster came back"
        # faded, not cut: the stop's fade is 20 ms (QUICK_FADE_S) and equal-power, so its last 5 ms
        # are at most 0.38 of where it began, while a cut ends at the music's level. Compared
        # sample by sample with the music 20 ms before the end (was: the last 20 ms against the
        # take's loudest block, which a fade starting on a loud passage failed). Judged when the
        # ring still held audio to fade (on a starved machine it ran dry first: nothing to judge)
        print(f"ring underruns between the cut and the stop: {starved} frames")
        if starved == 0:
            mag = np.abs(a).max(axis=1)
            e = (g0 - 3) * 480 + int(np.flatnonzero(mag[(g0 - 3) * 480:g0 * 480] >= 1e-4)[-1]) + 1
            last, before = mag[e - 240:e].max(), mag[e - 1200:e - 960].max()
            assert last < 0.6 * before, (last, before, env[g0 - 10:g0])
        assert [e for e in ev if e.kind == "error" and e.code == "engine_unavailable"]
        r.detach()
    finally:
        gen.close()
        relay.close()
