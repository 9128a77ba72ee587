"""Rings under attack: other users' files, links/FIFOs/directories at ring paths, garbage in every
header field, segments truncated under the writer, a full /dev/shm, and names reused by someone
else before shutdown (issue #11, the ring half).

Unit tests run in this process on unique ring names. The daemon tests run a real ``wavebridge
serve`` inside a private mount namespace with its own tmpfs on /dev/shm (root + ``unshare``;
skipped with the reason otherwise), so they never touch another daemon's rings; the test reaches
that /dev/shm through ``/proc/<holder>/root``. Anything that could fault (SIGBUS) runs in a
child process, so a regression fails the test instead of killing pytest.
"""
from __future__ import annotations

import errno
import os
import pwd
import random
import secrets
import shutil
import stat
import struct
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from plugin_stub import protocol as P
from plugin_stub.protocol import RingError, RingFault
from bridge.core.ring import RingWriter
from bridge.core.slotstate import Envelope
from bridge.core.writer import fade_ring, splice_into
from dsp.splice import splice_start
from plugin_stub.reader import RingReader
from polling import wait  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
U64, U32 = (1 << 64) - 1, (1 << 32) - 1
HOSTILE_USER = "wbhostile"
PROMPT = "steady house groove with piano and drums, 124 bpm"

# every header field: (name, offset, width)
FIELDS = [("magic", 0, 8), ("version", 8, 4), ("data_offset", 12, 4), ("sample_rate", 16, 4),
          ("channels", 20, 4), ("capacity", 24, 8), ("epoch", 32, 8), ("writer_pid", 40, 4),
          ("flags", 44, 4), ("writer_heartbeat", 48, 8), ("write_index", 64, 8), ("read_index", 128, 8),
          ("underrun_frames", 136, 8), ("reader_heartbeat", 144, 8), ("reader_sample_rate", 152, 4),
          ("reader_block_frames", 156, 4), ("reader_pid", 160, 4), ("meta_seq", 192, 4), ("meta_len", 196, 4)]
VALUES = {"zero": lambda w, rng: 0, "minus-one": lambda w, rng: (1 << (8 * w)) - 1,   # 2⁶⁴−1 / 2³²−1
          "high-bit": lambda w, rng: 1 << (8 * w - 1), "random": lambda w, rng: rng.getrandbits(8 * w)}


def ramp(start, n, ch=2):
    idx = np.arange(start, start + n, dtype=np.float64)
    return np.stack([idx, -idx], axis=1).astype(np.float32)[:, :ch] / 1e6


def stop_fade(w, frames):
    """The daemon's stop: a ``frames``-long fade from the splice point, the stream cut at its end."""
    at = splice_start(w.read_index, w.write_index, w.guard_frames())
    fade_ring(w, None, Envelope.fade_out(at, frames), at)


def poke(buf, off, width, value):
    """Store ``value`` into a mapped header as a little-endian unsigned field."""
    buf[off:off + width] = int(value).to_bytes(width, "little")




def run_child(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (our tree first on the path); a fatal signal shows as rc < 0."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def hostile_uid() -> int:
    """The uid of another local user (created with useradd when missing). Root only."""
    if os.geteuid() != 0:
        pytest.skip("needs root: only root can make a file owned by another user (CI runs as root)")
    try:
        return pwd.getpwnam(HOSTILE_USER).pw_uid
    except KeyError:
        pass
    if shutil.which("useradd"):
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", HOSTILE_USER],
                       capture_output=True, timeout=30)
        try:
            return pwd.getpwnam(HOSTILE_USER).pw_uid
        except KeyError:
            pass
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no other user: useradd failed and there is no 'nobody'")


def valid_ring_bytes(rate=48000, ch=2, cap=1 << 12, pid=2 ** 22 + 7, flags=1, hb=0) -> bytes:
    hdr = bytearray(P.pack_fixed(rate, ch, cap, 5, pid, flags, hb)) + bytearray(P.DATA_OFFSET - 56)
    return bytes(hdr) + bytes(cap * ch * 4)


def plant_foreign_ring(path, uid, **kw) -> bytes:
    """A valid-looking ring owned by ``uid``, mode 0666, a dead writer pid (the issue's attack)."""
    data = valid_ring_bytes(**kw)
    with open(path, "wb") as f:
        f.write(data)
    os.chown(path, uid, uid)
    os.chmod(path, 0o666)
    return data


def snapshot(path):
    st = os.lstat(path)
    body = os.readlink(path) if stat.S_ISLNK(st.st_mode) else (
        open(path, "rb").read() if stat.S_ISREG(st.st_mode) else None)
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_ino, body)


# ==================================================================== unit: odd files at ring paths
def _make_odd(kind, path, tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"precious" * 1000)
    if kind == "symlink":
        os.symlink(target, path)
    elif kind == "symlink-to-ring":
        os.symlink(tmp_path / "elsewhere", path)
        with open(tmp_path / "elsewhere", "wb") as f:
            f.write(valid_ring_bytes())
        os.chmod(tmp_path / "elsewhere", 0o600)
    elif kind == "dangling":
        os.symlink(tmp_path / "nowhere", path)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        os.mkdir(path, 0o700)
    return target


@pytest.mark.parametrize("kind", ["symlink", "symlink-to-ring", "dangling", "fifo", "directory"])
def test_links_fifos_and_directories_at_a_ring_path_are_refused(slot_name, tmp_path, kind):
    path = P.shm_path(slot_name)
    target = _make_odd(kind, path, tmp_path)
    before = snapshot(path)
    side = {p: snapshot(p) for p in tmp_path.iterdir()}
    try:
        with pytest.raises(RingError) as e:
            RingWriter.open(slot_name, 48000, 2, 1 << 12)
        assert e.value.code == "ring_type", e.value
        assert path in e.value.message and "refusing" in e.value.message
        assert "Errno" not in str(e.value)                      # one clear sentence, not a bare errno
        with pytest.raises(RingError) as e:                      # and the reader (a FIFO must not block it)
            RingReader(slot_name).attach()
        assert e.value.code in ("ring_type", "ring_missing")
        assert snapshot(path) == before                          # untouched
        assert {p: snapshot(p) for p in tmp_path.iterdir()} == side
        assert target.read_bytes() == b"precious" * 1000         # nothing written through a link
    finally:
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        elif os.path.lexists(path):
            os.unlink(path)


def test_another_users_ring_is_never_adopted_or_touched(slot_name):
    uid = hostile_uid()
    path = P.shm_path(slot_name)
    data = plant_foreign_ring(path, uid)
    before = snapshot(path)
    try:
        with pytest.raises(RingError) as e:
            RingWriter.open(slot_name, 48000, 2, 1 << 12)
        assert e.value.code == "ring_owner"
        assert f"uid {uid}" in e.value.message and path in e.value.message
        with pytest.raises(RingError) as e:                      # a reader would hear the attacker's audio
            RingReader(slot_name).attach()
        assert e.value.code == "ring_owner"
        assert snapshot(path) == before and open(path, "rb").read() == data
    finally:
        os.unlink(path)


def test_a_ring_of_ours_with_another_mode_is_replaced_not_adopted(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    w.close(unlink=False)
    path = P.shm_path(slot_name)
    os.chmod(path, 0o666)                  # someone may have opened it while it was readable
    ino = os.stat(path).st_ino
    keep = os.open(path, os.O_RDONLY)      # (that someone still holds the old inode)
    try:
        w2 = RingWriter.open(slot_name, 48000, 2, 1 << 12)
        try:
            st = os.stat(path)
            assert w2.created and st.st_ino != ino and stat.S_IMODE(st.st_mode) == 0o600
        finally:
            w2.close()
    finally:
        os.close(keep)


def test_a_stale_ring_of_ours_with_a_wrong_size_is_replaced(slot_name):
    path = P.shm_path(slot_name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, valid_ring_bytes(cap=1 << 10))
    os.close(fd)
    w = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    try:
        assert w.created and os.path.getsize(path) == P.ring_bytes(1 << 12, 2)
    finally:
        w.close()


# ==================================================================== unit: garbage in the header
@pytest.mark.parametrize("value", sorted(VALUES))
def test_every_header_field_with_garbage_neither_crashes_nor_wedges_the_writer(slot_name, value):
    rng = random.Random(11)
    cap = 1 << 12
    w = RingWriter.open(slot_name, 48000, 2, cap)
    r = RingReader(slot_name, max_block=256).attach()
    try:
        w.set_playing(True)
        w.set_meta({"prompt": "x"})
        reports = []
        for name, off, width in FIELDS:
            v = VALUES[value](width, rng)
            poke(w._mm, off, width, v)
            for _ in range(3):                   # what the engine does to a playing slot
                w._checked_ns = 0                # (the engine's loop checks every 50 ms)
                try:
                    w.check()
                except RingFault as e:
                    assert not e.fatal, e        # a field is never fatal: corrected and reported
                    reports.append(e)
                assert 0 <= w.buffered() <= cap and 0 <= cap - w.buffered() <= cap
                assert 0 < w.guard_frames() <= cap
                w.append(ramp(0, 300))
                splice_into(w, ramp(0, 200), 64, w.guard_frames(), material=np.zeros((64, 2), np.float32))
                stop_fade(w, 64)
                stop_fade(w, 32)
                w.set_meta({"prompt": f"after {name}", "job": 1})
                out = r.read(256)
                assert np.isfinite(out).all()
                assert isinstance(r.meta(), dict)
                _ = (w.reader_sample_rate, w.reader_heartbeat_ns, w.underrun_frames, r.writer_alive, r.buffered())
            assert w.write_index < P.MAX_INDEX and w.epoch < P.MAX_INDEX
            hdr = bytes(w._mm[:P.OFF_META])
            # writer-owned fields are the writer's again
            assert hdr[0:8] == P.MAGIC
            assert struct.unpack_from("<IIIIQQ", hdr, 8) == (1, 4096, 48000, 2, cap, w.epoch)
            assert struct.unpack_from("<Q", hdr, 64)[0] == w.write_index
            assert struct.unpack_from("<I", hdr, 192)[0] % 2 == 0
            poke(w._mm, off, width, v)           # leave it there for the next round and the re-attach
        assert reports and all(e.code.startswith("ring_") for e in reports)   # said so, once per kind
        # finally the whole header as garbage, then a daemon restart re-attaches it
        w.close(unlink=False)
        for name, off, width in FIELDS:
            if name not in ("magic", "version", "data_offset", "capacity", "channels", "sample_rate"):
                poke(r._mm, off, width, VALUES[value](width, rng))
        w2 = RingWriter.open(slot_name, 48000, 2, cap)
        try:
            assert w2.write_index < P.MAX_INDEX and 0 < w2.epoch < P.MAX_INDEX
            w2.set_meta({"prompt": "restarted"})
            w2.set_playing(True)
            w2.append(ramp(0, 500))
            r.read(256)                          # resync
            w2.append(ramp(0, 100))
            assert r.read(100).any() and r.meta().get("prompt") == "restarted"
        finally:
            w2.close()
    finally:
        r.detach()
        w.close()


@pytest.mark.parametrize("field,value", [("write_index", U64), ("epoch", U64), ("meta_seq", U32),
                                         ("writer_pid", U32), ("writer_heartbeat", U64), ("read_index", U64),
                                         ("writer_pid", 0)])
def test_a_bricking_value_left_in_a_dead_ring_is_reset_on_reattach(slot_name, field, value):
    off, width = {n: (o, wd) for n, o, wd in FIELDS}[field]
    w = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    w.append(ramp(0, 100))
    poke(w._mm, off, width, value)
    old_epoch = int.from_bytes(w._mm[32:40], "little")
    w.close(unlink=False)                        # the daemon died; the garbage stays
    w2 = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    r = RingReader(slot_name).attach()
    try:
        assert not w2.created                    # re-attached, the readers' mapping kept
        assert w2.epoch != old_epoch and w2.epoch < P.MAX_INDEX and w2.write_index < P.MAX_INDEX
        for i in range(3):
            w2.set_meta({"prompt": f"p{i}"})     # meta_seq=0xFFFFFFFF once looped on OverflowError
        w2.append(ramp(0, 64))
        r.read(64)
        w2.append(ramp(0, 64))
        assert r.read(64).any() and r.meta()["prompt"] == "p2"
    finally:
        r.detach()
        w2.close()


def test_meta_seq_wraps_instead_of_overflowing(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    try:
        w._seq = U32 - 1
        w.set_meta({"prompt": "a"})
        w.set_meta({"prompt": "b"})
        seq = int.from_bytes(w._mm[192:196], "little")
        assert seq % 2 == 0 and seq < 4
        with RingReader(slot_name) as r:
            assert r.meta()["prompt"] == "b"
    finally:
        w.close()


def test_the_reader_bounds_what_it_reads(slot_name):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    r = RingReader(slot_name, max_block=128).attach()
    try:
        w.set_playing(True)
        poke(w._mm, 136, 8, U64)                 # underrun_frames at 2⁶⁴−1: wraps, no OverflowError
        r.read(128)
        assert r.underrun_frames < 128
        poke(w._mm, 48, 8, U64)                  # a writer heartbeat from the future is not "alive"
        assert not r.writer_alive
        poke(w._mm, 64, 8, U64)                  # write_index 2⁶⁴−1: resync, silence, no exception
        assert not r.read(128).any()
        w._checked_ns = 0
        with pytest.raises(RingFault) as e:      # the writer puts its write_index back, and says so
            w.check()
        assert not e.value.fatal and "write_index" in str(e.value)
        w.append(ramp(1, 64))
        r.read(128)
        w.append(ramp(1, 64))
        assert r.read(64).any()
    finally:
        r.detach()
        w.close()


# ==================================================================== unit: shrink, ENOSPC, unlink
def test_a_ring_truncated_under_the_writer_is_retired_without_sigbus(slot_name):
    out = run_child(f"""
        import os, numpy as np
        from bridge.core.ring import RingWriter
        from bridge.core.slotstate import Envelope
        from bridge.core.writer import fade_ring, splice_into
        from dsp.splice import splice_start
        from plugin_stub.protocol import RingFault, shm_path
        from plugin_stub.reader import RingReader
        w = RingWriter.open({slot_name!r}, 48000, 2, 1 << 12)
        r = RingReader({slot_name!r}, max_block=128).attach()
        w.set_playing(True); w.append(np.ones((500, 2), np.float32))
        ino = os.stat(shm_path({slot_name!r})).st_ino
        for size in (4096, 0):
            os.truncate(shm_path({slot_name!r}), size)
            assert not r.check() and "shrank" in r.broken     # the reader switched to silence
            assert not r.read(128).any()
            w.append(np.ones((100, 2), np.float32))          # no SIGBUS: the writer retires the mapping
            splice_into(w, np.ones((100, 2), np.float32), 32, w.guard_frames())
            at = splice_start(w.read_index, w.write_index, w.guard_frames())
            fade_ring(w, None, Envelope.fade_out(at, 10), at); w.set_meta({{"p": 1}}); w.heartbeat()
            try:
                w.check(); raise SystemExit("no fault reported")
            except RingFault as e:
                assert e.fatal and "shrank" in e.message, e
            w.check()                                        # reported once
            assert w.fault is not None                       # on private memory
            w._last_try = 0
            assert w.recover() and w.fault is None                    # a fresh ring of the full size
            st = os.stat(shm_path({slot_name!r}))
            assert st.st_ino != ino and st.st_size == w.size, st
            ino = st.st_ino
            r.detach(); r = RingReader({slot_name!r}, max_block=128).attach()
            w.append(np.ones((64, 2), np.float32)); r.read(128)
            w.append(np.ones((64, 2), np.float32)); assert r.read(64).any()
        r.detach(); w.close()
        assert not os.path.exists(shm_path({slot_name!r}))
        print("ok")
    """)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), (out.returncode, out.stdout, out.stderr)


def test_a_full_dev_shm_is_ring_space_for_that_slot(slot_name, monkeypatch):
    def full(fd, off, n):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(RingError) as e:
        RingWriter.open(slot_name, 48000, 2, 1 << 12)
    assert e.value.code == "ring_space" and P.shm_dir() in e.value.message
    assert not os.path.lexists(P.shm_path(slot_name))       # the half-made ring is gone


def test_close_unlinks_only_the_inode_we_made(slot_name, tmp_path):
    path = P.shm_path(slot_name)
    for replacement in ("ours", "symlink", "foreign"):
        w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
        os.unlink(path)                          # the name was freed …
        if replacement == "ours":                # … and someone made another ring there
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, b"another daemon's ring")
            os.close(fd)
        elif replacement == "symlink":
            os.symlink(tmp_path / "x", path)
        else:
            if os.geteuid() != 0:
                w.close()
                continue
            plant_foreign_ring(path, hostile_uid())
        before = snapshot(path)
        w.close()
        assert os.path.lexists(path) and snapshot(path) == before, replacement
        os.unlink(path)


def test_a_refused_slot_does_not_stop_the_daemon_and_recovers(tmp_path):
    """In-process daemon: one slot's path is a FIFO, the other plays; once the FIFO is gone the
    refused slot's next play gets a ring."""
    import queue

    from bridge.core.commands import Command
    from bridge.core.daemon import Config, Daemon
    from engine.synth.backend import SynthBackend

    bad, good = "t" + secrets.token_hex(5), "t" + secrets.token_hex(5)
    os.mkfifo(P.shm_path(bad), 0o600)
    events: queue.Queue = queue.Queue()
    d = Daemon(Config(slot_names=[bad, good], slots=2, target_s=0.3), emit=events.put, backend=SynthBackend()).open()
    try:
        assert d.slots[bad].state == "error" and d.slots[bad].ring.fault is not None
        assert stat.S_ISFIFO(os.lstat(P.shm_path(bad)).st_mode)
        rows = {r["slot"]: r for r in d.status()}
        assert rows[bad]["state"] == "error"
        d.submit(Command("play", slot=bad, prompt="a refused slot"))
        d.submit(Command("play", slot=good, prompt=PROMPT))
        errs = []
        assert wait(lambda: (errs.extend(e for e in iter_events(events) if e.kind == "error"), errs)[1], 3)
        assert errs[0].slot == bad and errs[0].code == "ring_type"
        assert wait(lambda: d.slots[good].ring.buffered() > 0, 3)
        os.unlink(P.shm_path(bad))
        time.sleep(1.1)                           # retries are at most once a second
        d.submit(Command("play", slot=bad, prompt="now it has a ring"))
        assert wait(lambda: d.slots[bad].ring.fault is None and d.slots[bad].ring.buffered() > 0, 3)
        assert stat.S_ISREG(os.lstat(P.shm_path(bad)).st_mode)
    finally:
        d.close()
        for n in (bad, good):
            if os.path.lexists(P.shm_path(n)):
                os.unlink(P.shm_path(n))
    assert not os.path.lexists(P.shm_path(good))


def iter_events(q):
    import queue

    while True:
        try:
            yield q.get_nowait()
        except queue.Empty:
            return


# ==================================================================== daemons in a private /dev/shm
class PrivateShm:
    """A mount namespace with its own tmpfs on /dev/shm, held open by a sleeping process."""

    def __init__(self, size: str):
        if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
            pytest.skip("needs root with unshare/nsenter to give the daemon a private /dev/shm "
                        "(so the test never touches another daemon's rings)")
        self.holder = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount -t tmpfs -o size={size},mode=1777 wbtest /dev/shm && echo mounted && exec sleep 3600"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.holder.stdout.readline()
        if "mounted" not in line:
            err = self.holder.stderr.read() if self.holder.poll() is not None else ""
            self.close()
            pytest.skip(f"cannot mount a private tmpfs on /dev/shm here: {err.strip() or line.strip()}")
        self.dir = f"/proc/{self.holder.pid}/root/dev/shm"
        self.prefix = ["nsenter", "-t", str(self.holder.pid), "-m", "--"]

    def path(self, slot) -> str:
        return os.path.join(self.dir, P.shm_name(slot))

    def names(self) -> set[str]:
        return set(os.listdir(self.dir))

    def close(self):
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait()


@pytest.fixture
def private_shm(monkeypatch):
    made = []

    def make(size="64M"):
        s = PrivateShm(size)
        made.append(s)
        monkeypatch.delenv(P.SHM_DIR_ENV, raising=False)   # not the session's private ring directory:
        monkeypatch.setattr(P, "SHM_DIR", s.dir)     # our readers look in the namespace's /dev/shm too
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture
def nsdaemon(tmp_path):
    """Start ``wavebridge serve`` inside a private /dev/shm, in an empty working directory."""
    from bridge.ops.demo import DaemonProcess

    procs = []
    cwd = tmp_path / "cwd"
    cwd.mkdir()

    def start(shm: PrivateShm, *args):
        env = dict(os.environ, PYTHONPATH=ROOT, HOME=str(tmp_path / "home"))
        env.pop(P.SHM_DIR_ENV, None)                 # its rings go in the namespace's own /dev/shm
        p = DaemonProcess("--metrics-port", "off", "--no-resume", *args, env=env, prefix=shm.prefix, cwd=str(cwd))
        procs.append(p)
        return p

    start.cwd = cwd
    yield start
    for p in procs:
        p.kill()
    assert not os.listdir(cwd), f"the daemon wrote files in its working directory: {os.listdir(cwd)}"
    assert not os.path.exists(tmp_path / "home"), "the daemon wrote into its home directory"


class Listener:
    """A paced reader on one slot in its own thread (a DAW track)."""

    def __init__(self, slot, seconds=30.0):
        from plugin_stub.player import PacedRecorder, attach_when_ready

        self.reader = attach_when_ready(slot, max_block=128, timeout=5)
        self.rec = PacedRecorder(self.reader, seconds, 128)
        self.th = threading.Thread(target=self.rec.run, daemon=True)
        self.th.start()

    def real_frames_since(self, t: float) -> int:
        k = self.rec.blocks_done
        sel = self.rec.times[:k] >= t
        return int(self.rec.real[:k][sel].sum())

    def finish(self):
        self.rec.stop()
        self.th.join(5)
        audio = self.rec.captured
        assert np.isfinite(audio).all() and np.abs(audio).max() <= 1.0
        self.reader.detach()


def alive(d, c) -> bool:
    """The daemon process runs and answers /wb/ping."""
    if d.proc.poll() is not None:
        return False
    c.send("/wb/ping")
    return c.wait_for("/wb/pong", 3.0) is not None


def keeps_playing(listener: Listener, since: float, seconds: float = 1.0) -> bool:
    """At least half of ``seconds`` of real audio reached the read head after ``since``."""
    return wait(lambda: listener.real_frames_since(since) >= listener.reader.sample_rate * seconds / 2,
                seconds + 4.0)


def no_fatal(d):
    text = "".join(d.lines + d.err_lines)
    assert "Fatal Python error" not in text and "Traceback" not in text, text[-3000:]


def test_daemon_refuses_hostile_ring_paths_and_plays_the_other_slots(private_shm, nsdaemon, osc_client, tmp_path):
    uid = hostile_uid()
    shm = private_shm()
    target = tmp_path / "target"
    target.write_bytes(b"precious")
    foreign = plant_foreign_ring(shm.path(1), uid, cap=1 << 17)       # the shape the daemon uses
    os.symlink(target, shm.path(2))
    os.mkfifo(shm.path(3), 0o600)
    os.mkdir(shm.path(4))
    os.symlink(tmp_path / "nowhere", shm.path(5))
    planted = {n: snapshot(shm.path(n)) for n in range(1, 6)}
    d = nsdaemon(shm, "--slots", "6")
    c = osc_client(d.host, d.port)
    try:
        assert alive(d, c)
        time.sleep(0.3)
        refusals = [ln for ln in d.err_lines if "refused" in ln]
        for n in range(1, 6):
            mine = [ln for ln in refusals if f"slot {n} refused" in ln]
            assert len(mine) == 1 and "Errno" not in mine[0], refusals      # one clear line each
        assert "belongs to" in "".join(refusals) and "FIFO" in "".join(refusals)
        host = Listener(6)
        try:
            t0 = c.send("/wb/play", 6, PROMPT)
            assert c.wait_for("/wb/first_audio", 5.0, match=lambda a: a[0] == 6)
            for n, code in ((1, "ring_owner"), (2, "ring_type"), (3, "ring_type")):
                c.send("/wb/play", n, PROMPT)
                err = c.wait_for("/wb/error", 3.0, match=lambda a, n=n: a[0] == n)
                assert err is not None and err[1] == code, err
            c.send("/wb/status")
            row = c.wait_for("/wb/slot", 2.0, match=lambda a: a[0] == 1)
            assert row is not None and row[1] == "error"
            assert keeps_playing(host, t0)
            assert alive(d, c)
        finally:
            host.finish()
        assert {n: snapshot(shm.path(n)) for n in range(1, 6)} == planted    # untouched
        assert open(shm.path(1), "rb").read() == foreign and target.read_bytes() == b"precious"
        assert d.terminate()[0] == 0
    finally:
        d.kill()
    no_fatal(d)
    assert shm.names() == {f"wavebridge.{n}" for n in range(1, 6)}           # ours removed, theirs kept


@pytest.mark.parametrize("value", sorted(VALUES))
def test_daemon_survives_garbage_in_every_header_field_and_restarts(private_shm, nsdaemon, osc_client, value):
    import mmap

    rng = random.Random(7)
    shm = private_shm()
    d = nsdaemon(shm, "--slots", "2")
    c = osc_client(d.host, d.port)
    host = Listener(2)
    try:
        c.send("/wb/play", 2, PROMPT)
        c.send("/wb/play", 1, "dark ambient pads, 70 bpm")
        assert c.wait_for("/wb/first_audio", 5.0)
        t0 = time.monotonic()
        fd = os.open(shm.path(1), os.O_RDWR)
        mm = mmap.mmap(fd, P.DATA_OFFSET)
        try:
            for name, off, width in FIELDS:
                poke(mm, off, width, VALUES[value](width, rng))
                if name in ("meta_seq", "reader_block_frames", "read_index", "write_index"):
                    c.send("/wb/play", 1, f"after {name}")       # a play rewrites the metadata, splices
                time.sleep(0.1)
            assert alive(d, c), f"daemon died after garbage in the header: {d.err_lines[-5:]}"
            c.send("/wb/stop", 1)
            rows, _ = c.status(timeout=3.0)               # pages: slot 2 need not be on the first
            assert any(r[0] == 2 for r in rows)
            assert keeps_playing(host, t0), "the other slot must keep playing"
            # the slot itself plays again (a fresh play, a fresh reader)
            c.send("/wb/play", 1, PROMPT)
            assert c.wait_for("/wb/started", 3.0, match=lambda a: a[0] == 1)
            one = Listener(1, seconds=10)
            try:
                t1 = time.monotonic()
                assert keeps_playing(one, t1), "the poked slot must recover"
            finally:
                one.finish()
            # the daemon dies with garbage everywhere in the header: the next one must start and play
            d.proc.kill()
            d.proc.wait(5)
            for name, off, width in FIELDS:
                poke(mm, off, width, VALUES[value](width, rng) if name != "magic" else
                     int.from_bytes(P.MAGIC, "little"))
        finally:
            mm.close()
            os.close(fd)
    finally:
        host.finish()
    d2 = nsdaemon(shm, "--slots", "2")
    c2 = osc_client(d2.host, d2.port)
    assert alive(d2, c2)
    c2.send("/wb/play", 1, PROMPT)
    assert c2.wait_for("/wb/first_audio", 5.0, match=lambda a: a[0] == 1)
    one = Listener(1, seconds=10)
    try:
        assert keeps_playing(one, time.monotonic())
    finally:
        one.finish()
    assert d2.terminate()[0] == 0
    no_fatal(d2)
    assert shm.names() == set()


@pytest.mark.parametrize("size", [0, 4096, 1 << 19])
def test_daemon_survives_a_ring_truncated_while_playing(private_shm, nsdaemon, osc_client, size):
    shm = private_shm()
    d = nsdaemon(shm, "--slots", "2")
    c = osc_client(d.host, d.port)
    host = Listener(2)
    try:
        c.send("/wb/play", 2, PROMPT)
        c.send("/wb/play", 1, PROMPT)
        assert c.wait_for("/wb/first_audio", 5.0)
        time.sleep(0.5)
        ino = os.stat(shm.path(1)).st_ino
        full = os.stat(shm.path(1)).st_size
        t0 = time.monotonic()
        os.truncate(shm.path(1), size)                     # no reader maps slot 1: it would fault too
        err = c.wait_for("/wb/error", 3.0, match=lambda a: a[0] == 1)
        assert err is not None and err[1] == "ring_fault" and "shrank" in err[2], err
        assert alive(d, c), f"daemon died: rc={d.proc.poll()} {d.err_lines[-5:]}"
        assert keeps_playing(host, t0)
        c.send("/wb/status")
        row = c.wait_for("/wb/slot", 2.0, match=lambda a: a[0] == 1)
        assert row is not None and row[1] == "error"
        c.send("/wb/play", 1, PROMPT)                      # the slot recovers with a fresh ring
        assert c.wait_for("/wb/first_audio", 5.0, match=lambda a: a[0] == 1)
        st = os.stat(shm.path(1))
        assert st.st_ino != ino and st.st_size == full
        one = Listener(1, seconds=10)
        try:
            assert keeps_playing(one, time.monotonic())
        finally:
            one.finish()
        assert alive(d, c)
    finally:
        host.finish()
    assert d.terminate()[0] == 0
    no_fatal(d)
    assert shm.names() == set()


def test_daemon_with_a_1mb_dev_shm_refuses_what_does_not_fit(private_shm, nsdaemon, osc_client):
    shm = private_shm("1M")
    # --target-s 0.2: 64 Ki-frame rings (516 KiB): slot 1 fits, slots 2 and 3 do not
    d = nsdaemon(shm, "--slots", "3", "--target-s", "0.2")
    c = osc_client(d.host, d.port)
    try:
        assert alive(d, c)
        space = [ln for ln in d.err_lines if "refused" in ln and "no room" in ln]
        assert sorted(ln.split("slot ")[1].split()[0] for ln in space) == ["2", "3"], d.err_lines
        assert shm.names() == {"wavebridge.1"}              # no half-made rings left behind
        host = Listener(1)
        try:
            t0 = c.send("/wb/play", 1, PROMPT)
            assert c.wait_for("/wb/first_audio", 5.0, match=lambda a: a[0] == 1)
            c.send("/wb/play", 2, PROMPT)
            err = c.wait_for("/wb/error", 3.0, match=lambda a: a[0] == 2)
            assert err is not None and err[1] == "ring_space", err
            assert keeps_playing(host, t0)
            assert alive(d, c)
        finally:
            host.finish()
        assert d.terminate()[0] == 0
    finally:
        d.kill()
    no_fatal(d)
    assert shm.names() == set()


def test_shutdown_leaves_rings_made_by_others_after_ours_were_freed(private_shm, nsdaemon, osc_client, tmp_path):
    shm = private_shm()
    d = nsdaemon(shm, "--slots", "3")
    c = osc_client(d.host, d.port)
    host = None
    try:
        c.send("/wb/play", 1, PROMPT)
        c.send("/wb/play", 3, PROMPT)
        assert c.wait_for("/wb/first_audio", 5.0)
        host = Listener(3)
        t0 = time.monotonic()
        for n in (1, 2):
            os.unlink(shm.path(n))                          # the names are freed …
        if os.geteuid() == 0:                               # … another user's ring, and a link
            plant_foreign_ring(shm.path(1), hostile_uid())
        else:
            with open(shm.path(1), "wb") as f:
                f.write(valid_ring_bytes())
        os.symlink(tmp_path / "x", shm.path(2))
        kept = {n: snapshot(shm.path(n)) for n in (1, 2)}
        assert alive(d, c)
        assert keeps_playing(host, t0)
        host.finish()
        host = None
        assert d.terminate()[0] == 0
    finally:
        if host is not None:
            host.finish()
        d.kill()
    no_fatal(d)
    assert {n: snapshot(shm.path(n)) for n in (1, 2)} == kept
    assert shm.names() == {"wavebridge.1", "wavebridge.2"}   # slot 3 (still ours) was removed


def test_a_hard_linked_ring_is_replaced_and_the_other_name_untouched(slot_name, tmp_path):
    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    w.close(unlink=False)
    path = P.shm_path(slot_name)
    other = os.path.join(P.shm_dir(), "wbtest-link-" + slot_name)
    os.link(path, other)                        # the same inode under a second name
    try:
        before = snapshot(other)
        w2 = RingWriter.open(slot_name, 48000, 2, 1 << 10)
        try:
            assert w2.created and os.stat(path).st_ino != before[3]
            assert snapshot(other)[:4] == (before[0], before[1], before[2], before[3])
            assert os.stat(other).st_nlink == 1  # only our name was removed
        finally:
            w2.close()
    finally:
        os.unlink(other)


# ==================================================================== the C reader (LV2 stub)
C_HARNESS = r"""
#include "wavebridge_stub.c"
int main(int argc, char** argv) {
    Ring* r = argc > 1 ? ring_open(private_dir(getenv("WAVEBRIDGE_SHM_DIR")), argv[1], 1, false, 0, 0, 48000)
                       : NULL;
    puts(r ? "attached" : "refused");
    return 0;
}
"""


@pytest.fixture(scope="module")
def c_ring_open(tmp_path_factory):
    """A tiny program that calls the LV2 stub's own ring_open() on a shm name (in $WAVEBRIDGE_SHM_DIR
    when set, as the plugin does)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("cstub")
    (d / "h.c").write_text(C_HARNESS)
    exe = d / "ring_open"
    out = subprocess.run([cc, "-std=gnu11", "-O1", "-I", os.path.join(ROOT, "plugin_stub", "lv2"), "-o", str(exe),
                          str(d / "h.c"), "-lrt", "-lm"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        pytest.skip(f"cannot build the stub harness (LV2 headers missing?): {out.stderr[-300:]}")
    return lambda name: subprocess.run([str(exe), "/" + P.shm_name(name)], capture_output=True, text=True,
                                       timeout=30).stdout.strip()


def test_the_c_stub_attaches_only_our_own_0600_rings(slot_name, tmp_path, c_ring_open):
    path = P.shm_path(slot_name)
    w = RingWriter.open(slot_name, 48000, 2, 1 << 10)
    try:
        assert c_ring_open(slot_name) == "attached"
    finally:
        w.close()
    data = valid_ring_bytes(cap=1 << 10)
    with open(path, "wb") as f:                 # a 0644 file, ours: not a ring we made
        f.write(data)
    os.chmod(path, 0o644)
    assert c_ring_open(slot_name) == "refused"
    os.unlink(path)
    (tmp_path / "ring").write_bytes(data)
    os.chmod(tmp_path / "ring", 0o600)
    os.symlink(tmp_path / "ring", path)
    assert c_ring_open(slot_name) == "refused"  # (O_NOFOLLOW, as shm_open's)
    os.unlink(path)
    if os.geteuid() == 0:
        plant_foreign_ring(path, hostile_uid(), cap=1 << 10)
        assert c_ring_open(slot_name) == "refused"
        os.chmod(path, 0o600)
        assert c_ring_open(slot_name) == "refused"   # another user's, even at 0600


def test_random_header_writes_between_random_ring_operations(slot_name):
    """A seeded fuzz: any field, any value, between any writer and reader operations — only
    non-fatal RingFault reports, audio stays finite, the writer's own fields come back."""
    rng = random.Random(20261201)
    cap = 1 << 11
    w = RingWriter.open(slot_name, 48000, 2, cap)
    r = RingReader(slot_name, max_block=512).attach()
    out = np.zeros((512, 2), np.float32)
    reports = 0
    try:
        w.set_playing(True)
        for i in range(2000):
            if rng.random() < 0.3:
                _, off, width = rng.choice(FIELDS)
                poke(w._mm, off, width, rng.choice([0, (1 << (8 * width)) - 1, rng.getrandbits(8 * width),
                                                    1 << (8 * width - 1)]))
            op = rng.randrange(8)
            n = rng.randrange(0, 700)
            if op == 0:
                assert 0 <= w.append(ramp(i, n)) <= n
            elif op == 1:
                splice_into(w, ramp(i, max(1, n)), rng.randrange(0, 128), w.guard_frames())
            elif op == 2:
                stop_fade(w, rng.randrange(1, 256))
            elif op == 3:
                stop_fade(w, rng.randrange(1, 256))
            elif op == 4:
                w.set_meta({"prompt": "p" * rng.randrange(0, 5000), "i": i})
            elif op == 5:
                w._checked_ns = 0
                try:
                    w.check()
                except RingFault as e:
                    assert not e.fatal
                    reports += 1
            else:
                k = r.read_into(out[:rng.randrange(1, 513)])
                assert 0 <= k <= 512 and np.isfinite(out).all()
            assert 0 <= w.buffered() <= 2 * cap and w.write_index < P.MAX_INDEX and w.epoch < P.MAX_INDEX
            assert 0 <= w.reader_sample_rate <= P.MAX_RATE and 0 <= w.reader_block_frames <= cap // 8
            r.meta()
        assert reports > 0
        w._checked_ns = 0
        try:
            w.check()
        except RingFault:
            pass
        hdr = bytes(w._mm[:200])
        assert hdr[:8] == P.MAGIC and struct.unpack_from("<Q", hdr, 64)[0] == w.write_index
        assert struct.unpack_from("<Q", hdr, 32)[0] == w.epoch
    finally:
        r.detach()
        w.close()
