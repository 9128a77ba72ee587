"""drums: the kit part (the groove's lanes, ghosts, crashes, fills and EDM build-ups) and the
pitched percussion parts (timpani, taiko, woodblock …).

Each ``play_*`` writes one bar of one part into ``bar.ev`` from the band's groove and the
section's plan; the only dice are ``bar.rng`` (the bar's), drawn in a fixed order. ``[engine]``
"""
from __future__ import annotations

import random

from engine.compose import genres as G
from engine.compose.band import Band, PartPlan
from engine.compose.form import SECTION_BARS, Bar, section_kind
from engine.compose.harmony import nearest

_RINGING = frozenset((46, 49, 51, 52, 53, 55, 57, 59))   # open hat, crashes, rides, china, splash
_LEVEL = {"intro": 0.82, "A": 0.92, "B": 1.0, "drop": 1.05, "solo": 0.95, "break": 0.8, "outro": 0.88}
_VEL = {"X": 112, "x": 92, "o": 52, "r": 84, "t": 80}
#: lanes a hats-only bar leaves out
_BACKBEAT = ("kick", "kick2", "snare", "clap", "rim", "esnare", "floor", "tom_lo", "tom_mid")
_SL = 0.25                                               # a step: one 16th


def play_drums(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """The groove, thinned in intros, breaks and outros, with a fill at phrase ends; nothing of
    what the prompt says no to ("no kick", "no hi-hats": not in a build or a fill either)."""
    start = len(bar.ev)
    _play_drums(band, j, pl, bar)
    if band.silent_keys:
        bar.ev[start:] = [e for e in bar.ev[start:] if e[0] != j or e[3] not in band.silent_keys]


def _play_drums(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    sec, s, rng, ev = bar.sec, bar.s, bar.rng, bar.ev
    kind = sec.kind
    g = band.g
    groove = band.groove
    level = _LEVEL[kind]
    full = kind in ("B", "drop")
    hats_only = False
    if kind == "intro":
        mode = g.intro_drums
        if mode == "none":
            if s < 4:
                return
            hats_only = True
        elif mode == "hats":
            hats_only = s < 6
        elif mode == "kick" and s < 4:
            groove = {ln: p for ln, p in groove.items() if ln.startswith("kick")}
    if kind == "break":
        edm = g.form == "edm"
        if s < 6 or not edm:
            hats_only = True
            if s < 2 and not edm:
                return
        if edm and s >= 6:
            _build(band, j, s, ev)
            return
    if kind == "outro" and s >= 4:
        hats_only = True
    fill_from = None
    if s == SECTION_BARS - 1 and (kind != "break" or g.form != "edm") and g.fill != "none":
        fill_from = band.bpb - (2.0 if sec.var == 2 or section_kind(band, sec.k + 1) in ("B", "drop") else 1.0)
    elif s == 3 and sec.fill_bar3 and g.fill != "none" and kind in ("A", "B", "drop", "solo"):
        fill_from = band.bpb - 0.5 * (1 + (sec.var % 2))
    if band.lanes_only:              # a percussionist with the named instruments: no kit around them
        fill_from = None
    _groove_hits(band, j, groove, s, full, hats_only, fill_from, level, rng, ev)
    if band.lanes_only:
        return
    # a hand drummer's groove (tabla, congas alone): no kit's ghost snares or crashes around it
    kit = any(ln.rstrip("+") in G.KIT_LANES for ln in groove)
    # groove details per bar: an extra ghost or a dropped hat, from the bar hash
    if kit and not hats_only and g.humanize_ms >= 5 and rng.random() < 0.5:
        st = rng.randrange(band.steps)
        if st % 4:
            ev.append((j, st * _SL, st * _SL + _SL, G.SNARE, 40 + rng.randrange(16), 0))
    if kit and s == 0 and kind in ("B", "drop", "A", "solo") and sec.k > 0 and g.name not in ("ambient",):
        ev.append((j, 0.0, 1.0, G.CRASH, 100 * level, 0))
    if fill_from is not None:
        _fill(band, j, max(0.0, fill_from), rng, ev, level)


def _groove_hits(band: Band, j: int, groove: dict, s: int, full: bool, hats_only: bool,
                 fill_from: float | None, level: float, rng: random.Random, ev: list) -> None:
    """The groove's lanes for bar ``s``: "+" lanes at full intensity only, the time cymbals kept
    under a fill, "?" ghosts on some bars, "r"/"t" rolls."""
    steps, sl = band.steps, _SL
    for lane, pat in groove.items():
        extra = lane.endswith("+")
        name = lane[:-1] if extra else lane
        if extra and not full:
            continue
        pitch = G.LANES[name]
        if hats_only and name in _BACKBEAT and name not in band.named_lanes:
            continue                   # (the percussion the prompt names plays from the first bar)
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
            vel = _VEL[ch]
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
                ev.append((j, t, min(t + ring, band.bpb), pitch, vel, 0))


def _build(band: Band, j: int, s: int, ev: list) -> None:
    """The last two bars of an EDM breakdown: a snare roll that doubles and grows."""
    sub = 0.5 if s == 6 else 0.25
    n = int(band.bpb / sub)
    for q in range(n):
        t = q * sub
        ev.append((j, t, t + sub, G.SNARE, 50 + 60 * ((s - 6) * n + q) / (2 * n), 0))
    if s == 7:
        ev.append((j, band.bpb - 0.5, band.bpb - 0.25, G.KICK, 100, 0))


def _fill(band: Band, j: int, t0: float, rng: random.Random, ev: list, level: float) -> None:
    """A fill from beat ``t0`` to the bar's end, in the genre's fill style."""
    style = band.g.fill
    bpb = band.bpb
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


# --- percussion instruments (taiko, timpani, woodblock …) -------------------------------------------
_PERC_PATTERNS = ("X.....x.X...x.x.", "X..x..x.X.......", "x.x.x.x.X..xX...")


def play_perc(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """Timpani on root and fifth (a roll at the section's end); other drums a pattern on the root."""
    sec, s, ev = bar.sec, bar.s, bar.ev
    c = sec.chords[s][0][2]
    low = nearest(c.root, pl.centre)
    prog = pl.part.program
    if prog == 47:                                      # timpani: root and fifth, a roll at section end
        ev.append((j, 0.0, 1.0, low, 96, 0))
        fifth = next((x for x in c.intervals if x in (7, 6, 8)), 7)
        if band.bpb >= 4:
            ev.append((j, 2.0, 3.0, low + fifth if low + fifth <= pl.hi else low + fifth - 12, 84, 0))
        if s == SECTION_BARS - 1:
            for q in range(8):
                ev.append((j, band.bpb - 1 + q / 8, band.bpb - 1 + (q + 1) / 8, low, 50 + 6 * q, 0))
        return
    pat = band.fit(_PERC_PATTERNS[sec.comp_var % 3])
    for st, ch in enumerate(pat[:band.steps]):
        if ch != ".":
            fifth = next((x for x in c.intervals if x in (7, 6, 8)), 7)
            ev.append((j, st * 0.25, st * 0.25 + 0.25, low if ch == "X" else low + fifth, 110 if ch == "X" else 80, 0))
