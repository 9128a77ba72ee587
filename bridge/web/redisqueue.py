"""The track queue shared by several gateways: a Redis stream with one consumer group (``--queue redis://…``).

SQLite (``bridge.web.store``) stays the embedded default; with ``--queue redis://HOST:PORT/DB`` every
gateway (a ``wavebridge serve --http`` process, on any machine) sees the same tracks:

- **Rows**: one hash per track, ``wb:track:<id>`` (every field JSON-encoded, so numbers and None come
  back as they went in), and ``wb:tracks:of:<key id>``, a sorted set of the key's track ids by
  creation time (``GET /v1/tracks``). SQLite is per machine, so the rows live in Redis too.
- **Jobs**: ``POST /v1/tracks`` writes the row and ``XADD``\\ s ``{id}`` to the stream
  ``wb:tracks:jobs`` in one transaction. Every gateway's worker reads the group ``wb:renderers`` as
  its own consumer (``<host>-<pid>-<random>``, new at every start) with ``XREADGROUP``, renders,
  stores the file, marks the row ``done`` and only then ``XACK``\\ s (and ``XDEL``\\ s) the entry.
- **A dead worker's jobs**: while a job renders its worker touches the entry every ``reclaim_s / 4``
  (``XCLAIM … JUSTID`` to itself, which resets its idle time and not its delivery count); an entry
  idle for ``reclaim_s`` (default 30 s; ``?reclaim_s=N`` in the URL) belongs to a worker that is gone
  and any gateway takes it over with ``XAUTOCLAIM`` and renders it again, from the start, with the
  seed stored at queue time (the same audio).
- **Exactly once in the store**: the stored object's name is the track id (``<id>.<ext>``, a file or
  an S3 key), so a second store of the same track replaces the first (one file, one object), and a
  job whose row is already ``done`` (stored, then the worker died before its ack) is acked without
  rendering it again (no second render, no second bill).

A Redis that does not answer at start is a :class:`QueueError` (one line, ``serve`` exits 2); later,
a worker that cannot reach it logs, waits and tries again, and a job it could not ack stays pending
and is taken over like a dead worker's. ``[control]``: every coroutine runs on the daemon's loop.
"""
from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import time
from urllib.parse import parse_qs, urlsplit, urlunsplit

from bridge.web.store import TRACK_ID_RE

log = logging.getLogger("wavebridge.tracks")

STREAM = "wb:tracks:jobs"
GROUP = "wb:renderers"
ROW = "wb:track:"
OF_KEY = "wb:tracks:of:"
#: an entry idle this long belongs to a worker that is gone (its worker touches it every RECLAIM_S / 4)
RECLAIM_S = 30.0
CONNECT_TIMEOUT_S = 5.0
#: a consumer (one start of one gateway) holding no job and idle this long is removed from the group
FORGET_S = 86400.0
#: the columns of a track row (the SQLite schema's, plus ``worker``: the consumer rendering it)
FIELDS = ("id", "key_id", "prompt", "seconds", "format", "seed", "state", "progress", "created", "started",
          "finished", "attempts", "error", "location", "bytes", "compute_s", "cost_usd", "render_s", "worker")


class QueueError(RuntimeError):
    """Redis did not answer or refused; the message says which queue and why (no traceback needed)."""


def parse_queue_url(url: str) -> tuple[str, float]:
    """``redis://[user:pass@]host:port/db[?reclaim_s=N]`` (or ``rediss://``, ``unix://``) → (the URL for
    redis-py, reclaim seconds); raises ValueError. ``[control]``"""
    u = urlsplit(str(url))
    if u.scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"--queue {redact(url)}: not a redis://HOST:PORT/DB URL")
    if u.scheme != "unix":
        if not u.hostname:
            raise ValueError(f"--queue {redact(url)}: no host")
        try:
            u.port
        except ValueError:
            raise ValueError(f"--queue {redact(url)}: the port must be 0..65535") from None
        db = u.path.strip("/")
        if db and not db.isdigit():
            raise ValueError(f"--queue {redact(url)}: the database is a number (redis://host:port/0)")
    q = parse_qs(u.query)
    reclaim = RECLAIM_S
    if "reclaim_s" in q:
        try:
            reclaim = float(q.pop("reclaim_s")[-1])
        except ValueError:
            reclaim = -1.0
        if not 0.5 <= reclaim <= 86400:
            raise ValueError(f"--queue {redact(url)}: reclaim_s must be 0.5..86400 seconds")
    rest = "&".join(f"{k}={v[-1]}" for k, v in q.items())
    return urlunsplit((u.scheme, u.netloc, u.path, rest, "")), reclaim


def redact(url: str) -> str:
    """The URL without its password, for messages. ``[control]``"""
    u = urlsplit(str(url))
    if u.password is None:
        return str(url)
    host = u.netloc.rpartition("@")[2]
    return urlunsplit((u.scheme, f"{u.username or ''}:***@{host}", u.path, u.query, ""))


def _enc(v) -> str:
    return json.dumps(v)


def _dec(h: dict) -> dict:
    row = {k: None for k in FIELDS}
    for k, v in h.items():
        try:
            row[k] = json.loads(v)
        except ValueError:
            row[k] = v
    return row


class RedisQueue:
    """The shared queue and its rows in one Redis database. ``open()`` before use. ``[control]``"""

    def __init__(self, url: str, consumer: str | None = None):
        self.url, self.reclaim_s = parse_queue_url(url)
        self.shown = redact(url)
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self.client = None
        self._cursor = "0-0"            # where XAUTOCLAIM goes on looking for abandoned entries

    def describe(self) -> str:
        return f"the track queue {self.shown}"

    def _error(self, e: Exception) -> QueueError:
        return QueueError(f"{self.describe()}: {type(e).__name__}: {e}"[:400])

    async def open(self) -> None:
        """Connect and make sure the stream and its group exist; raises QueueError. ``[control]``"""
        try:
            import redis.asyncio as aioredis  # lazy: only with --queue redis://…
            from redis.exceptions import RedisError, ResponseError
        except ImportError:
            raise QueueError(f"{self.describe()}: the Python package redis is not installed "
                             f"(pip install 'wavebridge[queue]')") from None

        self.client = aioredis.from_url(self.url, decode_responses=True,
                                        socket_connect_timeout=CONNECT_TIMEOUT_S)
        try:
            await self.client.ping()
            try:
                await self.client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
            except ResponseError as e:
                if "BUSYGROUP" not in str(e):
                    raise
            for c in await self.client.xinfo_consumers(STREAM, GROUP):   # gateways gone long ago, holding nothing
                if int(c.get("pending", 0)) == 0 and int(c.get("idle", 0)) > FORGET_S * 1000:
                    await self.client.xgroup_delconsumer(STREAM, GROUP, c["name"])
        except (RedisError, OSError) as e:
            await self.close()
            raise QueueError(f"{self.describe()} is not reachable: {e}"[:400]) from None

    async def close(self) -> None:
        if self.client is not None:
            c, self.client = self.client, None
            try:
                await c.aclose()
            except Exception:  # noqa: BLE001 — closing
                pass

    async def _run(self, coro):
        from redis.exceptions import RedisError

        try:
            return await coro
        except (RedisError, OSError) as e:
            raise self._error(e) from None

    # ------------------------------------------------------------------ rows
    async def add_track(self, key_id: str, prompt: str, seconds: float, fmt: str, seed: int) -> str:
        """Write the row and queue its job in one transaction; returns the track id. ``[control]``"""
        tid = secrets.token_hex(16)
        now = time.time()
        row = {"id": tid, "key_id": key_id, "prompt": prompt, "seconds": float(seconds), "format": fmt,
               "seed": int(seed), "state": "queued", "progress": 0.0, "created": now, "attempts": 0}
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(ROW + tid, mapping={k: _enc(v) for k, v in row.items()})
        pipe.zadd(OF_KEY + key_id, {tid: now})
        pipe.xadd(STREAM, {"id": tid})
        await self._run(pipe.execute())
        return tid

    async def track(self, tid: str) -> dict | None:
        """A track's row, or None. ``[control]``"""
        if not TRACK_ID_RE.match(tid or ""):
            return None
        h = await self._run(self.client.hgetall(ROW + tid))
        return _dec(h) if h else None

    async def tracks_of(self, key_id: str, limit: int = 100) -> list[dict]:
        """The key's tracks, newest first. ``[control]``"""
        ids = await self._run(self.client.zrevrange(OF_KEY + key_id, 0, int(limit) - 1))
        pipe = self.client.pipeline(transaction=False)
        for tid in ids:
            pipe.hgetall(ROW + tid)
        return [_dec(h) for h in await self._run(pipe.execute()) if h]

    async def set_track(self, tid: str, **fields) -> None:
        """Update a track's row (field names come from code, never from a request). ``[control]``"""
        if fields:
            await self._run(self.client.hset(ROW + tid, mapping={k: _enc(v) for k, v in fields.items()}))

    async def queue_depth(self) -> dict:
        """Entries in the stream and how many of them a worker holds. ``[control]``"""
        n = await self._run(self.client.xlen(STREAM))
        p = await self._run(self.client.xpending(STREAM, GROUP))
        held = int(p["pending"]) if isinstance(p, dict) else 0
        return {"queued": max(0, n - held), "running": held}

    # ------------------------------------------------------------------ jobs
    async def take(self, n: int, block_s: float = 1.0) -> list[tuple[str, dict]]:
        """Up to ``n`` jobs for this consumer as (entry id, row): entries a gone worker left idle for
        ``reclaim_s`` first, then new ones (waiting up to ``block_s`` for one). Jobs whose row is
        ``done`` already (stored, then its worker died before the ack) or gone are acked here and not
        returned. ``[control]``"""
        entries: list[tuple[str, dict]] = []
        got = await self._run(self.client.xautoclaim(STREAM, GROUP, self.consumer, int(self.reclaim_s * 1000),
                                                     start_id=self._cursor, count=n))
        self._cursor = got[0] or "0-0"
        for eid, f in got[1]:
            if f:
                log.info("tracks: took over job %s (track %s) from a worker that is gone", eid, f.get("id"))
                entries.append((eid, f))
        for eid in (got[2] if len(got) > 2 else []):     # entries deleted under the group: drop them
            await self._run(self.client.xack(STREAM, GROUP, eid))
        if len(entries) < n:
            res = await self._run(self.client.xreadgroup(GROUP, self.consumer, {STREAM: ">"},
                                                         count=n - len(entries), block=int(block_s * 1000)))
            for _stream, items in res or []:
                entries.extend((eid, f) for eid, f in items)
        out = []
        for eid, f in entries:
            row = await self.track(f.get("id", ""))
            if row is None or row["state"] == "done":
                await self.ack(eid)
                continue
            out.append((eid, row))
        return out

    async def touch(self, entry_ids) -> set:
        """This worker is alive and still rendering these entries: reset their idle time. Returns the
        ones it no longer holds (another gateway took them over while this one stalled for
        ``reclaim_s``: its render should stop). ``[control]``"""
        ids = set(entry_ids)
        if not ids:
            return set()
        held = await self._run(self.client.xpending_range(STREAM, GROUP, "-", "+", max(64, 4 * len(ids)),
                                                          consumername=self.consumer))
        mine = ids & {p["message_id"] for p in held}
        if mine:
            await self._run(self.client.xclaim(STREAM, GROUP, self.consumer, 0, sorted(mine), justid=True))
        return ids - mine

    async def ack(self, entry_id: str) -> None:
        """The job is finished (its row says how): it leaves the group and the stream. ``[control]``"""
        pipe = self.client.pipeline(transaction=True)
        pipe.xack(STREAM, GROUP, entry_id)
        pipe.xdel(STREAM, entry_id)
        await self._run(pipe.execute())
