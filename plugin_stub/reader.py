"""RingReader: the reference reader of ring protocol v1.

``read``/``read_into`` are the ``[audio]`` path: they copy frames, zero-fill a shortfall, count
underruns while the writer says ``playing`` and publish ``read_index``. They allocate no audio
buffers (the output buffer is preallocated at attach time; NumPy slices are views), take no lock
and make no system call. Attaching is not real-time work: do it from a worker or the main thread.

The segment is opened with ``os.open`` + ``mmap``, never through ``SharedMemory``, so the
resource tracker cannot unlink the daemon's rings when this process exits. It is opened with
``O_NOFOLLOW`` and must be a regular file of our own uid with mode 0600 (a ring someone else
planted under the name is refused, as the C stub's ``shm_open`` refuses links). Every header
value the read path uses is bounded: a ``write_index`` beyond a ring from ours resyncs, a
heartbeat from the future is not "alive", the underrun counter wraps instead of overflowing.
A segment truncated under a mapping faults on the next access; :meth:`RingReader.check`
(not ``[audio]``: one ``fstat``) notices a shrink and switches the reader to silence.
"""
from __future__ import annotations

import mmap
import os
import time

import msgpack
import numpy as np

from plugin_stub import protocol as P
from plugin_stub.protocol import RingError

_WI = P.OFF_WRITE_INDEX // 8
_RI = P.OFF_READ_INDEX // 8
_EP = P.OFF_EPOCH // 8
_UR = P.OFF_UNDERRUN // 8
_RHB = P.OFF_READER_HEARTBEAT // 8
_WHB = P.OFF_WRITER_HEARTBEAT // 8
_FL = P.OFF_FLAGS // 4
_PLAYING_ALIVE = P.FLAG_PLAYING | P.FLAG_WRITER_ALIVE
_U64 = P.U64_MASK


class RingReader:
    """The one reader of a slot's ring.

    ``max_block`` sizes the preallocated output buffer; ``host_rate`` is published as
    ``reader_sample_rate`` so the writer can resample.
    """

    def __init__(self, slot, max_block: int = 8192, host_rate: int = 0):
        self.slot = slot
        self.max_block = int(max_block)
        self.host_rate = int(host_rate)
        self._mm = None
        self._fd = -1
        self.resyncs = 0
        self.broken = ""              # why the mapping was given up (check()), "" while healthy

    # ------------------------------------------------------------ attach [control/worker]
    def attach(self) -> "RingReader":
        """Map the slot's ring and validate its header; raises ``RingError``. Not ``[audio]``."""
        path = P.shm_path(self.slot)
        fd, st = P.open_segment(path, writable=True)   # no links, FIFOs or foreign files
        try:
            size = st.st_size
            if size < P.DATA_OFFSET:
                raise RingError("ring_size", f"{path} is {size} bytes, smaller than the header")
            mm = mmap.mmap(fd, P.DATA_OFFSET, mmap.MAP_SHARED, mmap.PROT_READ)
            try:
                rate, ch, cap = P.validate_header(mm, size)
            finally:
                mm.close()
            want = P.ring_bytes(cap, ch)                 # map what the header says, not the file
            mm = mmap.mmap(fd, want, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            try:
                layout = P.validate_header(mm, want)
            except RingError:
                mm.close()
                raise
        except BaseException:
            os.close(fd)
            raise
        self.detach()
        self._fd, self._mm, self._size = fd, mm, want
        self.sample_rate, self.channels, self.capacity = layout
        self.broken = ""
        self.mask = self.capacity - 1
        self._u64 = np.frombuffer(mm, dtype="<u8", count=P.DATA_OFFSET // 8)
        self._u32 = np.frombuffer(mm, dtype="<u4", count=P.DATA_OFFSET // 4)
        self._data = np.frombuffer(mm, dtype=np.float32, count=self.capacity * self.channels,
                                   offset=P.DATA_OFFSET).reshape(self.capacity, self.channels)
        self._buf = np.zeros((self.max_block, self.channels), dtype=np.float32)
        self._epoch = int(self._u64[_EP])
        w, r = int(self._u64[_WI]), int(self._u64[_RI])
        # continue where the previous reader stopped if that is valid (no underrun on attach),
        # else start at the live edge
        self._r = r if 0 <= w - r <= self.capacity else w
        self._u64[_RI] = self._r
        self._u32[P.OFF_READER_PID // 4] = os.getpid()
        self._u32[P.OFF_READER_RATE // 4] = self.host_rate
        self._u32[P.OFF_READER_BLOCK // 4] = 0
        self._block_max = 0
        return self

    def check(self) -> bool:
        """Is the mapping still whole? One ``fstat``: call it from a worker, not ``[audio]``.

        A segment that shrank under us (someone truncated it) would fault on the next read; the
        reader then switches to private silence at once (``broken`` says why) and the caller
        re-attaches when the daemon has made a new ring.
        """
        if self._mm is None:
            return False
        if self.broken:
            return False
        try:
            size = os.fstat(self._fd).st_size
        except OSError:
            size = -1
        if size >= self._size:
            return True
        anon = mmap.mmap(-1, self._size)
        self._u64 = np.frombuffer(anon, dtype="<u8", count=P.DATA_OFFSET // 8)
        self._u32 = np.frombuffer(anon, dtype="<u4", count=P.DATA_OFFSET // 4)
        self._data = np.frombuffer(anon, dtype=np.float32, count=self.capacity * self.channels,
                                   offset=P.DATA_OFFSET).reshape(self.capacity, self.channels)
        self._r = 0
        self.broken = f"{P.shm_path(self.slot)} shrank to {size} bytes (mapped {self._size})"
        return False

    def detach(self) -> None:
        """Unmap (never unlinks). Not ``[audio]``."""
        if self._mm is None:
            return
        for name in ("_u64", "_u32", "_data", "_buf"):
            self.__dict__.pop(name, None)
        try:
            self._mm.close()
        except BufferError:
            pass
        os.close(self._fd)
        self._mm, self._fd = None, -1

    close = detach

    def __enter__(self):
        return self.attach() if self._mm is None else self

    def __exit__(self, *exc):
        self.detach()

    @property
    def attached(self) -> bool:
        return self._mm is not None

    def set_host_rate(self, rate: int) -> None:
        """Publish the host's sample rate (the daemon resamples new jobs to it). Not ``[audio]``."""
        self.host_rate = int(rate)
        if self._mm is not None:
            self._u32[P.OFF_READER_RATE // 4] = self.host_rate

    # ------------------------------------------------------------ [audio]
    def read(self, n: int) -> np.ndarray:
        """Read ``n`` frames into the preallocated buffer and return a view of it. ``[audio]``

        ``n`` may not exceed ``max_block`` (use :meth:`read_into` with your own buffer for more).
        """
        if n > self.max_block:
            raise ValueError(f"read({n}) exceeds max_block={self.max_block}")
        out = self._buf[:n]
        self.read_into(out)
        return out

    def read_into(self, out: np.ndarray) -> int:
        """Fill ``out`` (n × channels float32) from the ring; return frames that were real audio. ``[audio]``

        Shortfall is zero-filled and, while the writer's ``playing`` flag is set, added to
        ``underrun_frames``. An epoch change or a ``write_index`` behind ours resyncs to the
        live edge.
        """
        u64 = self._u64
        n = out.shape[0]
        if n > self._block_max:
            self._block_max = n
            self._u32[P.OFF_READER_BLOCK // 4] = n
        w = int(u64[_WI])                         # acquire (x86-64: plain load)
        r = self._r
        ep = int(u64[_EP])
        if ep != self._epoch or w < r or w - r > self.capacity:
            if ep != self._epoch:
                self._epoch = ep
                sr = int(self._u32[P.OFF_SAMPLE_RATE // 4])   # may change on reset
                if P.MIN_RATE <= sr <= P.MAX_RATE:
                    self.sample_rate = sr
            r = w
            self.resyncs += 1
        k = w - r
        if k > n:
            k = n
        if k:
            i0 = r & self.mask
            first = self.capacity - i0
            if first >= k:
                out[:k] = self._data[i0:i0 + k]
            else:
                out[:first] = self._data[i0:]
                out[first:k] = self._data[:k - first]
        now = time.monotonic_ns()
        if k < n:
            out[k:] = 0.0
            # an underrun while a live writer says it is playing (a dead writer's flag counts nothing)
            if (self._u32[_FL] & _PLAYING_ALIVE) == _PLAYING_ALIVE and 0 <= now - int(u64[_WHB]) < 1_000_000_000:
                u64[_UR] = (int(u64[_UR]) + n - k) & _U64   # wraps, never overflows
        r += k
        self._r = r
        u64[_RI] = r                              # release (x86-64 TSO)
        u64[_RHB] = now
        return k

    # ------------------------------------------------------------ status (any thread)
    @property
    def write_index(self) -> int:
        return int(self._u64[_WI])

    @property
    def read_index(self) -> int:
        return self._r

    def buffered(self) -> int:
        return max(0, int(self._u64[_WI]) - self._r)

    @property
    def underrun_frames(self) -> int:
        return int(self._u64[_UR])

    @property
    def playing(self) -> bool:
        return bool(self._u32[_FL] & P.FLAG_PLAYING)

    @property
    def writer_alive(self) -> bool:
        """``writer_alive`` flag set and heartbeat younger than 1 s."""
        if not self._u32[_FL] & P.FLAG_WRITER_ALIVE:
            return False
        return 0 <= time.monotonic_ns() - int(self._u64[_WHB]) < 1_000_000_000

    @property
    def epoch(self) -> int:
        return int(self._u64[_EP])

    def meta(self, retries: int = 100) -> dict:
        """The writer's job metadata, read under the seqlock (not ``[audio]``: it allocates)."""
        mm = self._mm
        for _ in range(retries):
            s1 = int(self._u32[P.OFF_META_SEQ // 4])
            if s1 & 1:
                time.sleep(0)
                continue
            ln = int(self._u32[P.OFF_META_LEN // 4])
            blob = bytes(mm[P.OFF_META:P.OFF_META + min(ln, P.META_MAX)])
            if int(self._u32[P.OFF_META_SEQ // 4]) == s1:
                if not blob:
                    return {}
                try:
                    return msgpack.unpackb(blob, raw=False)
                except Exception:
                    return {}
        return {}
