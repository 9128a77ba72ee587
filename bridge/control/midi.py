"""MIDI adapter: a TOML map, the message → Command mapping, and the input port.

Three pieces, from pure to I/O:

- :class:`MidiMap` — what a map file says (``examples/midi-map.toml``), validated at load time
  against the msgspec structs ``_MapFile`` & co. (:func:`bridge.core.schema.convert`, the same schema
  layer as the config file) so a typo is an error with the file and key, not a surprise on stage. ``MidiMap.default()``
  is the map used without a file: channel n → slot n, notes pick prompts from a bank, program
  change selects the bank, CC 7 → gain, CC 1 → brightness, CC 74 → guidance.
- :class:`MidiMapper` — turns one ``mido.Message`` into zero or more :class:`Command` objects,
  through ``bridge.core.commands.parse_osc`` so MIDI input is validated exactly like OSC input.
  It keeps the little state a keyboard needs (which note sounds on which slot, the selected
  bank per channel, MIDI clock for tempo) and counts what it ignores. Pure ``[control]``: no
  port, no daemon; tests drive it with plain messages.
- :class:`MidiInput` — opens a virtual input (``wavebridge``) or connects to a named port with
  mido + python-rtmidi, honouring ``MIDO_BACKEND`` (``mido.backends.rtmidi/UNIX_JACK`` on
  machines with JACK and no ALSA sequencer; without ``MIDO_BACKEND`` it tries the default API
  and falls back to JACK). The backend's callback runs on rtmidi's thread: it only stamps the
  arrival time and hands the raw bytes to the asyncio loop with ``call_soon_threadsafe``;
  parsing, mapping and ``Daemon.submit`` happen on the loop (``[control]``). Bad bytes and
  unmapped messages are counted, never fatal. A port that cannot be opened yet (JACK not
  running, a controller not plugged in) is retried (2 s, doubling up to 30 s) while audio carries on.

Note numbers follow the common convention C4 = 60 (middle C); MIDI channels are 1–16 in map
files and in logs, as musicians count them.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Annotated, Literal, Union

import msgspec

from bridge.core.commands import COMMON_PARAMS, Command, clean_prompt, parse_osc
from plugin_stub.protocol import FixedCodeError, WavebridgeError
from bridge.core.schema import FINITE, convert, load_toml

log = logging.getLogger("wavebridge.midi")

DEFAULT_PORT_NAME = "wavebridge"
JACK_BACKEND = "mido.backends.rtmidi/UNIX_JACK"
RETRY_S = 2.0                 # first retry of a port that cannot be opened; doubles up to RETRY_MAX_S
RETRY_MAX_S = 30.0
WATCH_S = 1.0                 # how often a connected named port is checked for still being there

#: the default prompt banks (program change 0, 1, 2 … selects one); notes from ``base_note`` up
#: pick the bank's prompts in order, wrapping around every ``len(bank)`` keys.
DEFAULT_BANKS: list[tuple[str, list[str]]] = [
    ("grooves", [
        "deep house in A minor with piano, warm bass and drums, 122 bpm",
        "techno with a driving arp and tight drums, 130 bpm",
        "lofi hip hop with dusty piano and a lazy groove, 78 bpm",
        "funk with slap bass, guitar lead and tight drums",
        "disco with strings, piano and a four on the floor beat",
        "drum and bass with rolling bass and airy pads, 172 bpm",
        "jazz trio with brushes, walking bass and rhodes",
        "synthwave with arpeggios, warm pads and gated drums",
        "uplifting trance with plucks and a big pad, 138 bpm",
        "chill pop with piano chords and a soft melody",
        "dark techno with a rumbling sub and percussion",
        "happy disco house with bright piano, 124 bpm",
    ]),
    ("textures", [
        "dreamy ambient pads and a slow bell melody in D major",
        "calm ambient drone with soft strings",
        "cinematic strings and piano, epic and slow",
        "mysterious ambient pads in E phrygian",
        "peaceful piano with warm pads",
        "melancholic cinematic piano in C minor",
        "warm ambient choir and a flute melody",
        "dark ambient drone with distant bells",
        "uplifting cinematic pads and arpeggios",
        "relaxed chill pads with a soft pluck sequence",
        "romantic piano and strings in F major",
        "tense cinematic drone with percussion",
    ]),
]

_NOTE_RE = re.compile(r"^\s*([A-Ga-g])([#b♯♭]?)(-?\d+)\s*$")
_PITCH = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}


def note_number(v, where: str = "note") -> int:
    """A MIDI note from an int (0–127) or a name such as ``"C4"`` (= 60), ``"F#2"``, ``"Bb-1"``."""
    if isinstance(v, bool):
        raise MidiMapError(f"{where}: {v!r} is not a note")
    if isinstance(v, int):
        n = v
    elif isinstance(v, str):
        m = _NOTE_RE.match(v)
        if not m:
            raise MidiMapError(f"{where}: {v!r} is not a note name like C4, F#2 or Bb-1")
        acc = {"#": 1, "♯": 1, "b": -1, "♭": -1}.get(m.group(2), 0)
        n = 12 * (int(m.group(3)) + 1) + _PITCH[m.group(1).lower()] + acc
    else:
        raise MidiMapError(f"{where}: {v!r} is not a note")
    if not 0 <= n <= 127:
        raise MidiMapError(f"{where}: note {v!r} is outside 0..127")
    return n


class MidiMapError(FixedCodeError):
    """A map file that does not load or validate (code ``bad_midi_map``)."""

    code = "bad_midi_map"


# ------------------------------------------------------------------ what a map file may say
Slot = Annotated[int, msgspec.Meta(ge=1, le=64, extra={"expect": "a slot 1..64"})]
Channel = Annotated[int, msgspec.Meta(ge=1, le=16, extra={"expect": "a MIDI channel 1..16"})]
Note = Annotated[Union[Annotated[int, msgspec.Meta(ge=0, le=127)], str],
                 msgspec.Meta(extra={"expect": "a note 0..127 or a name like C4, F#2 or Bb-1"})]
Name = Annotated[str, msgspec.Meta(min_length=1)]
Finite = Annotated[float, FINITE]
Length = Annotated[float, msgspec.Meta(ge=0.0, le=24 * 3600.0)]      # seconds of a job (0 = endless)


class _Velocity(msgspec.Struct, forbid_unknown_fields=True):
    enabled: bool = True
    param: Name = "gain"
    min: Finite = 0.25
    max: Finite = 1.0
    curve: Annotated[float, msgspec.Meta(ge=0.05, le=20.0)] = 1.0


class _Note(msgspec.Struct, forbid_unknown_fields=True):
    note: Note
    slot: Slot
    prompt: str                                  # checked by bridge.core.commands.clean_prompt, as over OSC
    channel: Union[Channel, None] = None
    seconds: Union[Length, None] = None
    seed: Union[int, None] = None


class _CC(msgspec.Struct, forbid_unknown_fields=True):
    cc: Annotated[int, msgspec.Meta(ge=0, le=119, extra={"expect": "a control change number 0..119"})]
    param: Name
    min: Union[Finite, None] = None              # None: the parameter's own range
    max: Union[Finite, None] = None
    curve: Literal["lin", "log"] = "lin"
    channel: Union[Channel, None] = None
    slot: Union[Slot, Literal["all"], None] = None


class _Bank(msgspec.Struct, forbid_unknown_fields=True):
    prompts: Annotated[list[str], msgspec.Meta(min_length=1, extra={"expect": "a non-empty list of prompts"})]
    name: Union[Name, None] = None


class _MapFile(msgspec.Struct, forbid_unknown_fields=True):
    """A map file as written (``[[note]]`` and ``[[notes]]`` alike; a single table is an array of one)."""

    mode: Literal["gate", "latch"] = "gate"
    fade_s: Annotated[float, msgspec.Meta(ge=0.0, le=30.0)] = 0.05
    seconds: Length = 0.0
    base_note: Note = 48
    channels: dict[Channel, Slot] = {}
    velocity: Union[bool, _Velocity] = True
    note: Union[list[_Note], _Note] = []
    notes: Union[list[_Note], _Note] = []
    unmapped_notes: Literal["bank", "ignore"] = "bank"
    cc: Union[list[_CC], _CC, None] = None       # None: the default CCs
    bank: Union[list[_Bank], _Bank] = []
    banks: Union[list[_Bank], _Bank] = []
    clock_tempo: bool = False
    harmony: dict[Channel, Slot] = msgspec.field(default_factory=lambda: {16: 1})
    harmony_latch: bool = False
    harmony_quantize: Literal["off", "beat", "bar"] = "beat"


@dataclass
class NoteRule:
    note: int
    slot: int
    prompt: str
    channel: int | None = None        # 1..16, None = any
    seconds: float | None = None      # None: the map's default
    seed: int | None = None


@dataclass
class CCRule:
    cc: int
    param: str                        # a live parameter, or "tempo"
    lo: float
    hi: float
    curve: str = "lin"                # lin | log
    channel: int | None = None        # None = any
    slot: int | str | None = None     # None = the channel's slot; "all" = every slot


@dataclass
class MidiMap:
    """A validated MIDI map. Build with :meth:`load`, :meth:`from_dict` or :meth:`default`."""

    mode: str = "gate"                # gate | latch
    fade_s: float = 0.05
    seconds: float = 0.0              # job length of a note (0 = endless)
    base_note: int = 48               # C3: the first prompt of the bank
    channels: dict[int, int] = field(default_factory=dict)   # channel (1..16) → slot; others: n → n
    velocity: bool = True
    velocity_param: str = "gain"
    velocity_min: float = 0.25
    velocity_max: float = 1.0
    velocity_curve: float = 1.0
    notes: list[NoteRule] = field(default_factory=list)
    unmapped_notes: str = "bank"      # bank | ignore
    cc: list[CCRule] = field(default_factory=list)
    banks: list[tuple[str, list[str]]] = field(default_factory=list)
    clock_tempo: bool = False         # MIDI clock (24 ppqn) → /wb/tempo
    #: harmony channels: channel → slot; the keys held there are the slot's chord (/wb/chord)
    harmony: dict[int, int] = field(default_factory=lambda: {16: 1})
    harmony_latch: bool = False       # all keys up: hold the last chord (else the composed progression)
    harmony_quantize: str = "beat"    # where a chord change lands: the next beat, bar, or at once (off)
    source: str = "(defaults)"

    @classmethod
    def default(cls) -> "MidiMap":
        return cls(cc=[CCRule(7, "gain", 0.0, 2.0), CCRule(1, "brightness", 0.0, 1.0),
                       CCRule(74, "guidance", 0.0, 10.0)],
                   banks=[(n, list(p)) for n, p in DEFAULT_BANKS])

    @classmethod
    def load(cls, path: str) -> "MidiMap":
        """Read and validate a TOML map; raises :class:`MidiMapError` naming the file. ``[control]``"""
        m = load_toml(path, cls.from_dict, MidiMapError, "MIDI map ")
        m.source = os.path.abspath(path)
        return m

    @classmethod
    def from_dict(cls, data: dict) -> "MidiMap":
        """Validate a parsed map (keys as in ``examples/midi-map.toml``) against :class:`_MapFile`."""
        for key in ("channels", "harmony"):           # TOML keys are text: "10" means channel 10
            if isinstance(data.get(key), dict):
                data = {**data, key: {int(k) if isinstance(k, str) and k.strip().isdigit() else k: v
                                      for k, v in data[key].items()}}
        f = convert(data, _MapFile, MidiMapError)
        d = cls.default()
        m = cls(mode=f.mode, fade_s=f.fade_s, seconds=f.seconds, base_note=note_number(f.base_note, "base_note"),
                channels=dict(f.channels), unmapped_notes=f.unmapped_notes, clock_tempo=f.clock_tempo,
                cc=list(d.cc), banks=list(d.banks), harmony=dict(f.harmony), harmony_latch=f.harmony_latch,
                harmony_quantize=f.harmony_quantize)
        if isinstance(f.velocity, bool):
            m.velocity = f.velocity
        else:
            v = f.velocity
            m.velocity, m.velocity_param, m.velocity_curve = v.enabled, v.param, v.curve
            m.velocity_min, m.velocity_max = v.min, v.max
        for where, n in _each(f, "note", "notes"):
            m.notes.append(NoteRule(note=note_number(n.note, f"{where}.note"), slot=n.slot,
                                    prompt=_prompt(n.prompt, f"{where}.prompt"), channel=n.channel,
                                    seconds=n.seconds, seed=n.seed))
        if f.cc is not None:
            m.cc = []
            for where, c in _each(f, "cc"):
                lo_d, hi_d = (60.0, 180.0) if c.param == "tempo" else COMMON_PARAMS.get(c.param, (0.0, 1.0))
                rule = CCRule(c.cc, c.param, lo_d if c.min is None else c.min, hi_d if c.max is None else c.max,
                              c.curve, c.channel, c.slot)
                if c.curve == "log" and (rule.lo <= 0 or rule.hi <= 0):
                    raise MidiMapError(f"{where}: a log curve needs min and max above 0")
                m.cc.append(rule)
        banks = list(_each(f, "bank", "banks"))
        if banks:
            m.banks = [(b.name or f"bank {i}", [_prompt(p, f"{where}.prompts[{k}]") for k, p in enumerate(b.prompts)])
                       for i, (where, b) in enumerate(banks)]
        return m

    def check(self, nslots: int, params: dict) -> list[str]:
        """Check slots and parameters against a running daemon; returns problems (empty = fine)."""
        out = []
        for c, s in self.channels.items():
            if s > nslots:
                out.append(f"channels.{c}: slot {s} does not exist (1..{nslots})")
        for c, s in self.harmony.items():
            if s > nslots:
                out.append(f"harmony.{c}: slot {s} does not exist (1..{nslots})")
        for i, n in enumerate(self.notes):
            if n.slot > nslots:
                out.append(f"note[{i}]: slot {n.slot} does not exist (1..{nslots})")
        for i, c in enumerate(self.cc):
            if isinstance(c.slot, int) and c.slot > nslots:
                out.append(f"cc[{i}]: slot {c.slot} does not exist (1..{nslots})")
            if c.param != "tempo" and c.param not in params:
                out.append(f"cc[{i}]: unknown parameter {c.param!r}; known: tempo, {', '.join(sorted(params))}")
        if self.velocity and self.velocity_param not in params:
            out.append(f"velocity.param: unknown parameter {self.velocity_param!r}")
        return out


def _each(f: "_MapFile", *keys: str):
    """(where, table) for every table under ``keys``: an array of tables, or a single one."""
    for key in keys:
        v = getattr(f, key)
        if isinstance(v, list):
            yield from ((f"{key}[{i}]", t) for i, t in enumerate(v))
        elif v is not None:
            yield key, v


def _prompt(v, where) -> str:
    try:
        return clean_prompt(v, where)
    except WavebridgeError as e:
        raise MidiMapError(e.message) from None


class MidiMapper:
    """``mido.Message`` → ``[Command]`` under a :class:`MidiMap`. ``[control]``, no I/O.

    ``stats`` counts ``messages``, ``commands``, ``ignored`` (types the map does nothing with:
    aftertouch, sysex, pitch bend …), ``unmapped`` (a note, CC, channel or program the map has
    no place for) and ``invalid`` (a mapping that did not validate as a command).
    """

    def __init__(self, midi_map: MidiMap, nslots: int, params: dict | None = None, armed: set | None = None):
        self.map = midi_map
        #: slots recording a tune (``Daemon.theme_armed``): their channel's keys go to the recording
        self.armed = armed if armed is not None else set()
        self.nslots = nslots
        self.params = params or dict(COMMON_PARAMS)
        self.stats = {"messages": 0, "commands": 0, "ignored": 0, "unmapped": 0, "invalid": 0}
        self.held: dict[tuple[int, int], int] = {}      # (channel, note) → slot, keys down
        self.sounding: dict[int, tuple[int, int]] = {}  # slot → (channel, note) it plays
        self.bank: dict[int, int] = {}                  # channel → bank index
        self.chord_keys: dict[int, set[int]] = {}      # harmony channel → the keys it holds
        self._clock: list[int] = []                     # arrival ns of recent clock ticks
        self._tempo_sent = 0.0
        self._tempo_at = 0
        self.last_error: str = ""

    def adopt(self, old: "MidiMapper") -> None:
        """Keep the keyboard state (held notes, banks) across a map reload."""
        self.held, self.sounding, self.bank = dict(old.held), dict(old.sounding), dict(old.bank)
        self.chord_keys = {c: set(k) for c, k in old.chord_keys.items() if c in self.map.harmony}
        self.stats = old.stats

    # ------------------------------------------------------------------ mapping
    def slot_of(self, channel: int) -> int | None:
        s = self.map.channels.get(channel, channel)
        return s if 1 <= s <= self.nslots else None

    def translate(self, msg, arrival_ns: int = 0) -> list[Command]:
        """Commands for one message (possibly none); never raises for bad input. ``[control]``"""
        self.stats["messages"] += 1
        t = msg.type
        try:
            if t in ("note_on", "note_off") and msg.channel + 1 in self.map.harmony:
                out = self._harmony(msg.channel + 1, msg.note, t == "note_on" and msg.velocity > 0)
            elif t == "control_change" and msg.control in (120, 123) and msg.channel + 1 in self.map.harmony:
                out = self._harmony(msg.channel + 1, None, False)
            elif t in ("note_on", "note_off") and self.armed and \
                    (rec := self._recording(msg.channel + 1, msg.note, msg.velocity if t == "note_on" else 0)):
                out = rec
            elif t == "note_on" and msg.velocity > 0:
                out = self._note_on(msg.channel + 1, msg.note, msg.velocity)
            elif t == "note_off" or t == "note_on":
                out = self._note_off(msg.channel + 1, msg.note)
            elif t == "control_change":
                out = self._cc(msg.channel + 1, msg.control, msg.value)
            elif t == "program_change":
                out = self._program(msg.channel + 1, msg.program)
            elif t == "clock":
                out = self._clock_tick(arrival_ns or time.monotonic_ns())
            elif t in ("start", "continue"):
                self._clock.clear()
                out = []
            else:
                self.stats["ignored"] += 1
                return []
        except WavebridgeError as e:
            self.stats["invalid"] += 1
            self.last_error = e.message
            log.debug("MIDI %s does not map to a valid command: %s", msg, e.message)
            return []
        if out is None:
            self.stats["unmapped"] += 1
            return []
        for c in out:
            c.source = "midi"
            c.arrival_ns = arrival_ns
        self.stats["commands"] += len(out)
        return out

    def _cmd(self, address: str, *args) -> Command:
        return parse_osc(address, list(args), self.nslots, self.params)

    def _harmony(self, channel: int, note: int | None, down: bool):
        """A key on a harmony channel: the keys now held are the slot's chord (all up: released,
        or held with ``harmony_latch``); ``note`` None: all notes off."""
        slot = self.map.harmony[channel]
        if slot > self.nslots:
            return None
        keys = self.chord_keys.setdefault(channel, set())
        before = set(keys)
        if note is None:
            keys.clear()
        elif down:
            keys.add(note)
        else:
            keys.discard(note)
        if keys == before:
            return []
        return [Command("chord", slot=slot, notes=tuple(sorted(keys)), latch=self.map.harmony_latch,
                        quantize=self.map.harmony_quantize)]

    def _recording(self, channel: int, note: int, velocity: int):
        """A key on the channel of a slot recording a tune: to the recording, not a prompt."""
        slot = self.slot_of(channel)
        if slot is None or slot not in self.armed:
            return None
        return [Command("theme_key", slot=slot, notes=(int(note),), value=float(velocity))]

    def _note_rule(self, channel: int, note: int) -> NoteRule | None:
        anych = None
        for r in self.map.notes:
            if r.note == note:
                if r.channel == channel:
                    return r
                if r.channel is None and anych is None:
                    anych = r
        return anych

    def _note_on(self, channel, note, velocity):
        m = self.map
        rule = self._note_rule(channel, note)
        seed = None
        seconds = m.seconds
        if rule is not None:
            slot, prompt = rule.slot, rule.prompt
            seed = rule.seed
            if rule.seconds is not None:
                seconds = rule.seconds
            if slot > self.nslots:
                return None
        else:
            if m.unmapped_notes != "bank" or not m.banks:
                return None
            slot = self.slot_of(channel)
            if slot is None:
                return None
            _, prompts = m.banks[self.bank.get(channel, 0) % len(m.banks)]
            prompt = prompts[(note - m.base_note) % len(prompts)]
        self.held[(channel, note)] = slot
        if m.mode == "latch" and self.sounding.get(slot) == (channel, note):
            del self.sounding[slot]                       # the playing note again: stop (toggle)
            return [self._cmd("/wb/stop", slot, m.fade_s)]
        out = []
        if m.velocity:
            x = (velocity / 127.0) ** m.velocity_curve
            lo, hi = self.params.get(m.velocity_param, (0.0, 4.0))[:2]
            v = min(hi, max(lo, m.velocity_min + (m.velocity_max - m.velocity_min) * x))
            out.append(self._cmd("/wb/param", slot, m.velocity_param, v))
        args = [slot, prompt, float(seconds)]
        if seed is not None:
            args.append(seed)
        out.append(self._cmd("/wb/play", *args))
        self.sounding[slot] = (channel, note)
        return out

    def _note_off(self, channel, note):
        slot = self.held.pop((channel, note), None)
        if slot is None:
            return None
        if self.map.mode != "gate":
            return []
        if self.sounding.get(slot) != (channel, note):
            return []                                     # a later note took the slot over (legato)
        del self.sounding[slot]
        return [self._cmd("/wb/stop", slot, self.map.fade_s)]

    def _cc(self, channel, control, value):
        if control in (120, 123):                         # all sound off / all notes off
            slot = self.slot_of(channel)
            if slot is None or (control == 123 and self.map.mode != "gate"):
                return []
            for k in [k for k, s in self.held.items() if s == slot]:
                del self.held[k]
            if self.sounding.pop(slot, None) is None:
                return []
            return [self._cmd("/wb/stop", slot, self.map.fade_s)]
        rule = None
        for r in self.map.cc:
            if r.cc == control and (r.channel == channel or (r.channel is None and rule is None)):
                rule = r
                if r.channel == channel:
                    break
        if rule is None:
            return None
        x = value / 127.0
        if rule.curve == "log":
            v = rule.lo * (rule.hi / rule.lo) ** x
        else:
            v = rule.lo + (rule.hi - rule.lo) * x
        if rule.param == "tempo":
            return [self._cmd("/wb/tempo", v)]
        lo, hi = self.params.get(rule.param, (v, v))[:2]
        v = min(hi, max(lo, v))
        if rule.slot == "all":
            slots = range(1, self.nslots + 1)
        else:
            s = rule.slot if rule.slot is not None else self.slot_of(channel)
            if s is None or s > self.nslots:
                return None
            slots = [s]
        return [self._cmd("/wb/param", s, rule.param, v) for s in slots]

    def _program(self, channel, program):
        if program >= len(self.map.banks):
            return None
        self.bank[channel] = program
        log.info("MIDI channel %d: prompt bank %d (%s)", channel, program, self.map.banks[program][0])
        return []

    def _clock_tick(self, now_ns: int):
        """24 ticks per quarter note → tempo, sent when it moves ≥ 0.5 bpm (at most 2 Hz)."""
        if not self.map.clock_tempo:
            self.stats["ignored"] += 1
            return []
        ticks = self._clock
        if ticks and now_ns - ticks[-1] > 500_000_000:    # clock stopped and restarted
            ticks.clear()
        ticks.append(now_ns)
        if len(ticks) > 97:
            del ticks[:-97]
        if len(ticks) < 25 or now_ns - self._tempo_at < 500_000_000:
            return []
        bpm = 60e9 / ((ticks[-1] - ticks[0]) / (len(ticks) - 1) * 24)
        if not 20.0 <= bpm <= 400.0 or abs(bpm - self._tempo_sent) < 0.5:
            return []
        self._tempo_sent = bpm
        self._tempo_at = now_ns
        return [self._cmd("/wb/tempo", round(bpm, 2))]


def check_backend(name: str | None = None) -> str:
    """Load the mido backend ``name`` (default ``MIDO_BACKEND``, else rtmidi) now, before anything
    else is set up; returns its name or raises ``ValueError`` with one clear line. ``[control]``"""
    import mido

    name = name or os.environ.get("MIDO_BACKEND") or "mido.backends.rtmidi"
    try:
        be = mido.Backend(name, load=True)
        apis = be.module.get_api_names() if hasattr(be.module, "get_api_names") else None
    except Exception as e:  # noqa: BLE001 — ImportError, AttributeError …
        raise ValueError(f"MIDO_BACKEND={name!r} cannot be loaded ({type(e).__name__}: {e}); use "
                         f"mido.backends.rtmidi or {JACK_BACKEND}") from None
    if be.api and apis is not None and be.api not in apis:
        raise ValueError(f"MIDO_BACKEND={name!r}: no MIDI API {be.api!r} here (this rtmidi has "
                         f"{', '.join(apis) or 'none'})")
    return name


class MidiInput:
    """The daemon's MIDI input port. Open and close on the loop thread. ``[control]``

    ``stats``: ``received`` (raw messages from the port), ``bad`` (bytes that are not a MIDI
    message), ``submitted``, ``rejected`` (the daemon refused the command, e.g. queue full),
    plus the mapper's counters. ``port`` is the name other programs connect to.
    """

    def __init__(self, daemon, midi_map: MidiMap | None = None, *, port_name: str | None = None,
                 virtual_name: str = DEFAULT_PORT_NAME, backend: str | None = None):
        self.daemon = daemon
        self.mapper = MidiMapper(midi_map or MidiMap.default(), len(daemon.slots), daemon.params(),
                                 getattr(daemon, "theme_armed", None))
        self.want_port = port_name
        self.virtual_name = virtual_name
        self.backend_name = backend or os.environ.get("MIDO_BACKEND") or None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = None
        self.port_label = ""
        self.api = ""
        self.stats = {"received": 0, "bad": 0, "submitted": 0, "rejected": 0}
        self._retry: asyncio.TimerHandle | None = None
        self._watch: asyncio.TimerHandle | None = None
        self._port_gen = 0            # bumped when a port opens or closes: tells stale checks apart
        self._be = None               # the backend the port was opened with
        self.reconnects = 0
        self._closed = False
        self._waiting_logged = False
        self.last_error = ""
        self._backoff = RETRY_S
        self._last_warn = 0.0

    # ------------------------------------------------------------------ lifecycle
    def open(self, loop: asyncio.AbstractEventLoop | None = None) -> "MidiInput":
        """Open the virtual port, or connect to the named one. Never raises.

        If the MIDI system is not there yet (JACK not started, device not plugged in) it says
        so once in the log and retries (2 s, doubling up to 30 s); audio and OSC carry on meanwhile.
        """
        self.loop = loop or asyncio.get_running_loop()
        for p in self.mapper.map.check(len(self.daemon.slots), self.daemon.params()):
            log.warning("MIDI map %s: %s", self.mapper.map.source, p)
        self._try_open()
        return self

    def close(self) -> None:
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._close_port()

    def _close_port(self) -> None:
        self._port_gen += 1                           # any check in flight is for a port that is gone
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self.port is not None:
            try:
                self.port.close()
            except Exception:  # noqa: BLE001
                log.debug("closing the MIDI port failed", exc_info=True)
            self.port = None

    def set_map(self, midi_map: MidiMap) -> None:
        """Swap the map (SIGHUP), keeping held notes and bank choices. ``[control]``"""
        new = MidiMapper(midi_map, len(self.daemon.slots), self.daemon.params(),
                         getattr(self.daemon, "theme_armed", None))
        new.adopt(self.mapper)
        for p in midi_map.check(len(self.daemon.slots), self.daemon.params()):
            log.warning("MIDI map %s: %s", midi_map.source, p)
        self.mapper = new
        if self.port is not None and getattr(self.port, "_rt", None) is not None:
            self.port._rt.ignore_types(sysex=True, timing=not midi_map.clock_tempo, active_sense=True)

    @property
    def connected(self) -> bool:
        return self.port is not None

    def _backends(self):
        import mido

        if self.backend_name:
            return [mido.Backend(self.backend_name, load=True)]
        # MIDO_BACKEND unset: the default API first (ALSA on Linux), then JACK
        return [mido.Backend("mido.backends.rtmidi", load=True), mido.Backend(JACK_BACKEND, load=True)]

    def _try_open(self) -> None:
        """Open now, on the loop (at start, so the startup line can say which port)."""
        self._retry = None
        if self._closed or self.port is not None:
            return
        try:
            opened = self._find_and_open()
        except WavebridgeError as e:
            self._open_failed(e)
        else:
            self._opened(opened)

    def _retry_open(self) -> None:
        """A retry: listing and opening ports makes JACK/ALSA clients, which can take a while,
        so it runs off the loop and the result comes back to it. ``[control]``"""
        self._retry = None
        if self._closed or self.port is not None:
            return

        def done(fut) -> None:
            if fut.cancelled():
                return
            e = fut.exception()
            if isinstance(e, WavebridgeError):
                self._open_failed(e)
            elif e is not None:
                self._open_failed(WavebridgeError("midi", f"{type(e).__name__}: {e}"))
            else:
                self._opened(fut.result())

        self.loop.run_in_executor(None, self._find_and_open).add_done_callback(done)

    def _opened(self, opened) -> None:
        port, be, label, named = opened
        if self._closed or self.port is not None:     # closed (or opened) while this one was opening
            try:
                port.close()
            except Exception:  # noqa: BLE001
                pass
            return
        self._attach(port, be, label)
        if named:
            self._be = be
            self._schedule_watch()
        if self._waiting_logged:
            log.warning("MIDI: %s is open now", self.port_label)
            self._waiting_logged = False
        self.last_error = ""
        self._backoff = RETRY_S

    def _open_failed(self, e: WavebridgeError) -> None:
        self.last_error = e.message
        if not self._waiting_logged:
            log.warning("MIDI: %s; retrying (every %.0f–%.0f s)", e.message, RETRY_S, RETRY_MAX_S)
            self._waiting_logged = True
        if self._closed:
            return
        self._retry = self.loop.call_later(self._backoff, self._retry_open)
        self._backoff = min(RETRY_MAX_S, self._backoff * 2)

    def _find_and_open(self):
        """``(port, backend, label, named)``: the virtual input, or the named port. Blocking;
        touches no state of ours, so it may run in a worker thread."""
        return self._open_virtual() if self.want_port is None else self._open_named()

    def _open_virtual(self):
        errors = []
        for be in self._backends():
            try:
                try:
                    port = be.open_input(self.virtual_name, virtual=True, client_name=self.virtual_name)
                except TypeError:                      # a backend without client names
                    port = be.open_input(self.virtual_name, virtual=True)
            except Exception as e:  # noqa: BLE001 — rtmidi raises its own SystemError family
                errors.append(f"{be.name}/{be.api or 'default'}: {str(e).splitlines()[0] if str(e) else e!r}")
                continue
            return port, be, f"{self.virtual_name} (virtual)", False
        raise WavebridgeError("midi", "cannot open a virtual MIDI input (" + "; ".join(errors) +
                              f"); without an ALSA sequencer start JACK and set MIDO_BACKEND={JACK_BACKEND}")

    def find_port(self, names: list[str]) -> str | None:
        """The input named ``want_port``: exact, then the ``port`` of ``client:port``, then a substring."""
        want = self.want_port
        if want in names:
            return want
        low = want.lower()
        for n in names:
            if n.lower() == low or n.split(":", 1)[-1].lower() == low:
                return n
        subs = [n for n in names if low in n.lower()]
        if subs:
            if len(subs) > 1:
                log.warning("MIDI port %r matches %s; using %r", want, subs, subs[0])
            return subs[0]
        return None

    def _open_named(self):
        errors = []
        for be in self._backends():
            try:
                names = be.get_input_names()
            except Exception as e:  # noqa: BLE001
                errors.append(f"{be.name}/{be.api or 'default'}: {str(e).splitlines()[0] if str(e) else e!r}")
                continue
            name = self.find_port(names)
            if name is None:
                errors.append(f"no input named {self.want_port!r} among {names}")
                continue
            try:
                port = be.open_input(name)
            except Exception as e:  # noqa: BLE001
                errors.append(f"opening {name!r}: {str(e).splitlines()[0] if str(e) else e!r}")
                continue
            return port, be, name, True
        raise WavebridgeError("midi", f"MIDI port {self.want_port!r} is not available (" + "; ".join(errors) + ")")

    # ------------------------------------------------------------------ a named port that goes away
    def _schedule_watch(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if not self._closed and self.port is not None and self.loop is not None:
            self._watch = self.loop.call_later(WATCH_S, self._check_port, self._port_gen)

    def _check_port(self, gen: int) -> None:
        """Is the port we connected to still listed? ``[control]``

        Asks the client that is already open (python-rtmidi's port list: no new JACK or ALSA
        client per check); a backend without one lists ports off the loop.
        """
        self._watch = None
        if self._closed or self.port is None or gen != self._port_gen:
            return
        label = self.port_label
        rt = getattr(self.port, "_rt", None)
        if rt is not None and hasattr(rt, "get_ports"):
            try:
                listed = label in rt.get_ports()
            except Exception:  # noqa: BLE001 — the MIDI system itself went away: the port with it
                listed = False
            self._port_checked(gen, listed)
            return
        be = self._be

        def names():
            try:
                return label in be.get_input_names()
            except Exception:  # noqa: BLE001
                return False

        # an asyncio future: its callback runs on the loop
        self.loop.run_in_executor(None, names).add_done_callback(
            lambda f: self._port_checked(gen, not f.cancelled() and f.exception() is None and f.result()))

    def _port_checked(self, gen: int, listed: bool) -> None:
        if self._closed or self.port is None or gen != self._port_gen:
            return                                   # closed or replaced meanwhile: not ours to judge
        if listed:
            self._schedule_watch()
            return
        # unplugged (or its program quit): drop it and look for it again, as at start.
        # Held notes keep playing: no note-off can come from a port that is gone.
        label = self.port_label
        log.warning("MIDI: %s disappeared; waiting for %r to come back", label, self.want_port)
        self._close_port()
        self.reconnects += 1
        self.last_error = f"{label} disappeared"
        self._waiting_logged = True
        self._backoff = RETRY_S
        if self._retry is not None:
            self._retry.cancel()
        self._retry = self.loop.call_later(RETRY_S, self._retry_open)

    def _attach(self, port, be, label: str) -> None:
        self._port_gen += 1
        self.port = port
        self.port_label = label
        self.api = f"{be.name}/{getattr(port, 'api', None) or be.api or 'default'}"
        rt = getattr(port, "_rt", None)
        if rt is not None and hasattr(rt, "set_callback"):
            # python-rtmidi: take raw bytes so malformed input is counted, not silently dropped
            rt.ignore_types(sysex=True, timing=not self.mapper.map.clock_tempo, active_sense=True)
            rt.set_callback(self._rt_callback)
        else:
            port.callback = self._mido_callback
        log.info("MIDI input %s via %s", label, self.api)

    # ------------------------------------------------------------------ input
    def _rt_callback(self, event, _data=None) -> None:
        """rtmidi's thread: stamp and hand over, nothing else."""
        now = time.monotonic_ns()
        try:
            self.loop.call_soon_threadsafe(self.feed, event[0], now)
        except RuntimeError:          # loop closed during shutdown
            pass

    def _mido_callback(self, msg) -> None:
        now = time.monotonic_ns()
        try:
            self.loop.call_soon_threadsafe(self.feed, msg, now)
        except RuntimeError:
            pass

    def feed(self, data, arrival_ns: int = 0) -> list[Command]:
        """One message (raw bytes or a ``mido.Message``) → commands → daemon. ``[control]``"""
        import mido

        self.stats["received"] += 1
        if isinstance(data, mido.Message):
            msg = data
        else:
            try:
                msg = mido.Message.from_bytes(list(data))
            except Exception as e:  # noqa: BLE001 — ValueError mostly; any bad input is just counted
                self.stats["bad"] += 1
                self.daemon.count_error("malformed")
                log.debug("bad MIDI bytes %r: %s", list(data)[:16], e)
                return []
        cmds = self.mapper.translate(msg, arrival_ns or time.monotonic_ns())
        for cmd in cmds:
            try:
                self.daemon.submit(cmd)
                self.stats["submitted"] += 1
            except WavebridgeError as e:
                self.stats["rejected"] += 1
                self.daemon.count_error(e.code)
                now = time.monotonic()
                if now - self._last_warn >= 1.0:          # a controller flood must not flood the log
                    self._last_warn = now
                    log.warning("MIDI %s refused: %s (%d refused so far)", cmd.kind, e.message,
                                self.stats["rejected"])
        return cmds

    def summary(self) -> str:
        if self.port is None:
            return f"MIDI waiting ({self.want_port or self.virtual_name})"
        return f"MIDI {self.port_label}"
