"""The slot lifecycle: one state machine per slot, pure and thread-free.

A slot is always in exactly one named state:

========== ==============================================================================
idle       nothing audible, no job
starting   a job was started on a silent slot; its first audio is not out yet (appended)
playing    the current job is producing audio
replacing  a new job was started while the slot is audible; its first chunk is spliced at
           the read head, crossfading from whatever is audible (a playing job, a stop's fade,
           a finished job's last audio)
fading     a stop's fade is longer than what the ring holds: the job keeps generating under
           the rest of the fade's envelope and ends when the envelope reaches zero
draining   no job generates, but the ring still holds audio the reader has not heard (a
           finite job's last chunk, or a stop's fade that fitted in the ring)
switching  the host runs at another rate than the audible stream: the stream fades out at
           the read head, the ring changes rate, the job carries on resampled
error      the slot's job failed (its backend raised); behaves as idle for the next play
========== ==============================================================================

:class:`SlotMachine` takes events (:class:`Play`, :class:`Stop`, :class:`Param`,
:class:`ChunkReady`, :class:`Progress` — the read/write heads, the reader's rate and liveness,
sent every engine turn and after every write, and where the writer's void clock stands while
nobody reads —, :class:`PlayedOut` (a timed job's length played into the void),
:class:`Failed`, and :class:`Fault` / :class:`Close`
— the ring is lost, or the slot is removed: everything ends at once) and returns the actions
(small named tuples below) the engine thread executes, in order. It holds no ring, no backend,
no clock and no lock: jobs are opaque objects, positions are ring frames, so every transition
is a plain function of its inputs and can be tested exhaustively without threads.

Fades are :class:`Envelope` objects over absolute ring frames: an equal-power fade-out, and
shortening it (a second, shorter stop) adds a segment that starts from the current gain, so
the level stays continuous and the audio already in the ring is rescaled by ``new / old``
(never faded twice).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from dsp.splice import splice_start

IDLE, STARTING, PLAYING, REPLACING = "idle", "starting", "playing", "replacing"
FADING, DRAINING, SWITCHING, ERROR = "fading", "draining", "switching", "error"
STATES = (IDLE, STARTING, PLAYING, REPLACING, FADING, DRAINING, SWITCHING, ERROR)
#: states in which the ring holds audio the reader may still hear
AUDIBLE = (PLAYING, REPLACING, FADING, DRAINING, SWITCHING)


# ----------------------------------------------------------------------------- envelopes
class Envelope:
    """A stop's gain over absolute ring frames: 1 before the fade, 0 from :attr:`end` on.

    Segments ``(start, frames, g0)`` are equal-power fade-outs ``g0·cos(π/2·t)``, ``t`` going
    0 → 1 over ``frames``; the envelope is their pointwise minimum. :meth:`shortened` adds a
    segment starting at the envelope's own gain, so a shorter second stop bends the curve down
    without a step.
    """

    __slots__ = ("segments",)

    def __init__(self, segments: tuple = ()):
        self.segments = tuple(segments)

    @classmethod
    def fade_out(cls, start: int, frames: int) -> "Envelope":
        return cls(((int(start), max(1, int(frames)), 1.0),))

    @property
    def start(self) -> int:
        return self.segments[0][0]

    @property
    def end(self) -> int:
        """First frame at gain 0."""
        return min(s + n for s, n, _ in self.segments)

    def gains(self, start: int, n: int) -> np.ndarray:
        """float32 gains of frames ``start … start+n``."""
        p = np.arange(start, start + n, dtype=np.float64)
        g = np.ones(n, dtype=np.float64)
        for k, (s, m, g0) in enumerate(self.segments):
            seg = g0 * np.cos(np.clip((p - s) / m, 0.0, 1.0) * (math.pi / 2))
            if k:
                seg = np.where(p < s, np.inf, seg)
            np.minimum(g, seg, out=g)
        g[p >= self.end] = 0.0
        return g.astype(np.float32)

    def gain_at(self, p: int) -> float:
        return float(self.gains(int(p), 1)[0])

    def shortened(self, at: int, frames: int) -> "Envelope":
        """This envelope, ending by ``at + frames`` (itself if it already ends sooner)."""
        frames = max(1, int(frames))
        if at + frames >= self.end:
            return self
        return Envelope(self.segments + ((int(at), frames, self.gain_at(at)),))

    def rescale(self, new: "Envelope | None", start: int, n: int) -> np.ndarray:
        """Gains turning audio stored under ``self`` into audio under ``new`` (in [0, 1])."""
        g_new = new.gains(start, n) if new is not None else np.ones(n, np.float32)
        g_old = self.gains(start, n)
        out = np.zeros(n, dtype=np.float32)
        np.divide(g_new, g_old, out=out, where=g_old > 0)
        return np.clip(out, 0.0, 1.0, out=out)

    def __repr__(self) -> str:
        return f"Envelope({self.segments!r})"


# ----------------------------------------------------------------------------- events
class RingView(NamedTuple):
    """What the engine read of a slot's ring for this event (frames of the ring's rate)."""

    read: int                 # read_index
    write: int                # write_index
    guard: int                # splice/fade distance ahead of the read head
    rate: int                 # the ring's sample rate
    reader_rate: int = 0      # the host's rate (0 = unknown)
    reader_alive: bool = True
    reader_left: bool = False # a reader was there (it read at least once) and its heartbeat is stale
    #: nobody reads the ring: where the writer's private void clock has played it to (ring
    #: protocol, writer rule 9); None while a reader is there. ``read`` stays the reader's own
    void: int | None = None

    @property
    def head(self) -> int:
        """Where a fade or splice may start: ``read + guard``, or ``write`` if less is buffered."""
        return splice_start(self.read, self.write, self.guard)


class Play(NamedTuple):
    job: object               # the new job, already started by the backend
    ring: RingView


class Stop(NamedTuple):
    fade_frames: int
    reply_to: object
    ring: RingView


class Param(NamedTuple):
    name: str
    value: float


class ChunkReady(NamedTuple):
    job: object
    chunk: object             # the engine's Chunk (opaque here), already prebuffered
    first: bool
    last: bool


class Progress(NamedTuple):
    ring: RingView


class Failed(NamedTuple):
    job: object
    ring: RingView


class PlayedOut(NamedTuple):
    """Nobody reads the slot and, by the writer's void clock, the timed ``job``'s whole length has
    played (its audio could not all be made: the ring is full of audio nobody read)."""
    job: object


class Fault(NamedTuple):
    """The slot's ring is gone under the writer (a segment that shrank, now private memory) or
    could not be had at all: every job ends now, no fade (nobody can hear one); the slot is in
    error until a play gets it a ring again."""
    reply_to: object = None


class Close(NamedTuple):
    """The slot is going away (a web stream's private slot): every job ends now, no fade."""
    reply_to: object = None


# ----------------------------------------------------------------------------- actions
class End(NamedTuple):
    """Release the job's stream and report it done (``reason``), to ``reply_to`` or its requester."""
    job: object
    reason: str
    reply_to: object = None


class Release(NamedTuple):
    """Release the job's stream without a report (done comes later, or an error was sent)."""
    job: object


class Reattach(NamedTuple):
    """Make ``job`` the slot's generating job again (a pending replacement was cancelled)."""
    job: object


class Write(NamedTuple):
    """Run the chunk through the pipeline and append it, or splice it at the read head."""
    chunk: object
    splice: bool
    env: Envelope | None      # append: the envelope over this chunk; splice: over the old material
    old: object               # splice: the job whose continuation is crossfade material (or None)
    fade_in: bool             # the stream starts from silence


class FadeRing(NamedTuple):
    """Rescale ring frames ``[at, write)`` from envelope ``old`` (None: unfaded) to ``new``; then
    cut the stream at ``new.end`` if that is before ``write``."""
    old: Envelope | None
    new: Envelope
    at: int
    job: object               # for the metadata (stop_at / end_at)


class Tail(NamedTuple):
    """The stream stops short (its job failed with less than a fade buffered): append ``frames``
    of its last audio mirrored in time and faded out, so it ends without a step."""
    frames: int


class Drop(NamedTuple):
    """Unpublish what nobody heard (``write_index = read_index``): the reader left while the slot
    went silent, and a reader attaching later must not hear the old job."""


class SetPlaying(NamedTuple):
    playing: bool


class FirstAudio(NamedTuple):
    job: object


class SetRate(NamedTuple):
    """Change the ring's rate (epoch bump); hold new audio until the reader has followed."""
    rate: int


class Hold(NamedTuple):
    """Keep the chunk; it is written (in order) after the next :class:`Flush`."""
    chunk: object


class Flush(NamedTuple):
    """Feed every held chunk back as :class:`ChunkReady` events."""


class Error(NamedTuple):
    code: str
    message: str
    reply_to: object = None


class SetParam(NamedTuple):
    job: object               # the generating job (None: store for the next one)
    name: str
    value: float


#: short fade at a rate switch and when a fault or a lost reader ends a slot now
QUICK_FADE_S = 0.02


# ----------------------------------------------------------------------------- the machine
class SlotMachine:
    """One slot's lifecycle. :meth:`handle` is the whole transition table. ``[engine]`` (pure)."""

    def __init__(self, slot=None):
        self.slot = slot
        self.state = IDLE
        self.job = None            # the generating job (starting, playing, replacing, fading, switching)
        self.old = None            # replacing: the audible job whose continuation is crossfade material
        self.prev = None           # replacing: (state, job, env, end, tail, reply) to go back to on stop
        self.env: Envelope | None = None    # the audible stream's stop envelope (fading, draining, replacing)
        self.end: int | None = None         # draining/switching: where the audible audio ends (None: write)
        self.tail = None           # draining: a finished job whose last audio is still heard
        self.reply = None          # reply_to of the stop in progress
        self.rate = 0              # switching: the rate to switch to
        self.sounded = False       # the generating job has been heard
        self.fade_in = False       # the next write starts from silence
        self.held = 0              # chunks held (switching)

    # ------------------------------------------------------------------ helpers
    def _set(self, state, **fields) -> None:
        self.state = state
        for k in ("job", "old", "prev", "env", "end", "tail", "reply"):
            setattr(self, k, fields.get(k))

    def reset(self) -> None:
        """Idle, holding no job: at shutdown, once the engine has ended every job itself. ``[engine]``"""
        self._set(IDLE)

    def snapshot(self) -> dict:
        return {"state": self.state, "job": self.job, "old": self.old, "env": self.env, "end": self.end,
                "tail": self.tail}

    @property
    def busy(self) -> bool:
        """Something is to be written or heard."""
        return self.state != IDLE and self.state != ERROR

    # ------------------------------------------------------------------ the table
    def handle(self, ev) -> list:
        kind = type(ev).__name__
        return getattr(self, "_on_" + kind.lower())(ev)

    # play ---------------------------------------------------------------
    def _on_play(self, ev: Play) -> list:
        st, new = self.state, ev.job
        out = []
        if st in (IDLE, ERROR, STARTING):
            if st == STARTING:
                out.append(End(self.job, "replaced"))
            self._set(STARTING, job=new)
            self.sounded, self.fade_in = False, True
            return out
        if st == REPLACING:                 # the pending job never sounded: drop it, keep the audible one
            out.append(End(self.job, "replaced"))
            self.job = new
            return out
        if st == SWITCHING:                 # the stream is fading for a rate switch: start over after it
            out.append(End(self.job, "replaced"))
            self.job, self.sounded, self.fade_in = new, False, True
            return out
        # playing, fading, draining: crossfade from what is audible, at the read head
        prev = (st, self.job, self.env, self.end, self.tail, self.reply)
        old = self.job if st in (PLAYING, FADING) else None
        if st == DRAINING and self.tail is not None:
            out.append(End(self.tail, "replaced"))
            prev = (st, None, self.env, self.end, None, None)
        self._set(REPLACING, job=new, old=old, prev=prev, env=self.env, reply=self.reply)
        self.sounded, self.fade_in = False, False
        return out

    # stop ---------------------------------------------------------------
    def _on_stop(self, ev: Stop) -> list:
        st, r = self.state, ev.ring
        n = max(1, int(ev.fade_frames))
        if st in (IDLE, ERROR):
            return [Error("not_playing", f"slot {self.slot} is not playing", ev.reply_to)]
        if st == STARTING:                  # never sounded
            job = self.job
            self._set(IDLE)
            return [End(job, "stopped", ev.reply_to)]
        if st == REPLACING:                 # cancel the replacement, then stop what is audible
            out = [End(self.job, "stopped", ev.reply_to)]
            pst, pjob, penv, pend, ptail, preply = self.prev
            self._set(pst, job=pjob, env=penv, end=pend, tail=ptail, reply=preply)
            self.sounded = True
            if pjob is not None:
                out.append(Reattach(pjob))
            return out + self._on_stop(ev)
        if st == SWITCHING:                 # already fading out quickly; the job ends here
            job = self.job
            self._set(DRAINING, end=self.end)
            return [End(job, "stopped", ev.reply_to)]
        at = r.head
        env = self.env.shortened(at, n) if self.env is not None else Envelope.fade_out(at, n)
        if env is self.env:                 # a longer stop than the one in progress: it changes nothing
            if st == FADING:
                self.reply = ev.reply_to or self.reply
            return [End(self.tail, "stopped", ev.reply_to)] if st == DRAINING and self.tail is not None else []
        out = [FadeRing(self.env, env, at, self.job or self.tail)]
        if st == DRAINING:
            if self.tail is not None:
                out.append(End(self.tail, "stopped", ev.reply_to))
            self._set(DRAINING, env=env, end=min(env.end, self.end if self.end is not None else env.end))
            return out
        # playing or fading
        if env.end <= r.write:              # the whole fade is in the ring
            out += [SetPlaying(False), End(self.job, "stopped", ev.reply_to or self.reply)]
            self._set(DRAINING, env=env, end=env.end)
            return out
        self._set(FADING, job=self.job, env=env, reply=ev.reply_to or self.reply)
        return out

    # param ---------------------------------------------------------------
    def _on_param(self, ev: Param) -> list:
        return [SetParam(self.job, ev.name, ev.value)]

    # chunk ---------------------------------------------------------------
    def _on_chunkready(self, ev: ChunkReady) -> list:
        st = self.state
        if ev.job is not self.job or st not in (STARTING, PLAYING, REPLACING, FADING, SWITCHING):
            return []                       # stale: replaced or stopped meanwhile
        job = ev.job
        if st == SWITCHING:
            self.held += 1
            return [Hold(ev.chunk)]
        out = []
        if st == REPLACING:
            out.append(Write(ev.chunk, True, self.env, self.old, False))
            if self.old is not None:
                pst = self.prev[0]
                out.append(End(self.old, "stopped" if pst == FADING else "replaced",
                               self.reply if pst == FADING else None))
            self._set(PLAYING, job=job)
        elif st == FADING:
            out.append(Write(ev.chunk, False, self.env, None, self.fade_in))
        else:
            out.append(Write(ev.chunk, False, None, None, self.fade_in))
            self._set(PLAYING, job=job)
        self.fade_in = False
        if not self.sounded:
            self.sounded = True
            out += [SetPlaying(True), FirstAudio(job)]
        if ev.last:                         # all generated: done once heard (draining)
            if self.state == FADING:
                out += [SetPlaying(False), End(job, "stopped", self.reply)]
                self._set(DRAINING, env=self.env)
            else:
                out += [SetPlaying(False), Release(job)]
                self._set(DRAINING, tail=job)
        return out

    # progress ------------------------------------------------------------
    def _on_progress(self, ev: Progress) -> list:
        st, r = self.state, ev.ring
        if st == FADING:
            out = []
            if not r.reader_alive:          # nobody hears the long fade: finish it now
                out = self._on_stop(Stop(int(QUICK_FADE_S * r.rate), None, r))
                if self.state != FADING:
                    return out
            if self.env.end <= r.write:     # (also when the quick stop could not shorten it)
                job = self.job
                out += [SetPlaying(False), End(job, "stopped", self.reply)]
                self._set(DRAINING, env=self.env, end=self.env.end)
            return out
        if st == DRAINING:
            end = r.write if self.end is None else min(self.end, r.write)
            if r.void is not None:          # nobody reads: done once the void's clock played it
                heard = r.void >= end
            else:
                heard = r.read >= end or not r.reader_alive
            if heard:
                tail = self.tail
                self._set(IDLE)
                out = [Drop()] if r.reader_left else []
                return out + ([End(tail, "finished")] if tail is not None else [])
            return []
        if st == SWITCHING:
            if r.read >= min(self.end, r.write) or not r.reader_alive:
                rate, job, sounded = self.rate, self.job, self.sounded
                self._set(PLAYING if sounded else STARTING, job=job)
                self.fade_in, self.held = True, 0
                return [SetRate(rate), Flush()]
            return []
        if st in (IDLE, ERROR) and r.reader_left and r.write > r.read:
            return [Drop()]                 # a silent slot's last audio that nobody heard
        if st == STARTING and r.void is not None and r.write > r.read:
            return [Drop()]                 # nobody reads: the job starts on an empty ring, not behind old audio
        want = r.reader_rate
        if not want or want == r.rate or not r.reader_alive or not 8000 <= want <= 384000:
            return []
        if st in (IDLE, ERROR, STARTING):  # nothing audible (once a stop's last audio is heard): switch
            return [SetRate(want)] if r.read >= r.write else []
        if st == PLAYING:                   # fade out at the read head, switch, carry on resampled
            at, n = r.head, int(QUICK_FADE_S * r.rate)
            if r.write - at < n:
                return []                   # too little buffered for the fade: at the next turn
            env = Envelope.fade_out(at, n)
            self.state, self.env, self.end, self.rate, self.held = SWITCHING, env, min(env.end, r.write), want, 0
            return [FadeRing(None, env, at, self.job), SetPlaying(False)]
        return []                           # replacing / fading / draining: once it settles

    # played out into the void -------------------------------------------
    def _on_playedout(self, ev: PlayedOut) -> list:
        if ev.job is not self.job or self.state != PLAYING:
            return []
        job = self.job
        self._set(IDLE)
        return [SetPlaying(False), Release(job), End(job, "finished")]

    # failure -------------------------------------------------------------
    def _on_failed(self, ev: Failed) -> list:
        if ev.job is not self.job:
            return []
        r = ev.ring
        out = [Release(ev.job)]
        if self.old is not None:
            out.append(End(self.old, "stopped"))
        if self.tail is not None:
            out.append(End(self.tail, "stopped"))
        if self.state in AUDIBLE and self.sounded or self.state in (REPLACING, FADING):
            at, n = r.head, int(QUICK_FADE_S * r.rate)
            if r.write - at >= n:           # fade out in what is buffered
                env = self.env.shortened(at, n) if self.env is not None else Envelope.fade_out(at, n)
                if env is not self.env:
                    out.append(FadeRing(self.env, env, at, ev.job))
            elif r.write > r.read:          # too little left and no more audio comes: a mirrored tail
                out.append(Tail(n))
        out.append(SetPlaying(False))
        self._set(ERROR)
        return out

    # ring lost / slot closed ---------------------------------------------
    def _end_now(self, state: str, reply_to) -> list:
        """Every job of the slot (generating, being replaced, draining) ends at once."""
        out, seen = [], set()
        for j in (self.job, self.old, self.tail):
            if j is not None and id(j) not in seen:
                seen.add(id(j))
                out.append(End(j, "stopped", reply_to))
        out.append(SetPlaying(False))
        self._set(state)
        self.sounded, self.fade_in, self.held = False, False, 0
        return out

    def _on_fault(self, ev: Fault) -> list:
        return self._end_now(ERROR, ev.reply_to)

    def _on_close(self, ev: Close) -> list:
        return self._end_now(IDLE, ev.reply_to)
