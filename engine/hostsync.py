"""Host sync: lock a playing stream's beat grid to a DAW's transport.

The plugin inside the DAW reports, a few times a second, where the host's transport is
(``/wb/transport``: tempo, bar, beat within the bar, and the ring frame its read head was
playing at that moment). The daemon turns that ring frame into the stream's own frame
(:class:`HostPosition`) and hands it to :class:`HostSync`, which edits the stream's
:class:`~engine.score.TempoMap` so that what the renderer writes from now on follows the host:

- **tempo** — the host's bpm applies from the score's next beat line, so no note already
  rendered moves and the change is heard within a beat;
- **bar phase** — the score's bar lines land on the host's bar lines (beat lines when the two
  meters differ). A small phase error is taken up smoothly over one beat (that beat is played a
  little faster or slower, never more than ``max_slew`` faster or slower); one too big for a
  beat over the fewest beats, up to a bar's worth, that stay within ``max_slew`` (a late report
  after a tempo jump); a large one (a relocate, a first lock) holds one beat until the host's
  next line comes — the grid never skips or goes
  back, so the renderer never fires skipped notes at once;
- **start** — a stream that has rendered nothing yet starts in phase: its first frame is
  given the score beat that puts the score's bar lines on the host's (within ``start_slack``
  beats after a host bar line it starts in its first bar, otherwise its first bar begins at the
  host's next bar line);
- **quantize** — :meth:`HostSync.next_boundary_frame` is the frame of the next beat or bar line,
  where a quantized prompt change is spliced in.

Frames here are the stream's frames (the TempoMap's), at its sample rate. Updates only ever
change the map from the render head on (``head``: the first frame not yet rendered): the past
is never re-timed. Pure arithmetic on the TempoMap, no threads and no I/O; called on the
``[engine]`` thread by the backend that owns the stream.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.score import TempoMap

QUANTIZE = ("off", "beat", "bar")


@dataclass(frozen=True)
class HostPosition:
    """The host's transport at one frame of the stream.

    ``beat`` is the host's absolute beat (``bar × beats_per_bar + bar_beat``) at stream frame
    ``frame`` (may be fractional, and may lie before or after the render head).
    """

    bpm: float
    beat: float
    frame: float
    beats_per_bar: float = 4.0
    speed: float = 1.0

    def beat_at(self, frame: float, sample_rate: int) -> float:
        """The host's beat at ``frame``, extrapolated at its tempo."""
        return self.beat + (frame - self.frame) * self.bpm * self.speed / (60.0 * sample_rate)

    def frame_at(self, beat: float, sample_rate: int) -> float:
        """The frame where the host reaches ``beat`` (rolling forward)."""
        return self.frame + (beat - self.beat) * 60.0 * sample_rate / (self.bpm * self.speed)


class HostSync:
    """Keeps one stream's TempoMap locked to a host. ``[engine]``

    ``beats_per_bar`` is the score's bar length in beats. ``tolerance_frames``: a phase error
    below it is left alone (repeated reports of an unchanged transport do not touch the map).
    """

    def __init__(self, tempo: TempoMap, beats_per_bar: float = 4.0, *, tolerance_frames: int = 16,
                 max_slew: float = 1.25, start_slack: float = 0.25):
        self.tempo = tempo
        self.start_slack = float(start_slack)     # beats past a bar line a start may begin in it
        self.beats_per_bar = float(beats_per_bar)
        self.tolerance_frames = int(tolerance_frames)
        self.max_slew = float(max_slew)
        self.max_plan = max(1, int(math.ceil(beats_per_bar)))   # beats a phase error may be spread over
        self.last: HostPosition | None = None
        self.last_action = ""

    @property
    def sr(self) -> int:
        return self.tempo.sr

    def _unit(self, pos: HostPosition) -> float:
        """What is locked: whole bars when the meters agree, else beats."""
        return self.beats_per_bar if abs(pos.beats_per_bar - self.beats_per_bar) < 1e-6 else 1.0

    def update(self, pos: HostPosition, head: int, start: bool | None = None) -> str:
        """Follow ``pos`` from the render head ``head`` on. Returns what was done: ``start``,
        ``locked`` (nothing to do), ``slew``, ``wait`` (one beat held until the host's line) or
        ``stopped`` (host not rolling). ``start`` (default: nothing rendered yet) places a new
        stream's first bar; ``False`` keeps the grid's beat at ``head`` (a continuation that
        starts mid-score) and locks from its next beat line."""
        if not (pos.bpm > 0 and math.isfinite(pos.bpm) and math.isfinite(pos.beat)):
            raise ValueError(f"bad host position {pos}")
        self.last = pos
        if pos.speed <= 0:
            self.last_action = "stopped"
            return self.last_action
        sr, tempo = self.sr, self.tempo
        head = max(0, int(head))
        unit = self._unit(pos)
        tempo.discard_after(head)            # a plan made from an older report is replaced
        if (head == 0) if start is None else start:
            # nothing rendered: start in phase. Just past a host bar line the score starts in
            # its first bar (the notes of those few ms sound at once); further in, its first bar
            # waits for the host's next bar line (silence until then) rather than rush a burst
            b0 = pos.beat_at(0, sr)
            phase = b0 - math.floor(b0 / unit) * unit
            tempo.align(0, phase if phase <= self.start_slack else phase - unit, pos.bpm)
            self.last_action = "start"
            return self.last_action
        s_head = tempo.beat_at(head)
        b_next = math.ceil(s_head - 1e-9)
        f_next = tempo.frame_at(b_next)
        # the score beat the host says f_next should carry, up to a whole number of units
        h_next = pos.beat_at(f_next, sr)
        offset = round((h_next - b_next) / unit) * unit           # host beat − score beat
        err_frames = (pos.frame_at(b_next + offset, sr) - f_next)
        bpm_there = tempo.bpm                   # the segment holding head, after the discard
        nominal = 60.0 * sr / pos.bpm
        if abs(err_frames) <= self.tolerance_frames and \
                abs(bpm_there - pos.bpm) <= pos.bpm * 2.0 * self.tolerance_frames / nominal:
            # in phase; the head may sit in a beat slewed by a few frames (its return to the
            # host's tempo was discarded with the old plan above): the host's tempo from the next
            # line — not another slew of the rounding, which would never settle
            if bpm_there != pos.bpm:
                tempo.align(int(round(f_next)), b_next, pos.bpm)
            self.last_action = "locked"
            return self.last_action
        # slew: beats b_next … b_next + n span [f_next, fn] and land on the host's grid at fn —
        # the fewest beats (one, or up to a bar's worth, ``max_plan``) that are each played at
        # most ``max_slew`` faster or slower. The grid's beats only ever move forward and never
        # skip (the tempo map and the renderer, which plays every note it passes, need that):
        # beyond that (a relocate) one beat waits for the host's next line ("wait": held longer)
        for n in range(1, self.max_plan + 1):
            fn = pos.frame_at(b_next + n + offset, sr)
            if nominal / self.max_slew <= (fn - f_next) / n <= nominal * self.max_slew:
                return self._plan(f_next, b_next, fn, n, pos.bpm, "slew")
        f1 = pos.frame_at(b_next + 1 + offset, sr)
        if f1 - f_next < nominal / self.max_slew:
            offset += unit
            f1 = pos.frame_at(b_next + 1 + offset, sr)
        return self._plan(f_next, b_next, f1, 1, pos.bpm,
                          "slew" if f1 - f_next <= nominal * self.max_slew else "wait")

    def _plan(self, f0: float, b0: float, f1: float, n: int, bpm: float, action: str) -> str:
        """Beats ``b0 … b0 + n`` span frames ``[f0, f1]``, then ``bpm``."""
        self.tempo.align(int(round(f0)), b0, 60.0 * self.sr * n / (f1 - f0))
        self.tempo.align(int(round(f1)), b0 + n, bpm)
        self.last_action = action
        return action

    def next_boundary_frame(self, after: float, quantize: str) -> int:
        """The first frame at or after ``after`` that starts a beat (``beat``) or a bar
        (``bar``) of the score; ``off`` is ``after`` itself."""
        if quantize not in QUANTIZE:
            raise ValueError(f"quantize must be one of {QUANTIZE}, got {quantize!r}")
        if quantize == "off":
            return int(math.ceil(after))
        unit = self.beats_per_bar if quantize == "bar" else 1.0
        b = self.tempo.beat_at(after)
        nb = math.ceil(b / unit - 1e-9) * unit
        return int(math.ceil(self.tempo.frame_at(nb) - 1e-6))


def stream_frame(read_index: int, start_at: int, ring_rate: int, stream_rate: int) -> float:
    """The stream frame the reader plays at ring frame ``read_index``, for a stream whose frame 0
    was written at ring frame ``start_at`` (rates differ when the daemon resamples)."""
    return (read_index - start_at) * (stream_rate / ring_rate)
