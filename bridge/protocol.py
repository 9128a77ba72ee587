"""Ring protocol v1 layout and the wavebridge error family.

This module is the one piece of ``bridge`` that ``plugin_stub`` imports: it depends on the
standard library only. It owns the byte layout of a slot's shared-memory ring (see
``docs/ring-protocol.md``), the shared-memory naming rule, and ``WavebridgeError`` whose codes
map 1:1 to ``/wb/error`` codes. No threads; pure data and checks.
"""
from __future__ import annotations

import os
import re
import struct
import time

MAGIC = b"WBRING1\0"
VERSION = 1
DATA_OFFSET = 4096
HEADER_SIZE = DATA_OFFSET

# Field offsets (bytes). Little-endian.
OFF_MAGIC = 0
OFF_VERSION = 8            # u32
OFF_DATA_OFFSET = 12       # u32
OFF_SAMPLE_RATE = 16       # u32
OFF_CHANNELS = 20          # u32
OFF_CAPACITY = 24          # u64, frames, power of two
OFF_EPOCH = 32             # u64
OFF_WRITER_PID = 40        # u32
OFF_FLAGS = 44             # u32
OFF_WRITER_HEARTBEAT = 48  # u64, CLOCK_MONOTONIC ns
OFF_WRITE_INDEX = 64       # u64 (own cache line)
OFF_READ_INDEX = 128       # u64 (own cache line)
OFF_UNDERRUN = 136         # u64
OFF_READER_HEARTBEAT = 144 # u64
OFF_READER_RATE = 152      # u32
OFF_READER_BLOCK = 156     # u32
OFF_READER_PID = 160       # u32
OFF_META_SEQ = 192         # u32 seqlock, odd while written
OFF_META_LEN = 196         # u32
OFF_META = 200             # msgpack bytes
META_MAX = DATA_OFFSET - OFF_META

FLAG_WRITER_ALIVE = 1 << 0
FLAG_PLAYING = 1 << 1

MAX_CAPACITY = 1 << 24     # frames; 16 Mi frames is ~5.8 min at 48 kHz
MAX_CHANNELS = 8
SHM_DIR = "/dev/shm"
SLOT_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")

_FIXED = struct.Struct("<8sIIIIQQII Q")  # magic..writer_heartbeat (56 bytes)


class WavebridgeError(Exception):
    """One exception family; ``code`` is the stable string sent in ``/wb/error``."""

    code = "error"

    def __init__(self, code: str | None = None, message: str = "", slot: int = -1):
        if code:
            self.code = code
        self.message = message or self.code
        self.slot = slot
        super().__init__(f"{self.code}: {self.message}")


class FixedCodeError(WavebridgeError):
    """A family member with one code, set as the class attribute: raised with a message alone."""

    def __init__(self, message: str, slot: int = -1):
        super().__init__(self.code, message, slot)


class RingError(WavebridgeError):
    """A shared-memory ring is missing, malformed or of another protocol version.

    Codes: ``ring_missing``, ``ring_magic``, ``ring_version``, ``ring_size``, ``ring_layout``,
    ``ring_name``, ``ring_exists``, ``ring_busy``.
    """

    code = "ring"


def shm_name(slot: int | str) -> str:
    """POSIX shared-memory name of a slot's ring, e.g. ``wavebridge.1``."""
    s = str(slot)
    if not SLOT_NAME_RE.match(s):
        raise RingError("ring_name", f"slot name {s!r} must match [A-Za-z0-9_-]{{1,32}}")
    return f"wavebridge.{s}"


def shm_path(slot: int | str) -> str:
    """Filesystem path of a slot's ring on Linux (``/dev/shm/wavebridge.<slot>``)."""
    return os.path.join(SHM_DIR, shm_name(slot))


def ring_bytes(capacity_frames: int, channels: int) -> int:
    """Total size of a ring object in bytes."""
    return DATA_OFFSET + capacity_frames * channels * 4


def is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def pack_fixed(sample_rate: int, channels: int, capacity: int, epoch: int, pid: int, flags: int,
               heartbeat_ns: int, magic: bytes = MAGIC) -> bytes:
    """Bytes 0..55 of the header."""
    return _FIXED.pack(magic, VERSION, DATA_OFFSET, sample_rate, channels, capacity, epoch, pid,
                       flags, heartbeat_ns)


def validate_header(buf, size: int) -> tuple[int, int, int]:
    """Check magic, version, data offset and size of a mapped ring.

    Returns ``(sample_rate, channels, capacity_frames)``; raises ``RingError`` with a code.
    """
    if size < DATA_OFFSET:
        raise RingError("ring_size", f"segment is {size} bytes, smaller than the {DATA_OFFSET}-byte header")
    magic = bytes(buf[0:8])
    if magic != MAGIC:
        raise RingError("ring_magic", f"bad magic {magic!r} (expected {MAGIC!r}); not a wavebridge ring "
                                      "or still being created")
    version, data_off, rate, ch, cap = struct.unpack_from("<IIIIQ", buf, OFF_VERSION)
    if version != VERSION:
        raise RingError("ring_version", f"ring protocol version {version}, this reader speaks {VERSION}")
    if data_off != DATA_OFFSET:
        raise RingError("ring_layout", f"data_offset {data_off}, expected {DATA_OFFSET}")
    if not (1 <= ch <= MAX_CHANNELS) or not is_pow2(cap) or cap > MAX_CAPACITY or rate == 0:
        raise RingError("ring_layout", f"implausible header: rate={rate} channels={ch} capacity={cap}")
    if size < ring_bytes(cap, ch):
        raise RingError("ring_size", f"segment is {size} bytes, header needs {ring_bytes(cap, ch)}")
    return rate, ch, cap


def monotonic_ns() -> int:
    """CLOCK_MONOTONIC in nanoseconds, the clock of both heartbeats."""
    return time.monotonic_ns()
