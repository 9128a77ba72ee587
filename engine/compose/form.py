"""form: the piece's 8-bar sections — which kind each is, and its plan (chords, voicings, motif,
which parts rest) — and :class:`Bar`, the one bar a part is writing.

The form is an intro, then blocks of four sections whose template (:data:`~engine.compose.genres.FORMS`)
is picked per block by the hash, so it never loops exactly. :func:`plan_section` is a pure
function of ``(band, k)``; the composer caches a few plans. ``[engine]``
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable

from engine.compose import genres as G
from engine.compose.band import Band, PartPlan, stable_hash
from engine.compose.chordread import make_chord
from engine.compose.harmony import Chord, nearest, parse_chord, scale_step, voice

SECTION_BARS = 8
_V_RE = re.compile(r"^V(7|9)?$")
_COLOUR_GENRES = ("jazz", "bossa nova", "soul")    # sevenths on every chord, V7 at the cadence


@dataclass
class Section:
    """The plan of section ``k``: what every bar of it shares."""

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


@dataclass
class Bar:
    """One bar being written: where it is, its dice, and the lists the parts fill —
    ``ev`` with ``(part, t0, t1, pitch, vel, glide)``, ``ctl`` with ``(part, beat, kind, value, number)``."""

    i: int                  # the bar's index in the piece
    s: int                  # … and in its section
    sec: Section
    rng: random.Random
    ev: list
    ctl: list
    section: Callable[[int], Section]       # the composer's (cached) section plans

    def next_chord(self) -> Chord:
        """The chord that follows this bar (on a section's last bar, the next section's first)."""
        sec, s = self.sec, self.s
        return sec.chords[s + 1][0][2] if s + 1 < SECTION_BARS else self.section(sec.k + 1).chords[0][0][2]


def section_kind(band: Band, k: int) -> str:
    """The kind of section ``k``: "intro", "A", "B", "break", "drop", "solo" or "outro"."""
    if k == 0:
        return "intro"
    forms = G.FORMS[band.g.form]
    b, pos = divmod(k - 1, 4)
    return forms[stable_hash(band.base, "form", b) % len(forms)][pos]


def plan_section(band: Band, k: int) -> Section:
    """Section ``k``'s chords, voicings, motif and resting parts. Pure in ``(band, k)``. ``[engine]``"""
    kind = section_kind(band, k)
    fam = "B" if kind in ("B", "drop", "solo") else "A"
    hk = stable_hash(band.base, "sec", k)
    r = random.Random(hk)                      # drawn in this order: progression, cadences, chords, rests
    var = hk % 3
    prog, tokens = _progression(band, kind, fam, r)
    bars_tokens = _cadences(band, kind, tokens, r)
    chords = [_bar_chords(band, tok, r) for tok in bars_tokens]
    if band.theme_cells and kind != "intro":
        chords = _under_theme(band, k, chords)
    if getattr(band, "harmony", ()):
        chords = steer_chords(band, k, chords)
    voicings = _voicings(band.plans, chords)
    motif = _motif(band, fam, stable_hash(band.base, "motif", fam, var if kind != "solo" else k))
    drop = _resting(band, kind, r, k)
    return Section(k, kind, var, chords, prog, voicings, motif, frozenset(drop),
                   fill_bar3=r.random() < 0.35, bass_var=r.randrange(4), comp_var=r.randrange(4))


#: how a tune is developed over an 8-bar phrase, by its length in bars: per phrase bar, (bar of
#: the tune, scale steps it is moved, rhythm varied); ``None`` is the held home note
THEME_PLANS = {
    1: ((0, 0, False), (0, 0, True), (0, 2, False), (0, -1, True), (0, 0, False), (0, 1, True), (0, 2, False), None),
    2: ((0, 0, False), (1, 0, False), (0, 2, False), (1, -1, True), (0, 0, False), (1, 0, True), (0, 1, False), None),
    3: ((0, 0, False), (1, 0, False), (2, 0, False), (0, 2, False), (1, 2, True), (2, 0, True), (0, 1, False), None),
    4: ((0, 0, False), (1, 0, False), (2, 0, False), (3, 0, False), (0, 2, False), (1, 2, True), (2, 0, True), None),
}


def theme_bar(band: Band, i: int):
    """What the tune sings in piece bar ``i``: ``(cells, shift, varied, verbatim)``, or ``None``
    before the tune comes in or on the phrase's held last bar."""
    cells = band.theme_cells
    if not cells or i < band.theme_bar0:
        return None
    ph = (i - band.theme_bar0) % SECTION_BARS
    plan = THEME_PLANS[min(len(cells), 4)][ph]
    if plan is None:
        return None
    b, shift, varied = plan
    return cells[b], shift, varied, shift == 0 and not varied


def _under_theme(band: Band, k: int, chords: list) -> list:
    """Harmony under a player's tune: a bar where it is sung as played gets the key's chord
    that holds most of its notes (by length, the beat's notes counting double; a note a
    semitone off a chord tone counts against), the progression's own chord winning ties."""
    off = getattr(band, "offset", 0)
    kind = section_kind(band, k)
    sc = sorted(band.scale)
    rel = sorted((x - band.key_root) % 12 for x in sc)
    cands = []
    for deg in range(len(rel)):
        root = (band.key_root + rel[deg]) % 12
        third = (band.key_root + rel[(deg + 2) % len(rel)]) % 12
        fifth = (band.key_root + rel[(deg + 4) % len(rel)]) % 12
        if (fifth - root) % 12 != 7:
            continue                                   # diminished: not a chord to sit a tune on
        q = (third - root) % 12
        cands.append(make_chord(root, "" if q == 4 else "m"))
    out = []
    for b, ev in enumerate(chords):
        i = k * SECTION_BARS + b - off
        tb = theme_bar(band, i) if i >= 0 else None
        if tb is None or not tb[3] or (kind == "solo" and i >= band.theme_bar0 + SECTION_BARS):
            out.append(ev)
            continue
        w = [0.0] * 12
        for t, d, step in tb[0]:
            p = scale_step(band.key_root + 60, step, tuple(sc))
            w[p % 12] += d * (2.0 if abs(t - round(t)) < 1e-6 else 1.0)
        own = ev[0][2]

        def fit(c: Chord) -> float:
            pcs = set(c.pcs)
            bad = sum(w[pc] for pc in range(12) if pc not in pcs and any((pc - x) % 12 in (1, 11) for x in pcs))
            return sum(w[pc] for pc in pcs) - 0.5 * bad + (0.25 if c.root == own.root else 0.0) + \
                (0.2 if c.root == band.key_root and b % 4 == 0 else 0.0)

        best = max(cands + [own], key=fit)
        out.append(ev if best == own or fit(best) <= fit(own) + 1e-9 else [(0.0, band.bpb, best)])
    return out


def steer_chords(band: Band, k: int, chords: list) -> list:
    """Section ``k``'s bars with the chords a player steers (``band.harmony``: ``(beat, Chord |
    None, key)`` in beat order, each in force from its beat until the next; ``None`` gives the
    composed chords back) laid over the composed ones. ``[engine]``"""
    h = band.harmony
    off = getattr(band, "offset", 0)
    bpb = band.bpb
    out = []
    for b, ev in enumerate(chords):
        b0 = (k * SECTION_BARS + b - off) * bpb
        b1 = b0 + bpb
        # the steering in force over the bar, as (t0, t1, chord or None) within it
        cur = None
        for beat, c, *_ in h:
            if beat <= b0 + 1e-9:
                cur = c
        segs, t = [], 0.0
        for beat, c, *_ in h:
            if b0 + 1e-9 < beat < b1 - 1e-9:
                segs.append((t, beat - b0, cur))
                t, cur = beat - b0, c
        segs.append((t, bpb, cur))
        if all(c is None for _, _, c in segs):
            out.append(ev)
            continue
        row = []
        for t0, t1, c in segs:
            if c is None:
                row += [(max(a, t0), min(e, t1), cc) for a, e, cc in ev if min(e, t1) - max(a, t0) > 1e-9]
            elif row and row[-1][2] == c and abs(row[-1][1] - t0) < 1e-9:
                row[-1] = (row[-1][0], t1, c)
            else:
                row.append((t0, t1, c))
        out.append(row)
    return out


def _progression(band: Band, kind: str, fam: str, r: random.Random) -> tuple[str, list[str]]:
    """One progression per family for this seed, sometimes another on a repeat; rotated to start
    at home, and given a tonic when it has none (outside a break)."""
    progs, base = band.progs, band.base
    pi = stable_hash(base, "prog", fam) % len(progs)
    if fam == "B" and len(progs) > 1:
        pa = stable_hash(base, "prog", "A") % len(progs)
        if pi == pa:
            pi = (pi + 1 + stable_hash(base, "progB") % (len(progs) - 1)) % len(progs)
    if r.random() < 0.25:
        pi = r.randrange(len(progs))
    prog = progs[pi]
    tokens = prog.split()
    tonic = [q for q, t in enumerate(tokens) if re.match(r"^(i|I)(?![iIvV])", t)]
    if tonic and tonic[0] and (kind != "break" or r.random() < 0.5):
        tokens = tokens[tonic[0]:] + tokens[:tonic[0]]           # phrases start at home
    minorish = band.family in ("minor", "dorian", "phrygian")
    if not tonic and kind != "break":
        # a progression that never touches the tonic ("ii7 iii7 IVmaj7 V7") leaves the key to
        # guesswork: outside a break its first chord becomes the tonic ("Imaj7 iii7 IVmaj7 V7")
        colour = band.g.name in _COLOUR_GENRES or "7" in tokens[0] or "9" in tokens[0]
        tokens = [("i7" if colour else "i") if minorish else ("Imaj7" if colour else "I")] + tokens[1:]
    return prog, tokens


def _cadences(band: Band, kind: str, tokens: list[str], r: random.Random) -> list[str]:
    """The progression laid over the section's bars, its phrase ends bent to cadences: minor's
    major V (and a half cadence), a borrowed iv in a major chorus, an authentic cadence home."""
    # the intro is the section's last bars (the piece starts at bar ``offset`` of section 0): its
    # progression starts there, so the first chord heard is home
    start = getattr(band, "offset", 0) if kind == "intro" else 0
    bars_tokens = [tokens[(b - start) % len(tokens)] for b in range(SECTION_BARS)]
    g = band.g
    minorish = band.family in ("minor", "dorian", "phrygian")

    def to_v(b):
        last = bars_tokens[b].split("-")
        if not _V_RE.match(last[-1]):
            last[-1] = "V7" if (r.random() < 0.5 or g.name in _COLOUR_GENRES) else "V"
            bars_tokens[b] = "-".join(last)

    is_v = [bool(_V_RE.match(t.split("-")[-1])) for t in bars_tokens]
    if band.family == "minor" and g.cadence_v and kind not in ("break", "intro"):   # an intro stays home
        if not any(is_v[4:7]):
            to_v(7)                                           # harmonic minor's V at the cadence
        if r.random() < 0.3 and not any(_V_RE.match(t) for t in bars_tokens[:7]):
            to_v(3)                                           # and a half cadence
    elif not minorish:
        if kind in ("B", "drop") and r.random() < 0.5:
            bars_tokens = [t.replace("IV", "iv") if b == 6 and t.startswith("IV") and "maj" not in t else t
                           for b, t in enumerate(bars_tokens)]     # borrowed iv (minor plagal)
        if g.form != "edm" and r.random() < 0.5 and band.family == "major" and kind != "intro":
            bars_tokens[6], bars_tokens[7] = "V7" if g.name in ("jazz", "soul", "bossa nova") else "V", \
                bars_tokens[0]                                 # an authentic cadence home
    return bars_tokens


def _bar_chords(band: Band, tok: str, r: random.Random) -> list:
    """``[(t0, t1, Chord), …]`` for one bar's token ("ii7-V7" splits the bar in two)."""
    syms = tok.split("-")
    span = band.bpb / len(syms)
    ev = []
    for j, sym in enumerate(syms):
        c = parse_chord(sym, band.key_root, band.prog_scale)
        if band.g.name in _COLOUR_GENRES and len(c.intervals) == 3 and r.random() < 0.7:
            c = Chord(c.root, c.intervals + ((11,) if c.intervals[1] == 4 and sym[0] in "Ib" else (10,)),
                      c.symbol + "7")
        ev.append((j * span, (j + 1) * span, c))
    return ev


def _voicings(plans: list[PartPlan], chords: list) -> dict:
    """Voicings per harmonic part (chords, pad, arp), voice-led through the section."""
    voicings = {}
    inner = 0                                 # the quartet's inner voices so far
    rooted = False                            # a distorted guitar before this part holds the root
    for pi_, pl in enumerate(plans):
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
        voicings[pi_] = _voice_part(pl, chords, n, keep, rooted)
        rooted = rooted or pl.style in _POWER_STYLES
    return voicings


#: the comping of distorted guitars: power chords, their chugs, tremolo picking
_POWER_STYLES = ("power", "chug", "tremolo")


def _voice_part(pl: PartPlan, chords: list, n: int, keep: tuple[int, ...] | None, rooted: bool) -> list:
    """One part's voicings, bar by bar, each led from the one before. ``rooted``: a distorted
    guitar before this one already holds the chord's root."""
    rootless = pl.style in ("comp", "soul", "lofi", "bossa")
    prev = None
    per_bar = []
    for ev in chords:
        row = []
        for _, _, c in ev:
            if pl.style in _POWER_STYLES:
                root = nearest(c.root, pl.centre - 6)
                while root < pl.lo:
                    root += 12
                v = (root, root + 7, root + 12)
                if pl.style == "tremolo" and len(c.intervals) > 1:
                    third = c.intervals[1]
                    # the third on top: minor stays minor; over a guitar that holds the root, from
                    # the third up — a distorted root's fifth overtone is the major third, and
                    # doubled it made a thrash riff in E or B minor heard in major (10 of 12
                    # takes; from the third, 2 of 12)
                    v = (root + third, root + 7, root + 12, root + 12 + third) if rooted else v + (root + 12 + third,)
            else:
                cv = c
                if keep is not None and len(c.intervals) >= 3:
                    ivs = tuple(i for k, i in enumerate(c.intervals) if k in keep)
                    cv = Chord(c.root, ivs or c.intervals, c.symbol)
                v = voice(cv, pl.lo, pl.hi, n, prev, pl.centre, rootless)
            row.append(v)
            prev = v
        per_bar.append(row)
    return per_bar


def _resting(band: Band, kind: str, r: random.Random, k: int) -> set[int]:
    """Which parts rest: one optional part now and then (never the only harmony, nor the power
    chords of a chorus); the lead in some verses after the first block (the style's tune is heard
    first)."""
    plans = band.plans
    drop = set()
    optional = [j for j, pl in enumerate(plans) if pl.role in ("arp", "pad", "perc")
                or (pl.role == "chords" and sum(p.role == "chords" for p in plans) > 1
                    and not (kind == "B" and pl.style == "power"))]      # the chorus's wall of guitars stays
    harmonic = [j for j, pl in enumerate(plans) if pl.role in ("chords", "pad", "arp")]
    if optional and kind in ("A", "B") and r.random() < 0.35:
        x = optional[r.randrange(len(optional))]
        if x not in harmonic or len(harmonic) > 2:
            drop.add(x)
    if kind == "A" and band.g.name not in ("jazz", "classical", "waltz", "bossa nova") and r.random() < 0.4 \
            and k >= 5:                                     # (drawn as before, so the other dice stay)
        drop |= {j for j, pl in enumerate(plans) if pl.role == "lead"}
    return drop


def _motif(band: Band, fam: str, h: int) -> list:
    """Two bars of melody: (position, duration, scale step from the bar's anchor)."""
    r = random.Random(h)
    dens = min(0.95, max(0.12, band.g.lead_density + 0.1 * band.intensity + (0.12 if fam == "B" else 0)))
    slots = int(band.bpb * 2)
    bars = []
    shape = r.choice(("arch", "down", "up", "wave"))
    step = {"arch": r.choice((0, 1, 2)), "down": r.choice((3, 4)), "up": r.choice((-3, -2)),
            "wave": r.choice((0, 2))}[shape]
    last_move = 0
    rhythm = []
    for _ in range(2):
        onsets = []
        three = band.meter == (3, 4)
        starts = {round(g * 2) for g in band.group_starts_beats}     # eighth slots where a beat or group starts
        for s in range(slots):
            p = dens * (1.4 if s % 2 == 0 else 0.8)
            if band.compound or band.groups:                  # 6/8, 7/8 …: the tune leans on its beats
                p = dens * (1.5 if s in starts else 0.9 if (s + 1) in starts or s + 1 == slots else 0.5)
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
        if three and 1.5 in onsets and 1.0 not in onsets:
            # two dotted quarters split a 3/4 bar in half (a 6/8 hemiola): the tune sings on two instead
            onsets = sorted(1.0 if t == 1.5 else t for t in onsets)
        rhythm.append(onsets)
    total = sum(len(o) for o in rhythm)
    idx = 0
    for onsets in rhythm:
        cells = []
        for j, t in enumerate(onsets):
            nxt = onsets[j + 1] if j + 1 < len(onsets) else band.bpb
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
