"""HTTP and WebSocket API of the daemon (aiohttp), on the same asyncio loop as OSC. ``[control]``

:class:`HttpService` is the service: its parts, their ``web.AppKey`` s on the application, the
route table, the middleware (``bridge.web.guard``'s, then the errors'), and the lifecycle (``start``
binds and serves, ``close`` ends every stream); :func:`serve` starts it for ``wavebridge serve``. The endpoints live one
family per module (``docs/http.md``):

- ``bridge.web.generate`` — ``POST /v1/audio/generate``: SSE or the encoded stream itself.
- ``bridge.web.live`` — ``GET /v1/stream``: a live WebSocket session.
- ``bridge.web.tracks`` — ``POST /v1/tracks``, ``GET /v1/tracks[/{id}[/audio]]`` and the render queue.
- ``bridge.web.slots`` — ``GET /v1/status``, ``GET /v1/status/ws``, ``POST /v1/slots/{slot}/play|stop``.
- ``bridge.web.roll`` — ``GET /v1/slots/{slot}/roll`` (the piano roll), ``POST /v1/slots/{slot}/chord``.
- ``bridge.web.auth`` — keys, tiers, admission, meters and ``GET /v1/usage``.
- ``bridge.web.static`` — the web page at ``/`` (``bridge/web/static``) and ``/favicon.ico``;
  ``GET /healthz`` is here.
- ``bridge.web.guard`` — the first middleware: the Host allow-list, the Origin and Fetch-Metadata
  checks, JSON-only state-changing requests, CORS for listed origins (the preflight) and the page token.

Every web stream is a private daemon slot held by one ``bridge.web.lease.StreamLease``: the
engine, the scheduler and the batching are the ones the OSC slots use; ``bridge.web.stream.PrivateStream``
reads its ring in this process. Engine events reach the streams through the daemon's event bus
(:meth:`HttpService.on_event`, on the loop). Encoding runs on a small thread pool so the loop only
moves bytes. Keys, tiers, usage and the track queue live in SQLite (``bridge.web.store``).
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3

from aiohttp import web
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from bridge.web import conn, generate, live, roll, slots, static, tracks
from bridge.web.api import (CONFIG, DAEMON, DEFAULT_HOST, DEFAULT_PORT, MAX_BODY, ApiError, HttpConfig,
                            TIER, json_error)
from bridge.web.auth import AUTH, Auth, usage
from bridge.web.guard import Guard
from bridge.web.lease import STREAMS, StreamHub
from bridge.web.redisqueue import QueueError, RedisQueue
from bridge.web.storage import make_storage
from bridge.web.store import Store, default_state_dir
from bridge.web.tracks import TRACKS, TrackWorker
from plugin_stub.protocol import RingError, pid_alive, shm_dir as ring_dir

log = logging.getLogger("wavebridge.http")

__all__ = ["HttpCollector", "HttpConfig", "HttpService", "parse_listen", "serve"]

STALE_RING_RE = re.compile(r"^wavebridge\.web(\d+)-\d+$")


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


class HttpService:
    """The aiohttp application bound to one daemon. Create, ``await start()``, ``await close()``. ``[control]``"""

    def __init__(self, daemon, config: HttpConfig):
        self.daemon = daemon
        self.cfg = config
        self.state_dir = config.state_dir or default_state_dir()
        self.store = Store(self.state_dir)
        self.auth = Auth(self.store, config.tiers, config.price_per_hour, config.host)
        self.storage = make_storage(config.storage, self.state_dir)
        self.hub = StreamHub(daemon, config.max_streams)
        self.streams = self.hub.streams               # private slot name → PrivateStream
        self.tracks = TrackWorker(self.hub, self.auth, self.store, self.storage, config.track_workers,
                                  queue=RedisQueue(config.queue) if config.queue else None)
        self.runner: web.AppRunner | None = None
        self.gate: conn.ConnectionGate | None = None   # the listener's connections (set by start)
        self.warmed: dict = {}                         # what warm_up did (bridge.web.warm)
        self.host, self.port = config.host, config.port

    def set_tiers(self, tiers: dict | None) -> None:
        """The built-in tiers overridden or extended by the config's (at start and on SIGHUP). ``[control]``"""
        self.auth.set_tiers(tiers)

    # ------------------------------------------------------------------ the application
    def make_app(self) -> web.Application:
        """The application: this service's parts under their keys, the middleware and the routes. ``[control]``"""
        # the guard first: a foreign Host or Origin is refused before any handler (or upgrade) runs
        self.guard = Guard(lambda: (self.host, self.port), self.cfg.host, self.state_dir,
                           self.cfg.allowed_hosts, self.cfg.allowed_origins)
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self.guard.middleware, self._errors])
        app[DAEMON], app[CONFIG], app[AUTH] = self.daemon, self.cfg, self.auth
        app[STREAMS], app[TRACKS] = self.hub, self.tracks
        slots.setup(app)
        roll.setup(app)
        static.setup(app, self.guard.token)
        app.on_response_prepare.append(self.guard.on_response_prepare)
        r = app.router
        r.add_route("OPTIONS", "/v1/{tail:.*}", self.guard.preflight)
        r.add_get("/", static.page)
        r.add_get("/web/{name}", static.static_file)
        r.add_get("/favicon.ico", static.favicon)
        r.add_get("/healthz", healthz)
        r.add_post("/v1/audio/generate", generate.generate)
        r.add_get("/v1/stream", live.ws_stream)
        r.add_get("/v1/status", slots.status)
        r.add_get("/v1/status/ws", slots.status_ws)
        r.add_post("/v1/slots/{slot}/play", slots.slot_play)
        r.add_post("/v1/slots/{slot}/stop", slots.slot_stop)
        r.add_get("/v1/slots/{slot}/roll", roll.roll)
        r.add_post("/v1/slots/{slot}/chord", roll.slot_chord)
        r.add_get("/v1/usage", usage)
        r.add_post("/v1/tracks", tracks.track_add)
        r.add_get("/v1/tracks", tracks.track_list)
        r.add_get("/v1/tracks/{id}", tracks.track_get)
        r.add_get("/v1/tracks/{id}/audio", tracks.track_audio)
        return app

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> tuple[str, int]:
        """Bind and serve; start the track worker. Returns the bound (host, port). Raises OSError. ``[control]``"""
        cfg = self.cfg
        await self.tracks.open()                      # a shared queue that does not answer: QueueError
        # a short linger: a refused or timed-out body is not read for long (bridge.web.conn)
        handler_kw = dict(access_log=None, keepalive_timeout=cfg.keepalive_timeout_s, lingering_time=2.0)
        self.runner = web.AppRunner(self.make_app(), handle_signals=False, shutdown_timeout=1.0, **handler_kw)
        await self.runner.setup()
        self.gate = conn.ConnectionGate(self.runner, max_connections=cfg.max_connections,
                                        max_per_host=cfg.max_connections_per_host,
                                        head_timeout_s=cfg.head_timeout_s, handler_kwargs=handler_kw)
        site = conn.GatedSite(self.runner, cfg.host, cfg.port, self.gate)
        conn.quiet_client_errors()
        try:
            await site.start()
        except BaseException:
            await self.runner.cleanup()
            self.runner = None
            raise
        self.host, self.port = self.runner.addresses[0][:2]
        self.auth.host = self.host
        self.tracks.start()
        _remove_stale_private_rings()
        self.daemon.bus.subscribe(self.on_event)
        return self.host, self.port

    async def warm_up(self) -> float:
        """Warm the web path (``bridge.web.warm``) so the first request is as fast as later ones;
        what was done is kept in ``warmed``. Returns the ms it took. ``[control]``"""
        from bridge.web.warm import warm_web_path

        self.warmed = await warm_web_path(self)
        return self.warmed["ms"]

    async def close(self) -> None:
        """Stop serving, end every web stream, stop the track worker (its rows resume next start);
        every stream's lease has released and billed before the database closes. ``[control]``"""
        self.daemon.bus.unsubscribe(self.on_event)
        await self.tracks.close()
        if self.runner is not None:
            await self.runner.cleanup()               # on_shutdown closes the status sockets
            self.runner = None
        # cleanup cancelled the handlers still streaming; each one's lease releases (and bills) as
        # its task unwinds, which takes a few loop turns: wait for them, boundedly
        end = asyncio.get_running_loop().time() + 3.0
        while self.hub.streams and asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.01)
        if self.hub.streams:
            log.warning("http: %d web stream(s) did not end at shutdown; their last usage is not billed",
                        len(self.hub.streams))
        self.hub.close_all()
        self.storage.close()
        self.store.close()

    def on_event(self, ev) -> None:
        """An engine event, on the loop: routed to the private stream of its slot (if any). ``[control]``"""
        s = self.streams.get(ev.slot)
        if s is not None:
            s.on_event(ev)
        if ev.kind == "first_audio" and s is not None:
            self.auth.meters.first_audio_ms.append(("engine", ev.ms))

    # ------------------------------------------------------------------ middleware
    @property
    def _errors(self):
        meters = self.auth.meters

        @web.middleware
        async def errors(request, handler):
            endpoint = request.match_info.route.resource.canonical if request.match_info.route.resource else "?"
            conn.request_started(request)         # busy: the connection gate will not time it out
            try:
                resp = await handler(request)
                meters.requests[(endpoint, request.get(TIER, "-"), getattr(resp, "status", 0))] += 1
                return resp
            except ApiError as e:
                meters.requests[(endpoint, request.get(TIER, "-"), e.status)] += 1
                return json_error(e)
            except web.HTTPRequestEntityTooLarge:
                meters.requests[(endpoint, "-", 413)] += 1
                return json_error(ApiError(413, "bad_request", f"request body over {MAX_BODY} bytes"))
            except web.HTTPException as e:
                meters.requests[(endpoint, "-", e.status)] += 1
                if e.status >= 400 and e.status != 101:
                    return json_error(ApiError(e.status, "bad_request", e.reason or "bad request", {
                        k: v for k, v in e.headers.items() if k.lower() in ("allow",)}))
                raise
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 — the daemon never dies from a request
                if conn.is_disconnect(e):
                    # the client went away: one debug line, no traceback, and no answer (aiohttp
                    # would log its own "Error handling request" with a traceback for a raise)
                    log.debug("HTTP %s %s: client went away (%s: %s)", request.method, request.path,
                              type(e).__name__, e)
                    meters.requests[(endpoint, request.get(TIER, "-"), 499)] += 1
                    return conn.gone(request)
                log.exception("HTTP %s %s failed", request.method, request.path)
                self.daemon.count_error("internal")
                meters.requests[(endpoint, "-", 500)] += 1
                return json_error(ApiError(500, "internal", f"internal error: {type(e).__name__}"))
            finally:
                conn.request_ended(request)

        return errors


async def healthz(request: web.Request) -> web.Response:
    """``GET /healthz``. ``[control]``"""
    return web.json_response({"ok": True, "backend": request.app[DAEMON].backend.name,
                              "streams": len(request.app[STREAMS].streams)})


def _remove_stale_private_rings(shm_dir: str | None = None) -> int:
    """Unlink ``wavebridge.web<pid>-<n>`` rings whose daemon is dead (left by a kill -9), in
    ``shm_dir`` (default: the ring directory, ``plugin_stub.protocol.shm_dir``)."""
    n = 0
    try:
        shm_dir = shm_dir or ring_dir()
        names = os.listdir(shm_dir)
    except (OSError, RingError):
        return 0
    for name in names:
        m = STALE_RING_RE.match(name)
        if not m or int(m.group(1)) == os.getpid():
            continue
        if pid_alive(int(m.group(1))):
            continue                    # its daemon is alive
        try:
            os.unlink(os.path.join(shm_dir, name))
            n += 1
        except OSError:
            pass
    return n


async def serve(daemon, settings, metrics=None) -> HttpService | None:
    """Start the HTTP API for ``wavebridge serve`` (``settings``: ``bridge.ops.config.Settings``).

    Engine events reach it through the daemon's event bus; its per-tier meters join the daemon's
    Prometheus registry. Returns None with ``--http off``; raises ``OSError`` if the address is taken
    and ``ValueError`` for a bad ``--http``. ``[control]``
    """
    where = parse_listen(settings.http)
    if where is None:
        return None
    cfg = HttpConfig(host=where[0], port=where[1], state_dir=settings.state_dir or "", storage=settings.storage,
                     queue=getattr(settings, "queue", None) or None,
                     tiers=settings.tiers, price_per_hour=settings.price_per_hour,
                     track_workers=settings.track_workers,
                     allowed_hosts=tuple(getattr(settings, "allowed_hosts", None) or ()),
                     allowed_origins=tuple(getattr(settings, "allowed_origins", None) or ()),
                     **{f: getattr(settings, f) for f in CONNECTION_FIELDS if hasattr(settings, f)})
    try:
        svc = HttpService(daemon, cfg)
    except sqlite3.Error as e:            # an unusable state dir: no HTTP, the audio goes on
        raise OSError(f"state database in {cfg.state_dir or 'the default state dir'}: {e}") from None
    except ImportError as e:              # --storage s3://… without boto3
        raise OSError(f"{e.name or e} is not installed (pip install 'wavebridge[s3]')") from None
    except ValueError as e:               # a bad --queue: not optional like the port, serve stops (exit 2)
        if cfg.queue:
            raise QueueError(str(e)) from None
        raise
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


#: the ``[http]`` settings of the listener's connections, named as in :class:`HttpConfig`
CONNECTION_FIELDS = ("keepalive_timeout_s", "head_timeout_s", "body_timeout_s", "body_min_rate", "max_connections",
                     "max_connections_per_host")


class HttpCollector:
    """Prometheus collector: the HTTP side's meters per tier (scraped on the metrics thread)."""

    def __init__(self, svc: HttpService):
        self.svc = svc

    def describe(self):
        """Nothing to describe ahead of a scrape. (metrics scrape)"""
        return []

    def collect(self):
        """The current values. (metrics scrape)"""
        m = self.svc.auth.meters
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
