"""``wavebridge`` command line: serve, play, status, demo, render, theme, bench, install-service, keys.

Every subcommand's flags live here; ``serve`` itself is ``bridge.ops.serve``.

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
import faulthandler
import grp
import logging
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import time

# Each command imports the rooms it drives inside its ``cmd_*`` function, not here: ``wavebridge
# --help`` and ``wavebridge status`` load only argparse and what they use (the daemon's imports
# alone take ~0.6 s). This module itself holds the parser and the commands that need no daemon.

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
    p.add_argument("--engine", default=None, metavar="http://HOST:PORT|auto",
                   help="the engine on a Ray Serve cluster (docs/SCALE.md); rings, crossfades, OSC, MIDI and "
                        "HTTP stay here. Default: the local --backend")
    p.add_argument("--engine-fallback", action=argparse.BooleanOptionalAction, default=None,
                   help="with --engine: the cluster unreachable at start → play on the local --backend instead "
                        "of exiting")
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
    p.add_argument("--queue", default=None, metavar="redis://HOST:PORT/DB",
                   help="a track queue shared by several gateways, in Redis (default: SQLite in <state-dir>)")
    p.add_argument("--allow-origin", dest="allowed_origins", action="append", default=None, metavar="ORIGIN",
                   help="let pages of this origin (scheme://host[:port]) call the HTTP API (repeatable); "
                        "default: only the server's own page")
    p.add_argument("--allow-host", dest="allowed_hosts", action="append", default=None, metavar="NAME",
                   help="answer HTTP requests for this Host name too (repeatable; NAME, NAME:PORT, .SUFFIX); "
                        "default: loopback names and the bound address")
    p.add_argument("--log-level", default=None, help="DEBUG, INFO (default), WARNING, ERROR")
    return p


def cmd_serve(args) -> int:
    faulthandler.enable()   # a fatal signal (SIGBUS from a ring truncated under us, …) leaves a traceback
    from bridge.ops.serve import run_serve   # lazy: the daemon's whole weight, for `serve` only

    return run_serve(args)


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
    exe = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "wavebridge")
    cmd = [exe] if os.access(exe, os.X_OK) else [os.path.abspath(sys.executable), "-m", "bridge.ops.cli"]
    return " ".join(shlex.quote(a) for a in cmd + ["serve", *extra])


def cmd_install_service(args) -> int:
    """Write the unit (and reload/enable it when systemd runs). ``--dry-run`` changes nothing."""
    from bridge.ops.systemd import UNIT_NAME, render_unit   # lazy, as every room (see the top)

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
                key = store.add_key(args.name, args.tier, args.scope or "")
            except StoreError as e:
                print(f"keys add: {e}", file=sys.stderr)
                return 1
            print(key)
            scope = f", scope {args.scope}" if args.scope else ""
            print(f"# key {args.name!r} (tier {args.tier}{scope}); shown once, keep it safe", file=sys.stderr)
        elif args.action == "list":
            rows = store.list_keys()
            print(f"{'id':<12}  {'name':<20} {'tier':<8} {'scope':<6} {'state':<8} {'audio s today':>13}  created")
            for r in rows:
                created = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["created"]))
                print(f"{r['id']:<12}  {r['name']:<20} {r['tier']:<8} {r['scope'] or '-':<6} "
                      f"{'revoked' if r['revoked'] else 'active':<8} {r['audio_s_today']:>13.1f}  {created}")
        elif args.action == "revoke":
            if not store.revoke(args.name):
                print(f"keys revoke: no active key named {args.name!r}", file=sys.stderr)
                return 1
            print(f"revoked {args.name}")
    finally:
        store.close()
    return 0


def cmd_demo(args) -> int:
    from bridge.ops.demo import run_demo   # lazy, as every room (see the top)

    return run_demo(args)


def cmd_render(args) -> int:
    from bridge.ops.render import run_render   # lazy, as every room (see the top)

    return run_render(args)


def cmd_bench(args) -> int:
    from bridge.ops.bench.run import run_bench   # lazy, as every room (see the top)

    return run_bench(args)


def cmd_theme(args) -> int:
    """``wavebridge theme --from-audio TAKE | --from-input S [--out theme.mid] [--send SLOT]``: the
    tune of a hummed or sung take (basic-pitch, ``bridge.ops.transcribe``). ``[control]`` (the CLI process)"""
    from bridge.ops.transcribe import main_theme_from_audio

    return main_theme_from_audio(args)


COMMANDS = {"serve": cmd_serve, "play": cmd_play, "status": cmd_status, "keys": cmd_keys,
            "install-service": cmd_install_service, "demo": cmd_demo, "render": cmd_render, "bench": cmd_bench,
            "theme": cmd_theme, "cluster": lambda args: _cluster(args)}


def _cluster(args) -> int:
    """``wavebridge cluster up|status|down`` (``bridge.cluster.local``; needs the ``cluster`` extra)."""
    from bridge.cluster.local import run

    return run(args)


def _cluster_parser(sub) -> None:
    from bridge.cluster.local import add_parser   # argparse only: Ray is imported when it runs

    add_parser(sub)


def _play_parser(sub) -> None:
    p = sub.add_parser("play", help="read a slot in real time into a WAV file or onto the sound card")
    p.add_argument("--slot", required=True)
    p.add_argument("--seconds", type=float, default=0.0)
    p.add_argument("--wav", default=None)
    p.add_argument("--float", action="store_true", help="32-bit float WAV instead of 16-bit PCM")
    p.add_argument("--block", type=int, default=128, help="host block size in frames")
    p.add_argument("--wait", type=float, default=10.0, help="seconds to wait for the ring to appear")


def _status_parser(sub) -> None:
    p = sub.add_parser("status", help="show the slots of a running daemon")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9137)


def _demo_parser(sub) -> None:
    p = sub.add_parser("demo", help="start a daemon, play, change the prompt, record demo.wav")
    p.add_argument("--wav", default="demo.wav")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--prompt", default="deep house in A minor with piano, warm bass and drums, 122 bpm")
    p.add_argument("--prompt2", default="dreamy ambient pads and a slow bell melody in D major")
    p.add_argument("--soundfont", default=None, metavar="FILE", help="SF2/SF3 SoundFont for the synth")


def _render_parser(sub) -> None:
    """The ``render`` subcommand's flags (``bridge.ops.render`` runs it). ``[control]``"""
    p = sub.add_parser("render", help="render a prompt to a WAV/FLAC file (and its score to MIDI), offline")
    p.add_argument("prompt")
    p.add_argument("--seconds", type=float, default=30.0, help="length of the take (default 30)")
    p.add_argument("--out", default="take.wav", help="output file: .wav (float) or .flac (24-bit)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bpm", type=float, default=None, help="tempo override (as /wb/tempo)")
    p.add_argument("--midi", default=None, metavar="FILE", help="also write the score as a Standard MIDI File")
    p.add_argument("--soundfont", default=None, metavar="FILE", help="SF2/SF3 SoundFont (default: FluidR3_GM)")
    p.add_argument("--renderer", default=None, choices=("auto", "fluidsynth", "oscillators"),
                   help="default: FluidSynth when libfluidsynth and a SoundFont are there")
    p.add_argument("--sample-rate", type=int, default=48000)
    p.add_argument("--explain", action="store_true",
                   help="also print what the composer understood: style, tempo, meter, key, instruments")
    p.add_argument("--theme", default=None, metavar="TUNE.mid",
                   help="a tune (a MIDI file's top line, ≤ 4 bars) the lead takes as its motif")


def _theme_parser(sub) -> None:
    p = sub.add_parser("theme", help="a hummed or sung take → its tune: notes printed, a MIDI file, a slot's melody")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-audio", metavar="TAKE", help="the take: WAV, FLAC, OGG, MP3 or AIFF, any rate, mono or stereo")
    src.add_argument("--from-input", type=float, metavar="SECONDS",
                     help="record SECONDS from the sound card's input (PortAudio) and transcribe that")
    p.add_argument("--device", type=int, default=None, help="PortAudio input device index (with --from-input)")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the notes as a Standard MIDI File")
    p.add_argument("--send", type=int, default=None, metavar="SLOT",
                   help="give the tune to a running daemon's slot (/wb/theme): its lead sings it from the next bar")
    p.add_argument("--bpm", type=float, default=120.0, help="the tempo the take was sung at (with --send; default 120)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9137)


def _bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure latency, real-time slots and costs")
    p.add_argument("--backend", default="synth")
    p.add_argument("--model", default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="shorter runs (for tests)")
    p.add_argument("--http", action="store_true", help="the HTTP/WebSocket figures instead (first audio, "
                                                       "prompt change at a client, concurrent streams, tracks)")
    p.add_argument("--web-load", action="store_true", help="issue #20's web loads at full size beside a DAW "
                   "slot read in real time: underruns, RSS and fds per load (also scripts/web-load-check)")
    p.add_argument("--cluster", action="store_true", help="the engine on Ray Serve here: Serve's cost per chunk, "
                   "real-time streams per replica, and the capacity model from them (docs/SCALE.md)")
    p.add_argument("--soundfont", default=None, metavar="FILE", help="SF2/SF3 SoundFont for the synth")
    p.add_argument("--price-per-hour", type=float, default=None, help="device price for the cost figures")


def _install_service_parser(sub) -> None:
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


def _keys_parser(sub) -> None:
    p = sub.add_parser("keys", help="API keys of the HTTP API: add, list, revoke")
    p.add_argument("--state-dir", default=None, metavar="DIR", help="default ~/.local/state/wavebridge")
    p.add_argument("--config", default=None, metavar="FILE", help="config file (for [http] tiers/state_dir)")
    ks = p.add_subparsers(dest="action", required=True)
    k = ks.add_parser("add", help="create a key and print it (once)")
    k.add_argument("name")
    k.add_argument("--tier", default="free", help="free (default), pro or a tier from the config")
    k.add_argument("--scope", default=None, choices=["admin"],
                   help="admin: the key may also drive the DAW slots over HTTP and sees every stream's status")
    ks.add_parser("list", help="list keys with today's usage")
    k = ks.add_parser("revoke", help="revoke a key by name or id")
    k.add_argument("name")


def build_parser() -> argparse.ArgumentParser:
    """``wavebridge``'s parser, every subcommand in the order ``--help`` lists them."""
    ap = argparse.ArgumentParser(prog="wavebridge", description="Generated music, live, inside your DAW.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for add in (_serve_parser, _play_parser, _status_parser, _demo_parser, _render_parser, _theme_parser, _bench_parser,
                _install_service_parser, _keys_parser, _cluster_parser):
        add(sub)
    return ap


def _setup_logging(args) -> None:
    level = getattr(args, "log_level", "WARNING")
    logging.basicConfig(level=getattr(logging, str(level).upper(), logging.INFO),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    for h in logging.getLogger().handlers:
        h.addFilter(_QuietPythonOsc())


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args)
    cmd = COMMANDS.get(args.cmd)
    return cmd(args) if cmd is not None else 2


if __name__ == "__main__":
    sys.exit(main())
