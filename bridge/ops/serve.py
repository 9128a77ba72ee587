"""``wavebridge serve``: one running daemon and the start sequence that brings it up.

:class:`Service` is the running whole (daemon, OSC, MIDI, metrics, HTTP, systemd) and what
SIGHUP does to it; :class:`_Startup` starts the components one named step at a time over one
``AsyncExitStack``, each registering its own close as soon as it exists, so a failure at any
step unwinds exactly what was started, in reverse order. Everything here runs on the asyncio
control loop in the main thread (``[control]``); the daemon's engine thread is the daemon's own.

The CLI imports this module only for ``serve`` (``bridge.ops.cli``), so its imports, the
daemon's whole weight, sit at the top here and never slow ``wavebridge --help``.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import statistics
import sys
import time

from bridge.control.midi import MidiInput, MidiMap, check_backend
from bridge.control.midiout import MidiOutput
from bridge.control.netguard import AllowList, exposure_warnings
from bridge.control.osc import OscServer, ServingProbe
from bridge.core.commands import COMMON_PARAMS, parse_osc
from bridge.core.daemon import Config, Daemon, validate_config
from bridge.ops.config import ConfigError, Settings, reload as reload_settings, resolve
from bridge.ops.metrics import Metrics
from bridge.ops.systemd import Notifier, Watchdog, interrupted_jobs

log = logging.getLogger("wavebridge")

_CLI_FIELDS = ("config", "osc_host", "osc_port", "backend", "engine", "engine_fallback", "model", "device", "dtype", "soundfont", "slots", "target_s", "xfade_ms",
               "first_chunk", "max_chunk", "splice", "price_per_hour", "allow", "midi", "midi_port", "midi_map",
               "metrics_host", "metrics_allow", "resume", "log_level", "http", "state_dir", "storage", "queue",
               "allowed_hosts", "allowed_origins")


def cli_values(args) -> dict:
    """The serve flags that were given, as ``bridge.ops.config.Settings`` field names."""
    d = {k: getattr(args, k, None) for k in _CLI_FIELDS}
    mp = getattr(args, "metrics_port", None)
    if mp is not None:
        if mp < 0:
            d["metrics"] = False
        else:
            d["metrics"] = True
            d["metrics_port"] = mp
    return d


def build_config(s):
    """``bridge.core.daemon.Config`` from resolved settings (or from parsed serve args)."""
    if not isinstance(s, Settings):
        s = resolve(cli_values(s))
    if not 1 <= s.slots <= 64:
        raise SystemExit("--slots must be 1..64")
    lo, hi = COMMON_PARAMS["xfade_ms"]
    if not lo <= s.xfade_ms <= hi:
        raise SystemExit(f"--xfade-ms must be {lo:g}..{hi:g}")
    kw = {}
    if s.model:
        kw["model"] = s.model
    if s.device:
        kw["device"] = s.device
    if s.dtype:
        kw["dtype"] = s.dtype
    if s.soundfont and s.backend == "synth":
        kw["soundfont"] = s.soundfont
    cfg = Config(slots=s.slots, backend=s.backend, backend_kwargs=kw, target_s=s.target_s,
                 xfade_ms=s.xfade_ms, first_chunk=s.first_chunk, max_chunk=s.max_chunk, splice=s.splice,
                 price_per_hour=s.price_per_hour,
                 slot_names=list(s.slot_names) if getattr(s, "slot_names", None) else None)
    try:
        validate_config(cfg)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    return cfg


class Service:
    """One running ``serve``: daemon, OSC, MIDI, metrics, systemd. Lives on the loop. ``[control]``"""

    def __init__(self, settings, cli: dict, notifier):
        self.s = settings
        self.cli = cli
        self.n = notifier
        self.daemon = None
        self.osc = None
        self.midi = None
        self.metrics = None
        self.http = None
        self.watchdog = None
        self.reloads = 0

    # ------------------------------------------------------------------ live settings
    def param_commands(self, s) -> list:
        """Validated ``param``/``tempo`` commands for the settings' ``[params]`` and ``tempo``."""
        d = self.daemon
        n = len(d.slots)
        out = []
        for slot, name, value in s.live_params():
            for k in ([slot] if slot is not None else list(d.slots)):
                try:
                    out.append(parse_osc("/wb/param", [k, name, value], n, d.params()))
                except Exception as e:  # noqa: BLE001 — WavebridgeError with a message
                    where = f"params.{slot}.{name}" if slot is not None else f"params.{name}"
                    raise ValueError(f"{where}: {getattr(e, 'message', e)}") from None
        if s.tempo is not None:
            out.append(parse_osc("/wb/tempo", [s.tempo], n, d.params()))
        for c in out:
            c.source = "config"
        return out

    def load_midi_map(self, s):
        return MidiMap.load(s.midi_map) if s.midi_map else MidiMap.default()

    def reload(self) -> None:
        """SIGHUP: config, MIDI map and live parameters; audio is not touched. ``[control]``"""
        self.n.reloading()
        self.reloads += 1
        try:
            new, restart = reload_settings(self.s, self.cli)
            cmds = self.param_commands(new)
            midi_map = self.load_midi_map(new) if self.midi is not None else None
        except Exception as e:  # noqa: BLE001 — a bad edit keeps the running settings
            log.error("reload failed, keeping the running settings: %s", getattr(e, "message", e))
            print(f"wavebridge: reload failed, keeping the running settings: {getattr(e, 'message', e)}", flush=True)
            self.daemon.count_error("bad_config")
            self.n.ready(f"reload failed: {getattr(e, 'message', e)}"[:200])
            return
        for c in cmds:
            try:
                self.daemon.submit(c)
            except Exception as e:  # noqa: BLE001
                log.warning("reload: %s %s: %s", c.kind, c.name, getattr(e, "message", e))
        if midi_map is not None:
            self.midi.set_map(midi_map)
        if self.http is not None:
            self.http.set_tiers(new.tiers)
        if restart:
            log.warning("reload: %s changed; these take effect at the next restart", ", ".join(restart))
        keep = {f: getattr(self.s, f) for f in restart}
        for f, v in keep.items():
            setattr(new, f, v)
        self.s = new
        log.info("reloaded %s: %d parameter commands%s", new.config_path or "(no config file)", len(cmds),
                 f", MIDI map {midi_map.source}" if midi_map is not None else "")
        print(f"wavebridge: reloaded ({len(cmds)} parameter commands"
              f"{', MIDI map ' + midi_map.source if midi_map is not None else ''})", flush=True)
        self.n.ready(self.summary())

    # ------------------------------------------------------------------ status
    def summary(self) -> str:
        d = self.daemon
        if d is None:
            return "starting"
        rows = d.status()
        playing = sum(1 for r in rows if r["state"] == "playing")
        under = sum(int(r["underrun_frames"]) for r in rows)
        parts = [f"{playing}/{len(rows)} slots playing"]
        if self.osc is not None:
            parts.append(f"OSC {self.osc.host}:{self.osc.port}")
        if self.midi is not None:
            parts.append(self.midi.summary())
        fa = list(d.first_audio_ms)[-200:]
        if fa:
            parts.append(f"first audio p50 {statistics.median(fa):.0f} ms")
        parts.append(f"underruns {under} frames")
        errs = sum(d.errors_by_code.values())
        if errs:
            parts.append(f"{errs} errors")
        return ", ".join(parts)


def _quietly(what: str, fn, *args) -> None:
    """Run one component's close; a failing close is logged and the others still run. ``[control]``"""
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        log.exception("closing %s failed", what)


async def _quietly_async(what: str, fn, *args) -> None:
    """:func:`_quietly` for a coroutine close (the HTTP service). ``[control]``"""
    try:
        await fn(*args)
    except Exception:  # noqa: BLE001
        log.exception("closing %s failed", what)


def _warn_exposure(what: str, host: str, port: int, allow, flag: str) -> None:
    """One clear line (stdout and the log) for a listener bound beyond loopback."""
    for line in exposure_warnings(what, host, port, allow, flag):
        print(f"wavebridge: {line}", flush=True)
        log.warning("%s", line.removeprefix("WARNING: "))


def http_url(host: str, port: int, path: str = "/") -> str:
    """``http://host:port/path``, an IPv6 address in brackets (``http://[::]:8137/``)."""
    from bridge.web.conn import http_url as url   # in the web package: the HTTP step imports it anyway

    return url(host, port, path)


def _warn_http_exposure(host: str, port: int) -> None:
    """The one WARNING line (stdout and the log) for an HTTP API bound beyond loopback."""
    from bridge.web.conn import exposure_warning

    line = exposure_warning(host, port)
    if line:
        print(f"wavebridge: {line}", flush=True)
        log.warning("%s", line.removeprefix("WARNING: "))


class _Startup:
    """The start sequence of one ``serve``, one method per step, over one exit stack. ``[control]``

    ``step`` names what is being started, for the one line a failure prints. Each method
    registers the close of what it started on ``stack`` (MIDI out on ``after_daemon``, which
    closes after the daemon: the engine feeds it until it stops).
    """

    def __init__(self, args, notifier, stack: contextlib.AsyncExitStack, loop):
        self.args = args
        self.notifier = notifier
        self.stack = stack
        self.loop = loop
        self.step = ""
        self.s = self.svc = self.cfg = self.daemon = self.server = None
        self.midi_map = None
        self.resume: list = []
        self.stop = None
        self.after_daemon = None
        self.t0 = 0.0
        self.host, self.port = None, None

    def fail(self, msg: str) -> int:
        log.error("%s", msg)
        print(f"wavebridge: {msg}", file=sys.stderr, flush=True)
        self.notifier.stopping(msg[:200])
        return 2

    def resolve_settings(self) -> str | None:
        """Flags over the config file over the defaults, and the allow lists; the error, or None."""
        cli = cli_values(self.args)
        try:
            s = resolve(cli)
        except ConfigError as e:
            return e.message
        logging.getLogger().setLevel(getattr(logging, str(s.log_level).upper(), logging.INFO))
        if s.config_path:
            log.info("config: %s", s.config_path)
        for what, nets in (("--allow", s.allow), ("--metrics-allow", s.metrics_allow)):
            try:
                AllowList(nets)
            except ValueError as e:
                return f"{what}: {e}"
        self.s = s
        self.svc = Service(s, cli, self.notifier)
        return None

    async def start_components(self) -> None:
        """Every component in order; raises with ``step`` naming the one that failed."""
        self.check_settings()
        remote = await self.remote_engine()
        self.create_daemon(remote)
        await self.warm_up()
        await self.start_osc()
        self.apply_params()
        self.start_metrics()
        await self.start_http()
        self.open_midi_in()
        self.open_midi_out()

    def check_settings(self) -> None:
        s = self.s
        self.step = "checking the settings"
        if s.midi:
            check_backend()       # a typo in MIDO_BACKEND fails here, before any ring exists
            self.midi_map = self.svc.load_midi_map(s)
        try:
            self.cfg = build_config(s)
        except SystemExit as e:
            raise ValueError(str(e)) from None
        names = self.cfg.slot_names or list(range(1, self.cfg.slots + 1))
        self.resume = interrupted_jobs(names) if s.resume else []

    def create_daemon(self, backend=None) -> None:
        s, loop = self.s, self.loop
        self.daemon = Daemon(self.cfg, backend=backend)
        self.server = OscServer(self.daemon, s.osc_host, s.osc_port, allow=s.allow)
        self.svc.daemon, self.svc.osc = self.daemon, self.server
        self.stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop.set)
        loop.add_signal_handler(signal.SIGHUP, lambda: None)   # not fatal while warming up
        self.t0 = time.perf_counter()
        # closed after the daemon (the engine feeds them until it stops): MIDI out
        self.after_daemon = contextlib.ExitStack()
        self.stack.callback(self.after_daemon.close)

    async def remote_engine(self):
        """``--engine``: the cluster's backend, connected off the loop (Ray's handles block) — one
        line and exit when it is not there, or with ``--engine-fallback`` one warning and the local
        backend; ``None``: the local one."""
        s = self.s
        if not s.engine:
            return None
        from bridge.cluster.remote import RemoteBackend
        from engine.backend import BackendError

        self.step = f"connecting to the engine at {s.engine}"
        self.notifier.status(self.step)
        try:
            backend = RemoteBackend(s.engine)
            await self.loop.run_in_executor(None, backend.warmup)
        except BackendError as e:
            if not s.engine_fallback:
                raise ValueError(f"{e} (--engine-fallback plays on the local {s.backend} backend instead)") from None
            log.warning("%s; playing on the local %s backend (--engine-fallback)", e, s.backend)
            return None
        return backend

    async def warm_up(self) -> None:
        self.step = f"claiming the slots and warming up the {self.daemon.backend.name if self.daemon.backend else self.s.backend} backend"
        self.notifier.status(self.step)
        await self.loop.run_in_executor(None, self.daemon.open)
        self.stack.push_async_callback(self.loop.run_in_executor, None, _quietly, "the daemon", self.daemon.close)

    async def start_osc(self) -> None:
        s = self.s
        self.step = f"listening for OSC on {s.osc_host}:{s.osc_port}"
        self.host, self.port = await self.server.start()
        self.stack.callback(_quietly, "the OSC server", self.server.close)

    def apply_params(self) -> None:
        self.step = "applying the configured parameters"
        for c in self.svc.param_commands(self.s):
            self.daemon.submit(c)
        _warn_exposure("OSC", self.host, self.port, self.server.allow_list, "--allow")

    def start_metrics(self) -> None:
        s, svc = self.s, self.svc
        if not s.metrics:
            return
        self.step = "starting metrics"
        svc.metrics = Metrics(self.daemon, self.server).attach()
        self.stack.callback(_quietly, "metrics", svc.metrics.close)
        try:
            mport = svc.metrics.start_http(s.metrics_host, s.metrics_port, allow=s.metrics_allow)
            print(f"wavebridge: metrics on {http_url(s.metrics_host, mport, '/metrics')}", flush=True)
            _warn_exposure("/metrics", s.metrics_host, mport, svc.metrics.httpd.allow, "--metrics-allow")
        except OSError as e:  # metrics are optional: a taken port must not cost the audio
            log.warning("metrics: cannot listen on %s:%s (%s); running without /metrics",
                        s.metrics_host, s.metrics_port, e)

    async def start_http(self) -> None:
        s, svc = self.s, self.svc
        self.step = "starting the HTTP API"
        # imported in its step: a broken codec library under PyAV fails this step in one line
        from bridge.web.app import serve as serve_http

        try:
            svc.http = await serve_http(self.daemon, s, svc.metrics)
            if svc.http is not None:
                self.stack.push_async_callback(_quietly_async, "the HTTP API", svc.http.close)
                print(f"wavebridge: HTTP API and web page on {http_url(svc.http.host, svc.http.port)}",
                      flush=True)
                _warn_http_exposure(svc.http.host, svc.http.port)
                self.step = "warming up the web path"
                ms = await svc.http.warm_up()
                log.info("web path warm in %.0f ms", ms)
        except (OSError, ValueError) as e:   # the web side is optional: a taken port must not cost the audio
            log.warning("http: not serving on %s (%s)", s.http, e)
            print(f"wavebridge: HTTP API not started: {e}", file=sys.stderr, flush=True)

    def open_midi_in(self) -> None:
        s, svc = self.s, self.svc
        if not s.midi:
            return
        self.step = "opening MIDI"
        svc.midi = MidiInput(self.daemon, self.midi_map, port_name=s.midi_port)
        self.stack.callback(_quietly, "MIDI", svc.midi.close)
        if svc.metrics is not None:
            svc.metrics.midi = svc.midi
        svc.midi.open(self.loop)
        print(f"wavebridge: {svc.midi.summary()}"
              + (f" via {svc.midi.api}" if svc.midi.connected else f" — {svc.midi.last_error}"), flush=True)

    def open_midi_out(self) -> None:
        if not getattr(self.args, "midi_out", False):
            return
        daemon = self.daemon
        self.step = "opening MIDI out"
        try:
            daemon.midi_out = MidiOutput(daemon).open()
            self.after_daemon.callback(_quietly, "MIDI out", daemon.midi_out.close)
            print(f"wavebridge: MIDI out on '{daemon.midi_out.port_name}' via {daemon.midi_out.api}",
                  flush=True)
        except RuntimeError as e:     # optional: the audio carries on without it
            log.warning("MIDI out: %s", e)

    def resume_jobs(self) -> None:
        """Carry on what a dead daemon's rings were playing (``--resume``)."""
        daemon = self.daemon
        for job in self.resume:
            try:
                args_ = [job["slot"], job["prompt"], float(job["seconds"])]
                if job["seed"] is not None:
                    args_.append(job["seed"])
                c = parse_osc("/wb/play", args_, len(daemon.slots), daemon.params())
                c.source = "resume"
                daemon.submit(c)
                print(f"wavebridge: resuming slot {job['slot']}: {job['prompt']}", flush=True)
            except Exception as e:  # noqa: BLE001
                log.warning("could not resume slot %s: %s", job["slot"], getattr(e, "message", e))

    def announce_ready(self) -> None:
        """SIGHUP reloads from here on; the listening line and ``READY=1``."""
        daemon, svc = self.daemon, self.svc
        renderer = getattr(daemon.backend, "describe", None)
        log.info("backend %s%s warm in %.0f ms", daemon.backend.name, f" ({renderer()})" if renderer else "",
                 daemon.warmup_s * 1000)
        self.loop.add_signal_handler(signal.SIGHUP, svc.reload)
        print(f"wavebridge: listening for OSC on {self.host}:{self.port} ({len(daemon.slots)} slots, backend "
              f"{daemon.backend.name}, ready in {(time.perf_counter() - self.t0) * 1000:.0f} ms)", flush=True)
        self.notifier.ready(svc.summary())

    async def start_watchdog(self) -> None:
        probe = None
        if self.notifier.enabled:
            try:
                probe = await ServingProbe(self.server).start()   # WATCHDOG=1 only when OSC really serves
                self.stack.callback(_quietly, "the watchdog probe", probe.close)
            except OSError as e:      # then the watchdog pings on the engine's liveness alone
                log.warning("watchdog: no OSC self-probe (%s)", e)
                probe = None
        self.svc.watchdog = Watchdog(self.notifier, self.daemon.engine, self.svc.summary, probe=probe).start()
        self.stack.callback(_quietly, "the watchdog", self.svc.watchdog.stop)


async def serve_async(args, ready_cb=None) -> int:
    """Start every component in order over one exit stack, serve until SIGTERM/SIGINT, unwind. ``[control]``

    Each component registers its own close as soon as it exists (the notifier first, so it
    closes last); a failure at any step prints one line naming the step and unwinds what
    was started, in reverse order. Optional listeners (metrics, HTTP, MIDI out) that cannot
    start log why and the audio carries on without them.
    """
    notifier = Notifier()
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        os.environ.pop(k, None)       # like sd_notify(unset_environment=1): children must not inherit them
    loop = asyncio.get_running_loop()
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(_quietly, "the systemd notifier", notifier.close)
        up = _Startup(args, notifier, stack, loop)
        error = up.resolve_settings()
        if error is not None:
            return up.fail(error)
        try:
            await up.start_components()
        except Exception as e:  # noqa: BLE001 — one line, then the stack unwinds what exists
            return up.fail(f"could not start ({up.step}): {e}")
        up.resume_jobs()
        up.announce_ready()
        await up.start_watchdog()
        if ready_cb is not None:
            ready_cb(up.daemon, up.server)
        await up.stop.wait()
        print("wavebridge: shutting down", flush=True)
        notifier.stopping()
    return 0


def run_serve(args) -> int:
    """The ``serve`` command: the control loop until a signal ends it. ``[control]``"""
    return asyncio.run(serve_async(args))
