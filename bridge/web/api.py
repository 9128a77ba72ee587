"""What every endpoint family shares: the config, the app keys, errors, JSON bodies, validators.

Nothing here holds state: :class:`HttpConfig` is read-only after start, the ``web.AppKey`` s name
the service's parts on the ``web.Application`` (``request.app[DAEMON]`` …), and the validators
turn a bad field into an :class:`ApiError` (HTTP status + JSON body), which the service's error
middleware answers. ``[control]``
"""
from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field

from aiohttp import web

from bridge.core.commands import SEED_MAX, SEED_MIN, check_seed, clean_prompt
from bridge.web.encoding import FORMATS
from plugin_stub.protocol import WavebridgeError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8137
MAX_BODY = 64 * 1024
SEND_TIMEOUT_S = 30.0         # a client that takes no data for this long is cut off (it holds a slot)


@dataclass
class HttpConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    state_dir: str = ""
    storage: str | None = None          # None: <state_dir>/tracks; s3://bucket/prefix
    queue: str | None = None            # None: the SQLite queue in state_dir; redis://host:port/db (shared)
    tiers: dict = field(default_factory=dict)   # name → {audio_s_per_day, concurrent, max_request_s}
    price_per_hour: float = 1.0
    track_workers: int = 2
    max_streams: int = 64               # private slots open at once (all keys together)
    send_timeout_s: float = SEND_TIMEOUT_S   # a client taking no data this long is cut off
    allowed_hosts: tuple = ()           # Host names served beyond loopback/the bound address (bridge.web.guard)
    allowed_origins: tuple = ()         # other origins whose pages may call the API (CORS), scheme://host[:port]
    # connections (bridge.web.conn): idle keep-alive, the deadline for a complete request head, a
    # body's floor rate, how many connections at once (all; per peer host beyond loopback)
    keepalive_timeout_s: float = 5.0    # aiohttp's keep-alive timer (also armed at connect)
    head_timeout_s: float = 10.0        # no request started this long after connect / last response: closed
    body_timeout_s: float = 5.0         # a body may take this long plus its size at body_min_rate …
    body_min_rate: float = 4096.0       # … bytes per second, then 408
    max_connections: int = 512
    max_connections_per_host: int = 64


#: the app's state, one typed key per part (set by ``bridge.web.app.HttpService.start``)
DAEMON = web.AppKey("wavebridge.daemon", object)
CONFIG = web.AppKey("wavebridge.config", HttpConfig)
#: per-request: the tier the request was served as (the request-count meter's label)
TIER = web.RequestKey("wavebridge.tier", str)
#: per-request: a key-less request is the local admin (no browser marker, or the page token;
#: set by ``bridge.web.guard``, read by ``bridge.web.auth``)
LOCAL_ADMIN = web.RequestKey("wavebridge.local_admin", bool)


class ApiError(Exception):
    """An error answered before any audio: HTTP ``status`` with a JSON body."""

    def __init__(self, status: int, reason: str, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.reason, self.message, self.headers = status, reason, message, headers or {}


def error_body(reason: str, message: str) -> dict:
    """The JSON of an error, as a response body or an SSE event. ``[control]``"""
    return {"event": "error", "reason": reason, "message": message}


def json_error(e: ApiError) -> web.Response:
    """The response for an :class:`ApiError`. ``[control]``"""
    return web.json_response(error_body(e.reason, e.message), status=e.status, headers=e.headers)


async def read_json(request: web.Request) -> dict:
    """The request body as a JSON object (``{}`` when empty); raises ApiError 400/408/413. ``[control]``

    A body trickled in slower than the config's floor (``body_timeout_s`` plus its size at
    ``body_min_rate``) is cut off with 408 and the connection closed.
    """
    cfg = request.app.get(CONFIG)
    budget_s = None
    if cfg is not None:
        size = request.content_length if request.content_length is not None else MAX_BODY
        budget_s = cfg.body_timeout_s + min(size, MAX_BODY) / max(cfg.body_min_rate, 1.0)
    try:
        async with asyncio.timeout(budget_s):
            raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise ApiError(413, "bad_request", f"request body over {MAX_BODY} bytes") from None
    except TimeoutError:
        raise ApiError(408, "bad_request", f"request body not received within {budget_s:.0f} s",
                       {"Connection": "close"}) from None
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except RecursionError:
        raise ApiError(400, "bad_request", "body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, "bad_request", f"body is not valid JSON: {str(e)[:100]}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "bad_request", "body must be a JSON object")
    return body


# ---------------------------------------------------------------------- field validators
def prompt_of(body: dict) -> str:
    """``body["prompt"]``, cleaned as OSC's ``/wb/play`` cleans it; raises ApiError 400. ``[control]``"""
    try:
        return clean_prompt(body.get("prompt"), "prompt")
    except WavebridgeError as e:
        raise ApiError(400, "bad_request", e.message) from None


def number_of(body: dict, key: str, lo: float, hi: float, default=None, required=False) -> float:
    """``body[key]`` as a finite float in ``[lo, hi]`` (or ``default``); raises ApiError 400. ``[control]``"""
    v = body.get(key, default)
    if v is None:
        if required:
            raise ApiError(400, "bad_request", f"{key} is required")
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ApiError(400, "bad_request", f"{key} must be a finite number")
    if not lo <= v <= hi:
        raise ApiError(400, "bad_request", f"{key} {v:g} is outside [{lo:g}, {hi:g}]")
    return float(v)


def seed_of(body: dict) -> int | None:
    """``body["seed"]``: None or an integer in the daemon's one seed range (``check_seed``, as OSC).
    ``[control]``"""
    v = body.get("seed")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ApiError(400, "bad_request", "seed must be an integer")
    try:
        return check_seed(v, "seed")
    except WavebridgeError:
        raise ApiError(400, "bad_request", f"seed must be an integer {SEED_MIN}..{SEED_MAX - 1}") from None


def format_of(v, allowed=tuple(FORMATS)) -> str:
    """``v`` if it is one of ``allowed`` (the encoders' formats); raises ApiError 400. ``[control]``"""
    if not isinstance(v, str) or v not in allowed:
        raise ApiError(400, "bad_request", f"unknown format {str(v)[:40]!r}; known: {', '.join(allowed)}")
    return v
