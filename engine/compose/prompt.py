"""prompt: the words of a prompt → a :class:`PromptSpec` (what they say; the rest is left open).

:func:`read_prompt` reads tempo, key and mode, meter, negations ("no drums"), the genre, drum and
instrument words, moods and "solo"/"only". Each reading *claims* the characters it used, so one
phrase is read once ("808" in "808 bass" is an instrument, not a tempo). Pure; regexes are
compiled at import. ``[engine]``
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.compose import genres as G
from engine.compose import styles  # noqa: F401  (registers the style library in G.GENRES)

_NOTE_NAMES = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}


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


class _Claims:
    """Which characters of the prompt a reading has used: a phrase is read once."""

    def __init__(self, text: str):
        self.taken = [False] * len(text)

    def __call__(self, m: re.Match) -> bool:
        """Claim ``m``'s span; ``False`` (and nothing claimed) when part of it is taken already."""
        if any(self.taken[m.start():m.end()]):
            return False
        self.taken[m.start():m.end()] = [True] * (m.end() - m.start())
        return True


def read_prompt(prompt: str) -> PromptSpec:
    """What ``prompt`` says about tempo, key, mode, meter, genre, moods and instruments. ``[engine]``"""
    text = _normalise(prompt)
    spec = PromptSpec(text=text)
    claim = _Claims(text)
    _read_tempo(spec, claim)
    _read_key(spec, claim)
    _read_meter(spec, claim)
    _read_negations(spec, claim)
    phrase = _read_genre(spec, claim)
    _read_instruments(spec, claim, phrase)
    words = set(re.findall(r"[a-z]+", text))
    _read_moods(spec, words)
    _read_solo(spec, words)
    return spec


def _read_tempo(spec: PromptSpec, claim: _Claims) -> None:
    text = spec.text
    m = _BPM_RE.search(text) or _TEMPO_RE.search(text)
    if m is None:
        m = next((b for b in _BARE_BPM_RE.finditer(text) if 50.0 <= float(b.group(1)) <= 220.0), None)
    if m:
        spec.bpm = float(m.group(1))
        claim(m)


def _read_key(spec: PromptSpec, claim: _Claims) -> None:
    """The tonic and mode ("in A minor", "F# dorian", "key of Eb"), else a bare mode word."""
    text = spec.text
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


def _read_meter(spec: PromptSpec, claim: _Claims) -> None:
    text = spec.text
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


def _read_negations(spec: PromptSpec, claim: _Claims) -> None:
    for m in _NEG_RE.finditer(spec.text):
        for w in m.group(1).split():
            if w in _ROLE_WORDS:
                spec.no_roles.add(_ROLE_WORDS[w])
        claim(m)


def _read_genre(spec: PromptSpec, claim: _Claims) -> str | None:
    """The earliest genre phrase in the prompt ("jazz waltz" is jazz, in 3/4); returns the phrase."""
    for m in _GENRE_RX.finditer(spec.text):
        if claim(m):
            phrase = m.group(0)
            spec.genre = _GENRE_OF[phrase]
            if spec.genre == "waltz" and spec.meter is None:
                spec.meter = (3, 4)
            return phrase
    return None


def _read_instruments(spec: PromptSpec, claim: _Claims, phrase: str | None) -> None:
    text = spec.text
    spec.drum_words = [m.group(0) for m in _DRUM_RX.finditer(text) if claim(m)]
    spec.instruments = [m.group(0) for m in _INSTR_RX.finditer(text) if claim(m)]
    # a style played as its nearest genre brings its own instruments, for the roles the prompt
    # leaves open ("folk" is rock's groove on an acoustic guitar, not a distorted one)
    roles = {G.INSTRUMENTS[w][1] for w in spec.instruments}
    for w in G.STYLE_INSTRUMENTS.get(phrase, ()):
        if G.INSTRUMENTS[w][1] not in roles:
            spec.instruments.append(w)
            roles.add(G.INSTRUMENTS[w][1])


def _read_moods(spec: PromptSpec, words: set[str]) -> None:
    """Mood words (mode when none is named, tempo factor), tempo and swing words."""
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


def _read_solo(spec: PromptSpec, words: set[str]) -> None:
    """"solo piano", "drums only", "just bass and drums" (only when no genre is named)."""
    solo = bool(re.search(r"\b(solo|only|alone|just)\b", spec.text)) and spec.genre is None
    spec.solo = solo and bool(spec.instruments)
    if solo:
        spec.only_roles = {r for w, r in _ROLE_WORDS.items() if w in words}
