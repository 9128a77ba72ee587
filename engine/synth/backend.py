"""synth: the embedded, weight-free backend — the composer's score played by a renderer.

``start`` composes the prompt into a :class:`~engine.score.Score` (``engine.compose.composer``, a few
ms) and makes the stream's :class:`~engine.synth.perform.Performance`: its own tempo map, a warm
FluidSynth instance from the pool (``engine.synth.fluid``) or, without libfluidsynth or a SoundFont,
the oscillator fallback (``engine.synth.oscillators``), and its mix (loudness follower and limiter,
starting from the score's calibrated loudness, so every prompt plays near −14 LUFS).
``generate`` reads each stream's next frames from its performance (fixed-grid production, so
chunking never changes the audio); ``end`` hands the instance back. Which renderer runs is
logged at warmup and reported by :attr:`SynthBackend.renderer` (the daemon's ``/wb/engine``
reply). Deterministic per (prompt, seed).

Construction and ``warmup``/``close`` run on ``[control]``; the rest on the ``[engine]`` thread,
which hands a batch's streams to a few render workers (threads; one stream per worker at a
time) so FluidSynth, which renders with the GIL released, uses every core.
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine.backend import Backend, BackendError, Stream
from engine.hostsync import HostSync
from engine.synth.fluid import FluidPool, FluidUnavailable
from engine.synth.oscillators import OscInstrument, expected_lufs
from engine.synth.perform import BLOCK, Performance

log = logging.getLogger("wavebridge.synth")


class SynthBackend(Backend):
    """The embedded default backend (``renderer``: ``"auto"``, ``"fluidsynth"`` or ``"oscillators"``;
    default ``$WAVEBRIDGE_SYNTH_RENDERER`` or ``"auto"``: FluidSynth if it and a SoundFont are there)."""

    name = "synth"
    channels = 2
    max_batch = 256
    #: a performance renders whole BLOCK-frame blocks: a chunk of a block costs what the block
    #: costs, so chunks are whole blocks (a first chunk of 4096 frames for the price of 2048)
    granularity = BLOCK
    #: seconds before a continuation's start that it performs and drops (see :meth:`continuation`)
    CONTINUATION_PREROLL_S = 0.5
    params = {
        "gain": (0.0, 4.0, 1.0),
        "brightness": (0.0, 1.0, -1.0),
        "temperature": (0.0, 2.0, 1.0),   # accepted for a uniform surface; the synth is deterministic
        "guidance": (0.0, 10.0, 3.0),
        "top_k": (1.0, 2048.0, 250.0),
    }

    def __init__(self, sample_rate: int = 48000, soundfont: str | None = None, renderer: str | None = None,
                 pool_size: int = 16, workers: int | None = None, composer=None, **_ignored):
        if renderer is None:             # the environment may pin one (benchmarks, comparisons)
            renderer = os.environ.get("WAVEBRIDGE_SYNTH_RENDERER", "auto")
        if renderer not in ("auto", "fluidsynth", "oscillators"):
            raise BackendError(f"unknown renderer {renderer!r}: auto, fluidsynth or oscillators")
        self.sample_rate = int(sample_rate)
        self.soundfont = soundfont
        self.want_renderer = renderer
        self.pool_size = int(pool_size)
        self._compose = composer
        self._tempo: float | None = None
        self._pool = None
        self._warm = False
        self._live: dict[int, Stream] = {}
        self.workers = max(1, min(4, os.cpu_count() or 1)) if workers is None else max(1, int(workers))
        self._workers = None
        self.renderer = "oscillators"
        self.renderer_detail = ""

    # --- lifecycle
    def warmup(self) -> None:
        """Pick the renderer, make the FluidSynth pool (one SoundFont load), render once. ``[control]``"""
        if self._warm:
            return
        if self.want_renderer != "oscillators":
            try:
                pool = FluidPool(self.soundfont, self.sample_rate, size=self.pool_size)
                pool.warmup()
                self._pool = pool
                self.renderer = "fluidsynth"
                self.renderer_detail = pool.path
            except FluidUnavailable as e:
                if self.want_renderer == "fluidsynth" or self.soundfont:
                    raise BackendError(str(e)) from None
                self.renderer_detail = str(e)
                log.warning("synth: %s; using the oscillator fallback renderer", e)
        if self.renderer == "fluidsynth":
            log.info("synth: renderer fluidsynth (SoundFont %s)", self.renderer_detail)
        else:
            log.info("synth: renderer oscillators (fallback%s)",
                     f": {self.renderer_detail}" if self.renderer_detail else "")
        if self.workers > 1:
            self._workers = ThreadPoolExecutor(self.workers, thread_name_prefix="wb-render")
        self._warm = True
        s = self.start(0, "warm up: drums, bass, piano, strings and a lead", 0)
        self.generate([s], 4096)
        self.end(s)

    def close(self) -> None:
        """Free the synth instances. ``[control]`` at shutdown."""
        for s in list(self._live.values()):
            self.end(s)
        if self._workers is not None:
            self._workers.shutdown(wait=True)
            self._workers = None
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._warm = False

    def describe(self) -> str:
        """One line for logs and ``/wb/engine``: the renderer and its SoundFont."""
        if self.renderer == "fluidsynth":
            return f"fluidsynth:{os.path.basename(self.renderer_detail)}"
        return "oscillators"

    # --- streams
    def compose(self, prompt: str, seed: int, bpm: float | None = None):
        """The prompt's score (the composer's, or the one given at construction). ``[engine]``"""
        fn = self._compose
        if fn is None:
            from engine.compose import compose as fn
        return fn(prompt, seed=seed, bpm=bpm)

    def performance(self, score, params: dict | None = None) -> Performance:
        """A performance of ``score`` on this backend's renderer. ``[engine]``"""
        if not self._warm:
            self.warmup()
        params = params or {}
        b = params.get("brightness", -1.0)
        bright = None if b is None or b < 0 else float(b)
        if self._pool is not None:
            inst = self._pool.instrument()
            try:
                perf = Performance(score, inst, self.sample_rate, brightness=bright)
                est = self._pool.expected_lufs(score, inst)
            except Exception:
                inst.close()
                raise
        else:
            inst = OscInstrument(self.sample_rate)
            perf = Performance(score, inst, self.sample_rate, brightness=bright)
            est = expected_lufs(score, inst)
        if est is not None:
            perf.mix.set_initial(perf.mix.target - est)
        perf.set_gain(params.get("gain", 1.0))
        return perf

    def start(self, job: int, prompt: str, seed: int, params=None) -> Stream:
        """Compose the prompt and take a warm instance (a few ms). ``[engine]``"""
        try:
            score = self.compose(prompt, seed, self._tempo)
        except (ValueError, TypeError) as e:
            raise BackendError(f"could not compose {prompt!r}: {e}") from e
        perf = self.performance(score, params)
        s = Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}), state=perf)
        self._live[id(s)] = s
        return s

    def continuation(self, stream: Stream, frame: int, job: int, shift: float = 0.0) -> Stream:
        """The same score from ``stream``'s frame ``frame`` on: a fresh instrument, the
        performance sought to the beat playing there (plus ``shift`` beats; at the tempo there),
        the mix carried over, and the :attr:`CONTINUATION_PREROLL_S` before it performed and
        dropped (:meth:`Performance.seek`), so that the crossfade into it neither re-strikes the
        held notes nor cuts the reverb. ``[engine]``"""
        return self._continue(stream, frame, job, shift, stream.state.score)

    def continue_with(self, stream: Stream, frame: int, job: int, change) -> Stream:
        """A continuation of ``stream`` from its frame ``frame`` whose score is ``change(score)``
        — the same music until the change's beat (a chord steered, a tune sung from a bar on:
        :func:`engine.compose.composer.steer`, :func:`~engine.compose.composer.with_theme`),
        spliced in at the read head. ``[engine]``"""
        return self._continue(stream, frame, job, 0.0, change(stream.state.score))

    def restart_with(self, stream: Stream, change) -> None:
        """A stream not yet rendered plays ``change(score)`` from its start (a chord or a tune
        carried into a new prompt). ``[engine]``"""
        old = stream.state
        stream.state = self.performance(change(old.score), stream.params)
        old.close()

    def _continue(self, stream: Stream, frame: int, job: int, shift: float, score) -> Stream:
        old = stream.state
        beat = max(0.0, old.tempo.beat_at(frame) + float(shift))
        perf = self.performance(score, stream.params)
        try:
            perf.seek(beat, old.tempo.bpm_at(frame), preroll=int(self.CONTINUATION_PREROLL_S * self.sample_rate))
            perf.mix.continue_from(old.mix)
        except Exception:
            perf.close()
            raise
        s = Stream(job=job, prompt=stream.prompt, seed=stream.seed, params=dict(stream.params), state=perf)
        self._live[id(s)] = s
        return s

    def generate(self, streams: list[Stream], frames: int) -> list[np.ndarray]:
        """Every stream's next ``frames`` frames. ``[engine]``

        With several streams the reads are spread over the render workers (one stream per
        worker at a time; libfluidsynth renders with the GIL released, so streams render on
        all cores); the call returns when every stream's frames are there.
        """
        if self._workers is not None and len(streams) > 1:
            out = list(self._workers.map(lambda s: s.state.read(frames), streams))
        else:
            out = [s.state.read(frames) for s in streams]
        for s in streams:
            s.frames_done += frames
        return out

    def set_param(self, stream: Stream, name: str, value: float) -> None:
        """``gain`` and ``brightness`` act from the next chunk on. ``[engine]``"""
        stream.params[name] = float(value)
        perf = stream.state
        if name == "gain":
            perf.set_gain(float(value))
        elif name == "brightness" and value >= 0:
            perf.set_brightness(float(value))

    def set_tempo(self, bpm: float) -> None:
        """Global tempo: new jobs compose at it, running streams change from their frontier. ``[engine]``"""
        self._tempo = float(bpm)
        for s in self._live.values():
            s.state.set_bpm(self._tempo)

    def beat_grid(self, stream: Stream):
        """A HostSync on the stream's tempo map (made once per stream). ``[engine]``"""
        perf = stream.state
        hs = getattr(perf, "hostsync", None)
        if hs is None:
            hs = perf.hostsync = HostSync(perf.tempo, perf.score.beats_per_bar)
        return hs

    def notes_between(self, stream: Stream, f0: float, f1: float) -> list[tuple[float, float, int, int]]:
        """The score's notes starting in frames ``[f0, f1)``, timed by the stream's tempo map. ``[engine]``"""
        perf = stream.state
        tempo = perf.tempo
        out = []
        for n in perf.score.notes_between(tempo.beat_at(f0), tempo.beat_at(f1)):
            if n.dur > 0:
                out.append((tempo.frame_at(n.start), tempo.frame_at(n.start + n.dur), n.pitch, n.vel))
        return out

    def render_head(self, stream: Stream) -> int:
        """The performance's production frontier (it renders ahead of what was read). ``[engine]``"""
        return stream.state.frame

    def end(self, stream: Stream) -> None:
        """Give the stream's synth instance back. ``[engine]``"""
        self._live.pop(id(stream), None)
        if stream.state is not None:
            stream.state.close()


_REF: dict = {}


def render_stream(prompt: str, seed: int, frames: int, sample_rate: int = 48000, **backend_kwargs) -> np.ndarray:
    """The first ``frames`` frames a fresh ``synth`` stream of (prompt, seed) plays, as ``(n, 2)``.

    For references in tests and tools (a stream is deterministic, so this is exactly what the
    daemon's backend produces for that job). Keeps one warm backend per configuration.
    ``[engine]``
    """
    key = (int(sample_rate), tuple(sorted(backend_kwargs.items())))
    b = _REF.get(key)
    if b is None:
        b = SynthBackend(sample_rate=sample_rate, pool_size=1, workers=1, **backend_kwargs)
        b.warmup()
        _REF[key] = b
    s = b.start(0, prompt, seed)
    try:
        return b.generate([s], int(frames))[0]
    finally:
        b.end(s)
