"""HTTP and WebSocket API of the daemon (aiohttp), on the same asyncio loop as OSC. ``[control]``

Endpoints (``docs/http.md``):

- ``POST /v1/audio/generate`` — one prompt for ``duration_seconds``: Server-Sent Events with
  base64 audio chunks (``Accept: text/event-stream``, the default) or the encoded stream itself
  (``Accept: audio/ogg`` / ``audio/mpeg`` / ``audio/wav`` / ``audio/L16``), chunked.
- ``GET /v1/stream`` — WebSocket live session: JSON ``play``/``param``/``stop`` in, binary audio
  (Ogg/Opus pages, or s16le PCM with ``?format=pcm_s16le``) and JSON events out.
- ``POST /v1/tracks``, ``GET /v1/tracks``, ``GET /v1/tracks/{id}``, ``GET /v1/tracks/{id}/audio``
  — the whole-track queue (``bridge.web.tracks``).
- ``GET /v1/status``, ``GET /v1/status/ws``, ``POST /v1/slots/{slot}/play|stop``, ``GET /v1/usage``,
  ``GET /healthz`` and the web page at ``/`` (``bridge/web/static``).

Every web stream is a private daemon slot (``Daemon.open_private_slot``): the engine, the
scheduler and the batching are the ones the OSC slots use; :class:`bridge.web.encoding.PrivateStream`
reads its ring in this process. Engine events reach the streams through the daemon's event bus
(:meth:`HttpService.on_event`, on the loop). Encoding runs on a small thread pool so
the loop only moves bytes. Keys, tiers, usage and the track queue live in SQLite (``bridge.web.store``).

Auth: ``Authorization: Bearer <key>``, ``X-API-Key: <key>`` or ``?key=`` (WebSockets from a page
cannot set headers). A key is required once any key exists, or whenever the server listens
beyond loopback; without one, a loopback server serves everyone as the ``local`` tier.
"""
from __future__ import annotations

import asyncio
import base64
import collections
import ipaddress
import json
import logging
import math
import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from bridge.core.commands import MAX_FADE_S, clean_prompt
from plugin_stub.protocol import WavebridgeError
from bridge.web.store import DEFAULT_TIERS, LOCAL_TIER, TRACK_ID_RE, Principal, Store, seconds_to_utc_midnight
from bridge.web.tracks import MAX_TRACK_S, TrackWorker, make_storage
from bridge.web.encoding import FORMATS, Encoder, PacketEncoder, PrivateStream, StreamError

log = logging.getLogger("wavebridge.http")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8137
MAX_BODY = 64 * 1024
MAX_GENERATE_S = 600.0
MAX_STATUS_CLIENTS = 64
SEND_TIMEOUT_S = 30.0         # a client that takes no data for this long is cut off (it holds a slot)
WEB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
RAW_ACCEPT = {"audio/ogg": "opus", "audio/opus": "opus", "audio/mpeg": "mp3", "audio/mp3": "mp3",
              "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/l16": "pcm_s16le",
              "application/octet-stream": "pcm_s16le"}
WS_FORMATS = ("opus", "pcm_s16le", "opus_packets")


def parse_listen(v: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (``[v6]:PORT``, ``:PORT``, ``PORT``) or ``off`` → (host, port) or None. ``[control]``"""
    v = str(v).strip()
    if v.lower() in ("off", "none", "no", "false"):
        return None
    host, port = DEFAULT_HOST, None
    if v.startswith("["):
        h, _, p = v[1:].partition("]")
        host, port = h, p.lstrip(":")
    elif v.count(":") == 1:
        h, _, port = v.partition(":")
        host = h or DEFAULT_HOST
    elif v.isdigit():
        port = v
    else:
        host, port = v, str(DEFAULT_PORT)
    try:
        n = int(port)
    except (TypeError, ValueError):
        raise ValueError(f"{v!r} is not HOST:PORT or 'off'") from None
    if not 0 <= n <= 65535:
        raise ValueError("port must be 0..65535")
    return host, n


def is_loopback(host: str) -> bool:
    """True for a loopback address or name. ``[control]``"""
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class HttpConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    state_dir: str = ""
    storage: str | None = None          # None: <state_dir>/tracks; s3://bucket/prefix
    tiers: dict = field(default_factory=dict)   # name → {audio_s_per_day, concurrent, max_request_s}
    price_per_hour: float = 1.0
    track_workers: int = 2
    max_streams: int = 64               # private slots open at once (all keys together)
    send_timeout_s: float = SEND_TIMEOUT_S   # a client taking no data this long is cut off


class ApiError(Exception):
    """An error answered before any audio: HTTP ``status`` with a JSON body."""

    def __init__(self, status: int, reason: str, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.reason, self.message, self.headers = status, reason, message, headers or {}


def _body(reason: str, message: str) -> dict:
    return {"event": "error", "reason": reason, "message": message}


class _Meters:
    """Per-tier totals for Prometheus (exported by :class:`HttpCollector`)."""

    def __init__(self):
        self.audio_s = collections.Counter()
        self.compute_s = collections.Counter()
        self.cost = collections.Counter()
        self.requests = collections.Counter()       # (endpoint, tier, status)
        self.rejected = collections.Counter()       # (tier, reason)
        self.first_audio_ms: collections.deque = collections.deque(maxlen=2000)   # (endpoint, ms)
        self.encode_s = collections.Counter()       # format → seconds of encoding
        self.encoded_audio_s = collections.Counter()  # format → audio seconds encoded


class HttpService:
    """The aiohttp application bound to one daemon. Create, ``await start()``, ``await close()``. ``[control]``"""

    def __init__(self, daemon, config: HttpConfig):
        from bridge.web.store import default_state_dir

        self.d = daemon
        self.cfg = config
        self.state_dir = config.state_dir or default_state_dir()
        self.set_tiers(config.tiers)
        self.price_per_hour = float(config.price_per_hour)
        self.store = Store(self.state_dir)
        self.storage = make_storage(config.storage, self.state_dir)
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wavebridge-encode")
        self.streams: dict = {}                       # private slot name → PrivateStream
        self.active: collections.Counter = collections.Counter()      # key id → open streams
        self.reserved: collections.Counter = collections.Counter()    # key id → audio-s promised, unmetered
        self.meters = _Meters()
        self.tracks = TrackWorker(self, self.store, self.storage, config.track_workers)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.runner = None
        self.host, self.port = config.host, config.port
        self._status_clients: set = set()
        self._closing = False

    def set_tiers(self, tiers: dict | None) -> None:
        """The built-in tiers overridden or extended by the config's (at start and on SIGHUP). ``[control]``"""
        t = {k: dict(v) for k, v in DEFAULT_TIERS.items()}
        for name, lim in (tiers or {}).items():
            t[name] = {**t.get(name, DEFAULT_TIERS["free"]), **lim}
        self.tiers = t

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> tuple[str, int]:
        """Bind and serve; start the track worker. Returns the bound (host, port). Raises OSError. ``[control]``"""
        from aiohttp import web

        self.loop = asyncio.get_running_loop()
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._errors])
        app.on_response_prepare.append(_cors)
        r = app.router
        r.add_route("OPTIONS", "/v1/{tail:.*}", self.preflight)
        r.add_get("/", self.page)
        r.add_get("/web/{name}", self.static)
        r.add_get("/healthz", self.healthz)
        r.add_post("/v1/audio/generate", self.generate)
        r.add_get("/v1/stream", self.ws_stream)
        r.add_get("/v1/status", self.status)
        r.add_get("/v1/status/ws", self.status_ws)
        r.add_post("/v1/slots/{slot}/play", self.slot_play)
        r.add_post("/v1/slots/{slot}/stop", self.slot_stop)
        r.add_get("/v1/usage", self.usage)
        r.add_post("/v1/tracks", self.track_add)
        r.add_get("/v1/tracks", self.track_list)
        r.add_get("/v1/tracks/{id}", self.track_get)
        r.add_get("/v1/tracks/{id}/audio", self.track_audio)
        self._web_files = {n for n in os.listdir(WEB_DIR) if not n.startswith(".")} if os.path.isdir(WEB_DIR) else set()
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.cfg.host, self.cfg.port, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await self.runner.cleanup()
            self.runner = None
            raise
        sock = site._server.sockets[0]
        self.host, self.port = sock.getsockname()[:2]
        self.tracks.start()
        _remove_stale_private_rings()
        self.d.bus.subscribe(self.on_event)
        return self.host, self.port

    async def close(self) -> None:
        """Stop serving, end every web stream, stop the track worker (its rows resume next start). ``[control]``"""
        self._closing = True
        self.d.bus.unsubscribe(self.on_event)
        await self.tracks.close()
        for ws in list(self._status_clients):
            try:
                await ws.close()
            except Exception:  # noqa: BLE001
                pass
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
        for s in list(self.streams.values()):
            self.close_stream(s)
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.store.close()

    # ------------------------------------------------------------------ streams and events
    def open_stream(self) -> PrivateStream:
        """A private slot and its reader, registered for its engine events. ``[control]``"""
        if len(self.streams) >= self.cfg.max_streams:
            raise ApiError(503, "busy", f"{self.cfg.max_streams} web streams are open; try again shortly",
                           {"Retry-After": "1"})
        s = PrivateStream.open(self.d)
        self.streams[s.name] = s
        return s

    def close_stream(self, s: PrivateStream) -> None:
        """Unregister a private stream and give its slot back. ``[control]``"""
        self.streams.pop(s.name, None)
        s.close()

    def on_event(self, ev) -> None:
        """An engine event, on the loop: routed to the private stream of its slot (if any). ``[control]``"""
        s = self.streams.get(ev.slot)
        if s is not None:
            s.on_event(ev)
        if ev.kind == "first_audio" and s is not None:
            self.meters.first_audio_ms.append(("engine", ev.ms))

    # ------------------------------------------------------------------ metering
    def meter(self, key_id: str, tier: str | None, audio_s: float, compute_s: float, cost: float,
              endpoint: str = "", requests: int = 1) -> None:
        """Add a request's usage to its key's row of today and to the per-tier Prometheus totals. ``[control]``"""
        if tier is None:
            row = self.store.db.execute("SELECT tier FROM keys WHERE id=?", (key_id,)).fetchone()
            tier = row[0] if row else "local"
        self.store.meter(key_id, tier, audio_s, compute_s, cost, requests)
        self.meters.audio_s[tier] += audio_s
        self.meters.compute_s[tier] += compute_s
        self.meters.cost[tier] += cost

    def encode_stats(self, enc: Encoder) -> None:
        """Add an encoder's CPU time and audio to the per-format totals. ``[control]``"""
        self.meters.encode_s[enc.format] += enc.encode_s
        self.meters.encoded_audio_s[enc.format] += enc.frames_in / enc.rate

    # ------------------------------------------------------------------ auth and admission
    def keys_required(self) -> bool:
        """A key is needed once any key exists or when listening beyond loopback. ``[control]``"""
        return not is_loopback(self.host) or self.store.has_keys()

    def principal(self, request) -> Principal:
        """Who the request is (key from the Authorization/X-API-Key header or ``?key=``); raises ApiError 401/403. ``[control]``"""
        key = ""
        auth = request.headers.get("Authorization", "")
        if auth[:7].lower() == "bearer ":
            key = auth[7:].strip()
        key = key or request.headers.get("X-API-Key", "").strip() or request.query.get("key", "").strip()
        if key:
            row = self.store.check_key(key)
            if row is None:
                raise ApiError(401, "unauthorized", "invalid or revoked API key",
                               {"WWW-Authenticate": 'Bearer realm="wavebridge"'})
            lim = self.tiers.get(row["tier"])
            if lim is None:
                raise ApiError(403, "unauthorized", f"tier {row['tier']!r} is not configured on this server")
            return Principal(row["id"], row["name"], row["tier"], lim)
        if self.keys_required():
            raise ApiError(401, "unauthorized", "an API key is required (Authorization: Bearer <key>)",
                           {"WWW-Authenticate": 'Bearer realm="wavebridge"'})
        return Principal("local", "local", "local", LOCAL_TIER)

    def admit(self, p: Principal, seconds: float, stream: bool = True) -> None:
        """Tier limits: longest request, concurrent streams, audio seconds per UTC day. ``[control]``"""
        lim = p.limits
        if seconds > float(lim["max_request_s"]):
            raise ApiError(400, "bad_request", f"tier {p.tier} allows requests up to {lim['max_request_s']:g} s, "
                                               f"asked for {seconds:g} s")
        if stream and self.active[p.key_id] >= int(lim["concurrent"]):
            self.meters.rejected[(p.tier, "concurrent")] += 1
            raise ApiError(429, "quota", f"tier {p.tier} allows {lim['concurrent']} concurrent streams",
                           {"Retry-After": "1"})
        used = self.used_today(p)
        allowance = float(lim["audio_s_per_day"])
        if used + max(seconds, 0.0) > allowance or (seconds <= 0 and used >= allowance):
            self.meters.rejected[(p.tier, "daily")] += 1
            left = max(0.0, allowance - used)
            raise ApiError(429, "quota", f"daily allowance of tier {p.tier} is {allowance:g} audio seconds; "
                                         f"{left:.1f} s left today", {"Retry-After": str(seconds_to_utc_midnight())})

    def used_today(self, p: Principal) -> float:
        """Audio seconds charged to the key today: served, reserved by open requests, queued as tracks. ``[control]``"""
        return (self.store.usage(p.key_id)["audio_s"] + self.reserved[p.key_id]
                + self.store.pending_seconds(p.key_id))

    # ------------------------------------------------------------------ middleware
    def _json_error(self, e: ApiError):
        from aiohttp import web

        return web.json_response(_body(e.reason, e.message), status=e.status, headers=e.headers)

    @property
    def _errors(self):
        from aiohttp import web

        @web.middleware
        async def errors(request, handler):
            endpoint = request.match_info.route.resource.canonical if request.match_info.route.resource else "?"
            try:
                resp = await handler(request)
                self.meters.requests[(endpoint, getattr(request, "_wb_tier", "-"), getattr(resp, "status", 0))] += 1
                return resp
            except ApiError as e:
                self.meters.requests[(endpoint, getattr(request, "_wb_tier", "-"), e.status)] += 1
                return self._json_error(e)
            except web.HTTPRequestEntityTooLarge:
                self.meters.requests[(endpoint, "-", 413)] += 1
                return self._json_error(ApiError(413, "bad_request", f"request body over {MAX_BODY} bytes"))
            except web.HTTPException as e:
                self.meters.requests[(endpoint, "-", e.status)] += 1
                if e.status >= 400 and e.status != 101:
                    return self._json_error(ApiError(e.status, "bad_request", e.reason or "bad request", {
                        k: v for k, v in e.headers.items() if k.lower() in ("allow",)}))
                raise
            except (asyncio.CancelledError, ConnectionResetError):
                raise
            except Exception as e:  # noqa: BLE001 — the daemon never dies from a request
                log.exception("HTTP %s %s failed", request.method, request.path)
                self.d.count_error("internal")
                self.meters.requests[(endpoint, "-", 500)] += 1
                return self._json_error(ApiError(500, "internal", f"internal error: {type(e).__name__}"))

        return errors

    async def _read_json(self, request) -> dict:
        from aiohttp import web

        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise ApiError(413, "bad_request", f"request body over {MAX_BODY} bytes") from None
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

    # ------------------------------------------------------------------ request validation
    @staticmethod
    def _prompt(body: dict) -> str:
        try:
            return clean_prompt(body.get("prompt"), "prompt")
        except WavebridgeError as e:
            raise ApiError(400, "bad_request", e.message) from None

    @staticmethod
    def _number(body: dict, key: str, lo: float, hi: float, default=None, required=False) -> float:
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

    @staticmethod
    def _seed(body: dict) -> int | None:
        v = body.get("seed")
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 32:
            raise ApiError(400, "bad_request", "seed must be an integer 0..2^32-1")
        return v

    @staticmethod
    def _format(v, allowed=tuple(FORMATS)) -> str:
        if not isinstance(v, str) or v not in allowed:
            raise ApiError(400, "bad_request", f"unknown format {str(v)[:40]!r}; known: {', '.join(allowed)}")
        return v

    # ------------------------------------------------------------------ pages
    async def page(self, request):
        """``GET /``: the web page. ``[control]``"""
        return await self._file("index.html")

    async def static(self, request):
        """``GET /web/{name}``: one of the page's files (an allowlist). ``[control]``"""
        return await self._file(request.match_info["name"])

    async def _file(self, name: str):
        from aiohttp import web

        if name not in self._web_files:               # an allowlist: no request path reaches the filesystem
            raise ApiError(404, "bad_request", "no such file")
        ctype = {"html": "text/html", "js": "text/javascript", "css": "text/css", "png": "image/png"}.get(
            name.rsplit(".", 1)[-1], "application/octet-stream")
        with open(os.path.join(WEB_DIR, name), "rb") as f:
            data = f.read()
        return web.Response(body=data, content_type=ctype, headers={"Cache-Control": "no-cache"})

    async def preflight(self, request):
        """CORS preflight: any origin may call the API with a key (no cookies are used). ``[control]``"""
        from aiohttp import web

        return web.Response(status=204, headers={
            "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
            "Access-Control-Allow-Headers": "Authorization, X-API-Key, Content-Type, Accept",
            "Access-Control-Max-Age": "600"})

    async def healthz(self, request):
        """``GET /healthz``. ``[control]``"""
        from aiohttp import web

        return web.json_response({"ok": True, "backend": self.d.backend.name, "streams": len(self.streams)})

    # ------------------------------------------------------------------ generate
    async def generate(self, request):
        """``POST /v1/audio/generate``: SSE (default) or the raw encoded stream. ``[control]``"""
        from aiohttp import web

        t_req = time.monotonic()
        arrival_ns = time.monotonic_ns()
        p = self.principal(request)
        request._wb_tier = p.tier
        body = await self._read_json(request)
        prompt = self._prompt(body)
        dur = self._number(body, "duration_seconds", 0.0, MAX_GENERATE_S, required=True)
        if dur <= 0:
            raise ApiError(400, "bad_request", "duration_seconds must be > 0")
        seed = self._seed(body)
        accept = request.headers.get("Accept", "").split(",")[0].split(";")[0].strip().lower()
        raw_fmt = RAW_ACCEPT.get(accept)
        if raw_fmt is None and accept not in ("", "*/*", "text/event-stream", "application/json"):
            raise ApiError(406, "bad_request", f"cannot answer Accept: {accept[:60]}; use text/event-stream, "
                                               "audio/ogg, audio/mpeg, audio/wav or audio/L16")
        fmt = self._format(body.get("format", raw_fmt or "opus"))
        if raw_fmt is not None and fmt != raw_fmt:
            raise ApiError(400, "bad_request", f"format {fmt} does not match Accept: {accept}")
        self.admit(p, dur)
        stream = self.open_stream()
        self.active[p.key_id] += 1
        self.reserved[p.key_id] += dur
        enc = None
        sent_frames = 0
        chunk_index = 0
        completed = False
        loop = asyncio.get_running_loop()
        settled = False

        def settle():
            """Release the stream and meter it, once: before the last write (a client that starts
            its next request the moment this one ends must find its quota and slot already free)."""
            nonlocal settled
            if settled:
                return
            settled = True
            self.active[p.key_id] -= 1
            self.reserved[p.key_id] -= dur
            self.close_stream(stream)
            if enc is not None:
                self.encode_stats(enc)
                enc.close()
            self.meter(p.key_id, p.tier, sent_frames / stream.rate, stream.compute_s,
                       stream.compute_s * self.price_per_hour / 3600.0, "generate")

        try:
            enc = Encoder(fmt, stream.rate, stream.channels)
            try:
                stream.play(prompt, dur, seed, arrival_ns)
            except WavebridgeError as e:
                raise ApiError(503, "busy", e.message, {"Retry-After": "1"}) from None
            sse = raw_fmt is None
            headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Wavebridge-Job": str(stream.job)}
            resp = web.StreamResponse(status=200, headers=headers)
            resp.content_type = "text/event-stream" if sse else enc.content_type
            if not sse and fmt == "pcm_s16le":
                resp.content_type = f"audio/L16;rate={stream.rate};channels={stream.channels}"
            resp.enable_chunked_encoding()
            await resp.prepare(request)
            try:
                first = True
                while True:
                    try:
                        a = await stream.read_fast(stream.rate // 2)
                    except StreamError as e:
                        if sse:
                            await resp.write(_sse(_body(e.reason, e.message)))
                        completed = True
                        return resp
                    last = a is None
                    data = await loop.run_in_executor(self.pool, enc.finish if last else enc.push, *(() if last else (a,)))
                    if not last:
                        sent_frames += a.shape[0]
                    if data:
                        if sse:
                            await _write(resp, _sse({"event": "audio_chunk", "chunk_index": chunk_index,
                                                     "duration_buffered": round(sent_frames / stream.rate, 4),
                                                     "format": fmt, "audio": base64.b64encode(data).decode()}),
                                         self.cfg.send_timeout_s)
                        else:
                            await _write(resp, data, self.cfg.send_timeout_s)
                        chunk_index += 1
                        if first:
                            first = False
                            self.meters.first_audio_ms.append(("sse" if sse else "raw", (time.monotonic() - t_req) * 1e3))
                    if last:
                        break
                compute = stream.compute_s
                settle()
                if sse:
                    await resp.write(_sse({"event": "completed", "total_duration": round(sent_frames / stream.rate, 4),
                                           "total_elapsed_seconds": round(time.monotonic() - t_req, 4),
                                           "compute_seconds": round(compute, 6),
                                           "cost_usd": compute * self.price_per_hour / 3600.0}))
                await resp.write_eof()
                completed = True
                return resp
            except (asyncio.CancelledError, ConnectionResetError):
                raise
            except Exception as e:  # noqa: BLE001 — headers are out: report it in the stream
                log.exception("generate failed mid-stream")
                if sse:
                    await resp.write(_sse(_body("internal", f"internal error: {type(e).__name__}")))
                return resp
        finally:
            settle()
            if not completed:
                log.info("generate: client went away after %.2f s of audio", sent_frames / stream.rate)

    # ------------------------------------------------------------------ live WebSocket session
    async def ws_stream(self, request):
        """``GET /v1/stream``: a live session over a WebSocket (see ``docs/http.md``). ``[control]``"""
        from aiohttp import WSMsgType, web

        p = self.principal(request)
        request._wb_tier = p.tier
        fmt = self._format(request.query.get("format", "opus"), WS_FORMATS)
        self.admit(p, 0.0)
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_BODY)
        await ws.prepare(request)
        stream = self.open_stream()
        self.active[p.key_id] += 1
        enc = (PacketEncoder(stream.rate, stream.channels) if fmt == "opus_packets"
               else Encoder(fmt, stream.rate, stream.channels))
        session = {"metered_frames": 0, "metered_compute": 0.0, "t_play": None, "first_client": {}}
        await ws.send_json({"type": "ready", "format": fmt, "sample_rate": stream.rate, "channels": stream.channels,
                            "container": {"opus": "ogg", "opus_packets": "none"}.get(fmt, "raw"),
                            **({"codec": "opus", "frame_ms": 20} if fmt == "opus_packets" else {})})
        sender = asyncio.get_running_loop().create_task(self._ws_sender(ws, stream, enc, p, session))
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    try:
                        await self._ws_command(ws, stream, msg.data, session, p)
                    except (asyncio.CancelledError, ConnectionResetError):
                        raise
                    except Exception as e:  # noqa: BLE001 — the session (and the daemon) go on
                        log.exception("WebSocket command failed")
                        await ws.send_json({"type": "error", "reason": "internal",
                                            "message": f"internal error: {type(e).__name__}"})
                elif msg.type == WSMsgType.BINARY:
                    await ws.send_json({"type": "error", "reason": "bad_request",
                                        "message": "send JSON text messages, not binary"})
                elif msg.type == WSMsgType.ERROR:
                    break
        finally:
            self.active[p.key_id] -= 1            # before any await: a reconnect finds the slot free
            sender.cancel()
            try:
                await sender
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
            self.close_stream(stream)
            self.encode_stats(enc)
            enc.close()
            self._ws_meter(p, stream, session)
            if not ws.closed:
                await ws.close()
        return ws

    def _ws_meter(self, p: Principal, stream: PrivateStream, session: dict) -> None:
        frames = stream.frames_read - session["metered_frames"]
        compute = stream.compute_s - session["metered_compute"]
        session["metered_frames"] = stream.frames_read
        session["metered_compute"] = stream.compute_s
        requests = 0 if session.get("metered_once") else 1
        session["metered_once"] = True
        self.meter(p.key_id, p.tier, frames / stream.rate, compute, compute * self.price_per_hour / 3600.0,
                   "stream", requests)

    async def _ws_command(self, ws, stream: PrivateStream, text: str, session: dict, p: Principal) -> None:
        def bad(msg):
            return ws.send_json({"type": "error", "reason": "bad_request", "message": msg})

        now = time.monotonic()                 # a token bucket per session: 20 commands/s, bursts of 40
        tokens = min(40.0, session.get("tokens", 40.0) + (now - session.get("t_tokens", now)) * 20.0)
        session["t_tokens"] = now
        if tokens < 1.0:
            session["tokens"] = tokens
            await ws.send_json({"type": "error", "reason": "bad_request", "code": "rate_limited",
                                "message": "too many messages; at most 20 a second"})
            return
        session["tokens"] = tokens - 1.0
        try:
            m = json.loads(text)
        except (ValueError, RecursionError):
            await bad("not valid JSON")
            return
        if not isinstance(m, dict):
            await bad("a message is a JSON object with a 'type'")
            return
        kind = m.get("type")
        try:
            if kind == "play":
                prompt = self._prompt(m)
                seconds = self._number(m, "seconds", 0.0, float(p.limits["max_request_s"]) if m.get("seconds") else 1e9,
                                       default=0.0)
                seed = self._seed(m)
                if self.used_today(p) + stream.frames_read / stream.rate - session["metered_frames"] / stream.rate \
                        >= float(p.limits["audio_s_per_day"]):
                    await ws.send_json({"type": "error", "reason": "quota", "message": "daily allowance used up",
                                        "retry_after": seconds_to_utc_midnight()})
                    return
                session["t_play"] = time.monotonic()
                job = stream.play(prompt, seconds, seed)
                session["first_client"][job] = session["t_play"]
                await ws.send_json({"type": "started", "job": job, "prompt": prompt})
            elif kind == "param":
                name = m.get("name")
                params = self.d.params()
                if not isinstance(name, str) or name not in params:
                    await bad(f"unknown parameter; known: {', '.join(sorted(params))}")
                    return
                lo, hi = params[name][:2]
                stream.param(name, self._number(m, "value", lo, hi, required=True))
            elif kind == "stop":
                fade = self._number(m, "fade_s", 0.0, MAX_FADE_S, default=0.05)
                stream.stop(fade)
            else:
                await bad(f"unknown type {str(kind)[:40]!r}; known: play, param, stop")
        except ApiError as e:
            await ws.send_json({"type": "error", "reason": e.reason, "message": e.message})
        except WavebridgeError as e:
            await ws.send_json({"type": "error", "reason": "busy" if e.code == "busy" else "bad_request",
                                "message": e.message})

    async def _ws_sender(self, ws, stream: PrivateStream, enc: Encoder, p: Principal, session: dict) -> None:
        try:
            await self._ws_send_loop(ws, stream, enc, p, session)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception:  # noqa: BLE001 — end this session cleanly, never the server
            log.exception("WebSocket sender failed")
            await ws.close(code=1011, message=b"internal error")

    async def _ws_send_loop(self, ws, stream: PrivateStream, enc: Encoder, p: Principal, session: dict) -> None:
        loop = asyncio.get_running_loop()
        last_meter = time.monotonic()
        allowance = float(p.limits["audio_s_per_day"])
        while not ws.closed:
            while not stream.events.empty():
                ev = stream.events.get_nowait()
                if ev.kind == "first_audio" and ev.job in stream.jobs:
                    info = stream.jobs[ev.job]
                    await ws.send_json({"type": "first_audio", "job": ev.job, "ms": round(ev.ms, 2),
                                        "frame": info["first_frame"]})
                elif ev.kind == "done" and ev.job in stream.jobs:
                    x = ev.extra
                    await ws.send_json({"type": "done", "job": ev.job, "reason": x.get("reason", ""),
                                        "compute_seconds": round(float(x.get("compute_s", 0.0)), 6)})
                elif ev.kind == "error" and ev.code != "not_playing":
                    await ws.send_json({"type": "error", "reason": _reason(ev.code), "code": ev.code,
                                        "message": ev.message})
            try:
                a = await stream.read_realtime(stream.rate // 4)
            except StreamError:
                continue              # already sent as an error event
            if a.shape[0]:
                data = await loop.run_in_executor(self.pool, enc.push, a)
                if data:
                    try:
                        async with asyncio.timeout(self.cfg.send_timeout_s):   # no task per send
                            if isinstance(data, list):          # opus_packets: one packet per message
                                for pkt in data:
                                    await ws.send_bytes(pkt)
                            else:
                                await ws.send_bytes(data)
                    except TimeoutError:
                        log.info("WebSocket client stopped reading for %.0f s; closing", self.cfg.send_timeout_s)
                        await ws.close(code=1008, message=b"client too slow")
                        return
            now = time.monotonic()
            if now - last_meter > 1.0:
                last_meter = now
                self._ws_meter(p, stream, session)
                if self.store.usage(p.key_id)["audio_s"] >= allowance and stream.reader.playing:
                    stream.stop(0.05)
                    await ws.send_json({"type": "error", "reason": "quota", "message": "daily allowance used up",
                                        "retry_after": seconds_to_utc_midnight()})

    # ------------------------------------------------------------------ slots (the page's controls)
    def _public_slot(self, name: str):
        for n, s in self.d.slots.items():
            if not s.private and str(n) == name:
                return n
        raise ApiError(404, "bad_request", f"no slot {name[:40]!r}")

    async def slot_play(self, request):
        """``POST /v1/slots/{slot}/play``: play a prompt on a DAW slot, as ``/wb/play`` does. ``[control]``"""
        from aiohttp import web

        from bridge.core.commands import Command

        p = self.principal(request)
        request._wb_tier = p.tier
        slot = self._public_slot(request.match_info["slot"])
        body = await self._read_json(request)
        prompt = self._prompt(body)
        seconds = self._number(body, "seconds", 0.0, 24 * 3600.0, default=0.0)
        try:
            job = self.d.submit(Command("play", slot=slot, prompt=prompt, seconds=seconds, seed=self._seed(body),
                                        source="http"))
        except WavebridgeError as e:
            raise ApiError(503 if e.code == "busy" else 400, "bad_request", e.message) from None
        return web.json_response({"slot": slot, "job": job})

    async def slot_stop(self, request):
        """``POST /v1/slots/{slot}/stop``: fade a DAW slot out, as ``/wb/stop`` does. ``[control]``"""
        from aiohttp import web

        from bridge.core.commands import Command

        p = self.principal(request)
        request._wb_tier = p.tier
        slot = self._public_slot(request.match_info["slot"])
        body = await self._read_json(request)
        fade = self._number(body, "fade_s", 0.0, MAX_FADE_S, default=0.05)
        try:
            self.d.submit(Command("stop", slot=slot, fade_s=fade, source="http"))
        except WavebridgeError as e:
            raise ApiError(503 if e.code == "busy" else 400, "bad_request", e.message) from None
        return web.json_response({"slot": slot, "stopping": True})

    def status_rows(self) -> list[dict]:
        """Every slot's status row with its level (DAW slots first, then the private web streams). ``[control]``"""
        rows = self.d.status()
        for row in rows:
            s = self.d.slots.get(row["slot"])
            row["level_db"] = _level_db(s.ring) if s is not None else -120.0
            row["private"] = False
        for name, st in list(self.streams.items()):
            s = self.d.slots.get(name)
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

    async def status(self, request):
        """``GET /v1/status``. ``[control]``"""
        from aiohttp import web

        self.principal(request)
        return web.json_response({"slots": self.status_rows(), "streams": len(self.streams),
                                  "tracks": self.store.queue_depth(), "backend": self.d.backend.name,
                                  "params": {k: list(v[:2]) for k, v in self.d.params().items()}})

    async def status_ws(self, request):
        """``GET /v1/status/ws``: the slots' status and levels, five times a second. ``[control]``"""
        from aiohttp import web

        self.principal(request)
        if len(self._status_clients) >= MAX_STATUS_CLIENTS:
            raise ApiError(503, "busy", f"{MAX_STATUS_CLIENTS} status clients are connected", {"Retry-After": "5"})
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=4096)
        await ws.prepare(request)
        self._status_clients.add(ws)
        try:
            while not ws.closed and not self._closing:
                await ws.send_json({"type": "status", "slots": self.status_rows(), "streams": len(self.streams),
                                    "t": time.time()})
                try:
                    msg = await ws.receive(timeout=0.2)
                    if msg.type.name in ("CLOSE", "CLOSING", "CLOSED", "ERROR"):
                        break
                except asyncio.TimeoutError:
                    pass
        finally:
            self._status_clients.discard(ws)
        return ws

    async def usage(self, request):
        """``GET /v1/usage``: the key's usage today and its tier's limits. ``[control]``"""
        from aiohttp import web

        p = self.principal(request)
        u = self.store.usage(p.key_id)
        lim = p.limits
        return web.json_response({"key": p.name, "tier": p.tier, "today": u,
                                  "limits": {k: (None if isinstance(v, float) and math.isinf(v) else v)
                                             for k, v in lim.items()},
                                  "active_streams": self.active[p.key_id]})

    # ------------------------------------------------------------------ tracks
    async def track_add(self, request):
        """``POST /v1/tracks``: queue a whole track; 202 with its row. ``[control]``"""
        from aiohttp import web

        p = self.principal(request)
        request._wb_tier = p.tier
        body = await self._read_json(request)
        prompt = self._prompt(body)
        seconds = self._number(body, "seconds", 0.0, MAX_TRACK_S, required=True)
        if seconds <= 0:
            raise ApiError(400, "bad_request", "seconds must be > 0")
        fmt = self._format(body.get("format", "opus"))
        seed = self._seed(body)
        self.admit(p, seconds, stream=False)
        tid = self.store.add_track(p.key_id, prompt, seconds, fmt, secrets.randbelow(2 ** 31) if seed is None else seed)
        self.tracks.kick()
        return web.json_response(self._track_view(self.store.track(tid)), status=202,
                                 headers={"Location": f"/v1/tracks/{tid}"})

    def _track_of(self, request, p: Principal) -> dict:
        tid = request.match_info["id"]
        row = self.store.track(tid) if TRACK_ID_RE.match(tid) else None
        if row is None or (row["key_id"] != p.key_id and p.key_id != "local"):
            raise ApiError(404, "bad_request", "no such track")
        return row

    @staticmethod
    def _track_view(row: dict) -> dict:
        v = {k: row[k] for k in ("id", "state", "progress", "prompt", "seconds", "format", "seed", "created",
                                 "started", "finished", "error", "bytes", "compute_s", "cost_usd", "render_s")}
        v["url"] = f"/v1/tracks/{row['id']}"
        v["download_url"] = f"/v1/tracks/{row['id']}/audio" if row["state"] == "done" else None
        return v

    async def track_get(self, request):
        """``GET /v1/tracks/{id}``: state, progress and the download URL. ``[control]``"""
        from aiohttp import web

        p = self.principal(request)
        return web.json_response(self._track_view(self._track_of(request, p)))

    async def track_list(self, request):
        """``GET /v1/tracks``: the key's tracks, newest first. ``[control]``"""
        from aiohttp import web

        p = self.principal(request)
        return web.json_response({"tracks": [self._track_view(r) for r in self.store.tracks_of(p.key_id)]})

    async def track_audio(self, request):
        """``GET /v1/tracks/{id}/audio``: the stored file, streamed from storage. ``[control]``"""
        from aiohttp import web

        p = self.principal(request)
        row = self._track_of(request, p)
        if row["state"] != "done":
            raise ApiError(409, "bad_request", f"track is {row['state']}, not done")
        loop = asyncio.get_running_loop()
        f = await loop.run_in_executor(self.pool, self.storage.open, row["id"], row["format"])
        if f is None:
            raise ApiError(410, "internal", "the stored audio is gone")
        resp = web.StreamResponse(headers={"Content-Disposition": f'attachment; filename="{row["id"]}.'
                                                                  f'{FORMATS[row["format"]][3]}"'})
        resp.content_type = FORMATS[row["format"]][2]
        if row["bytes"]:
            resp.content_length = int(row["bytes"])
        await resp.prepare(request)
        try:
            while True:
                data = await loop.run_in_executor(self.pool, f.read, 256 * 1024)
                if not data:
                    break
                await resp.write(data)
        finally:
            f.close()
        await resp.write_eof()
        return resp


def _remove_stale_private_rings(shm_dir: str = "/dev/shm") -> int:
    """Unlink ``wavebridge.web<pid>-<n>`` rings whose daemon is dead (left by a kill -9)."""
    import re

    n = 0
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return 0
    for name in names:
        m = re.match(r"^wavebridge\.web(\d+)-\d+$", name)
        if not m or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue                    # its daemon is alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        try:
            os.unlink(os.path.join(shm_dir, name))
            n += 1
        except OSError:
            pass
    return n


async def _cors(request, response) -> None:
    if request.path.startswith("/v1/") and "Access-Control-Allow-Origin" not in response.headers:
        response.headers["Access-Control-Allow-Origin"] = "*"
        response.headers["Access-Control-Expose-Headers"] = "Retry-After, X-Wavebridge-Job, Location"


async def _write(resp, data: bytes, timeout: float = SEND_TIMEOUT_S) -> None:
    """``resp.write`` that gives up on a client which stopped reading (it would hold a slot forever)."""
    try:
        async with asyncio.timeout(timeout):
            await resp.write(data)
    except TimeoutError:
        raise ConnectionResetError(f"client took no data for {timeout:.0f} s") from None


def _sse(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _reason(code: str) -> str:
    from bridge.web.encoding import error_reason

    return error_reason(code)


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


async def serve(daemon, settings, metrics=None) -> HttpService | None:
    """Start the HTTP API for ``wavebridge serve`` (``settings``: ``bridge.ops.config.Settings``).

    Engine events reach it through the daemon's event bus; its per-tier meters join the daemon's Prometheus registry. Returns None with ``--http off``;
    raises ``OSError`` if the address is taken and ``ValueError`` for a bad ``--http``. ``[control]``
    """
    where = parse_listen(settings.http)
    if where is None:
        return None
    cfg = HttpConfig(host=where[0], port=where[1], state_dir=settings.state_dir or "", storage=settings.storage,
                     tiers=settings.tiers, price_per_hour=settings.price_per_hour,
                     track_workers=settings.track_workers)
    import sqlite3

    try:
        svc = HttpService(daemon, cfg)
    except sqlite3.Error as e:            # an unusable state dir: no HTTP, the audio goes on
        raise OSError(f"state database in {cfg.state_dir or 'the default state dir'}: {e}") from None
    except ImportError as e:              # --storage s3://… without boto3
        raise OSError(f"{e.name or e} is not installed (pip install 'wavebridge[s3]')") from None
    try:
        await svc.start()
    except BaseException:
        svc.store.close()
        raise
    if metrics is not None:
        try:
            metrics.registry.register(HttpCollector(svc))
        except Exception:  # noqa: BLE001 — metrics are optional
            log.warning("could not add the HTTP meters to /metrics", exc_info=True)
    return svc


class HttpCollector:
    """Prometheus collector: the HTTP side's meters per tier (scraped on the metrics thread)."""

    def __init__(self, svc: HttpService):
        self.svc = svc

    def describe(self):
        """Nothing to describe ahead of a scrape. (metrics scrape)"""
        return []

    def collect(self):
        """The current values. (metrics scrape)"""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        m = self.svc.meters
        fams = [
            (CounterMetricFamily("wavebridge_http_audio_seconds", "Audio seconds served, by tier", labels=["tier"]),
             m.audio_s),
            (CounterMetricFamily("wavebridge_http_compute_seconds", "Engine compute seconds spent for web "
                                 "requests, by tier", labels=["tier"]), m.compute_s),
            (CounterMetricFamily("wavebridge_http_cost_usd", "Compute cost of web requests at --price-per-hour, "
                                 "by tier", labels=["tier"]), m.cost),
        ]
        for fam, counter in fams:
            for tier, v in list(counter.items()):
                fam.add_metric([tier], float(v))
            yield fam
        req = CounterMetricFamily("wavebridge_http_requests", "HTTP requests by endpoint, tier and status",
                                  labels=["endpoint", "tier", "status"])
        for (ep, tier, st), v in list(m.requests.items()):
            req.add_metric([ep, tier, str(st)], float(v))
        yield req
        rej = CounterMetricFamily("wavebridge_http_quota_rejections", "Requests refused with 429, by tier and "
                                  "limit", labels=["tier", "limit"])
        for (tier, why), v in list(m.rejected.items()):
            rej.add_metric([tier, why], float(v))
        yield rej
        act = GaugeMetricFamily("wavebridge_http_active_streams", "Open web streams (private slots)")
        act.add_metric([], float(len(self.svc.streams)))
        yield act
        enc = CounterMetricFamily("wavebridge_http_encode_seconds", "CPU seconds spent encoding, by format",
                                  labels=["format"])
        for f, v in list(m.encode_s.items()):
            enc.add_metric([f], float(v))
        yield enc
        try:
            depth = self.svc.store.queue_depth()
        except Exception:  # noqa: BLE001 — the store is closing
            depth = {}
        q = GaugeMetricFamily("wavebridge_tracks", "Tracks in the queue by state", labels=["state"])
        for st in ("queued", "running", "done", "error"):
            q.add_metric([st], float(depth.get(st, 0)))
        yield q
