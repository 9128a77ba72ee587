"""``POST /v1/audio/generate``: one prompt for ``duration_seconds``, streamed as it is generated.

Server-Sent Events with base64 audio chunks (``Accept: text/event-stream``, the default) or the
encoded stream itself (``Accept: audio/ogg`` / ``audio/mpeg`` / ``audio/wav`` / ``audio/L16``),
chunked. The steps: :func:`parse_request` (validation, before anything is admitted), admission,
one :class:`~bridge.web.lease.StreamLease`, then :class:`Generation` plays the prompt, prepares
the response, pumps the private stream through the encoder and ends with a ``completed`` event.
The lease is released before the last write: a client that starts its next request the moment
this one ends finds its quota and slot already free. On the ``[control]`` loop; encoding on the
pool's worker threads.
"""
from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from dataclasses import dataclass

from aiohttp import web

from bridge.web import admission
from bridge.web.admission import KeyWatch, bound_send_buffer
from bridge.web.api import (CONFIG, ApiError, error_body, format_of, number_of, prompt_of, read_json,
                            seed_of)
from bridge.web.auth import AUTH
from bridge.web.encoding import Encoder
from bridge.web.lease import STREAMS, StreamLease
from bridge.web.stream import StreamError
from plugin_stub.protocol import WavebridgeError

log = logging.getLogger("wavebridge.http")

MAX_GENERATE_S = 600.0
RAW_ACCEPT = {"audio/ogg": "opus", "audio/opus": "opus", "audio/mpeg": "mp3", "audio/mp3": "mp3",
              "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/l16": "pcm_s16le",
              "application/octet-stream": "pcm_s16le"}


@dataclass(frozen=True)
class GenerateRequest:
    """A validated ``/v1/audio/generate`` request."""

    prompt: str
    seconds: float
    seed: int | None
    fmt: str
    sse: bool                 # Server-Sent Events (else the encoded stream itself)


async def parse_request(request: web.Request) -> GenerateRequest:
    """The body and the Accept header, checked; raises ApiError 400/406/413. ``[control]``"""
    body = await read_json(request)
    prompt = prompt_of(body)
    dur = number_of(body, "duration_seconds", 0.0, MAX_GENERATE_S, required=True)
    if dur <= 0:
        raise ApiError(400, "bad_request", "duration_seconds must be > 0")
    seed = seed_of(body)
    accept = request.headers.get("Accept", "").split(",")[0].split(";")[0].strip().lower()
    raw_fmt = RAW_ACCEPT.get(accept)
    if raw_fmt is None and accept not in ("", "*/*", "text/event-stream", "application/json"):
        raise ApiError(406, "bad_request", f"cannot answer Accept: {accept[:60]}; use text/event-stream, "
                                           "audio/ogg, audio/mpeg, audio/wav or audio/L16")
    fmt = format_of(body.get("format", raw_fmt or "opus"))
    if raw_fmt is not None and fmt != raw_fmt:
        raise ApiError(400, "bad_request", f"format {fmt} does not match Accept: {accept}")
    return GenerateRequest(prompt, dur, seed, fmt, raw_fmt is None)


async def generate(request: web.Request) -> web.StreamResponse:
    """``POST /v1/audio/generate``: SSE (default) or the raw encoded stream. ``[control]``"""
    t_req = time.monotonic()
    arrival_ns = time.monotonic_ns()
    auth = request.app[AUTH]
    p = auth.identify(request)
    g = await parse_request(request)
    auth.admit(p, g.seconds)
    with request.app[STREAMS].lease(auth, p, lambda s: Encoder(g.fmt, s.rate, s.channels),
                                    reserve_s=g.seconds) as lease:
        run = Generation(request, g, lease, t_req)
        try:
            return await run.serve(arrival_ns)       # it releases the lease before its last write
        finally:
            if not run.completed:
                log.info("generate: client went away after %.2f s of audio", lease.frames / lease.stream.rate)


class Generation:
    """One generate request's response, from the first header to the ``completed`` event. ``[control]``"""

    def __init__(self, request: web.Request, g: GenerateRequest, lease: StreamLease, t_req: float):
        self.request, self.g, self.lease, self.t_req = request, g, lease, t_req
        self.stream = lease.stream
        self.auth = request.app[AUTH]
        self.pool = request.app[STREAMS].pool
        # a client that takes nothing for this long is cut off (its unread audio is dropped)
        self.send_timeout_s = min(request.app[CONFIG].send_timeout_s, admission.STALL_S)
        self.key = KeyWatch(self.auth.store, lease.p.key_id)
        self.resp: web.StreamResponse | None = None
        self.chunk_index = 0
        self.completed = False            # the response reached its end (a last event or EOF)

    async def serve(self, arrival_ns: int) -> web.StreamResponse:
        """Play, answer, pump; an error after the headers is reported in the stream. ``[control]``"""
        try:
            self.stream.play(self.g.prompt, self.g.seconds, self.g.seed, arrival_ns)
        except WavebridgeError as e:
            raise ApiError(503, "busy", e.message, {"Retry-After": "1"}) from None
        resp = await self._prepare()
        try:
            if await self._pump():
                await self._complete()
            self.completed = True
            return resp
        except (asyncio.CancelledError, ConnectionError):   # the client went away (reset, "Connection lost")
            raise
        except Exception as e:  # noqa: BLE001 — headers are out: report it in the stream
            log.exception("generate failed mid-stream")
            if self.g.sse:
                await resp.write(_sse(error_body("internal", f"internal error: {type(e).__name__}")))
            return resp

    async def _prepare(self) -> web.StreamResponse:
        s, g = self.stream, self.g
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Wavebridge-Job": str(s.job)}
        resp = self.resp = web.StreamResponse(status=200, headers=headers)
        resp.content_type = "text/event-stream" if g.sse else self.lease.enc.content_type
        if not g.sse and g.fmt == "pcm_s16le":
            resp.content_type = f"audio/L16;rate={s.rate};channels={s.channels}"
        resp.enable_chunked_encoding()
        await resp.prepare(self.request)
        bound_send_buffer(self.request.transport)
        return resp

    async def _pump(self) -> bool:
        """Read, encode and send until the job is done (True) or the engine reports an error (False)."""
        loop = asyncio.get_running_loop()
        s, enc, first = self.stream, self.lease.enc, True
        while True:
            try:
                a = await s.read_fast(s.rate // 2)
            except StreamError as e:
                if self.g.sse:
                    await self.resp.write(_sse(error_body(e.reason, e.message)))
                return False
            if not self.key.check():          # revoked meanwhile (looked up once a second)
                s.stop(0.0)
                if self.g.sse:
                    await self.resp.write(_sse(error_body("unauthorized", "the API key was revoked")))
                return False
            last = a is None
            data = await loop.run_in_executor(self.pool, enc.finish if last else enc.push, *(() if last else (a,)))
            if not last:
                self.lease.frames += a.shape[0]
            if data:
                await self._send(data)
                if first:
                    first = False
                    self.auth.meters.first_audio_ms.append(("sse" if self.g.sse else "raw",
                                                            (time.monotonic() - self.t_req) * 1e3))
            if last:
                return True

    async def _send(self, data: bytes) -> None:
        if self.g.sse:
            data = _sse({"event": "audio_chunk", "chunk_index": self.chunk_index,
                         "duration_buffered": round(self.lease.frames / self.stream.rate, 4),
                         "format": self.g.fmt, "audio": base64.b64encode(data).decode()})
        await _write(self.resp, data, self.send_timeout_s, self.request.transport)
        self.chunk_index += 1

    async def _complete(self) -> None:
        compute = self.stream.compute_s
        self.lease.release()              # before the last write (see the module docstring)
        if self.g.sse:
            await self.resp.write(_sse({"event": "completed",
                                        "total_duration": round(self.lease.frames / self.stream.rate, 4),
                                        "total_elapsed_seconds": round(time.monotonic() - self.t_req, 4),
                                        "compute_seconds": round(compute, 6),
                                        "cost_usd": self.auth.cost(compute)}))
        await self.resp.write_eof()


async def _write(resp: web.StreamResponse, data: bytes, timeout: float, transport=None) -> None:
    """``resp.write`` that gives up on a client which stopped reading (it would hold a slot forever):
    the connection is dropped with what it holds unsent."""
    try:
        async with asyncio.timeout(timeout):
            await resp.write(data)
    except TimeoutError:
        if transport is not None:
            transport.abort()
        raise ConnectionResetError(f"client took no data for {timeout:.0f} s") from None


def _sse(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
