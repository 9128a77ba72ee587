"""Whole tracks: ``POST /v1/tracks``, ``GET /v1/tracks[/{id}[/audio]]`` and the render queue's worker.

:class:`TrackWorker` runs on the asyncio loop (``[control]``). It takes ``queued`` rows from the
SQLite queue (``bridge.web.store``) oldest first, renders each in a private daemon slot read as fast
as the engine generates (the same engine and scheduler as the live slots, batched with them),
encodes on the encoders' worker threads, writes ``<id>.<ext>.part`` (0600) under the storage directory,
then renames it (local) or uploads it (S3) on the storage's own pool and marks the row ``done``
(``bridge.web.storage``). When storing fails (S3 down or hung) the row becomes ``error`` with the
reason, the finished file is kept on the server, and storing it is retried every ``RETRY_S`` and at
the next start; a retry that succeeds marks the row ``done`` (and bills it). Progress is
written to the row about twice a second. A daemon that dies mid-render leaves the row ``running``;
the next start puts it back in the queue (:meth:`Store.requeue_running`) and it is rendered again
from the start with the seed stored at queue time, so the result is the same. The endpoints queue
a track (admitted against the key's tier like any request), show its row and stream the stored file.

With ``queue`` (``--queue redis://…``, :class:`bridge.web.redisqueue.RedisQueue`) the rows and the jobs
are in Redis, shared by every gateway: the worker takes jobs from the stream's consumer group instead
of ``queued`` rows, touches the ones it renders, and acks a job once its row is final (``done``, or
``error`` for a render that failed); a job whose storing failed is not acked, and is taken over and
rendered again when it has been idle for the queue's ``reclaim_s``. A gateway that dies leaves its
jobs pending; another one takes them over (no requeue at start, no kept-file retries: those are the
SQLite path's).
"""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time

from aiohttp import web

from bridge.web.api import ApiError, format_of, number_of, prompt_of, read_json, seed_of
from bridge.web.auth import AUTH, Auth
from bridge.web.encoding import FORMATS, Encoder
from bridge.web.lease import StreamHub
from bridge.web.storage import StorageError
from bridge.web.store import TRACK_ID_RE, Principal, Store, open_private
from bridge.web.stream import StreamError

log = logging.getLogger("wavebridge.tracks")

MAX_TRACK_S = 600.0


class TrackWorker:
    """Renders queued tracks, ``workers`` at a time, alongside the live streams. ``[control]``"""

    RETRY_S = 60.0            # how often a finished track that storage refused is offered again

    def __init__(self, hub: StreamHub, auth: Auth, store: Store, storage, workers: int = 2, queue=None):
        self.hub = hub
        self.queue = queue          # None: the SQLite rows of ``store``; else a RedisQueue (its rows, its jobs)
        self.entries: dict[str, str] = {}     # track id → its stream entry (with ``queue``)
        self.auth = auth
        self.store = store
        self.storage = storage
        self.workers = max(1, int(workers))
        self.running: dict[str, asyncio.Task] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._retry_task: asyncio.Task | None = None
        self.retry_s = self.RETRY_S
        self.rendered = 0
        self.render_s: list[float] = []

    async def open(self) -> None:
        """Connect the shared queue, if any (raises QueueError when it does not answer). ``[control]``"""
        if self.queue is not None:
            await self.queue.open()

    def start(self) -> None:
        """Re-queue interrupted renders and start the worker loop. ``[control]``"""
        if self.queue is not None:
            self._task = asyncio.get_running_loop().create_task(self._queue_loop())
            self._retry_task = asyncio.get_running_loop().create_task(self._touch_loop())
            return
        n = self.store.requeue_running()
        if n:
            log.info("tracks: %d interrupted render(s) back in the queue", n)
        self._task = asyncio.get_running_loop().create_task(self._loop())
        self._retry_task = asyncio.get_running_loop().create_task(self._retry_loop())

    def kick(self) -> None:
        """A track was queued: look at the queue now. ``[control]``"""
        self._wake.set()

    async def close(self) -> None:
        """Stop the worker: renders in progress stay ``running`` and resume at the next start. ``[control]``"""
        for t in [self._task, self._retry_task, *self.running.values()]:
            if t is not None:
                t.cancel()
        for t in [self._task, self._retry_task, *self.running.values()]:
            if t is not None:
                try:
                    await t
                except (asyncio.CancelledError, Exception):  # noqa: BLE001
                    pass
        if self.queue is not None:
            await self.queue.close()

    # ------------------------------------------------------------------ the rows, in SQLite or in the shared queue
    async def add_track(self, key_id: str, prompt: str, seconds: float, fmt: str, seed: int) -> str:
        if self.queue is not None:
            return await self.queue.add_track(key_id, prompt, seconds, fmt, seed)
        return self.store.add_track(key_id, prompt, seconds, fmt, seed)

    async def track(self, tid: str) -> dict | None:
        if self.queue is not None:
            return await self.queue.track(tid)
        return self.store.track(tid)

    async def tracks_of(self, key_id: str) -> list[dict]:
        if self.queue is not None:
            return await self.queue.tracks_of(key_id)
        return self.store.tracks_of(key_id)

    async def _set(self, tid: str, **fields) -> None:
        if self.queue is not None:
            await self.queue.set_track(tid, **fields)
        else:
            self.store.set_track(tid, **fields)

    # ------------------------------------------------------------------ the shared queue's worker
    async def _queue_loop(self) -> None:
        from bridge.web.redisqueue import QueueError

        while True:
            free = self.workers - len(self.running)
            if free <= 0:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), 1.0)
                except asyncio.TimeoutError:
                    pass
                continue
            try:
                jobs = await self.queue.take(free, block_s=1.0)
            except QueueError as e:
                log.warning("tracks: %s; trying again in 1 s", e)
                await asyncio.sleep(1.0)
                continue
            for eid, row in jobs:
                tid = row["id"]
                if tid in self.running:
                    continue
                try:
                    await self.queue.set_track(tid, state="running", started=time.time(), progress=0.0,
                                               attempts=int(row["attempts"] or 0) + 1, worker=self.queue.consumer)
                except QueueError as e:      # not acked: taken over later
                    log.warning("tracks: %s", e)
                    continue
                self.entries[tid] = eid
                t = asyncio.get_running_loop().create_task(self._job(eid, row))
                self.running[tid] = t
                t.add_done_callback(lambda _t, tid=tid: (self.running.pop(tid, None), self.entries.pop(tid, None),
                                                         self._wake.set()))

    async def _job(self, eid: str, row: dict) -> None:
        """One job of the shared queue: render, store, mark the row, then ack. ``[control]``"""
        from bridge.web.redisqueue import QueueError

        try:
            if await self._render(row):
                await self.queue.ack(eid)
            else:                       # storing failed: not acked, so rendered again once taken over
                self._discard(self.storage.kept_path(row["id"], row["format"]))
                cur = await self.queue.track(row["id"]) or {}
                reason = (cur.get("error") or "storage: failed").split(" — ")[0]
                await self.queue.set_track(row["id"], location=None,
                                           error=(f"{reason} — rendered and stored again when its job is "
                                                  f"taken over (in {self.queue.reclaim_s:g} s)")[:500])
        except QueueError as e:
            log.warning("tracks: track %s: %s; its job stays pending and is taken over", row["id"], e)

    async def _touch_loop(self) -> None:
        """Every ``reclaim_s / 4``: the jobs this worker renders are touched (it is alive); a render
        whose job another gateway took over (this one stalled) stops. ``[control]``"""
        while True:
            await asyncio.sleep(self.queue.reclaim_s / 4)
            try:
                lost = await self.queue.touch(self.entries.values())
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 — the touches go on
                log.warning("tracks: touching the running jobs failed: %s", e)
                continue
            for tid, eid in list(self.entries.items()):
                if eid in lost and tid in self.running:
                    log.warning("tracks: track %s was taken over by another gateway; stopping its render here", tid)
                    self.running[tid].cancel()

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

    async def _render(self, row: dict) -> bool:
        """Render, store and mark the row; True when the row is final (done, or a failed render),
        False when storing failed and the file is kept to be stored again. ``[control]``"""
        tid, fmt = row["id"], row["format"]
        t0 = time.perf_counter()
        part = self.storage.part_path(tid, fmt)
        try:
            info = await self._render_to(row, part)
        except asyncio.CancelledError:
            raise                       # shutdown: the row stays 'running' and is re-queued at start
        except StreamError as e:
            self._discard(part)
            await self._set(tid, state="error", error=f"{e.reason}: {e.message}"[:500], finished=time.time())
            return True
        except Exception as e:  # noqa: BLE001 — one track's failure never stops the queue
            log.exception("track %s failed", tid)
            self._discard(part)
            await self._set(tid, state="error", error=f"internal: {type(e).__name__}: {e}"[:500],
                            finished=time.time())
            return True
        audio_s = info.pop("audio_s")
        try:
            location = await self.storage.commit(tid, fmt, part)
        except StorageError as e:
            info["render_s"] = time.perf_counter() - t0
            await self._kept(row, part, e, info)
            return False
        info["render_s"] = time.perf_counter() - t0
        await self._stored(row, location, info, audio_s)
        self.rendered += 1
        self.render_s.append(info["render_s"])
        return True

    async def _render_to(self, row: dict, part: str) -> dict:
        """Render the track into ``part`` (0600); returns the row's figures. ``[control]``"""
        tid, fmt, seconds = row["id"], row["format"], float(row["seconds"])
        loop = asyncio.get_running_loop()
        stream = enc = f = None
        try:
            stream = self.hub.open()
            enc = Encoder(fmt, stream.rate, stream.channels)
            f = open_private(part, "wb")
            total = int(round(seconds * stream.rate))
            stream.play(row["prompt"], seconds, row["seed"])
            last = 0.0
            while True:
                a = await stream.read_fast(stream.rate)
                if a is None:
                    break
                data = await loop.run_in_executor(self.hub.pool, enc.push, a)
                f.write(data)
                now = time.monotonic()
                if now - last > 0.5:
                    last = now
                    await self._set(tid, progress=min(0.99, stream.frames_read / max(1, total)))
            f.write(await loop.run_in_executor(self.hub.pool, enc.finish))
            f.close()
            f = None
            self.auth.encode_stats(enc)
            return {"bytes": enc.bytes_out, "compute_s": stream.compute_s, "cost_usd": self.auth.cost(stream.compute_s),
                    "audio_s": stream.frames_read / stream.rate}
        finally:
            if f is not None:
                f.close()
            if enc is not None:
                enc.close()
            if stream is not None:
                self.hub.close(stream)

    async def _stored(self, row: dict, location: str, info: dict, audio_s: float) -> None:
        """The track is in storage: the row is ``done`` and its key is billed. ``[control]``"""
        await self._set(row["id"], state="done", progress=1.0, finished=time.time(), location=location,
                        error=None, **info)
        self.auth.meter(row["key_id"], None, audio_s, info["compute_s"], info["cost_usd"])
        log.info("track %s: %.1f s of audio stored in %s", row["id"], audio_s, self.storage.kind)

    async def _kept(self, row: dict, part: str, e: StorageError, info: dict) -> None:
        """Storing failed: keep the finished file here, say so in the row, retry later. ``[control]``"""
        tid = row["id"]
        try:
            kept = self.storage.keep(tid, row["format"], part)
        except OSError as oe:
            log.warning("track %s: storing failed (%s) and the file could not be kept: %s", tid, e, oe)
            self._discard(part)
            await self._set(tid, state="error", finished=time.time(), error=f"storage: {e}"[:500], **info)
            return
        log.warning("track %s: storing failed (%s); the audio is kept in %s and retried every %g s",
                    tid, e, kept, self.retry_s)
        await self._set(tid, state="error", finished=time.time(), location=kept, **info,
                        error=(f"storage: {e} — the rendered audio is kept on the server and storing "
                               f"it is retried")[:500])

    async def _retry_loop(self) -> None:
        while True:
            try:
                await self.retry_kept()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 — the retries go on
                log.exception("tracks: retrying kept tracks failed")
            await asyncio.sleep(self.retry_s)

    async def retry_kept(self) -> int:
        """Offer the kept tracks to storage again, oldest first; stops at the first refusal (storage is
        still down). Returns how many were stored. ``[control]``"""
        n = 0
        for row in self.store.kept_tracks():
            tid, fmt = row["id"], row["format"]
            path = self.storage.kept_path(tid, fmt)       # never a path read back from the row
            if not os.path.isfile(path):
                self.store.set_track(tid, location=None, error="storage failed and the kept audio is gone; "
                                                               "queue the track again")
                continue
            try:
                location = await self.storage.commit(tid, fmt, path)
            except StorageError as e:
                log.info("tracks: storage still refuses %s: %s", tid, e)
                return n
            info = {k: row[k] for k in ("bytes", "compute_s", "cost_usd", "render_s")}
            await self._stored(row, location, info, float(row["seconds"]))
            n += 1
        return n


TRACKS = web.AppKey("wavebridge.tracks", TrackWorker)


# ---------------------------------------------------------------------- endpoints
async def track_add(request: web.Request) -> web.Response:
    """``POST /v1/tracks``: queue a whole track; 202 with its row. ``[control]``"""
    auth, worker = request.app[AUTH], request.app[TRACKS]
    p = auth.identify(request)
    body = await read_json(request)
    prompt = prompt_of(body)
    seconds = number_of(body, "seconds", 0.0, MAX_TRACK_S, required=True)
    if seconds <= 0:
        raise ApiError(400, "bad_request", "seconds must be > 0")
    fmt = format_of(body.get("format", "opus"))
    seed = seed_of(body)
    auth.admit(p, seconds, stream=False)
    tid = await _queue(worker.add_track(p.key_id, prompt, seconds, fmt,
                                        secrets.randbelow(2 ** 31) if seed is None else seed))
    worker.kick()
    return web.json_response(_track_view(await _queue(worker.track(tid))), status=202,
                             headers={"Location": f"/v1/tracks/{tid}"})


async def _queue(coro):
    """A row operation; the shared queue not answering is a 503 with ``Retry-After``. ``[control]``"""
    from bridge.web.redisqueue import QueueError

    try:
        return await coro
    except QueueError as e:
        log.warning("%s", e)
        raise ApiError(503, "busy", "the track queue is not answering; try again shortly",
                       {"Retry-After": "10"}) from None


async def _track_of(request: web.Request, worker: TrackWorker, p: Principal) -> dict:
    tid = request.match_info["id"]
    row = await _queue(worker.track(tid)) if TRACK_ID_RE.match(tid) else None
    if row is None or (row["key_id"] != p.key_id and p.key_id != "local"):
        raise ApiError(404, "bad_request", "no such track")
    return row


def _track_view(row: dict) -> dict:
    v = {k: row[k] for k in ("id", "state", "progress", "prompt", "seconds", "format", "seed", "created",
                             "started", "finished", "error", "bytes", "compute_s", "cost_usd", "render_s")}
    v["url"] = f"/v1/tracks/{row['id']}"
    v["download_url"] = f"/v1/tracks/{row['id']}/audio" if row["state"] == "done" else None
    return v


async def track_get(request: web.Request) -> web.Response:
    """``GET /v1/tracks/{id}``: state, progress and the download URL. ``[control]``"""
    auth = request.app[AUTH]
    p = auth.principal(request)
    return web.json_response(_track_view(await _track_of(request, request.app[TRACKS], p)))


async def track_list(request: web.Request) -> web.Response:
    """``GET /v1/tracks``: the key's tracks, newest first. ``[control]``"""
    auth = request.app[AUTH]
    p = auth.principal(request)
    rows = await _queue(request.app[TRACKS].tracks_of(p.key_id))
    return web.json_response({"tracks": [_track_view(r) for r in rows]})


async def track_audio(request: web.Request) -> web.StreamResponse:
    """``GET /v1/tracks/{id}/audio``: the stored file, streamed from storage. ``[control]``"""
    auth, storage = request.app[AUTH], request.app[TRACKS].storage
    p = auth.principal(request)
    row = await _track_of(request, request.app[TRACKS], p)
    if row["state"] != "done":
        raise ApiError(409, "bad_request", f"track is {row['state']}, not done")
    try:
        f = await storage.open(row["id"], row["format"])
    except StorageError as e:
        log.warning("track %s: %s", row["id"], e)
        raise ApiError(503, "busy", "the track storage is not answering; try again shortly",
                       {"Retry-After": "10"}) from None
    if f is None:
        raise ApiError(410, "bad_request", "the stored audio is gone (deleted from the storage)")
    resp = web.StreamResponse(headers={"Content-Disposition": f'attachment; filename="{row["id"]}.'
                                                              f'{FORMATS[row["format"]][3]}"'})
    resp.content_type = FORMATS[row["format"]][2]
    if row["bytes"]:
        resp.content_length = int(row["bytes"])
    await resp.prepare(request)
    try:
        while True:
            try:
                data = await storage.read(f)
            except StorageError as e:       # the headers are out: cut the body short, the client sees it
                log.warning("track %s: reading it failed mid-download: %s", row["id"], e)
                resp.force_close()
                return resp
            if not data:
                break
            await resp.write(data)
    finally:
        f.close()
    await resp.write_eof()
    return resp
