"""Ring protocol v1: layout, writer/reader invariants, two processes, wrap-around, block sizes."""
from __future__ import annotations

import os
import stat
import struct
import subprocess
import sys
import textwrap
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from plugin_stub import protocol as P
from plugin_stub.protocol import RingError
from dsp import stitch_and_publish
from bridge.core.ring import RingWriter
from bridge.core.writer import splice_into
from plugin_stub.reader import RingReader

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ramp(start, n, ch=2):
    """Frames whose value encodes their absolute index (exact in float32 below 2**24)."""
    idx = np.arange(start, start + n, dtype=np.float64)
    out = np.empty((n, ch), dtype=np.float32)
    out[:, 0] = idx
    if ch > 1:
        out[:, 1] = -idx
    return out


@contextmanager
def writer_and_reader(name, channels, capacity, max_block):
    """A 48 kHz ring ``name`` and a reader attached to it; both closed afterwards."""
    w = RingWriter.open(name, 48000, channels, capacity)
    try:
        r = RingReader(name, max_block=max_block).attach()
        try:
            yield w, r
        finally:
            r.detach()
    finally:
        w.close()


def test_header_layout_matches_the_spec(slot_name):
    w = RingWriter.open(slot_name, 44100, 2, 1 << 12)
    try:
        path = P.shm_path(slot_name)
        assert path == os.path.join(P.shm_dir(), f"wavebridge.{slot_name}")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        raw = open(path, "rb").read(4096)
        assert raw[0:8] == b"WBRING1\0"
        version, data_off, rate, ch = struct.unpack_from("<IIII", raw, 8)
        cap, epoch = struct.unpack_from("<QQ", raw, 24)
        pid, flags = struct.unpack_from("<II", raw, 40)
        assert (version, data_off, rate, ch, cap) == (1, 4096, 44100, 2, 4096)
        assert epoch >= 1 and pid == os.getpid() and flags & 1
        assert os.path.getsize(path) == 4096 + 4096 * 2 * 4
        w.set_playing(True)
        w.append(ramp(0, 100))
        raw = open(path, "rb").read(4096)
        assert struct.unpack_from("<Q", raw, 64)[0] == 100
        assert struct.unpack_from("<I", raw, 44)[0] & 2
        data = np.frombuffer(open(path, "rb").read()[4096:4096 + 800], dtype="<f4").reshape(100, 2)
        assert np.array_equal(data, ramp(0, 100))
    finally:
        w.close()
    assert not os.path.exists(path)


def test_meta_roundtrip_under_seqlock(slot_name):
    import msgpack

    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    try:
        w.set_meta({"slot": 3, "job": 7, "prompt": "jazz trio", "backend": "synth"})
        r = RingReader(slot_name).attach()
        assert r.meta()["prompt"] == "jazz trio"
        raw = open(P.shm_path(slot_name), "rb").read(4096)
        seq, ln = struct.unpack_from("<II", raw, 192)
        assert seq % 2 == 0 and seq > 0
        assert msgpack.unpackb(raw[200:200 + ln])["job"] == 7
        w.set_meta({"prompt": "x" * 10000})  # too big: truncated, still valid
        assert r.meta()["prompt"].startswith("x")
        r.detach()
    finally:
        w.close()


@pytest.mark.parametrize("block", [1, 64, 65, 128, 8192, 8193])
def test_reader_is_block_size_invariant(slot_name, block):
    cap = 1 << 15
    with writer_and_reader(slot_name, 2, cap, block) as (w, r):
        w.set_playing(True)
        total = 3 * cap + 777          # wraps three times
        got = []
        written = 0
        out = np.empty((block, 2), dtype=np.float32)
        rng = np.random.default_rng(block)
        while written < total or r.buffered():
            if written < total:
                n = int(min(rng.integers(1, 5000), total - written, w.capacity - w.buffered()))
                if n:
                    written += w.append(ramp(written, n))
            k = r.read_into(out)
            got.append(out[:k].copy())
            assert not out[k:].any(), "shortfall must be zero-filled"
        got = np.concatenate(got)
        assert np.array_equal(got, ramp(0, total))


def test_underruns_counted_only_while_playing(slot_name):
    with writer_and_reader(slot_name, 1, 1 << 10, 128) as (w, r):
        r.read(128)
        assert r.underrun_frames == 0          # not playing: silence is not an underrun
        w.set_playing(True)
        w.append(np.ones((100, 1), np.float32))
        out = r.read(128)
        assert np.all(out[:100] == 1) and np.all(out[100:] == 0)
        assert r.underrun_frames == 28
        r.read(64)
        assert r.underrun_frames == 92
        assert w.underrun_frames == 92         # the writer sees the reader's counter


def test_epoch_change_resyncs_reader(slot_name):
    with writer_and_reader(slot_name, 2, 1 << 12, 256) as (w, r):
        w.append(ramp(0, 1000))
        r.read(100)
        w.bump_epoch()
        w.append(ramp(1000, 50))
        k = r.read_into(np.empty((256, 2), np.float32))
        assert k == 0 and r.read_index == 1050      # jumped to the live edge
        w.append(ramp(1050, 10))
        assert r.read(10)[0, 0] == 1050


def test_writer_never_overruns_the_reader(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    try:
        assert w.append(ramp(0, 5000)) == 1024
        assert w.append(ramp(1024, 10)) == 0
        assert w.write_index - w.read_index == 1024
    finally:
        w.close()


@contextmanager
def _ring_file(path):
    """Rewrite ``path`` as a mode-0600 file (what a ring of ours looks like from outside)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "wb") as f:
        yield f


def test_bad_segments_raise_ring_error_with_code(slot_name):
    path = P.shm_path(slot_name)
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_missing"
    with open(path, "wb") as f:                 # a plain 0644 file: not a ring we made
        f.write(b"\0" * 8192)
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_mode"
    os.unlink(path)
    with _ring_file(path) as f:
        f.write(b"\0" * 100)
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_size"
    with _ring_file(path) as f:
        f.write(b"NOTARING" + b"\0" * 8192)
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_magic"
    hdr = bytearray(P.pack_fixed(48000, 2, 1024, 1, 1, 1, 0)) + bytearray(4096 - 56)
    struct.pack_into("<I", hdr, 8, 2)
    with _ring_file(path) as f:
        f.write(bytes(hdr) + b"\0" * (1024 * 8))
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_version"
    hdr = bytearray(P.pack_fixed(48000, 2, 1000, 1, 1, 1, 0)) + bytearray(4096 - 56)  # not a power of two
    with _ring_file(path) as f:
        f.write(bytes(hdr) + b"\0" * (1000 * 8))
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_layout"
    hdr = bytearray(P.pack_fixed(48000, 2, 1 << 20, 1, 1, 1, 0)) + bytearray(4096 - 56)  # truncated data
    with _ring_file(path) as f:
        f.write(bytes(hdr) + b"\0" * 64)
    with pytest.raises(RingError) as e:
        RingReader(slot_name).attach()
    assert e.value.code == "ring_size"
    with pytest.raises(RingError) as e:
        P.shm_name("../etc")
    assert e.value.code == "ring_name"


def test_reattach_keeps_mapping_and_bumps_epoch(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    r = RingReader(slot_name).attach()
    w.append(ramp(0, 500))
    ep = r.epoch
    w.close(unlink=False)                       # daemon dies without cleaning up
    assert not r.writer_alive
    w2 = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    try:
        assert not w2.created and w2.epoch == ep + 1
        assert r.writer_alive
        w2.append(ramp(500, 10))
        r.read(4096)                            # resync on the epoch change
        w2.append(ramp(510, 5))
        assert r.read(5)[0, 0] == 510
    finally:
        r.detach()
        w2.close()


def test_a_live_writer_is_never_displaced(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {ROOT!r})
        from bridge.core.ring import RingWriter
        from plugin_stub.protocol import RingError
        try:
            RingWriter.open({slot_name!r}, 48000, 2, 1 << 12)
        except RingError as e:
            print(e.code)
    """)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
        assert out.stdout.strip() == "ring_busy", out.stderr
    finally:
        w.close()


def test_reader_process_exit_does_not_unlink(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {ROOT!r})
        from plugin_stub.reader import RingReader
        r = RingReader({slot_name!r}).attach(); r.read(64)
    """)
    try:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
        assert os.path.exists(P.shm_path(slot_name))
    finally:
        w.close()


def test_two_processes_wrap_many_times(slot_name):
    """Writer and reader in separate processes; the capture must be every frame, in order."""
    cap = 1 << 10
    total = 400_000                               # ≈ 390 wraps of the ring
    writer = textwrap.dedent(f"""
        import sys, time; sys.path.insert(0, {ROOT!r})
        import numpy as np
        from bridge.core.ring import RingWriter
        w = RingWriter.open({slot_name!r}, 48000, 2, {cap})
        print("ready", flush=True)
        sys.stdin.readline()
        w.set_playing(True)
        rng = np.random.default_rng(1)
        done = 0
        while done < {total}:
            n = int(min(rng.integers(1, 700), {total} - done, w.capacity - w.buffered()))
            if n == 0:
                time.sleep(0.0002); continue
            idx = np.arange(done, done + n, dtype=np.float64)
            fr = np.stack([idx, -idx], axis=1).astype(np.float32)
            done += w.append(fr)
        while w.buffered():
            time.sleep(0.001)
        w.close()
    """)
    reader = textwrap.dedent(f"""
        import sys, time; sys.path.insert(0, {ROOT!r})
        import numpy as np
        from plugin_stub.reader import RingReader
        r = RingReader({slot_name!r}, max_block=1000).attach()
        print("attached", flush=True)
        got = np.empty(({total}, 2), np.float32); have = 0
        rng = np.random.default_rng(2)
        out = np.empty((1000, 2), np.float32)
        deadline = time.monotonic() + 60
        while have < {total} and time.monotonic() < deadline:
            b = int(rng.integers(1, 1000))
            k = r.read_into(out[:b])
            got[have:have + k] = out[:k]; have += k
            if k < b:
                time.sleep(0.0001)
        idx = np.arange({total}, dtype=np.float32)
        ok = have == {total} and np.array_equal(got[:, 0], idx) and np.array_equal(got[:, 1], -idx)
        print("OK" if ok else f"BAD have={{have}}", flush=True)
    """)
    wp = subprocess.Popen([sys.executable, "-c", writer], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert wp.stdout.readline().strip() == "ready"
        rp = subprocess.Popen([sys.executable, "-c", reader], stdout=subprocess.PIPE, text=True)
        assert rp.stdout.readline().strip() == "attached"
        wp.stdin.write("go\n")
        wp.stdin.flush()
        out, _ = rp.communicate(timeout=90)
        assert out.strip() == "OK"
        assert wp.wait(timeout=30) == 0
    finally:
        wp.kill()


class RingMachine(RuleBasedStateMachine):
    """Random interleavings of append / read / splice / stop against a model of the stream."""

    CAP = 4096

    def __init__(self):
        super().__init__()
        import secrets

        self.name = "h" + secrets.token_hex(6)
        self.w = RingWriter.open(self.name, 48000, 1, self.CAP)
        self.r = RingReader(self.name, max_block=600).attach()
        self.w.set_playing(True)
        self.next_val = 1.0
        self.expect_underrun = 0
        self.pending = []            # model: values not yet read, in order
        self.spliced_inside = 0

    def teardown(self):
        self.r.detach()
        self.w.close()

    @rule(n=st.integers(1, 1500))
    def append(self, n):
        vals = np.arange(self.next_val, self.next_val + n, dtype=np.float32)[:, None]
        k = self.w.append(vals)
        assert k == min(n, self.CAP - len(self.pending))
        self.pending.extend(vals[:k, 0].tolist())
        self.next_val += n

    @rule(n=st.integers(1, 200))
    def read(self, n):
        out = self.r.read(n)
        k = min(n, len(self.pending))
        assert out[:k, 0].tolist() == self.pending[:k]
        assert not out[k:].any()
        self.expect_underrun += n - k
        del self.pending[:k]

    @precondition(lambda self: len(self.pending) > 0)
    @rule(n=st.integers(1, 300))
    def splice(self, n):
        # the daemon's splice (gain, crossfade, limiter, store): values below the limiter's knee
        # (exact multiples of 2⁻²⁴) pass it unchanged, so the reader must hear exactly these
        vals = np.full((n, 1), -self.next_val / 2 ** 24, dtype=np.float32)
        s = splice_into(self.w, vals, 0, self.w.guard_frames(0.0)).start
        end = self.w.write_index                       # the splice's end, published
        assert s >= self.r.read_index + min(len(self.pending), 2 * self.w.reader_block_frames) or s == self.w.write_index
        self.spliced_inside += int(s < self.r.read_index + len(self.pending))
        keep = s - self.r.read_index
        assert 0 <= keep <= len(self.pending)
        self.pending = self.pending[:keep] + vals[:end - s, 0].tolist()
        self.next_val += 1

    @invariant()
    def indices_stay_in_bounds(self):
        d = self.w.write_index - self.w.read_index
        assert 0 <= d <= self.CAP
        assert d == len(self.pending)
        assert self.r.underrun_frames == self.expect_underrun


RingMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
test_ring_state_machine = RingMachine.TestCase


@given(st.integers(0, 2 ** 40), st.integers(1, 5000))
@settings(max_examples=50, deadline=None)
def test_store_load_roundtrip_at_any_position(start, n):
    import secrets

    name = "p" + secrets.token_hex(6)
    w = RingWriter.open(name, 48000, 2, 1 << 12)
    try:
        n = min(n, w.capacity)
        # below the limiter's knee the daemon's store (dsp.stitch_and_publish) copies exactly
        data = np.random.default_rng(n).uniform(-0.5, 0.5, (n, 2)).astype(np.float32)
        stitch_and_publish(data.T, w.data, start)
        assert np.array_equal(w.load(start, n), data)
    finally:
        w.close()
