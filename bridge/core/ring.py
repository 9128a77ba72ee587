"""RingWriter: the daemon's side of ring protocol v1 (``docs/ring-protocol.md``).

One writer per slot. The engine thread (``[engine]``) stores audio, publishes ``write_index``
and splices; a heartbeat thread refreshes ``writer_heartbeat_ns``; the control thread
(``[control]``) only reads counters for status. Stores go through NumPy views of the mapping:
an aligned 8-byte store is a single ``mov`` and x86-64 keeps stores in program order (TSO), so
storing the audio and then ``write_index`` is a release publish there. On weakly ordered CPUs
(ARM) a release fence would be needed before the index store; CPython offers none, so the
writer is documented as x86-64-only for ordering purposes.

Segments are opened with ``os.open`` on ``/dev/shm`` rather than ``multiprocessing``'s
``SharedMemory`` so no resource tracker ever unlinks them behind our back.

Ownership and hostile rings. Shared memory is writable by whoever maps it, so nothing read back
from it is trusted:

- Create is ``O_CREAT|O_EXCL|O_NOFOLLOW``, mode 0600, the pages reserved with
  ``posix_fallocate`` (a full ``/dev/shm`` is ``ring_space`` for that slot, never a SIGBUS
  later). Re-attach opens with ``O_NOFOLLOW`` and checks the opened descriptor: a regular file,
  ours, mode 0600, exactly the expected size. A foreign or odd file refuses the slot (one
  ``RingError`` with a clear message); one of ours in a bad state is replaced.
- Writer-owned fields (``write_index``, ``epoch``, ``flags``, ``meta_seq``, the layout) live in
  Python shadows and are only ever written from them, never read back; the engine's
  :meth:`RingWriter.check` rewrites any that someone overwrote. Reader-owned fields
  (``read_index``, ``reader_block_frames``, ``reader_sample_rate``, heartbeats) are bounded
  before use. Values that had to be corrected are reported once (rate-limited) as a
  non-fatal :class:`RingFault`.
- Before the engine touches the mapping it ``fstat``\\ s the segment; one that shrank (``truncate``)
  is retired at once — every view is switched to private anonymous memory, so no later access can
  fault — and :meth:`check` raises a fatal ``RingFault`` once. The next play recreates it
  (:meth:`recover`). A truncate landing between that ``fstat`` and the access still faults:
  only our own uid (or root) can truncate a 0600 ring.
- ``close`` unlinks the name only if it is still the inode this writer created or adopted.

A slot whose ring cannot be had at all runs on anonymous memory (:meth:`unavailable`): the
daemon keeps that slot's state machine, answers its plays with the reason, and retries.
"""
from __future__ import annotations

import errno
import fcntl
import logging
import mmap
import os
import stat
import struct
import threading
import time

import msgpack
import numpy as np

from dsp import crossfade, fade_curve

from plugin_stub import protocol as P
from plugin_stub.protocol import RingError, RingFault

log = logging.getLogger("wavebridge")

_WI = P.OFF_WRITE_INDEX // 8
_RI = P.OFF_READ_INDEX // 8
_EP = P.OFF_EPOCH // 8
_UR = P.OFF_UNDERRUN // 8
_WHB = P.OFF_WRITER_HEARTBEAT // 8
_RHB = P.OFF_READER_HEARTBEAT // 8
_FL = P.OFF_FLAGS // 4
_RATE = P.OFF_SAMPLE_RATE // 4
_RRATE = P.OFF_READER_RATE // 4
_RBLK = P.OFF_READER_BLOCK // 4
_SEQ = P.OFF_META_SEQ // 4
_LEN = P.OFF_META_LEN // 4
_PID = P.OFF_WRITER_PID // 4
_WARN_EVERY_NS = 10_000_000_000      # one report per slot and problem per 10 s
_RETRY_EVERY_NS = 1_000_000_000      # an unavailable ring is retried at most once a second
_CHECK_EVERY_NS = 50_000_000         # header repair at most every 50 ms (faults are reported at once)
_HEAD = struct.Struct("<8sIIIIQQII")    # magic … flags
_Q = struct.Struct("<Q")
_QQQ = struct.Struct("<QQQ")            # read_index, underrun_frames, reader_heartbeat_ns
_II = struct.Struct("<II")              # meta_seq, meta_len


def _pid_alive(pid: int) -> bool:
    """True if ``pid`` names a live process. A value no kernel hands out is dead (never a signal
    to a process group: 0 and anything ≥ PID_MAX are refused before ``kill``)."""
    if not 0 < pid < P.PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _map(fd: int, size: int) -> mmap.mmap:
    return mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


class RingWriter:
    """The single writer of one slot's ring. Create with :meth:`open` (or :meth:`unavailable`)."""

    def __init__(self, slot, fd: int, mm: mmap.mmap, created: bool, ident=None, *, layout=None):
        self.slot = slot
        self.path = P.shm_path(slot)
        self.created = created
        if layout is None:
            layout = P.validate_header(mm, len(mm))
        self.sample_rate, self.channels, self.capacity = layout
        self.mask = self.capacity - 1
        self.size = P.ring_bytes(self.capacity, self.channels)
        self.splices_overtaken = 0
        self.fault: RingError | None = None     # why this writer runs on private memory (None: live)
        self._fd = fd
        self._ident = ident                     # (st_dev, st_ino) of the file we own, or None
        self._closed = False
        self._lock = threading.Lock()           # retire / adopt / close
        self._pending: RingFault | None = None  # a fatal fault for check() to raise once
        self._warned: dict[str, int] = {}
        self._notes: list[tuple[str, str]] = []  # corrections to report from check()
        self._bind(mm)
        self._w = int(self._u64[_WI])
        self._epoch = int(self._u64[_EP])
        self._flags = int(self._u32[_FL])
        self._seq = int(self._u32[_SEQ]) & ~1 & P.U32_MASK
        self._meta_len = min(int(self._u32[_LEN]), P.META_MAX)
        self._pid = int(self._u32[_PID])
        self._checked_ns = 0

    def _bind(self, mm) -> None:
        self._mm = mm
        self._u64 = np.frombuffer(mm, dtype="<u8", count=P.DATA_OFFSET // 8)
        self._u32 = np.frombuffer(mm, dtype="<u4", count=P.DATA_OFFSET // 4)
        self._meta = np.frombuffer(mm, dtype=np.uint8, count=P.META_MAX, offset=P.OFF_META)
        self.data = np.frombuffer(mm, dtype=np.float32, count=self.capacity * self.channels,
                                  offset=P.DATA_OFFSET).reshape(self.capacity, self.channels)

    # ---------------------------------------------------------------- lifecycle [control]
    @classmethod
    def open(cls, slot, sample_rate: int, channels: int, capacity_frames: int) -> "RingWriter":
        """Create the slot's ring, or re-attach one left by an earlier daemon. ``[control]``

        Re-attach keeps the mapping readers already hold: the file checked (regular, ours, 0600,
        the expected size), header validated, ``epoch`` bumped, ``writer_pid`` taken over. One
        of ours of another shape (or mode) left by a dead writer is replaced; one whose writer is
        alive raises ``RingError('ring_busy')``; anything not ours to take raises ``ring_type`` /
        ``ring_owner`` (the slot is refused; the caller carries on with the others).
        """
        if not P.is_pow2(capacity_frames) or capacity_frames > P.MAX_CAPACITY:
            raise RingError("ring_layout", f"capacity {capacity_frames} must be a power of two ≤ {P.MAX_CAPACITY}")
        if not 1 <= channels <= P.MAX_CHANNELS or not P.MIN_RATE <= sample_rate <= P.MAX_RATE:
            raise RingError("ring_layout", f"implausible ring shape: {sample_rate} Hz, {channels} channels")
        path = P.shm_path(slot)
        try:
            for _ in range(4):
                try:
                    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 P.RING_MODE)
                except FileExistsError:
                    w = cls._reattach(slot, path, sample_rate, channels, capacity_frames)
                    if w is not None:
                        return w
                    continue                     # ours and stale: removed, create afresh
                return cls._create(slot, path, fd, sample_rate, channels, capacity_frames)
        except OSError as e:                     # EMFILE, ENOMEM, EACCES on /dev/shm …: that slot only
            code = "ring_space" if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.ENOMEM) else "ring_io"
            raise RingError(code, f"cannot create or open {path}: {e.strerror or e}") from None
        raise RingError("ring_busy", f"{path} keeps reappearing while we replace it: refusing it")

    @classmethod
    def _create(cls, slot, path, fd, sample_rate, channels, capacity) -> "RingWriter":
        size = P.ring_bytes(capacity, channels)
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino)
        try:
            # the writer holds an exclusive lock for its whole life: another daemon can tell a
            # live writer (even one still creating the ring) from a dead one without pid guesses
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.fchmod(fd, P.RING_MODE)
            os.ftruncate(fd, size)
            try:
                # reserve every page now: a full /dev/shm is an error here, not a SIGBUS later
                os.posix_fallocate(fd, 0, size)
            except OSError as e:
                if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.ENOMEM):
                    raise RingError("ring_space", f"no room in {P.SHM_DIR} for {path} ({size} bytes): "
                                                  f"{e.strerror}") from None
                if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):   # not tmpfs: carry on
                    raise
            mm = _map(fd, size)
            now = P.monotonic_ns()
            fixed = P.pack_fixed(sample_rate, channels, capacity, 1, os.getpid(),
                                 P.FLAG_WRITER_ALIVE, now, magic=b"\0" * 8)
            mm[0:len(fixed)] = fixed
            mm[0:8] = P.MAGIC  # written last: readers see a complete header or none
        except BaseException:
            os.close(fd)
            P.unlink_if_same(path, ident)
            raise
        return cls(slot, fd, mm, created=True, ident=ident)

    @classmethod
    def _reattach(cls, slot, path, sample_rate, channels, capacity):
        """Adopt a ring an earlier daemon (of ours) left, replace one of ours that is stale, or
        refuse with a ``RingError``. Returns the writer, or None after removing a stale ring."""
        try:
            fd, st = P.open_segment(path, writable=True, mode=False)
        except RingError as e:
            if e.code == "ring_missing":
                return None                      # gone meanwhile: create it
            raise
        ident = (st.st_dev, st.st_ino)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RingError("ring_busy", f"{path} is held by a live writer") from None
        size = P.ring_bytes(capacity, channels)

        def replace(why: str):
            os.close(fd)
            log.warning("slot %s: %s; replacing it with a fresh ring", slot, why)
            P.unlink_if_same(path, ident)
            return None

        if st.st_nlink != 1:                     # a ring has one name; a hard link is not adopted
            return replace(f"{path} has {st.st_nlink} links")
        if stat.S_IMODE(st.st_mode) != P.RING_MODE:
            # ours, but someone may have opened it while it was readable: never adopt it
            return replace(f"{path} has mode {stat.S_IMODE(st.st_mode):04o}, not 0600")
        if st.st_size != size:
            if st.st_size < P.DATA_OFFSET and time.time() - st.st_mtime < 2.0:
                os.close(fd)                     # another writer between create and lock
                raise RingError("ring_busy", f"{path} is being created by another writer")
            return replace(f"{path} is {st.st_size} bytes, not the {size} this shape needs")
        try:
            mm = _map(fd, size)
        except (ValueError, OSError) as e:
            return replace(f"{path} cannot be mapped ({e})")
        try:
            rate, ch, cap = P.validate_header(mm, size)
            if (ch, cap) != (channels, capacity):
                raise RingError("ring_layout", f"shape {ch} ch × {cap} frames, not {channels} × {capacity}")
            pid = int.from_bytes(mm[P.OFF_WRITER_PID:P.OFF_WRITER_PID + 4], "little")
            hb = int.from_bytes(mm[P.OFF_WRITER_HEARTBEAT:P.OFF_WRITER_HEARTBEAT + 8], "little")
            age = P.monotonic_ns() - hb
            if pid != os.getpid() and _pid_alive(pid) and 0 <= age < 2_000_000_000:
                raise RingError("ring_busy", f"{path} is owned by live writer pid {pid}")
        except RingError as e:
            mm.close()
            if e.code == "ring_busy":
                os.close(fd)
                raise
            if e.code == "ring_magic" and time.time() - st.st_mtime < 2.0:
                os.close(fd)                     # another writer is still creating it
                raise RingError("ring_busy", f"{path} is being created by another writer") from None
            return replace(f"{path} is stale ({e.message})")
        w = cls(slot, fd, mm, created=False, ident=ident, layout=(sample_rate, channels, capacity))
        w._adopt_header(rate)
        return w

    def _adopt_header(self, old_rate: int) -> None:
        """Take over a dead writer's ring: bounded indices, a fresh epoch, our pid and rate."""
        wi, ri, ep = int(self._u64[_WI]), int(self._u64[_RI]), int(self._u64[_EP])
        if wi >= P.MAX_INDEX or ri >= P.MAX_INDEX:
            log.warning("slot %s: re-attached ring had write_index %d / read_index %d; the stream restarts at 0",
                        self.slot, wi, ri)
            w = 0                                # readers resync (epoch below, and w < r)
        elif 0 <= wi - ri <= self.capacity:
            w = ri                               # the dead writer's unplayed audio is not ours to play
        else:
            w = wi
        # a fresh epoch that differs from the old one (readers resync on any change)
        self._epoch = ep + 1 if ep < P.MAX_INDEX else 1
        self._w = w
        self._flags = P.FLAG_WRITER_ALIVE
        self._pid = os.getpid()
        self._u32[_PID] = self._pid
        self._u32[_RATE] = self.sample_rate
        self._u32[_FL] = self._flags
        self._u64[_WI] = w
        self._u64[_WHB] = P.monotonic_ns()
        self._u64[_EP] = self._epoch
        self._u32[_SEQ] = self._seq              # even, ours from now on
        self._u32[_LEN] = self._meta_len
        if old_rate != self.sample_rate:
            log.info("slot %s: re-attached ring was at %d Hz, now %d Hz", self.slot, old_rate, self.sample_rate)

    @classmethod
    def unavailable(cls, slot, sample_rate: int, channels: int, capacity_frames: int,
                    error: RingError) -> "RingWriter":
        """A writer on private anonymous memory for a slot whose ring could not be had. ``[control]``

        Every method works (audio goes nowhere); :meth:`recover` retries the real ring.
        """
        size = P.ring_bytes(capacity_frames, channels)
        w = cls(slot, -1, mmap.mmap(-1, size), created=False, ident=None,
                layout=(sample_rate, channels, capacity_frames))
        w.fault = error
        w._want = (sample_rate, channels, capacity_frames)
        w._last_try = P.monotonic_ns()
        return w

    @property
    def live(self) -> bool:
        """True while this writer feeds a real shared ring (not private memory)."""
        return self.fault is None and not self._closed

    def recover(self) -> bool:
        """Get a real ring back after a refusal or a fault; True if the mapping changed. ``[engine]``

        Raises the ``RingError`` that keeps the slot unavailable (retried at most once a second;
        in between the last reason is raised again). A live writer returns False at once.
        """
        if self.fault is None or self._closed:
            return False
        now = P.monotonic_ns()
        if now - getattr(self, "_last_try", 0) < _RETRY_EVERY_NS:
            raise self.fault
        self._last_try = now
        with self._lock:
            if self._fd >= 0:                    # a retired (shrunk) segment of ours: drop it
                P.unlink_if_same(self.path, self._ident)
                os.close(self._fd)
                self._fd, self._ident = -1, None
        rate, ch, cap = getattr(self, "_want", (self.sample_rate, self.channels, self.capacity))
        try:
            fresh = RingWriter.open(self.slot, rate, ch, cap)
        except RingError as e:
            self.fault = e
            raise
        with self._lock:
            self._take(fresh)
        log.warning("slot %s: %s %s again", self.slot, "created" if fresh.created else "re-attached", self.path)
        return True

    def _take(self, other: "RingWriter") -> None:
        """Become ``other`` (a freshly opened writer of the same slot). Caller holds the lock."""
        self.sample_rate, self.channels, self.capacity = other.sample_rate, other.channels, other.capacity
        self.mask, self.size, self.created = other.mask, other.size, other.created
        self._fd, self._ident = other._fd, other._ident
        self._w, self._epoch, self._flags, self._seq = other._w, other._epoch, other._flags, other._seq
        self._meta_len, self._pid = other._meta_len, other._pid
        self._bind(other._mm)
        other._closed = True                     # its fd and mapping are ours now
        self._pending = None
        self.fault = None

    def _retire(self, fault: RingFault) -> None:
        """Switch every view to private memory so nothing touches the bad mapping again. Any thread."""
        with self._lock:
            if self.fault is not None or self._closed:
                return
            anon = mmap.mmap(-1, self.size)      # never read the old mapping again: it may fault
            self._bind(anon)                     # the old mapping dies with its last view
            self._u64[_WI] = self._u64[_RI] = self._w
            self.fault = fault
            self._pending = fault
        log.error("slot %s: %s", self.slot, fault.message)

    def probe(self) -> bool:
        """``fstat`` the segment before storing into :attr:`data` directly (the daemon's fused
        write pipeline); a segment that shrank is retired to private memory first. True while
        the mapping is safe to touch. ``[engine]``"""
        return self._probe()

    def _probe(self) -> bool:
        """``fstat`` the segment; retire it if it shrank. True while the mapping is safe to touch."""
        if self._closed:
            return False
        if self.fault is not None:
            return True                          # private memory: always safe
        try:
            st = os.fstat(self._fd)
            size = st.st_size
        except OSError:
            size = -1
        if size < self.size:
            self._retire(RingFault("ring_fault", f"{self.path} shrank to {size} bytes under the writer "
                                                 f"(needs {self.size}); the slot stops and gets a fresh "
                                                 "ring at its next play", slot=-1, fatal=True))
            return False
        return True

    def check(self) -> None:
        """Once per engine loop: report a fault, repair writer-owned fields (at most every 50 ms). ``[engine]``

        Raises :class:`RingFault` — fatal once after the segment shrank (the daemon stops the slot),
        or non-fatal (rate-limited) when a header field had to be corrected.
        """
        if self._closed:
            return
        if self._pending is None and self.fault is None:
            now = P.monotonic_ns()
            if now - self._checked_ns >= _CHECK_EVERY_NS:
                self._checked_ns = now
                if self._probe():
                    self._repair(now)
        if self._pending is not None:
            e, self._pending = self._pending, None
            raise e
        if self._notes:
            notes, self._notes = self._notes, []
            code, msg = notes[0]
            raise RingFault(code, msg if len(notes) == 1 else f"{msg} (and {len(notes) - 1} more)")

    def _repair(self, now: int) -> None:
        """Put back writer-owned fields someone overwrote; reset a garbage read_index nobody owns."""
        mm = self._mm
        magic, ver, doff, rate, ch, cap, ep, pid, flags = _HEAD.unpack_from(mm, 0)
        wi, = _Q.unpack_from(mm, P.OFF_WRITE_INDEX)
        ri, _ur, rhb = _QQQ.unpack_from(mm, P.OFF_READ_INDEX)
        seq, ln = _II.unpack_from(mm, P.OFF_META_SEQ)
        fixed = []
        if wi != self._w:
            self._u64[_WI] = self._w
            fixed.append("write_index")
        if ep != self._epoch:
            self._u64[_EP] = self._epoch
            fixed.append("epoch")
        if flags != self._flags:
            self._u32[_FL] = self._flags
            fixed.append("flags")
        if pid != self._pid:
            self._u32[_PID] = self._pid
            fixed.append("writer_pid")
        if rate != self.sample_rate:
            self._u32[_RATE] = self.sample_rate
            fixed.append("sample_rate")
        if seq != self._seq:
            self._u32[_SEQ] = self._seq
            fixed.append("meta_seq")
        if ln != self._meta_len:
            self._u32[_LEN] = self._meta_len
            fixed.append("meta_len")
        if (magic, ver, doff, ch, cap) != (P.MAGIC, P.VERSION, P.DATA_OFFSET, self.channels, self.capacity):
            mm[0:P.OFF_EPOCH] = P.pack_fixed(self.sample_rate, self.channels, self.capacity, 0, 0, 0, 0)[:P.OFF_EPOCH]
            fixed.append("layout")
        if not self._w - self.capacity <= ri <= self._w + self.capacity:
            if rhb > now or now - rhb > 1_000_000_000:
                self._u64[_RI] = self._w         # no live reader to set it right: reset it
                fixed.append("read_index (no live reader)")
            else:
                self._read_index()               # a live reader's garbage: reported, bounded on use
        if fixed:
            self._note("ring_header", f"{self.path}: someone overwrote {', '.join(fixed)}; rewrote them")

    def _note(self, code: str, message: str) -> None:
        """Queue a correction for :meth:`check` to report, at most once per 10 s per code (and log it)."""
        now = P.monotonic_ns()
        last = self._warned.get(code)
        if last is not None and now - last < _WARN_EVERY_NS:
            return
        self._warned[code] = now
        log.warning("slot %s: %s", self.slot, message)
        if len(self._notes) < 8:
            self._notes.append((code, message))

    def close(self, unlink: bool = True, keep_mapping: bool = False) -> None:
        """Mark the writer dead and release the mapping; unlink unless asked not to. ``[control]``

        Unlinks only the file this writer created or adopted, if the name still points at it
        (same inode, ours, a regular file): never a ring someone made after ours was removed.
        ``keep_mapping``: clear the flags and unlink the name but leave the mapping in place, for
        a shutdown whose engine thread could not be stopped and may still touch it.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            live = self.fault is None
            if live and self._probe_size_ok():
                try:
                    self._u32[_FL] = 0
                except Exception:  # noqa: BLE001
                    pass
            if unlink:
                P.unlink_if_same(self.path, self._ident)
            if keep_mapping:
                return
            del self._u64, self._u32, self._meta, self.data
            try:
                self._mm.close()
            except BufferError:
                pass
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _probe_size_ok(self) -> bool:
        try:
            return os.fstat(self._fd).st_size >= self.size
        except OSError:
            return False

    # ---------------------------------------------------------------- counters (any thread)
    @property
    def write_index(self) -> int:
        """The last published ``write_index`` (our own record; never read back)."""
        return self._w

    @property
    def read_index(self) -> int:
        """The reader's ``read_index``, bounded: within ``capacity`` of ``write_index``.

        A reader up to one ring ahead is legal (it overtook a splice); anything farther either way
        is garbage and reads as ``write_index`` (empty), which is where the reader resyncs too.
        """
        self._probe()
        return self._read_index()

    def _read_index(self) -> int:
        w = self._w
        r = int(self._u64[_RI])
        if w - self.capacity <= r <= w + self.capacity:
            return r
        self._note("ring_read_index", f"{self.path}: read_index {r} is not within a ring of "
                                      f"write_index {w}; treating the ring as empty")
        return w

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def underrun_frames(self) -> int:
        """The reader's count, bounded to [0, 2⁶²]."""
        self._probe()
        return min(int(self._u64[_UR]), P.MAX_INDEX)

    @property
    def reader_block_frames(self) -> int:
        """The reader's largest block, clamped to ``min(16384, capacity / 8)`` (0 = unknown)."""
        self._probe()
        b = int(self._u32[_RBLK])
        top = min(P.MAX_READER_BLOCK, self.capacity // 8)
        if b > top:
            self._note("ring_reader_block", f"{self.path}: reader_block_frames {b} is implausible; using {top}")
            return top
        return b

    @property
    def reader_sample_rate(self) -> int:
        """The host's rate, or 0 (unknown) for anything outside 8 kHz … 384 kHz."""
        self._probe()
        r = int(self._u32[_RRATE])
        return r if P.MIN_RATE <= r <= P.MAX_RATE else 0

    @property
    def reader_heartbeat_ns(self) -> int:
        """The reader's heartbeat; one from the future (garbage) reads as 0 (no reader)."""
        self._probe()
        hb = int(self._u64[_RHB])
        return hb if hb <= P.monotonic_ns() + 1_000_000_000 else 0

    def buffered(self) -> int:
        """Frames published and not yet consumed (0 if the reader is ahead). ``[engine]``"""
        self._probe()
        d = self._w - self._read_index()
        return d if d > 0 else 0

    def free(self) -> int:
        return self.capacity - self.buffered()

    def guard_frames(self, min_ms: float = 10.0) -> int:
        """Splice guard: ≥ 2 × the reader's largest block and ≥ ``min_ms``. ``[engine]``"""
        blk = self.reader_block_frames or 1024
        return max(2 * blk, int(self.sample_rate * min_ms / 1000.0))

    # ---------------------------------------------------------------- audio [engine]
    def store(self, start: int, frames: np.ndarray) -> None:
        """Copy ``frames`` (n × channels float32) to ring positions ``start…`` without publishing. ``[engine]``"""
        n = frames.shape[0]
        if n == 0:
            return
        if n > self.capacity:
            raise RingError("ring_size", f"chunk of {n} frames exceeds capacity {self.capacity}")
        self._probe()
        self._store(start, frames)

    def _store(self, start: int, frames: np.ndarray) -> None:
        n = frames.shape[0]
        if n == 0:
            return
        data = self.data
        i0 = start & self.mask
        first = min(n, self.capacity - i0)
        data[i0:i0 + first] = frames[:first]
        if first < n:
            data[0:n - first] = frames[first:]

    def load(self, start: int, n: int) -> np.ndarray:
        """A copy of frames ``start…start+n`` as they are in the ring. ``[engine]``"""
        out = np.empty((n, self.channels), dtype=np.float32)
        self._probe()
        data = self.data
        i0 = start & self.mask
        first = min(n, self.capacity - i0)
        out[:first] = data[i0:i0 + first]
        if first < n:
            out[first:] = data[0:n - first]
        return out

    def publish(self, new_write_index: int) -> None:
        """Release-store ``write_index`` (x86-64 TSO; see module docstring). ``[engine]``"""
        self._probe()
        self._publish(new_write_index)

    def _publish(self, new_write_index: int) -> None:
        w = int(new_write_index)
        if not 0 <= w < P.MAX_INDEX:             # never an OverflowError on the engine thread
            raise RingError("ring_size", f"write_index {w} out of range")
        self._w = w
        self._u64[_WI] = w

    def append(self, frames: np.ndarray) -> int:
        """Store after ``write_index`` and publish; never overruns the reader. ``[engine]``

        Returns the number of frames written (fewer than given only if the ring is full).
        """
        self._probe()
        r = self._read_index()
        w = max(self._w, r)   # the reader may have resynced ahead of us (an overtaken splice)
        n = max(0, min(frames.shape[0], self.capacity - (w - r)))
        self._store(w, frames[:n])              # probed above: one fstat per append
        self._publish(w + n)
        return n

    def splice(self, new: np.ndarray, xfade_frames: int, old_tail=None, min_guard_ms: float = 10.0, at=None):
        """Replace not-yet-read audio from ``read_index + guard`` with ``new``. ``[engine]``

        The first ``xfade_frames`` of ``new`` are crossfaded (equal power) against what is in
        the ring at that place (or ``old_tail(n)``, a callable giving the old stream's next
        frames when the ring holds too little). Sets ``write_index`` to the new end, which may
        be lower than before. Returns ``(splice_frame, published_end)``.
        """
        self._probe()
        r = self._read_index()
        w = self._w
        s = r + self.guard_frames(min_guard_ms)
        if w < s:
            s = max(w, r)
        if at is not None and s < at <= w:      # a quantized change: exactly at its frame (bridge.core.hostlink)
            s = int(at)
        n = new.shape[0]
        xf = min(xfade_frames, n)
        have = max(0, w - s)
        if xf > 0:
            if have >= xf:
                old = self.load(s, xf)
            else:
                old = np.zeros((xf, self.channels), dtype=np.float32)
                if have:
                    old[:have] = self.load(s, have)
                if old_tail is not None:
                    extra = old_tail(xf - have)
                    if extra is not None:
                        extra = extra[:xf - have]
                        old[have:have + extra.shape[0]] = extra
            mixed = crossfade(old, new[:xf], curve="equal_power")
        room = self.capacity - (s - r)
        n = max(0, min(n, room))
        if xf > 0:
            self.store(s, mixed[:min(xf, n)])
        if n > xf:
            self.store(s + xf, new[xf:n])
        self.publish(s + n)
        if self.read_index > s:
            self.splices_overtaken += 1
        return s, s + n

    def truncate_with_fade(self, fade_frames: int, min_guard_ms: float = 10.0) -> tuple[int, int]:
        """Stop now: fade what lies beyond ``read_index + guard`` and drop the rest. ``[engine]``

        Frames closer to the read head than the guard are never rewritten: with less than that
        buffered the audio simply ends at ``write_index``. Returns ``(fade_start, new_end)``.
        """
        self._probe()
        r = self._read_index()
        w = self._w
        s = r + self.guard_frames(min_guard_ms)
        if w <= s:
            return w, w
        n = min(fade_frames, w - s)
        self.store(s, self.load(s, n) * fade_curve(n, 0, n)[:, None])
        self.publish(s + n)
        if self.read_index > s:
            self.splices_overtaken += 1
        return s, s + n

    def fade_out(self, fade_frames: int, min_guard_ms: float = 10.0) -> tuple[int, int, bool]:
        """Start a stop's fade at ``read_index + guard`` (or at ``write_index`` if less is buffered).

        Fades in place what the ring holds of the ``fade_frames``-long curve. If the whole
        curve fit, the end is published at the fade's end and ``finished`` is True; otherwise
        the caller applies the rest of the curve to the audio that follows. Returns
        ``(fade_start, frames_faded, finished)``. ``[engine]``
        """
        self._probe()
        r = self._read_index()
        w = self._w
        s = max(r, min(w, r + self.guard_frames(min_guard_ms)))
        k = max(0, min(fade_frames, w - s))
        if k:
            self.store(s, self.load(s, k) * fade_curve(fade_frames, 0, k)[:, None])
        finished = k == fade_frames
        if finished:
            self.publish(s + k)
        if self.read_index > s:
            self.splices_overtaken += 1
        return s, k, finished

    # ---------------------------------------------------------------- header fields
    def set_playing(self, playing: bool) -> None:
        """Set or clear the ``playing`` flag. ``[engine]``"""
        self._flags = P.FLAG_WRITER_ALIVE | (P.FLAG_PLAYING if playing else 0)
        self._probe()
        self._u32[_FL] = self._flags

    @property
    def playing(self) -> bool:
        return bool(self._flags & P.FLAG_PLAYING)

    def heartbeat(self) -> None:
        """Refresh ``writer_heartbeat_ns`` (called ≥ 10 Hz by the heartbeat thread); probes the size first."""
        if self._probe():
            self._u64[_WHB] = P.monotonic_ns()

    def set_sample_rate(self, rate: int) -> None:
        """Change the rate of the data (a stream reset: bumps ``epoch``). ``[engine]``, idle slot only."""
        rate = int(rate)
        if not P.MIN_RATE <= rate <= P.MAX_RATE:
            raise RingError("ring_layout", f"sample rate {rate} out of range")
        self.sample_rate = rate
        self._probe()
        self._u32[_RATE] = rate
        self.bump_epoch()

    def bump_epoch(self) -> None:
        """Tell readers to resync (stream reset). ``[engine]``"""
        e = self._epoch + 1
        self._epoch = e if e < P.MAX_INDEX else 1
        self._probe()
        self._u64[_EP] = self._epoch

    def set_meta(self, meta: dict) -> None:
        """Publish job metadata as msgpack under the seqlock (truncated prompt if too big). ``[engine]``

        ``meta_seq`` is ours: it counts from our own record (wrapping at 2³²), never from what the
        header holds.
        """
        blob = msgpack.packb(meta, use_bin_type=True)
        if len(blob) > P.META_MAX:
            meta = dict(meta)
            meta["prompt"] = str(meta.get("prompt", ""))[:256]
            blob = msgpack.packb(meta, use_bin_type=True)[:P.META_MAX]
        seq = self._seq
        self._probe()
        u32 = self._u32
        u32[_SEQ] = (seq + 1) & P.U32_MASK           # odd: being written
        self._meta[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        self._meta_len = len(blob)
        u32[_LEN] = len(blob)
        self._seq = (seq + 2) & P.U32_MASK
        u32[_SEQ] = self._seq                        # even: stable
