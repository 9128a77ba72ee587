"""Warm-up of the web path at start, so the first request is as fast as the hundredth. ``[control]``

``wavebridge serve`` warms the engine (``Daemon.open``); what a first web request still paid for
on its own was the web side's first use of everything: the encoders' codecs and muxers (libopus,
LAME, the Ogg/WAV muxers, PyAV's lazily imported modules), the encoder pool's threads (created on
first submit), the first private slot (its ring in ``/dev/shm``, its reader, the engine's first
batch and events for it) and aiohttp's own first request. :func:`warm_web_path` does each once,
before the daemon says it is ready, and returns what it did (``HttpService.warmed``).

A ``GET`` is not a ``POST``: the first ``POST /v1/audio/generate`` still paid ~0.7 ms in the
guard's Content-Type check alone (aiohttp parses the header with :mod:`email`'s header registry,
built on first use) and more in the JSON body's read and the validators; on a first byte of
~3 ms that made the first request 1.5–2.3× the later ones. So the warm-up also sends one such
``POST`` on its own socket, with a body refused (400) by the last validator: every check before
it runs, and nothing is admitted, played or billed. The admission's checks (the tier's usage
queries, SQLite's first statements of them) run once read-only, and the warm-up's own requests
are left out of the request counters (``/metrics``).
"""
from __future__ import annotations

import asyncio
import gc
import json
import logging
import time

import numpy as np

from bridge.web.api import ApiError
from bridge.web.encoding import FORMATS, Encoder, PacketEncoder
from bridge.web.store import LOCAL_TIER, Principal
from bridge.web.stream import StreamError

log = logging.getLogger("wavebridge.http")

WARM_PROMPT = "warm up"
WARM_SECONDS = 0.25
WARM_TIMEOUT_S = 15.0
#: the warm-up's ``POST /v1/audio/generate``: valid up to its format, which no encoder has (400)
WARM_GENERATE_BODY = {"prompt": WARM_PROMPT, "duration_seconds": WARM_SECONDS, "format": "warm-up"}


def _encode(fmt: str, rate: int, channels: int) -> int:
    """Encode 100 ms of silence with one format (or Opus packets); the bytes out. ``[control]`` worker"""
    x = np.zeros((rate // 10, channels), np.float32)
    if fmt == "opus_packets":
        e = PacketEncoder(rate, channels)
        try:
            return sum(map(len, e.push(x) + e.finish()))
        finally:
            e.close()
    e = Encoder(fmt, rate, channels)
    try:
        return len(e.push(x)) + len(e.finish())
    finally:
        e.close()


async def _encoders(svc, rate: int, channels: int) -> list[str]:
    loop = asyncio.get_running_loop()
    fmts = [*FORMATS, "opus_packets"]
    # all at once: every worker thread of the pool is started too
    await asyncio.gather(*(loop.run_in_executor(svc.hub.pool, _encode, f, rate, channels) for f in fmts))
    return fmts


def _admission(svc) -> bool:
    """A stream's admission, read only: the tier checks with their usage queries (SQLite's first
    statements) for the local principal, and the engine-headroom check. Whether both passed."""
    try:
        svc.auth.admit(Principal("local", "local", "local", LOCAL_TIER), WARM_SECONDS)
        svc.hub.admission.check(len(svc.hub.streams))
        return True
    except ApiError as e:            # e.g. the local allowance used up: a request would be refused alike
        log.info("web warm-up: admission refused: %s", e.message)
        return False


async def _private_slot(svc) -> int:
    """Open a first private slot, play a short job into it, read it to its end, close it; frames read."""
    s = svc.hub.open()
    frames = 0
    try:
        s.play(WARM_PROMPT, WARM_SECONDS, seed=1)
        async with asyncio.timeout(WARM_TIMEOUT_S):
            while (a := await s.read_fast(s.rate // 4)) is not None:
                frames += a.shape[0]
    except (TimeoutError, StreamError) as e:   # a slow backend: the slot was still opened and closed
        log.info("web warm-up: the private slot's job did not finish (%s)", e)
    finally:
        svc.hub.close(s)
    return frames


async def _self_request(host: str, port: int, method: str = "GET", path: str = "/healthz",
                        body: dict | None = None) -> int:
    """One request on our own socket (by default ``GET /healthz``: aiohttp's first request); the status."""
    r, w = await asyncio.open_connection(host, port)
    try:
        hp = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        data = b"" if body is None else json.dumps(body).encode()
        extra = "" if body is None else (f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
                                         f"Content-Length: {len(data)}\r\n")
        w.write(f"{method} {path} HTTP/1.1\r\nHost: {hp}\r\n{extra}Connection: close\r\n\r\n".encode() + data)
        async with asyncio.timeout(5.0):
            head = await r.readline()
            await r.read()
        return int(head.split()[1]) if head.startswith(b"HTTP/") else 0
    finally:
        w.close()


def _uncount(counter, before: dict) -> None:
    """Put the request counters back to ``before`` (the warm-up's own requests are no one's)."""
    for k in list(counter):
        if counter[k] != before.get(k, 0):
            if k in before:
                counter[k] = before[k]
            else:
                del counter[k]


def _connect_host(host: str) -> str:
    """Where to reach a server bound to ``host`` from this machine."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "::1"
    return host


async def warm_web_path(svc) -> dict:
    """Warm the encoders, the encoder pool, a first private slot and aiohttp's request path of the
    started service ``svc`` (``bridge.web.app.HttpService``); returns what was done. ``[control]``"""
    t0 = time.perf_counter()
    rate = 48000                     # the web side's one rate (docs/http.md): 48 kHz stereo
    out: dict = {"formats": [], "private_slot_frames": 0, "healthz": 0, "generate_refused": 0}
    try:
        out["formats"] = await _encoders(svc, rate, 2)
    except Exception as e:  # noqa: BLE001 — a broken codec shows on its first request, clearly; start goes on
        log.warning("web warm-up: an encoder failed: %s", e)
    out["admission"] = _admission(svc)
    try:
        out["private_slot_frames"] = await _private_slot(svc)
    except Exception as e:  # noqa: BLE001 — e.g. the private slots are full
        log.warning("web warm-up: no private slot: %s", getattr(e, "message", e))
    counted = dict(svc.auth.meters.requests)
    try:
        out["healthz"] = await _self_request(_connect_host(svc.host), svc.port)
        # a POST with a JSON body through the guard, the body's read and the generate validators
        out["generate_refused"] = await _self_request(_connect_host(svc.host), svc.port, "POST",
                                                      "/v1/audio/generate", WARM_GENERATE_BODY)
    except (OSError, TimeoutError, ValueError, IndexError) as e:
        log.info("web warm-up: no request to %s:%s (%s)", svc.host, svc.port, e)
    _uncount(svc.auth.meters.requests, counted)
    # the start-up's objects (imports, the backend, the warm-up's garbage) collected once and frozen
    # out of the collector, so the first request does not pay for a full collection of them
    gc.collect()
    gc.freeze()
    out["gc_frozen"] = gc.get_freeze_count()
    out["ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    return out
