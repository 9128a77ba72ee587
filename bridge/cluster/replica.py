"""The engine as a Ray Serve deployment: one warm backend per replica, streams out in chunks.

:class:`EngineReplica` is a Serve deployment whose replica holds one warm backend (the embedded
synth, or musicgen) and serves as many streams at once as its ``capacity`` (Serve's
``max_ongoing_requests``). A stream is a generator of chunks of ``chunk_frames`` frames (≥ 100 ms:
Serve costs about half a millisecond a chunk), each the raw interleaved float32 PCM of the
backend's ``(frames, channels)`` block — the same frames a daemon's backend would produce, so a
stream from the cluster is bit for bit the stream the daemon plays (tested):

- inside the cluster: ``handle.options(stream=True).stream.remote(prompt, seed, seconds)``;
- from outside it: ``GET /?prompt=…&seed=…&seconds=…`` on the Serve HTTP address (a streaming
  HTTP response, ``application/octet-stream``, with the rate and channels in its headers).

A stream runs at most :data:`LEAD_S` ahead of real time (``lead_s=None``, or ``realtime=0`` over
HTTP: as fast as the replica renders, for whole tracks).

:func:`build` makes the application with its replica count (or autoscaling on ongoing streams),
CPUs or fractional GPUs per replica; ``docs/SCALE.md`` has the matching ``serve deploy`` config.
Ray and Serve are imported here only: nothing else in wavebridge needs them. ``[cluster]``
"""
from __future__ import annotations

import math

from ray import serve

CHUNK_S = 0.1                 # a stream's chunk: 100 ms (Serve's own cost is ~0.5 ms a chunk)
LEAD_S = 3.0                  # a live stream runs at most this far ahead of real time
MAX_SECONDS = 3600.0


class _Engine:
    """One warm backend and the streams it serves (the replica's body, testable without Serve)."""

    def __init__(self, backend: str = "synth", capacity: int = 8, **backend_kwargs):
        from engine import get_backend

        kw = dict(backend_kwargs)
        if backend == "synth":
            kw.setdefault("pool_size", max(1, int(capacity)))
            kw.setdefault("workers", 1)
        self.backend = get_backend(backend, **kw)
        self.backend.warmup()
        self.capacity = int(capacity)
        self.served = 0
        self.open = 0                  # streams being served now

    def info(self) -> dict:
        import os

        b = self.backend
        return {"backend": b.name, "sample_rate": b.sample_rate, "channels": b.channels, "pid": os.getpid(),
                "capacity": self.capacity, "served": self.served, "open": self.open}

    def stream(self, prompt: str, seed: int = 0, seconds: float = 10.0, params: dict | None = None,
               chunk_frames: int | None = None, start_frame: int = 0):
        """The stream's chunks: raw float32 PCM, ``chunk_frames`` frames each (the last may be
        shorter); from the stream's frame ``start_frame`` on (a stream resumed on another replica:
        the backend's continuation, sought there, the same music)."""
        from bridge.core.commands import clean_prompt, check_seed

        prompt = clean_prompt(prompt, "cluster stream")
        seed = check_seed(int(seed), "cluster stream")
        seconds = float(seconds)
        if not (0.0 < seconds <= MAX_SECONDS) or not math.isfinite(seconds):
            raise ValueError(f"seconds must be in (0, {MAX_SECONDS:g}]")
        b = self.backend
        n = max(1, int(chunk_frames or round(CHUNK_S * b.sample_rate)))
        total = int(round(seconds * b.sample_rate)) - max(0, int(start_frame))
        if total <= 0:
            raise ValueError("start_frame is past the stream's end")
        self.served += 1
        s = b.start(self.served, prompt, seed, params)
        start_frame = max(0, int(start_frame))
        if start_frame:
            c = b.continuation(s, start_frame, self.served)
            b.end(s)
            if c is None:
                raise ValueError(f"the {b.name} backend cannot resume a stream at frame {start_frame}")
            s = c
        self.open += 1
        try:
            done = 0
            while done < total:
                k = min(n, total - done)
                yield b.generate([s], k)[0].astype("<f4", copy=False).tobytes()
                done += k
        finally:
            self.open -= 1
            b.end(s)


@serve.deployment
class EngineReplica(_Engine):
    """The Serve deployment: :class:`_Engine`'s streams paced to real time (at most ``lead_s``
    ahead: a live stream never fills the object store with an hour of audio, and a stalled
    caller costs the replica nothing), and the HTTP route for callers outside the cluster."""

    async def stream(self, prompt: str, seed: int = 0, seconds: float = 10.0, params: dict | None = None,
                     chunk_frames: int | None = None, start_frame: int = 0, lead_s: float | None = LEAD_S):
        import asyncio
        import time

        sr = self.backend.sample_rate
        t0, done = time.monotonic(), 0
        for chunk in _Engine.stream(self, prompt, seed, seconds, params, chunk_frames, start_frame):
            yield chunk
            done += len(chunk) // (4 * self.backend.channels)
            if lead_s is not None:
                ahead = done / sr - (time.monotonic() - t0)
                if ahead > lead_s:
                    await asyncio.sleep(ahead - lead_s)
            else:
                await asyncio.sleep(0)

    async def __call__(self, request):
        from starlette.responses import JSONResponse, StreamingResponse

        q = request.query_params
        try:
            gen = self.stream(q.get("prompt", ""), int(q.get("seed", "0")), float(q.get("seconds", "10")),
                              lead_s=None if q.get("realtime", "1") == "0" else LEAD_S)
            first = await gen.__anext__()          # validation errors surface here, as a 400
        except Exception as e:  # noqa: BLE001 — bad input is an answer, never a dead replica
            return JSONResponse({"error": "bad_request", "message": str(getattr(e, "message", e))}, status_code=400)

        async def body():
            yield first
            async for c in gen:
                yield c

        b = self.backend
        return StreamingResponse(body(), media_type="application/octet-stream",
                                 headers={"x-sample-rate": str(b.sample_rate), "x-channels": str(b.channels),
                                          "x-format": "f32le"})


def build(backend: str = "synth", *, replicas: int | None = 1, capacity: int = 8, num_cpus: float = 1.0,
          num_gpus: float = 0.0, min_replicas: int = 1, max_replicas: int = 4, target_streams: float | None = None,
          **backend_kwargs):
    """The application: ``replicas`` replicas (or, with ``replicas=None``, autoscaling between
    ``min_replicas`` and ``max_replicas`` on ongoing streams, ``target_streams`` each), each
    serving ``capacity`` streams with ``num_cpus`` CPUs and ``num_gpus`` (fractional) GPUs."""
    opts: dict = {"max_ongoing_requests": int(capacity),
                  "ray_actor_options": {"num_cpus": float(num_cpus), "num_gpus": float(num_gpus)}}
    if replicas is None:
        opts["autoscaling_config"] = {"min_replicas": int(min_replicas), "max_replicas": int(max_replicas),
                                      "target_ongoing_requests": float(target_streams or max(1, capacity // 2))}
    else:
        opts["num_replicas"] = int(replicas)
    return EngineReplica.options(**opts).bind(backend, capacity, **backend_kwargs)


def app(args: dict):
    """The application builder for ``serve deploy`` / ``serve run bridge.cluster.replica:app``:
    ``args`` are :func:`build`'s keyword arguments (``backend``, ``replicas`` …)."""
    a = dict(args or {})
    return build(a.pop("backend", "synth"), **a)
