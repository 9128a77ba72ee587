"""Ring protocol v1 layout and the wavebridge error family.

This module is the one piece of ``bridge`` that ``plugin_stub`` imports: it depends on the
standard library only. It owns the byte layout of a slot's shared-memory ring (see
``docs/ring-protocol.md``), the shared-memory naming rule, and ``WavebridgeError`` whose codes
map 1:1 to ``/wb/error`` codes. No threads; pure data and checks.
"""
from __future__ import annotations

import errno
import os
import re
import stat
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
MIN_RATE, MAX_RATE = 8000, 384000   # plausible sample_rate / reader_sample_rate (0 = unknown)
MAX_READER_BLOCK = 16384   # plausible reader_block_frames; larger values are clamped
MAX_INDEX = 1 << 62        # plausible write_index/read_index/epoch (2⁶² frames: ~3 million years)
PID_MAX = 1 << 22          # Linux PID_MAX_LIMIT: a larger writer_pid/reader_pid is garbage
RING_MODE = 0o600
U64_MASK = (1 << 64) - 1
U32_MASK = (1 << 32) - 1
SHM_DIR = "/dev/shm"        # the normative ring directory (docs/ring-protocol.md)
#: a private ring directory instead of :data:`SHM_DIR` (tests, isolation); DAW and daemon must agree
SHM_DIR_ENV = "WAVEBRIDGE_SHM_DIR"
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
    ``ring_name``, ``ring_exists``, ``ring_busy``, ``ring_type`` (not a regular file: a symlink,
    FIFO, directory …), ``ring_owner`` (owned by another user), ``ring_mode`` (not mode 0600),
    ``ring_space`` (no room in the ring directory), ``ring_io`` (another system error opening it),
    ``ring_fault`` (see :class:`RingFault`).
    """

    code = "ring"


class RingFault(RingError):
    """A live ring went bad under its writer: a shrunk segment (``fatal``: the slot stops and
    gets a fresh ring at its next play) or a header field someone overwrote with a value out of
    range (not fatal: the writer clamped or rewrote it and the slot plays on)."""

    def __init__(self, code: str, message: str, slot: int = -1, fatal: bool = False):
        super().__init__(code, message, slot)
        self.fatal = fatal


def shm_name(slot: int | str) -> str:
    """POSIX shared-memory name of a slot's ring, e.g. ``wavebridge.1``."""
    s = str(slot)
    if not SLOT_NAME_RE.match(s):
        raise RingError("ring_name", f"slot name {s!r} must match [A-Za-z0-9_-]{{1,32}}")
    return f"wavebridge.{s}"


def shm_dir() -> str:
    """The directory rings live in: ``$WAVEBRIDGE_SHM_DIR`` if set (read at each call), else
    :data:`SHM_DIR` (``/dev/shm``).

    A private directory must be a real directory (not a symlink), owned by our effective uid,
    with mode 0700; anything else raises ``RingError`` (``ring_type``, ``ring_owner``,
    ``ring_mode``, ``ring_io``). ``/dev/shm`` itself is taken as it is. One ``lstat``.
    """
    d = os.environ.get(SHM_DIR_ENV)
    if not d or os.path.normpath(d) == "/dev/shm":
        return SHM_DIR
    where = f"{SHM_DIR_ENV}={d}"
    if not os.path.isabs(d):
        raise RingError("ring_type", f"{where} is not an absolute path: refusing it")
    try:
        st = os.lstat(d)
    except OSError as e:
        raise RingError("ring_io", f"{where} cannot be used ({e.strerror}): refusing it") from None
    if not stat.S_ISDIR(st.st_mode):
        raise RingError("ring_type", f"{where} is {_kind(st.st_mode)}, not a directory: refusing it")
    euid = os.geteuid()
    if st.st_uid != euid:
        raise RingError("ring_owner", f"{where} belongs to {_owner(st.st_uid)}, not to us ({_owner(euid)}): "
                                      "refusing it")
    if stat.S_IMODE(st.st_mode) != 0o700:
        raise RingError("ring_mode", f"{where} has mode {stat.S_IMODE(st.st_mode):04o}, not 0700: refusing it")
    return d


def shm_path(slot: int | str) -> str:
    """Filesystem path of a slot's ring on Linux (``/dev/shm/wavebridge.<slot>``, or under
    ``$WAVEBRIDGE_SHM_DIR``: :func:`shm_dir`)."""
    return os.path.join(shm_dir(), shm_name(slot))


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
    if not (1 <= ch <= MAX_CHANNELS) or not is_pow2(cap) or cap > MAX_CAPACITY or not MIN_RATE <= rate <= MAX_RATE:
        raise RingError("ring_layout", f"implausible header: rate={rate} channels={ch} capacity={cap}")
    if size < ring_bytes(cap, ch):
        raise RingError("ring_size", f"segment is {size} bytes, header needs {ring_bytes(cap, ch)}")
    return rate, ch, cap


_KIND = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory",
         stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def _kind(mode: int) -> str:
    return _KIND.get(stat.S_IFMT(mode), "not a regular file")


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def check_segment(st: os.stat_result, path: str, *, mode: bool = True) -> None:
    """Refuse anything but a regular file owned by our effective uid with mode 0600.

    Raises ``RingError`` (``ring_type``, ``ring_owner``, ``ring_mode``) with one clear sentence.
    """
    if not stat.S_ISREG(st.st_mode):
        raise RingError("ring_type", f"{path} is {_kind(st.st_mode)}, not a ring: refusing it")
    euid = os.geteuid()
    if st.st_uid != euid:
        raise RingError("ring_owner", f"{path} belongs to {_owner(st.st_uid)}, not to us ({_owner(euid)}): "
                                      "refusing it")
    if mode and stat.S_IMODE(st.st_mode) != RING_MODE:
        raise RingError("ring_mode", f"{path} has mode {stat.S_IMODE(st.st_mode):04o}, not 0600: refusing it")


def open_segment(path: str, writable: bool = True, *, mode: bool = True) -> tuple[int, os.stat_result]:
    """Open an existing ring without following links or blocking on a FIFO, and check it.

    Returns ``(fd, fstat)``; the checks run on the opened descriptor (no check-then-open race).
    Raises ``RingError``: ``ring_missing``, ``ring_type``, ``ring_owner``, ``ring_mode``.
    """
    flags = (os.O_RDWR if writable else os.O_RDONLY) | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise RingError("ring_missing", f"{path} does not exist (is the daemon running with this slot?)") from None
    except OSError as e:
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise RingError("ring_type", f"{path} is {_kind(st.st_mode)}, not a ring: refusing it") from None
        if e.errno in (errno.EACCES, errno.EPERM) and st is not None:
            raise RingError("ring_owner", f"{path} belongs to {_owner(st.st_uid)} and is not ours to open "
                                          f"(mode {stat.S_IMODE(st.st_mode):04o}): refusing it") from None
        raise RingError("ring_type", f"{path} cannot be opened ({e.strerror}): refusing it") from None
    try:
        st = os.fstat(fd)
        check_segment(st, path, mode=mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def same_file(path: str, ident: tuple[int, int]) -> bool:
    """True if ``path`` (not following links) is still the regular file ``(st_dev, st_ino)``, ours."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == tuple(ident)
            and st.st_uid == os.geteuid())


def unlink_if_same(path: str, ident) -> bool:
    """Unlink ``path`` only if it is still the file we created (same inode, our uid, regular).

    Between the check and the unlink another process could swap the name (no unlink-by-inode
    exists); /dev/shm's sticky bit keeps other users from doing so with our own files.
    """
    if ident is None or not same_file(path, ident):
        return False
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def pid_alive(pid: int) -> bool:
    """True if ``pid`` names a live process. A value no kernel hands out is dead (never a signal
    to a process group: 0 and anything ≥ ``PID_MAX`` are refused before ``kill``)."""
    if not 0 < pid < PID_MAX:
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


def monotonic_ns() -> int:
    """CLOCK_MONOTONIC in nanoseconds, the clock of both heartbeats."""
    return time.monotonic_ns()
