"""harmony: chord symbols, chord scales and voicings — the pitch arithmetic the parts share.

Roman-numeral chords (:func:`parse_chord`) read against a key, the key's scale bent to a chord
(:func:`chord_scale`), close voicings led from the previous one (:func:`voice`), and two small
pitch helpers (:func:`nearest`, :func:`scale_step`). Pure functions of their arguments, cached
where the composer asks them again and again; no state beyond the caches. ``[engine]``
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_NUMERALS = {"vii": 6, "vi": 5, "v": 4, "iv": 3, "iii": 2, "ii": 1, "i": 0}
_CHORD_RE = re.compile(r"^(b|#)?(VII|VI|V|IV|III|II|I|vii|vi|v|iv|iii|ii|i)(.*)$")
_SUFFIX = {  # suffix → (major-case intervals, minor-case intervals)
    "": ((0, 4, 7), (0, 3, 7)), "7": ((0, 4, 7, 10), (0, 3, 7, 10)), "maj7": ((0, 4, 7, 11), (0, 3, 7, 11)),
    "9": ((0, 4, 7, 10, 14), (0, 3, 7, 10, 14)), "maj9": ((0, 4, 7, 11, 14), (0, 4, 7, 11, 14)),
    "6": ((0, 4, 7, 9), (0, 3, 7, 9)), "sus4": ((0, 5, 7), (0, 5, 7)), "sus2": ((0, 2, 7), (0, 2, 7)),
    "add9": ((0, 4, 7, 14), (0, 3, 7, 14)), "o": ((0, 3, 6), (0, 3, 6)), "o7": ((0, 3, 6, 9), (0, 3, 6, 9)),
    "h7": ((0, 3, 6, 10), (0, 3, 6, 10)), "13": ((0, 4, 10, 14, 21), (0, 3, 10, 14, 21)),
    "+": ((0, 4, 8), (0, 4, 8)), "5": ((0, 7), (0, 7)),
}


@dataclass(frozen=True)
class Chord:
    """A chord: ``root`` pitch class and intervals above it (``(0, 4, 7)`` a major triad), and
    ``bass``, the pitch class of a slash chord's bass ("C/E": 4), ``None`` for the root."""

    root: int
    intervals: tuple[int, ...]
    symbol: str
    bass: int | None = None

    @functools.cached_property
    def pcs(self) -> tuple[int, ...]:
        return tuple((self.root + i) % 12 for i in self.intervals)

    def pitches(self, base: int = 48) -> tuple[int, ...]:
        r = base + (self.root - base) % 12
        return tuple(r + i for i in self.intervals)


_chord_cache: dict = {}


_MAJOR = (0, 2, 4, 5, 7, 9, 11)


def parse_chord(symbol: str, tonic: int, scale: tuple[int, ...]) -> Chord:
    """Roman numeral ``symbol`` (a degree of ``scale``; case = triad quality; ``b``/``#`` against
    the major scale; ``/`` and a second numeral: that degree in the bass, ``II/I``) in the key of
    ``tonic``. Cached. ``[engine]``"""
    key = (symbol, tonic, scale)
    hit = _chord_cache.get(key)
    if hit is None and "/" in symbol:            # "II/I": the chord over another degree in the bass
        upper, low = symbol.split("/", 1)
        c = parse_chord(upper, tonic, scale)
        hit = _chord_cache[key] = Chord(c.root, c.intervals, symbol, parse_chord(low, tonic, scale).root)
    if hit is None:
        m = _CHORD_RE.match(symbol)
        if not m:
            raise ValueError(f"bad chord symbol {symbol!r}")
        acc, num, suf = m.groups()
        deg = _NUMERALS[num.lower()]
        # an accidental is read against the major scale, as musicians write it: "bVII" is the
        # flat seventh in major and in mixolydian or minor alike, "bII" phrygian's own second
        # (a degree the mode already lowers is not lowered again)
        pc = scale[deg]
        if acc == "b":
            pc = pc if pc < _MAJOR[deg] else pc - 1
        elif acc == "#":
            pc = pc if pc > _MAJOR[deg] else pc + 1
        root = (tonic + pc) % 12
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
        return (min(cands, key=lambda p: (abs(p - ref), p)),) if cands else (nearest(chord.root, centre),)
    ivs = list(chord.intervals)
    if rootless and len(ivs) >= 4:
        ivs = ivs[1:]
    if len(ivs) > n:                     # drop the fifth first, then the top
        if 7 in ivs and len(ivs) > 3:
            ivs.remove(7)
        ivs = ivs[:n]
    pcs = [(chord.root + i) % 12 for i in ivs]
    # the note doubled to fill ``n``: the root; in a rootless voicing the fifth, else the third —
    # never the seventh, the sharpest note of the chord (a doubled major seventh is heard as a key)
    rootless_fill = [pc for pc in ((chord.root + i) % 12 for i in (7, 6, 8, 4, 3)) if pc in pcs] \
        if chord.root % 12 not in pcs else []
    fill_rank = {pc: k for k, pc in enumerate(rootless_fill)}
    best, best_cost = None, 1e9
    for inv in range(len(pcs)):
        order = pcs[inv:] + pcs[:inv]
        for base in range(lo - 12 + (order[0] - lo) % 12, hi + 1, 12):
            v = [base]
            for pc in order[1:]:
                v.append(v[-1] + 1 + (pc - v[-1] - 1) % 12)
            while len(v) < n:
                if rootless_fill:                   # the fifth (or third) again, where it spreads least
                    cands = [p for pc in rootless_fill for p in range(lo, hi + 1) if p % 12 == pc and p not in v]
                    if cands:
                        v.append(min(cands, key=lambda p: (max(v[-1], p) - min(v[0], p), fill_rank[p % 12], p)))
                        v.sort()
                        continue
                    v = [lo - 1]                    # no room for it here: this inversion is out
                    break
                roots = [x for x in v if x % 12 == chord.root % 12] or [v[0]]    # double the root
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
    if best is None and rootless_fill:               # too narrow a range: stacked from its floor, still rootless
        v = [lo + (pcs[0] - lo) % 12]
        for pc in pcs[1:] + [rootless_fill[0]] * (n - len(pcs)):
            v.append(v[-1] + 1 + (pc - v[-1] - 1) % 12)
        best = tuple(v[:n])
    if best is None:
        r = lo + (chord.root - lo) % 12
        best = tuple(r + i for i in chord.intervals[:n])
    return best


def nearest(pc: int, centre: int) -> int:
    """The MIDI note of pitch class ``pc`` nearest to ``centre``."""
    return centre + ((pc - centre + 6) % 12) - 6


def scale_step(p: int, n: int, sc: tuple[int, ...]) -> int:
    """``n`` steps of scale ``sc`` from pitch ``p`` (snapped into the scale first)."""
    while p % 12 not in sc:
        p -= 1
    idx = sc.index(p % 12)
    octave = p - p % 12
    idx += n
    octave += 12 * (idx // len(sc))
    return octave + sc[idx % len(sc)]
