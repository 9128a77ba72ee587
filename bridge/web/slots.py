"""The DAW slots over HTTP (the page's controls) and the status of every slot.

``POST /v1/slots/{slot}/play|stop`` submit the same commands as OSC's ``/wb/play`` and ``/wb/stop``
to a numbered (public) slot; ``GET /v1/status`` is every slot's row with its level, DAW slots first,
then the private web streams; ``GET /v1/status/ws`` pushes the same rows five times a second to
at most :data:`MAX_STATUS_CLIENTS` sockets, which the app's ``on_shutdown`` closes. ``[control]``
"""
from __future__ import annotations

import asyncio
import math
import time

import numpy as np
from aiohttp import web

from bridge.core.commands import MAX_FADE_S, Command
from bridge.web import admission
from bridge.web.api import DAEMON, ApiError, number_of, prompt_of, read_json, seed_of
from bridge.web.auth import AUTH
from bridge.web.lease import STREAMS
from plugin_stub.protocol import WavebridgeError

MAX_STATUS_CLIENTS = 64


class StatusClients:
    """The open ``/v1/status/ws`` sockets, closed at shutdown. ``[control]``"""

    def __init__(self):
        self.sockets: set = set()
        self.closing = False

    async def close_all(self, app: web.Application | None = None) -> None:
        """Close every status socket (an ``on_shutdown`` handler). ``[control]``"""
        self.closing = True
        for ws in list(self.sockets):
            try:
                await ws.close()
            except Exception:  # noqa: BLE001
                pass


STATUS = web.AppKey("wavebridge.status", StatusClients)


def setup(app: web.Application) -> None:
    """Give ``app`` its status clients and close them on shutdown. ``[control]``"""
    app[STATUS] = StatusClients()
    app.on_shutdown.append(app[STATUS].close_all)


def _public_slot(daemon, name: str):
    for n, s in daemon.slots.items():
        if not s.private and str(n) == name:
            return n
    raise ApiError(404, "bad_request", f"no slot {name[:40]!r}")


async def slot_play(request: web.Request) -> web.Response:
    """``POST /v1/slots/{slot}/play``: play a prompt on a DAW slot, as ``/wb/play`` does; the local
    admin only (403 for other keys). ``[control]``"""
    d = request.app[DAEMON]
    request.app[AUTH].identify_admin(request)
    slot = _public_slot(d, request.match_info["slot"])
    body = await read_json(request)
    prompt = prompt_of(body)
    seconds = number_of(body, "seconds", 0.0, 24 * 3600.0, default=0.0)
    try:
        job = d.submit(Command("play", slot=slot, prompt=prompt, seconds=seconds, seed=seed_of(body),
                               source="http"))
    except WavebridgeError as e:
        raise ApiError(503 if e.code == "busy" else 400, "bad_request", e.message) from None
    return web.json_response({"slot": slot, "job": job})


async def slot_stop(request: web.Request) -> web.Response:
    """``POST /v1/slots/{slot}/stop``: fade a DAW slot out, as ``/wb/stop`` does; the local admin
    only. ``[control]``"""
    d = request.app[DAEMON]
    request.app[AUTH].identify_admin(request)
    slot = _public_slot(d, request.match_info["slot"])
    body = await read_json(request)
    fade = number_of(body, "fade_s", 0.0, MAX_FADE_S, default=0.05)
    try:
        d.submit(Command("stop", slot=slot, fade_s=fade, source="http"))
    except WavebridgeError as e:
        raise ApiError(503 if e.code == "busy" else 400, "bad_request", e.message) from None
    return web.json_response({"slot": slot, "stopping": True})


def visible_streams(streams: dict, p=None) -> list:
    """The private streams ``p`` may see: all for the admin (or ``p`` None), else its own. ``[control]``"""
    if p is None or p.admin:
        return list(streams)
    return [name for name, st in list(streams.items()) if getattr(st, "owner", None) == p.key_id]


def status_rows(daemon, streams: dict, p=None) -> list[dict]:
    """Every slot's status row with its level (DAW slots first, then the private web streams), as
    ``p`` may see them: the admin (or ``p`` None) every row, another principal its own streams only
    (no DAW prompt, no other key's stream). ``[control]``"""
    rows = daemon.status() if p is None or p.admin else []
    for row in rows:
        s = daemon.slots.get(row["slot"])
        row["level_db"] = _level_db(s.ring) if s is not None else -120.0
        row["private"] = False
    for name in visible_streams(streams, p):
        s = daemon.slots.get(name)
        if s is None:
            continue
        ring = s.ring
        try:
            rows.append({"slot": name, "private": True, "state": s.state, "prompt": s.prompt if s.job else "",
                         "job": s.job.job if s.job else 0, "buffered_s": ring.buffered() / ring.sample_rate,
                         "underrun_frames": 0, "level_db": _level_db(ring)})
        except Exception:  # noqa: BLE001 — closing under us
            continue
    return rows


async def status(request: web.Request) -> web.Response:
    """``GET /v1/status``. ``[control]``"""
    d, auth, streams = request.app[DAEMON], request.app[AUTH], request.app[STREAMS].streams
    p = auth.principal(request)
    return web.json_response({"slots": status_rows(d, streams, p), "streams": len(visible_streams(streams, p)),
                              "tracks": auth.store.queue_depth(), "backend": d.backend.name,
                              "params": {k: list(v[:2]) for k, v in d.params().items()}})


async def status_ws(request: web.Request) -> web.WebSocketResponse:
    """``GET /v1/status/ws``: the slots' status and levels, five times a second. ``[control]``

    A client that does not read gets no more rows while its socket holds more than
    ``admission.SEND_BUFFER_MAX`` unsent, and is dropped after ``admission.STALL_S`` of that; a
    revoked key's socket is closed (1008) within a second."""
    d, streams, clients = request.app[DAEMON], request.app[STREAMS].streams, request.app[STATUS]
    p = request.app[AUTH].principal(request)
    if len(clients.sockets) >= MAX_STATUS_CLIENTS:
        raise ApiError(503, "busy", f"{MAX_STATUS_CLIENTS} status clients are connected", {"Retry-After": "5"})
    ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=4096, compress=False)
    await ws.prepare(request)
    transport = request.transport
    admission.bound_send_buffer(transport)
    key = admission.KeyWatch(request.app[AUTH].store, p.key_id)
    stalled = None
    clients.sockets.add(ws)
    try:
        while not ws.closed and not clients.closing:
            if not key.check():
                await ws.close(code=1008, message=b"API key revoked")
                break
            if admission.backlog(transport) > admission.SEND_BUFFER_MAX:
                stalled = stalled or time.monotonic()
                if time.monotonic() - stalled > admission.STALL_S:
                    transport.abort()           # it reads nothing: drop it with what it holds unsent
                    break
            else:
                stalled = None
                await ws.send_json({"type": "status", "slots": status_rows(d, streams, p),
                                    "streams": len(visible_streams(streams, p)),
                                    "t": time.time()})
            try:
                msg = await ws.receive(timeout=0.2)
                if msg.type.name in ("CLOSE", "CLOSING", "CLOSED", "ERROR"):
                    break
            except asyncio.TimeoutError:
                pass
    finally:
        clients.sockets.discard(ws)
    return ws


def _level_db(ring) -> float:
    """Peak level (dBFS) of the last ~21 ms before the read head (the write head if no one reads);
    -120 for an idle slot with nothing buffered."""
    try:
        r, w = ring.read_index, ring.write_index
        if not ring.playing and w <= r:
            return -120.0
        alive = time.monotonic_ns() - ring.reader_heartbeat_ns < 1_000_000_000
        end = r if alive and 0 < r <= w else w
        start = max(0, end - 1024)
        if end <= start:
            return -120.0
        a = ring.load(start, end - start)
        peak = float(np.max(np.abs(a))) if a.size else 0.0
    except Exception:  # noqa: BLE001 — the ring is closing under us
        return -120.0
    return round(20 * math.log10(max(peak, 1e-6)), 1)
