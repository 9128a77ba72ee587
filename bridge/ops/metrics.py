"""Prometheus metrics: one registry per daemon, served as text over HTTP by prometheus_client.

What is measured where:

- engine thread (``Daemon.on_step``, ``Daemon.on_apply`` hooks, ``[engine]``): chunk-generation
  time per scheduler step, batch sizes, generated audio seconds and compute seconds (→ real-time
  factor), queue wait (command arrival → the engine takes it). Only ``observe``/``inc`` calls:
  a lock and a few additions each, no I/O.
- control loop (a subscriber of the daemon's event bus, ``[control]``): first-audio latency, finished jobs.
- scrape time (the HTTP server's thread, :class:`_Collector`): everything that already lives in
  the daemon as plain numbers — per-slot buffered seconds, playing flag, reader liveness and
  ``underrun_frames`` read straight from each ring header, errors by code, OSC packets good/bad/
  denied/rate-limited, MIDI message counts, engine queue depth and loop age. Reading these costs
  the daemon nothing between scrapes.

The registry is private (not prometheus_client's global one), so several daemons can live in one
process (tests). ``start_http`` binds ``host:port``; port 0 takes a free port.

HTTP (:class:`MetricsHTTP`): aiohttp's low-level server on the control loop — no thread per
connection (prometheus_client's own server starts one per connection, so 2000 held connections
were 2000 threads). Each accepted connection passes a gate first: peers outside ``allow``
(loopback by default, ``--metrics-allow``) and connections beyond ``MAX_CONNECTIONS`` are closed
at once; an idle connection closes after ``KEEPALIVE_S`` and any connection after
``MAX_CONNECTION_S``. The exposition text is rendered in one worker thread (a bounded pool of
one), so a scrape never runs the collectors on the loop. Used outside a running loop (tests,
library use), the server runs on a loop of its own in one thread.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import socket
import threading
import time

# aiohttp at import time, not on first use: importing it later, on the loop, would hold every OSC
# datagram for the import's duration (~0.5 s on a busy machine); serve imports this module first.
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily

from bridge import __version__
from bridge.control.netguard import AllowList

log = logging.getLogger("wavebridge.metrics")

DEFAULT_PORT = 9464
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0)
STEP_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
WAIT_BUCKETS = (0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
MAX_CONNECTIONS = 64          # open HTTP connections at once; more are closed as they arrive
KEEPALIVE_S = 5.0             # an idle connection (before or between requests) closes after this
MAX_CONNECTION_S = 30.0       # any connection closes after this


class Metrics:
    """The daemon's metrics. Create, :meth:`attach`, then optionally :meth:`start_http`."""

    def __init__(self, daemon, osc=None, midi=None):
        self.daemon = daemon
        self.osc = osc
        self.midi = midi
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.first_audio = Histogram("wavebridge_first_audio_seconds",
                                     "Command arrival (datagram or MIDI event) to the job's first frames in the ring",
                                     buckets=LATENCY_BUCKETS, registry=r)
        self.chunk_gen = Histogram("wavebridge_chunk_generation_seconds",
                                   "Backend compute time of one scheduler step (all chunks of one batch round)",
                                   buckets=STEP_BUCKETS, registry=r)
        self.batch = Histogram("wavebridge_batch_size", "Streams generated together in one backend call",
                               buckets=BATCH_BUCKETS, registry=r)
        self.queue_wait = Histogram("wavebridge_queue_wait_seconds",
                                    "Command arrival to the engine thread taking it from its queue",
                                    buckets=WAIT_BUCKETS, registry=r)
        self.audio_s = Counter("wavebridge_generated_audio_seconds", "Audio generated, in seconds of audio",
                               registry=r)
        self.compute_s = Counter("wavebridge_compute_seconds", "Backend compute time spent generating",
                                 registry=r)
        self.jobs_done = Counter("wavebridge_jobs_done", "Jobs that ended, by reason", ["reason"], registry=r)
        self._recent = collections.deque(maxlen=256)      # (audio_s, compute_s) of recent steps
        self._lock = threading.Lock()
        r.register(_Collector(self))
        self.httpd = None
        self._http_thread = None
        self.port = 0
        self.host = ""

    # ------------------------------------------------------------------ hooks
    def attach(self) -> "Metrics":
        """Install the daemon and adapter hooks. ``[control]``, before traffic starts."""
        self.daemon.on_step = self.on_step
        if hasattr(self.daemon, "on_apply"):
            self.daemon.on_apply = self.on_apply
        self.daemon.bus.subscribe(self.on_event)
        return self

    def on_step(self, res) -> None:
        """One scheduler step's result. ``[engine]``"""
        if not res.batch_sizes and not res.chunks:
            return
        for b in res.batch_sizes:
            self.batch.observe(b)
        if res.compute_s > 0:
            self.chunk_gen.observe(res.compute_s)
            self.compute_s.inc(res.compute_s)
        rate = getattr(self.daemon.backend, "sample_rate", 0) or 1
        audio = sum(int(ch.audio.shape[0]) for ch in res.chunks) / rate
        if audio > 0:
            self.audio_s.inc(audio)
        with self._lock:
            self._recent.append((audio, res.compute_s))

    def on_apply(self, cmd) -> None:
        """The engine took ``cmd`` off its queue. ``[engine]``"""
        if cmd.arrival_ns and cmd.kind != "wake":
            self.queue_wait.observe(max(0.0, (time.monotonic_ns() - cmd.arrival_ns) / 1e9))

    def on_event(self, ev) -> None:
        """An engine event, (a bus subscriber, after the OSC server's reply). ``[control]``"""
        if ev.kind == "first_audio":
            self.first_audio.observe(ev.ms / 1000.0)
        elif ev.kind == "done":
            self.jobs_done.labels(str(ev.extra.get("reason", "unknown"))).inc()

    def realtime_factor(self) -> tuple[float, float]:
        """(overall, recent) audio seconds generated per compute second (0 before any work)."""
        s = self.daemon.scheduler
        overall = 0.0
        if s is not None and s.total_compute_s > 0:
            overall = s.total_frames / max(1, s.rate) / s.total_compute_s
        with self._lock:
            a = sum(x for x, _ in self._recent)
            c = sum(y for _, y in self._recent)
        return overall, (a / c if c > 0 else 0.0)

    # ------------------------------------------------------------------ HTTP
    def start_http(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, allow=None) -> int:
        """Serve ``/metrics`` on ``host:port`` (0 = a free port) to peers in ``allow`` (loopback
        by default); returns the port. Raises OSError when the address cannot be bound. ``[control]``"""
        self.httpd = MetricsHTTP(self.registry, allow)
        self.port = self.httpd.start(host, port)
        self.host = host
        return self.port

    def close(self, wait: bool = False) -> None:
        """Stop the HTTP endpoint: the listening socket closes at once, open connections are
        dropped; the metrics stop hearing the daemon's events. ``[control]``"""
        self.daemon.bus.unsubscribe(self.on_event)
        httpd, self.httpd = self.httpd, None
        if httpd is not None:
            httpd.close()

    def text(self) -> str:
        """The exposition text (what an HTTP scrape returns)."""
        return generate_latest(self.registry).decode()


class _Gate(asyncio.Protocol):
    """First protocol of every accepted connection: admits it to aiohttp's handler or closes it."""

    def __init__(self, http: "MetricsHTTP"):
        self.http = http

    def connection_made(self, transport):  # noqa: D401 — asyncio hook
        http = self.http
        peer = transport.get_extra_info("peername")
        if not peer or not http.allow.allows(peer[0]):
            http.stats["denied"] += 1
            transport.abort()
            return
        if http.web is None or len(http.web.connections) >= http.max_connections:
            http.stats["refused"] += 1
            transport.abort()
            return
        http.stats["accepted"] += 1
        handler = http.web()                       # aiohttp's protocol for this connection
        transport.set_protocol(handler)
        handler.connection_made(transport)
        http.loop.call_later(MAX_CONNECTION_S, _expire, transport)

    def data_received(self, data):  # noqa: D401 — never reached: the handler takes over
        pass


def _expire(transport) -> None:
    if not transport.is_closing():
        transport.abort()


class MetricsHTTP:
    """``/metrics`` over HTTP/1.1 with aiohttp on an asyncio loop. ``[control]``"""

    def __init__(self, registry, allow=None, max_connections: int = MAX_CONNECTIONS):
        self.registry = registry
        self.allow = AllowList(allow)
        self.max_connections = max_connections
        self.stats = {"accepted": 0, "denied": 0, "refused": 0, "scrapes": 0}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.web = None
        self._server = None
        self._thread: threading.Thread | None = None
        self._own_loop = False
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="wavebridge-scrape")

    def start(self, host: str, port: int) -> int:
        """Bind now (OSError if not possible), serve on the running loop or on one of its own."""
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        if not infos:
            raise OSError(f"cannot resolve {host!r}")
        family, _, _, _, addr = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        bound = sock.getsockname()[1]
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = asyncio.new_event_loop()
            self._own_loop = True
            self._thread = threading.Thread(target=self.loop.run_forever, name="wavebridge-metrics", daemon=True)
            self._thread.start()
            asyncio.run_coroutine_threadsafe(self._serve(sock), self.loop).result(10)
            return bound
        self.loop.create_task(self._serve(sock), name="wavebridge-metrics")
        return bound

    async def _serve(self, sock) -> None:
        self.web = web.Server(self._handle, keepalive_timeout=KEEPALIVE_S, access_log=None)
        self._server = await self.loop.create_server(lambda: _Gate(self), sock=sock)

    async def _handle(self, request):
        if request.method not in ("GET", "HEAD") or request.path not in ("/metrics", "/"):
            return web.Response(status=404, text="wavebridge serves /metrics\n")
        self.stats["scrapes"] += 1
        body = await self.loop.run_in_executor(self._pool, generate_latest, self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    def _close_now(self) -> None:
        if self._server is not None:
            self._server.close()                   # the listening socket closes here
            self._server = None
        server, self.web = self.web, None
        if server is not None:
            for h in server.connections:
                t = h.transport
                h.force_close()
                if t is not None:
                    t.abort()

    def close(self) -> None:
        """Close the listener and every connection; the scrape worker ends after its scrape."""
        loop = self.loop
        if loop is None:
            return
        if self._own_loop:
            if not loop.is_closed():
                async def shut():
                    self._close_now()

                try:
                    asyncio.run_coroutine_threadsafe(shut(), loop).result(5)
                except Exception:  # noqa: BLE001 — closing must not fail the caller
                    log.debug("metrics close", exc_info=True)
                loop.call_soon_threadsafe(loop.stop)
                if self._thread is not None:
                    self._thread.join(5)
                loop.close()
        else:
            self._close_now()
        self.loop = None
        self._pool.shutdown(wait=False)


class _Collector:
    """Scrape-time values read from the daemon and the adapters (the HTTP server's thread)."""

    def __init__(self, m: Metrics):
        self.m = m

    def describe(self):
        return []

    def collect(self):
        m = self.m
        d = m.daemon
        now = time.monotonic_ns()
        yield _info(d)
        yield from _slot_families(d, now)
        overall, recent = m.realtime_factor()
        rtf = GaugeMetricFamily("wavebridge_realtime_factor", "Audio seconds generated per compute second",
                                labels=["window"])
        rtf.add_metric(["overall"], overall)
        rtf.add_metric(["recent"], recent)
        yield rtf
        yield from _daemon_counters(d)
        yield from _engine_families(d, now)
        osc, http, midi = m.osc, m.httpd, m.midi
        if osc is not None:
            yield from _osc_families(osc)
        if http is not None:
            yield _http_family(http)
        if midi is not None:
            yield from _midi_families(midi)


def _info(d) -> InfoMetricFamily:
    info = InfoMetricFamily("wavebridge", "Daemon version and backend")
    info.add_metric([], {"version": __version__, "backend": str(getattr(d.backend, "name", "")),
                         "dsp": str(getattr(d, "dsp_path", ""))})
    return info


def _slot_families(d, now: int):
    """Per-slot buffered seconds, playing flag, reader liveness and underruns, read from the rings."""
    buf = GaugeMetricFamily("wavebridge_slot_buffered_seconds", "Audio ahead of the reader, per slot",
                            labels=["slot"])
    playing = GaugeMetricFamily("wavebridge_slot_playing", "1 while the slot has a job", labels=["slot"])
    reader = GaugeMetricFamily("wavebridge_slot_reader_alive", "1 while a reader heartbeat is fresh (< 1 s)",
                               labels=["slot"])
    under = CounterMetricFamily("wavebridge_underrun_frames", "Frames the reader zero-filled while playing "
                                "(underrun_frames of the ring header)", labels=["slot"])
    for n, s in list(d.slots.items()):
        if getattr(s, "private", False):    # web streams come and go: their usage is metered per key
            continue
        try:
            ring = s.ring
            b = ring.buffered() / max(1, ring.sample_rate)
            u = ring.underrun_frames
            alive = (now - ring.reader_heartbeat_ns) < 1_000_000_000
        except Exception:  # noqa: BLE001 — the ring is closing under a late scrape
            continue
        label = [str(n)]
        buf.add_metric(label, b)
        playing.add_metric(label, 1.0 if s.job is not None else 0.0)
        reader.add_metric(label, 1.0 if alive else 0.0)
        under.add_metric(label, float(u))
    return buf, playing, reader, under


def _daemon_counters(d):
    """Errors by code, accepted commands, re-timed restarts."""
    errs = CounterMetricFamily("wavebridge_errors", "Errors answered or counted, by /wb/error code",
                               labels=["code"])
    for code, k in _snapshot(d.errors_by_code):
        errs.add_metric([str(code)], float(k))
    yield errs
    cmds = CounterMetricFamily("wavebridge_commands", "Commands accepted into the engine queue")
    cmds.add_metric([], float(d.counters.get("commands", 0)))
    yield cmds
    rt = CounterMetricFamily("wavebridge_retimes", "Re-timed restarts at the read head for a host tempo "
                             "change or a relocate (bridge.core.hostlink)")
    rt.add_metric([], float(getattr(d, "retimes", 0)))
    yield rt


def _engine_families(d, now: int):
    """Engine queue depth and loop age (while the engine runs), and the warm-up time."""
    eng = d.engine
    if eng is not None:
        q = GaugeMetricFamily("wavebridge_engine_queue_depth", "Commands waiting for the engine thread")
        q.add_metric([], float(eng.q.qsize()))
        yield q
        age = GaugeMetricFamily("wavebridge_engine_loop_age_seconds",
                                "Seconds since the engine loop last turned (the watchdog's signal)")
        age.add_metric([], max(0.0, (now - eng.alive_ns) / 1e9))
        yield age
    warm = GaugeMetricFamily("wavebridge_warmup_seconds", "Backend load and warm-up time at start")
    warm.add_metric([], float(getattr(d, "warmup_s", 0.0)))
    yield warm


def _osc_families(osc):
    """OSC datagrams and messages by outcome, the per-host budgets, the limiter's table size."""
    st = dict(osc.stats)
    pk = CounterMetricFamily("wavebridge_osc_packets", "OSC datagrams by outcome", labels=["result"])
    for key, label in (("packets_good", "good"), ("packets_bad", "bad"), ("denied", "denied"),
                       ("rate_limited", "rate_limited")):
        pk.add_metric([label], float(st.get(key, 0)))
    yield pk
    msgs = CounterMetricFamily("wavebridge_osc_messages", "OSC messages handled (bundles unpacked)")
    msgs.add_metric([], float(st.get("messages", 0)))
    yield msgs
    lim = CounterMetricFamily("wavebridge_osc_limited", "OSC datagrams refused or replies left out by a "
                              "per-host budget", labels=["budget"])
    for key, label in (("rate_limited", "rate"), ("cpu_limited", "cpu"), ("replies_capped", "reply_bytes")):
        lim.add_metric([label], float(st.get(key, 0)))
    yield lim
    limiter = getattr(osc, "limiter", None)
    if limiter is not None:
        hosts = GaugeMetricFamily("wavebridge_osc_limiter_hosts",
                                  "Hosts the OSC limiter tracks now (bounded, idle ones expire)")
        hosts.add_metric([], float(len(limiter)))
        yield hosts


def _http_family(http) -> CounterMetricFamily:
    hc = CounterMetricFamily("wavebridge_metrics_connections", "Connections to /metrics by outcome",
                             labels=["result"])
    for key in ("accepted", "denied", "refused"):
        hc.add_metric([key], float(http.stats.get(key, 0)))
    return hc


def _midi_families(midi):
    """MIDI messages and the commands made from them, by outcome; the input port's state."""
    mm = CounterMetricFamily("wavebridge_midi_messages", "MIDI messages by outcome", labels=["result"])
    ms = dict(midi.stats)
    mp = dict(midi.mapper.stats)
    for label, v in (("received", ms.get("received", 0)), ("bad", ms.get("bad", 0)),
                     ("ignored", mp.get("ignored", 0)), ("unmapped", mp.get("unmapped", 0)),
                     ("invalid", mp.get("invalid", 0))):
        mm.add_metric([label], float(v))
    yield mm
    mc = CounterMetricFamily("wavebridge_midi_commands", "Commands made from MIDI, by outcome",
                             labels=["result"])
    mc.add_metric(["submitted"], float(ms.get("submitted", 0)))
    mc.add_metric(["rejected"], float(ms.get("rejected", 0)))
    yield mc
    con = GaugeMetricFamily("wavebridge_midi_connected", "1 while the MIDI input port is open")
    con.add_metric([], 1.0 if midi.connected else 0.0)
    yield con


def _snapshot(d: dict) -> list:
    """Items of a dict another thread may be growing."""
    for _ in range(5):
        try:
            return list(d.items())
        except RuntimeError:
            continue
    return []
