"""The engine as a Ray Serve deployment: one warm backend per replica, streams out in chunks.

:class:`EngineReplica` is a Serve deployment whose replica holds one warm backend (the embedded
synth, or musicgen) and serves as many streams at once as its ``capacity`` (Serve's
``max_ongoing_requests``). A stream is a generator of chunks of ``chunk_frames`` frames (≥ 100 ms:
Serve costs about half a millisecond a chunk), each the raw interleaved float32 PCM of the
backend's ``(frames, channels)`` block — the same frames a daemon's backend would produce, so a
stream from the cluster is bit for bit the stream the daemon plays (tested):

- inside the cluster: ``handle.options(stream=True).stream.remote(prompt, seed, seconds)``;
- from outside it: ``GET /?prompt=…&seed=…&seconds=…`` on the Serve HTTP address (a streaming
  HTTP response, ``application/octet-stream``, with the rate and channels in its headers; also
  ``chunk_frames``, ``start_frame``, ``priority=0`` for a stream no DAW slot waits on, and
  ``params`` as a JSON object), and ``GET /info``.

A stream runs at most :data:`LEAD_S` ahead of real time (``lead_s=None``, or ``realtime=0`` over
HTTP: as fast as the replica renders, for whole tracks).

:func:`build` makes the application with its replica count (or autoscaling on ongoing streams),
CPUs or fractional GPUs per replica; ``docs/SCALE.md`` has the matching ``serve deploy`` config.
Ray and Serve are imported here only: nothing else in wavebridge needs them. ``[cluster]``
"""
from __future__ import annotations

import math
import time

from ray import serve

CHUNK_S = 0.1                 # a stream's chunk: 100 ms (Serve's own cost is ~0.5 ms a chunk)
LEAD_S = 3.0                  # a live stream runs at most this far ahead of real time
LOW_LEAD_S = 1.0              # … and a stream that is not a DAW slot's (priority=False) this far
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

    def open_stream(self, prompt: str, seed: int = 0, seconds: float = 10.0, params: dict | None = None,
                    chunk_frames: int | None = None, start_frame: int = 0):
        """A checked stream request made a backend stream: ``(stream, chunk_frames, frames)``,
        the stream positioned at its frame ``start_frame`` (a stream resumed on another replica:
        the backend's continuation, sought there, the same music). Bad input: ``ValueError``."""
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
        return s, n, total


@serve.deployment
class EngineReplica(_Engine):
    """The Serve deployment: :class:`_Engine`'s backend, its streams paced to real time (at most ``lead_s``
    ahead: a live stream never fills the object store with an hour of audio, and a stalled
    caller costs the replica nothing), and the HTTP route for callers outside the cluster.

    A DAW slot's stream comes first (``priority=True``, the default): while one of them is less
    than half its lead ahead of real time, the others (web streams, ``priority=False``) wait
    before their next chunk, and they run at most :data:`LOW_LEAD_S` ahead (a burst of new web
    streams fills less at once)."""

    def __init__(self, *a, **kw):
        from bridge.cluster.batch import Batcher

        super().__init__(*a, **kw)
        self.urgent = 0                  # priority streams now behind half their lead
        self.batcher = Batcher(self.backend, hold_back=lambda: self.urgent > 0)

    def info(self) -> dict:
        bt = self.batcher
        return {**super().info(), "batches": bt.batches, "batched_chunks": bt.chunks, "largest_batch": bt.largest}

    async def stream(self, prompt: str, seed: int = 0, seconds: float = 10.0, params: dict | None = None,
                     chunk_frames: int | None = None, start_frame: int = 0, lead_s: float | None = LEAD_S,
                     priority: bool = True):
        """The stream's chunks: raw float32 PCM, ``chunk_frames`` frames each (the last may be
        shorter), from the stream's frame ``start_frame`` on; rendered by the replica's batcher
        together with its other streams' (:mod:`bridge.cluster.batch`) and paced."""
        import asyncio

        b = self.backend
        s, n, total = self.open_stream(prompt, seed, seconds, params, chunk_frames, start_frame)
        lead = lead_s if priority or lead_s is None else min(lead_s, LOW_LEAD_S)
        e = self.batcher.add(s, n, total, b.sample_rate, lead, priority)
        self.open += 1
        urgent = False
        try:
            while True:
                while not priority and self.urgent > 0:
                    await asyncio.sleep(0.005)
                x = await self.batcher.take(e)
                if x is None:
                    return
                yield x.astype("<f4", copy=False).tobytes()
                if lead is None:
                    await asyncio.sleep(0)
                    continue
                ahead = e.done / b.sample_rate - (time.monotonic() - e.t0)
                if priority and (ahead < lead / 2) != urgent:
                    urgent = not urgent
                    self.urgent += 1 if urgent else -1
                if ahead > lead:
                    await asyncio.sleep(ahead - lead)
                else:
                    await asyncio.sleep(0)       # let the other streams' chunks go out
        finally:
            if urgent:
                self.urgent -= 1
            self.batcher.remove(e)
            self.open -= 1
            b.end(s)

    async def __call__(self, request):
        from starlette.responses import JSONResponse, StreamingResponse

        import json

        q = request.query_params
        if request.url.path.rstrip("/").endswith("/info"):
            return JSONResponse(self.info())
        try:
            params = json.loads(q["params"]) if q.get("params") else None
            if params is not None and not (isinstance(params, dict) and
                                           all(isinstance(v, (int, float)) for v in params.values())):
                raise ValueError("params must be a JSON object of numbers")
            chunk = int(q["chunk_frames"]) if q.get("chunk_frames") else None
            if chunk is not None and not 256 <= chunk <= 1 << 20:
                raise ValueError("chunk_frames must be 256..1048576")
            gen = self.stream(q.get("prompt", ""), int(q.get("seed", "0")), float(q.get("seconds", "10")),
                              params, chunk, int(q.get("start_frame", "0")),
                              lead_s=None if q.get("realtime", "1") == "0" else LEAD_S,
                              priority=q.get("priority", "1") != "0")
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


#: how often Serve's handles and replicas report their ongoing requests to the autoscaler by
#: default (Ray 2.60 reads ``autoscaling_config.metrics_interval_s``; the environment variables its
#: deprecation note names are not read yet)
SERVE_METRICS_INTERVAL_S = 10.0
#: set to "0" in the replicas: they, not the callers' handles, report the ongoing streams
REPLICA_METRICS_VAR = "RAY_SERVE_COLLECT_AUTOSCALING_METRICS_ON_HANDLE"


def metrics_interval_for(look_back_s: float | None, metrics_interval_s: float | None = None) -> float | None:
    """The load-report interval to ask Serve for: the one given, or — for a look-back shorter than
    Serve's 10 s reports — a quarter of the look-back. The autoscaler averages only the reports
    inside its look-back, so a 2 s look-back with 10 s reports saw no load most of the time and
    never scaled (Serve only warns). A look-back no longer than the interval is refused."""
    if metrics_interval_s is not None:
        iv = float(metrics_interval_s)
        if not iv > 0:
            raise ValueError(f"metrics_interval_s must be a positive number of seconds, not {metrics_interval_s!r}")
    elif look_back_s is not None and look_back_s <= SERVE_METRICS_INTERVAL_S:
        iv = look_back_s / 4
    else:
        return None
    if look_back_s is not None and not look_back_s > iv:
        raise ValueError(f"look_back_period_s {look_back_s:g} s must be longer than the {iv:g} s at which "
                         "Serve reports the load (metrics_interval_s)")
    return iv


def build(backend: str = "synth", *, replicas: int | None = 1, capacity: int = 8, num_cpus: float = 1.0,
          num_gpus: float = 0.0, min_replicas: int = 1, max_replicas: int = 4, target_streams: float | None = None,
          upscale_delay_s: float | None = None, downscale_delay_s: float | None = None,
          look_back_period_s: float | None = None, metrics_interval_s: float | None = None, **backend_kwargs):
    """The application: ``replicas`` replicas (or, with ``replicas=None``, autoscaling between
    ``min_replicas`` and ``max_replicas`` on ongoing streams, ``target_streams`` each, acting
    after ``upscale_delay_s`` / ``downscale_delay_s`` on the load of the last ``look_back_period_s``,
    reported every ``metrics_interval_s``: see :func:`metrics_interval_for`), each serving ``capacity`` streams with
    ``num_cpus`` CPUs and ``num_gpus`` (fractional) GPUs."""
    opts: dict = {"max_ongoing_requests": int(capacity),
                  "ray_actor_options": {"num_cpus": float(num_cpus), "num_gpus": float(num_gpus)}}
    if replicas is None:
        auto = {"min_replicas": int(min_replicas), "max_replicas": int(max_replicas),
                "target_ongoing_requests": float(target_streams or max(1, capacity // 2))}
        for k, v in (("upscale_delay_s", upscale_delay_s), ("downscale_delay_s", downscale_delay_s),
                     ("look_back_period_s", look_back_period_s)):
            if v is not None:
                auto[k] = float(v)          # Serve's defaults: 30 s, 600 s, 30 s
        iv = metrics_interval_for(look_back_period_s, metrics_interval_s)
        if iv is not None:
            auto["metrics_interval_s"] = iv
        opts["autoscaling_config"] = auto
        # the replicas count their streams for the autoscaler: Ray 2.60's handle-side counts (its
        # default) see a long streaming response as one ongoing request at most — six streams
        # measured as 1.0, so nothing ever scaled; the replicas' own counts read 6
        opts["ray_actor_options"]["runtime_env"] = {"env_vars": {REPLICA_METRICS_VAR: "0"}}
    else:
        opts["num_replicas"] = int(replicas)
    return EngineReplica.options(**opts).bind(backend, capacity, **backend_kwargs)


def app(args: dict):
    """The application builder for ``serve deploy`` / ``serve run bridge.cluster.replica:app``:
    ``args`` are :func:`build`'s keyword arguments (``backend``, ``replicas`` …)."""
    a = dict(args or {})
    return build(a.pop("backend", "synth"), **a)
