"""compose: prompt → :class:`~engine.score.Score` (the synth's composer).

:func:`compose` reads the prompt (tempo, key and mode, meter, genre, moods, instrument and drum
words), fills whatever the words leave open from a hash of ``(prompt, seed)``, and returns a
:class:`Score` whose bars are generated **on demand**: ``make_bar(i)`` is a pure function of the
bar index, O(1) in ``i`` (a small per-section plan — section kind, chords, voicings, motifs — is
cached; everything else is built per bar from a per-bar hash). So an endless stream never holds
the piece, any bar can be asked for first, and two renders agree note for note.

The piece is a sequence of 8-bar sections (intro, then blocks of four sections — verse "A",
chorus "B", "break", "drop", "solo", "outro" — whose template is picked per block by the hash,
so the form never loops exactly). Sections add and drop parts; drums fill at section ends.

Micro-timing is the composer's: swing warps each beat (swung 8ths or 16ths), humanisation adds
a few ms of jitter and velocity spread, all deterministic per seed, and note ends are kept
before the next onset of the same pitch on the same part (no hung or retriggered notes).

Pure Python; no threads, no I/O. ``compose`` and ``make_bar`` run on the ``[engine]`` thread at
job start and while rendering (``compose`` ≈ a millisecond, a bar a fraction of one).
"""
from __future__ import annotations

import functools
import hashlib
import math
import random
import re
from dataclasses import dataclass, field

from engine.compose import genres as G
from engine.score import DRUM_CHANNEL, Control, Note, Part, Score

SECTION_BARS = 8
_RINGING = frozenset((46, 49, 51, 52, 53, 55, 57, 59))   # open hat, crashes, rides, china, splash
_GAP = 0.012                      # beats between a note's end and the next onset of its pitch
_NOTE_NAMES = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}
_REGISTERS = {"bass": (28, 52, 38), "chords": (50, 76, 63), "pad": (52, 79, 65), "lead": (62, 86, 74),
              "arp": (55, 86, 70), "perc": (36, 55, 43)}


def _h(*parts) -> int:
    """A stable 64-bit hash of ``parts`` (Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest(),
                          "little")


# ---------------------------------------------------------------------------------------------
# Reading the prompt
# ---------------------------------------------------------------------------------------------
@dataclass
class PromptSpec:
    """What the words of a prompt say (``None``: the words leave it open)."""

    text: str
    bpm: float | None = None
    key_root: int | None = None
    mode: str | None = None
    meter: tuple[int, int] | None = None
    genre: str | None = None
    moods: list[str] = field(default_factory=list)
    instruments: list[str] = field(default_factory=list)     # INSTRUMENTS keys, in prompt order
    drum_words: list[str] = field(default_factory=list)      # DRUM_WORDS keys
    no_roles: set[str] = field(default_factory=set)          # "no drums", "without bass" …
    solo: bool = False                                        # "solo piano", "piano only"
    only_roles: set[str] = field(default_factory=set)        # "drums only", "just bass and drums"
    swing: float | None = None
    tempo_factor: float = 1.0


_ACC = r"(#|♯|b(?![a-z])|♭|-sharp|-flat|\s+sharp|\s+flat)?"
_MODE_WORDS = r"(major|minor|maj|min|dorian|phrygian|lydian|mixolydian|aeolian|ionian|locrian|harmonic minor)"
_KEY_RES = (
    re.compile(r"\b(?:in|key of|key)\s+([a-g])" + _ACC + r"(?:\s*" + _MODE_WORDS + r"|(m)(?![a-z]))?(?![a-z#♯♭])"),
    re.compile(r"\b([a-g])" + _ACC + r"\s*" + _MODE_WORDS + r"\b"),
)
_BPM_RE = re.compile(r"\b(\d{2,3}(?:\.\d+)?)\s*(?:bpm|beats per minute|beats a minute)\b")
_TEMPO_RE = re.compile(r"\b(?:tempo|at)\s+(\d{2,3}(?:\.\d+)?)\b(?!\s*(?:/|hz|seconds|s\b))")
#: a bare number that reads as a tempo ("dubstep 140", "house at 124, deep"): 50–220, a word of
#: its own — not "808", "80s", "4/4", "12 bar", "30 seconds", "no. 5"
_BARE_BPM_RE = re.compile(r"(?<![\w./'#-])(\d{2,3}(?:\.\d+)?)(?![\w./'%:-])"
                          r"(?!\s*(?:seconds?|secs?|minutes?|mins?|ms|bars?|beats?|measures?|hz|khz|db|"
                          r"percent|steps?|notes?|voices?|strings?|keys?|pieces?|parts?|members?|players?|"
                          r"musicians?|times?|x)\b)")
_METER_RE = re.compile(r"(?<![\d/])(\d{1,2})\s*/\s*(\d{1,2})(?![\d/])")
_NEG_RE = re.compile(r"\b(?:no|without|minus|w/o)\s+(?:the\s+|any\s+)?([a-z\- ]+?)(?=$|[,.;]|\s+(?:and|with|in|at|but)\b)")
_ROLE_WORDS = {"drums": "drums", "drum": "drums", "beat": "drums", "beats": "drums", "percussion": "drums",
               "bass": "bass", "bassline": "bass", "melody": "lead", "lead": "lead", "leads": "lead",
               "pad": "pad", "pads": "pad", "chords": "chords", "keys": "chords", "arp": "arp",
               "arps": "arp", "arpeggio": "arp"}


def _phrase_re(phrase: str) -> re.Pattern:
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])")


_GENRE_PHRASES = sorted(((a, g.name) for g in G.GENRES.values() for a in g.aliases),
                        key=lambda t: len(t[0]), reverse=True)
_GENRE_OF = dict(_GENRE_PHRASES)


def _alternation(phrases) -> re.Pattern:
    """One regex for many phrases: longest first, so "electric guitar" wins over "guitar"."""
    alts = "|".join(re.escape(w) for w in sorted(phrases, key=len, reverse=True))
    return re.compile(r"(?<![a-z0-9])(?:" + alts + r")(?![a-z0-9])")


_GENRE_RX = _alternation(_GENRE_OF)
_INSTR_RX = _alternation(G.INSTRUMENTS)
_DRUM_RX = _alternation(G.DRUM_WORDS)


def _normalise(prompt: str) -> str:
    t = " ".join(str(prompt).lower().replace("’", "'").split())
    t = t.replace("♯", "#").replace("♭", "b")
    return t


def read_prompt(prompt: str) -> PromptSpec:
    """What ``prompt`` says about tempo, key, mode, meter, genre, moods and instruments. ``[engine]``"""
    text = _normalise(prompt)
    spec = PromptSpec(text=text)
    taken = [False] * len(text)

    def claim(m) -> bool:
        if any(taken[m.start():m.end()]):
            return False
        taken[m.start():m.end()] = [True] * (m.end() - m.start())
        return True

    m = _BPM_RE.search(text) or _TEMPO_RE.search(text)
    if m is None:
        m = next((b for b in _BARE_BPM_RE.finditer(text) if 50.0 <= float(b.group(1)) <= 220.0), None)
    if m:
        spec.bpm = float(m.group(1))
        claim(m)
    for rx in _KEY_RES:
        m = rx.search(text)
        if m and rx is _KEY_RES[0] and m.group(1) == "a" and not (m.group(2) or m.group(3) or m.group(4)) \
                and not re.match(r"\s*($|[,.;!]|and\b|with\b|at\b|for\b|over\b)", text[m.end():]):
            m = None                              # "in a lofi style" is no key of A
        if m:
            letter, acc, mword = m.group(1), (m.group(2) or "").strip(" -"), (m.group(3) or "")
            if rx is _KEY_RES[0] and len(m.groups()) >= 4 and m.group(4):
                mword = "minor"
            spec.key_root = (_NOTE_NAMES[letter] + (1 if acc in ("#", "sharp") else -1 if acc in ("b", "flat")
                                                    else 0)) % 12
            if mword:
                spec.mode = G.MODE_ALIASES.get(mword, mword)
            claim(m)
            break
    if spec.mode is None:
        for w in ("harmonic minor", "dorian", "phrygian", "lydian", "mixolydian", "locrian", "aeolian", "ionian",
                  "minor", "major"):
            if _phrase_re(w).search(text):
                spec.mode = G.MODE_ALIASES.get(w, w)
                break
    for m in _METER_RE.finditer(text):
        num, den = int(m.group(1)), int(m.group(2))
        if 1 <= num <= 15 and den in (2, 4, 8, 16):
            spec.meter = (num, den)
            claim(m)
            break
    if spec.meter is None:
        if re.search(r"\b(waltz|valse|vals|three four|three-four|triple meter|triple time|in three)\b", text):
            spec.meter = (3, 4)
        elif re.search(r"\b(six eight|six-eight|compound time)\b", text):
            spec.meter = (6, 8)
    for m in _NEG_RE.finditer(text):
        for w in m.group(1).split():
            if w in _ROLE_WORDS:
                spec.no_roles.add(_ROLE_WORDS[w])
        claim(m)
    # genre: the earliest genre phrase in the prompt ("jazz waltz" is jazz, in 3/4)
    phrase = None
    for m in _GENRE_RX.finditer(text):
        if claim(m):
            phrase = m.group(0)
            spec.genre = _GENRE_OF[phrase]
            if spec.genre == "waltz" and spec.meter is None:
                spec.meter = (3, 4)
            break
    spec.drum_words = [m.group(0) for m in _DRUM_RX.finditer(text) if claim(m)]
    spec.instruments = [m.group(0) for m in _INSTR_RX.finditer(text) if claim(m)]
    # a style played as its nearest genre brings its own instruments, for the roles the prompt
    # leaves open ("folk" is rock's groove on an acoustic guitar, not a distorted one)
    roles = {G.INSTRUMENTS[w][1] for w in spec.instruments}
    for w in G.STYLE_INSTRUMENTS.get(phrase, ()):
        if G.INSTRUMENTS[w][1] not in roles:
            spec.instruments.append(w)
            roles.add(G.INSTRUMENTS[w][1])
    words = set(re.findall(r"[a-z]+", text))
    for w, (mmode, tf, _) in G.MOODS.items():
        if w in words:
            spec.moods.append(w)
            spec.tempo_factor *= tf
            if mmode and spec.mode is None:
                spec.mode = mmode
    if "slow" in words or "slower" in words:
        spec.tempo_factor *= 0.85
    if words & {"fast", "uptempo", "faster", "driving"}:
        spec.tempo_factor *= 1.12
    if words & {"swing", "swung", "shuffle", "swingy"}:
        spec.swing = 0.28
    if "straight" in words:
        spec.swing = 0.0
    solo = bool(re.search(r"\b(solo|only|alone|just)\b", text)) and spec.genre is None
    spec.solo = solo and bool(spec.instruments)
    if solo:
        spec.only_roles = {r for w, r in _ROLE_WORDS.items() if w in words}
    return spec


# ---------------------------------------------------------------------------------------------
# Harmony
# ---------------------------------------------------------------------------------------------
_NUMERALS = {"vii": 6, "vi": 5, "v": 4, "iv": 3, "iii": 2, "ii": 1, "i": 0}
_CHORD_RE = re.compile(r"^(b|#)?(VII|VI|V|IV|III|II|I|vii|vi|v|iv|iii|ii|i)(.*)$")
_SUFFIX = {  # suffix → (major-case intervals, minor-case intervals)
    "": ((0, 4, 7), (0, 3, 7)), "7": ((0, 4, 7, 10), (0, 3, 7, 10)), "maj7": ((0, 4, 7, 11), (0, 3, 7, 11)),
    "9": ((0, 4, 7, 10, 14), (0, 3, 7, 10, 14)), "maj9": ((0, 4, 7, 11, 14), (0, 4, 7, 11, 14)),
    "6": ((0, 4, 7, 9), (0, 3, 7, 9)), "sus4": ((0, 5, 7), (0, 5, 7)), "sus2": ((0, 2, 7), (0, 2, 7)),
    "add9": ((0, 4, 7, 14), (0, 3, 7, 14)), "o": ((0, 3, 6), (0, 3, 6)), "o7": ((0, 3, 6, 9), (0, 3, 6, 9)),
    "h7": ((0, 3, 6, 10), (0, 3, 6, 10)), "13": ((0, 4, 10, 14, 21), (0, 3, 10, 14, 21)),
    "+": ((0, 4, 8), (0, 4, 8)),
}


@dataclass(frozen=True)
class Chord:
    """A chord: ``root`` pitch class and intervals above it (``(0, 4, 7)`` a major triad)."""

    root: int
    intervals: tuple[int, ...]
    symbol: str

    @functools.cached_property
    def pcs(self) -> tuple[int, ...]:
        return tuple((self.root + i) % 12 for i in self.intervals)

    def pitches(self, base: int = 48) -> tuple[int, ...]:
        r = base + (self.root - base) % 12
        return tuple(r + i for i in self.intervals)


_chord_cache: dict = {}


def parse_chord(symbol: str, tonic: int, scale: tuple[int, ...]) -> Chord:
    """Roman numeral ``symbol`` (a degree of ``scale``; case = triad quality) in the key of ``tonic``.
    Cached. ``[engine]``"""
    key = (symbol, tonic, scale)
    hit = _chord_cache.get(key)
    if hit is None:
        m = _CHORD_RE.match(symbol)
        if not m:
            raise ValueError(f"bad chord symbol {symbol!r}")
        acc, num, suf = m.groups()
        deg = _NUMERALS[num.lower()]
        root = (tonic + scale[deg] + (-1 if acc == "b" else 1 if acc == "#" else 0)) % 12
        if suf not in _SUFFIX:
            raise ValueError(f"bad chord suffix {suf!r} in {symbol!r}")
        ivs = _SUFFIX[suf][0 if num.isupper() else 1]
        hit = _chord_cache[key] = Chord(root, ivs, symbol)
    return hit


@functools.lru_cache(maxsize=512)
def chord_scale(scale_pcs: tuple[int, ...], chord: Chord) -> tuple[int, ...]:
    """The key's scale bent to the chord: a scale tone a semitone from a chord tone that is not in
    the scale becomes that chord tone (minor over V → harmonic minor's raised 7th). Cached. ``[engine]``"""
    cp = set(chord.pcs)
    out = []
    for pc in scale_pcs:
        if pc in cp:
            out.append(pc)
            continue
        alt = [c for c in cp if c not in scale_pcs and (c - pc) % 12 in (1, 11)]
        out.append(alt[0] if alt else pc)
    return tuple(sorted(set(out)))


@functools.lru_cache(maxsize=4096)
def voice(chord: Chord, lo: int, hi: int, n: int, prev: tuple[int, ...] | None, centre: int,
          rootless: bool = False) -> tuple[int, ...]:
    """A close voicing of ``chord`` with ``n`` notes in ``[lo, hi]``, nearest to ``prev`` (voice
    leading) or, without one, centred on ``centre``. Cached. ``[engine]``"""
    if n == 1:
        ref = prev[0] if prev else centre
        cands = [p for p in range(lo, hi + 1) if (p - chord.root) % 12 in {i % 12 for i in chord.intervals}]
        return (min(cands, key=lambda p: (abs(p - ref), p)),) if cands else (_near(chord.root, centre),)
    ivs = list(chord.intervals)
    if rootless and len(ivs) >= 4:
        ivs = ivs[1:]
    if len(ivs) > n:                     # drop the fifth first, then the top
        if 7 in ivs and len(ivs) > 3:
            ivs.remove(7)
        ivs = ivs[:n]
    pcs = [(chord.root + i) % 12 for i in ivs]
    best, best_cost = None, 1e9
    for inv in range(len(pcs)):
        order = pcs[inv:] + pcs[:inv]
        for base in range(lo - 12 + (order[0] - lo) % 12, hi + 1, 12):
            v = [base]
            for pc in order[1:]:
                v.append(v[-1] + 1 + (pc - v[-1] - 1) % 12)
            while len(v) < n:                       # double the root
                roots = [x for x in v if x % 12 == chord.root % 12] or [v[0]]
                up, down = roots[-1] + 12, roots[0] - 12
                v.append(up if up <= hi + 2 and (down < lo or up - v[0] <= v[-1] - down) else down)
                v.sort()
            if v[0] < lo or v[-1] > hi:
                continue
            if prev:
                p = sorted(prev)
                cost = sum(abs(a - b) for a, b in zip(v, p)) + abs(len(v) - len(p)) * 3
            else:
                cost = abs((v[0] + v[-1]) / 2 - centre)
            if cost < best_cost:
                best, best_cost = tuple(v), cost
    if best is None:
        r = lo + (chord.root - lo) % 12
        best = tuple(r + i for i in chord.intervals[:n])
    return best


def _near(pc: int, centre: int) -> int:
    """The MIDI note of pitch class ``pc`` nearest to ``centre``."""
    return centre + ((pc - centre + 6) % 12) - 6


# ---------------------------------------------------------------------------------------------
# The composer
# ---------------------------------------------------------------------------------------------
@dataclass
class _PartPlan:
    part: Part
    role: str
    style: str
    lo: int
    hi: int
    centre: int
    nth: int = 0            # how many parts of this role come before it


@dataclass
class _Section:
    k: int
    kind: str
    var: int
    chords: list            # per bar: list of (t0, t1, Chord)
    prog: str
    voicings: dict          # part index → per bar: list of voicings (one per chord event)
    motif: list             # per motif bar: list of (pos, dur, step)
    drop: frozenset         # part indices resting this section
    fill_bar3: bool
    bass_var: int
    comp_var: int


class Composer:
    """Everything :func:`compose` decides, and the bar generator. ``[engine]``"""

    def __init__(self, prompt: str, seed: int, bpm: float | None):
        self.prompt, self.seed = prompt, int(seed)
        spec = self.spec = read_prompt(prompt)
        base = self.base = _h(spec.text, self.seed)
        rng = random.Random(base)
        gname = spec.genre or self._guess_genre(spec, rng)
        g = self.g = G.GENRES[gname]
        # tempo
        if bpm is not None:
            tempo = float(bpm)
        elif spec.bpm is not None:
            tempo = spec.bpm
        else:
            lo, hi = g.bpm
            tempo = round(lo + (hi - lo) * rng.random())
            tempo = min(max(tempo * spec.tempo_factor, lo * 0.7), hi * 1.15)
        self.bpm = float(min(max(tempo, 30.0), 300.0))
        self.meter = spec.meter or g.meter
        num, den = self.meter
        self.bpb = num * 4.0 / den
        self.steps = max(1, int(round(self.bpb * 4)))
        mode = spec.mode or g.modes[rng.randrange(len(g.modes))]
        if mode not in G.MODES:
            mode = "minor" if "min" in mode else "major"
        self.mode = mode
        self.key_root = spec.key_root if spec.key_root is not None else rng.randrange(12)
        self.scale = tuple(sorted((self.key_root + i) % 12 for i in G.MODES[mode]))
        self.family = G.MODE_FAMILY[mode]
        fam = self.family
        if fam in g.progressions:
            progs, pscale = g.progressions[fam], G.MODES[fam]
        elif fam not in ("major", "minor") and fam in G.PROGRESSIONS:
            progs, pscale = G.PROGRESSIONS[fam], G.MODES[fam]
        else:
            fam = "major" if fam in ("major", "lydian", "mixolydian") else "minor"
            progs, pscale = g.progressions.get(fam) or G.PROGRESSIONS[fam], G.MODES[fam]
        self.progs, self.prog_scale = progs, pscale
        self.swing = g.swing if spec.swing is None else spec.swing
        self.swing_unit = g.swing_unit if spec.swing is None else 0.5
        ms_to_beats = self.bpm / 60000.0
        self.jitter = g.humanize_ms * ms_to_beats
        self.laid_back = g.laid_back_ms * ms_to_beats
        self.intensity = sum(G.MOODS[m][2] for m in spec.moods)
        self.vel_scale = min(1.12, max(0.82, 1.0 + 0.2 * self.intensity))    # calm plays softer, energetic harder
        self._build_parts(spec, rng)
        self._sections: dict[int, _Section] = {}

    # --- decisions made once ----------------------------------------------------------------
    def _guess_genre(self, spec: PromptSpec, rng: random.Random) -> str:
        hints = {"violin": "classical", "cello": "classical", "viola": "classical", "harpsichord": "classical",
                 "sax": "jazz", "saxophone": "jazz", "upright bass": "jazz", "trumpet": "jazz", "vibes": "jazz",
                 "nylon guitar": "bossa nova", "808": "trap", "808 bass": "trap", "distorted guitar": "rock",
                 "rhodes": "lofi", "taiko": "cinematic", "choir": "cinematic", "harp": "ambient",
                 "slap bass": "funk", "clavinet": "funk", "organ": "soul", "sitar": "ambient", "koto": "ambient"}
        for w in spec.instruments:
            if w in hints:
                return hints[w]
        if "808s" in spec.drum_words:
            return "trap"
        if "brushes" in spec.drum_words or "brush" in spec.drum_words:
            return "jazz"
        if "breakbeat" in spec.drum_words or "amen" in spec.drum_words:
            return "drum and bass"
        if spec.meter == (3, 4):
            return "waltz"
        for m in spec.moods:
            if m in G.MOOD_GENRES:
                opts = G.MOOD_GENRES[m]
                return opts[rng.randrange(len(opts))]
        return G.DEFAULT_GENRES[rng.randrange(len(G.DEFAULT_GENRES))]

    def _build_parts(self, spec: PromptSpec, rng: random.Random) -> None:
        g = self.g
        specs: list[dict] = []
        for ps in g.parts:
            if not spec.solo or ps.role in spec.only_roles:
                specs.append({"name": ps.name, "role": ps.role, "program": ps.program, "style": ps.style,
                              "pan": ps.pan, "octave": ps.octave, "named": False, "level": ps.level})
        # instrument words: replace the genre's part of that role (first one not already named), else add
        for w in spec.instruments:
            prog, role, style = G.INSTRUMENTS[w]
            if role == "bass" and "808" in w:
                style = style or "808"
            if any(d["program"] == prog and d["named"] and d["role"] == role for d in specs):
                continue
            slot = next((d for d in specs if d["role"] == role and not d["named"]), None)
            if slot is None:
                if any(d["program"] == prog and d["role"] == role for d in specs):
                    continue
                slot = {"role": role, "pan": None, "octave": 0, "level": 0.0}
                specs.append(slot)
            slot.update(name=w, program=prog, named=True, style=style or slot.get("style", ""))
        kit = None
        groove = None
        lanes: dict = {}
        for w in spec.drum_words:
            k, extra, gr = G.DRUM_WORDS[w]
            kit = k if k is not None else kit
            groove = gr or groove
            lanes.update(extra)
            if w in ("808s", "tr-808"):
                b = next((d for d in specs if d["role"] == "bass"), None)
                if b is None:
                    specs.append({"name": "808", "role": "bass", "program": 38, "style": "808", "pan": None,
                                  "octave": 0, "named": True, "level": 0.0})
                elif not b["named"]:
                    b.update(name="808", program=38, style="808")
        if (spec.drum_words or "drums" in spec.only_roles) and not any(d["role"] == "drums" for d in specs):
            specs.insert(0, {"name": "drums", "role": "drums", "program": g.kit, "style": "", "pan": None,
                             "octave": 0, "named": True, "level": 0.0})
        specs = [d for d in specs if d["role"] not in spec.no_roles or d["named"]]
        if spec.only_roles:
            specs = [d for d in specs if d["role"] in spec.only_roles or d["named"]]
        if not any(d["role"] in ("chords", "pad", "arp", "lead") for d in specs) and \
                not (spec.only_roles and spec.only_roles <= {"drums", "bass"}):
            specs.append({"name": "pad", "role": "pad", "program": 89, "style": "", "pan": None, "octave": 0,
                          "named": False, "level": 0.0})
        self.kit = kit if kit is not None else g.kit
        self.groove_word = groove
        self.extra_lanes = lanes
        # grooves: the genre's (in its meter) or the meter's generic one
        gro = [G.SPECIAL_GROOVES[groove]] if groove else list(g.grooves)
        if not gro:
            gro = [G.SPECIAL_GROOVES["four"]] if self.bpb == 4 else []
        gro = [x for x in gro if all(len(p) % self.steps == 0 for p in x.values())] or [self._meter_groove()]
        self.grooves = gro
        self.groove = gro[rng.randrange(len(gro))]
        if lanes:
            self.groove = dict(self.groove)
            for lane, pat in lanes.items():
                pat = self._fit(pat)
                have = self.groove.get(lane)
                if have and len(have) % len(pat) == 0:         # merge: the groove's hits (rolls, accents) stay
                    pat = "".join(h if h != "." else pat[q % len(pat)] for q, h in enumerate(have))
                self.groove[lane] = pat
        # mix: per role defaults, spread pans for several parts of a role
        parts: list[Part] = []
        self.plans: list[_PartPlan] = []
        chan = 0
        seen: dict[str, int] = {}
        n_side, first_side = 0, 1
        for d in specs[:15]:
            role = d["role"]
            lvl, pan, rvb, cho = G.ROLE_MIX[role]
            n = seen.get(role, 0)
            seen[role] = n + 1
            if role not in ("drums", "bass"):          # alternate sides, wider for later parts
                side = -1 if n_side % 2 else 1
                if n_side == 0:
                    side = 1 if pan >= 0 else -1
                    first_side = side
                else:
                    side = first_side * (-1 if n_side % 2 else 1)
                pan = side * abs(pan) * (1.0 + 0.2 * (n_side // 2))
                n_side += 1
            if d.get("pan") is not None:
                pan = d["pan"]
            if d.get("level"):
                lvl = d["level"]
            if n:
                lvl *= 0.85
            if role == "drums":
                channel = DRUM_CHANNEL
                program = self.kit
            else:
                channel = chan if chan < DRUM_CHANNEL else chan + 1
                chan += 1
                program = d["program"]
            part = Part(name=d["name"], role=role, program=int(program), channel=channel, level=round(lvl, 3),
                        pan=round(max(-0.9, min(0.9, pan)), 3), reverb=round(min(1.0, g.reverb * rvb), 3),
                        chorus=cho)
            style = d.get("style") or self._role_style(role)
            lo, hi, centre = _REGISTERS.get(role, (48, 84, 64))
            sh = 12 * d.get("octave", 0) + (5 if n and role in ("chords", "arp") and not d.get("octave") else 0)
            if role == "bass" and style in ("808", "wobble"):
                lo, hi, centre = 24, 46, 34
            if role == "bass" and style == "drone":
                lo, hi, centre = 36, 55, 45
            if role == "lead" and program in (40, 41, 71, 73, 72, 56, 65, 64):
                lo, hi, centre = (60, 88, 74)
            if role == "lead" and program in (57, 66, 67, 70):
                lo, hi, centre = (48, 72, 60)
            if role == "chords" and program in (30, 29) and style in ("power", "chug"):
                lo, hi, centre = (40, 64, 50)
            parts.append(part)
            self.plans.append(_PartPlan(part, role, style, lo + sh, hi + sh, centre + sh, n))
        self.parts = parts
        self.drum_part = next((i for i, p in enumerate(parts) if p.is_drums), None)
        self.kick_steps = self._lane_steps("kick")

    def _role_style(self, role: str) -> str:
        g = self.g
        return {"bass": g.bass, "chords": g.chords, "pad": g.pad, "lead": g.lead, "arp": g.arp,
                "perc": g.perc}.get(role, G.ROLE_STYLE.get(role, ""))

    def _fit(self, pat: str) -> str:
        """A lane written for 4/4 cut or repeated to this meter's steps."""
        if len(pat) % self.steps == 0:
            return pat
        return (pat * (self.steps // len(pat) + 1))[:self.steps]

    def _meter_groove(self) -> dict:
        """A groove for a meter the genre does not write: accents on the beat groups."""
        if self.meter in G.METER_GROOVES:
            return G.METER_GROOVES[self.meter]
        num, den = self.meter
        steps = self.steps
        if den == 8:
            groups = {5: (3, 2), 7: (2, 2, 3), 9: (3, 3, 3), 12: (3, 3, 3, 3)}.get(num, (3,) * (num // 3) + (
                (num % 3,) if num % 3 else ()))
            unit = 2
        else:
            groups = {2: (2,), 5: (3, 2), 7: (4, 3)}.get(num, (num,))
            unit = 4
        kick, snare, hat = ["."] * steps, ["."] * steps, ["."] * steps
        pos = 0
        for gi, n in enumerate(groups):
            if pos < steps:
                (kick if gi % 2 == 0 else snare)[pos] = "X" if gi == 0 else "x"
            pos += n * unit
        for s in range(0, steps, 2):
            hat[s] = "x" if s % 4 == 0 else "o"
        return {"kick": "".join(kick), "snare": "".join(snare), "chat": "".join(hat)}

    def _lane_steps(self, lane: str) -> list[int]:
        pat = self.groove.get(lane) or self.groove.get(lane + "+") or ""
        return [s for s, ch in enumerate(pat[:self.steps]) if ch not in ".?"] or [0]

    # --- the form ------------------------------------------------------------------------------
    def section_kind(self, k: int) -> str:
        if k == 0:
            return "intro"
        forms = G.FORMS[self.g.form]
        b, pos = divmod(k - 1, 4)
        return forms[_h(self.base, "form", b) % len(forms)][pos]

    def section_of(self, i: int) -> str:
        """The section bar ``i`` belongs to ("intro", "A", "B", "break", "drop", "solo", "outro"). ``[engine]``"""
        return self.section_kind(int(i) // SECTION_BARS)

    def section(self, k: int) -> _Section:
        sec = self._sections.get(k)
        if sec is None:
            if len(self._sections) > 32:
                self._sections.clear()
            sec = self._sections[k] = self._plan_section(k)
        return sec

    def _plan_section(self, k: int) -> _Section:
        kind = self.section_kind(k)
        fam = "B" if kind in ("B", "drop", "solo") else "A"
        hk = _h(self.base, "sec", k)
        r = random.Random(hk)
        var = hk % 3
        # progression: one per family for this seed, sometimes another on a repeat
        pi = _h(self.base, "prog", fam) % len(self.progs)
        if fam == "B" and len(self.progs) > 1:
            pa = _h(self.base, "prog", "A") % len(self.progs)
            if pi == pa:
                pi = (pi + 1 + _h(self.base, "progB") % (len(self.progs) - 1)) % len(self.progs)
        if r.random() < 0.25:
            pi = r.randrange(len(self.progs))
        prog = self.progs[pi]
        tokens = prog.split()
        tonic = [q for q, t in enumerate(tokens) if re.match(r"^(i|I)(?![iIvV])", t)]
        if tonic and tonic[0] and (kind != "break" or r.random() < 0.5):
            tokens = tokens[tonic[0]:] + tokens[:tonic[0]]           # phrases start at home
        minorish = self.family in ("minor", "dorian", "phrygian")
        if not tonic and kind != "break":
            # a progression that never touches the tonic ("ii7 iii7 IVmaj7 V7") leaves the key to
            # guesswork: outside a break its first chord becomes the tonic ("Imaj7 iii7 IVmaj7 V7")
            colour = self.g.name in ("jazz", "bossa nova", "soul") or "7" in tokens[0] or "9" in tokens[0]
            tokens = [("i7" if colour else "i") if minorish else ("Imaj7" if colour else "I")] + tokens[1:]
        bars_tokens = [tokens[b % len(tokens)] for b in range(SECTION_BARS)]
        edm = self.g.form == "edm"

        def to_v(b):
            last = bars_tokens[b].split("-")
            if not re.match(r"^V(7|9)?$", last[-1]):
                last[-1] = "V7" if (r.random() < 0.5 or self.g.name in ("jazz", "bossa nova", "soul")) else "V"
                bars_tokens[b] = "-".join(last)

        is_v = [bool(re.match(r"^V(7|9)?$", t.split("-")[-1])) for t in bars_tokens]
        if self.family == "minor" and self.g.cadence_v and kind != "break":
            if not any(is_v[4:7]):
                to_v(7)                                           # harmonic minor's V at the cadence
            if r.random() < 0.3 and not any(re.match(r"^V(7|9)?$", t) for t in bars_tokens[:7]):
                to_v(3)                                           # and a half cadence
        elif not minorish:
            if kind in ("B", "drop") and r.random() < 0.5:
                bars_tokens = [t.replace("IV", "iv") if b == 6 and t.startswith("IV") and "maj" not in t else t
                               for b, t in enumerate(bars_tokens)]     # borrowed iv (minor plagal)
            if not edm and r.random() < 0.5 and self.family == "major":
                bars_tokens[6], bars_tokens[7] = "V7" if self.g.name in ("jazz", "soul", "bossa nova") else "V", \
                    bars_tokens[0]                                 # an authentic cadence home
        chords = []
        for tok in bars_tokens:
            syms = tok.split("-")
            span = self.bpb / len(syms)
            ev = []
            for j, sym in enumerate(syms):
                c = parse_chord(sym, self.key_root, self.prog_scale)
                if self.g.name in ("jazz", "bossa nova", "soul") and len(c.intervals) == 3 and r.random() < 0.7:
                    c = Chord(c.root, c.intervals + ((11,) if c.intervals[1] == 4 and sym[0] in "Ib" else (10,)),
                              c.symbol + "7")
                ev.append((j * span, (j + 1) * span, c))
            chords.append(ev)
        # voicings per harmonic part, voice-led through the section
        voicings = {}
        inner = 0                                 # the quartet's inner voices so far
        for pi_, pl in enumerate(self.plans):
            if pl.role not in ("chords", "pad", "arp"):
                continue
            n = 1 if pl.style == "quartet" else (3 if pl.style in ("power", "chug", "skank", "funk16") else 4)
            # a quartet's inner voices share the chord out: the first holds its third (and
            # seventh), the second its root, any other the fifth — each voice-led alone, both
            # settled on the common tones, left the third out and sat on the dominant's root
            # (a G major quartet heard in D major, D minor in A minor); classical voicing drops
            # the fifth first, never the third
            keep = None                           # which chord tones (by index) this voice may take
            if pl.style == "quartet":
                keep = ((1, 3, 4, 5), (0,), (2,))[min(inner, 2)]
                inner += 1
            rootless = pl.style in ("comp", "soul", "lofi", "bossa")
            prev = None
            per_bar = []
            for ev in chords:
                row = []
                for _, _, c in ev:
                    if pl.style in ("power", "chug"):
                        root = _near(c.root, pl.centre - 6)
                        while root < pl.lo:
                            root += 12
                        v = (root, root + 7, root + 12)
                    else:
                        cv = c
                        if keep is not None and len(c.intervals) >= 3:
                            ivs = tuple(i for k, i in enumerate(c.intervals) if k in keep)
                            cv = Chord(c.root, ivs or c.intervals, c.symbol)
                        v = voice(cv, pl.lo, pl.hi, n, prev, pl.centre, rootless)
                    row.append(v)
                    prev = v
                per_bar.append(row)
            voicings[pi_] = per_bar
        motif = self._motif(fam, _h(self.base, "motif", fam, var if kind != "solo" else k))
        # which parts rest: one optional part now and then, never the only harmony
        drop = set()
        optional = [j for j, pl in enumerate(self.plans) if pl.role in ("arp", "pad", "perc")
                    or (pl.role == "chords" and sum(p.role == "chords" for p in self.plans) > 1)]
        harmonic = [j for j, pl in enumerate(self.plans) if pl.role in ("chords", "pad", "arp")]
        if optional and kind in ("A", "B") and r.random() < 0.35:
            x = optional[r.randrange(len(optional))]
            if x not in harmonic or len(harmonic) > 2:
                drop.add(x)
        if kind == "A" and self.g.name not in ("jazz", "classical", "waltz", "bossa nova") and r.random() < 0.4:
            drop |= {j for j, pl in enumerate(self.plans) if pl.role == "lead"}
        return _Section(k, kind, var, chords, prog, voicings, motif, frozenset(drop),
                        fill_bar3=r.random() < 0.35, bass_var=r.randrange(4), comp_var=r.randrange(4))

    def _motif(self, fam: str, h: int) -> list:
        """Two bars of melody: (position, duration, scale step from the bar's anchor)."""
        r = random.Random(h)
        dens = min(0.95, max(0.12, self.g.lead_density + 0.1 * self.intensity + (0.12 if fam == "B" else 0)))
        slots = int(self.bpb * 2)
        bars = []
        shape = r.choice(("arch", "down", "up", "wave"))
        step = {"arch": r.choice((0, 1, 2)), "down": r.choice((3, 4)), "up": r.choice((-3, -2)),
                "wave": r.choice((0, 2))}[shape]
        last_move = 0
        rhythm = []
        for _ in range(2):
            onsets = []
            three = self.meter == (3, 4)
            for s in range(slots):
                p = dens * (1.4 if s % 2 == 0 else 0.8)
                if three:
                    p = dens * (0.8 if s % 2 == 0 else 0.3)        # in three the melody breathes after one
                if s == 0:
                    p = max(p, 0.75 if not three else 1.0)
                if r.random() < p:
                    onsets.append(s * 0.5)
                    if dens > 0.5 and r.random() < 0.2 and s < slots - 1:
                        onsets.append(s * 0.5 + 0.25)
            if not onsets:
                onsets = [0.0]
            rhythm.append(onsets)
        total = sum(len(o) for o in rhythm)
        idx = 0
        for onsets in rhythm:
            cells = []
            for j, t in enumerate(onsets):
                nxt = onsets[j + 1] if j + 1 < len(onsets) else self.bpb
                dur = min(nxt - t, 1.5)
                if r.random() < 0.2 and dur > 0.5:
                    dur *= 0.5                               # a breath
                if idx:
                    frac = idx / max(1, total - 1)
                    if shape == "arch":
                        d = 1 if frac < 0.5 else -1
                    elif shape == "wave":
                        d = 1 if (idx // 2) % 2 == 0 else -1
                    else:
                        d = (1 if shape == "up" else -1) * (1 if r.random() < 0.7 else -1)
                    move = d * r.choice((1, 1, 1, 1, 2, 2, 3))
                    if abs(last_move) >= 3:
                        move = -1 if last_move > 0 else 1    # a leap is answered by a step back
                    elif r.random() < 0.1:
                        move = 0
                    if not -4 <= step + move <= 5:
                        move = -move                         # turn at the edges of the range
                    step += move
                    last_move = move
                cells.append((t, dur, step))
                idx += 1
            bars.append(cells)
        return bars

    # --- bars ------------------------------------------------------------------------------------
    def chords_of_bar(self, i: int) -> list:
        """``[(t0, t1, Chord), …]`` for bar ``i`` (beats within the bar). ``[engine]``"""
        return self.section(int(i) // SECTION_BARS).chords[int(i) % SECTION_BARS]

    def chord_of(self, i: int) -> tuple[int, ...]:
        """The chord at the start of bar ``i`` as MIDI pitches, root first. ``[engine]``"""
        return self.chords_of_bar(i)[0][2].pitches(48)

    def make_bar(self, i: int) -> tuple[list[Note], list[Control]]:
        """Notes and controls that start in bar ``i``. Pure in ``i``, O(1). ``[engine]``"""
        i = int(i)
        if i < 0:
            raise ValueError("bar index must be ≥ 0")
        k, s = divmod(i, SECTION_BARS)
        sec = self.section(k)
        rng = random.Random(_h(self.base, "bar", i))
        ev: list = []      # (part, t0, t1, pitch, vel, glide)
        ctl: list = []     # (part, beat, kind, value, number)
        for j, pl in enumerate(self.plans):
            if j in sec.drop or not self._plays(pl, sec, s):
                continue
            fn = getattr(self, "_" + pl.role)
            fn(j, pl, sec, s, i, rng, ev, ctl)
        return self._finish(i, ev, ctl, rng)

    def _plays(self, pl: _PartPlan, sec: _Section, s: int) -> bool:
        kind, role = sec.kind, pl.role
        if role == "lead" and all(q.role == "lead" for q in self.plans):
            return True                # a solo melody instrument carries every section (no silent intro)
        edm = self.g.form == "edm"
        if kind == "intro":
            if role == "lead":
                return False
            if role == "bass":
                return s >= 4 or pl.style in ("drone", "long", "cello", "waltz")   # held basses carry an intro
            if role == "arp":
                return s >= 2 or not edm
            if role == "perc":
                return s >= 4
            return True
        if kind == "break":
            if role == "drums":
                return True            # the drum generator thins it
            if role in ("bass", "perc"):
                return s >= 6 and not edm
            if role == "chords":
                return not edm or s % 2 == 0 or pl.style == "pad"
            return True
        if kind == "outro":
            if role == "lead":
                return s < 4 and sec.var == 0
            if role in ("arp", "perc"):
                return s < 6
            return True
        return True

    # --- drums -----------------------------------------------------------------------------------
    def _drums(self, j, pl, sec, s, i, rng, ev, ctl):
        kind = sec.kind
        steps = self.steps
        sl = 0.25
        groove = self.groove
        last = s == SECTION_BARS - 1
        level = {"intro": 0.82, "A": 0.92, "B": 1.0, "drop": 1.05, "solo": 0.95, "break": 0.8, "outro": 0.88}[kind]
        full = kind in ("B", "drop")
        hats_only = False
        if kind == "intro":
            mode = self.g.intro_drums
            if mode == "none":
                if s < 4:
                    return
                hats_only = True
            elif mode == "hats":
                hats_only = s < 6
            elif mode == "kick" and s < 4:
                groove = {ln: p for ln, p in groove.items() if ln.startswith("kick")}
        if kind == "break":
            edm = self.g.form == "edm"
            if s < 6 or not edm:
                hats_only = True
                if s < 2 and not edm:
                    return
            if edm and s >= 6:
                self._build(j, s, ev)
                return
        if kind == "outro" and s >= 4:
            hats_only = True
        fill_from = None
        if last and (kind != "break" or self.g.form != "edm") and self.g.fill != "none":
            fill_from = self.bpb - (2.0 if sec.var == 2 or self.section_kind(sec.k + 1) in ("B", "drop") else 1.0)
        elif s == 3 and sec.fill_bar3 and self.g.fill != "none" and kind in ("A", "B", "drop", "solo"):
            fill_from = self.bpb - 0.5 * (1 + (sec.var % 2))
        for lane, pat in groove.items():
            extra = lane.endswith("+")
            name = lane[:-1] if extra else lane
            if extra and not full:
                continue
            pitch = G.LANES[name]
            if hats_only and name in ("kick", "kick2", "snare", "clap", "rim", "esnare", "floor", "tom_lo", "tom_mid"):
                continue
            seg = (s % (len(pat) // steps)) * steps if len(pat) > steps else 0
            for st in range(steps):
                ch = pat[seg + st]
                if ch == ".":
                    continue
                t = st * sl
                if fill_from is not None and t >= max(0.0, fill_from) and name not in ("ride", "phat", "shaker"):
                    continue
                if ch == "?":
                    if rng.random() > 0.3:
                        continue
                    ch = "o"
                vel = {"X": 112, "x": 92, "o": 52, "r": 84, "t": 80}[ch]
                if name in ("chat", "shaker", "ride") and ch not in "Xo":
                    vel -= 12 if st % 4 else 0
                vel = vel * level
                if ch == "r":
                    ev.append((j, t, t + sl / 2, pitch, vel * 0.9, 0))
                    ev.append((j, t + sl / 2, t + sl, pitch, vel, 0))
                elif ch == "t":
                    for q in range(3):
                        ev.append((j, t + q * sl / 3, t + (q + 1) * sl / 3, pitch, vel * (0.8 + 0.1 * q), 0))
                else:
                    ring = 4 * sl if pitch in _RINGING else 2 * sl    # cymbals ring; the rest is one-shot
                    ev.append((j, t, min(t + ring, self.bpb), pitch, vel, 0))
        # groove details per bar: an extra ghost or a dropped hat, from the bar hash
        if not hats_only and self.g.humanize_ms >= 5 and rng.random() < 0.5:
            st = rng.randrange(steps)
            if st % 4:
                ev.append((j, st * sl, st * sl + sl, G.SNARE, 40 + rng.randrange(16), 0))
        if s == 0 and kind in ("B", "drop", "A", "solo") and sec.k > 0 and self.g.name not in ("ambient",):
            ev.append((j, 0.0, 1.0, G.CRASH, 100 * level, 0))
        if fill_from is not None:
            self._fill(j, max(0.0, fill_from), rng, ev, level)

    def _build(self, j, s, ev):
        """The last two bars of an EDM breakdown: a snare roll that doubles and grows."""
        sub = 0.5 if s == 6 else 0.25
        n = int(self.bpb / sub)
        for q in range(n):
            t = q * sub
            ev.append((j, t, t + sub, G.SNARE, 50 + 60 * ((s - 6) * n + q) / (2 * n), 0))
        if s == 7:
            ev.append((j, self.bpb - 0.5, self.bpb - 0.25, G.KICK, 100, 0))

    def _fill(self, j, t0, rng, ev, level):
        style = self.g.fill
        bpb = self.bpb
        if style == "jazz":
            t = t0
            while t < bpb - 1e-9:
                p = rng.choice((G.SNARE, G.SNARE, 47, 45, 43))
                ev.append((j, t, t + 0.5, p, (60 + rng.randrange(40)) * level, 0))
                t += 0.5
            ev.append((j, bpb - 0.5, bpb, G.KICK, 90 * level, 0))
            return
        if style == "roll":
            t = t0
            while t < bpb - 1e-9:
                sub = 1 / 6 if rng.random() < 0.5 else 0.125
                for q in range(int(round(0.5 / sub))):
                    ev.append((j, t + q * sub, t + (q + 1) * sub, G.CHAT, 70 + 6 * q, 0))
                t += 0.5
            ev.append((j, t0, t0 + 0.25, G.LANES["clap"], 100 * level, 0))
            return
        sub = 0.25
        n = int(round((bpb - t0) / sub))
        toms = list(G.TOMS)
        shape = rng.randrange(3)                   # the same kind of fill, never quite the same one
        for q in range(n):
            t = t0 + q * sub
            if style == "toms":
                if shape == 0:                     # snare, then down the toms
                    p = G.SNARE if q < n // 3 else toms[min(len(toms) - 1, (q - n // 3) * len(toms) // max(1, n - n // 3))]
                elif shape == 1:                   # snare and toms in turn
                    p = G.SNARE if q % 2 == 0 else toms[min(len(toms) - 1, q * len(toms) // max(1, n))]
                else:                              # 8ths on the toms, a 16th pickup on the snare
                    if q % 2 and q != n - 1:
                        continue
                    p = toms[min(len(toms) - 1, q * len(toms) // max(1, n))] if q != n - 1 else G.SNARE
            elif style == "break":
                p = (G.SNARE if q % 3 != 1 else G.KICK) if shape != 1 else (G.SNARE if q % 4 in (0, 3) else G.KICK)
            else:
                if shape == 2 and q % 2 and q < n // 2:
                    continue                       # 8ths growing into 16ths
                p = G.SNARE
            ev.append((j, t, t + sub, p, (70 + 40 * q / max(1, n - 1)) * level, 0))
        ev.append((j, t0, t0 + sub, G.KICK, 100 * level, 0))

    # --- bass -------------------------------------------------------------------------------------
    def _bass(self, j, pl, sec, s, i, rng, ev, ctl):
        chords = sec.chords[s]
        nxt = sec.chords[s + 1][0][2] if s + 1 < SECTION_BARS else self.section(sec.k + 1).chords[0][0][2]
        style = pl.style
        bpb = self.bpb
        vel0 = 96 if sec.kind in ("B", "drop") else 88
        c0 = pl.centre

        def root_of(c):
            n = _near(c.root, c0)
            while n < pl.lo:
                n += 12
            while n > pl.hi:
                n -= 12
            return n

        def add(t0, t1, p, v, glide=0):
            if t1 - t0 > 0.02 and t0 < bpb:
                ev.append((j, t0, min(t1, bpb), p, v, glide))

        bv = sec.bass_var
        if style in ("walking",):
            beats = int(bpb)
            for ci, (a, b, c) in enumerate(chords):
                r = root_of(c)
                n_next = chords[ci + 1][2] if ci + 1 < len(chords) else nxt
                target = root_of(n_next)
                qn = max(1, int(round(b - a)))
                tones = sorted({r + iv - (12 if r + iv > pl.hi else 0) for iv in c.intervals[:4]})
                cur = r
                for q in range(qn):
                    t = a + q
                    if t >= beats:
                        break
                    if q == 0:
                        p = r
                    elif q == qn - 1:
                        p = target + rng.choice((-1, 1, -1, 7 - 12 if target - 5 >= pl.lo else 1))
                    else:
                        up = target > cur
                        cands = [x for x in tones + [cur + (2 if up else -2)] if x != cur and pl.lo <= x <= pl.hi]
                        p = min(cands, key=lambda x: abs(x - (cur + (target - cur) / (qn - q)))) if cands else cur
                    p = max(pl.lo, min(pl.hi, p))
                    add(t, t + 0.95, p, vel0 - 6 + rng.randrange(12) + (10 if t == 0 and self.bpb == 3 else 0))
                    cur = p
            return
        if style == "808":
            kick = self.kick_steps
            on = sorted(set(kick + ([int(bpb * 4) - 2] if rng.random() < 0.4 else [])))
            times = [st * 0.25 for st in on if st * 0.25 < bpb]
            prev = None
            for q, t in enumerate(times):
                c = next(cc for a, b, cc in chords if a <= t < b) if any(a <= t < b for a, b, _ in chords) else chords[-1][2]
                p = root_of(c)
                if q and rng.random() < 0.25:
                    p += rng.choice((12, 7, -5 if p - 5 >= pl.lo else 7))
                t1 = times[q + 1] if q + 1 < len(times) else bpb
                glide = 0
                if prev is not None and p != prev and rng.random() < 0.5:
                    glide = 2 if p < prev else -2
                elif q and rng.random() < 0.2:
                    glide = -2
                add(t, t1, p, 110, glide)
                prev = p
            return
        if style == "wobble":
            for a, b, c in chords:
                r = root_of(c)
                add(a, b, r, 112)
            rate = (0.5, 1 / 3, 0.25, 0.75)[bv] if sec.kind in ("B", "drop") else 1.0
            t = 0.0
            while t < bpb - 1e-9:
                ph = (t % rate) / rate
                ctl.append((j, t, "cc", int(64 + 60 * math.cos(2 * math.pi * ph)), 11))
                t += 0.125
            ctl.append((j, bpb - 0.01, "cc", 127, 11))
            return
        if style in ("drone", "long", "reese"):
            if style == "reese" and sec.kind not in ("intro",):
                for a, b, c in chords:
                    r = root_of(c)
                    split = a + (b - a) * (0.625 if bv % 2 else 0.75)
                    add(a, split, r, 104)
                    add(split, b, r + (12 if bv < 2 else 7), 92)
                return
            if s % 2 and len(chords) == 1 and len(sec.chords[s - 1]) == 1 and chords[0][2] == sec.chords[s - 1][0][2]:
                return                                  # tied from the bar before
            for ci, (a, b, c) in enumerate(chords):
                r = root_of(c)
                end = b
                if len(chords) == 1 and s % 2 == 0 and s + 1 < SECTION_BARS and \
                        len(sec.chords[s + 1]) == 1 and sec.chords[s + 1][0][2] == c:
                    end = b + bpb                       # a tie over the next bar
                ev.append((j, a, end, r, 80, 0))
                if style == "long":
                    ev.append((j, a, end, r + 12, 66, 0))
            return
        # rhythmic styles: (beat, length, tone) with tone ∈ R root, 5 fifth, 8 octave, 3 third, b7, A approach
        figs = {
            "root8": [[(t * 0.5, 0.45, "R") for t in range(int(bpb * 2))],
                      [(0, 0.9, "R"), (1, 0.45, "R"), (1.5, 0.45, "8"), (2, 0.9, "R"), (3, 0.45, "5"), (3.5, 0.45, "A")]],
            "offbeat": [[(t + 0.5, 0.4, "R") for t in range(int(bpb))],
                        [(t + 0.5, 0.4, "8" if t % 2 else "R") for t in range(int(bpb))] + [(bpb - 0.25, 0.2, "R")]],
            "rolling": [[(t + f, 0.2, "R" if f != 0.5 else "8") for t in range(int(bpb)) for f in (0.25, 0.5, 0.75)],
                        [(t + f, 0.22, tone) for t in range(int(bpb)) for f, tone in ((0.25, "R"), (0.5, "R"), (0.75, "b7"))]],
            "gallop": [[(t + f, 0.22, "R") for t in range(int(bpb)) for f in (0.5, 0.75)],
                       [(t + f, 0.22, "8" if f == 0.75 else "R") for t in range(int(bpb)) for f in (0.25, 0.5, 0.75)]],
            "octave": [[(t * 0.5, 0.4, "R" if t % 2 == 0 else "8") for t in range(int(bpb * 2))],
                       [(t * 0.5, 0.4, ("R", "8", "R", "8", "5", "8", "R", "A")[t % 8]) for t in range(int(bpb * 2))]],
            "pop8": [[(t * 0.5, 0.45, "R") for t in range(int(bpb * 2))],
                     [(0, 1.4, "R"), (1.5, 0.45, "R"), (2, 0.9, "5"), (3, 0.45, "R"), (3.5, 0.45, "A")]],
            "drive8": [[(t * 0.5, 0.35, "R") for t in range(int(bpb * 2))],
                       [(t * 0.5, 0.35, "8" if t == 7 else "R") for t in range(int(bpb * 2))]],
            "lofi": [[(0, 1.4, "R"), (1.75, 0.7, "5"), (2.5, 0.9, "R"), (3.5, 0.45, "A")],
                     [(0, 0.9, "R"), (1.5, 0.5, "8"), (2.25, 1.0, "5"), (3.5, 0.4, "A")]],
            "dub": [[(0, 1.25, "R"), (1.5, 0.45, "5"), (2.0, 0.7, "R"), (3.0, 0.45, "3"), (3.5, 0.45, "5")],
                    [(0.5, 0.9, "R"), (2.0, 0.45, "8"), (2.5, 0.9, "5"), (3.5, 0.45, "R")],
                    [(0, 0.7, "R"), (0.75, 0.7, "R"), (2.0, 0.45, "3"), (2.5, 0.45, "5"), (3.0, 0.9, "8")]],
            "funk": [[(0, 0.2, "R"), (0.75, 0.2, "8"), (1.5, 0.2, "R"), (1.75, 0.1, "g"), (2.5, 0.2, "b7"),
                      (2.75, 0.2, "8"), (3.25, 0.2, "5"), (3.75, 0.2, "A")],
                     [(0, 0.4, "R"), (0.5, 0.1, "g"), (0.75, 0.2, "R"), (1.5, 0.2, "8"), (2.25, 0.2, "5"),
                      (2.5, 0.2, "b7"), (3, 0.2, "R"), (3.5, 0.2, "8")]],
            "soul": [[(0, 1.4, "R"), (1.5, 0.45, "5"), (2, 1.0, "R"), (3, 0.45, "3"), (3.5, 0.45, "A")],
                     [(0, 0.9, "R"), (1, 0.45, "8"), (1.75, 0.7, "5"), (2.5, 1.0, "R"), (3.5, 0.45, "A")]],
            "bossa": [[(0, 1.4, "R"), (1.5, 0.45, "5"), (2, 1.4, "5l"), (3.5, 0.45, "R")]],
            "rock8": [[(t * 0.5, 0.45, "R") for t in range(int(bpb * 2))],
                      [(t * 0.5, 0.45, "5" if t == 5 else "R") for t in range(int(bpb * 2))]],
            "metal": [[(st * 0.25, 0.2, "R") for st in range(int(bpb * 4)) if st % 4 != 3],
                      [(st * 0.25, 0.2, "R" if st % 8 else "8") for st in range(int(bpb * 4))]],
            "cello": [[(0, 2.9, "R"), (3, 0.95, "5")], [(0, 0.95, "R"), (1, 0.95, "3"), (2, 0.95, "5"), (3, 0.95, "A")],
                      [(0, 3.9, "R")]],
            "waltz": [[(0, 0.95, "R")], [(0, 0.95, "5l")]],
        }
        options = figs.get(style) or figs["root8"]
        if self.meter == (3, 4) and style not in ("waltz", "cello", "metal"):
            options = [[(0, 1.4, "R"), (1.5, 0.45, "5"), (2, 0.9, "R")], [(0, 1.9, "R"), (2, 0.9, "5")],
                       [(0, 0.9, "R"), (1, 0.45, "8"), (2, 0.9, "5")]]
        elif self.meter == (6, 8) and style not in ("metal",):
            options = [[(0, 1.4, "R"), (1.5, 1.4, "5")], [(0, 0.9, "R"), (1, 0.45, "5"), (1.5, 1.4, "R")]]
        if style == "waltz":
            fig = options[s % 2]
        elif style in ("cello",):
            fig = options[(bv + (s // 2)) % len(options)]
        else:
            fig = options[bv % len(options)] if not (sec.kind == "intro" and style not in ("funk",)) else options[0]
        fig = [(t, min(d, bpb - t), x) for t, d, x in fig if t < bpb]
        last_p = None
        for t, d, tone in fig:
            c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
            r = root_of(c)
            fifth = next((x for x in c.intervals if x in (7, 6, 8)), 7)
            iv = {"R": 0, "5": fifth, "8": 12, "3": c.intervals[1], "b7": 10, "5l": fifth - 12, "g": 0}.get(tone)
            if tone == "A":
                target_c = next((cc for a, b, cc in chords if a > t), nxt)
                tgt = root_of(target_c)
                p = tgt + (1 if rng.random() < 0.5 else -1) if tgt != r else r + 7
            else:
                p = r + iv
            while p > pl.hi:
                p -= 12
            while p < pl.lo:
                p += 12
            v = 48 if tone == "g" else vel0 + (8 if t == 0 else 0) - (6 if t % 1 else 0)
            if last_p == p and d > 0.3:
                d = min(d, 0.9)
            add(t, t + d, p, v)
            last_p = p

    # --- chords and pads ----------------------------------------------------------------------------
    def _chords(self, j, pl, sec, s, i, rng, ev, ctl):
        vs = sec.voicings[j][s]
        chords = sec.chords[s]
        style = pl.style
        bpb = self.bpb
        vel = 74 if sec.kind in ("B", "drop") else 66
        cv = (sec.comp_var + pl.nth) % 4

        def hit(t, d, vel_=vel, spread=0.0, top=None):
            for a, b, c in chords:
                if a <= t < b:
                    voicing = vs[chords.index((a, b, c))]
                    break
            else:
                voicing = vs[-1]
            if top:
                voicing = voicing[-top:]
            end = min(t + d, bpb)
            for q, p in enumerate(voicing):
                ev.append((j, t + q * spread, end, p, vel_ - 4 * q % 9, 0))

        if style in ("pad", "swell"):
            return self._sustain(j, pl, sec, s, vs, chords, ev, ctl, swell=style == "swell")
        if style == "stab":
            rh = ((0.5, 1.5, 2.5, 3.5), (0, 0.75, 1.5, 2.5, 3.25), (0.5, 1.75, 2.5, 3.75), (0, 1.5, 3))[cv]
            for t in rh:
                if t < bpb:
                    hit(t, 0.3, vel_=vel + 6)
            return
        if style in ("piano8", "lofi", "soul", "block", "power") and self.meter == (3, 4):
            rh = ((0, 1, 2), (0, 2), (0, 1.5, 2), (0,))[cv]       # three: the first beat carries the bar
            for q, t in enumerate(rh):
                nxt = rh[q + 1] if q + 1 < len(rh) else bpb
                hit(t, nxt - t - 0.05, vel_=vel + (10 if t == 0 else -8))
            return
        if style == "piano8":
            rh = ((0, 1, 2, 3), (0, 1.5, 2, 3, 3.5), (0, 0.5, 1.5, 2.5, 3), (0, 2))[cv]
            for q, t in enumerate(rh):
                if t < bpb:
                    nxt = rh[q + 1] if q + 1 < len(rh) else bpb
                    hit(t, nxt - t, vel_=vel + (6 if t % 1 == 0 else -4))
            return
        if style == "chop8":
            for st in range(int(bpb * 4)):
                if st % 4 == 2 or (st % 4 == 3 and rng.random() < 0.35):
                    hit(st * 0.25, 0.14, vel_=vel + (4 if st % 4 == 2 else -16), top=3)
            return
        if style == "funk16":
            pats = ("..x..x.x..x..x.x", ".xx.x.xx.x.xx.x.", "x..x..x.x..x..x.", "..xo..xo..xo..xo")
            pat = pats[cv]
            for st, ch in enumerate(pat[:int(bpb * 4)]):
                if ch != ".":
                    hit(st * 0.25, 0.12, vel_=vel - (22 if ch == "o" else 0), top=3)
            return
        if style == "lofi":
            rh = ((0, 1.75), (0, 2.5), (0.5, 2.75), (0, 1.5))[cv]
            for q, t in enumerate(rh):
                nxt = rh[q + 1] if q + 1 < len(rh) else bpb
                hit(t, nxt - t - 0.05, vel_=vel - 4, spread=0.03)
            return
        if style == "soul":
            rh = ((0, 1.5, 2.5), (0, 2), (0, 0.75, 2, 2.75), (0, 1, 2.5))[cv]
            for q, t in enumerate(rh):
                nxt = rh[q + 1] if q + 1 < len(rh) else bpb
                hit(t, nxt - t - 0.05, vel_=vel - 2, spread=0.02)
            return
        if style == "skank":
            for t in (1.0, 3.0) if bpb >= 4 else (1.0, 2.0):
                hit(t, 0.22, vel_=vel + 6, top=3)
            return
        if style == "bubble":
            for t in range(int(bpb)):
                hit(t + 0.5, 0.22, vel_=vel - 6)
                if rng.random() < 0.5:
                    hit(t + 0.25, 0.15, vel_=vel - 24, top=2)
            return
        if style == "comp":
            rh = ((0, 1.5), (0.5, 2.5), (1.5, 3.5), (0, 2.5), (1, 2.5, 3.5), (0.5, 2))[rng.randrange(6)]
            for t in rh:
                if t < bpb:
                    hit(t, 0.45 + 0.5 * rng.random(), vel_=vel - 6 + rng.randrange(12))
            return
        if style == "bossa":
            rh = ((0, 1.5, 2.5), (0.5, 1.5, 3))[s % 2]
            for t in rh:
                hit(t, 0.45, vel_=vel - 4)
            return
        if style == "power":
            if sec.kind in ("B", "drop", "solo"):
                for a, b, c in chords:
                    hit(a, min(b - a, 2.0) - 0.05, vel_=vel + 14)
                    if b - a > 2:
                        hit(a + 2, b - a - 2 - 0.05, vel_=vel + 8)
            else:
                for q in range(int(bpb * 2)):
                    hit(q * 0.5, 0.3, vel_=vel + (10 if q % 2 == 0 else 0))
            return
        if style == "chug":
            for st in range(int(bpb * 4)):
                if st in self.kick_steps or st % 4 == 0:
                    hit(st * 0.25, 0.2, vel_=vel + 16 if st % 4 == 0 else vel + 4)
            return
        if style == "quartet":
            rh = ((0, 2), (0, 1, 2, 3), (0, 1.5, 2, 3), (0, 3))[cv] if bpb >= 4 else ((0,), (0, 1, 2), (0, 2))[cv % 3]
            for q, t in enumerate(rh):
                if t < bpb:
                    nxt = rh[q + 1] if q + 1 < len(rh) else bpb
                    hit(t, nxt - t - 0.04, vel_=vel - 6)
            return
        if style == "waltz":                       # oom (a low root, loud) – pah – pah (soft, short)
            low = _near(chords[0][2].root, pl.lo - 2)
            while low < 28:
                low += 12
            ev.append((j, 0.0, 0.9, low, vel + 24, 0))
            hit(0.0, 0.9, vel_=vel + 6)
            for t in [float(b) for b in range(1, max(2, int(bpb)))]:
                hit(t, 0.45, vel_=vel - 26, top=3)
            return
        if style == "ostinato":
            if sec.kind in ("intro", "break"):
                return self._sustain(j, pl, sec, s, vs, chords, ev, ctl, swell=True)
            sub = 0.25 if sec.kind in ("B", "drop") else 0.5
            for q in range(int(bpb / sub)):
                t = q * sub
                voicing = next((vs[x] for x, (a, b, _) in enumerate(chords) if a <= t < b), vs[-1])
                p = voicing[(0, 2, 1, 2)[q % 4] % len(voicing)]
                ev.append((j, t, t + sub * 0.8, p, vel - (0 if q % 2 == 0 else 10), 0))
            return
        # block
        for x, (a, b, c) in enumerate(chords):
            hit(a, b - a - 0.05)

    def _sustain(self, j, pl, sec, s, vs, chords, ev, ctl, swell=False):
        """Held chords, tied over a repeated chord (no retrigger at the bar line) — except in 3/4,
        where every bar's downbeat is played again to keep the bar's shape."""
        tie = self.meter != (3, 4)
        if tie and s % 2 and len(chords) == 1 and len(sec.chords[s - 1]) == 1 and sec.chords[s - 1][0][2] == chords[0][2]:
            return
        vel = 64 if sec.kind in ("B", "drop") else 56
        for x, (a, b, c) in enumerate(chords):
            end = b
            if tie and len(chords) == 1 and s % 2 == 0 and s + 1 < SECTION_BARS and len(sec.chords[s + 1]) == 1 \
                    and sec.chords[s + 1][0][2] == c:
                end = b + self.bpb
            for p in vs[x]:
                ev.append((j, a, end, p, vel, 0))
            if swell:
                n = 6
                for q in range(n + 1):
                    ctl.append((j, a + (end - a) * 0.5 * q / n, "cc", int(86 + 34 * q / n), 11))   # a gentle swell

    _pad = _chords

    # --- arpeggios --------------------------------------------------------------------------------
    def _arp(self, j, pl, sec, s, i, rng, ev, ctl):
        vs = sec.voicings[j][s]
        chords = sec.chords[s]
        style = pl.style
        sub = 0.5 if style in ("arp8", "harp") else 0.25
        bpb = self.bpb
        order_kind = (sec.comp_var + pl.nth) % 3
        vel = 70 if sec.kind in ("B", "drop") else 62
        acid_pat = ("x.xxx.x.xx.xx.x.", "xxx.x.xxx.x.xx.x", "x.x.xxx.x.xxx.xx", "xx.xx.x.xx.xx.x.")[sec.comp_var]
        for q in range(int(round(bpb / sub))):
            t = q * sub
            x = next((n for n, (a, b, _) in enumerate(chords) if a <= t < b), len(chords) - 1)
            v = vs[x]
            tones = list(v) + [v[0] + 12]
            if style == "acid16":
                if acid_pat[q % 16] == ".":
                    continue
                r = v[0] - 12 if v[0] - 12 >= pl.lo else v[0]
                p = r + (0, 12, 0, 10, 0, 7, 12, 0)[(q * 3 + sec.var) % 8]
            elif style == "trance16":
                p = (tones[0], tones[-1], tones[2 % len(tones)], tones[-1])[q % 4]
            elif style == "harp":
                p = (tones + [t_ + 12 for t_ in tones[1:]])[q % (2 * len(tones) - 1)]
            else:
                seq = tones if order_kind == 0 else (tones + tones[-2:0:-1]) if order_kind == 1 else \
                    [tones[k_] for k_ in (0, 2, 1, 3, 2, 4) if k_ < len(tones)]
                p = seq[q % len(seq)]
            while p > pl.hi:
                p -= 12
            ev.append((j, t, t + sub * (0.55 if style != "harp" else 0.95), p,
                       vel + (10 if q % 4 == 0 else 0) - (0 if style != "acid16" else rng.randrange(12)), 0))

    # --- melody -----------------------------------------------------------------------------------
    def _lead(self, j, pl, sec, s, i, rng, ev, ctl):
        style = pl.style
        chords = sec.chords[s]
        bpb = self.bpb
        kind = sec.kind
        if style == "sparse":
            if s % 2 and rng.random() < 0.5:
                return
            n = 1 + (s + sec.var) % 3
            times = sorted({0.0, *(round(rng.randrange(max(1, int(bpb * 2))) * 0.5, 2) for _ in range(n - 1))})
            prev = pl.centre
            for q, t in enumerate(times):
                c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
                cands = [p for p in range(pl.lo, pl.hi + 1) if p % 12 in c.pcs]
                p = min(cands, key=lambda x: abs(x - prev) + rng.random() * 4) if cands else prev
                t1 = times[q + 1] if q + 1 < len(times) else bpb
                ev.append((j, t, t1, p, 70, 0))
                prev = p
            return
        if style == "riff":
            if s % 2 == 0:
                return
            c = chords[0][2]
            top = [p for p in range(pl.centre - 6, pl.centre + 7) if p % 12 in c.pcs][-3:]
            for t in ((0.5, 1.0, 2.75, 3.0), (0.0, 0.75, 1.5), (1.5, 1.75, 3.5))[sec.comp_var % 3]:
                if t < bpb:
                    for p in top[-2:]:
                        ev.append((j, t, t + 0.2, p, 96, 0))
            return
        ph = s % 8
        motif = sec.motif
        if ph in (0, 1, 4, 5):
            cells = motif[ph % 2]
            shift = 0 if ph < 4 else (sec.var - 1)
        elif ph in (2, 3):
            cells = motif[ph % 2]
            shift = 2 if ph == 2 else -1
            if ph == 3:
                cells = cells[:max(1, len(cells) - 2)] + [(cells[-1][0], bpb - cells[-1][0], 0)]
        elif ph == 6:
            cells, shift = motif[0], 1
        else:
            cells, shift = [(0.0, min(bpb, 2.5 if self.bpb >= 4 else bpb - 0.1), 0)], 0
        if style == "bebop" or kind == "solo":
            if ph != 7:
                cells = [(q * 0.5, 0.5, 0) for q in range(int(bpb * 2)) if rng.random() < 0.8 or q == 0]
                shift = None
        c0 = chords[0][2]
        home = self.key_root in c0.pcs and (ph in (0, 4, 7) or sec.var == 0)
        mid = pl.centre - 2
        if home:
            anchor = _near(self.key_root, mid)
        else:
            anchor = min((p for p in range(mid - 4, mid + 5) if p % 12 in c0.pcs), key=lambda p: abs(p - mid),
                         default=mid)
        prev = anchor
        for q, (t, d, step) in enumerate(cells):
            if t >= bpb:
                continue
            c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
            sc = chord_scale(self.scale, c)
            if shift is None:                                  # bebop line: walk the chord scale
                move = rng.choice((-2, -1, -1, 1, 1, 2, -3, 3))
                p = self._scale_step(prev, move, sc)
                if t % 1 == 0 and p % 12 not in c.pcs:
                    p = min((x for x in range(p - 2, p + 3) if x % 12 in c.pcs), key=lambda x: abs(x - p), default=p)
                if pl.centre - 10 > p or p > pl.centre + 10:
                    p = self._scale_step(p, -4 if p > pl.centre else 4, sc)
            else:
                p = self._scale_step(anchor, step + shift, sc)
                if ph == 7 and home:
                    p = anchor                                 # the phrase ends at home
                elif t % 1 == 0 or d >= 1.0 or ph == 7:       # strong notes on chord tones, keeping the motion
                    want = 0 if q == 0 else (step > cells[q - 1][2]) - (step < cells[q - 1][2])
                    cands = [x for x in range(p - 3, p + 4) if x % 12 in c.pcs]
                    if want and q:
                        moving = [x for x in cands if (x - prev) * want > 0]
                        cands = moving or cands
                    p = min(cands, key=lambda x: abs(x - p)) if cands else p
            while p > pl.hi:
                p -= 12
            while p < pl.lo:
                p += 12
            nt = cells[q + 1][0] if q + 1 < len(cells) else bpb
            d = min(d, nt - t, bpb - t)
            vel = (84 if t % 1 == 0 else 74) + (6 if kind in ("B", "drop") else 0) + \
                (10 if t == 0 and self.meter == (3, 4) else 0)
            ev.append((j, t, t + d, p, vel, 0))
            prev = p

    @staticmethod
    def _scale_step(p: int, n: int, sc: tuple[int, ...]) -> int:
        """``n`` steps of scale ``sc`` from pitch ``p`` (snapped into the scale first)."""
        while p % 12 not in sc:
            p -= 1
        idx = sc.index(p % 12)
        octave = p - p % 12
        idx += n
        octave += 12 * (idx // len(sc))
        return octave + sc[idx % len(sc)]

    # --- percussion instruments (taiko, timpani, woodblock …) --------------------------------------
    def _perc(self, j, pl, sec, s, i, rng, ev, ctl):
        c = sec.chords[s][0][2]
        low = _near(c.root, pl.centre)
        prog = pl.part.program
        if prog == 47:                                      # timpani: root and fifth, a roll at section end
            ev.append((j, 0.0, 1.0, low, 96, 0))
            fifth = next((x for x in c.intervals if x in (7, 6, 8)), 7)
            if self.bpb >= 4:
                ev.append((j, 2.0, 3.0, low + fifth if low + fifth <= pl.hi else low + fifth - 12, 84, 0))
            if s == SECTION_BARS - 1:
                for q in range(8):
                    ev.append((j, self.bpb - 1 + q / 8, self.bpb - 1 + (q + 1) / 8, low, 50 + 6 * q, 0))
            return
        pat = ("X.....x.X...x.x.", "X..x..x.X.......", "x.x.x.x.X..xX...")[sec.comp_var % 3]
        pat = self._fit(pat)
        for st, ch in enumerate(pat[:self.steps]):
            if ch != ".":
                fifth = next((x for x in c.intervals if x in (7, 6, 8)), 7)
                ev.append((j, st * 0.25, st * 0.25 + 0.25, low if ch == "X" else low + fifth, 110 if ch == "X" else 80, 0))

    # --- micro-timing, and the notes' final shape --------------------------------------------------
    def _warp(self, t: float) -> float:
        """Swing: within each pair of subdivisions the off-beat moves late by ``swing × unit``."""
        s = self.swing
        if not s:
            return t
        u2 = 2 * self.swing_unit
        n, f = divmod(t, u2)
        f /= u2
        f = f * (1 + s) if f < 0.5 else (0.5 * (1 + s) + (f - 0.5) * (1 - s))
        return (n + f) * u2

    def _finish(self, i, ev, ctl, rng):
        bar0 = i * self.bpb
        J = self.jitter
        lb = self.laid_back
        vv = self.g.vel_var
        vscale = self.vel_scale
        if self.swing and (bar0 / (2 * self.swing_unit)) % 1:
            w = self._warp                     # the bar starts mid-pair (7/8, 1/16 …): swing on absolute beats
            warp = lambda t: w(bar0 + t) - bar0  # noqa: E731
        else:
            warp = self._warp
        snareish = (38, 39, 40, 37)
        raw = []
        rand = rng.random
        roles = [pl.role for pl in self.plans]
        span = 2 * vv + 1
        bpb = self.bpb
        for (j, t0, t1, p, v, glide) in ev:
            if not (0 <= p <= 127) or t1 <= t0 or t0 < 0 or t0 >= bpb:
                continue                                   # only notes that start in this bar
            role = roles[j]
            shift = lb if (role == "chords" or (role == "drums" and p in snareish)) else 0.0
            start = warp(t0) + shift + (rand() + rand() - 1.0) * J       # triangular jitter in ±J
            end = warp(t1) + shift - J - _GAP
            if start < 0 and i == 0:
                start = 0.0
            vel = int(v * vscale + int(rand() * span) - vv + 0.5)
            raw.append((j, p, start, end, 1 if vel < 1 else 127 if vel > 127 else vel, glide))
        raw.sort()
        notes: list[Note] = []
        controls: list[Control] = []
        n_raw = len(raw)
        for q, r in enumerate(raw):
            j, p, start, end, vel, glide = r
            if q + 1 < n_raw:
                nj, np_, nstart = raw[q + 1][:3]
                if nj == j and np_ == p:
                    if nstart - start < 1e-3:
                        continue                               # a duplicate onset: keep one
                    if end > nstart - _GAP:
                        end = nstart - _GAP
            if end - start < 0.005:
                continue                                       # too short to sound: dropped, never stretched
            notes.append(Note(j, bar0 + start, end - start, p, vel))
            if glide:
                b0 = bar0 + start
                controls.append(Control(j, max(0.0, b0 - 0.01), "bend", float(glide)))
                for g_ in range(1, 7):
                    controls.append(Control(j, b0 + 0.04 * g_, "bend", round(glide * (1 - g_ / 6), 3)))
        for (j, t, kind, value, number) in ctl:
            controls.append(Control(j, bar0 + warp(t), kind, value, number))
        notes.sort(key=lambda n: (n.start, n.part, n.pitch))
        controls.sort(key=lambda c: (c.beat, c.part))
        return notes, controls


def compose(prompt: str, seed: int = 0, bpm: float | None = None) -> Score:
    """Prompt → :class:`Score` (bars generated on demand). ``bpm`` overrides the prompt's tempo.

    Deterministic in ``(prompt, seed, bpm)``. Takes about a millisecond. ``[engine]``
    """
    if not isinstance(prompt, str):
        raise TypeError("prompt must be a string")
    if bpm is not None and not (math.isfinite(float(bpm)) and float(bpm) > 0):
        raise ValueError(f"bpm must be a positive number, not {bpm!r}")
    c = Composer(prompt, seed, bpm)
    return Score(prompt=prompt, seed=int(seed), bpm=c.bpm, meter=c.meter, key_root=c.key_root, mode=c.mode,
                 genre=c.g.name, parts=list(c.parts), swing=c.swing, make_bar=c.make_bar,
                 section_of=c.section_of, chord_of=c.chord_of)


def composer_of(score: Score) -> Composer:
    """The :class:`Composer` behind a composed score (for tests and tools). ``[engine]``"""
    return score.make_bar.__self__
