"""The ring writer's hostile-memory stance: whatever is read back from a shared segment is checked.

Shared memory is writable by whoever maps it, so nothing read back from it is trusted.
:class:`RingGuard` is the half of :class:`bridge.core.ring.RingWriter` that defends the mapping.
It is the writer's base class and declares no attributes: it works on the writer's mapping views
(``_u64``, ``_u32``, ``_mm``, rebound by ``_bind``), its shadows of the writer-owned fields
(``_w``, ``_epoch``, ``_flags``, ``_seq``, ``_meta_len``, ``_pid``), its guard state (``fault``,
``_pending``, ``_notes``, ``_warned``, ``_checked_ns``, and ``_want`` / ``_last_try`` for an
unavailable writer's retries) — all set in ``RingWriter.__init__`` — and on ``open`` and
``_read_index``:

- Re-attach (:meth:`RingGuard._reattach`) opens with ``O_NOFOLLOW`` and checks the opened
  descriptor: a regular file, ours, mode 0600, exactly the expected size. A foreign or odd file
  refuses the slot (one ``RingError`` with a clear message); one of ours in a bad state is replaced.
- Writer-owned fields (``write_index``, ``epoch``, ``flags``, ``meta_seq``, the layout) live in
  Python shadows and are only ever written from them, never read back; :meth:`RingGuard.check`
  rewrites any that someone overwrote. Reader-owned fields are bounded before use by the writer's
  accessors. Values that had to be corrected are reported once (rate-limited) as a non-fatal
  :class:`RingFault`.
- Before the engine touches the mapping it ``fstat``\\ s the segment (:meth:`RingGuard.probe`); one
  that shrank (``truncate``) is retired at once — every view is switched to private anonymous
  memory, so no later access can fault — and :meth:`RingGuard.check` raises a fatal ``RingFault``
  once. The next play recreates it (:meth:`RingGuard.recover`). A truncate landing between that
  ``fstat`` and the access still faults: only our own uid (or root) can truncate a 0600 ring.
- A slot whose ring cannot be had at all runs on anonymous memory (:meth:`RingGuard.unavailable`):
  the daemon keeps that slot's state machine, answers its plays with the reason, and retries.

Threads: ``check``, ``probe`` and ``recover`` run on ``[engine]``; ``_retire`` on any thread (the
heartbeat's probe may retire); ``_reattach`` and ``unavailable`` on ``[control]`` at open.
"""
from __future__ import annotations

import fcntl
import logging
import mmap
import os
import stat
import struct
import time

from plugin_stub import protocol as P
from plugin_stub.protocol import RingError, RingFault, pid_alive

log = logging.getLogger("wavebridge")

# ---- the ring header's words: where each field of ``docs/ring-protocol.md`` (offsets in
# :mod:`plugin_stub.protocol`) sits in the writer's little-endian views of the header —
# ``U64_*`` index ``RingWriter._u64`` (8-byte fields), ``U32_*`` index ``RingWriter._u32`` (4-byte
# fields). The one definition; :mod:`bridge.core.ring` uses these names.
U64_WRITE_INDEX = P.OFF_WRITE_INDEX // 8
U64_READ_INDEX = P.OFF_READ_INDEX // 8
U64_EPOCH = P.OFF_EPOCH // 8
U64_UNDERRUN = P.OFF_UNDERRUN // 8
U64_WRITER_HEARTBEAT = P.OFF_WRITER_HEARTBEAT // 8
U64_READER_HEARTBEAT = P.OFF_READER_HEARTBEAT // 8
U32_FLAGS = P.OFF_FLAGS // 4
U32_SAMPLE_RATE = P.OFF_SAMPLE_RATE // 4
U32_READER_RATE = P.OFF_READER_RATE // 4
U32_READER_BLOCK = P.OFF_READER_BLOCK // 4
U32_READER_PID = P.OFF_READER_PID // 4
U32_META_SEQ = P.OFF_META_SEQ // 4
U32_META_LEN = P.OFF_META_LEN // 4
U32_WRITER_PID = P.OFF_WRITER_PID // 4
_WARN_EVERY_NS = 10_000_000_000      # one report per slot and problem per 10 s
_RETRY_EVERY_NS = 1_000_000_000      # an unavailable ring is retried at most once a second
_CHECK_EVERY_NS = 50_000_000         # header repair at most every 50 ms (faults are reported at once)
_HEAD = struct.Struct("<8sIIIIQQII")    # magic … flags
_Q = struct.Struct("<Q")
_QQQ = struct.Struct("<QQQ")            # read_index, underrun_frames, reader_heartbeat_ns
_II = struct.Struct("<II")              # meta_seq, meta_len


def map_segment(fd: int, size: int) -> mmap.mmap:
    """A shared read-write mapping of ``size`` bytes of ``fd``."""
    return mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


def served_by(slot) -> int:
    """The pid of another live writer serving ``slot``'s ring, or 0. ``[control]`` (before a daemon opens)

    Read from the header alone, never by taking the writer's lock (a probe holding it even for a
    moment would make a writer creating that ring at the same time refuse it): a valid magic,
    ``writer_alive`` set, ``writer_pid`` a live process other than ours and a heartbeat younger
    than 2 s. Anything else (no ring, a foreign file, a dead writer's ring) is 0: opening the
    ring decides about those. The pid is only reported, never signalled.
    """
    try:
        fd, _ = P.open_segment(P.shm_path(slot), writable=False, mode=False)
    except RingError:
        return 0
    try:
        head = os.pread(fd, P.OFF_WRITER_HEARTBEAT + 8, 0)
    except OSError:
        return 0
    finally:
        os.close(fd)
    if len(head) < P.OFF_WRITER_HEARTBEAT + 8 or head[:8] != P.MAGIC:
        return 0
    pid, flags = struct.unpack_from("<II", head, P.OFF_WRITER_PID)
    hb, = _Q.unpack_from(head, P.OFF_WRITER_HEARTBEAT)
    age = P.monotonic_ns() - hb
    if not flags & P.FLAG_WRITER_ALIVE or pid == os.getpid() or not pid_alive(pid) or not 0 <= age < 2_000_000_000:
        return 0
    return pid


class RingGuard:
    """Re-attach checks, header repair, the shrink probe and recovery of a :class:`RingWriter`."""

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
            mm = map_segment(fd, size)
        except (ValueError, OSError) as e:
            return replace(f"{path} cannot be mapped ({e})")
        try:
            rate, ch, cap = P.validate_header(mm, size)
            if (ch, cap) != (channels, capacity):
                raise RingError("ring_layout", f"shape {ch} ch × {cap} frames, not {channels} × {capacity}")
            pid = int.from_bytes(mm[P.OFF_WRITER_PID:P.OFF_WRITER_PID + 4], "little")
            hb = int.from_bytes(mm[P.OFF_WRITER_HEARTBEAT:P.OFF_WRITER_HEARTBEAT + 8], "little")
            age = P.monotonic_ns() - hb
            if pid != os.getpid() and pid_alive(pid) and 0 <= age < 2_000_000_000:
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
        wi, ri, ep = int(self._u64[U64_WRITE_INDEX]), int(self._u64[U64_READ_INDEX]), int(self._u64[U64_EPOCH])
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
        self._u32[U32_WRITER_PID] = self._pid
        self._u32[U32_SAMPLE_RATE] = self.sample_rate
        self._u32[U32_FLAGS] = self._flags
        self._u64[U64_WRITE_INDEX] = w
        self._u64[U64_WRITER_HEARTBEAT] = P.monotonic_ns()
        self._u64[U64_EPOCH] = self._epoch
        self._u32[U32_META_SEQ] = self._seq              # even, ours from now on
        self._u32[U32_META_LEN] = self._meta_len
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

    def recover(self) -> bool:
        """Get a real ring back after a refusal or a fault; True if the mapping changed. ``[engine]``

        Raises the ``RingError`` that keeps the slot unavailable (retried at most once a second;
        in between the last reason is raised again). A live writer returns False at once.
        """
        if self.fault is None or self._closed:
            return False
        now = P.monotonic_ns()
        if now - self._last_try < _RETRY_EVERY_NS:
            raise self.fault
        self._last_try = now
        with self._lock:
            if self._fd >= 0:                    # a retired (shrunk) segment of ours: drop it
                P.unlink_if_same(self.path, self._ident)
                os.close(self._fd)
                self._fd, self._ident = -1, None
        rate, ch, cap = self._want if self._want is not None else (self.sample_rate, self.channels, self.capacity)
        try:
            fresh = type(self).open(self.slot, rate, ch, cap)
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
            self._u64[U64_WRITE_INDEX] = self._u64[U64_READ_INDEX] = self._w
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

    def _probe_size_ok(self) -> bool:
        try:
            return os.fstat(self._fd).st_size >= self.size
        except OSError:
            return False

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
            self._u64[U64_WRITE_INDEX] = self._w
            fixed.append("write_index")
        if ep != self._epoch:
            self._u64[U64_EPOCH] = self._epoch
            fixed.append("epoch")
        if flags != self._flags:
            self._u32[U32_FLAGS] = self._flags
            fixed.append("flags")
        if pid != self._pid:
            self._u32[U32_WRITER_PID] = self._pid
            fixed.append("writer_pid")
        if rate != self.sample_rate:
            self._u32[U32_SAMPLE_RATE] = self.sample_rate
            fixed.append("sample_rate")
        if seq != self._seq:
            self._u32[U32_META_SEQ] = self._seq
            fixed.append("meta_seq")
        if ln != self._meta_len:
            self._u32[U32_META_LEN] = self._meta_len
            fixed.append("meta_len")
        if (magic, ver, doff, ch, cap) != (P.MAGIC, P.VERSION, P.DATA_OFFSET, self.channels, self.capacity):
            mm[0:P.OFF_EPOCH] = P.pack_fixed(self.sample_rate, self.channels, self.capacity, 0, 0, 0, 0)[:P.OFF_EPOCH]
            fixed.append("layout")
        if not self._w - self.capacity <= ri <= self._w + self.capacity:
            if rhb > now or now - rhb > 1_000_000_000:
                self._u64[U64_READ_INDEX] = self._w         # no live reader to set it right: reset it
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
