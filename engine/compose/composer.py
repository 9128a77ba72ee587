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

The composer is a :class:`~engine.compose.band.Band` (what is decided once) that writes bars:
it caches the section plans (:mod:`~engine.compose.form`), asks each part's player
(:mod:`~engine.compose.drums`, :mod:`~engine.compose.bass`, :mod:`~engine.compose.comping`,
:mod:`~engine.compose.melody`) for its notes, and gives them their final micro-timing here.

Pure Python; no threads, no I/O. ``compose`` and ``make_bar`` run on the ``[engine]`` thread at
job start and while rendering (``compose`` ≈ a millisecond, a bar a fraction of one).
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import math
import random
from typing import Callable

from engine.compose.band import Band, PartPlan, stable_hash
from engine.compose.bass import play_bass
from engine.compose.comping import play_arp, play_chords
from engine.compose.drums import play_drums, play_perc
from engine.compose.form import SECTION_BARS, Bar, Section, plan_section, section_kind
from engine.compose.harmony import nearest
from engine.compose.melody import play_lead
from engine.score import Control, Note, Score

log = logging.getLogger("wavebridge.compose")

_GAP = 0.012                      # beats between a note's end and the next onset of its pitch
#: the velocity of the bass's fifth over the home chord, against the root's
_FIFTH_OVER_HOME = 0.75

#: role → the player that writes one bar of a part of that role
_PLAYERS: dict[str, Callable[[Band, int, PartPlan, Bar], None]] = {
    "drums": play_drums, "bass": play_bass, "chords": play_chords, "pad": play_chords, "arp": play_arp,
    "lead": play_lead, "perc": play_perc}


class Composer(Band):
    """Everything :func:`compose` decides (the :class:`Band`), and the bar generator. ``[engine]``"""

    def __init__(self, prompt: str, seed: int, bpm: float | None, theme=None):
        super().__init__(prompt, seed, bpm, None if theme is None else theme.key())
        self._sections: dict[int, Section] = {}
        #: the intro is the last ``intro_bars`` bars of section 0: bar ``i`` is bar ``i + offset`` of the form
        self.offset = SECTION_BARS - max(0, min(SECTION_BARS, int(self.intro_bars)))
        if theme is not None:
            self.set_theme(theme, SECTION_BARS - self.offset)   # sung from the first bar after the intro

    def set_theme(self, theme, bar0: int) -> None:
        """Sing ``theme`` (an :class:`engine.compose.theme.Theme`) as the lead's motif from bar
        ``bar0`` on, and harmonise under it. ``[engine]``"""
        from engine.compose.theme import motif_of

        self.theme_cells = tuple(tuple(row) for row in motif_of(theme, self.key_root, self.scale, self.bpb))
        self.theme_bar0 = int(bar0)
        self.theme = theme
        self._sections = {}
        if not any(pl.role == "lead" for pl in self.plans):
            self._add_lead()

    def _add_lead(self) -> None:
        """A piece without a melody part gets one to sing the player's tune, on the band's own
        keyboard or pad sound (a piano without one)."""
        from engine.compose import genres as G
        from engine.compose.band import _register
        from engine.score import DRUM_CHANNEL, Part

        used = {p.channel for p in self.parts}
        free = [c for c in range(16) if c != DRUM_CHANNEL and c not in used]
        if not free:
            return
        program = next((p.program for p in self.parts if p.role in ("chords", "pad", "arp")), 0)
        lvl, pan, rvb, cho = G.ROLE_MIX["lead"]
        part = Part(name="lead", role="lead", program=program, channel=free[0], level=lvl, pan=pan,
                    reverb=round(min(1.0, self.g.reverb * rvb), 3), chorus=cho,
                    drive=G.amp_drive(self.g.family, program, "lead"))
        lo, hi, centre = _register("lead", "melody", program)
        self.parts = list(self.parts) + [part]
        self.plans = list(self.plans) + [PartPlan(part, "lead", "theme", lo, hi, centre, 0, True)]

    # --- the form ------------------------------------------------------------------------------
    def section_of(self, i: int) -> str:
        """The section bar ``i`` belongs to ("intro", "A", "B", "break", "drop", "solo", "outro"). ``[engine]``"""
        return section_kind(self, (int(i) + self.offset) // SECTION_BARS)

    def section(self, k: int) -> Section:
        """The plan of section ``k`` (a few are cached). ``[engine]``"""
        sec = self._sections.get(k)
        if sec is None:
            if len(self._sections) > 32:
                self._sections.clear()
            home = self.home_key
            band = self
            if (self.key_root, self.scale) != home:        # a steered bar's view: the progression is
                band = copy.copy(self)                     # the piece's, in its own key
                band.key_root, band.scale = home
            sec = self._sections[k] = plan_section(band, k)
        return sec

    @property
    def home_key(self) -> tuple[int, tuple[int, ...]]:
        """The piece's own key (tonic, scale), whatever a steered bar plays in."""
        return self._home if self.harmony else (self.key_root, self.scale)

    def _steered_key(self, i: int):
        """The key (tonic, scale) the chords a player holds over bar ``i`` imply, or None."""
        b0, b1 = i * self.bpb, (i + 1) * self.bpb
        key = None
        for beat, chord, k in self.harmony:
            if beat <= b0 + 1e-9:
                key = k if chord is not None else None      # in force as the bar starts
            elif beat < b1 - 1e-9 and chord is not None and key is None:
                key = k                                      # struck within the bar
        return key

    # --- bars ------------------------------------------------------------------------------------
    def chords_of_bar(self, i: int) -> list:
        """``[(t0, t1, Chord), …]`` for bar ``i`` (beats within the bar). ``[engine]``"""
        k, s = divmod(int(i) + self.offset, SECTION_BARS)
        return self.section(k).chords[s]

    def chord_of(self, i: int) -> tuple[int, ...]:
        """The chord at the start of bar ``i`` as MIDI pitches, root first. ``[engine]``"""
        return self.chords_of_bar(i)[0][2].pitches(48)

    def make_bar(self, i: int) -> tuple[list[Note], list[Control]]:
        """Notes and controls that start in bar ``i``. Pure in ``i``, O(1). ``[engine]``"""
        i = int(i)
        if i < 0:
            raise ValueError("bar index must be ≥ 0")
        k, s = divmod(i + self.offset, SECTION_BARS)
        sec = self.section(k)
        rng = random.Random(stable_hash(self.base, "bar", i))
        bar = Bar(i, s, sec, rng, [], [], self.section)
        key = self._steered_key(i) if self.harmony else None
        if key is not None:
            band = copy.copy(self)                         # the lead and the bass walk the chords' key;
            band.key_root, band.scale = key                # the composer itself never changes key
            return band._write_bar(i, sec, s, bar, rng)
        return self._write_bar(i, sec, s, bar, rng)

    def _write_bar(self, i, sec, s, bar, rng):
        early = i < SECTION_BARS + self.intro_bars          # the intro and the first section
        sung = bool(self.theme_cells) and i >= self.theme_bar0     # a player's tune is never left out
        for j, pl in enumerate(self.plans):
            if pl.named and early or sung and pl.role == "lead":
                pass                   # a named instrument is in from the first bar (and never rests early)
            elif j in sec.drop or not self._plays(pl, sec, s):
                continue
            _PLAYERS[pl.role](self, j, pl, bar)
        if self.harmony:
            self._move_to_chords(i, sec, s, bar)
        self._lean_on_the_tonic(sec, s, bar)
        return self._finish(i, bar.ev, bar.ctl, rng)

    def _lean_on_the_tonic(self, sec: Section, s: int, bar: Bar) -> None:
        """Over the home chord the bass's fifth is the lighter note: a root–fifth bass that gives
        the fifth the root's weight makes the key a fifth up (the fifth is the dominant's root, and a
        low root's third harmonic is its fifth again)."""
        chords, home = sec.chords[s], self.key_root % 12
        for q, (j, t0, t1, p, v, g) in enumerate(bar.ev):
            if self.plans[j].role != "bass" or (p - home) % 12 != 7:
                continue
            c = next((c for a, b, c in chords if a - 1e-6 <= t0 < b), chords[-1][2])
            if c.root % 12 == home and (c.bass is None or c.bass % 12 == home):
                bar.ev[q] = (j, t0, t1, p, v * _FIFTH_OVER_HOME, g)

    def _move_to_chords(self, i: int, sec: Section, s: int, bar: Bar) -> None:
        """A chord a player steers to inside the bar is struck where it comes, as a band would
        move: the chords and pads sounding across it are cut there and strike its voicing, the
        bass moves to its root (or slash bass), a melody note outside it stops; drums, arpeggios
        and notes that start after it are as the parts wrote them."""
        b0, bpb = i * self.bpb, self.bpb
        chords = sec.chords[s]
        for beat, chord, _ in self.harmony:
            tb = beat - b0
            if not (1e-9 < tb < bpb - 1e-9):
                continue
            x = next((n for n, (a, b, _c) in enumerate(chords) if a <= tb + 1e-9 < b), None)
            if x is None:
                continue
            c = chords[x][2]
            ev, new, struck = bar.ev, [], {}
            for q, (j, t0, t1, p, v, g) in enumerate(ev):
                pl = self.plans[j]
                role = pl.role
                if role in ("drums", "perc", "arp") or not (t0 < tb - 1e-9 and t1 > tb + 0.05):
                    continue
                if role == "lead" and p % 12 in c.pcs:
                    continue                                   # a melody note of the new chord rings on
                ev[q] = (j, t0, tb, p, v, g)
                if role in ("chords", "pad") and j in sec.voicings:
                    end, vel = struck.get(j, (t1, v))
                    struck[j] = (max(end, t1), max(vel, v))
                elif role == "bass":
                    new.append((j, tb, t1, nearest(c.root if c.bass is None else c.bass, p), v, 0))
            for j, (end, vel) in struck.items():
                new.extend((j, tb, end, p, vel, 0) for p in sec.voicings[j][s][x])
            ev.extend(new)

    def _plays(self, pl: PartPlan, sec: Section, s: int) -> bool:
        """Whether part ``pl`` plays bar ``s`` of ``sec``: intros build up, breaks thin out,
        outros wind down."""
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
        # 9/8's three beats lean: the downbeat's onsets a little harder, the middle beat's softer —
        # every part's notes on each beat alike made its bar heard as often in twelve eighths as
        # in nine (blues, rock, jazz, classical in 9/8: 4 of 16 takes heard in 9)
        # 2/4's two beats alike (an oom-pah's bass on both, the chords between) are heard as a bar
        # of three as often as of two: its downbeat leans, its second beat is lighter
        # (the span, in beats, of the lighter beat's onsets; None: no lean)
        light = (1.45, 2.95) if self.compound and len(self.groups) == 3 else (0.95, 1.05) \
            if self.meter == (2, 4) else None
        # a slow compound beat (a 12/8 ballad, a 6/8 barcarolle at 62–76 a dotted quarter): the
        # eighths between the beats lighter, so the lilt is heard in threes and not in pairs
        lilt = self.compound and _LILT_BEATS[0] <= self.bpm / self.beat < _LILT_BEATS[1]
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
            if light:
                vel = round(vel * (_LEAN_DOWN if t0 < _ON_BEAT else _LEAN_MIDDLE if light[0] <= t0 < light[1] else 1.0))
            if lilt and role != "lead" and abs(t0 / self.beat - round(t0 / self.beat)) > _ON_BEAT:
                vel = round(vel * _LILT_OFF)
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


#: 9/8's (and 2/4's) metric lean: the velocity factors of the downbeat's onsets and of the middle
#: (second) beat's notes
_LEAN_DOWN, _LEAN_MIDDLE = 1.12, 0.86
#: a slow compound meter's lilt: the dotted-quarter tempi (from, below) whose eighths off the beat
#: every part but the tune plays at ``_LILT_OFF`` of their velocity. With every eighth alike a beat
#: tracker taps such a ballad in eighth pairs (×1.5: set E's desert blues, set G's barcarolle, set
#: K's blues, set M's 6/8 piano ballad at 66–70, 10 takes of 44 slow compound ones); lightened to 0.7
#: it taps the dotted quarter in all of them, and the 70s it tapped right stay right. Slower than
#: 62 the lighter eighths only move the tracker from the eighths (×3) to twice the beat, 1.5 eighths
#: apart — a tempo counted right and a meter no longer heard — so a 54–60 ballad keeps even eighths
_LILT_BEATS, _LILT_OFF = (62.0, 76.0), 0.7
#: how near a beat (in quarters) a note starts to count as on it
_ON_BEAT = 0.05


def compose(prompt: str, seed: int = 0, bpm: float | None = None, theme=None) -> Score:
    """Prompt → :class:`Score` (bars generated on demand). ``bpm`` overrides the prompt's tempo;
    ``theme`` (an :class:`engine.compose.theme.Theme`) is the lead's motif from the first bar
    after the intro, developed over each phrase, with the harmony fitted under it.

    Deterministic in ``(prompt, seed, bpm, theme)``. Takes about a millisecond. ``[engine]``
    """
    if not isinstance(prompt, str):
        raise TypeError("prompt must be a string")
    if bpm is not None and not (math.isfinite(float(bpm)) and float(bpm) > 0):
        raise ValueError(f"bpm must be a positive number, not {bpm!r}")
    c = Composer(prompt, seed, bpm, theme)
    if log.isEnabledFor(logging.INFO):
        x = c.explain()
        log.info("composing %r (seed %d): %s (%s), %s, %s, %s, %s", prompt[:120], int(seed), x["style"], x["why"],
                 x["tempo"], x["meter"], x["key"],
                 ", ".join(f"{d['name']}:{d['program']}" for d in x["instruments"])
                 + ("; " + "; ".join(x["spelled"]) if x["spelled"] else ""))
    return _score_of(c)


def _score_of(c: Composer) -> Score:
    return Score(prompt=c.prompt, seed=int(c.seed), bpm=c.bpm, meter=c.meter, key_root=c.key_root, mode=c.mode,
                 genre=c.g.name, parts=list(c.parts), swing=c.swing, beat=c.beat,
                 groups=c.groups if not c.compound else (), tone=c.g.tone, make_bar=c.make_bar,
                 section_of=c.section_of, chord_of=c.chord_of)


def steer(score: Score, beat: float, chord, key: tuple[int, str] | None = None) -> Score:
    """``score`` with ``chord`` (a :class:`~engine.compose.harmony.Chord`, or ``None`` for the
    composed progression again) in force from ``beat`` on: bass, comping, pads, arpeggios and the
    lead are voiced to it, the drums and the form are untouched, and everything before ``beat``
    is as it was. Steering given earlier from ``beat`` on is replaced. ``key`` (tonic, "major" |
    "minor"): the scale the lead and the bass walk in while a chord is held (the key the played
    chords imply); the score's own key comes back with ``chord=None``. Cheap (no bar is made
    until asked). ``[engine]``"""
    from engine.compose.genres import MODES

    c = composer_of(score)
    beat = max(0.0, float(beat))
    n = _fork(c)
    scale_key = None
    if chord is not None and key is not None:
        tonic, mode = int(key[0]) % 12, ("minor" if key[1] == "minor" else "major")
        scale_key = (tonic, tuple(sorted((tonic + i) % 12 for i in MODES[mode])))
    kept = [e for e in c.harmony if e[0] < beat - 1e-9]
    # what lies two sections back is never played again (a continuation starts near its beat):
    # keep the steering in force there and everything after, so a long session stays O(1) a bar
    cutoff = beat - 2 * SECTION_BARS * c.bpb
    old = [e for e in kept if e[0] <= cutoff]
    kept = old[-1:] + [e for e in kept if e[0] > cutoff]
    n.harmony = tuple(kept) + ((beat, chord, scale_key),)
    return _rebound(score, n)


def with_theme(score: Score, theme, bar0: int | None = None) -> Score:
    """``score`` whose lead sings ``theme`` from bar ``bar0`` on (the first bar after the intro
    by default; everything before that bar as it was), with the harmony fitted under it — a
    tune played in live. ``theme=None``: the composer's own motifs again. ``[engine]``"""
    c = composer_of(score)
    n = _fork(c)
    if bar0 is None:
        bar0 = SECTION_BARS - c.offset
    if theme is None:
        n.theme_cells, n.theme = (), None
    else:
        n.set_theme(theme, max(0, int(bar0)))
    if n.plans is c.plans:
        return _rebound(score, n)
    return dataclasses.replace(_score_of(n), prompt=score.prompt)


def detached(score: Score) -> Score:
    """``score`` with its bars made by a copy of its composer (its own section plans and bar
    cache): read from another thread, it never touches the engine's. ``[control]`` or ``[engine]``"""
    return _rebound(score, _fork(composer_of(score)))


def _fork(c: Composer) -> Composer:
    """A copy of the composer with its own section plans (one C-level dict copy: atomic under the GIL)."""
    n = Composer.__new__(Composer)
    n.__dict__.update(c.__dict__)
    n._sections = {}
    n._home = c.home_key
    return n


def _rebound(score: Score, n: Composer) -> Score:
    """``score`` whose bars composer ``n`` makes (a fresh bar cache)."""
    return dataclasses.replace(score, make_bar=n.make_bar, section_of=n.section_of, chord_of=n.chord_of, _cache={})


def composer_of(score: Score) -> Composer:
    """The :class:`Composer` behind a composed score (for tests and tools). ``[engine]``"""
    return score.make_bar.__self__
