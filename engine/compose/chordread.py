"""chordread: what a player means by the keys they hold, or the symbol they type.

- :func:`name_chord` — MIDI notes held on a keyboard → :class:`~engine.compose.harmony.Chord`:
  root, quality, inversion and slash bass, for triads, sevenths, sixths, sus, add9, ninths,
  diminished, augmented and power chords; a single key is a root (its quality the key's
  diatonic triad on it, major without a key); a cluster nobody can name is reduced to its
  strongest triad — never an error.
- :func:`parse_symbol` — a chord symbol as musicians write it ("Am7/G", "F#m7b5", "Bbmaj7",
  "Dsus4", "E5", "C/E", "Cø", "Co7"; the letter in either case, minor always spelt "m", "min"
  or "-") → the same Chord; a symbol it cannot read raises ``ValueError`` naming what it did
  not understand.
- :func:`infer_key` — the key a sequence of chords implies (Krumhansl–Kessler profiles against
  the chords' pitch classes, roots weighted), as ``(tonic, "major"|"minor", confidence)``.

Pure functions; no state. ``[control]`` (OSC/MIDI parsing) and ``[engine]`` (steering).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from engine.compose.harmony import Chord

NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
_PC = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}

#: qualities, most common first (ties in naming go to the earlier one): suffix → intervals
QUALITIES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("", (0, 4, 7)), ("m", (0, 3, 7)), ("7", (0, 4, 7, 10)), ("m7", (0, 3, 7, 10)),
    ("maj7", (0, 4, 7, 11)), ("5", (0, 7)), ("sus4", (0, 5, 7)), ("sus2", (0, 2, 7)),
    ("6", (0, 4, 7, 9)), ("m6", (0, 3, 7, 9)), ("add9", (0, 4, 7, 14)), ("madd9", (0, 3, 7, 14)),
    ("9", (0, 4, 7, 10, 14)), ("m9", (0, 3, 7, 10, 14)), ("maj9", (0, 4, 7, 11, 14)),
    ("7sus4", (0, 5, 7, 10)), ("dim", (0, 3, 6)), ("dim7", (0, 3, 6, 9)), ("m7b5", (0, 3, 6, 10)),
    ("aug", (0, 4, 8)), ("mmaj7", (0, 3, 7, 11)),
)
_BY_SUFFIX = dict(QUALITIES)
#: how symbols are spelt besides the names above
_ALIASES = {"maj": "", "M": "", "min": "m", "-": "m", "mi": "m", "M7": "maj7", "Δ": "maj7", "Δ7": "maj7",
            "ma7": "maj7", "min7": "m7", "-7": "m7", "mi7": "m7", "o": "dim", "°": "dim", "o7": "dim7",
            "°7": "dim7", "ø": "m7b5", "ø7": "m7b5", "min7b5": "m7b5", "-7b5": "m7b5", "+": "aug",
            "sus": "sus4", "2": "sus2", "add2": "add9", "madd2": "madd9", "M9": "maj9", "dom7": "7",
            "7sus": "7sus4", "mM7": "mmaj7", "minmaj7": "mmaj7", "": ""}
_TRIADS = (("", (0, 4, 7)), ("m", (0, 3, 7)), ("dim", (0, 3, 6)), ("aug", (0, 4, 8)))
_SYMBOL_RE = re.compile(r"^\s*([A-Ga-g])([#b♯♭]?)([^/]*?)\s*(?:/\s*([A-Ga-g])([#b♯♭]?))?\s*$")
_MAJOR_STEPS = (0, 2, 4, 5, 7, 9, 11)
_MINOR_STEPS = (0, 2, 3, 5, 7, 8, 10)
# Krumhansl–Kessler key profiles (major, minor), tonic first
_KK_MAJOR = (6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88)
_KK_MINOR = (6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17)


def chord_name(root: int, suffix: str, bass: int | None = None) -> str:
    """``(9, "m7", 7)`` → ``"Am7/G"``."""
    name = NAMES[root % 12] + suffix
    return name if bass is None or bass % 12 == root % 12 else f"{name}/{NAMES[bass % 12]}"


def make_chord(root: int, suffix: str, bass: int | None = None) -> Chord:
    """The :class:`Chord` of a root, a quality suffix (of :data:`QUALITIES`) and a slash bass."""
    root %= 12
    b = None if bass is None or bass % 12 == root else bass % 12
    return Chord(root, _BY_SUFFIX[suffix], chord_name(root, suffix, b), b)


def _pc(letter: str, acc: str) -> int:
    pc = _PC[letter.lower()]
    return (pc + (1 if acc in ("#", "♯") else -1 if acc in ("b", "♭") else 0)) % 12


def parse_symbol(text: str) -> Chord:
    """A chord symbol → :class:`Chord`. Raises ``ValueError`` with what it could not read."""
    if not isinstance(text, str):
        raise ValueError("a chord symbol must be text")
    s = text.strip()
    m = _SYMBOL_RE.match(s)
    if not m or len(s) > 24:
        raise ValueError(f"{text[:24]!r} is not a chord symbol (try C, Am7, F#m7b5, Bbmaj7, Dsus4, E5, C/E)")
    letter, acc, suf, bl, ba = m.groups()
    suf = suf.strip().replace("(", "").replace(")", "").replace(" ", "")
    suf = _ALIASES.get(suf, suf)
    if suf not in _BY_SUFFIX:
        low = suf.lower()
        suf = _ALIASES.get(low, low if low in _BY_SUFFIX else suf)
    if suf not in _BY_SUFFIX:
        known = ", ".join(repr(q) if q else "'' (major)" for q, _ in QUALITIES[:12])
        raise ValueError(f"{text[:24]!r}: unknown chord quality {suf[:12]!r} (known: {known} …)")
    bass = _pc(bl, ba) if bl else None
    return make_chord(_pc(letter, acc), suf, bass)


def _score(root: int, ivs: tuple[int, ...], pcs: frozenset, bass: int) -> float:
    tones = {(root + i) % 12 for i in ivs}
    hit = len(tones & pcs)
    missing = len(tones - pcs)
    extra = len(pcs - tones)
    s = 2.0 * hit - 2.5 * missing - 3.0 * extra
    if root == bass:
        s += 1.0                                  # a root position reading wins a tie
    elif len(ivs) >= 4 and ivs[3] == 9 or ivs == (0, 2, 7):
        s -= 0.6                                  # inverted, a sixth chord or sus2 is the seventh or sus4 it spells
    if (root + 7) % 12 in pcs and 7 in ivs:
        s += 0.25                                 # the fifth above the root confirms it
    return s


def name_chord(notes: Iterable[int], key: tuple[int, str] | None = None) -> Chord | None:
    """The chord a player holds (MIDI note numbers, any order, octaves and doublings ignored).

    ``key``: ``(tonic, "major"|"minor")`` for a single key (its diatonic triad); ``None`` with
    no notes. Never raises for any set of notes 0..127."""
    ns = sorted({int(n) for n in notes if 0 <= int(n) <= 127})
    if not ns:
        return None
    bass = ns[0] % 12
    pcs = frozenset(n % 12 for n in ns)
    if len(pcs) == 1:
        return make_chord(bass, _diatonic(bass, key))
    if len(pcs) == 2:
        (a, b) = sorted(pcs, key=lambda p: (p - bass) % 12)
        iv = (b - a) % 12
        if iv == 7:
            return make_chord(a, "5")
        if iv == 5:
            return make_chord(b, "5", a)              # a fourth: the fifth over its top, inverted
        if iv in (3, 4, 8, 9):                         # a third (or sixth): the triad it implies
            root, third = (a, iv) if iv in (3, 4) else (b, 12 - iv)
            return make_chord(root, "" if third == 4 else "m", bass if bass != root else None)
    best, best_s = None, -1e9
    for root in sorted(pcs):
        for suf, ivs in QUALITIES:
            s = _score(root, ivs, pcs, bass)
            if s > best_s + 1e-9:
                best, best_s = (root, suf), s
    root, suf = best
    tones = {(root + i) % 12 for i in _BY_SUFFIX[suf]}
    if pcs - tones or len(tones - pcs) >= 2:
        # a cluster: no named chord covers it — its strongest triad, the one with the most of
        # its notes (root in the bass, then the lowest root, win ties)
        cands = []
        for r in range(12):
            for tsuf, ivs in _TRIADS:
                t = {(r + i) % 12 for i in ivs}
                cands.append((len(t & pcs), r == bass, tsuf in ("", "m"), -((r - bass) % 12), r, tsuf))
        _, _, _, _, root, suf = max(cands)
    return make_chord(root, suf, bass if bass != root else None)


def _diatonic(root: int, key: tuple[int, str] | None) -> str:
    """The quality of the triad on ``root`` in ``key`` (major when it is not in the key)."""
    if key is None:
        return ""
    tonic, mode = key
    steps = _MINOR_STEPS if mode == "minor" else _MAJOR_STEPS
    sc = [(tonic + s) % 12 for s in steps]
    if root % 12 not in sc:
        return ""
    third, fifth = (root + 3) % 12 in sc, (root + 7) % 12 in sc
    if fifth:
        return "m" if third else ""
    return "dim" if third else ""


def infer_key(chords: Iterable[Chord], holds: Chord | None = None) -> tuple[int, str, float]:
    """The key chords imply: ``(tonic, "major"|"minor", confidence 0..1)`` (the correlation of
    the best Krumhansl–Kessler profile against the chords' pitch-class weights; roots and the
    first and last chord count more). ``holds``: only keys whose scale (natural or harmonic
    minor) holds that chord's triad — the chord being played — are candidates, when any is."""
    cs = [c for c in chords if c is not None]
    w = [0.0] * 12
    for k, c in enumerate(cs):
        weight = 1.5 if k in (0, len(cs) - 1) else 1.0
        for pc in c.pcs:
            w[pc] += weight
        w[c.root % 12] += weight
    if not any(w):
        return 0, "major", 0.0
    triad = set() if holds is None else {(holds.root + i) % 12 for i in holds.intervals[:3]}

    def holds_it(tonic, mode) -> bool:
        steps = {0, 2, 4, 5, 7, 9, 11} if mode == "major" else {0, 2, 3, 5, 7, 8, 10, 11}
        return all((pc - tonic) % 12 in steps for pc in triad)

    ranked = rank_keys(w)
    fit = [k for k in ranked if holds_it(k[1], k[2])] or ranked
    r, tonic, mode = fit[0]
    return tonic, mode, max(0.0, r)


def rank_keys(weights) -> list[tuple[float, int, str]]:
    """Every key ``(correlation, tonic, mode)`` against 12 pitch-class weights (Krumhansl–Kessler
    profiles), best first (a lower tonic first on a tie)."""
    ranked = []
    for tonic in range(12):
        for mode, prof in (("major", _KK_MAJOR), ("minor", _KK_MINOR)):
            ranked.append((_corr(list(weights), [prof[(pc - tonic) % 12] for pc in range(12)]), -tonic, mode, tonic))
    ranked.sort(reverse=True)
    return [(r, tonic, mode) for r, _, mode, tonic in ranked]


def _corr(a: list[float], b: list[float]) -> float:
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    da = sum((x - ma) ** 2 for x in a) ** 0.5
    db = sum((y - mb) ** 2 for y in b) ** 0.5
    return num / (da * db) if da and db else 0.0
