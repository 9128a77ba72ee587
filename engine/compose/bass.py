"""bass: one bar of a bass part — a walking line, an 808 on the kick, a wobble, held roots, or
one of the rhythmic figures (:func:`_figures`, built once per bar length).

Each style writes ``bar.ev`` from the section's chords and the next chord (approach notes lead
into it); the only dice are ``bar.rng``, drawn in a fixed order. ``[engine]``
"""
from __future__ import annotations

import functools
import math

from engine.compose.band import Band, PartPlan
from engine.compose.form import SECTION_BARS, Bar
from engine.compose.harmony import Chord, nearest


class _Line:
    """One bar of a bass part being written: its chords, register and dynamics."""

    def __init__(self, band: Band, j: int, pl: PartPlan, bar: Bar):
        self.band, self.j, self.pl, self.bar = band, j, pl, bar
        self.sec, self.s, self.rng = bar.sec, bar.s, bar.rng
        self.chords = bar.sec.chords[bar.s]
        self.nxt = bar.next_chord()
        self.bpb = band.bpb
        self.vel0 = 96 if bar.sec.kind in ("B", "drop") else 88

    def root(self, c: Chord) -> int:
        """The chord's root (a slash chord's bass) in the part's register, nearest its centre."""
        pl = self.pl
        n = nearest(c.root if c.bass is None else c.bass, pl.centre)
        while n < pl.lo:
            n += 12
        while n > pl.hi:
            n -= 12
        return n

    def add(self, t0: float, t1: float, p: int, v: float, glide: int = 0) -> None:
        """A note, cut at the bar's end; slivers under 0.02 beats are not played."""
        if t1 - t0 > 0.02 and t0 < self.bpb:
            self.bar.ev.append((self.j, t0, min(t1, self.bpb), p, v, glide))


def play_bass(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """One bar of the bass in its style (a rhythmic figure for any style without its own player)."""
    line = _Line(band, j, pl, bar)
    _PLAYERS.get(pl.style, _figure)(line)


def _walking(line: _Line) -> None:
    """One note a beat from root to root: chord tones and steps aimed at the next root, a chromatic
    or fifth-below approach on the last beat of each chord. The beat is the meter's: a quarter in
    4/4 and 3/4, a dotted quarter in 6/8 and 12/8, each group in 7/8 (a walk in quarters over 6/8
    puts a bar of 3/4 under it)."""
    pl, rng, chords = line.pl, line.rng, line.chords
    beats = line.bpb
    starts = list(line.band.group_starts_beats) + [beats]
    for ci, (a, b, c) in enumerate(chords):
        r = line.root(c)
        n_next = chords[ci + 1][2] if ci + 1 < len(chords) else line.nxt
        target = line.root(n_next)
        at = [t for t in starts[:-1] if a - 1e-6 <= t < b - 1e-6] or [a]
        ends = [min(next((u for u in starts if u > t + 1e-6), beats), b) for t in at]
        qn = len(at)
        rt = r if c.bass is None else r - (c.bass - c.root) % 12     # a slash chord's tones stand on its root
        tones = sorted({rt + iv - (12 if rt + iv > pl.hi else 0) for iv in c.intervals[:4]})
        up_tones = sorted(x for x in {t + o for t in tones for o in (0, 12)} if pl.lo <= x <= pl.hi)
        held = target == r                                            # the same root next: walk up its chord
        cur = r
        for q in range(qn):
            t = at[q]
            if t >= beats:
                break
            if q == 0:
                p = r
            elif q == qn - 1:
                p = target + rng.choice((-1, 1, -1, 7 - 12 if target - 5 >= pl.lo else 1))
            elif held and any(x > cur for x in up_tones):
                p = min(x for x in up_tones if x > cur)
            else:
                up = target > cur
                cands = [x for x in tones + [cur + (2 if up else -2)] if x != cur and pl.lo <= x <= pl.hi]
                p = min(cands, key=lambda x: abs(x - (cur + (target - cur) / (qn - q)))) if cands else cur
            p = max(pl.lo, min(pl.hi, p))
            line.add(t, t + 0.95 * (ends[q] - t), p,
                     line.vel0 - 6 + rng.randrange(12) + (10 if t == 0 and line.bpb == 3 else 0))
            cur = p


def _808(line: _Line) -> None:
    """Long roots on the kick's steps, an octave or fifth now and then, gliding between pitches."""
    pl, rng, chords, bpb = line.pl, line.rng, line.chords, line.bpb
    kick = line.band.kick_steps
    on = sorted(set(kick + ([int(bpb * 4) - 2] if rng.random() < 0.4 else [])))
    times = [st * 0.25 for st in on if st * 0.25 < bpb]
    prev = None
    for q, t in enumerate(times):
        c = next(cc for a, b, cc in chords if a <= t < b) if any(a <= t < b for a, b, _ in chords) else chords[-1][2]
        p = line.root(c)
        if q and rng.random() < 0.25:
            p += rng.choice((12, 7, -5 if p - 5 >= pl.lo else 7))
        t1 = times[q + 1] if q + 1 < len(times) else bpb
        glide = 0
        if prev is not None and p != prev and rng.random() < 0.5:
            glide = 2 if p < prev else -2
        elif q and rng.random() < 0.2:
            glide = -2
        line.add(t, t1, p, 110, glide)
        prev = p


def _wobble(line: _Line) -> None:
    """Held roots under a CC11 wobble, faster in a chorus or drop."""
    j, bpb, ctl = line.j, line.bpb, line.bar.ctl
    for a, b, c in line.chords:
        line.add(a, b, line.root(c), 112)
    rate = (0.5, 1 / 3, 0.25, 0.75)[line.sec.bass_var] if line.sec.kind in ("B", "drop") else 1.0
    t = 0.0
    while t < bpb - 1e-9:
        ph = (t % rate) / rate
        ctl.append((j, t, "cc", int(64 + 60 * math.cos(2 * math.pi * ph)), 11))
        t += 0.125
    ctl.append((j, bpb - 0.01, "cc", 127, 11))


def _held(line: _Line) -> None:
    """drone, long (with the octave) and reese (split root–octave/fifth): held roots, tied over a
    repeated chord."""
    sec, s, chords, style = line.sec, line.s, line.chords, line.pl.style
    bv = sec.bass_var
    if style == "reese" and sec.kind not in ("intro",):
        for a, b, c in chords:
            r = line.root(c)
            split = a + round((b - a) * (0.625 if bv % 2 else 0.75) * 2) / 2     # on an eighth, in any meter
            line.add(a, split, r, 104)
            line.add(split, b, r + (12 if bv < 2 else 7), 92)
        return
    if s % 2 and len(chords) == 1 and len(sec.chords[s - 1]) == 1 and chords[0][2] == sec.chords[s - 1][0][2]:
        return                                  # tied from the bar before
    ev, j = line.bar.ev, line.j
    for ci, (a, b, c) in enumerate(chords):
        r = line.root(c)
        end = b
        if len(chords) == 1 and s % 2 == 0 and s + 1 < SECTION_BARS and \
                len(sec.chords[s + 1]) == 1 and sec.chords[s + 1][0][2] == c:
            end = b + line.bpb                  # a tie over the next bar
        ev.append((j, a, end, r, 80, 0))
        if style == "long":
            ev.append((j, a, end, r + 12, 66, 0))


_PLAYERS = {"walking": _walking, "808": _808, "wobble": _wobble, "drone": _held, "long": _held, "reese": _held}


# --- rhythmic figures ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _figures(bpb: float) -> dict[str, list]:
    """Each rhythmic style's figures for a bar of ``bpb`` beats: ``(beat, length, tone)`` with tone
    ∈ R root, 5 fifth, 5l fifth below, 8 octave, 3 third, b7, A approach, g ghost. Built once per
    bar length."""
    return {
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


#: figures in three and in six-eight (for the styles that do not write their own)
# 3/4: on the quarters (a note on 1½ is 6/8's second beat), an approach on the last eighth at most
_THREE = [[(0, 1.4, "R"), (2, 0.45, "5"), (2.5, 0.45, "A")], [(0, 1.9, "R"), (2, 0.9, "5")],
          [(0, 0.9, "R"), (1, 0.45, "8"), (2, 0.9, "5")]]
_SIX_EIGHT = [[(0, 1.4, "R"), (1.5, 1.4, "5")], [(0, 0.9, "R"), (1, 0.45, "5"), (1.5, 1.4, "R")]]
_FIXED_TONES = {"R": 0, "8": 12, "b7": 10, "g": 0, "6": 9, "2": 14}


_BASS_TONES = {"R": "R", "5": "5", "l": "5l", "8": "8", "3": "3", "7": "7", "6": "6", "2": "2", "A": "A", "g": "g"}


@functools.lru_cache(maxsize=None)
def parse_pattern(pat: str, steps: int) -> tuple[tuple, ...]:
    """A bass pattern (one character per 16th, see :mod:`engine.compose.genres`) as figures, one
    per bar it spans: ``(beat, length, tone)``, a note held through its ``-`` steps."""
    bars = []
    for b in range(max(1, len(pat) // steps)):
        seg = pat[b * steps:(b + 1) * steps]
        fig = []
        for st, ch in enumerate(seg):
            if ch not in _BASS_TONES:
                continue
            n = 1
            while st + n < len(seg) and seg[st + n] == "-":
                n += 1
            fig.append((st * 0.25, n * 0.25 * (0.92 if n > 1 else 0.8), _BASS_TONES[ch]))
        bars.append(tuple(fig))
    return tuple(bars)


@functools.lru_cache(maxsize=None)
def grouped_figures(groups: tuple[int, ...]) -> list:
    """Figures for an additive meter (groups of eighths): the root on every group's start, the
    fifth on the bar's last group; or the root held through each group with an approach into
    the next bar — either way every group is heard where it starts."""
    starts, pos = [], 0.0
    for n in groups:
        starts.append((pos, n * 0.5))
        pos += n * 0.5
    last = len(starts) - 1
    held = [(t, d * 0.9, "5" if q == last and q else "R") for q, (t, d) in enumerate(starts)]
    pulse = [(t, 0.45, "R" if q == 0 else ("8" if q % 2 else "5")) for q, (t, d) in enumerate(starts)]
    pulse += [(starts[-1][0] + 1.0, 0.45, "A")] if groups[-1] >= 3 else []
    return [held, pulse]


@functools.lru_cache(maxsize=None)
def compound_figures(beats: int) -> list:
    """Figures for a compound meter (``beats`` dotted quarters): long–short "quarter, eighth" on
    each beat (the jig's lilt), or the root and fifth a dotted quarter each."""
    lilt = [(b * 1.5 + o, d, tone) for b in range(beats) for o, d, tone in ((0, 0.9, "R" if b % 2 == 0 else "5"),
                                                                          (1.0, 0.4, "8" if b % 2 == 0 else "R"))]
    held = [(b * 1.5, 1.35, "R" if b % 2 == 0 else "5") for b in range(beats)]
    return [held, lilt]


def _scale_step(target: int, scale: tuple[int, ...], above: bool) -> int:
    """The nearest pitch of ``scale`` (pitch classes) above or below ``target``."""
    d = 1 if above else -1
    p = target + d
    for _ in range(3):
        if p % 12 in scale:
            return p
        p += d
    return target + d


def _choose_figure(line: _Line) -> list:
    """This bar's figure: per meter, per style, varied by the section's bass variant."""
    band, style, meter, bv, s = line.band, line.pl.style, line.band.meter, line.sec.bass_var, line.s
    figs = _figures(line.bpb)
    options = figs.get(style) or figs["root8"]
    if style == "pats":
        fits = [p for p in band.g.bass_pats if len(p) % band.steps == 0] if band.own_grouping else []
        if fits:
            pat = fits[bv % len(fits)] if line.sec.kind != "intro" else fits[0]
            segs = parse_pattern(pat, band.steps)
            fig = segs[line.bar.i % len(segs)]
            return [(t, min(d, line.bpb - t), x) for t, d, x in fig if t < line.bpb]
    if band.groups and not band.compound and style not in ("waltz",):
        options = grouped_figures(band.groups)
    elif band.compound and style not in ("metal",):
        options = compound_figures(len(band.groups))
    elif meter == (3, 4) and style not in ("waltz", "cello", "metal"):
        options = _THREE
    if style == "waltz":
        fig = options[s % 2]
    elif style in ("cello",):
        fig = options[(bv + (s // 2)) % len(options)]
    else:
        fig = options[bv % len(options)] if not (line.sec.kind == "intro" and style not in ("funk",)) else options[0]
    return [(t, min(d, line.bpb - t), x) for t, d, x in fig if t < line.bpb]


def _interval(tone: str, c: Chord) -> int:
    """The interval above the root a figure's tone names (not for "A", the approach)."""
    fixed = _FIXED_TONES.get(tone)
    if fixed is not None:
        return fixed
    if tone == "3":
        return c.intervals[1]
    if tone == "7":
        return next((x for x in c.intervals if x in (10, 11, 9)), 10)
    fifth = next((x for x in c.intervals if x in (7, 6, 8)), 7)
    return fifth - 12 if tone == "5l" else fifth


def _figure(line: _Line) -> None:
    """A rhythmic style: the bar's figure on the chords, approach notes leading to the next root."""
    pl, rng, chords = line.pl, line.rng, line.chords
    last_p = None
    fig = _choose_figure(line)
    leaps = any(tone == "8" for _, _, tone in fig)
    for t, d, tone in fig:
        c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
        r = line.root(c)
        if leaps and r + 12 > pl.hi and r - 12 >= pl.lo - 5:
            r -= 12                     # an octave figure keeps its leap: the root goes down, not the octave
        if tone == "A":
            target_c = next((cc for a, b, cc in chords if a > t), line.nxt)
            tgt = line.root(target_c)
            up = rng.random() < 0.5
            if tgt == r:
                p = r + 7
            elif line.band.g.chromatic_approach:
                p = tgt + (1 if up else -1)                 # jazz and blues lean in by a semitone
            else:                                           # the scale step next to it: a chromatic
                p = _scale_step(tgt, line.band.scale, up)   # step from below is the dominant key's note
        else:
            iv = _interval(tone, c)
            if c.bass is not None and iv % 12:
                p = r - (c.bass - c.root) % 12 + iv          # a slash chord's other tones: above its root
            else:
                p = r + iv
        while p > pl.hi:
            p -= 12
        while p < pl.lo:
            p += 12
        v = 48 if tone == "g" else line.vel0 + (8 if t == 0 else 0) - (6 if t % 1 else 0) \
            - (8 if tone in ("5", "5l") else 0)          # the fifth under the root: the root names the key
        if last_p == p and d > 0.3:
            d = min(d, 0.9)
        line.add(t, t + d, p, v)
        last_p = p
