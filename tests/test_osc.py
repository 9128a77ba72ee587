"""OSC round trips through a real UDP socket against a `wavebridge serve` process."""
from __future__ import annotations

import os
import random
import socket
import struct
import threading
import time

import numpy as np
import pytest

from plugin_stub.protocol import shm_path
from oscwire import msg, pad, parse
from plugin_stub.player import PacedRecorder, attach_when_ready


def parse_reply(data: bytes):
    addr, _tags, args = parse(data)
    return addr, args


@pytest.fixture
def served(daemon_proc, osc_client):
    d = daemon_proc("--slots", "3")
    c = osc_client(d.host, d.port)
    return d, c


def test_ping_play_first_audio_status_with_an_independent_client(served):
    d, _ = served
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.sendto(msg("/wb/ping"), (d.host, d.port))
        assert parse_reply(s.recv(2048)) == ("/wb/pong", [])
        s.sendto(msg("/wb/play", 2, "jazz trio with brushes"), (d.host, d.port))
        addr, args = parse_reply(s.recv(2048))
        assert addr == "/wb/started" and args[0] == 2 and args[1] >= 1
        addr, fa = parse_reply(s.recv(2048))
        assert addr == "/wb/first_audio" and fa[:2] == args and 0 < fa[2] < 5000
        # padded: a request of N bytes may be answered with up to 10 N (docs/osc.md, status pages)
        s.sendto(msg("/wb/status", 0, b"\0" * 64), (d.host, d.port))
        rows = [parse_reply(s.recv(2048)) for _ in range(3)]
        assert [r[0] for r in rows] == ["/wb/slot"] * 3
        eng = parse_reply(s.recv(2048))
        assert eng[0] == "/wb/engine" and eng[1][:3] == ["synth", "numpy", 3]
        assert eng[1][3] == "oscillators" or eng[1][3].startswith("fluidsynth:")   # the renderer in use
        by_slot = {r[1][0]: r[1] for r in rows}
        assert by_slot[2][1] == "playing" and by_slot[2][2] == "jazz trio with brushes"
        assert by_slot[1][1] == "idle"
        s.sendto(msg("/wb/stop", 2, 0.01), (d.host, d.port))
        addr, done = parse_reply(s.recv(2048))
        assert addr == "/wb/done" and done[:2] == args
        audio_s, compute_s, cost = done[2:]
        assert audio_s > 0 and 0 < compute_s < audio_s and cost > 0    # metering: share of engine time
    finally:
        s.close()


BAD = [
    (("/wb/play",), -1, "bad_args"),
    (("/wb/play", 1), -1, "bad_args"),
    (("/wb/play", 1, "x", 1.0, 2, "bar", 3), -1, "bad_args"),
    (("/wb/play", 1, "x", 1.0, 2, 3), 1, "bad_type"),
    (("/wb/play", "one", "x"), -1, "bad_type"),
    (("/wb/play", 0, "x"), -1, "bad_slot"),
    (("/wb/play", 4, "x"), -1, "bad_slot"),
    (("/wb/play", 1, ""), 1, "bad_prompt"),
    (("/wb/play", 1, "   "), 1, "bad_prompt"),
    (("/wb/play", 1, "x" * 600), 1, "prompt_too_long"),
    (("/wb/play", 1, "bell\x07"), 1, "bad_prompt"),
    (("/wb/play", 1, "x", float("nan")), 1, "bad_value"),
    (("/wb/play", 1, "x", float("inf")), 1, "bad_value"),
    (("/wb/play", 1, "x", -1.0), 1, "bad_value"),
    (("/wb/play", 1, "x", "long"), 1, "bad_type"),
    (("/wb/stop",), -1, "bad_args"),
    (("/wb/stop", 1, -0.5), 1, "bad_value"),
    (("/wb/stop", 1), 1, "not_playing"),
    (("/wb/param", 1, "gain"), -1, "bad_args"),
    (("/wb/param", 1, "volume_knob", 1.0), 1, "unknown_param"),
    (("/wb/param", 1, "gain", 99.0), 1, "bad_value"),
    (("/wb/param", 1, "gain", float("nan")), 1, "bad_value"),
    (("/wb/tempo", 0.0), -1, "bad_value"),
    (("/wb/tempo", "fast"), -1, "bad_type"),
    (("/wb/status", "one"), -1, "bad_type"),
    (("/wb/status", 0, 1.0), -1, "bad_type"),
    (("/wb/status", 0, "pad", 1), -1, "bad_args"),
    (("/wb/status", 9), -1, "bad_value"),
    (("/wb/nothing",), -1, "unknown_address"),
    (("/etc/passwd", "x"), -1, "unknown_address"),
]


def test_every_bad_message_gets_a_stable_error_and_changes_nothing(served):
    d, c = served
    c.send("/wb/play", 3, "steady groove")
    c.wait_for("/wb/first_audio")
    for m, slot, code in BAD:
        c.send(*m)
        r = c.wait_for("/wb/error", 3.0)
        assert r is not None, m
        assert (r[0], r[1]) == (slot, code), (m, r)
        assert isinstance(r[2], str) and r[2]
    rows = {a[0]: a for a in c.status()[0]}
    assert rows[3][1] == "playing" and rows[3][2] == "steady groove"
    assert rows[1][1] == "idle" and rows[2][1] == "idle"


def test_garbage_datagrams_do_not_hurt_the_daemon(served):
    d, c = served
    rng = random.Random(7)
    valid = msg("/wb/play", 1, "x", 1.0)
    for i in range(1500):
        kind = i % 5
        if kind == 0:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
        elif kind == 1:
            data = valid[:rng.randint(0, len(valid) - 1)]                    # truncated
        elif kind == 2:
            data = pad(b"/wb/play") + pad(b",ix" + bytes([rng.randint(33, 126)])) + b"\0" * 8
        elif kind == 3:
            data = b"#bundle\0" + struct.pack(">Q", 1) + struct.pack(">i", 10 ** 6) + b"x" * 16   # hostile bundle
        else:
            data = pad(b"/wb/play") + pad(b",is") + struct.pack(">i", 1) + b"A" * 8000  # unterminated
        c.send_raw(data)
        if i % 200 == 0:
            time.sleep(0.01)
    time.sleep(0.3)
    while c.recv(0.05) is not None:
        pass
    # 1500 datagrams in a burst spend this host's budget: a ping refused for it is sent again
    end = time.monotonic() + 5.0
    while True:
        c.send("/wb/ping")
        if c.wait_for("/wb/pong", 0.25) is not None:
            break
        assert time.monotonic() < end, "no /wb/pong after the garbage"
    c.send("/wb/play", 2, "still alive")
    assert c.wait_for("/wb/first_audio", 3.0) is not None
    assert d.proc.poll() is None


def test_sigterm_fades_out_unlinks_and_exits_0_under_a_live_reader(served):
    d, c = served
    reader = attach_when_ready(1, max_block=128)
    rec = PacedRecorder(reader, 3.0, 128)
    th = threading.Thread(target=rec.run, daemon=True)
    th.start()
    c.send("/wb/play", 1, "drum and bass with pads")
    assert c.wait_for("/wb/first_audio", 3.0)
    time.sleep(1.0)
    rc, took = d.terminate()
    assert rc == 0 and took < 2.0
    for n in (1, 2, 3):
        assert not os.path.exists(shm_path(n))
    th.join(5)
    a = rec.captured
    assert np.isfinite(a).all()
    k = rec.blocks_done
    heard = np.nonzero(rec.real[:k])[0]
    assert heard.size > 0
    after = a[(heard[-1] + 1) * 128:]
    assert not after.any()                        # silence once the writer is gone (mapping kept)
    last = a[heard[-1] * 128:(heard[-1] + 1) * 128]
    assert np.abs(last[-8:]).max() < 0.05         # faded, not cut
    reader.detach()


def test_first_audio_ms_measures_the_datagram_to_the_ring(served):
    d, c = served
    reader = attach_when_ready(2, max_block=128)
    w0 = reader.write_index
    t = c.send("/wb/play", 2, "disco")
    fa = c.wait_for("/wb/first_audio", 3.0)
    rtt_ms = (time.monotonic() - t) * 1000
    assert fa is not None
    # measured inside the round trip: after the datagram arrived, before the reply left
    assert 0 < fa[2] <= rtt_ms
    assert reader.write_index > w0                 # and the frames are in the ring by then
    reader.detach()
