"""Whole tracks: the render queue's worker and where finished tracks are stored.

:class:`TrackWorker` runs on the asyncio loop (``[control]``). It takes ``queued`` rows from the
SQLite queue (``bridge.web.store``) oldest first, renders each in a private daemon slot read as fast
as the engine generates (the same engine and scheduler as the live slots, batched with them),
encodes on a worker thread, writes ``<id>.<ext>.part`` under the storage directory, then renames
it (local) or uploads it (S3) and marks the row ``done``. Progress is written to the row about
twice a second. A daemon that dies mid-render leaves the row ``running``; the next start puts it
back in the queue (:meth:`Store.requeue_running`) and it is rendered again from the start with
the seed stored at queue time, so the result is the same.

Storage: :class:`LocalStorage` (a directory) or :class:`S3Storage` (``s3://bucket/prefix``,
boto3, imported lazily; ``AWS_ENDPOINT_URL`` points it at any S3-compatible server). Object
names are ``<track id>.<ext>`` where the id is server-generated hex: no client-supplied string
ever becomes a path or a key.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time

from bridge.web.store import TRACK_ID_RE, Store
from bridge.web.encoding import FORMATS, Encoder, StreamError

log = logging.getLogger("wavebridge.tracks")

MAX_TRACK_S = 600.0


def _name(tid: str, fmt: str) -> str:
    if not TRACK_ID_RE.match(tid) or fmt not in FORMATS:
        raise ValueError("not a server-generated track id")
    return f"{tid}.{FORMATS[fmt][3]}"


class LocalStorage:
    """Finished tracks as files in one directory."""

    kind = "local"

    def __init__(self, root: str):
        self.root = os.path.abspath(os.path.expanduser(root))
        os.makedirs(self.root, mode=0o700, exist_ok=True)

    def part_path(self, tid: str, fmt: str) -> str:
        """Where the track is written while it renders. ``[control]``"""
        return os.path.join(self.root, _name(tid, fmt) + ".part")

    def commit(self, tid: str, fmt: str, part: str) -> str:
        """Move the finished file in place; returns its location (stored in the row). ``[control]``"""
        final = os.path.join(self.root, _name(tid, fmt))
        os.replace(part, final)
        return final

    def open(self, tid: str, fmt: str):
        """A binary file object of the stored track, or None. ``[control]``"""
        try:
            return open(os.path.join(self.root, _name(tid, fmt)), "rb")
        except FileNotFoundError:
            return None

    def describe(self) -> str:
        """Nothing to describe ahead of a scrape. ``[control]``"""
        return self.root


class S3Storage:
    """Finished tracks as objects ``<prefix>/<id>.<ext>`` in an S3 (or S3-compatible) bucket."""

    kind = "s3"

    def __init__(self, url: str, spool_dir: str):
        import boto3  # lazy: only with --storage s3://…

        rest = url[len("s3://"):]
        self.bucket, _, prefix = rest.partition("/")
        if not self.bucket:
            raise ValueError(f"{url}: no bucket name")
        self.prefix = prefix.strip("/")
        self.client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None)
        self.spool = os.path.abspath(spool_dir)
        os.makedirs(self.spool, mode=0o700, exist_ok=True)

    def _key(self, tid: str, fmt: str) -> str:
        n = _name(tid, fmt)
        return f"{self.prefix}/{n}" if self.prefix else n

    def part_path(self, tid: str, fmt: str) -> str:
        """Where the track is written while it renders. ``[control]``"""
        return os.path.join(self.spool, _name(tid, fmt) + ".part")

    def commit(self, tid: str, fmt: str, part: str) -> str:
        """Upload (blocking: run it on a worker thread) and remove the spooled file. ``[control]`` worker"""
        key = self._key(tid, fmt)
        self.client.upload_file(part, self.bucket, key, ExtraArgs={"ContentType": FORMATS[fmt][2]})
        os.unlink(part)
        return f"s3://{self.bucket}/{key}"

    def open(self, tid: str, fmt: str):
        """The object's streaming body (``read(n)``), or None. Blocking. ``[control]`` worker"""
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(tid, fmt))["Body"]
        except self.client.exceptions.NoSuchKey:
            return None

    def describe(self) -> str:
        """Nothing to describe ahead of a scrape. ``[control]``"""
        return f"s3://{self.bucket}/{self.prefix}"


def make_storage(spec: str | None, state_dir: str):
    """LocalStorage for a directory (default ``<state_dir>/tracks``) or S3Storage for ``s3://…``. ``[control]``"""
    if spec and spec.startswith("s3://"):
        return S3Storage(spec, os.path.join(state_dir, "spool"))
    return LocalStorage(spec or os.path.join(state_dir, "tracks"))


class TrackWorker:
    """Renders queued tracks, ``workers`` at a time, alongside the live streams. ``[control]``"""

    def __init__(self, service, store: Store, storage, workers: int = 2):
        self.svc = service
        self.store = store
        self.storage = storage
        self.workers = max(1, int(workers))
        self.running: dict[str, asyncio.Task] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.rendered = 0
        self.render_s: list[float] = []

    def start(self) -> None:
        """Re-queue interrupted renders and start the worker loop. ``[control]``"""
        n = self.store.requeue_running()
        if n:
            log.info("tracks: %d interrupted render(s) back in the queue", n)
        self._task = asyncio.get_running_loop().create_task(self._loop())

    def kick(self) -> None:
        """A track was queued: look at the queue now. ``[control]``"""
        self._wake.set()

    async def close(self) -> None:
        """Stop the worker: renders in progress stay ``running`` and resume at the next start. ``[control]``"""
        if self._task is not None:
            self._task.cancel()
        for t in list(self.running.values()):
            t.cancel()
        for t in [self._task, *self.running.values()]:
            if t is not None:
                try:
                    await t
                except (asyncio.CancelledError, Exception):  # noqa: BLE001
                    pass

    async def _loop(self) -> None:
        while True:
            while len(self.running) < self.workers:
                row = self.store.next_queued(set(self.running))
                if row is None:
                    break
                self.store.set_track(row["id"], state="running", started=time.time(), progress=0.0,
                                     attempts=row["attempts"] + 1)
                t = asyncio.get_running_loop().create_task(self._render(row))
                self.running[row["id"]] = t
                t.add_done_callback(lambda _t, tid=row["id"]: (self.running.pop(tid, None), self._wake.set()))
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    @staticmethod
    def _discard(part: str) -> None:
        try:
            os.unlink(part)
        except OSError:
            pass

    async def _render(self, row: dict) -> None:
        tid, fmt, seconds = row["id"], row["format"], float(row["seconds"])
        loop = asyncio.get_running_loop()
        svc = self.svc
        t0 = time.perf_counter()
        part = self.storage.part_path(tid, fmt)
        stream = enc = f = None
        try:
            stream = svc.open_stream()
            enc = Encoder(fmt, stream.rate, stream.channels)
            f = open(part, "wb")
            total = int(round(seconds * stream.rate))
            stream.play(row["prompt"], seconds, row["seed"])
            last = 0.0
            while True:
                a = await stream.read_fast(stream.rate)
                if a is None:
                    break
                data = await loop.run_in_executor(svc.pool, enc.push, a)
                f.write(data)
                now = time.monotonic()
                if now - last > 0.5:
                    last = now
                    self.store.set_track(tid, progress=min(0.99, stream.frames_read / max(1, total)))
            f.write(await loop.run_in_executor(svc.pool, enc.finish))
            f.close()
            f = None
            location = await loop.run_in_executor(svc.pool, self.storage.commit, tid, fmt, part)
            dt = time.perf_counter() - t0
            audio_s = stream.frames_read / stream.rate
            cost = stream.compute_s * svc.price_per_hour / 3600.0
            self.store.set_track(tid, state="done", progress=1.0, finished=time.time(), location=location,
                                 bytes=enc.bytes_out, compute_s=stream.compute_s, cost_usd=cost, render_s=dt,
                                 error=None)
            svc.meter(row["key_id"], None, audio_s, stream.compute_s, cost, endpoint="tracks")
            svc.encode_stats(enc)
            self.rendered += 1
            self.render_s.append(dt)
            log.info("track %s: %.1f s of audio in %.2f s", tid, audio_s, dt)
        except asyncio.CancelledError:
            raise                       # shutdown: the row stays 'running' and is re-queued at start
        except StreamError as e:
            self.store.set_track(tid, state="error", error=f"{e.reason}: {e.message}"[:500], finished=time.time())
            self._discard(part)
        except Exception as e:  # noqa: BLE001 — one track's failure never stops the queue
            log.exception("track %s failed", tid)
            self.store.set_track(tid, state="error", error=f"internal: {type(e).__name__}: {e}"[:500],
                                 finished=time.time())
            self._discard(part)
        finally:
            if f is not None:
                f.close()
            if enc is not None:
                enc.close()
            if stream is not None:
                svc.close_stream(stream)
