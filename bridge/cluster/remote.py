"""The daemon's engine on a Ray Serve cluster: ``wavebridge serve --engine http://HOST:PORT``.

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

Three ways to the cluster (``--engine``):

- ``http://HOST:PORT[/PREFIX]``: the application's streaming HTTP route on Serve's proxy — the
  daemon then needs neither Ray nor a Ray version that matches the cluster's (a laptop DAW);
- ``auto``, ``local`` or a GCS ``HOST:PORT``: this process joins the cluster as a Ray driver
  (on a node of the cluster; with the cluster's token where it asks for one);
- ``ray://HOST:PORT`` (Ray Client) is refused with the reason: Ray 2.60's client cannot stream
  from a Serve deployment ("Streaming DeploymentHandles are not currently supported").

When the cluster is gone for longer than a stream's buffer, its streams fail with
:class:`EngineUnavailable` (``/wb/error engine_unavailable``): the daemon fades those slots out and
plays them again when :meth:`RemoteBackend.available` says the cluster is back.

No continuations, beat grid or notes here (``None`` / ``[]``): host tempo, chords and MIDI out
are the local synth's. ``[engine]`` (generate, ready_frames) and the fetch threads.
"""
from __future__ import annotations

import collections
import http.client
import json
import logging
import threading
import time
import urllib.parse

import numpy as np

from engine.backend import Backend, BackendError, Stream

log = logging.getLogger("wavebridge.cluster")

PREFETCH_S = 2.0          # a stream's buffer ahead of what the engine took (the replica paces itself too)
STREAM_S = 3600.0         # an endless job is asked for an hour at a time
RETRY_S = 0.2             # between attempts after a replica died
WAIT_S = 0.05             # generate() on a starved stream waits at most this long, then pads silence
UNAVAILABLE_S = 1.0       # a stream failing this long with its buffer nearly empty: the engine is unavailable
LOW_S = 0.25              # "nearly empty": less than this left (the ring's second still there to fade out)
PROBE_S = 1.0             # between probes of a cluster that went away
SEAM_FRAMES = 1024        # a resumed stream's crossfade (21 ms at 48 kHz) into what was buffered


class EngineUnavailable(BackendError):
    """The cluster cannot be reached (``/wb/error`` code ``engine_unavailable``)."""

    code = "engine_unavailable"


class _RemoteStream:
    """One stream's fetch thread and buffer."""

    def __init__(self, backend: "RemoteBackend", prompt: str, seed: int, params: dict, seconds: float,
                 priority: bool = True):
        self.b, self.prompt, self.seed, self.params = backend, prompt, seed, dict(params or {})
        # a job of known length is asked for that (and a little more: a fade-out may read on)
        self.seconds = min(STREAM_S, seconds + 1.0) if seconds > 0 else STREAM_S
        self.priority = bool(priority)
        self.chunks: collections.deque = collections.deque()
        self.buffered = 0          # frames in ``chunks``
        self.received = 0          # frames of the stream received so far
        self.head = 0              # offset into chunks[0]
        self.cv = threading.Condition()
        self.closed = False
        self.ended = False
        self.resumes = 0
        self.seams = 0             # resumes crossfaded into the buffer
        self.error: str | None = None
        self.failing_since: float | None = None    # monotonic time of the first failure since the last chunk
        self.cancel = None
        self.th = threading.Thread(target=self._run, name="wb-remote", daemon=True)
        self.th.start()

    def _run(self) -> None:
        b = self.b
        limit = int(PREFETCH_S * b.sample_rate)
        total = int(round(self.seconds * b.sample_rate))
        opened = False
        while not self.closed and self.received < total:
            try:
                # a resume asks for the last SEAM_FRAMES it has (still unread) again, and crossfades
                # them into the new stream: the continuation is the same music, not the same samples
                with self.cv:
                    overlap = min(SEAM_FRAMES, self.buffered) if opened else 0
                opened = True
                chunks, self.cancel = b.open_stream(self.prompt, self.seed, self.seconds, self.params,
                                                    self.received - overlap, self.priority)
                for chunk in chunks:
                    a = np.frombuffer(chunk, dtype="<f4").reshape(-1, b.channels)
                    with self.cv:
                        self.failing_since = None
                        if overlap:
                            used = self._blend_tail(a[:overlap], overlap)
                            overlap = 0
                            a = a[used:]
                            if not len(a):
                                continue
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
                self.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
                with self.cv:
                    if self.failing_since is None:
                        self.failing_since = time.monotonic()
                if self.resumes <= 3 or self.resumes % 50 == 0:
                    log.warning("remote stream %r: %s; resuming at frame %d", self.prompt[:40], self.error,
                                self.received)
                time.sleep(RETRY_S)
        with self.cv:
            self.ended = True
            self.cv.notify_all()

    def _blend_tail(self, head: np.ndarray, n0: int) -> int:
        """Crossfade a resumed stream into the buffer. The resume asked for the ``n0`` frames
        before :attr:`received` again; ``head`` is the first of them that arrived. The engine may
        have read some of those frames since: only the last ``r = min(n0, buffered)`` are still
        here, and they line up with ``head[n0 - r:]``. Those are replaced by a fade (sin²/cos²,
        the gains sum to one) from the old frames into the new ones. Returns the frames of
        ``head`` used (all). Under ``cv``."""
        m = len(head)
        r = min(n0, self.buffered)
        tail = []
        need = r
        while need > 0:                         # take the last r unread frames off the buffer
            c = self.chunks[-1]
            start = self.head if len(self.chunks) == 1 else 0
            k = min(need, len(c) - start)
            tail.append(c[len(c) - k:])
            if k == len(c) - start:
                self.chunks.pop()
                if not self.chunks:
                    self.head = 0
            else:
                self.chunks[-1] = c[:len(c) - k]
            need -= k
        old = np.concatenate(tail[::-1]) if tail else np.zeros((0, self.b.channels), np.float32)
        self.buffered -= r
        new = head[n0 - r:]
        q = min(r, len(new))
        if q:
            w = (np.sin(0.5 * np.pi * (np.arange(q) + 0.5) / q) ** 2)[:, None].astype(np.float32)
            self.chunks.append(old[:q] * (1.0 - w) + new[:q] * w)
            self.buffered += q
        self.received += q - r
        self.seams += 1
        return m

    def unavailable(self) -> bool:
        """Failing for :data:`UNAVAILABLE_S` with less than :data:`LOW_S` left here: the job
        fails while the ring still holds audio to fade out."""
        f = self.failing_since
        return (f is not None and self.buffered < LOW_S * self.b.sample_rate
                and time.monotonic() - f > UNAVAILABLE_S)

    def ready(self) -> int:
        if self.unavailable():
            return 1 << 20                   # generate() is called, and fails this stream
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
        cancel = self.cancel
        if cancel is not None:
            try:
                cancel()
            except Exception:  # noqa: BLE001
                pass


class RemoteBackend(Backend):
    """Streams from a Ray Serve application of :class:`~bridge.cluster.replica.EngineReplica`,
    through Ray (``auto``, ``HOST:PORT``: a driver of the cluster) or its HTTP route (``http://``)."""

    name = "remote"
    max_batch = 256
    granularity = 1

    def __init__(self, address: str, app: str = "wavebridge", chunk_s: float = 0.1, connect_timeout_s: float = 20.0):
        self.address = str(address).strip()
        self.app = app
        self.chunk_s = float(chunk_s)
        self.connect_timeout_s = float(connect_timeout_s)
        if self.address.startswith("ray://"):
            raise BackendError(f"--engine {self.address}: Ray Client cannot stream from a Serve deployment; "
                               "use the cluster's Serve HTTP address (--engine http://HOST:8000) or, on a node "
                               "of the cluster, --engine auto")
        self.http = self.address.startswith(("http://", "https://"))
        if "://" in self.address and not self.http:
            raise BackendError(f"--engine {self.address[:80]}: not an engine address; use the cluster's Serve "
                               "HTTP address (http://HOST:PORT) or, on a node of the cluster, auto")
        if self.http:
            u = urllib.parse.urlsplit(self.address)
            if not u.hostname:
                raise BackendError(f"--engine {self.address!r}: no host")
            self._conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
            self._netloc = (u.hostname, u.port or (443 if u.scheme == "https" else 80))
            self._prefix = u.path.rstrip("/")
        self.handle = None
        self.sample_rate = 48000
        self.channels = 2
        self.chunk_frames = int(self.chunk_s * self.sample_rate)
        self.starved_frames = 0
        self.remote_name = "?"
        self._up = True                  # the last probe's answer (available())
        self._probe: threading.Thread | None = None

    # ------------------------------------------------------------------ the two transports
    def _http(self, path: str, query: dict, timeout: float):
        conn = self._conn_cls(*self._netloc, timeout=timeout)
        conn.request("GET", f"{self._prefix}{path}?{urllib.parse.urlencode(query)}")
        resp = conn.getresponse()
        if resp.status != 200:
            body = resp.read(2000)
            conn.close()
            try:
                msg = json.loads(body).get("message", "")
            except Exception:  # noqa: BLE001 — a proxy's HTML page, say
                msg = body[:200].decode("utf-8", "replace")
            raise BackendError(f"HTTP {resp.status} from {self.address}: {msg}")
        return conn, resp

    def _info(self, timeout: float) -> dict:
        if self.http:
            conn, resp = self._http("/info", {}, timeout)
            try:
                return json.loads(resp.read(65536))
            finally:
                conn.close()
        return self.handle.info.remote().result(timeout_s=timeout)

    def open_stream(self, prompt: str, seed: int, seconds: float, params: dict, start_frame: int,
                    priority: bool = True):
        """The stream's chunks from frame ``start_frame`` on (an iterator of raw float32 PCM) and a
        function that cancels it. ``[engine]`` (a stream's fetch thread)"""
        if not self.http:
            from bridge.cluster.replica import LEAD_S

            gen = self.handle.options(stream=True).stream.remote(prompt, seed, seconds, params, self.chunk_frames,
                                                                 start_frame, LEAD_S, priority)
            return gen, gen.cancel
        q = {"prompt": prompt, "seed": seed, "seconds": f"{seconds:.6f}", "chunk_frames": self.chunk_frames,
             "start_frame": start_frame, "priority": int(bool(priority))}
        if params:
            q["params"] = json.dumps(params)
        conn, resp = self._http("/", q, 10.0)
        size = self.chunk_frames * self.channels * 4

        def chunks():
            try:
                while True:
                    b = resp.read(size)        # whole chunks (the last may be shorter), or b"" at the end
                    if not b:
                        return
                    if len(b) % (4 * self.channels):
                        raise BackendError("the stream was cut inside a frame")
                    yield b
            finally:
                conn.close()

        def cancel():
            try:
                if conn.sock is not None:
                    conn.sock.shutdown(2)
            except OSError:
                pass

        return chunks(), cancel

    # ------------------------------------------------------------------ Backend
    def warmup(self) -> None:
        """Connect and ask a replica what it plays. Raises :class:`BackendError` with one line when
        the cluster is not there."""
        try:
            if not self.http:
                import ray
                from ray import serve

                if not ray.is_initialized():
                    ray.init(address=None if self.address in ("local", "") else self.address,
                             log_to_driver=False, configure_logging=False)
                self.handle = serve.get_app_handle(self.app)
            info = self._info(self.connect_timeout_s)
        except Exception as e:  # noqa: BLE001 — ConnectionError, RayServeException, TimeoutError …
            raise BackendError(f"cannot reach the wavebridge cluster at {self.address} (app {self.app!r}): "
                               f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        self.sample_rate, self.channels = int(info["sample_rate"]), int(info["channels"])
        self.chunk_frames = max(256, int(self.chunk_s * self.sample_rate))
        self.remote_name = info.get("backend", "?")

    def describe(self) -> str:
        return f"{self.remote_name} on {self.address}" + ("" if self.http else f" ({self.app})")

    def available(self) -> bool:
        """Whether the cluster answers, without waiting: the last probe's answer; a probe thread
        asks every :data:`PROBE_S` while the answer is no. ``[engine]``"""
        if not self._up and (self._probe is None or not self._probe.is_alive()):
            self._probe = threading.Thread(target=self._probe_until_up, name="wb-remote-probe", daemon=True)
            self._probe.start()
        return self._up

    def _probe_until_up(self) -> None:
        while True:
            try:
                self._info(2.0)
                break
            except Exception:  # noqa: BLE001 — still away
                time.sleep(PROBE_S)
        self._up = True

    def start(self, job: int, prompt: str, seed: int, params=None) -> Stream:
        return self.start_for(job, prompt, seed, params)

    def start_for(self, job: int, prompt: str, seed: int, params=None, *, seconds: float = 0.0,
                  priority: bool = True) -> Stream:
        if self.handle is None and not self.http:
            self.warmup()
        st = _RemoteStream(self, prompt, seed, params or {}, seconds, priority)   # ended with its job
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}), state=st)

    def ready_frames(self, stream: Stream) -> int | None:
        return stream.state.ready()

    def generate(self, streams: list[Stream], frames: int) -> list[np.ndarray]:
        # every stream is checked before any is read: a failing batch is retried in halves by the
        # scheduler, and a stream read once must not be read again
        lost = [s for s in streams if s.state.unavailable()]
        if lost:
            self._up = False             # available() probes until the cluster answers again
            raise EngineUnavailable(f"the engine cluster at {self.address} is unreachable "
                                    f"({lost[0].state.error})")
        out = [s.state.read(frames) for s in streams]
        for s in streams:
            s.frames_done += frames
        return out

    def end(self, stream: Stream) -> None:
        if stream.state is not None:
            stream.state.close()

    def close(self) -> None:
        self.handle = None
