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
"""
from __future__ import annotations

import fcntl
import mmap
import os
import time

import msgpack
import numpy as np

from dsp import crossfade, fade_curve

from . import protocol as P
from .protocol import RingError


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RingWriter:
    """The single writer of one slot's ring. Create with :meth:`open`."""

    def __init__(self, slot, fd: int, mm: mmap.mmap, created: bool):
        self.slot = slot
        self.path = P.shm_path(slot)
        self._fd = fd
        self._mm = mm
        self.created = created
        self.sample_rate, self.channels, self.capacity = P.validate_header(mm, len(mm))
        self.mask = self.capacity - 1
        self._u64 = np.frombuffer(mm, dtype="<u8", count=P.DATA_OFFSET // 8)
        self._u32 = np.frombuffer(mm, dtype="<u4", count=P.DATA_OFFSET // 4)
        self._meta = np.frombuffer(mm, dtype=np.uint8, count=P.META_MAX, offset=P.OFF_META)
        self.data = np.frombuffer(mm, dtype=np.float32, count=self.capacity * self.channels,
                                  offset=P.DATA_OFFSET).reshape(self.capacity, self.channels)
        self.splices_overtaken = 0
        self._closed = False

    # ---------------------------------------------------------------- lifecycle [control]
    @classmethod
    def open(cls, slot, sample_rate: int, channels: int, capacity_frames: int) -> "RingWriter":
        """Create the slot's ring, or re-attach one left by an earlier daemon. ``[control]``

        Re-attach keeps the mapping readers already hold: header validated, ``epoch`` bumped,
        ``writer_pid`` taken over. A ring of another shape left by a dead writer is replaced;
        one whose writer is still alive raises ``RingError('ring_busy')``.
        """
        if not P.is_pow2(capacity_frames) or capacity_frames > P.MAX_CAPACITY:
            raise RingError("ring_layout", f"capacity {capacity_frames} must be a power of two ≤ {P.MAX_CAPACITY}")
        path = P.shm_path(slot)
        size = P.ring_bytes(capacity_frames, channels)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            w = cls._reattach(slot, path, sample_rate, channels, capacity_frames)
            if w is not None:
                return w
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            # the writer holds an exclusive lock for its whole life: another daemon can tell a
            # live writer (even one still creating the ring) from a dead one without pid guesses
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.fchmod(fd, 0o600)
            os.ftruncate(fd, size)
            mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            now = P.monotonic_ns()
            fixed = P.pack_fixed(sample_rate, channels, capacity_frames, 1, os.getpid(),
                                 P.FLAG_WRITER_ALIVE, now, magic=b"\0" * 8)
            mm[0:len(fixed)] = fixed
            mm[0:8] = P.MAGIC  # written last: readers see a complete header or none
        except BaseException:
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                pass
            raise
        return cls(slot, fd, mm, created=True)

    @classmethod
    def _reattach(cls, slot, path, sample_rate, channels, capacity):
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RingError("ring_busy", f"{path} is held by a live writer") from None
        size = os.fstat(fd).st_size
        try:
            mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except (ValueError, OSError):
            os.close(fd)
            os.unlink(path)
            return None
        try:
            rate, ch, cap = P.validate_header(mm, size)
            pid = int.from_bytes(mm[P.OFF_WRITER_PID:P.OFF_WRITER_PID + 4], "little")
            hb = int.from_bytes(mm[P.OFF_WRITER_HEARTBEAT:P.OFF_WRITER_HEARTBEAT + 8], "little")
            fresh = P.monotonic_ns() - hb < 2_000_000_000
            if pid != os.getpid() and _pid_alive(pid) and fresh:
                raise RingError("ring_busy", f"{path} is owned by live writer pid {pid}")
            if (rate, ch, cap) != (sample_rate, channels, capacity):
                raise RingError("ring_layout", "shape changed")
        except RingError as e:
            mm.close()
            young = time.time() - os.fstat(fd).st_mtime < 2.0
            os.close(fd)
            if e.code == "ring_busy":
                raise
            if e.code == "ring_magic" and young:   # another writer is still creating it
                raise RingError("ring_busy", f"{path} is being created by another writer") from None
            os.unlink(path)  # stale ring of another shape: replace it
            return None
        w = cls(slot, fd, mm, created=False)
        w._u32[P.OFF_WRITER_PID // 4] = os.getpid()
        w._u32[P.OFF_FLAGS // 4] = P.FLAG_WRITER_ALIVE
        wi, ri = w.write_index, w.read_index
        if 0 <= wi - ri <= w.capacity:
            w.publish(ri)                  # the dead writer's unplayed audio is not ours to play
        w.heartbeat()
        w.bump_epoch()
        return w

    def close(self, unlink: bool = True, keep_mapping: bool = False) -> None:
        """Mark the writer dead and release the mapping; unlink unless asked not to. ``[control]``

        ``keep_mapping``: clear the flags and unlink the name but leave the mapping in place, for
        a shutdown whose engine thread could not be stopped and may still touch it.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._u32[P.OFF_FLAGS // 4] = 0
        except Exception:
            pass
        if keep_mapping:
            if unlink:
                try:
                    os.unlink(self.path)
                except FileNotFoundError:
                    pass
            return
        del self._u64, self._u32, self._meta, self.data
        try:
            self._mm.close()
        except BufferError:
            pass
        os.close(self._fd)
        if unlink:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    # ---------------------------------------------------------------- counters
    @property
    def write_index(self) -> int:
        return int(self._u64[P.OFF_WRITE_INDEX // 8])

    @property
    def read_index(self) -> int:
        return int(self._u64[P.OFF_READ_INDEX // 8])

    @property
    def epoch(self) -> int:
        return int(self._u64[P.OFF_EPOCH // 8])

    @property
    def underrun_frames(self) -> int:
        return int(self._u64[P.OFF_UNDERRUN // 8])

    @property
    def reader_block_frames(self) -> int:
        return int(self._u32[P.OFF_READER_BLOCK // 4])

    @property
    def reader_sample_rate(self) -> int:
        return int(self._u32[P.OFF_READER_RATE // 4])

    @property
    def reader_heartbeat_ns(self) -> int:
        return int(self._u64[P.OFF_READER_HEARTBEAT // 8])

    def buffered(self) -> int:
        """Frames published and not yet consumed (0 if the reader is ahead). ``[engine]``"""
        d = self.write_index - self.read_index
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
        i0 = start & self.mask
        first = min(n, self.capacity - i0)
        self.data[i0:i0 + first] = frames[:first]
        if first < n:
            self.data[0:n - first] = frames[first:]

    def load(self, start: int, n: int) -> np.ndarray:
        """A copy of frames ``start…start+n`` as they are in the ring. ``[engine]``"""
        out = np.empty((n, self.channels), dtype=np.float32)
        i0 = start & self.mask
        first = min(n, self.capacity - i0)
        out[:first] = self.data[i0:i0 + first]
        if first < n:
            out[first:] = self.data[0:n - first]
        return out

    def publish(self, new_write_index: int) -> None:
        """Release-store ``write_index`` (x86-64 TSO; see module docstring). ``[engine]``"""
        self._u64[P.OFF_WRITE_INDEX // 8] = new_write_index

    def append(self, frames: np.ndarray) -> int:
        """Store after ``write_index`` and publish; never overruns the reader. ``[engine]``

        Returns the number of frames written (fewer than given only if the ring is full).
        """
        r = self.read_index
        w = max(self.write_index, r)   # the reader may have resynced ahead of us (an overtaken splice)
        n = min(frames.shape[0], self.capacity - (w - r))
        self.store(w, frames[:n])
        self.publish(w + n)
        return n

    def splice(self, new: np.ndarray, xfade_frames: int, old_tail=None, min_guard_ms: float = 10.0, at=None):
        """Replace not-yet-read audio from ``read_index + guard`` with ``new``. ``[engine]``

        The first ``xfade_frames`` of ``new`` are crossfaded (equal power) against what is in
        the ring at that place (or ``old_tail(n)``, a callable giving the old stream's next
        frames when the ring holds too little). Sets ``write_index`` to the new end, which may
        be lower than before. Returns ``(splice_frame, published_end)``.
        """
        r = self.read_index
        w = self.write_index
        s = r + self.guard_frames(min_guard_ms)
        if w < s:
            s = max(w, r)
        if at is not None and s < at <= w:      # a quantized change: exactly at its frame (bridge.hostlink)
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
                        old[have:have + extra.shape[0]] = extra
            mixed = crossfade(old, new[:xf], curve="equal_power")
        room = self.capacity - (s - r)
        n = min(n, room)
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
        r = self.read_index
        w = self.write_index
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
        r = self.read_index
        w = self.write_index
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
        f = P.FLAG_WRITER_ALIVE | (P.FLAG_PLAYING if playing else 0)
        self._u32[P.OFF_FLAGS // 4] = f

    @property
    def playing(self) -> bool:
        return bool(self._u32[P.OFF_FLAGS // 4] & P.FLAG_PLAYING)

    def heartbeat(self) -> None:
        """Refresh ``writer_heartbeat_ns`` (called ≥ 10 Hz by the heartbeat thread)."""
        self._u64[P.OFF_WRITER_HEARTBEAT // 8] = P.monotonic_ns()

    def set_sample_rate(self, rate: int) -> None:
        """Change the rate of the data (a stream reset: bumps ``epoch``). ``[engine]``, idle slot only."""
        self._u32[P.OFF_SAMPLE_RATE // 4] = int(rate)
        self.sample_rate = int(rate)
        self.bump_epoch()

    def bump_epoch(self) -> None:
        """Tell readers to resync (stream reset). ``[engine]``"""
        self._u64[P.OFF_EPOCH // 8] = self.epoch + 1

    def set_meta(self, meta: dict) -> None:
        """Publish job metadata as msgpack under the seqlock (truncated prompt if too big). ``[engine]``"""
        blob = msgpack.packb(meta, use_bin_type=True)
        if len(blob) > P.META_MAX:
            meta = dict(meta)
            meta["prompt"] = str(meta.get("prompt", ""))[:256]
            blob = msgpack.packb(meta, use_bin_type=True)[:P.META_MAX]
        seq = int(self._u32[P.OFF_META_SEQ // 4])
        if seq & 1:
            seq += 1
        self._u32[P.OFF_META_SEQ // 4] = seq + 1          # odd: being written
        self._meta[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        self._u32[P.OFF_META_LEN // 4] = len(blob)
        self._u32[P.OFF_META_SEQ // 4] = seq + 2          # even: stable
