"""melody: one bar of a lead part — the section's motif sung over the chords (repeated, moved,
answered and brought home across the 8-bar phrase), a bebop line in solos, sparse bell tones, or
a two-note riff.

Strong notes land on chord tones; the scale under the chord is :func:`~engine.compose.harmony.chord_scale`
(minor's raised 7th over the major V). The only dice are ``bar.rng``, drawn in a fixed order. ``[engine]``
"""
from __future__ import annotations

import random

from engine.compose.band import Band, PartPlan
from engine.compose.form import Bar, Section, theme_bar
from engine.compose.harmony import Chord, chord_scale, nearest, scale_step


def play_lead(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """One bar of the lead in its style (a player's tune, whatever the style, where one is given)."""
    if band.theme_cells and bar.i >= band.theme_bar0 and (bar.sec.kind != "solo" or bar.i < band.theme_bar0 + 8):
        _theme_line(band, j, pl, bar)             # the tune (a jazz head before its solos)
    elif pl.style == "theme":
        return                                    # a lead added for a tune rests until it comes in
    elif pl.style == "sparse":
        _sparse(band, j, pl, bar)
    elif pl.style == "riff":
        _riff(band, j, pl, bar)
    else:
        _line(band, j, pl, bar)


def _sparse(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """A few chord tones a bar, each near the last; every other bar sometimes rests."""
    sec, s, rng, chords, bpb = bar.sec, bar.s, bar.rng, bar.sec.chords[bar.s], band.bpb
    if s % 2 and rng.random() < 0.5:
        return
    n = 1 + (s + sec.var) % 3
    times = sorted({0.0, *(round(rng.randrange(max(1, int(bpb * 2))) * 0.5, 2) for _ in range(n - 1))})
    prev = pl.centre
    for q, t in enumerate(times):
        c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
        cands = [p for p in range(pl.lo, pl.hi + 1) if p % 12 in c.pcs]
        # near the last note; the chord's fifth less often (held long, it names the dominant key)
        fifth = (c.root + 7) % 12
        p = min(cands, key=lambda x: abs(x - prev) + rng.random() * 4 + (3 if x % 12 == fifth else 0)) \
            if cands else prev
        t1 = times[q + 1] if q + 1 < len(times) else bpb
        bar.ev.append((j, t, t1, p, 70, 0))
        prev = p


def _riff(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """Every other bar, short double stops on the chord's top tones."""
    sec, s = bar.sec, bar.s
    if s % 2 == 0:
        return
    c = sec.chords[s][0][2]
    top = [p for p in range(pl.centre - 6, pl.centre + 7) if p % 12 in c.pcs][-3:]
    for t in ((0.5, 1.0, 2.75, 3.0), (0.0, 0.75, 1.5), (1.5, 1.75, 3.5))[sec.comp_var % 3]:
        if t < band.bpb:
            for p in top[-2:]:
                bar.ev.append((j, t, t + 0.2, p, 96, 0))


def _phrase(band: Band, sec: Section, ph: int) -> tuple[list, int]:
    """Bar ``ph`` of the 8-bar phrase: which motif cells it sings and how far the motif is moved —
    the motif, a sequence up and an answer down, the motif varied, a return, and a held note."""
    motif, bpb = sec.motif, band.bpb
    if ph in (0, 1, 4, 5):
        cells = motif[ph % 2]
        shift = 0 if ph < 4 else (sec.var - 1)
    elif ph in (2, 3):
        cells = motif[ph % 2]
        shift = 2 if ph == 2 else -1
        if ph == 3:
            kept, end = cells[:max(1, len(cells) - 2)], cells[-1][0]
            if band.meter == (3, 4) and end == 1.5 and kept[-1][0] < 1.0:
                end = 1.0                    # in three the held note comes on two, not as a hemiola
            cells = kept + [(end, bpb - end, 0)]
    elif ph == 6:
        cells, shift = motif[0], 1
    else:
        cells, shift = [(0.0, min(bpb, 2.5 if bpb >= 4 else bpb - 0.1), 0)], 0
    return cells, shift


def _line(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """The motif over the chords (a bebop walk of the chord scale in solos)."""
    sec, s, rng, bpb, kind = bar.sec, bar.s, bar.rng, band.bpb, bar.sec.kind
    chords = sec.chords[s]
    ph = s % 8
    cells, shift = _phrase(band, sec, ph)
    if pl.style == "bebop" or kind == "solo":
        if ph != 7:
            cells = [(q * 0.5, 0.5, 0) for q in range(int(bpb * 2)) if rng.random() < 0.8 or q == 0]
            shift = None
    c0 = chords[0][2]
    home = band.key_root in c0.pcs and (ph in (0, 4, 7) or sec.var == 0)
    mid = pl.centre - 2
    if home:
        anchor = nearest(band.key_root, mid)
    else:
        anchor = min((p for p in range(mid - 4, mid + 5) if p % 12 in c0.pcs), key=lambda p: abs(p - mid),
                     default=mid)
    prev = anchor
    for q, (t, d, step) in enumerate(cells):
        if t >= bpb:
            continue
        c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
        sc = chord_scale(band.scale, c)
        if shift is None:
            p = _bebop_step(pl, prev, t, c, sc, rng)
        else:
            p = scale_step(anchor, step + shift, sc)
            if ph == 7 and home:
                p = anchor                                 # the phrase ends at home
            elif t % 1 == 0 or d >= 1.0 or ph == 7:       # strong notes on chord tones, keeping the motion
                p = _chord_tone(p, prev, q, step, cells, c)
        vel = (84 if t % 1 == 0 else 74) + (6 if kind in ("B", "drop") else 0) + \
            (10 if t == 0 and band.meter == (3, 4) else 0)
        prev = _sing(bar, j, pl, cells, q, d, p, vel, bpb)


def _theme_line(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """A player's tune: as played where the phrase states it (from the tonic, every note kept),
    moved along the scale and onto the chords where it is developed, its rhythm varied in some
    bars (:data:`engine.compose.form.THEME_PLANS`), and the phrase's last bar a long home note."""
    sec, s, bpb, kind = bar.sec, bar.s, band.bpb, bar.sec.kind
    chords = sec.chords[s]
    tb = theme_bar(band, bar.i)
    mid = pl.centre - 2
    home = nearest(band.key_root, mid)
    if tb is None:
        cells, shift, varied, verbatim = [(0.0, min(bpb, 2.5 if bpb >= 4 else bpb - 0.1), 0)], 0, False, True
    else:
        cells, shift, varied, verbatim = tb
        if varied:
            cells = _vary(cells, bpb, three=band.meter == (3, 4))
    prev = home
    for q, (t, d, step) in enumerate(cells):
        if t >= bpb:
            continue
        c = next((cc for a, b, cc in chords if a <= t < b), chords[-1][2])
        sc = chord_scale(band.scale, c) if not verbatim else band.scale
        p = scale_step(home, step + shift, sc)
        if not verbatim and (t % 1 == 0 or d >= 1.0):
            p = _chord_tone(p, prev, q, step, cells, c)     # developed: its strong notes onto the chords
        prev = _sing(bar, j, pl, cells, q, d, p, (86 if t % 1 == 0 else 76) + (6 if kind in ("B", "drop") else 0), bpb)


def _sing(bar: Bar, j: int, pl: PartPlan, cells: list, q: int, d: float, p: int, vel: float, bpb: float) -> int:
    """Cell ``q`` sung at pitch ``p`` (folded into the part's register), held until the next cell
    or the bar's end; the pitch sung."""
    while p > pl.hi:
        p -= 12
    while p < pl.lo:
        p += 12
    t = cells[q][0]
    nt = cells[q + 1][0] if q + 1 < len(cells) else bpb
    bar.ev.append((j, t, t + min(d, nt - t, bpb - t), p, vel, 0))
    return p


def _vary(cells: list, bpb: float, three: bool = False) -> list:
    """The tune's rhythm varied: a long note splits in two (the second a step up), two short
    ones in a row become one dotted note."""
    out, q = [], 0
    while q < len(cells):
        t, d, step = cells[q]
        if d >= 1.0:
            half = d / 2
            if three and half >= 1 and half % 1:
                half = float(int(half))      # in three a held note splits on a beat, not into a hemiola
            out += [(t, half, step), (t + half, d - half, step + 1)]
        elif d <= 0.5 and q + 1 < len(cells) and cells[q + 1][2] != step and cells[q + 1][1] <= 0.5:
            out.append((t, d + cells[q + 1][1], step))
            q += 1
        else:
            out.append((t, d, step))
        q += 1
    return [c for c in out if c[0] < bpb]


def _bebop_step(pl: PartPlan, prev: int, t: float, c: Chord, sc: tuple[int, ...], rng: random.Random) -> int:
    """A bebop line's next note: a step or skip along the chord scale, a chord tone on the beat,
    turned back toward the part's centre."""
    move = rng.choice((-2, -1, -1, 1, 1, 2, -3, 3))
    p = scale_step(prev, move, sc)
    if t % 1 == 0 and p % 12 not in c.pcs:
        p = min((x for x in range(p - 2, p + 3) if x % 12 in c.pcs), key=lambda x: abs(x - p), default=p)
    if pl.centre - 10 > p or p > pl.centre + 10:
        p = scale_step(p, -4 if p > pl.centre else 4, sc)
    return p


def _chord_tone(p: int, prev: int, q: int, step: int, cells: list, c: Chord) -> int:
    """The chord tone nearest ``p`` that keeps the motif's direction from the note before."""
    want = 0 if q == 0 else (step > cells[q - 1][2]) - (step < cells[q - 1][2])
    cands = [x for x in range(p - 3, p + 4) if x % 12 in c.pcs]
    if want and q:
        moving = [x for x in cands if (x - prev) * want > 0]
        cands = moving or cands
    return min(cands, key=lambda x: abs(x - p)) if cands else p
