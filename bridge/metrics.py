"""Prometheus metrics: one registry per daemon, served as text over HTTP by prometheus_client.

What is measured where:

- engine thread (``Daemon.on_step``, ``Daemon.on_apply`` hooks, ``[engine]``): chunk-generation
  time per scheduler step, batch sizes, generated audio seconds and compute seconds (→ real-time
  factor), queue wait (command arrival → the engine takes it). Only ``observe``/``inc`` calls:
  a lock and a few additions each, no I/O.
- control loop (``OscServer.event_hooks``, ``[control]``): first-audio latency, finished jobs.
- scrape time (the HTTP server's thread, :class:`_Collector`): everything that already lives in
  the daemon as plain numbers — per-slot buffered seconds, playing flag, reader liveness and
  ``underrun_frames`` read straight from each ring header, errors by code, OSC packets good/bad/
  denied/rate-limited, MIDI message counts, engine queue depth and loop age. Reading these costs
  the daemon nothing between scrapes.

The registry is private (not prometheus_client's global one), so several daemons can live in one
process (tests). ``start_http`` binds ``host:port``; port 0 takes a free port.
"""
from __future__ import annotations

import collections
import logging
import threading
import time

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily

from . import __version__

log = logging.getLogger("wavebridge.metrics")

DEFAULT_PORT = 9464
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0)
STEP_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
WAIT_BUCKETS = (0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


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
        if self.osc is not None:
            self.osc.event_hooks.append(self.on_event)
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
        """An engine event, after the OSC reply went out. ``[control]``"""
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
    def start_http(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> int:
        """Serve ``/metrics`` on ``host:port`` (0 = a free port); returns the port. Raises OSError."""
        self.httpd, self._http_thread = start_http_server(port, addr=host, registry=self.registry)
        self.host = host
        self.port = int(self.httpd.server_address[1])
        return self.port

    def close(self, wait: bool = False) -> None:
        """Stop the HTTP endpoint. Its loop polls every 0.5 s, so by default the stop runs in the
        background and a shutting-down daemon does not wait for it."""
        httpd, self.httpd = self.httpd, None
        if httpd is None:
            return

        def stop():
            httpd.shutdown()
            httpd.server_close()

        if wait:
            stop()
        else:
            threading.Thread(target=stop, name="wavebridge-metrics-stop", daemon=True).start()

    def text(self) -> str:
        """The exposition text (what an HTTP scrape returns)."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry).decode()


class _Collector:
    """Scrape-time values read from the daemon and the adapters (the HTTP server's thread)."""

    def __init__(self, m: Metrics):
        self.m = m

    def describe(self):
        return []

    def collect(self):
        m = self.m
        d = m.daemon
        info = InfoMetricFamily("wavebridge", "Daemon version and backend")
        info.add_metric([], {"version": __version__, "backend": str(getattr(d.backend, "name", "")),
                             "dsp": str(getattr(d, "dsp_path", ""))})
        yield info
        buf = GaugeMetricFamily("wavebridge_slot_buffered_seconds", "Audio ahead of the reader, per slot",
                                labels=["slot"])
        playing = GaugeMetricFamily("wavebridge_slot_playing", "1 while the slot has a job", labels=["slot"])
        reader = GaugeMetricFamily("wavebridge_slot_reader_alive", "1 while a reader heartbeat is fresh (< 1 s)",
                                   labels=["slot"])
        under = CounterMetricFamily("wavebridge_underrun_frames", "Frames the reader zero-filled while playing "
                                    "(underrun_frames of the ring header)", labels=["slot"])
        now = time.monotonic_ns()
        for n, s in list(d.slots.items()):
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
        yield buf
        yield playing
        yield reader
        yield under
        overall, recent = m.realtime_factor()
        rtf = GaugeMetricFamily("wavebridge_realtime_factor", "Audio seconds generated per compute second",
                                labels=["window"])
        rtf.add_metric(["overall"], overall)
        rtf.add_metric(["recent"], recent)
        yield rtf
        errs = CounterMetricFamily("wavebridge_errors", "Errors answered or counted, by /wb/error code",
                                   labels=["code"])
        for code, k in _snapshot(d.errors_by_code):
            errs.add_metric([str(code)], float(k))
        yield errs
        cmds = CounterMetricFamily("wavebridge_commands", "Commands accepted into the engine queue")
        cmds.add_metric([], float(d.counters.get("commands", 0)))
        yield cmds
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
        if m.osc is not None:
            st = dict(m.osc.stats)
            pk = CounterMetricFamily("wavebridge_osc_packets", "OSC datagrams by outcome", labels=["result"])
            for key, label in (("packets_good", "good"), ("packets_bad", "bad"), ("denied", "denied"),
                               ("rate_limited", "rate_limited")):
                pk.add_metric([label], float(st.get(key, 0)))
            yield pk
            msgs = CounterMetricFamily("wavebridge_osc_messages", "OSC messages handled (bundles unpacked)")
            msgs.add_metric([], float(st.get("messages", 0)))
            yield msgs
        midi = m.midi
        if midi is not None:
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
