"""theme: a tune a player gives the composer — played on a keyboard, read from a MIDI file, or
sung and transcribed — cleaned into a phrase the lead can sing.

:func:`clean` takes raw notes (beats, or seconds with a tempo) and makes them a phrase: one note
at a time (the louder, then longer, of overlapping notes), onsets and lengths on the meter's grid
(16ths; eighths in 6/8, 9/8, 12/8), slivers and repeated fragments merged, the first note on the
phrase's first beat, at most :data:`MAX_BARS` bars. :func:`motif_of` puts the phrase into a
piece's key as the composer's motif cells — per bar ``(position, duration, scale step from the
tonic)``, the format of :func:`engine.compose.form.plan_section`'s motif — after moving the tune's
own tonic (inferred from its notes) onto the piece's. Off-scale notes go to the nearest scale tone.

Pure functions. ``[engine]`` (and ``[control]`` where a recording is cleaned).
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.compose.chordread import rank_keys

MAX_BARS = 4
MAX_NOTES = 64
MIN_NOTE_BEATS = 0.12
MIN_RAW_BEATS = 0.1            # shorter is a bounce or a transcription's sliver
FRAGMENT_GAP_BEATS = 0.08      # a short piece of the same pitch this soon after is the same note



class ThemeError(ValueError):
    """A recording or file that gives no phrase (empty, noise only); the message says why."""


@dataclass(frozen=True)
class Theme:
    """A cleaned phrase: ``notes`` are ``(start_beat, dur_beats, pitch, vel)`` from its first
    beat, one at a time; ``bars`` its length in bars of ``beats_per_bar``."""

    notes: tuple[tuple[float, float, int, int], ...]
    bars: int
    beats_per_bar: float

    @property
    def pitches(self) -> list[int]:
        return [n[2] for n in self.notes]

    def key(self) -> tuple[int, str]:
        """The tune's own key, (tonic, "major" | "minor"), by duration-weighted pitch classes."""
        w = [0.0] * 12
        for k, (_t, d, p, _v) in enumerate(self.notes):
            w[p % 12] += d + (0.5 if k in (0, len(self.notes) - 1) else 0.0)   # first and last notes lean home
        _r, tonic, mode = rank_keys(w)[0]
        return tonic, mode


def grid_of(meter: tuple[int, int]) -> float:
    """The grid a phrase is cleaned to, in quarter-note beats: 16ths, eighths in compound meters."""
    num, den = meter
    return 0.5 if den == 8 and num % 3 == 0 and num > 3 else 0.25


def from_seconds(notes, bpm: float) -> list[tuple[float, float, int, int]]:
    """``(start_s, end_s, pitch, vel)`` → ``(start_beat, dur_beats, pitch, vel)`` at ``bpm``."""
    k = float(bpm) / 60.0
    return [(float(a) * k, max(0.0, float(b) - float(a)) * k, int(p), int(v)) for a, b, p, v in notes]


def clean(notes, meter: tuple[int, int] = (4, 4), grid: float | None = None) -> Theme:
    """Raw ``(start_beat, dur_beats, pitch, vel)`` notes → a :class:`Theme`. Raises
    :class:`ThemeError` when nothing playable is left."""
    bpb = meter[0] * 4.0 / meter[1]
    g = grid or grid_of(meter)
    raw = sorted((float(t), float(d), int(p), int(v)) for t, d, p, v in notes
                 if 0 <= int(p) <= 127 and float(d) >= MIN_RAW_BEATS and float(t) == float(t))
    if not raw:
        raise ThemeError("no notes in the phrase")
    # one note at a time: of notes struck together the highest is the tune (a melody sits on
    # top of its chords); a note struck while another sounds cuts it
    mono: list[list] = []
    for t, d, p, v in raw:
        if mono and t < mono[-1][0] + mono[-1][1] - 1e-6:
            last = mono[-1]
            if abs(t - last[0]) < g / 2:               # struck together: keep the top note
                if p > last[2]:
                    mono[-1] = [t, max(d, last[1]), p, max(v, last[3])]
                continue
            last[1] = t - last[0]                      # the next note cuts the one before
        mono.append([t, d, p, v])
    t0 = mono[0][0]
    out: list[list] = []
    raw_end = -1.0
    for t, d, p, v in mono:
        a = round((t - t0) / g) * g
        e = max(a + g, round((t - t0 + d) / g) * g)
        if out and out[-1][2] == p and t - raw_end < FRAGMENT_GAP_BEATS and d < g:
            out[-1][1] = max(out[-1][1], e - out[-1][0])   # a fragment of the same note: one note
            raw_end = t + d
            continue
        if out and a <= out[-1][0] + 1e-9:            # two onsets on one grid point: the longer stays
            if d > out[-1][1]:
                out[-1] = [out[-1][0], e - out[-1][0], p, v]
            raw_end = t + d
            continue
        if out:
            out[-1][1] = min(out[-1][1], a - out[-1][0])
        out.append([a, e - a, p, v])
        raw_end = t + d
    out = [n for n in out if n[1] >= MIN_NOTE_BEATS][:MAX_NOTES]
    limit = MAX_BARS * bpb
    out = [n for n in out if n[0] < limit - 1e-9]
    if not out:
        raise ThemeError("the phrase has no note long enough to sing")
    for n in out:
        n[1] = min(n[1], limit - n[0])
        n[3] = max(1, min(127, n[3]))
    end = max(n[0] + n[1] for n in out)
    bars = max(1, min(MAX_BARS, int(-(-end // bpb))))
    return Theme(tuple((round(a, 6), round(d, 6), p, v) for a, d, p, v in out), bars, bpb)


def motif_of(theme: Theme, key_root: int, scale: tuple[int, ...], beats_per_bar: float) -> list[list[tuple]]:
    """The theme in a piece's key as motif cells, one list per bar of ``beats_per_bar``:
    ``(position, duration, scale step from the tonic nearest the theme's first note)``."""
    tonic, _mode = theme.key()
    shift = (key_root - tonic) % 12
    if shift > 6:
        shift -= 12                                    # the nearer way: a tune moves at most a tritone
    sc = sorted(set(int(x) % 12 for x in scale))
    first = theme.notes[0][2] + shift
    home = first - ((first - key_root) % 12)           # the tonic at or below the first note
    bars = max(1, int(-(-max(n[0] + n[1] for n in theme.notes) // beats_per_bar)))
    cells: list[list[tuple]] = [[] for _ in range(min(MAX_BARS, bars))]
    for t, d, p, _v in theme.notes:
        b = int(t // beats_per_bar)
        if b >= len(cells):
            break
        pos = t - b * beats_per_bar
        cells[b].append((round(pos, 6), round(min(d, beats_per_bar - pos), 6), _steps(p + shift, home, sc)))
    for row in cells:
        if not row:
            row.append((0.0, beats_per_bar, 0))       # an empty bar of the tune: the tonic held
    return cells


def _steps(p: int, home: int, sc: list[int]) -> int:
    """Scale steps from ``home`` (a tonic) to ``p``, ``p`` moved to the nearest scale tone first
    (down on a tie: a blue note falls)."""
    while p % 12 not in sc:
        p -= 1
    octave, pc = divmod(p - home, 12)
    return octave * len(sc) + sorted((x - home) % 12 for x in sc).index(pc % 12)


def pitches_of_motif(cells, key_root: int, scale: tuple[int, ...], anchor: int) -> list[int]:
    """The pitches the motif cells sing from ``anchor`` (a tonic), for tests and tools."""
    sc = sorted(set(int(x) % 12 for x in scale))
    rel = sorted((x - key_root) % 12 for x in sc)
    out = []
    for row in cells:
        for _t, _d, step in row:
            o, k = divmod(step, len(rel))
            out.append(anchor + 12 * o + rel[k])
    return out
