"""The daemon's engine on a Ray Serve cluster: ``wavebridge serve --engine ray://HOST:PORT``.

:class:`RemoteBackend` is a :class:`engine.backend.Backend` whose streams are streams of the
cluster's :class:`~bridge.cluster.replica.EngineReplica`. Everything else stays in the daemon:
rings, crossfades, the slot state machine, OSC, MIDI and HTTP. A prompt change is a new remote
stream, spliced at the read head like any new job.

Each stream has a fetch thread. It reads the replica's chunks into a buffer up to
:data:`PREFETCH_S` ahead of what the engine took. The engine never waits for the network: the
scheduler plans only frames that have arrived (:meth:`RemoteBackend.ready_frames`). When a replica
dies mid-stream, the fetch thread asks the cluster for the same stream from the next frame it
lacks (:meth:`EngineReplica.stream`'s ``start_frame``: the synth's continuation, the same music),
and Serve routes that to a live replica. The ring's buffer carries the slot across the gap, and
the DAW hears the music go on. A backend that cannot resume (musicgen) starts over from frame 0.

No continuations, beat grid or notes here (``None`` / ``[]``): host tempo, chords and MIDI out
are the local synth's. ``[engine]`` (generate, ready_frames) and the fetch threads.
"""
from __future__ import annotations

import collections
import logging
import threading
import time

import numpy as np

from engine.backend import Backend, BackendError, Stream

log = logging.getLogger("wavebridge.cluster")

PREFETCH_S = 2.0          # a stream's buffer ahead of what the engine took (the replica paces itself too)
STREAM_S = 3600.0         # an endless job is asked for an hour at a time
RETRY_S = 0.2             # between attempts after a replica died
WAIT_S = 0.05             # generate() on a starved stream waits at most this long, then pads silence


class _RemoteStream:
    """One stream's fetch thread and buffer."""

    def __init__(self, backend: "RemoteBackend", prompt: str, seed: int, params: dict, seconds: float):
        self.b, self.prompt, self.seed, self.params = backend, prompt, seed, dict(params or {})
        self.seconds = seconds if seconds > 0 else STREAM_S
        self.chunks: collections.deque = collections.deque()
        self.buffered = 0          # frames in ``chunks``
        self.received = 0          # frames of the stream received so far
        self.head = 0              # offset into chunks[0]
        self.cv = threading.Condition()
        self.closed = False
        self.ended = False
        self.resumes = 0
        self.error: str | None = None
        self.gen = None
        self.th = threading.Thread(target=self._run, name="wb-remote", daemon=True)
        self.th.start()

    def _run(self) -> None:
        b = self.b
        limit = int(PREFETCH_S * b.sample_rate)
        total = int(round(self.seconds * b.sample_rate))
        while not self.closed and self.received < total:
            try:
                self.gen = b.handle.options(stream=True).stream.remote(
                    self.prompt, self.seed, self.seconds, self.params, b.chunk_frames, self.received)
                for chunk in self.gen:
                    a = np.frombuffer(chunk, dtype="<f4").reshape(-1, b.channels)
                    with self.cv:
                        while self.buffered > limit and not self.closed:
                            self.cv.wait(0.05)
                        if self.closed:
                            break
                        self.chunks.append(a)
                        self.buffered += len(a)
                        self.received += len(a)
                        self.cv.notify_all()
                if self.received >= total or self.closed:
                    break
            except Exception as e:  # noqa: BLE001 — a replica died, or the cluster is gone for a moment
                if self.closed:
                    break
                self.resumes += 1
                self.error = f"{type(e).__name__}: {e}"[:200]
                log.warning("remote stream %r: %s; resuming at frame %d", self.prompt[:40], self.error, self.received)
                time.sleep(RETRY_S)
        with self.cv:
            self.ended = True
            self.cv.notify_all()

    def ready(self) -> int:
        return self.buffered if not self.ended or self.buffered else 1 << 20   # an ended stream pads

    def read(self, frames: int) -> np.ndarray:
        out = np.zeros((frames, self.b.channels), np.float32)
        got = 0
        deadline = time.monotonic() + WAIT_S
        with self.cv:
            while got < frames:
                if not self.chunks:
                    left = deadline - time.monotonic()
                    if self.ended or left <= 0:
                        break
                    self.cv.wait(left)
                    continue
                a = self.chunks[0]
                k = min(frames - got, len(a) - self.head)
                out[got:got + k] = a[self.head:self.head + k]
                got += k
                self.head += k
                self.buffered -= k
                if self.head >= len(a):
                    self.chunks.popleft()
                    self.head = 0
            self.cv.notify_all()
        if got < frames:
            self.b.starved_frames += frames - got
        return out

    def close(self) -> None:
        with self.cv:
            self.closed = True
            self.cv.notify_all()
        gen = self.gen
        if gen is not None:
            try:
                gen.cancel()
            except Exception:  # noqa: BLE001
                pass


class RemoteBackend(Backend):
    """Streams from a Ray Serve application of :class:`~bridge.cluster.replica.EngineReplica`."""

    name = "remote"
    max_batch = 256
    granularity = 1

    def __init__(self, address: str, app: str = "wavebridge", chunk_s: float = 0.1, connect_timeout_s: float = 20.0):
        self.address = address
        self.app = app
        self.chunk_s = float(chunk_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self.handle = None
        self.sample_rate = 48000
        self.channels = 2
        self.chunk_frames = int(self.chunk_s * self.sample_rate)
        self.starved_frames = 0
        self.remote_name = "?"

    def warmup(self) -> None:
        """Connect (``ray://host:port`` through Ray Client, or ``auto``/``local`` for a Ray this
        process already runs or can reach) and ask a replica what it plays. Raises
        :class:`BackendError` with one line when the cluster is not there."""
        try:
            import ray
            from ray import serve

            if not ray.is_initialized():
                ray.init(address=None if self.address in ("local", "") else self.address,
                         log_to_driver=False, configure_logging=False)
            self.handle = serve.get_app_handle(self.app)
            info = self.handle.info.remote().result(timeout_s=self.connect_timeout_s)
        except Exception as e:  # noqa: BLE001 — ConnectionError, RayServeException, TimeoutError …
            raise BackendError(f"cannot reach the wavebridge cluster at {self.address} (app {self.app!r}): "
                               f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        self.sample_rate, self.channels = int(info["sample_rate"]), int(info["channels"])
        self.chunk_frames = max(256, int(self.chunk_s * self.sample_rate))
        self.remote_name = info.get("backend", "?")

    def describe(self) -> str:
        return f"{self.remote_name} on {self.address} ({self.app})"

    def start(self, job: int, prompt: str, seed: int, params=None) -> Stream:
        if self.handle is None:
            self.warmup()
        st = _RemoteStream(self, prompt, seed, params or {}, 0.0)    # the scheduler ends it with its job
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}), state=st)

    def ready_frames(self, stream: Stream) -> int | None:
        return stream.state.ready()

    def generate(self, streams: list[Stream], frames: int) -> list[np.ndarray]:
        out = [s.state.read(frames) for s in streams]
        for s in streams:
            s.frames_done += frames
        return out

    def end(self, stream: Stream) -> None:
        if stream.state is not None:
            stream.state.close()

    def close(self) -> None:
        self.handle = None
