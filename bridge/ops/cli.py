"""``wavebridge`` command line: serve, play, status, demo, bench, install-service.

``serve`` runs the daemon: the asyncio control loop (OSC, MIDI, metrics, systemd notify) in the
main thread, the engine thread, the heartbeat. Settings come from flags over a TOML config over
built-in defaults (``bridge.ops.config``). Signals: SIGTERM/SIGINT fade every slot out, unlink the
rings and exit 0; SIGHUP re-reads the config and the MIDI map and applies live parameters
without touching the audio. Under systemd (``NOTIFY_SOCKET``): ``READY=1`` once the engine is
warm and OSC listens, ``WATCHDOG=1`` while the engine loop turns, ``STATUS=``, ``RELOADING=1``
and ``STOPPING=1``.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import statistics
import sys
import time

log = logging.getLogger("wavebridge")


class _QuietPythonOsc(logging.Filter):
    """Drop python-osc's own root-logger warnings ("Could not identify content type …").

    The OSC adapter already counts and answers every bad packet; a log line per hostile datagram
    would let any sender flood the journal (or block the daemon on a full stderr pipe).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno <= logging.WARNING and f"{os.sep}pythonosc{os.sep}" in record.pathname)


def _metrics_port(v: str) -> int:
    if v.lower() in ("off", "none", "no", "-1"):
        return -1
    try:
        n = int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{v!r} is not a port number or 'off'") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError("port must be 0..65535")
    return n


def _serve_parser(sub):
    p = sub.add_parser("serve", help="run the daemon",
                       description="Run the daemon. Flags override the config file (--config, else "
                                   "~/.config/wavebridge/config.toml, else /etc/wavebridge/config.toml), "
                                   "which overrides the defaults shown.")
    p.add_argument("--config", default=None, metavar="FILE", help="TOML config file (see examples/config.toml)")
    p.add_argument("--osc-host", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--osc-port", type=int, default=None, help="UDP port (default 9137); 0 takes a free one and logs it")
    p.add_argument("--backend", default=None, help="synth (default) or musicgen")
    p.add_argument("--model", default=None, help="local model directory (musicgen)")
    p.add_argument("--device", default=None, help="backend device override (cpu, cuda)")
    p.add_argument("--dtype", default=None, help="backend dtype override (float32, float16, bfloat16)")
    p.add_argument("--soundfont", default=None, metavar="FILE",
                   help="SF2/SF3 SoundFont for the synth (default: Debian's FluidR3_GM)")
    p.add_argument("--slots", type=int, default=None, help="number of slots (rings), 1..64 (default 8)")
    p.add_argument("--target-s", type=float, default=None, help="seconds of audio kept ahead of the reader (1.0)")
    p.add_argument("--xfade-ms", type=float, default=None, help="prompt-change crossfade (50)")
    p.add_argument("--first-chunk", type=int, default=None, help="frames of a job's first chunk (2048)")
    p.add_argument("--max-chunk", type=int, default=None, help="largest chunk in frames (8192)")
    p.add_argument("--no-splice", dest="splice", action="store_false", default=None,
                   help="naive mode: a new prompt waits behind the buffered audio (for benchmarks)")
    p.add_argument("--price-per-hour", type=float, default=None, help="device price for cost metering (1.0)")
    p.add_argument("--allow", action="append", default=None, metavar="CIDR",
                   help="accept OSC from this network (repeatable); default loopback only, even when "
                        "--osc-host binds every interface")
    p.add_argument("--midi", action=argparse.BooleanOptionalAction, default=None,
                   help="open a virtual MIDI input named 'wavebridge' (MIDO_BACKEND picks ALSA or JACK)")
    p.add_argument("--midi-port", default=None, metavar="NAME",
                   help="connect to this existing MIDI output instead (exact name, its port part, or a "
                        "unique substring; waits for it to appear)")
    p.add_argument("--midi-map", default=None, metavar="FILE", help="TOML MIDI map (see examples/midi-map.toml)")
    p.add_argument("--midi-out", action="store_true", default=False,
                   help="open a virtual MIDI output 'wavebridge out' carrying the synth's notes as they "
                        "reach the read head (channel = slot, 1..16)")
    p.add_argument("--metrics-port", type=_metrics_port, default=None, metavar="PORT",
                   help="Prometheus /metrics on this TCP port (default 9464; 0 = a free port; 'off' = none)")
    p.add_argument("--metrics-host", default=None, help="address for /metrics (default 127.0.0.1)")
    p.add_argument("--metrics-allow", action="append", default=None, metavar="CIDR",
                   help="accept /metrics connections from this network (repeatable); default loopback only")
    p.add_argument("--resume", action=argparse.BooleanOptionalAction, default=None,
                   help="after a crash, carry on what the dead daemon's rings were playing (default on)")
    p.add_argument("--http", default=None, metavar="HOST:PORT",
                   help="HTTP/WebSocket API and web page (default 127.0.0.1:8137; port 0 = a free one; 'off')")
    p.add_argument("--state-dir", default=None, metavar="DIR",
                   help="API keys, usage and the track queue (default ~/.local/state/wavebridge)")
    p.add_argument("--storage", default=None, metavar="DIR|s3://BUCKET/PREFIX",
                   help="where finished tracks go (default <state-dir>/tracks)")
    p.add_argument("--log-level", default=None, help="DEBUG, INFO (default), WARNING, ERROR")
    return p


_CLI_FIELDS = ("config", "osc_host", "osc_port", "backend", "model", "device", "dtype", "soundfont", "slots", "target_s", "xfade_ms",
               "first_chunk", "max_chunk", "splice", "price_per_hour", "allow", "midi", "midi_port", "midi_map",
               "metrics_host", "metrics_allow", "resume", "log_level", "http", "state_dir", "storage")


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
    from bridge.core.commands import COMMON_PARAMS
    from bridge.core.daemon import Config

    if not isinstance(s, _settings_type()):
        s = settings_from_args(s)
    from bridge.core.daemon import validate_config

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


def _settings_type():
    from bridge.ops.config import Settings

    return Settings


def settings_from_args(args):
    from bridge.ops.config import resolve

    return resolve(cli_values(args))


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
        from bridge.core.commands import parse_osc

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
        from bridge.control.midi import MidiMap

        return MidiMap.load(s.midi_map) if s.midi_map else MidiMap.default()

    def reload(self) -> None:
        """SIGHUP: config, MIDI map and live parameters; audio is not touched. ``[control]``"""
        from bridge.ops.config import reload as reload_settings

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
    from bridge.control.netguard import exposure_warnings

    for line in exposure_warnings(what, host, port, allow, flag):
        print(f"wavebridge: {line}", flush=True)
        log.warning("%s", line.removeprefix("WARNING: "))


async def serve_async(args, ready_cb=None) -> int:
    """Start every component in order over one exit stack, serve until SIGTERM/SIGINT, unwind. ``[control]``

    Each component registers its own close as soon as it exists (the notifier first, so it
    closes last); a failure at any step prints one line naming the step and unwinds what
    was started, in reverse order. Optional listeners (metrics, HTTP, MIDI out) that cannot
    start log why and the audio carries on without them.
    """
    import contextlib

    from bridge.ops.config import ConfigError, resolve
    from bridge.core.daemon import Daemon
    from bridge.control.netguard import AllowList
    from bridge.control.osc import OscServer
    from bridge.ops.systemd import Notifier, Watchdog, interrupted_jobs

    notifier = Notifier()
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        os.environ.pop(k, None)       # like sd_notify(unset_environment=1): children must not inherit them
    loop = asyncio.get_running_loop()

    def fail(msg: str) -> int:
        log.error("%s", msg)
        print(f"wavebridge: {msg}", file=sys.stderr, flush=True)
        notifier.stopping(msg[:200])
        return 2

    async with contextlib.AsyncExitStack() as stack:
        stack.callback(_quietly, "the systemd notifier", notifier.close)
        cli = cli_values(args)
        try:
            s = resolve(cli)
        except ConfigError as e:
            return fail(e.message)
        logging.getLogger().setLevel(getattr(logging, str(s.log_level).upper(), logging.INFO))
        if s.config_path:
            log.info("config: %s", s.config_path)
        for what, nets in (("--allow", s.allow), ("--metrics-allow", s.metrics_allow)):
            try:
                AllowList(nets)
            except ValueError as e:
                return fail(f"{what}: {e}")
        svc = Service(s, cli, notifier)
        midi_map = None
        step = "checking the settings"
        try:
            if s.midi:
                from bridge.control.midi import check_backend

                check_backend()       # a typo in MIDO_BACKEND fails here, before any ring exists
                midi_map = svc.load_midi_map(s)
            try:
                cfg = build_config(s)
            except SystemExit as e:
                raise ValueError(str(e)) from None
            names = cfg.slot_names or list(range(1, cfg.slots + 1))
            resume = interrupted_jobs(names) if s.resume else []
            daemon = Daemon(cfg)
            server = OscServer(daemon, s.osc_host, s.osc_port, allow=s.allow)
            svc.daemon, svc.osc = daemon, server
            stop = asyncio.Event()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
            loop.add_signal_handler(signal.SIGHUP, lambda: None)   # not fatal while warming up
            t0 = time.perf_counter()
            # closed after the daemon (the engine feeds them until it stops): MIDI out
            after_daemon = contextlib.ExitStack()
            stack.callback(after_daemon.close)
            step = f"warming up the {s.backend} backend"
            notifier.status(step)
            await loop.run_in_executor(None, daemon.open)
            stack.push_async_callback(loop.run_in_executor, None, _quietly, "the daemon", daemon.close)
            step = f"listening for OSC on {s.osc_host}:{s.osc_port}"
            host, port = await server.start()
            stack.callback(_quietly, "the OSC server", server.close)
            step = "applying the configured parameters"
            for c in svc.param_commands(s):
                daemon.submit(c)
            _warn_exposure("OSC", host, port, server.allow_list, "--allow")
            if s.metrics:
                from bridge.ops.metrics import Metrics

                step = "starting metrics"
                svc.metrics = Metrics(daemon, server).attach()
                stack.callback(_quietly, "metrics", svc.metrics.close)
                try:
                    mport = svc.metrics.start_http(s.metrics_host, s.metrics_port, allow=s.metrics_allow)
                    print(f"wavebridge: metrics on http://{s.metrics_host}:{mport}/metrics", flush=True)
                    _warn_exposure("/metrics", s.metrics_host, mport, svc.metrics.httpd.allow, "--metrics-allow")
                except OSError as e:  # metrics are optional: a taken port must not cost the audio
                    log.warning("metrics: cannot listen on %s:%s (%s); running without /metrics",
                                s.metrics_host, s.metrics_port, e)
            step = "starting the HTTP API"
            try:
                from bridge.web.app import serve as serve_http

                svc.http = await serve_http(daemon, s, svc.metrics)
                if svc.http is not None:
                    stack.push_async_callback(_quietly_async, "the HTTP API", svc.http.close)
                    print(f"wavebridge: HTTP API and web page on http://{svc.http.host}:{svc.http.port}/",
                          flush=True)
            except (OSError, ValueError) as e:   # the web side is optional: a taken port must not cost the audio
                log.warning("http: not serving on %s (%s)", s.http, e)
                print(f"wavebridge: HTTP API not started: {e}", file=sys.stderr, flush=True)
            if s.midi:
                from bridge.control.midi import MidiInput

                step = "opening MIDI"
                svc.midi = MidiInput(daemon, midi_map, port_name=s.midi_port)
                stack.callback(_quietly, "MIDI", svc.midi.close)
                if svc.metrics is not None:
                    svc.metrics.midi = svc.midi
                svc.midi.open(loop)
                print(f"wavebridge: {svc.midi.summary()}"
                      + (f" via {svc.midi.api}" if svc.midi.connected else f" — {svc.midi.last_error}"), flush=True)
            if getattr(args, "midi_out", False):
                from bridge.control.midiout import MidiOutput

                step = "opening MIDI out"
                try:
                    daemon.midi_out = MidiOutput(daemon).open()
                    after_daemon.callback(_quietly, "MIDI out", daemon.midi_out.close)
                    print(f"wavebridge: MIDI out on '{daemon.midi_out.port_name}' via {daemon.midi_out.api}",
                          flush=True)
                except RuntimeError as e:     # optional: the audio carries on without it
                    log.warning("MIDI out: %s", e)
        except OSError as e:
            return fail(f"could not start ({step}): {e}")
        except Exception as e:  # noqa: BLE001 — one line, then the stack unwinds what exists
            return fail(f"could not start ({step}): {e}")
        for job in resume:
            from bridge.core.commands import parse_osc

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
        renderer = getattr(daemon.backend, "describe", None)
        log.info("backend %s%s warm in %.0f ms", daemon.backend.name, f" ({renderer()})" if renderer else "",
                 daemon.warmup_s * 1000)
        loop.add_signal_handler(signal.SIGHUP, svc.reload)
        print(f"wavebridge: listening for OSC on {host}:{port} ({cfg.slots} slots, backend {daemon.backend.name}, "
              f"ready in {(time.perf_counter() - t0) * 1000:.0f} ms)", flush=True)
        notifier.ready(svc.summary())
        probe = None
        if notifier.enabled:
            from bridge.control.osc import ServingProbe

            try:
                probe = await ServingProbe(server).start()   # WATCHDOG=1 only when OSC really serves
                stack.callback(_quietly, "the watchdog probe", probe.close)
            except OSError as e:      # then the watchdog pings on the engine's liveness alone
                log.warning("watchdog: no OSC self-probe (%s)", e)
                probe = None
        svc.watchdog = Watchdog(notifier, daemon.engine, svc.summary, probe=probe).start()
        stack.callback(_quietly, "the watchdog", svc.watchdog.stop)
        if ready_cb is not None:
            ready_cb(daemon, server)
        await stop.wait()
        print("wavebridge: shutting down", flush=True)
        notifier.stopping()
    return 0


def cmd_serve(args) -> int:
    import faulthandler

    faulthandler.enable()   # a fatal signal (SIGBUS from a ring truncated under us, …) leaves a traceback
    return asyncio.run(serve_async(args))


def cmd_play(args) -> int:
    from plugin_stub.player import PacedRecorder, attach_when_ready, play_soundcard, write_wav

    reader = attach_when_ready(args.slot, timeout=args.wait, max_block=max(args.block, 8192))
    try:
        if args.wav:
            seconds = args.seconds or 10.0
            rec = PacedRecorder(reader, seconds, args.block)
            rec.run()
            write_wav(args.wav, rec.captured, reader.sample_rate, "float" if args.float else "pcm16")
            print(f"wrote {args.wav}: {rec.captured.shape[0] / reader.sample_rate:.2f} s, {reader.channels} ch, "
                  f"{reader.sample_rate} Hz; short blocks while playing: {rec.short_blocks_while_playing()}; "
                  f"ring underrun_frames: {reader.underrun_frames}")
        else:
            st = play_soundcard(reader, args.seconds, args.block)
            print(f"played {st['frames'] / reader.sample_rate:.2f} s in {st['callbacks']} callbacks; "
                  f"ring underrun_frames: {reader.underrun_frames}")
    finally:
        reader.detach()
    return 0


def cmd_status(args) -> int:
    from bridge.control.osc import OscClient

    c = OscClient(args.host, args.port, timeout=1.0)
    rows, engine = c.status(timeout=2.0)        # pages through /wb/status (padded requests)
    if not rows:
        print(f"no answer from {args.host}:{args.port} (is `wavebridge serve` running?)", file=sys.stderr)
        return 1
    if engine:
        print(f"backend {engine[0]}" + (f" ({engine[3]})" if len(engine) > 3 and engine[3] != engine[0] else "")
              + f", stitching on {engine[1]}, {engine[2]} slots")
    print(f"{'slot':>4}  {'state':<8} {'buffered':>8} {'underruns':>10}  prompt")
    for slot, state, prompt, buf, ur in rows:
        print(f"{slot:>4}  {state:<8} {buf:>7.2f}s {ur:>10}  {prompt}")
    return 0


def _exec_start(extra: list[str]) -> str:
    """``ExecStart=`` for this installation: the venv's console script, else ``python -m bridge.ops.cli``."""
    import shlex

    exe = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "wavebridge")
    cmd = [exe] if os.access(exe, os.X_OK) else [os.path.abspath(sys.executable), "-m", "bridge.ops.cli"]
    return " ".join(shlex.quote(a) for a in cmd + ["serve", *extra])


def cmd_install_service(args) -> int:
    """Write the unit (and reload/enable it when systemd runs). ``--dry-run`` changes nothing."""
    import grp
    import pwd
    import shutil
    import subprocess

    from bridge.ops.systemd import UNIT_NAME, render_unit

    extra = [a for a in (args.serve_args or []) if a != "--"]
    run_as, groups = None, None
    if not args.user:
        run_as = args.run_as or os.environ.get("SUDO_USER") or pwd.getpwuid(os.getuid()).pw_name
        try:
            pwd.getpwnam(run_as)
        except KeyError:
            print(f"install-service: no user {run_as!r}", file=sys.stderr)
            return 2
        if run_as == "root":
            print("install-service: note: the rings are mode 0600, so the daemon must run as the DAW's user; "
                  "pass --run-as USER (or use --user)", file=sys.stderr)
        groups = []
        for g in ("audio",):
            try:
                grp.getgrnam(g)
                groups.append(g)
            except KeyError:
                pass
    unit = render_unit(_exec_start(extra), run_as=run_as, groups=groups, watchdog_s=args.watchdog_s)
    if args.unit_dir:
        unit_dir = args.unit_dir
    elif args.user:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        unit_dir = os.path.join(base, "systemd", "user")
    else:
        unit_dir = "/etc/systemd/system"
    path = os.path.join(unit_dir, UNIT_NAME)
    ctl = ["systemctl"] + (["--user"] if args.user else [])
    steps = [ctl + ["daemon-reload"]] + ([ctl + ["enable", "--now", "wavebridge"]] if args.enable else [])
    if args.dry_run:
        print(f"# would write {path}:")
        print(unit, end="")
        for st in steps:
            print("# would run: " + " ".join(st))
        return 0
    os.makedirs(unit_dir, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(unit)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    print(f"wrote {path}")
    running = os.path.isdir("/run/systemd/system") and shutil.which("systemctl")
    if not running:
        print("systemd is not running here; later: " + "; ".join(" ".join(st) for st in steps or [ctl]))
        return 0
    for st in steps:
        r = subprocess.run(st, capture_output=True, text=True)
        print("$ " + " ".join(st) + (f"\n{r.stderr.strip()}" if r.returncode else ""))
        if r.returncode:
            return 1
    if not args.enable:
        print("start it with: " + " ".join(ctl + ["enable", "--now", "wavebridge"]))
    if args.user:
        print("to keep it running after you log out: loginctl enable-linger " + pwd.getpwuid(os.getuid()).pw_name)
    return 0


def cmd_keys(args) -> int:
    """``wavebridge keys add|list|revoke``: API keys in the state directory's SQLite database."""
    from bridge.ops.config import ConfigError, resolve
    from bridge.web.store import DEFAULT_TIERS, Store, StoreError, default_state_dir

    try:
        s = resolve({"config": args.config, "state_dir": args.state_dir})
    except ConfigError as e:
        print(f"wavebridge: {e.message}", file=sys.stderr)
        return 2
    store = Store(s.state_dir or default_state_dir())
    try:
        if args.action == "add":
            tiers = {**DEFAULT_TIERS, **(s.tiers or {})}
            if args.tier not in tiers:
                print(f"keys add: unknown tier {args.tier!r}; known: {', '.join(sorted(tiers))}", file=sys.stderr)
                return 2
            try:
                key = store.add_key(args.name, args.tier)
            except StoreError as e:
                print(f"keys add: {e}", file=sys.stderr)
                return 1
            print(key)
            print(f"# key {args.name!r} (tier {args.tier}); shown once, keep it safe", file=sys.stderr)
        elif args.action == "list":
            rows = store.list_keys()
            print(f"{'id':<12}  {'name':<20} {'tier':<8} {'state':<8} {'audio s today':>13}  created")
            for r in rows:
                created = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["created"]))
                print(f"{r['id']:<12}  {r['name']:<20} {r['tier']:<8} {'revoked' if r['revoked'] else 'active':<8} "
                      f"{r['audio_s_today']:>13.1f}  {created}")
        elif args.action == "revoke":
            if not store.revoke(args.name):
                print(f"keys revoke: no active key named {args.name!r}", file=sys.stderr)
                return 1
            print(f"revoked {args.name}")
    finally:
        store.close()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="wavebridge", description="Generated music, live, inside your DAW.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _serve_parser(sub)
    p = sub.add_parser("play", help="read a slot in real time into a WAV file or onto the sound card")
    p.add_argument("--slot", required=True)
    p.add_argument("--seconds", type=float, default=0.0)
    p.add_argument("--wav", default=None)
    p.add_argument("--float", action="store_true", help="32-bit float WAV instead of 16-bit PCM")
    p.add_argument("--block", type=int, default=128, help="host block size in frames")
    p.add_argument("--wait", type=float, default=10.0, help="seconds to wait for the ring to appear")
    p = sub.add_parser("status", help="show the slots of a running daemon")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9137)
    p = sub.add_parser("demo", help="start a daemon, play, change the prompt, record demo.wav")
    p.add_argument("--wav", default="demo.wav")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--prompt", default="deep house in A minor with piano, warm bass and drums, 122 bpm")
    p.add_argument("--prompt2", default="dreamy ambient pads and a slow bell melody in D major")
    p.add_argument("--soundfont", default=None, metavar="FILE", help="SF2/SF3 SoundFont for the synth")
    from bridge.ops.render import add_parser as _add_render
    _add_render(sub)
    p = sub.add_parser("bench", help="measure latency, real-time slots and costs")
    p.add_argument("--backend", default="synth")
    p.add_argument("--model", default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="shorter runs (for tests)")
    p.add_argument("--http", action="store_true", help="the HTTP/WebSocket figures instead (first audio, "
                                                       "prompt change at a client, concurrent streams, tracks)")
    p.add_argument("--soundfont", default=None, metavar="FILE", help="SF2/SF3 SoundFont for the synth")
    p.add_argument("--price-per-hour", type=float, default=None, help="device price for the cost figures")
    p = sub.add_parser("install-service", help="install the systemd unit (user or system)",
                       description="Write wavebridge.service for this installation. Settings belong in "
                                   "the config file (~/.config/wavebridge/config.toml or "
                                   "/etc/wavebridge/config.toml); extra serve flags may follow '--'.")
    p.add_argument("--user", action="store_true", help="a user unit in ~/.config/systemd/user (recommended)")
    p.add_argument("--run-as", default=None, metavar="USER",
                   help="system unit: the user to run as, the DAW's user (default $SUDO_USER)")
    p.add_argument("--dry-run", action="store_true", help="print the unit and the commands; change nothing")
    p.add_argument("--enable", action="store_true", help="also systemctl enable --now")
    p.add_argument("--unit-dir", default=None, help="write the unit into this directory instead")
    p.add_argument("--watchdog-s", type=int, default=20, help="WatchdogSec= (default 20)")
    p.add_argument("serve_args", nargs=argparse.REMAINDER, help="-- then extra `wavebridge serve` flags")
    p = sub.add_parser("keys", help="API keys of the HTTP API: add, list, revoke")
    p.add_argument("--state-dir", default=None, metavar="DIR", help="default ~/.local/state/wavebridge")
    p.add_argument("--config", default=None, metavar="FILE", help="config file (for [http] tiers/state_dir)")
    ks = p.add_subparsers(dest="action", required=True)
    k = ks.add_parser("add", help="create a key and print it (once)")
    k.add_argument("name")
    k.add_argument("--tier", default="free", help="free (default), pro or a tier from the config")
    ks.add_parser("list", help="list keys with today's usage")
    k = ks.add_parser("revoke", help="revoke a key by name or id")
    k.add_argument("name")
    args = ap.parse_args(argv)
    level = getattr(args, "log_level", "WARNING")
    logging.basicConfig(level=getattr(logging, str(level).upper(), logging.INFO),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    for h in logging.getLogger().handlers:
        h.addFilter(_QuietPythonOsc())
    if args.cmd == "serve":
        return cmd_serve(args)
    if args.cmd == "play":
        return cmd_play(args)
    if args.cmd == "status":
        return cmd_status(args)
    if args.cmd == "keys":
        return cmd_keys(args)
    if args.cmd == "install-service":
        return cmd_install_service(args)
    if args.cmd == "demo":
        from bridge.ops.demo import run_demo

        return run_demo(args)
    if args.cmd == "render":
        from bridge.ops.render import run_render

        return run_render(args)
    if args.cmd == "bench":
        from bridge.ops.bench.run import run_bench

        return run_bench(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
