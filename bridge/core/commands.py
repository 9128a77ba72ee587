"""Commands: what every control adapter (OSC, MIDI, CLI) turns its input into.

``parse_osc`` validates one OSC message (address + typed arguments) into a :class:`Command`
or raises ``WavebridgeError`` with a stable code; adapters never talk to the engine directly.
All of it is ``[control]``: pure parsing, no I/O.

Stable error codes (also in ``docs/osc.md``):
``unknown_address``, ``bad_args`` (count), ``bad_type``, ``bad_slot``, ``bad_prompt``,
``prompt_too_long``, ``bad_value`` (NaN/inf/out of range), ``unknown_param``, ``malformed``
(not an OSC packet), ``busy`` (engine queue full), ``rate_limited``, ``not_playing``,
``backend``, ``oom``, ``internal``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from plugin_stub.protocol import WavebridgeError

MAX_PROMPT_CHARS = 512
MAX_SECONDS = 24 * 3600.0
MAX_FADE_S = 30.0
#: the seeds ``/wb/play`` accepts: ``SEED_MIN <= seed < SEED_MAX`` (a signed or an unsigned 32-bit value)
SEED_MIN, SEED_MAX = -(2 ** 31), 2 ** 32

#: live parameters every backend accepts: name → (min, max)
COMMON_PARAMS = {
    "gain": (0.0, 4.0),
    "xfade_ms": (1.0, 500.0),
    "temperature": (0.0, 2.0),
    "guidance": (0.0, 10.0),
    "top_k": (1.0, 2048.0),
    "brightness": (0.0, 1.0),
}


@dataclass
class HostTransport:
    """A ``/wb/transport`` report: the host's position at the ring frame ``read_index``."""

    speed: float
    bpm: float
    beats_per_bar: float
    bar: int
    bar_beat: float
    beat: float                       # absolute host beat: ``bar * beats_per_bar + bar_beat``
    read_index: int                   # the ring frame the host's read head was playing (-1: unknown)
    host_frame: int = -1              # the host's own sample position (-1: unknown)


@dataclass
class Command:
    """One validated request. ``arrival_ns`` is CLOCK_MONOTONIC at the datagram's arrival.

    ``slot`` is the slot's key in ``Daemon.slots``: its number for a DAW slot, or its name (a
    configured slot name, a private web stream's ring name). The fields after ``reply_to``
    belong to one kind each.
    """

    kind: str                         # play | stop | param | chord | theme | theme_key | tempo | transport | status | ping …
    slot: int | str = -1
    prompt: str = ""
    seconds: float = 0.0
    seed: int | None = None
    fade_s: float = 0.05
    name: str = ""
    value: float = 0.0
    arrival_ns: int = 0
    source: str = "osc"
    reply_to: object = None           # adapter-specific reply address
    # play
    quantize: str = "off"             # off | beat | bar: the change lands on the next line
    job_id: int = 0                   # assigned by ``Daemon.submit``
    superseded: bool = False          # a newer play of the slot waits behind it (``CommandQueue``)
    held: int = 0                     # held for its beat/bar line: the host link's generation (0: not held)
    splice_at: int | None = None      # a held play's crossfade starts at this ring frame
    # transport
    transport: HostTransport | None = None
    # status
    page: int = 0
    # chord: a symbol ("Am7/G"; "" releases), or the MIDI notes a harmony channel holds
    chord: str = ""
    notes: tuple[int, ...] = ()
    latch: bool = False               # notes: all keys up holds the last chord (the MIDI map's ``latch``)
    # theme: ``chord`` is the action (record | stop | clear), or ``theme_notes`` a tune given whole
    theme_notes: tuple = ()


def _need(args, lo, hi, address):
    if not (lo <= len(args) <= hi):
        want = f"{lo}" if lo == hi else f"{lo}–{hi}"
        raise WavebridgeError("bad_args", f"{address} takes {want} arguments, got {len(args)}")


def _int(v, what, address):
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and math.isfinite(v) and v == int(v):
            return int(v)
        raise WavebridgeError("bad_type", f"{address}: {what} must be an int, got {type(v).__name__}")
    return v


def _float(v, what, address, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise WavebridgeError("bad_type", f"{address}: {what} must be a number, got {type(v).__name__}")
    v = float(v)
    if not math.isfinite(v):
        raise WavebridgeError("bad_value", f"{address}: {what} must be finite, got {v}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise WavebridgeError("bad_value", f"{address}: {what} {v:g} is outside [{lo:g}, {hi:g}]")
    return v


def check_slot(v, nslots: int, address: str) -> int:
    slot = _int(v, "slot", address)
    if not 1 <= slot <= nslots:
        raise WavebridgeError("bad_slot", f"{address}: slot {slot} does not exist (1..{nslots})", slot=-1)
    return slot


def check_seed(v, where: str) -> int:
    """``v`` as a seed: an int (or an integral float) with ``SEED_MIN <= v < SEED_MAX``; raises
    ``WavebridgeError`` (``bad_type``, ``bad_value``) naming ``where``. ``[control]``"""
    seed = _int(v, "seed", where)
    if not SEED_MIN <= seed < SEED_MAX:
        raise WavebridgeError("bad_value", f"{where}: seed out of range")
    return seed


def clean_prompt(v, address: str = "/wb/play") -> str:
    """A prompt as text: printable, collapsed whitespace, at most ``MAX_PROMPT_CHARS``."""
    if isinstance(v, (bytes, bytearray)):
        try:
            v = bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            raise WavebridgeError("bad_prompt", f"{address}: prompt is not UTF-8 text") from None
    if not isinstance(v, str):
        raise WavebridgeError("bad_type", f"{address}: prompt must be a string, got {type(v).__name__}")
    if len(v) > MAX_PROMPT_CHARS:
        raise WavebridgeError("prompt_too_long", f"{address}: prompt has {len(v)} characters, the limit is "
                                                 f"{MAX_PROMPT_CHARS}")
    if any((not ch.isprintable()) and ch not in " \t\n" for ch in v):
        raise WavebridgeError("bad_prompt", f"{address}: prompt contains control characters")
    p = " ".join(v.split())
    if not p:
        raise WavebridgeError("bad_prompt", f"{address}: prompt is empty")
    return p


QUANTIZE = ("off", "beat", "bar")


def _quantize(v, address):
    if not isinstance(v, str):
        raise WavebridgeError("bad_type", f"{address}: quantize must be a string (off, beat or bar)")
    if v not in QUANTIZE:
        raise WavebridgeError("bad_value", f"{address}: quantize {v[:16]!r} is not off, beat or bar")
    return v


def _transport(args, nslots: int, address: str) -> Command:
    """``/wb/transport i slot, f speed, f bpm, f beats_per_bar, i bar, f bar_beat, h read_index
    [, h host_frame]``: the host's position at the ring frame ``read_index`` (-1: unknown)."""
    _need(args, 7, 8, address)
    slot = check_slot(args[0], nslots, address)
    try:
        speed = _float(args[1], "speed", address, -16.0, 16.0)
        bpm = _float(args[2], "bpm", address, 20.0, 400.0)
        bpb = _float(args[3], "beats_per_bar", address, 1.0, 64.0)
        bar = _int(args[4], "bar", address)
        bar_beat = _float(args[5], "bar_beat", address, 0.0, 64.0)
        read_index = _int(args[6], "read_index", address)
        host_frame = _int(args[7], "host_frame", address) if len(args) > 7 else -1
        if bar < 0 or read_index < -1 or bar_beat > bpb:
            raise WavebridgeError("bad_value", f"{address}: bar, bar_beat or read_index out of range")
    except WavebridgeError as e:
        e.slot = slot
        raise
    return Command("transport", slot=slot, value=bpm,
                   transport=HostTransport(speed, bpm, bpb, bar, bar_beat, bar * bpb + bar_beat, read_index,
                                           host_frame))


MAX_CHORD_CHARS = 24


def _chord(args, nslots: int, address: str) -> Command:
    """``/wb/chord i slot, s symbol [, s quantize]``: the slot's harmony follows ``symbol``
    ("Am7/G", "F#m7b5", "E5" …) from its next beat (``quantize`` beat, the default; bar; off);
    an empty symbol gives the composed progression back."""
    _need(args, 2, 3, address)
    slot = check_slot(args[0], nslots, address)
    try:
        sym = args[1]
        if isinstance(sym, (bytes, bytearray)):
            sym = bytes(sym).decode("utf-8", "replace")
        if not isinstance(sym, str):
            raise WavebridgeError("bad_type", f"{address}: chord must be a string, got {type(sym).__name__}")
        sym = sym.strip()
        if len(sym) > MAX_CHORD_CHARS:
            raise WavebridgeError("bad_chord", f"{address}: a chord symbol has at most {MAX_CHORD_CHARS} characters")
        if sym:
            from engine.compose.chordread import parse_symbol
            try:
                sym = parse_symbol(sym).symbol
            except ValueError as e:
                raise WavebridgeError("bad_chord", f"{address}: {e}") from None
        quantize = _quantize(args[2], address) if len(args) > 2 else "beat"
    except WavebridgeError as e:
        e.slot = slot
        raise
    return Command("chord", slot=slot, chord=sym, quantize=quantize)


MAX_KEYS = 16
MAX_THEME_FILE = 32768
THEME_ACTIONS = ("record", "stop", "clear")


def _theme(args, nslots: int, address: str) -> Command:
    """``/wb/theme i slot, s record|stop|clear`` (record the keys played on the slot's MIDI
    channel as its tune; stop; back to the composer's motifs) or ``/wb/theme i slot, b smf``
    (a Standard MIDI File's tune, ≤ 32 KB: its top line)."""
    _need(args, 2, 2, address)
    slot = check_slot(args[0], nslots, address)
    v = args[1]
    try:
        if isinstance(v, str):
            if v not in THEME_ACTIONS:
                raise WavebridgeError("bad_value", f"{address}: {v[:16]!r} is not record, stop or clear "
                                                   f"(or send a MIDI file as a blob)")
            return Command("theme", slot=slot, chord=v)
        if not isinstance(v, (bytes, bytearray)):
            raise WavebridgeError("bad_type", f"{address}: expects record, stop, clear or a MIDI file blob")
        if len(v) > MAX_THEME_FILE:
            raise WavebridgeError("bad_value", f"{address}: a MIDI file of at most {MAX_THEME_FILE} bytes")
        from engine.midifile import read_tune
        try:
            notes = read_tune(bytes(v))
        except ValueError as e:
            raise WavebridgeError("bad_value", f"{address}: {e}") from None
    except WavebridgeError as e:
        e.slot = slot
        raise
    return Command("theme", slot=slot, theme_notes=tuple(notes))


def _keys(args, nslots: int, address: str) -> Command:
    """``/wb/keys i slot [, i note …]``: the keys a keyboard holds now (MIDI note numbers, at most
    16), named as the slot's chord like a MIDI harmony channel's (none held: released) — what
    the LV2 plugin forwards from its MIDI input and the web page from Web MIDI."""
    _need(args, 1, 1 + MAX_KEYS, address)
    slot = check_slot(args[0], nslots, address)
    try:
        notes = tuple(sorted({_int(v, "note", address) for v in args[1:]}))
        if any(not 0 <= n <= 127 for n in notes):
            raise WavebridgeError("bad_value", f"{address}: a note is 0..127")
    except WavebridgeError as e:
        e.slot = slot
        raise
    return Command("chord", slot=slot, notes=notes, source="keys", quantize="beat")


def parse_osc(address: str, args: list, nslots: int, params: dict | None = None) -> Command:
    """Validate one OSC message into a Command; raises ``WavebridgeError``. ``[control]``"""
    params = params or COMMON_PARAMS
    if address == "/wb/play":
        _need(args, 2, 5, address)
        slot = check_slot(args[0], nslots, address)
        try:
            prompt = clean_prompt(args[1], address)
            seconds = _float(args[2], "seconds", address, 0.0, MAX_SECONDS) if len(args) > 2 else 0.0
            seed = check_seed(args[3], address) if len(args) > 3 else None
            quantize = _quantize(args[4], address) if len(args) > 4 else "off"
        except WavebridgeError as e:
            e.slot = slot
            raise
        return Command("play", slot=slot, prompt=prompt, seconds=seconds, seed=seed, quantize=quantize)
    if address == "/wb/transport":
        return _transport(args, nslots, address)
    if address == "/wb/stop":
        _need(args, 1, 2, address)
        slot = check_slot(args[0], nslots, address)
        try:
            fade = _float(args[1], "fade_s", address, 0.0, MAX_FADE_S) if len(args) > 1 else 0.05
        except WavebridgeError as e:
            e.slot = slot
            raise
        return Command("stop", slot=slot, fade_s=fade)
    if address == "/wb/param":
        _need(args, 3, 3, address)
        slot = check_slot(args[0], nslots, address)
        name = args[1]
        if not isinstance(name, str):
            raise WavebridgeError("bad_type", f"{address}: name must be a string", slot=slot)
        if name not in params:
            raise WavebridgeError("unknown_param", f"{address}: unknown parameter {name[:40]!r}; known: "
                                                   f"{', '.join(sorted(params))}", slot=slot)
        lo, hi = params[name][:2]
        try:
            value = _float(args[2], name, address, lo, hi)
        except WavebridgeError as e:
            e.slot = slot
            raise
        return Command("param", slot=slot, name=name, value=value)
    if address == "/wb/chord":
        return _chord(args, nslots, address)
    if address == "/wb/keys":
        return _keys(args, nslots, address)
    if address == "/wb/theme":
        return _theme(args, nslots, address)
    if address == "/wb/tempo":
        _need(args, 1, 1, address)
        return Command("tempo", value=_float(args[0], "bpm", address, 20.0, 400.0))
    if address == "/wb/status":
        # [i page [, b|s padding]]: a bigger request may be answered with a bigger page
        _need(args, 0, 2, address)
        page = _int(args[0], "page", address) if args else 0
        if not 0 <= page < 2 ** 16:
            raise WavebridgeError("bad_value", f"{address}: page {page} is out of range")
        if len(args) > 1 and not isinstance(args[1], (bytes, bytearray, str)):
            raise WavebridgeError("bad_type", f"{address}: padding must be a blob or a string")
        return Command("status", page=page)
    if address == "/wb/ping":
        _need(args, 0, 0, address)
        return Command("ping")
    raise WavebridgeError("unknown_address", f"unknown address {str(address)[:64]!r}")
