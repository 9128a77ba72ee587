"""RingWriter: the daemon's side of ring protocol v1 (``docs/ring-protocol.md``).

One writer per slot. The engine thread (``[engine]``) stores audio and publishes ``write_index``
(the write pipeline, :mod:`bridge.core.writer`, splices and fades through :attr:`RingWriter.data`);
a heartbeat thread refreshes ``writer_heartbeat_ns``; the control thread (``[control]``) only reads
counters for status. Stores go through NumPy views of the mapping: an aligned 8-byte store is a
single ``mov`` and x86-64 keeps stores in program order (TSO), so storing the audio and then
``write_index`` is a release publish there. On weakly ordered CPUs (ARM) a release fence would be
needed before the index store; CPython offers none, so the writer is documented as x86-64-only
for ordering purposes.

Segments are opened with ``os.open`` on ``/dev/shm`` (or ``$WAVEBRIDGE_SHM_DIR``:
:func:`plugin_stub.protocol.shm_dir`) rather than ``multiprocessing``'s
``SharedMemory`` so no resource tracker ever unlinks them behind our back. Create is
``O_CREAT|O_EXCL|O_NOFOLLOW``, mode 0600, the pages reserved with ``posix_fallocate`` (a full
``/dev/shm`` is ``ring_space`` for that slot, never a SIGBUS later); ``close`` unlinks the name
only if it is still the inode this writer created or adopted.

Nothing read back from the mapping is trusted: the checks, repairs and the retiring of a shrunk
segment are :class:`bridge.core.ringguard.RingGuard`'s, this writer's base class (the header's
word indices are defined there too). Every attribute either uses is set in
:meth:`RingWriter.__init__`.
"""
from __future__ import annotations

import errno
import fcntl
import logging
import mmap
import os
import threading

import msgpack
import numpy as np

from dsp.splice import guard_frames

from bridge.core.ringguard import (U32_FLAGS, U32_META_LEN, U32_META_SEQ, U32_READER_BLOCK, U32_READER_PID,
                                   U32_READER_RATE, U32_SAMPLE_RATE, U32_WRITER_PID, U64_EPOCH, U64_READ_INDEX,
                                   U64_READER_HEARTBEAT, U64_UNDERRUN, U64_WRITE_INDEX, U64_WRITER_HEARTBEAT,
                                   RingGuard, map_segment)
from plugin_stub import protocol as P
from plugin_stub.protocol import RingError, RingFault

log = logging.getLogger("wavebridge")

#: a ring nobody reads is full (:meth:`RingWriter.play_out`) with less room than ``capacity / VOID_FULL``
VOID_FULL = 8


class RingWriter(RingGuard):
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
        self._want: tuple[int, int, int] | None = None   # an unavailable writer: the shape recover() opens
        self._last_try = 0                      # an unavailable writer: when recover() last tried
        self._bind(mm)
        self._w = int(self._u64[U64_WRITE_INDEX])
        self._epoch = int(self._u64[U64_EPOCH])
        self._flags = int(self._u32[U32_FLAGS])
        self._seq = int(self._u32[U32_META_SEQ]) & ~1 & P.U32_MASK
        self._meta_len = min(int(self._u32[U32_META_LEN]), P.META_MAX)
        self._pid = int(self._u32[U32_WRITER_PID])
        self._checked_ns = 0
        self._void_ns: int | None = None        # play_out: the void's clock at its last turn (None: a reader is there)
        self._void_read = 0                     # play_out: the frame the void has played to (private, never stored)
        self._void_frac = 0.0                   # play_out: the fraction of a frame carried to the next turn

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
                    raise RingError("ring_space", f"no room in {os.path.dirname(path)} for {path} ({size} bytes): "
                                                  f"{e.strerror}") from None
                if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):   # not tmpfs: carry on
                    raise
            mm = map_segment(fd, size)
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
                    self._u32[U32_FLAGS] = 0
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
        r = int(self._u64[U64_READ_INDEX])
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
        return min(int(self._u64[U64_UNDERRUN]), P.MAX_INDEX)

    @property
    def reader_block_frames(self) -> int:
        """The reader's largest block, clamped to ``min(16384, capacity / 8)`` (0 = unknown)."""
        self._probe()
        b = int(self._u32[U32_READER_BLOCK])
        top = min(P.MAX_READER_BLOCK, self.capacity // 8)
        if b > top:
            self._note("ring_reader_block", f"{self.path}: reader_block_frames {b} is implausible; using {top}")
            return top
        return b

    @property
    def reader_sample_rate(self) -> int:
        """The host's rate, or 0 (unknown) for anything outside 8 kHz … 384 kHz."""
        self._probe()
        r = int(self._u32[U32_READER_RATE])
        return r if P.MIN_RATE <= r <= P.MAX_RATE else 0

    @property
    def reader_heartbeat_ns(self) -> int:
        """The reader's heartbeat; one from the future (garbage) reads as 0 (no reader)."""
        self._probe()
        hb = int(self._u64[U64_READER_HEARTBEAT])
        return hb if hb <= P.monotonic_ns() + 1_000_000_000 else 0

    def buffered(self) -> int:
        """Frames published and not yet consumed (0 if the reader is ahead). ``[engine]``"""
        self._probe()
        d = self._w - self._read_index()
        return d if d > 0 else 0

    def guard_frames(self, min_ms: float = 10.0) -> int:
        """Splice guard: ≥ 2 × the reader's largest block and ≥ ``min_ms`` (:func:`dsp.splice.guard_frames`). ``[engine]``"""
        return guard_frames(self.sample_rate, self.reader_block_frames, min_ms)

    @property
    def reader_pid(self) -> int:
        """The reader's ``reader_pid`` as stored (unchecked: only compared, never signalled)."""
        return int(self._u32[U32_READER_PID])

    # ---------------------------------------------------------------- audio [engine]
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
        self._u64[U64_WRITE_INDEX] = w

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

    def play_out(self, now_ns: int | None) -> None:
        """The void's clock: while nobody reads the ring, the writer counts its audio as played at
        the ring's rate from where ``read_index`` stood — in private (:attr:`void_read`), never in
        the header: ``read_index`` is the reader's alone. The engine makes a timed job in its time
        by it (:meth:`lead`) and ends the job once its whole length has played out, then bumps
        ``epoch``; ``write_index − read_index`` still never exceeds ``capacity``, so an endless
        job fills the ring and waits there. Like a reader the void never plays past
        ``write_index`` — except once the ring is (all but) full: then the writer may make no more
        audio, and the clock runs on past it, counting the audio a reader would have let it make.
        ``now_ns`` is the engine's clock; None: a reader is there, and the void's clock starts
        again (at ``read_index``) the next time there is none. ``[engine]``
        """
        if now_ns is None:
            self._void_ns, self._void_frac = None, 0.0
            return
        if not self._probe():
            return
        last, self._void_ns = self._void_ns, now_ns
        r = self._read_index()
        if last is None:
            self._void_read, self._void_frac = r, 0.0
            return
        if now_ns <= last:
            return
        n = (now_ns - last) * self.sample_rate / 1e9 + self._void_frac
        step = int(n)
        self._void_frac = n - step
        v = max(self._void_read, r) + step
        full = self._w - r >= self.capacity - self.capacity // VOID_FULL
        self._void_read = v if full else min(v, self._w)

    @property
    def void_read(self) -> int | None:
        """Where the void's clock has played the ring to (:meth:`play_out`); None while a reader is there."""
        return None if self._void_ns is None else self._void_read

    def lead(self) -> int:
        """Frames published ahead of whoever plays the ring: :meth:`buffered`, or while nobody
        reads it, ahead of the void's clock (:meth:`play_out`) — all that is buffered once the
        ring is (all but) full, when there is no room to make more anyway. ``[engine]``"""
        b = self.buffered()
        if self._void_ns is None or b >= self.capacity - self.capacity // VOID_FULL:
            return b
        return max(0, self._w - self._void_read)

    # ---------------------------------------------------------------- header fields
    def set_playing(self, playing: bool) -> None:
        """Set or clear the ``playing`` flag. ``[engine]``"""
        self._flags = P.FLAG_WRITER_ALIVE | (P.FLAG_PLAYING if playing else 0)
        self._probe()
        self._u32[U32_FLAGS] = self._flags

    @property
    def playing(self) -> bool:
        return bool(self._flags & P.FLAG_PLAYING)

    def heartbeat(self) -> None:
        """Refresh ``writer_heartbeat_ns`` (called ≥ 10 Hz by the heartbeat thread); probes the size first."""
        if self._probe():
            self._u64[U64_WRITER_HEARTBEAT] = P.monotonic_ns()

    def set_sample_rate(self, rate: int) -> None:
        """Change the rate of the data (a stream reset: bumps ``epoch``). ``[engine]``, idle slot only."""
        rate = int(rate)
        if not P.MIN_RATE <= rate <= P.MAX_RATE:
            raise RingError("ring_layout", f"sample rate {rate} out of range")
        self.sample_rate = rate
        self._probe()
        self._u32[U32_SAMPLE_RATE] = rate
        self.bump_epoch()

    def bump_epoch(self) -> None:
        """Tell readers to resync (stream reset). ``[engine]``"""
        e = self._epoch + 1
        self._epoch = e if e < P.MAX_INDEX else 1
        self._probe()
        self._u64[U64_EPOCH] = self._epoch

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
        u32[U32_META_SEQ] = (seq + 1) & P.U32_MASK           # odd: being written
        self._meta[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        self._meta_len = len(blob)
        u32[U32_META_LEN] = len(blob)
        self._seq = (seq + 2) & P.U32_MASK
        u32[U32_META_SEQ] = self._seq                        # even: stable
