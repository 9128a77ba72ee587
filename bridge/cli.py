"""``wavebridge`` command line: serve, play, status, demo, bench.

``serve`` runs the daemon: the asyncio control loop (OSC) in the main thread, the engine
thread, the heartbeat. SIGTERM/SIGINT fade every slot out, unlink the rings and exit 0.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time

log = logging.getLogger("wavebridge")


def _serve_parser(sub):
    p = sub.add_parser("serve", help="run the daemon")
    p.add_argument("--osc-host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--osc-port", type=int, default=9137, help="UDP port; 0 takes a free one and logs it")
    p.add_argument("--backend", default="synth", help="synth (default) or musicgen")
    p.add_argument("--model", default=None, help="local model directory (musicgen)")
    p.add_argument("--device", default=None, help="backend device override (cpu, cuda)")
    p.add_argument("--slots", type=int, default=8, help="number of slots (rings), 1..64")
    p.add_argument("--target-s", type=float, default=1.0, help="seconds of audio kept ahead of the reader")
    p.add_argument("--xfade-ms", type=float, default=50.0, help="prompt-change crossfade")
    p.add_argument("--allow", action="append", default=None, metavar="CIDR",
                   help="accept OSC from this network (repeatable); default loopback only")
    p.add_argument("--log-level", default="INFO")
    return p


def build_config(args):
    from .daemon import Config

    if not 1 <= args.slots <= 64:
        raise SystemExit("--slots must be 1..64")
    kw = {}
    if args.model:
        kw["model"] = args.model
    if args.device:
        kw["device"] = args.device
    return Config(slots=args.slots, backend=args.backend, backend_kwargs=kw, target_s=args.target_s,
                  xfade_ms=args.xfade_ms)


async def serve_async(args, ready_cb=None) -> int:
    from .daemon import Daemon
    from .osc import OscServer

    cfg = build_config(args)
    server_box = {}
    daemon = Daemon(cfg, emit=lambda ev: server_box["s"].post_event(ev))
    server = OscServer(daemon, args.osc_host, args.osc_port, allow=args.allow)
    server_box["s"] = server
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    t0 = time.perf_counter()
    try:
        await loop.run_in_executor(None, daemon.open)
    except Exception as e:  # noqa: BLE001
        log.error("could not start: %s", e)
        print(f"wavebridge: could not start: {e}", file=sys.stderr, flush=True)
        return 2
    try:
        host, port = await server.start()
    except OSError as e:
        print(f"wavebridge: cannot listen on {args.osc_host}:{args.osc_port}: {e}", file=sys.stderr, flush=True)
        daemon.close()
        return 2
    log.info("backend %s warm in %.0f ms", daemon.backend.name, daemon.warmup_s * 1000)
    print(f"wavebridge: listening for OSC on {host}:{port} ({cfg.slots} slots, backend {daemon.backend.name}, "
          f"ready in {(time.perf_counter() - t0) * 1000:.0f} ms)", flush=True)
    if ready_cb is not None:
        ready_cb(daemon, server)
    await stop.wait()
    print("wavebridge: shutting down", flush=True)
    server.close()
    await loop.run_in_executor(None, daemon.close)
    return 0


def cmd_serve(args) -> int:
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
            play_soundcard(reader, args.seconds, args.block)
    finally:
        reader.detach()
    return 0


def cmd_status(args) -> int:
    from .osc import OscClient

    c = OscClient(args.host, args.port, timeout=1.0)
    c.send("/wb/status")
    rows = []
    while True:
        r = c.recv(0.5 if rows else 2.0)
        if r is None:
            break
        if r[0] == "/wb/slot":
            rows.append(r[1])
    if not rows:
        print(f"no answer from {args.host}:{args.port} (is `wavebridge serve` running?)", file=sys.stderr)
        return 1
    print(f"{'slot':>4}  {'state':<8} {'buffered':>8} {'underruns':>10}  prompt")
    for slot, state, prompt, buf, ur in rows:
        print(f"{slot:>4}  {state:<8} {buf:>7.2f}s {ur:>10}  {prompt}")
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
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--prompt", default="deep house in A minor with piano, warm bass and drums, 122 bpm")
    p.add_argument("--prompt2", default="dreamy ambient pads and a slow bell melody in D major")
    p = sub.add_parser("bench", help="measure latency, real-time slots and costs")
    p.add_argument("--backend", default="synth")
    p.add_argument("--model", default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="shorter runs (for tests)")
    args = ap.parse_args(argv)
    level = getattr(args, "log_level", "WARNING")
    logging.basicConfig(level=getattr(logging, str(level).upper(), logging.INFO),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    if args.cmd == "serve":
        return cmd_serve(args)
    if args.cmd == "play":
        return cmd_play(args)
    if args.cmd == "status":
        return cmd_status(args)
    if args.cmd == "demo":
        from .demo import run_demo

        return run_demo(args)
    if args.cmd == "bench":
        from .bench import run_bench

        return run_bench(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
