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

from bridge.protocol import shm_path
from plugin_stub.player import PacedRecorder, attach_when_ready


def osc_str(s: bytes) -> bytes:
    s += b"\0"
    return s + b"\0" * (-len(s) % 4)


def raw_msg(address: str, *args) -> bytes:
    """A hand-rolled OSC encoder (not python-osc), as an independent client would send."""
    tags, body = ",", b""
    for a in args:
        if isinstance(a, int):
            tags += "i"
            body += struct.pack(">i", a)
        elif isinstance(a, float):
            tags += "f"
            body += struct.pack(">f", a)
        else:
            tags += "s"
            body += osc_str(str(a).encode())
    return osc_str(address.encode()) + osc_str(tags.encode()) + body


def parse_reply(data: bytes):
    end = data.index(b"\0")
    addr = data[:end].decode()
    i = (end + 4) & ~3
    tend = data.index(b"\0", i)
    tags = data[i + 1:tend].decode()
    i = (tend + 4) & ~3
    out = []
    for t in tags:
        if t == "i":
            out.append(struct.unpack_from(">i", data, i)[0])
            i += 4
        elif t == "f":
            out.append(struct.unpack_from(">f", data, i)[0])
            i += 4
        elif t == "s":
            e = data.index(b"\0", i)
            out.append(data[i:e].decode())
            i = (e + 4) & ~3
    return addr, out


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
        s.sendto(raw_msg("/wb/ping"), (d.host, d.port))
        assert parse_reply(s.recv(2048)) == ("/wb/pong", [])
        s.sendto(raw_msg("/wb/play", 2, "jazz trio with brushes"), (d.host, d.port))
        addr, args = parse_reply(s.recv(2048))
        assert addr == "/wb/started" and args[0] == 2 and args[1] >= 1
        addr, fa = parse_reply(s.recv(2048))
        assert addr == "/wb/first_audio" and fa[:2] == args and 0 < fa[2] < 5000
        s.sendto(raw_msg("/wb/status"), (d.host, d.port))
        rows = [parse_reply(s.recv(2048)) for _ in range(3)]
        assert [r[0] for r in rows] == ["/wb/slot"] * 3
        assert parse_reply(s.recv(2048)) == ("/wb/engine", ["synth", "numpy", 3])
        by_slot = {r[1][0]: r[1] for r in rows}
        assert by_slot[2][1] == "playing" and by_slot[2][2] == "jazz trio with brushes"
        assert by_slot[1][1] == "idle"
        s.sendto(raw_msg("/wb/stop", 2, 0.01), (d.host, d.port))
        addr, done = parse_reply(s.recv(2048))
        assert addr == "/wb/done" and done[:2] == args
        audio_s, compute_s, cost = done[2:]
        assert audio_s > 0 and 0 < compute_s < audio_s and cost > 0    # metering: share of engine time
    finally:
        s.close()


BAD = [
    (("/wb/play",), -1, "bad_args"),
    (("/wb/play", 1), -1, "bad_args"),
    (("/wb/play", 1, "x", 1.0, 2, 3), -1, "bad_args"),
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
    (("/wb/status", 1), -1, "bad_args"),
    (("/wb/nothing",), -1, "unknown_address"),
    (("/etc/passwd", "x"), -1, "unknown_address"),
]


def test_every_bad_message_gets_a_stable_error_and_changes_nothing(served):
    d, c = served
    c.send("/wb/play", 3, "steady groove")
    c.wait_for("/wb/first_audio")
    for msg, slot, code in BAD:
        c.send(*msg)
        r = c.wait_for("/wb/error", 3.0)
        assert r is not None, msg
        assert (r[0], r[1]) == (slot, code), (msg, r)
        assert isinstance(r[2], str) and r[2]
    c.send("/wb/status")
    rows = {}
    for _ in range(3):
        a = c.wait_for("/wb/slot", 2.0)
        rows[a[0]] = a
    assert rows[3][1] == "playing" and rows[3][2] == "steady groove"
    assert rows[1][1] == "idle" and rows[2][1] == "idle"


def test_garbage_datagrams_do_not_hurt_the_daemon(served):
    d, c = served
    rng = random.Random(7)
    valid = raw_msg("/wb/play", 1, "x", 1.0)
    for i in range(1500):
        kind = i % 5
        if kind == 0:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
        elif kind == 1:
            data = valid[:rng.randint(0, len(valid) - 1)]                    # truncated
        elif kind == 2:
            data = osc_str(b"/wb/play") + osc_str(b",ix" + bytes([rng.randint(33, 126)])) + b"\0" * 8
        elif kind == 3:
            data = b"#bundle\0" + struct.pack(">Q", 1) + struct.pack(">i", 10 ** 6) + b"x" * 16   # hostile bundle
        else:
            data = osc_str(b"/wb/play") + osc_str(b",is") + struct.pack(">i", 1) + b"A" * 8000  # unterminated
        c.send_raw(data)
        if i % 200 == 0:
            time.sleep(0.01)
    time.sleep(0.3)
    while c.recv(0.05) is not None:
        pass
    c.send("/wb/ping")
    assert c.wait_for("/wb/pong", 3.0) is not None
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
    t = c.send("/wb/play", 2, "disco")
    fa = c.wait_for("/wb/first_audio", 3.0)
    assert fa is not None
    assert reader.buffered() > 0 or reader.write_index > 0
    reader.detach()
