"""comping: the harmonic parts — chords in their playing styles (stabs, piano eighths, funk 16ths,
jazz comping, the waltz's oom-pah-pah …), held pads, and arpeggios.

They play the voicings the section planned (:func:`~engine.compose.form.plan_section`), so their
voice leading is the plan's; a style only chooses the rhythm. The only dice are ``bar.rng``,
drawn in a fixed order. ``[engine]``
"""
from __future__ import annotations

import functools

from engine.compose.band import Band, PartPlan
from engine.compose.form import SECTION_BARS, Bar
from engine.compose.harmony import nearest, scale_step

# rhythms (beats in the bar), one per comping variant
_STAB = ((0.5, 1.5, 2.5, 3.5), (0, 0.75, 1.5, 2.5, 3.25), (0.5, 1.75, 2.5, 3.75), (0, 1.5, 3))
_IN_THREE = ((0, 1, 2), (0, 2), (0, 1, 2.5), (0,))       # three: the first beat carries the bar (never 1½: 6/8's beat)
_PIANO8 = ((0, 1, 2, 3), (0, 1.5, 2, 3, 3.5), (0, 0.5, 1.5, 2.5, 3), (0, 2))
_FUNK16 = ("..x..x.x..x..x.x", ".xx.x.xx.x.xx.x.", "x..x..x.x..x..x.", "..xo..xo..xo..xo")
_LOFI = ((0, 1.75), (0, 2.5), (0.5, 2.75), (0, 1.5))
_SOUL = ((0, 1.5, 2.5), (0, 2), (0, 0.75, 2, 2.75), (0, 1, 2.5))
_COMP = ((0, 1.5), (0.5, 2.5), (1.5, 3.5), (0, 2.5), (1, 2.5, 3.5), (0.5, 2))
_BOSSA = ((0, 1.5, 2.5), (0.5, 1.5, 3))
_QUARTET = ((0, 2), (0, 1, 2, 3), (0, 1.5, 2, 3), (0, 3))
_QUARTET_SHORT = ((0,), (0, 1, 2), (0, 1, 2), (0, 2))
_ACID = ("x.xxx.x.xx.xx.x.", "xxx.x.xxx.x.xx.x", "x.x.xxx.x.xxx.xx", "xx.xx.x.xx.xx.x.")


class _Comp:
    """One bar of a chord part being written: the planned voicings and the bar's dynamics."""

    def __init__(self, band: Band, j: int, pl: PartPlan, bar: Bar):
        self.band, self.j, self.pl, self.bar = band, j, pl, bar
        self.sec, self.s, self.rng, self.ev = bar.sec, bar.s, bar.rng, bar.ev
        self.vs = bar.sec.voicings[j][bar.s]
        self.chords = bar.sec.chords[bar.s]
        self.bpb = band.bpb
        self.vel = 74 if bar.sec.kind in ("B", "drop") else 66
        self.cv = (bar.sec.comp_var + pl.nth) % 4         # the comping variant

    def hit(self, t: float, d: float, vel: float | None = None, spread: float = 0.0, top: int | None = None,
            bottom: int | None = None):
        """The voicing sounding at beat ``t`` for ``d`` beats (``top``/``bottom``: only its top or
        lowest notes; ``spread``: strummed, one note every ``spread`` beats)."""
        chords, vs = self.chords, self.vs
        vel_ = self.vel if vel is None else vel
        for a, b, c in chords:
            if a <= t < b:
                voicing = vs[chords.index((a, b, c))]
                break
        else:
            voicing = vs[-1]
        if top:
            voicing = voicing[-top:]
        if bottom:
            voicing = voicing[:bottom]
        end = min(t + d, self.bpb)
        for q, p in enumerate(voicing):
            self.ev.append((self.j, t + q * spread, end, p, vel_ - 4 * q % 9, 0))



#: styles that play rhythms (not held chords): in an additive meter they play its grouping
_RHYTHMIC = frozenset(("piano8", "block", "stab", "chop8", "lofi", "soul", "power", "comp", "bossa", "skank",
                       "funk16", "pats", "chug", "bubble"))


def play_chords(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """One bar of a chords or pad part in its style (block chords for any style without a player)."""
    k = _Comp(band, j, pl, bar)
    style = pl.style
    if style == "pats" and _pats(k):
        return
    if band.groups and not band.compound and style == "chug":
        _chug_in_groups(k)
    elif band.groups and not band.compound and style in _RHYTHMIC:
        _in_groups(k)
    elif band.compound and style in _RHYTHMIC:
        _in_compound(k)
    elif style in ("piano8", "lofi", "soul", "block", "power", "pats") and band.meter == (3, 4):
        _in_three(k)
    else:
        _STYLES.get(style, _block)(k)


@functools.lru_cache(maxsize=None)
def parse_strokes(pat: str, steps: int) -> tuple[tuple, ...]:
    """A comping pattern (see :mod:`engine.compose.genres`) as strokes, one tuple per bar it
    spans: ``(beat, length, kind)``, a stroke held through its ``-`` steps."""
    bars = []
    for b in range(max(1, len(pat) // steps)):
        seg = pat[b * steps:(b + 1) * steps]
        out = []
        for st, ch in enumerate(seg):
            if ch in ".-":
                continue
            n = 1
            while st + n < len(seg) and seg[st + n] == "-":
                n += 1
            out.append((st * 0.25, n * 0.25 * (0.92 if n > 1 else 0.7), ch))
        bars.append(tuple(out))
    return tuple(bars)


def _pats(k: _Comp) -> bool:
    """The style's own comping pattern for this meter (``False`` when none fits it)."""
    band = k.band
    fits = [p for p in band.g.comp_pats if len(p) % band.steps == 0] if band.own_grouping else []
    if not fits:
        return False
    pat = fits[k.cv % len(fits)] if k.sec.kind != "intro" else fits[0]
    segs = parse_strokes(pat, band.steps)
    for t, d, ch in segs[k.bar.i % len(segs)]:
        _stroke(k, t, d, ch)
    return True


def _stroke(k: _Comp, t: float, d: float, ch: str) -> None:
    """One stroke of a comping pattern."""
    vel = k.vel
    if ch == "x":
        k.hit(t, d, vel=vel)
    elif ch == "X":
        k.hit(t, d, vel=vel + 12)
    elif ch == "o":
        k.hit(t, min(d, 0.12), vel=vel - 18)
    elif ch in "sS":
        k.hit(t, d, vel=vel + (12 if ch == "S" else 0), spread=0.012)
    elif ch == "u":
        k.hit(t, d, vel=vel - 8, spread=0.01, top=3)
    elif ch == "t":
        k.hit(t, d, vel=vel - 2, top=2)
    elif ch == "b":
        _thumb(k, t, d, vel + 8)


def _thumb(k: _Comp, t: float, d: float, vel: float) -> None:
    """The "oom" or a fingerpicker's thumb: the sounding chord's root at or below the voicing —
    not its lowest note, which a voice-led inversion puts on the fifth (a Travis-picked folk song
    then sat on the dominant, and was heard in it)."""
    chords, vs = k.chords, k.vs
    x = next((q for q, (a, b, _) in enumerate(chords) if a <= t < b), len(chords) - 1)
    c, low = chords[x][2], min(vs[x])
    root = c.bass if c.bass is not None else c.root
    p = low - (low - root) % 12
    if p < k.pl.lo - 5:
        p += 12
    k.ev.append((k.j, t, min(t + d, k.bpb), p, vel, 0))


def _in_groups(k: _Comp) -> None:
    """An additive meter: a stroke on every group's start (the bar's first accented), held
    through the group — the chords say 2+2+3 with the drums and the bass."""
    t = 0.0
    for q, n in enumerate(k.band.groups):
        d = n * 0.5
        if t < k.bpb:
            k.hit(t, d * 0.85, vel=k.vel + (12 if q == 0 else 0), spread=0.01 if k.pl.part.program in range(24, 32) else 0.0)
        t += d


#: palm-muted 16ths through a group of two or three eighths: ``X`` the group's accented stroke,
#: ``x`` a chug, ``.`` a rest — the syncopation of a djent riff, its accents still on the groups
_GROUP_CHUGS = {2: ("X.xx", "Xx.x", "X.x."), 3: ("X.xx.x", "Xx.xx.", "X..x.x")}


def _chug_in_groups(k: _Comp) -> None:
    """Chugs in an additive meter: each group struck (the bar's first hardest) and chugged in
    16ths with rests between, one figure per group size for the bar, so the riff repeats."""
    t = 0.0
    for q, n in enumerate(k.band.groups):
        figs = _GROUP_CHUGS.get(n)
        fig = figs[(k.cv + n) % len(figs)] if figs else "X" + "x" * (2 * n - 1)
        for st, ch in enumerate(fig):
            b = t + st * 0.25
            if ch != "." and b < k.bpb:
                if ch == "X":
                    k.hit(b, 0.2, vel=k.vel + 16 + (8 if q == 0 else 0))
                else:
                    k.hit(b, 0.2, vel=k.vel, bottom=2)          # a palm-muted root and fifth
        t += n * 0.5


def _in_compound(k: _Comp) -> None:
    """A compound meter: each dotted-quarter beat struck, with the third eighth as a lighter
    stroke on some variants (the lilt of a jig), or, in 12/8, the ballad's triplets: all three
    eighths of each beat, the first accented (a lilt on every beat of a slow 12/8, with the bass's
    lilt under it, is heard as swung eighths at twice the tempo, not as four beats of three)."""
    nbeats = len(k.band.groups)
    for b in range(nbeats):
        t = b * 1.5
        if k.cv % 2 == 0:
            k.hit(t, 1.35, vel=k.vel + (10 if b == 0 else 0))
        elif k.band.meter == (12, 8):
            for e in range(3):
                k.hit(t + 0.5 * e, 0.45, vel=k.vel + ((10 if b == 0 else 4) if e == 0 else -14))
        else:
            k.hit(t, 0.9, vel=k.vel + (10 if b == 0 else 0))
            k.hit(t + 1.0, 0.45, vel=k.vel - 12, top=3)


def _in_three(k: _Comp) -> None:
    rh = _IN_THREE[k.cv]
    for q, t in enumerate(rh):
        nxt = rh[q + 1] if q + 1 < len(rh) else k.bpb
        k.hit(t, nxt - t - 0.05, vel=k.vel + (10 if t == 0 else -8))


def _block(k: _Comp) -> None:
    for a, b, c in k.chords:
        k.hit(a, b - a - 0.05)


def _pad(k: _Comp) -> None:
    _sustain(k, swell=False)


def _swell(k: _Comp) -> None:
    _sustain(k, swell=True)


def _stab(k: _Comp) -> None:
    for t in _STAB[k.cv]:
        if t < k.bpb:
            k.hit(t, 0.3, vel=k.vel + 6)


def _piano8(k: _Comp) -> None:
    rh = _PIANO8[k.cv]
    for q, t in enumerate(rh):
        if t < k.bpb:
            nxt = rh[q + 1] if q + 1 < len(rh) else k.bpb
            k.hit(t, nxt - t, vel=k.vel + (6 if t % 1 == 0 else -4))


def _chop8(k: _Comp) -> None:
    for st in range(int(k.bpb * 4)):
        if st % 4 == 2 or (st % 4 == 3 and k.rng.random() < 0.35):
            k.hit(st * 0.25, 0.14, vel=k.vel + (4 if st % 4 == 2 else -16), top=3)


def _funk16(k: _Comp) -> None:
    for st, ch in enumerate(_FUNK16[k.cv][:int(k.bpb * 4)]):
        if ch != ".":
            k.hit(st * 0.25, 0.12, vel=k.vel - (22 if ch == "o" else 0), top=3)


def _lofi(k: _Comp) -> None:
    rh = _LOFI[k.cv]
    for q, t in enumerate(rh):
        nxt = rh[q + 1] if q + 1 < len(rh) else k.bpb
        k.hit(t, nxt - t - 0.05, vel=k.vel - 4, spread=0.03)


def _soul(k: _Comp) -> None:
    rh = _SOUL[k.cv]
    for q, t in enumerate(rh):
        nxt = rh[q + 1] if q + 1 < len(rh) else k.bpb
        k.hit(t, nxt - t - 0.05, vel=k.vel - 2, spread=0.02)


def _skank(k: _Comp) -> None:
    for t in (1.0, 3.0) if k.bpb >= 4 else (1.0, 2.0):
        k.hit(t, 0.22, vel=k.vel + 6, top=3)


def _bubble(k: _Comp) -> None:
    for t in range(int(k.bpb)):
        k.hit(t + 0.5, 0.22, vel=k.vel - 6)
        if k.rng.random() < 0.5:
            k.hit(t + 0.25, 0.15, vel=k.vel - 24, top=2)


def _comp(k: _Comp) -> None:
    """Jazz comping: a rhythm, lengths and accents drawn per bar."""
    rng = k.rng
    for t in _COMP[rng.randrange(6)]:
        if t < k.bpb:
            k.hit(t, 0.45 + 0.5 * rng.random(), vel=k.vel - 6 + rng.randrange(12))


def _bossa(k: _Comp) -> None:
    for t in _BOSSA[k.s % 2]:
        k.hit(t, 0.45, vel=k.vel - 4)


#: riffs in eighths, a call and its answer per comping variant: ``R`` the root chugged (palm
#: muted), ``H`` the root let ring, ``2``/``3``/``4`` a power chord on the mode's step that many
#: degrees above the chord's root (the minor third and fourth of a minor key: D5 F5 G5), ``b`` on
#: the step below (C5 under D5); ``.`` lets the last one ring
_RIFFS = (("RR3RR43.", "RR3RR4b."), ("H.R3.4R.", "H.R3.b3."), ("RRR3RRR4", "RR3.4.3b"), ("H..3H.4.", "H..2b.3."))
_RIFF_STEPS = {"2": 1, "3": 2, "4": 3, "b": -1}
#: the same moves in semitones over a chord the mode does not hold (its own minor pentatonic)
_RIFF_BORROWED = {"2": 2, "3": 3, "4": 5, "b": -2}


def _riffing(k: _Comp) -> bool:
    """Whether this bar plays the style's riff: a riffing style outside its chorus, drop or solo."""
    return k.band.g.riffs and k.sec.kind not in ("B", "drop", "solo") and k.bpb >= 2


def _riff_chord(k: _Comp, t: float, ch: str) -> list[int]:
    """The power chord a riff's ``ch`` plays at beat ``t``: the voicing of the chord sounding then,
    moved whole to the mode's step (a borrowed chord's own minor pentatonic)."""
    x = next((i for i, (a, b, _) in enumerate(k.chords) if a <= t < b), len(k.chords) - 1)
    voicing = k.vs[x]
    shift = 0
    if ch in _RIFF_STEPS and voicing[0] % 12 in k.band.scale:
        shift = scale_step(voicing[0], _RIFF_STEPS[ch], k.band.scale) - voicing[0]
    elif ch in _RIFF_STEPS:
        shift = _RIFF_BORROWED[ch]
    return [p + shift for p in voicing]


def _riff_slots(k: _Comp) -> list[tuple[float, str]]:
    """This bar's riff: ``(beat, symbol)`` on the eighths, the rests left out."""
    fig = _RIFFS[k.sec.comp_var % len(_RIFFS)][k.s % 2]
    n = int(round(k.bpb * 2))
    return [(q * 0.5, fig[q % len(fig)]) for q in range(n) if fig[q % len(fig)] != "."]


def _riff(k: _Comp) -> None:
    """A riff on the power chord: the root chugged, with power chords on the mode's third, fourth
    and the step below (moved whole, as a guitarist moves the shape), the same riff in both
    guitars (double-tracked) and answered every other bar."""
    slots = _riff_slots(k)
    for n, (t, ch) in enumerate(slots):
        nxt = slots[n + 1][0] if n + 1 < len(slots) else k.bpb
        if ch == "R":
            d, vel = 0.22, k.vel + 2
        else:
            d, vel = max(0.22, nxt - t - 0.05), k.vel + (14 if ch == "H" else 10)
        for p in _riff_chord(k, t, ch):
            k.ev.append((k.j, t, min(t + d, k.bpb), p, vel, 0))


def _power(k: _Comp) -> None:
    """Power chords: held in a chorus, drop or solo; elsewhere a riff where the style plays them
    (doom, grunge, metal), else chugged eighths."""
    if _riffing(k):
        _riff(k)
        return
    if k.sec.kind in ("B", "drop", "solo"):
        for a, b, c in k.chords:
            k.hit(a, min(b - a, 2.0) - 0.05, vel=k.vel + 14)
            if b - a > 2:
                k.hit(a + 2, b - a - 2 - 0.05, vel=k.vel + 8)
    else:
        for q in range(int(k.bpb * 2)):
            k.hit(q * 0.5, 0.3, vel=k.vel + (10 if q % 2 == 0 else 0))


def _tremolo(k: _Comp) -> None:
    """Tremolo picking: the voicing in unbroken 16ths, each beat's first picked hardest; held in an
    intro or break (the guitars ring while the drums build)."""
    if k.sec.kind in ("intro", "break"):
        _sustain(k, swell=False)
        return
    for st in range(int(k.bpb * 4)):
        k.hit(st * 0.25, 0.22, vel=k.vel + (10 if st % 4 == 0 else 0))


def _chug(k: _Comp) -> None:
    """Palm-muted 16ths on the kick and every beat; where the style plays riffs (metal), the riff's
    power chords ring on its eighths outside the chorus and the chugs stop under them."""
    kick = k.band.kick_steps
    riff = {int(round(t * 4)): ch for t, ch in _riff_slots(k) if ch in _RIFF_STEPS} if _riffing(k) else {}
    ring = -1
    for st in range(int(k.bpb * 4)):
        if st in riff:
            for p in _riff_chord(k, st * 0.25, riff[st]):
                k.ev.append((k.j, st * 0.25, min(st * 0.25 + 0.45, k.bpb), p, k.vel + 12, 0))
            ring = st + 1
        elif st > ring and (st in kick or st % 4 == 0):
            k.hit(st * 0.25, 0.2, vel=k.vel + 16 if st % 4 == 0 else k.vel + 4)


def _quartet(k: _Comp) -> None:
    """An inner voice of a string quartet: held, or moving on the beats — the bar's downbeat
    leaned into and the beats after it lighter, so a slow 3/4 is heard in three (strings' soft
    attacks give a listener no other downbeat)."""
    rh = _QUARTET[k.cv] if k.bpb >= 4 else _QUARTET_SHORT[k.cv % 4]
    for q, t in enumerate(rh):
        if t < k.bpb:
            nxt = rh[q + 1] if q + 1 < len(rh) else k.bpb
            k.hit(t, nxt - t - 0.04, vel=k.vel - 6 + (6 if t == 0 else -8))


def _waltz(k: _Comp) -> None:
    """Oom (a low root, loud) – pah – pah (soft, short)."""
    low = nearest(k.chords[0][2].root, k.pl.lo - 2)
    while low < 28:
        low += 12
    k.ev.append((k.j, 0.0, 0.9, low, k.vel + 24, 0))
    k.hit(0.0, 0.9, vel=k.vel + 6)
    for t in [float(b) for b in range(1, max(2, int(k.bpb)))]:
        k.hit(t, 0.45, vel=k.vel - 26, top=3)


def _ostinato(k: _Comp) -> None:
    """Broken chords in 8ths (16ths in a chorus or drop); a swelling pad in an intro or break."""
    if k.sec.kind in ("intro", "break"):
        _sustain(k, swell=True)
        return
    vs, chords, vel = k.vs, k.chords, k.vel
    sub = 0.25 if k.sec.kind in ("B", "drop") else 0.5
    for q in range(int(k.bpb / sub)):
        t = q * sub
        voicing = next((vs[x] for x, (a, b, _) in enumerate(chords) if a <= t < b), vs[-1])
        p = voicing[(0, 2, 1, 2)[q % 4] % len(voicing)]
        k.ev.append((k.j, t, t + sub * 0.8, p, vel - (0 if q % 2 == 0 else 10), 0))


def _sustain(k: _Comp, swell: bool) -> None:
    """Held chords, tied over a repeated chord (no retrigger at the bar line) — except in 3/4,
    where every bar's downbeat is played again to keep the bar's shape."""
    sec, s, chords, vs, j = k.sec, k.s, k.chords, k.vs, k.j
    tie = k.band.meter != (3, 4)
    if tie and s % 2 and len(chords) == 1 and len(sec.chords[s - 1]) == 1 and sec.chords[s - 1][0][2] == chords[0][2]:
        return
    vel = 64 if sec.kind in ("B", "drop") else 56
    for x, (a, b, c) in enumerate(chords):
        end = b
        if tie and len(chords) == 1 and s % 2 == 0 and s + 1 < SECTION_BARS and len(sec.chords[s + 1]) == 1 \
                and sec.chords[s + 1][0][2] == c:
            end = b + k.bpb
        for p in vs[x]:
            k.ev.append((j, a, end, p, vel, 0))
        if swell:
            n = 6
            for q in range(n + 1):
                k.bar.ctl.append((j, a + (end - a) * 0.5 * q / n, "cc", int(86 + 34 * q / n), 11))   # a gentle swell


_STYLES = {"pad": _pad, "swell": _swell, "stab": _stab, "piano8": _piano8, "chop8": _chop8, "funk16": _funk16,
           "lofi": _lofi, "soul": _soul, "skank": _skank, "bubble": _bubble, "comp": _comp, "bossa": _bossa,
           "power": _power, "chug": _chug, "tremolo": _tremolo, "quartet": _quartet, "waltz": _waltz, "ostinato": _ostinato,
           "block": _block}


# --- arpeggios ------------------------------------------------------------------------------------
#: an arpeggio style's step (beats; 16ths unless named) and how long each note holds (of its step): a
#: harp's notes ring through the sweep, a tanpura's strings on into the next pluck
_ARP_STEP = {"arp8": 0.5, "harp": 0.5, "tanpura": 1.0, "kotekan8": 0.5}
_ARP_HOLD = {"harp": 0.95, "tanpura": 1.9}


def play_arp(band: Band, j: int, pl: PartPlan, bar: Bar) -> None:
    """The planned voicings broken into 8ths or 16ths: up, up-down or a skipping order; acid and
    trance lines; a harp's two-octave sweep."""
    sec, s, rng = bar.sec, bar.s, bar.rng
    vs = sec.voicings[j][s]
    chords = sec.chords[s]
    style = pl.style
    sub = _ARP_STEP.get(style, 0.25)
    bpb = band.bpb
    order_kind = (sec.comp_var + pl.nth) % 3
    vel = 70 if sec.kind in ("B", "drop") else 62
    acid_pat = _ACID[sec.comp_var]
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
        elif style in ("kotekan", "kotekan8"):
            # the bonang's interlocking figure: two neighbour tones traded, then the next pair — a
            # cycle of eight sixteenths (two beats), never the up-down arpeggio's six that a
            # listener and a beat tracker hear as dotted quarters against the beat
            a, b, c, d = (tones[i % len(tones)] for i in range(4))
            p = (b, a, b, c, b, c, d, c)[q % 8]
        elif style == "tanpura":
            # the tanpura's cycle: Pa, then the upper Sa twice, then the low Sa — the tonic three
            # times to the fifth's once, each string left ringing (a drone heard on its tonic)
            root = chords[x][2].root % 12
            sa = min((n for n in v if n % 12 == root), default=v[0])   # the voicing's lowest tonic
            pa = next((n for n in v if (n - sa) % 12 == 7), sa + 7)
            while pa < sa:
                pa += 12
            p = (pa, sa + 12, sa + 12, sa)[q % 4]
        elif style == "harp":
            up = tones + [t_ + 12 for t_ in tones[1:]]      # a two-octave sweep
            # in 6/8, 9/8, 12/8 (a barcarolle's, a lullaby's left hand) each dotted quarter its own
            # rising three, the first from the root, the second from the next chord tone — the
            # beats heard, not a sweep of eighths running across them
            p = up[(q // 3) % 2 + q % 3] if band.compound else up[q % len(up)]
        else:
            seq = tones if order_kind == 0 else (tones + tones[-2:0:-1]) if order_kind == 1 else \
                [tones[k_] for k_ in (0, 2, 1, 3, 2, 4) if k_ < len(tones)]
            p = seq[q % len(seq)]
        while p > pl.hi:
            p -= 12
        beat = band.beat if not band.groups or band.compound else None
        if beat is not None:
            on = abs((t / beat) - round(t / beat)) < 1e-6        # the felt beat: a dotted quarter in 6/8
        else:
            on = any(abs(t - g) < 1e-6 for g in band.group_starts_beats)
        accent = 16 if band.compound and style == "harp" else 10
        bar.ev.append((j, t, t + sub * _ARP_HOLD.get(style, 0.55), p,
                       vel + (accent if on else 0) - (0 if style != "acid16" else rng.randrange(12)), 0))
