"""fluid: the FluidSynth renderer — a General MIDI SoundFont played through libfluidsynth.

Owns the ctypes binding to ``libfluidsynth`` (loaded lazily; only the calls used here, with
their C signatures), one loaded SoundFont, and a :class:`FluidPool` of warm synth instances.

* The SoundFont is loaded **once** (``fluid_synth_sfload`` into the pool's owner instance, ~0.2 s
  for FluidR3_GM) and the same ``fluid_sfont_t`` is added to every other instance with
  ``fluid_synth_add_sfont`` (instances share the sample data; nothing is loaded per stream).
  At close the borrowers remove it before the owner deletes it.
* The pool makes its instances in :meth:`FluidPool.warmup`; a stream takes a never-used one in
  ``start`` and hands it back in ``end``, where it is deleted and a fresh one made in its place
  (a reset instance keeps per-voice history, so reuse would break bit-exact determinism per
  prompt and seed). The owner instance only holds the SoundFont. If the pool runs dry it makes
  another (~2 ms, no SoundFont load) and logs it once.
* :class:`FluidInstrument` maps a score's parts to MIDI channels (drum parts get a drum channel,
  bank 128, program = the GM kit), sends program, CC7 level, CC10 pan, CC91/93 reverb and
  chorus sends, pitch bend from the score's controls, and renders float stereo with
  ``fluid_synth_process`` (never the int16 path). A score with parts with ``drive`` plays on an
  instance whose MIDI channels are audio groups of their own: those parts' dry audio goes
  through a guitar amp and cabinet (:mod:`engine.synth.amp`) before it joins the mix.
  FluidSynth applies events at its 64-frame block boundaries, so ``quantum = 64``:
  :mod:`engine.synth.perform` snaps each event to the nearest multiple of 64 frames from the
  stream's start and renders in 64-frame multiples.
* Each program's loudness is calibrated once per SoundFont (:func:`calibrate`: one note per
  program or drum key through a spare instance, K-weighted) and each part is attenuated so the
  instruments sit at their parts' levels whatever the SoundFont's own levels; the score's
  expected loudness from those figures is the mix's starting gain.

Threading: ``warmup``/``close`` on ``[control]`` at start and shutdown; everything else on the
``[engine]`` thread (one instance is only ever used by one stream at a time).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import logging
import math
import os
from typing import NamedTuple

import numpy as np

from engine.score import Control, Part
from engine.synth import perform
from engine.synth.amp import Amp

log = logging.getLogger("wavebridge.fluid")

#: FluidR3 first: against MuseScore General (``musescore-general-soundfont``, Vorbis ``.sf3``,
#: which this libfluidsynth loads) it loads in 0.2 s instead of ~10 s (the Vorbis samples are
#: decoded at load) with a tighter loudness spread; MuseScore separates styles only a little
#: better (MFCC 1.97 against 1.88) — figures in docs/BENCHMARKS.md. Both calibrations are shipped.
DEFAULT_SOUNDFONTS = (
    "/usr/share/sounds/sf2/FluidR3_GM.sf2",
    "/usr/share/sounds/sf2/default-GM.sf2",
    "/usr/share/sounds/sf3/MuseScore_General_Full.sf3",
    "/usr/share/sounds/sf3/default-GM.sf3",
    "/usr/share/sounds/sf3/MuseScore_General.sf3",
)
GEN_FILTERFC = 8
#: GM presets that play a raw oscillator wave (synth bass 1, square, saw, fifths, bass + lead):
#: their edges are band-limited only at Nyquist, so on a quiet mix each period reads as a click
#: (a one-sample jump 20× the local median). Their filter is closed this many cents below the
#: preset's own (an analogue synth's low-pass: still bright, no longer razor-edged).
#: (the square at −1800 still clicked under a 16-bit town theme's pizzicato and flute, with no drums)
EDGE_FILTER_CENTS = {38: -2400.0, 80: -2400.0, 81: -2400.0, 86: -1200.0, 87: -1800.0}


#: a flugelhorn (a part named so) is GM's trumpet with its filter this many cents lower: the conical
#: bore's darker, rounder tone — and no buzzing edge (set P's flugelhorn over brushes, FluidR3's
#: trumpet sample exposed, had 22 clicks; 4 with the filter an octave down, none at 1.5)
FLUGELHORN_CENTS = -1800.0


#: a sub bass (a part named so) swells in: its attack this many timecents longer (×32, about 1 →
#: 32 ms) — a low synth-bass note out of a near-silent bar (set O's dub techno: a B1 under a muffled
#: kick) jumped in one sample as a cluster of 26 clicks; 16 ms still clicked
SUB_ATTACK_CENTS = 6000.0


def edge_filter_cents(bank: int, program: int) -> float:
    """The filter offset a preset plays with (0 for drum kits and the other presets)."""
    return 0.0 if bank == 128 else EDGE_FILTER_CENTS.get(program, 0.0)
GEN_ATTENUATION = 48
GEN_CHORUSSEND, GEN_REVERBSEND = 15, 16     # 0.1 % units; a channel's value is added to the preset's
GEN_VOLENVATTACK = 34
#: the kits the composer plays (bank 128) and the keys (GM 35–81, GS 82–87) scanned in each for
#: onsets that click: a stick or beater transient after silence that makes a one-sample jump
#: (the click rule of ``tests/test_render.py``: 20× the local median jump and 0.05)
DECLICK_KITS = (0, 8, 16, 24, 25, 32, 40)
DECLICK_KEYS = tuple(range(35, 88))
#: a clicking key plays on its drum part's twin channel, where voices start softer: the volume
#: envelope's attack 16× longer (+4800 timecents: ~1 ms → ~16 ms) and the filter two octaves
#: down. ``fluid_synth_set_gen`` also moves the voices already sounding on a channel, so the
#: softened keys need a channel of their own rather than a gen set around their note-on.
DECLICK_GENS = ((GEN_VOLENVATTACK, 4800.0), (GEN_FILTERFC, -2400.0))
#: MIDI channels per instance: 16 for the parts, 16 more for the drum parts' twin channels
MIDI_CHANNELS = 32
CHANNEL_TYPE_MELODIC, CHANNEL_TYPE_DRUM = 0, 1
FLUID_FAILED = -1


class FluidUnavailable(RuntimeError):
    """libfluidsynth or a SoundFont is missing: the caller falls back to the oscillators."""


_LIB = None


def _lib():
    """Load libfluidsynth once and declare the signatures used. ``[control]`` (first use)."""
    global _LIB
    if _LIB is not None:
        return _LIB
    name = ctypes.util.find_library("fluidsynth") or "libfluidsynth.so.3"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        raise FluidUnavailable(f"libfluidsynth not found ({e}); install libfluidsynth3") from None
    vp, i, d, cp, f = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_float
    sig = {
        "new_fluid_settings": (vp, []),
        "delete_fluid_settings": (None, [vp]),
        "fluid_settings_setnum": (i, [vp, cp, d]),
        "fluid_settings_setint": (i, [vp, cp, i]),
        "new_fluid_synth": (vp, [vp]),
        "delete_fluid_synth": (None, [vp]),
        "fluid_synth_sfload": (i, [vp, cp, i]),
        "fluid_synth_get_sfont_by_id": (vp, [vp, i]),
        "fluid_synth_add_sfont": (i, [vp, vp]),
        "fluid_synth_remove_sfont": (i, [vp, vp]),
        "fluid_sfont_get_preset": (vp, [vp, i, i]),
        "fluid_synth_program_select": (i, [vp, i, i, i, i]),
        "fluid_synth_set_channel_type": (i, [vp, i, i]),
        "fluid_synth_noteon": (i, [vp, i, i, i]),
        "fluid_synth_noteoff": (i, [vp, i, i]),
        "fluid_synth_cc": (i, [vp, i, i, i]),
        "fluid_synth_pitch_bend": (i, [vp, i, i]),
        "fluid_synth_pitch_wheel_sens": (i, [vp, i, i]),
        "fluid_synth_set_gen": (i, [vp, i, i, f]),
        "fluid_synth_system_reset": (i, [vp]),
        "fluid_synth_all_sounds_off": (i, [vp, i]),
        "fluid_synth_process": (i, [vp, i, i, vp, i, vp]),
        "fluid_set_log_function": (vp, [i, vp, vp]),
    }
    for fn, (res, args) in sig.items():
        c = getattr(lib, fn)
        c.restype = res
        c.argtypes = args
    for level in range(5):              # FluidSynth prints to stderr by default; we log ourselves
        lib.fluid_set_log_function(level, None, None)
    _LIB = lib
    return lib


def find_soundfont(path: str | None = None) -> str:
    """The SoundFont to use: ``path`` if given (must exist), else the first Debian GM font found."""
    if path:
        if not os.path.isfile(path):
            raise FluidUnavailable(f"SoundFont {path!r} not found")
        return path
    for p in DEFAULT_SOUNDFONTS:
        if os.path.isfile(p):
            return p
    raise FluidUnavailable("no General MIDI SoundFont found (install fluid-soundfont-gm, or pass --soundfont)")


class FluidPool:
    """Warm FluidSynth instances sharing one loaded SoundFont."""

    def __init__(self, soundfont: str | None = None, sample_rate: int = 48000, size: int = 16,
                 polyphony: int = 64):
        self.lib = _lib()
        self.path = find_soundfont(soundfont)
        self.sr = int(sample_rate)
        self.size = int(size)
        self.polyphony = int(polyphony)
        self.size_amped = max(1, self.size // 4)    # warm instances for scores with amped parts
        self._settings = None                       # an instance's audio in one pair (the owner's too)
        self._settings_amped = None                 # each MIDI channel an audio group of its own
        self._owner = None
        self._sfont = None
        self._free: list[int] = []
        self._free_amped: list[int] = []
        self._amped: set[int] = set()               # the instances made with audio groups
        self._all: list[int] = []
        self._grew = False
        self.levels: dict | None = None     # calibration: (bank, program) → dB, ("kit", k, key) → dB
        self._presets: dict = {}

    # --- lifecycle
    def _make_settings(self, groups: int):
        lib = self.lib
        s = lib.new_fluid_settings()
        for k, v in (("synth.sample-rate", float(self.sr)), ("synth.gain", 0.5),
                     ("synth.reverb.room-size", 0.55), ("synth.reverb.damp", 0.35),
                     ("synth.reverb.width", 0.5), ("synth.reverb.level", 0.6),
                     ("synth.chorus.level", 0.7), ("synth.chorus.depth", 6.0)):
            lib.fluid_settings_setnum(s, k.encode(), v)
        for k, v in (("synth.lock-memory", 0), ("synth.cpu-cores", 1), ("synth.threadsafe-api", 0),
                     ("synth.polyphony", self.polyphony), ("synth.reverb.active", 1),
                     ("synth.chorus.active", 1), ("synth.midi-channels", MIDI_CHANNELS),
                     ("synth.audio-groups", groups), ("synth.audio-channels", groups)):
            lib.fluid_settings_setint(s, k.encode(), v)
        return s

    def warmup(self) -> None:
        """Create the settings, load the SoundFont once, make the pool, calibrate. ``[control]``

        Two kinds of instance: most render every channel into one stereo pair; a score with
        amped parts (``Part.drive``) gets one whose MIDI channels are audio groups of their own
        (:meth:`FluidInstrument.render`). Each group costs its mixing whether used or not (about
        5 % of a stream's render), so only those scores pay for it."""
        if self._owner is not None:
            return
        lib = self.lib
        self._settings = self._make_settings(1)
        self._settings_amped = self._make_settings(MIDI_CHANNELS)
        owner = lib.new_fluid_synth(self._settings)
        if not owner:
            raise FluidUnavailable("new_fluid_synth failed")
        sid = lib.fluid_synth_sfload(owner, self.path.encode(), 1)
        if sid == FLUID_FAILED:
            lib.delete_fluid_synth(owner)
            raise FluidUnavailable(f"FluidSynth could not load SoundFont {self.path!r}")
        self._owner = owner
        self._sfont = lib.fluid_synth_get_sfont_by_id(owner, sid)
        for _ in range(self.size):
            self._free.append(self._new_instance())
        for _ in range(self.size_amped):
            self._free_amped.append(self._new_instance(amped=True))
        self.levels = levels_for(self)
        log.info("FluidSynth renderer: %s, %d + %d warm instances", os.path.basename(self.path),
                 len(self._free), len(self._free_amped))

    def _new_instance(self, amped: bool = False) -> int:
        h = self.lib.new_fluid_synth(self._settings_amped if amped else self._settings)
        if not h:
            raise FluidUnavailable("new_fluid_synth failed")
        self.lib.fluid_synth_add_sfont(h, self._sfont)
        self._all.append(h)
        if amped:
            self._amped.add(h)
        return h

    def is_amped(self, h: int) -> bool:
        """Whether instance ``h`` renders each MIDI channel to an audio group of its own."""
        return h in self._amped

    def acquire(self, amped: bool = False) -> int:
        """A warm instance for one stream (``amped``: one with audio groups). ``[engine]``"""
        free = self._free_amped if amped else self._free
        if free:
            return free.pop()
        if not self._grew:
            log.info("FluidSynth pool ran dry at %d instances; making more on demand", len(self._all))
            self._grew = True
        return self._new_instance(amped)

    def put_back(self, h: int) -> None:
        """An instance taken and never played (no note, no render) back in the pool. ``[engine]``"""
        free, size = (self._free_amped, self.size_amped) if h in self._amped else (self._free, self.size)
        if len(free) < size:
            free.append(h)
        else:
            self.release(h)

    def release(self, h: int) -> None:
        """Retire a used instance and put a fresh one of its kind in the pool. ``[engine]`` (at a
        stream's end)

        A used instance is not reused: ``fluid_synth_system_reset`` leaves per-voice state behind
        (filter and interpolation history of the reused voice objects), so a second stream on it
        would not render bit-for-bit like the first; a fresh instance costs ~2 ms and no load.
        """
        amped = h in self._amped
        if h in self._all:
            self._all.remove(h)
            self._amped.discard(h)
            self.lib.fluid_synth_remove_sfont(h, self._sfont)
            self.lib.delete_fluid_synth(h)
        free, size = (self._free_amped, self.size_amped) if amped else (self._free, self.size)
        if len(free) < size:
            free.append(self._new_instance(amped))

    def close(self) -> None:
        """Delete every instance (borrowers drop the shared SoundFont first). ``[control]``"""
        lib = self.lib
        for h in self._all:
            lib.fluid_synth_remove_sfont(h, self._sfont)
            lib.delete_fluid_synth(h)
        if self._owner:
            lib.delete_fluid_synth(self._owner)
        for s in (self._settings, self._settings_amped):
            if s:
                lib.delete_fluid_settings(s)
        self._all, self._free, self._free_amped, self._amped = [], [], [], set()
        self._owner, self._settings, self._settings_amped, self._sfont = None, None, None, None

    # --- presets
    def has_preset(self, bank: int, program: int) -> bool:
        key = (bank, program)
        hit = self._presets.get(key)
        if hit is None:
            hit = bool(self.lib.fluid_sfont_get_preset(self._sfont, bank, program))
            self._presets[key] = hit
        return hit

    def resolve(self, part: Part) -> tuple[int, int]:
        """(bank, program) the SoundFont really has for ``part`` (a missing kit → the standard kit)."""
        if part.is_drums or part.role == "drums":
            kit = int(part.program) & 127
            return (128, kit) if self.has_preset(128, kit) else (128, 0)
        prog = int(part.program) & 127
        return (0, prog) if self.has_preset(0, prog) else (0, 0)

    def instrument(self) -> "FluidInstrument":
        return FluidInstrument(self)

    def part_level_db(self, part: Part, bank: int, program: int) -> float:
        """Calibrated loudness (dB, K-weighted, of a reference note) of ``part``'s preset."""
        lv = self.levels or {}
        if bank == 128:
            return lv.get(("kit", program), lv.get(("kit", 0), -20.0))
        return lv.get((0, program), -20.0)

    def click_keys(self, kit: int) -> frozenset:
        """The keys of ``kit`` whose onset clicks in this SoundFont (measured by :func:`calibrate`)."""
        lv = self.levels or {}
        return frozenset(k for k in DECLICK_KEYS if lv.get(("click", kit, k)))


    def expected_lufs(self, score, inst: "FluidInstrument") -> float | None:
        """The score's loudness through ``inst`` (after its trims), from the calibration. ``[engine]``"""
        note_ms, hit, hold = [], [], []
        lv = self.levels or {}
        for p, (bank, prog), trim in zip(score.parts, inst.presets, inst.trim_db):
            ms = 10 ** ((self.part_level_db(p, bank, prog) - trim + 0.691) / 10)
            if bank == 128:
                note_ms.append(0.0)
                hit.append(ms * 0.4 / len(_KIT_NOTES))
                hold.append(None)
            else:
                note_ms.append(ms / len(_CAL_KEYS))
                hit.append(0.0)
                db = tuple(lv.get(("hold", prog, s)) for s in HOLDS_S)
                hold.append(None if None in db else db)
        return perform.expected_lufs(score, note_ms, hit, vel_power=VEL_POWER, holds=HOLDS_S, hold_db=hold,
                                     sends=SEND_SHARES)


#: FluidSynth's default velocity curve in power: a note's K-weighted loudness goes as (vel/100)⁴
#: (measured on FluidR3's piano, organ, guitar, strings, bass, brass and synths: within 0.1 dB
#: from velocity 30 to 120 — a brass or reed patch's filter makes a soft note up to 1.5 dB softer)
VEL_POWER = 4.0
#: what a full reverb and a full chorus send add to a part's K-weighted power, with this pool's
#: effect settings (measured on a piano, strings, a guitar and a synth lead, held 1.5 s and let
#: ring 1.5 s: the reverb returns −1 … +3 %, the chorus +9 … +29 %)
SEND_SHARES = (0.0, 0.25)

REF_DB = -20.0           # calibrated presets are attenuated toward this reference loudness


class _Amped(NamedTuple):
    """A part through an amp: its channel, its :class:`Amp`, the block's planar stem, one
    render's planar scratch, the (left, right) gains of its pan."""
    channel: int
    amp: Amp
    stem: np.ndarray
    scratch: np.ndarray
    gains: tuple[float, float]


class FluidInstrument:
    """One stream's FluidSynth instance, as a :mod:`engine.synth.perform` instrument. ``[engine]``"""

    quantum = 64
    name = "fluidsynth"

    def __init__(self, pool: FluidPool):
        self.pool = pool
        self.lib = pool.lib
        self.h = pool.acquire()
        self._fresh = True                       # not set up yet: nothing played on self.h
        self.chan: list[int] = []
        self.parts: list[Part] = []
        self.trim_db: list[float] = []
        self.presets: list[tuple[int, int]] = []
        self.fc_cents: list[float] = []          # each part's filter offset before brightness
        self.twin: list[int] = []                # each part's twin channel for clicking keys (-1: none)
        self.soft_keys: list[frozenset] = []     # the keys each part plays on its twin
        n = perform.BLOCK
        self._dry = np.zeros((2, n), dtype=np.float32)       # planar: what is not amped, effects too
        self._amps: list[_Amped] = []
        self._stem_at = 0                        # frames of the block rendered so far (the stems')
        # the effects (reverb, chorus) always return into the dry pair, whatever channel 0 is
        self._fx = (ctypes.c_void_p * 2)(self._dry[0].ctypes.data, self._dry[1].ctypes.data)
        self._ptrs = self._fx                    # each channel's output pair (:meth:`_route`)

    def setup(self, parts: list[Part]) -> None:
        amped = any(p.drive > 0.0 and not (p.is_drums or p.role == "drums") for p in parts)
        if amped != self.pool.is_amped(self.h):      # the instance kind the parts need
            (self.pool.put_back if self._fresh else self.pool.release)(self.h)
            self.h = self.pool.acquire(amped)
        self._fresh = False
        lib, h = self.lib, self.h
        sid = 1
        self.parts = list(parts)
        melodic = [c for c in range(16) if c != 9]
        drums = [9] + [c for c in range(15, 9, -1)]
        mi = di = 0
        self.chan = []
        self.fc_cents = []
        self.trim_db = []
        self.presets = []
        self.twin, self.soft_keys = [], []
        self._amps = []
        twins = iter(range(16, MIDI_CHANNELS))
        for p in parts:
            bank, prog = self.pool.resolve(p)
            self.presets.append((bank, prog))
            if bank == 128:
                ch = drums[di % len(drums)]
                di += 1
                lib.fluid_synth_set_channel_type(h, ch, CHANNEL_TYPE_DRUM)
            else:
                ch = melodic[mi % len(melodic)]
                mi += 1
                lib.fluid_synth_set_channel_type(h, ch, CHANNEL_TYPE_MELODIC)
            self.chan.append(ch)
            # calibration: bring the preset to the reference loudness (attenuation only)
            trim = max(0.0, self.pool.part_level_db(p, bank, prog) - REF_DB)
            self.trim_db.append(trim)
            fc = edge_filter_cents(bank, prog)
            if bank != 128 and "flugel" in p.name:
                fc += FLUGELHORN_CENTS
            self.fc_cents.append(fc)
            soft = self.pool.click_keys(prog) if bank == 128 else frozenset()
            twin = next(twins, -1) if soft else -1
            self.twin.append(twin)
            self.soft_keys.append(soft if twin >= 0 else frozenset())
            for c in (ch, twin) if twin >= 0 else (ch,):
                if c == twin:
                    lib.fluid_synth_set_channel_type(h, c, CHANNEL_TYPE_DRUM)
                lib.fluid_synth_program_select(h, c, sid, bank, prog)
                lib.fluid_synth_pitch_wheel_sens(h, c, 2)
                lib.fluid_synth_cc(h, c, 7, _cc(127 * p.level ** 0.5))      # CC7's curve ≈ amplitude²
                lib.fluid_synth_cc(h, c, 10, _cc(64 + 63.5 * p.pan))
                lib.fluid_synth_cc(h, c, 91, _cc(127 * p.reverb))
                lib.fluid_synth_cc(h, c, 93, _cc(127 * p.chorus))
                lib.fluid_synth_set_gen(h, c, GEN_ATTENUATION, float(trim * 10.0))   # centibels
            if fc:
                lib.fluid_synth_set_gen(h, ch, GEN_FILTERFC, fc)
            if bank != 128 and p.role == "bass" and p.name.startswith("sub"):   # "sub bass", "sub-bass", "subbass"
                lib.fluid_synth_set_gen(h, ch, GEN_VOLENVATTACK, SUB_ATTACK_CENTS)
            if twin >= 0:
                for gen, v in DECLICK_GENS:
                    lib.fluid_synth_set_gen(h, twin, gen, v + (fc if gen == GEN_FILTERFC else 0.0))
            if bank != 128 and p.drive > 0.0:
                # through an amp (engine.synth.amp): played centred and dry into a stem of its
                # own, panned after the cabinet; a clean reverb or chorus of it would be heard
                lib.fluid_synth_cc(h, ch, 10, 64)
                lib.fluid_synth_cc(h, ch, 91, 0)
                lib.fluid_synth_cc(h, ch, 93, 0)
                for gen in (GEN_REVERBSEND, GEN_CHORUSSEND):      # the preset's own sends too
                    lib.fluid_synth_set_gen(h, ch, gen, -1000.0)
                theta = (max(-1.0, min(1.0, p.pan)) + 1.0) * math.pi / 4
                gains = (math.sqrt(2) * math.cos(theta), math.sqrt(2) * math.sin(theta))
                self._amps.append(_Amped(ch, Amp(self.pool.sr, p.drive), np.zeros((2, perform.BLOCK), np.float32),
                                         np.zeros((2, perform.BLOCK), np.float32), gains))
        self._route()

    def _route(self) -> None:
        """The output pairs ``fluid_synth_process`` mixes each channel's audio group into: the
        dry pair (the effects' too), an amped part's channel its scratch; with nothing amped,
        the dry pair alone (every group wraps into it)."""
        self._stem_at = 0
        if not self._amps:
            self._ptrs = self._fx
            return
        ptrs = (ctypes.c_void_p * (2 * MIDI_CHANNELS))(*(list(self._fx) * MIDI_CHANNELS))
        for a in self._amps:
            ptrs[2 * a.channel], ptrs[2 * a.channel + 1] = a.scratch[0].ctypes.data, a.scratch[1].ctypes.data
        self._ptrs = ptrs

    def _key_channel(self, part: int, key: int) -> int:
        return self.twin[part] if key in self.soft_keys[part] else self.chan[part]

    def note_on(self, part: int, key: int, vel: int) -> None:
        key = int(key) & 127
        self.lib.fluid_synth_noteon(self.h, self._key_channel(part, key), key, max(1, min(127, int(vel))))

    def note_off(self, part: int, key: int) -> None:
        key = int(key) & 127
        self.lib.fluid_synth_noteoff(self.h, self._key_channel(part, key), key)

    def control(self, part: int, c: Control) -> None:
        for ch in (self.chan[part], self.twin[part]):
            if ch < 0:
                continue
            if c.kind == "cc" and int(c.number) in (10, 91, 93) and any(a.channel == ch for a in self._amps):
                continue                 # an amped part's pan comes after its amp, and it plays dry
            if c.kind == "bend":
                v = int(round(8192 + max(-2.0, min(2.0, c.value)) / 2.0 * 8191))
                self.lib.fluid_synth_pitch_bend(self.h, ch, max(0, min(16383, v)))
            elif c.kind == "cc":
                self.lib.fluid_synth_cc(self.h, ch, int(c.number) & 127, _cc(c.value))

    def set_brightness(self, b: float) -> None:
        """0 dark … 1 open: every part's filter cutoff offset (up to 4 octaves down). ``[engine]``"""
        off = -(1.0 - max(0.0, min(1.0, float(b)))) * 4800.0
        soft = dict(DECLICK_GENS)[GEN_FILTERFC]
        for ch, twin, fc in zip(self.chan, self.twin, self.fc_cents):
            self.lib.fluid_synth_set_gen(self.h, ch, GEN_FILTERFC, fc + off)
            if twin >= 0:
                self.lib.fluid_synth_set_gen(self.h, twin, GEN_FILTERFC, fc + soft + off)

    def render(self, out: np.ndarray) -> None:
        """The next ``out.shape[0]`` frames (≤ one block) into ``out``; an amped part's are kept
        in its stem until :meth:`finish` adds them, through its amp, to the whole block."""
        n = out.shape[0]
        if not n:
            return
        dry = self._dry
        dry[:, :n] = 0.0
        for a in self._amps:
            a.scratch[:, :n] = 0.0
        self.lib.fluid_synth_process(self.h, n, 2, self._fx, len(self._ptrs), self._ptrs)
        out[...] = dry[:, :n].T
        at = self._stem_at
        for a in self._amps:                       # the stems keep the block's frames in order
            a.stem[:, at:at + n] = a.scratch[:, :n]
        self._stem_at = at + n

    def finish(self, block: np.ndarray) -> None:
        """The end of a block ``render`` filled: each amped part's stem through its amp, panned
        and added to ``block``. ``[engine]``"""
        if not self._amps:
            return
        n = self._stem_at
        self._stem_at = 0
        for a in self._amps:
            x = a.stem[0, :n].astype(np.float64) + a.stem[1, :n]
            x *= 0.5
            a.amp.process(x)
            gl, gr = a.gains
            block[:n, 0] += (gl * x).astype(np.float32)
            block[:n, 1] += (gr * x).astype(np.float32)

    def close(self) -> None:
        if self.h:
            self.pool.release(self.h)
            self.h = 0


def _cc(v: float) -> int:
    return max(0, min(127, int(round(v))))


# --- calibration ---------------------------------------------------------------------------

LEVELS_FILE = os.path.join(os.path.dirname(__file__), "fluid_levels.json")


def _font_key(path: str) -> str:
    return f"{os.path.basename(path)}:{os.path.getsize(path)}"


def _cache_path(key: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    # v2: measured through EDGE_FILTER_CENTS; v3: with the kits' clicking keys; v4: the square's
    # filter closed further; v5: each program's energy by note length (older caches are measured again)
    return os.path.join(base, "wavebridge", f"fluid-levels-v5-{hashlib.sha1(key.encode()).hexdigest()[:16]}.json")


def _decode(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        a, *rest = k.split(":")
        if a == "click":                    # "click:<kit>:<key>": that key's onset clicks
            out[("click", int(rest[0]), int(rest[1]))] = float(v)
        elif a == "hold":                   # "hold:<program>:<s>": a note that long (see calibrate)
            out[("hold", int(rest[0]), float(rest[1]))] = float(v)
        else:
            out[("kit", int(rest[0])) if a == "kit" else (int(a), int(rest[0]))] = float(v)
    return out


def _encode(levels: dict) -> dict:
    return {":".join(map(str, k)): round(v, 2) for k, v in sorted(levels.items(), key=lambda kv: str(kv[0]))}


def levels_for(pool: "FluidPool") -> dict:
    """The calibration of ``pool``'s SoundFont: shipped (FluidR3_GM, MuseScore General), cached, or measured now.

    Measuring takes a few seconds; the result is cached under ``~/.cache/wavebridge`` (best
    effort) so a SoundFont is measured once per machine. ``[control]`` at warmup.
    """
    key = _font_key(pool.path)
    for path in (LEVELS_FILE, _cache_path(key)):
        try:
            with open(path) as f:
                data = json.load(f)
            if key in data:
                return _decode(data[key])
        except (OSError, ValueError):
            pass
    levels = calibrate(pool)
    try:
        cp = _cache_path(key)
        os.makedirs(os.path.dirname(cp), exist_ok=True)
        with open(cp + ".tmp", "w") as f:
            json.dump({key: _encode(levels)}, f)
        os.replace(cp + ".tmp", cp)
    except OSError as e:
        log.info("could not cache the SoundFont calibration (%s)", e)
    return levels

def _write(lib, h, out: np.ndarray) -> None:
    """Render ``out.shape[0]`` frames of every channel, dry and effects, into the interleaved
    ``(n, 2)`` float32 ``out`` (any audio groups mixed into the one pair). ``[control]``"""
    n = out.shape[0]
    planar = np.zeros((2, n), dtype=np.float32)
    pair = (ctypes.c_void_p * 2)(planar[0].ctypes.data, planar[1].ctypes.data)
    lib.fluid_synth_process(h, n, 2, pair, 2, pair)
    out[...] = planar.T


def onset_clicks(x: np.ndarray, ratio: float = 20.0, floor: float = 0.05) -> int:
    """Frames of ``x`` (``(n, 2)``) whose one-sample jump exceeds ``ratio``× the local median jump
    (the largest median of its 10 ms window and the two beside it) and ``floor``: by default the
    click rule the tests and ``scripts/mir-audit`` hear with, counted."""
    d = np.abs(np.diff(x.astype(np.float64), axis=0)).max(axis=1)
    w = 480
    m = d[: d.size // w * w].reshape(-1, w)
    if not m.size:
        return 0
    med = np.median(m, axis=1)
    local = np.repeat(np.maximum.reduce([med, np.r_[med[1:], med[-1]], np.r_[med[0], med[:-1]]]), w)
    d = d[: local.size]
    return int(np.count_nonzero((d > ratio * local) & (d > floor)))


def _scan_clicks(pool: "FluidPool", h: int, buf: np.ndarray) -> dict:
    """``("click", kit, key) → 1.0`` for every key of :data:`DECLICK_KITS` whose lone hit (at
    velocity 40, 80 or 120, dry) clicks by :func:`onset_clicks` plain or through the presence
    lift the mix gives a lone dark hit (:class:`perform.Balance`'s most: +18 dB at 4 kHz and the
    low mids −8 dB, which sharpen a tom's stick), each raised to a 0.8 peak as the mix raises a lone hit.
    ``[control]`` in :func:`calibrate`."""
    from scipy.signal import sosfilt
    lift = np.stack([perform._peak(4000.0, 18.0, 0.7, pool.sr), perform._shelf("low", 350.0, -8.0, pool.sr)])
    lib, sr = pool.lib, pool.sr
    n = int(0.45 * sr) // 64 * 64
    out = {}
    for kit in DECLICK_KITS:
        if not pool.has_preset(128, kit):
            continue
        for key in DECLICK_KEYS:
            for vel in (40, 80, 120):
                lib.fluid_synth_system_reset(h)
                lib.fluid_synth_set_channel_type(h, 9, CHANNEL_TYPE_DRUM)
                lib.fluid_synth_program_select(h, 9, 1, 128, kit)
                for cc, v in ((7, 127), (91, 0), (93, 0), (10, 64)):
                    lib.fluid_synth_cc(h, 9, cc, v)
                buf[:64] = 0.0
                lib.fluid_synth_noteon(h, 9, key, vel)
                _write(lib, h, buf[64:64 + n])                                          # 64 frames of silence first
                x = buf[:n + 64].astype(np.float64)
                if float(np.abs(x).max()) <= 1e-4:
                    continue
                if any(onset_clicks(y * (0.8 / np.abs(y).max())) for y in (x, sosfilt(lift, x, axis=0))):
                    out[("click", kit, key)] = 1.0
                    break
    return out


_CAL_KEYS = {"low": 40, "mid": 60, "high": 72}
_KIT_NOTES = (36, 38, 42, 46, 49, 51)       # kick, snare, closed/open hat, crash, ride


def _kw_db(x: np.ndarray, sr: int) -> float:
    n = x.shape[0]
    kw = perform.k_weighting_power(n, sr)
    spec = np.fft.rfft(x.astype(np.float64), axis=0)
    ms = 2.0 * (np.abs(spec) ** 2 * kw[:, None]).sum() / (n * n)
    return -0.691 + 10 * math.log10(ms + 1e-20)


#: the note lengths (s) whose energy the calibration measures for every program: a piano's,
#: a guitar's or a bass's short note carries its attack and its ring after the key is let go,
#: +5 … +7 dB over its mean square held 1.2 s times its length, and a 3 s note has decayed,
#: −3 … −4 dB; an organ's, a string section's or a synth lead's is within 1 dB at any length
HOLDS_S = (0.1, 0.3, 1.0, 3.0)
HOLD_TAIL_S = 1.0        # what is rendered after the note-off: the release and the ring


def _hold_db(lib, h, ch: int, held: float, buf: np.ndarray, sr: int) -> float:
    """K-weighted energy (dB, mean square × s) of the calibration chord on channel ``ch`` held
    ``held`` s and then let go, with :data:`HOLD_TAIL_S` after, minus ``10·log10(held)``: so it
    reads as a mean square over the hold, like the program's level."""
    n_on = int(held * sr) // 64 * 64
    n_all = n_on + int(HOLD_TAIL_S * sr) // 64 * 64
    lib.fluid_synth_all_sounds_off(h, ch)
    _write(lib, h, buf[:64])                                       # the old voices gone
    _play_chord(lib, h, ch, buf, n_on, n_all - n_on)
    return _kw_db(buf[:n_all], sr) + 10 * math.log10(n_all / n_on)


def _play_chord(lib, h, ch: int, buf: np.ndarray, n_on: int, n_off: int) -> None:
    """The calibration chord (:data:`_CAL_KEYS`, velocity 100) struck on channel ``ch``, held
    ``n_on`` frames and let ring ``n_off`` more, rendered into ``buf`` from its start."""
    for key in _CAL_KEYS.values():
        lib.fluid_synth_noteon(h, ch, key, 100)
    _write(lib, h, buf[:n_on])
    for key in _CAL_KEYS.values():
        lib.fluid_synth_noteoff(h, ch, key)
    _write(lib, h, buf[n_on:n_on + n_off])


def calibrate(pool: FluidPool) -> dict:
    """Loudness of every GM program and kit in the pool's SoundFont, measured once at warmup.

    A program: a three-note chord (E2, C4, C5 struck together, velocity 100) held 1.2 s — the
    louder of the whole hold and its second half, so a slow pad counts once it has swelled —
    and, for each of :data:`HOLDS_S`, the chord's whole energy when held that long and let ring
    out (:func:`_hold_db`), in dB over that mean square times the hold; a
    kit: its kick, snare, hats, crash and ride one after another. Rendered dry (sends 0) on the
    owner instance (it never plays a stream) at CC7 127, K-weighted. Then the composer's kits'
    clicking keys (:func:`_scan_clicks`). About ten seconds of CPU for a full GM font, so the
    figures are kept per SoundFont (see :func:`levels_for`).
    ``[control]`` at warmup.
    """
    lib = pool.lib
    h = pool._owner                 # the instance that only holds the SoundFont
    sr = pool.sr
    sid = 1
    n_hold, n_tail = int(1.2 * sr) // 64 * 64, int(0.1 * sr) // 64 * 64
    buf = np.zeros((n_hold + n_tail, 2), dtype=np.float32)
    long_buf = np.zeros((int((max(HOLDS_S) + HOLD_TAIL_S) * sr) // 64 * 64 + 64, 2), dtype=np.float32)
    out: dict = {}
    pool._presets.clear()
    try:
        for bank, progs in ((0, range(128)), (128, range(128))):
            for prog in progs:
                if not pool.has_preset(bank, prog):
                    continue
                lib.fluid_synth_system_reset(h)
                ch = 9 if bank == 128 else 0
                lib.fluid_synth_set_channel_type(h, ch, CHANNEL_TYPE_DRUM if bank == 128 else CHANNEL_TYPE_MELODIC)
                lib.fluid_synth_program_select(h, ch, sid, bank, prog)
                for cc, v in ((7, 127), (91, 0), (93, 0), (10, 64)):
                    lib.fluid_synth_cc(h, ch, cc, v)
                lib.fluid_synth_set_gen(h, ch, GEN_FILTERFC, edge_filter_cents(bank, prog))   # as played
                if bank == 128:
                    seg = int(0.4 * sr) // len(_KIT_NOTES) // 64 * 64
                    for k, key in enumerate(_KIT_NOTES):
                        lib.fluid_synth_noteon(h, ch, key, 100)
                        _write(lib, h, buf[k * seg:(k + 1) * seg])
                    out[("kit", prog)] = _kw_db(buf[:seg * len(_KIT_NOTES)], sr)
                else:
                    _play_chord(lib, h, ch, buf, n_hold, n_tail)
                    # a slow pad is measured where it has swelled, a decaying sound over its note
                    out[(0, prog)] = max(_kw_db(buf[:n_hold], sr), _kw_db(buf[n_hold // 2:n_hold], sr))
        out.update(_scan_clicks(pool, h, buf))
        for prog in range(128):
            if (0, prog) in out:
                lib.fluid_synth_system_reset(h)
                lib.fluid_synth_set_channel_type(h, 0, CHANNEL_TYPE_MELODIC)
                lib.fluid_synth_program_select(h, 0, sid, 0, prog)
                for cc, v in ((7, 127), (91, 0), (93, 0), (10, 64)):
                    lib.fluid_synth_cc(h, 0, cc, v)
                lib.fluid_synth_set_gen(h, 0, GEN_FILTERFC, edge_filter_cents(0, prog))
                for held in HOLDS_S:
                    out[("hold", prog, held)] = _hold_db(lib, h, 0, held, long_buf, sr) - out[(0, prog)]
    finally:
        lib.fluid_synth_set_gen(h, 0, GEN_FILTERFC, 0.0)
        lib.fluid_synth_system_reset(h)
    return out
