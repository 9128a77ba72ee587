"""The score: what the synth's composer decides and its renderers play.

A :class:`Score` is the contract between ``engine.compose.composer`` (prompt → score) and the renderers
(score → audio: FluidSynth with a General MIDI SoundFont, or the oscillator fallback). It holds
the piece's global facts (tempo, meter, key, genre, parts with their GM programs and mix) and
produces its notes **bar by bar, on demand**: :meth:`Score.bar` is a pure function of
``(prompt, seed, bar index)``, so an endless job never needs the whole piece in memory, a
renderer can look ahead as far as it likes, and two renders of one score agree note for note.

Time inside a score is in **beats** (quarter notes) from the score's origin; bar ``i`` starts at
``i * beats_per_bar``. Swing and humanisation are already applied to the notes' ``start`` (the
composer owns micro-timing); the renderer only maps beats to frames through a :class:`TempoMap`,
which is where host tempo and bar lock (issue #15) act without touching the composer.

Pure data and arithmetic: no threads, no I/O. Built on the ``[engine]`` thread (or the
``render`` command), read by whoever renders.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable

DRUM_CHANNEL = 9            # GM percussion channel (0-based)


@dataclass(frozen=True)
class Note:
    """One note of one part. ``start``/``dur`` in beats (absolute, from the score's origin)."""

    part: int                # index into Score.parts
    start: float
    dur: float
    pitch: int               # MIDI note 0..127 (GM drum map on the drum part)
    vel: int                 # 1..127


@dataclass(frozen=True)
class Control:
    """A continuous control of one part at a beat: ``kind`` is ``"cc"`` (``number`` 0..127,
    ``value`` 0..127) or ``"bend"`` (``value`` in semitones, −2..+2 with the GM default range)."""

    part: int
    beat: float
    kind: str
    value: float
    number: int = 0


@dataclass(frozen=True)
class Part:
    """One instrument of the arrangement and its place in the mix."""

    name: str                # the word or role it came from: "rhodes", "bass", "drums", …
    role: str                # drums | bass | chords | pad | lead | arp | perc
    program: int             # GM program 0..127 (for drums: the GM kit number, 0 standard … 40 brush)
    channel: int             # MIDI channel 0..15; DRUM_CHANNEL for drums
    level: float = 0.8       # linear mix level 0..1 (the renderer normalises the sum)
    pan: float = 0.0         # −1 left … +1 right
    reverb: float = 0.2      # send 0..1
    chorus: float = 0.0      # send 0..1
    drive: float = 0.0       # 0 clean; > 0 through a guitar amp and cabinet, 1 high gain (engine.synth.amp)

    @property
    def is_drums(self) -> bool:
        return self.channel == DRUM_CHANNEL


@dataclass
class Score:
    """A whole piece, endless or not; its notes come from :meth:`bar`."""

    prompt: str
    seed: int
    bpm: float
    meter: tuple[int, int]                   # (4, 4), (3, 4), (6, 8), …
    key_root: int                            # pitch class of the tonic, 0 = C
    mode: str                                # "major", "minor", "dorian", …
    genre: str                               # the genre it was read as ("house", "waltz", …)
    parts: list[Part]
    swing: float = 0.0                       # 0 straight … ~0.33 hard swing, for describe()
    #: the felt beat in quarter notes: 1 in simple meters, 1.5 (a dotted quarter) in 6/8, 9/8, 12/8
    beat: float = 1.0
    #: additive meters' grouping in eighths (7/8 → (2, 2, 3)); () when the meter is not additive
    groups: tuple[int, ...] = ()
    #: the style's own colour in the mix: −1 dark (lofi) … 0 neutral … +1 bright (metal)
    tone: float = 0.0
    #: composer's bar generator: bar index → (notes starting in that bar, controls in that bar)
    make_bar: Callable[[int], tuple[list[Note], list[Control]]] = field(default=None, repr=False)
    #: bar index → section name ("intro", "A", "B", "break", "fill" …), for describe() and tests
    section_of: Callable[[int], str] = field(default=None, repr=False)
    #: bar index → chord as MIDI pitches (root first), for tests and the MIDI file
    chord_of: Callable[[int], tuple[int, ...]] = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def beats_per_bar(self) -> float:
        """Bar length in quarter-note beats: 4/4 → 4, 3/4 → 3, 6/8 → 3, 7/8 → 3.5."""
        num, den = self.meter
        return num * 4.0 / den

    @property
    def beat_bpm(self) -> float:
        """The tempo in felt beats a minute: 6/8 at ``bpm`` 180 (quarters) is 120 dotted quarters."""
        return self.bpm / self.beat

    @property
    def key_name(self) -> str:
        names = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]
        return f"{names[self.key_root % 12]} {self.mode}"

    def bar(self, i: int) -> tuple[list[Note], list[Control]]:
        """Notes and controls that *start* in bar ``i`` (a note may ring into later bars).
        Pure in ``i``; the last few bars asked for are cached."""
        hit = self._cache.get(i)
        if hit is None:
            hit = self.make_bar(i)
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[i] = hit
        return hit

    def notes_between(self, b0: float, b1: float) -> list[Note]:
        """Every note whose start lies in ``[b0, b1)`` beats, in start order."""
        bpb = self.beats_per_bar
        out: list[Note] = []
        for i in range(max(0, int(b0 // bpb) - 1), int(b1 // bpb) + 1):
            out.extend(n for n in self.bar(i)[0] if b0 <= n.start < b1)
        out.sort(key=lambda n: (n.start, n.part, n.pitch))
        return out

    def describe(self) -> dict:
        return {"bpm": round(self.bpm, 1), "meter": f"{self.meter[0]}/{self.meter[1]}",
                "key": self.key_name, "genre": self.genre, "swing": round(self.swing, 2),
                "instruments": [f"{p.name}:{'kit' if p.is_drums else 'prog'}{p.program}" for p in self.parts]}


class TempoMap:
    """Beats ↔ frames for one stream: piecewise-constant tempo, continuous in both directions.

    Starts at ``bpm`` with beat ``beat0`` at frame 0. :meth:`set_bpm` changes tempo from a frame
    on (the past is never re-timed, so a tempo change cannot move a note already played);
    :meth:`align` shifts the beat grid so that ``beat`` falls on ``frame`` (bar lock to a host).
    """

    def __init__(self, bpm: float, sample_rate: int, beat0: float = 0.0):
        self.sr = int(sample_rate)
        self._frames = [0]                 # segment start frames
        self._beats = [float(beat0)]       # beat at each segment start
        self._bpm = [float(bpm)]

    @property
    def bpm(self) -> float:
        return self._bpm[-1]

    def beat_at(self, frame: float) -> float:
        k = max(0, bisect.bisect_right(self._frames, frame) - 1)
        return self._beats[k] + (frame - self._frames[k]) * self._bpm[k] / (60.0 * self.sr)

    def bpm_at(self, frame: float) -> float:
        """The tempo in force at ``frame``."""
        return self._bpm[max(0, bisect.bisect_right(self._frames, frame) - 1)]

    def spans(self, f0: float, f1: float) -> list[tuple[float, float, float]]:
        """``(start, end, bpm)`` of the tempo segments covering frames ``[f0, f1)``."""
        out = []
        k = max(0, bisect.bisect_right(self._frames, f0) - 1)
        while k < len(self._frames) and self._frames[k] < f1:
            end = self._frames[k + 1] if k + 1 < len(self._frames) else f1
            out.append((max(f0, self._frames[k]), min(f1, end), self._bpm[k]))
            k += 1
        return out

    def frame_at(self, beat: float) -> float:
        k = max(0, bisect.bisect_right(self._beats, beat) - 1)
        return self._frames[k] + (beat - self._beats[k]) * 60.0 * self.sr / self._bpm[k]

    def set_bpm(self, bpm: float, from_frame: int) -> None:
        """Tempo ``bpm`` from ``from_frame`` on (at or after the last change)."""
        from_frame = max(int(from_frame), self._frames[-1])
        b = self.beat_at(from_frame)
        if from_frame == self._frames[-1]:
            self._beats[-1], self._bpm[-1] = b, float(bpm)
        else:
            self._frames.append(from_frame)
            self._beats.append(b)
            self._bpm.append(float(bpm))
        self._trim()

    def align(self, frame: int, beat: float, bpm: float | None = None) -> None:
        """From ``frame`` on, ``beat`` is at ``frame`` (and the tempo is ``bpm`` if given)."""
        frame = max(int(frame), self._frames[-1])
        bpm = self.bpm if bpm is None else float(bpm)
        if frame == self._frames[-1]:
            self._beats[-1], self._bpm[-1] = float(beat), bpm
        else:
            self._frames.append(frame)
            self._beats.append(float(beat))
            self._bpm.append(bpm)
        self._trim()

    def discard_after(self, frame: int) -> None:
        """Forget tempo changes planned after ``frame`` (not yet rendered), so a newer plan can
        replace them; the segment holding ``frame`` keeps going. ``[engine]``"""
        k = bisect.bisect_right(self._frames, int(frame))
        if k >= 1:
            del self._frames[k:], self._beats[k:], self._bpm[k:]

    def _trim(self) -> None:
        if len(self._frames) > 256:         # keep the recent past only (bounded memory)
            del self._frames[:128], self._beats[:128], self._bpm[:128]
