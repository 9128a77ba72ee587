"""The backend contract every generator implements, and lazy loading by name.

All methods run on the ``[engine]`` thread, except construction and ``warmup`` which the
daemon runs before it says it is ready. A backend owns its model and device; it never blocks
on I/O after ``warmup``.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class BackendError(Exception):
    """A backend failed for one or more streams (maps to ``/wb/error`` code ``backend``)."""

    code = "backend"


class OutOfMemory(BackendError):
    """The device ran out of memory (maps to ``/wb/error`` code ``oom``)."""

    code = "oom"


@dataclass
class Stream:
    """One job's generation state inside a backend (opaque ``state`` per backend)."""

    job: int
    prompt: str
    seed: int
    params: dict[str, float] = field(default_factory=dict)
    frames_done: int = 0
    state: Any = None


class Backend:
    """Base class. Subclasses set ``name``, ``sample_rate``, ``channels``, ``max_batch``."""

    name = "base"
    sample_rate = 48000
    channels = 2
    max_batch = 64
    #: one ``generate`` call for several streams costs less than one call each (a model's forward
    #: pass over the batch): a Serve replica then renders its streams together (bridge.cluster.batch)
    batches_streams = False
    #: frames a stream's chunk should be a multiple of (a model's hop); 1 = any size
    granularity = 1
    #: "cpu" or "cuda": where ``generate`` output lives before it is handed back
    device = "cpu"
    #: live parameters this backend understands, name → (min, max, default)
    params: dict[str, tuple[float, float, float]] = {}

    def warmup(self) -> None:
        """Compile, allocate and run once so the first real job is fast. ``[control]`` at start."""

    def start(self, job: int, prompt: str, seed: int, params: dict[str, float] | None = None) -> Stream:
        """Prepare a stream for ``prompt`` (text encoding happens here). ``[engine]``"""
        raise NotImplementedError

    def start_for(self, job: int, prompt: str, seed: int, params: dict[str, float] | None = None, *,
                  seconds: float = 0.0, priority: bool = True) -> Stream:
        """:meth:`start` told what the caller knows of the stream: its length (``0``: endless) and
        whether a DAW slot waits on it (``priority``; a web stream: no) — a remote backend asks its
        cluster for just that much, the DAW's streams first. ``[engine]``"""
        return self.start(job, prompt, seed, params)

    def generate(self, streams: list[Stream], frames: int) -> list[np.ndarray]:
        """The next ``frames`` frames (rounded up to ``granularity``) of every stream, as one batch.

        Returns one ``(n, channels)`` float32 array per stream, in order. Raises ``OutOfMemory``
        or ``BackendError``; the scheduler then isolates the failing streams. ``[engine]``
        """
        raise NotImplementedError

    def set_param(self, stream: Stream, name: str, value: float) -> None:
        """Apply a live parameter from the next chunk on. ``[engine]``"""
        stream.params[name] = float(value)

    def continuation(self, stream: Stream, frame: int, job: int, shift: float = 0.0) -> Stream | None:
        """A new stream that plays what ``stream`` would from its frame ``frame`` on (its frame 0
        is that frame; ``shift`` beats further on in the music, to move it into the host's bar
        phase), for a re-timed restart spliced in at the read head; ``None`` where the backend
        cannot (a model's state cannot be rewound). ``[engine]``"""
        return None

    def ready_frames(self, stream: Stream) -> int | None:
        """Frames ``generate`` can give ``stream`` now without waiting (a remote stream: what has
        arrived); ``None``: any number (the scheduler plans only what is ready). ``[engine]``"""
        return None

    def continue_with(self, stream: Stream, frame: int, job: int, change) -> Stream | None:
        """A new stream that plays what ``stream`` would from its frame ``frame`` on, with its
        score changed by ``change`` (score → score: a chord a player steers to, a tune sung from
        a bar on; the same music until then) — spliced in at the read head like a re-timed
        restart; ``None`` where the backend cannot (a model without a score). ``[engine]``"""
        return None

    def restart_with(self, stream: Stream, change) -> None:
        """Make a stream not yet rendered play ``change(score)`` from its start (a held chord
        or a tune carried into a new prompt); a no-op for a backend without a score. ``[engine]``"""

    def set_tempo(self, bpm: float) -> None:
        """Global tempo for backends that use it. ``[engine]``"""

    def beat_grid(self, stream: Stream):
        """The stream's beat grid as an :class:`engine.hostsync.HostSync` bound to its tempo map
        (host tempo and bar lock, quantized changes), or ``None`` for a backend without one
        (musicgen). ``[engine]``"""
        return None

    def notes_between(self, stream: Stream, f0: float, f1: float) -> list[tuple[float, float, int, int]]:
        """Notes of ``stream`` starting in frames ``[f0, f1)``: ``(frame_on, frame_off, pitch,
        velocity)``, for MIDI out; ``[]`` for a backend without notes. ``[engine]``"""
        return []

    def render_head(self, stream: Stream) -> int:
        """The first frame of ``stream`` not yet rendered: tempo edits act from here. ``[engine]``"""
        return stream.frames_done

    def end(self, stream: Stream) -> None:
        """Release a stream's resources. ``[engine]``"""

    def close(self) -> None:
        """Free the model. ``[control]`` at shutdown."""


_BACKENDS = {
    "synth": "engine.synth.backend:SynthBackend",
    "musicgen": "engine.musicgen.backend:MusicgenBackend",
}


def available_backends() -> list[str]:
    return sorted(_BACKENDS)


def get_backend(name: str, **kwargs) -> Backend:
    """Construct a backend by name; heavy imports happen only for the one asked for."""
    try:
        target = _BACKENDS[name]
    except KeyError:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(available_backends())}") from None
    mod, cls = target.split(":")
    return getattr(importlib.import_module(mod), cls)(**kwargs)
