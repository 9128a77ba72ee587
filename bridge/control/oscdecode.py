"""A bounded OSC 1.0/1.1 decoder: what the daemon parses every received datagram with.

python-osc's parser trusts the sizes a datagram declares (a bundle element of size −4 makes its
walk step back onto the same field forever) and slices the input at every nesting level, so a
deep bundle costs time quadratic in its size. This decoder owns the untrusted side instead:

- it walks the datagram's bytes by offsets, never slicing or recursing through the input itself;
  bundle nesting is an explicit stack of at most ``max_depth`` levels;
- every declared size is checked before use: an element size must be positive, a multiple of 4,
  and fit inside its enclosing bundle (so no size can point back at itself or past the end);
  blob sizes likewise; strings must be NUL-terminated inside the data;
- one datagram has a budget: at most ``max_bytes`` bytes, ``max_messages`` messages,
  ``max_bundles`` bundles and ``max_args`` arguments in all; a type-tag string longer than the
  argument budget is refused before it is walked;
- type tags are validated (``ifsbhdtcrmTFNIS`` and arrays ``[ ]`` nested at most
  ``MAX_ARRAY_DEPTH`` deep); anything else is refused.

Every failure is a :class:`OscDecodeError` (a ``WavebridgeError``) with code ``malformed`` —
or ``busy`` when a well-formed datagram carries more messages than one datagram may — and a
message that says what was wrong and where. The work per datagram is linear in its length
with a small constant; nothing in it can loop or recurse without bound.

The result is a list of :class:`TimedMessage` in document order: ``time`` is the Unix time of
the enclosing bundle's timetag (``0.0`` = immediately) and ``message`` has ``address`` and
``params`` like python-osc's ``OscMessage``. ``[control]``: pure computation, no I/O.
"""
from __future__ import annotations

import struct

from plugin_stub.protocol import WavebridgeError

NTP_EPOCH = 2208988800            # seconds from 1900-01-01 (NTP) to 1970-01-01 (Unix)
MAX_BYTES = 65536                 # a UDP datagram cannot be longer
MAX_DEPTH = 8                     # bundles inside bundles
MAX_MESSAGES = 256                # messages in one datagram (bundles unpacked)
MAX_BUNDLES = 64                  # bundles in one datagram, nested or side by side
MAX_ARGS = 1024                   # arguments in one datagram, all messages together
MAX_ARRAY_DEPTH = 4               # OSC 1.1 arrays inside arrays
BUNDLE_TAG = b"#bundle\0"

_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_F32 = struct.Struct(">f")
_I64 = struct.Struct(">q")
_U64 = struct.Struct(">Q")
_F64 = struct.Struct(">d")
_FIXED = {"i": 4, "f": 4, "c": 4, "r": 4, "m": 4, "h": 8, "d": 8, "t": 8}
_NOARG = {"T": True, "F": False, "N": None, "I": float("inf")}


class OscDecodeError(WavebridgeError):
    """A datagram that is not acceptable OSC. ``code``: ``malformed`` or ``busy``."""

    def __init__(self, message: str, code: str = "malformed"):
        super().__init__(code, message)


class Message:
    """One decoded OSC message: ``address`` (str) and ``params`` (list)."""

    __slots__ = ("address", "params")

    def __init__(self, address: str, params: list):
        self.address = address
        self.params = params

    def __repr__(self) -> str:
        return f"Message({self.address!r}, {self.params!r})"


class TimedMessage:
    """A message and the Unix time it should run at (``0.0``: at once)."""

    __slots__ = ("time", "message")

    def __init__(self, time: float, message: Message):
        self.time = time
        self.message = message

    def __repr__(self) -> str:
        return f"TimedMessage({self.time!r}, {self.message!r})"


def timetag_to_unix(tt: int) -> float:
    """An OSC/NTP 64-bit timetag as Unix seconds; ``0`` and ``1`` ("immediately") → ``0.0``."""
    if tt <= 1:
        return 0.0
    return (tt >> 32) - NTP_EPOCH + (tt & 0xFFFFFFFF) / 4294967296.0


class _Budget:
    __slots__ = ("messages", "bundles", "args", "max_messages")

    def __init__(self, max_messages: int, max_bundles: int, max_args: int):
        self.messages = max_messages
        self.bundles = max_bundles
        self.args = max_args
        self.max_messages = max_messages


def _string(raw: bytes, i: int, end: int, what: str) -> tuple[str, int]:
    """An OSC-string at ``i`` (NUL-terminated, padded to 4) inside ``[i, end)``."""
    j = raw.find(b"\0", i, end)
    if j < 0:
        raise OscDecodeError(f"{what} at byte {i} is not NUL-terminated")
    nxt = (j + 4) & ~3
    if nxt > end:
        raise OscDecodeError(f"{what} at byte {i} is not padded to 4 bytes")
    try:
        return raw[i:j].decode("utf-8"), nxt
    except UnicodeDecodeError:
        raise OscDecodeError(f"{what} at byte {i} is not UTF-8") from None


def _message(raw: bytes, start: int, end: int, budget: _Budget) -> Message:
    """One message occupying exactly ``[start, end)``."""
    address, i = _string(raw, start, end, "address")
    if not address.startswith("/"):
        raise OscDecodeError(f"address {address[:40]!r} does not start with '/'")
    if i >= end:                                   # OSC 1.0: a message may omit its type tags
        return Message(address, [])
    tags, i = _string(raw, i, end, "type tags")
    if not tags.startswith(","):
        raise OscDecodeError(f"type tags {tags[:20]!r} do not start with ','")
    tags = tags[1:]
    if len(tags) > budget.args:
        raise OscDecodeError(f"{len(tags)} type tags; the limit is {budget.args} arguments per datagram")
    out: list = []
    stack: list[list] = []
    for t in tags:
        budget.args -= 1
        fixed = _FIXED.get(t)
        if fixed is not None:
            if i + fixed > end:
                raise OscDecodeError(f"argument '{t}' at byte {i} runs past the end")
            if t == "i":
                v = _I32.unpack_from(raw, i)[0]
            elif t == "f":
                v = _F32.unpack_from(raw, i)[0]
            elif t == "h":
                v = _I64.unpack_from(raw, i)[0]
            elif t == "d":
                v = _F64.unpack_from(raw, i)[0]
            elif t == "t":
                v = timetag_to_unix(_U64.unpack_from(raw, i)[0])
            elif t == "c":
                code = _U32.unpack_from(raw, i)[0]
                if code > 0x10FFFF:
                    raise OscDecodeError(f"char argument at byte {i} is not a code point")
                v = chr(code)
            elif t == "r":
                v = _U32.unpack_from(raw, i)[0]
            else:                                  # 'm': MIDI message, 4 bytes
                v = bytes(raw[i:i + 4])
            i += fixed
            out.append(v)
        elif t in ("s", "S"):
            v, i = _string(raw, i, end, "string argument")
            out.append(v)
        elif t == "b":
            if i + 4 > end:
                raise OscDecodeError(f"blob size at byte {i} runs past the end")
            n = _I32.unpack_from(raw, i)[0]
            if n < 0:
                raise OscDecodeError(f"blob size {n} at byte {i} is negative")
            i += 4
            if i + n > end:
                raise OscDecodeError(f"blob of {n} bytes at byte {i} runs past the end")
            out.append(bytes(raw[i:i + n]))
            i = (i + n + 3) & ~3
            if i > end:
                raise OscDecodeError("blob is not padded to 4 bytes")
        elif t in _NOARG:
            out.append(_NOARG[t])
        elif t == "[":
            if len(stack) >= MAX_ARRAY_DEPTH:
                raise OscDecodeError(f"arrays nested deeper than {MAX_ARRAY_DEPTH}")
            stack.append(out)
            inner: list = []
            out.append(inner)
            out = inner
        elif t == "]":
            if not stack:
                raise OscDecodeError("']' without '[' in the type tags")
            out = stack.pop()
        else:
            raise OscDecodeError(f"unknown type tag {t!r}")
    if stack:
        raise OscDecodeError("'[' without ']' in the type tags")
    if i != end:
        raise OscDecodeError(f"{end - i} bytes after the last argument of {address[:40]!r}")
    return Message(address, out)


def decode(data, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
           max_messages: int = MAX_MESSAGES, max_bundles: int = MAX_BUNDLES,
           max_args: int = MAX_ARGS) -> list[TimedMessage]:
    """All messages of one datagram, in document order. Raises :class:`OscDecodeError`.

    ``[control]``. A nested bundle's messages run at the later of its own timetag and its
    parent's (OSC 1.0 requires a nested timetag to be no earlier than the enclosing one).
    """
    n = len(data)
    if n == 0:
        raise OscDecodeError("empty datagram")
    if n > max_bytes:
        raise OscDecodeError(f"datagram of {n} bytes; the limit is {max_bytes}")
    if n % 4:
        raise OscDecodeError(f"datagram of {n} bytes is not a multiple of 4")
    if not isinstance(data, bytes):
        data = bytes(data)
    budget = _Budget(max_messages, max_bundles, max_args)
    out: list[TimedMessage] = []
    if not data.startswith(BUNDLE_TAG):
        if data[0:1] != b"/":
            raise OscDecodeError("neither a message (address starting with '/') nor a '#bundle'")
        out.append(TimedMessage(0.0, _message(data, 0, n, budget)))
        return out
    # bundles: an explicit stack of (position, end, time) — no recursion, bounded depth
    stack: list[list] = []

    def open_bundle(start: int, end: int, parent_time: float) -> None:
        if len(stack) >= max_depth:
            raise OscDecodeError(f"bundles nested deeper than {max_depth}")
        budget.bundles -= 1
        if budget.bundles < 0:
            raise OscDecodeError(f"more than {max_bundles} bundles in one datagram")
        if end - start < 16:
            raise OscDecodeError(f"bundle at byte {start} is shorter than its header")
        tt = timetag_to_unix(_U64.unpack_from(data, start + 8)[0])
        stack.append([start + 16, end, max(tt, parent_time) if tt else parent_time])

    open_bundle(0, n, 0.0)
    while stack:
        top = stack[-1]
        i, end, when = top
        if i == end:
            stack.pop()
            continue
        if i + 4 > end:
            raise OscDecodeError(f"bundle element size at byte {i} runs past the bundle")
        size = _I32.unpack_from(data, i)[0]
        body = i + 4
        if size <= 0:
            raise OscDecodeError(f"bundle element size {size} at byte {i} is not positive")
        if size % 4:
            raise OscDecodeError(f"bundle element size {size} at byte {i} is not a multiple of 4")
        if body + size > end:
            raise OscDecodeError(f"bundle element of {size} bytes at byte {i} runs past its bundle")
        top[0] = body + size                       # strictly forward: every step consumes ≥ 8 bytes
        if data.startswith(BUNDLE_TAG, body, body + size):
            open_bundle(body, body + size, when)
            continue
        if data[body:body + 1] != b"/":
            raise OscDecodeError(f"bundle element at byte {body} is neither a message nor a bundle")
        budget.messages -= 1
        if budget.messages < 0:
            raise OscDecodeError(f"more than {budget.max_messages} messages in one datagram", code="busy")
        out.append(TimedMessage(when, _message(data, body, body + size, budget)))
    return out
