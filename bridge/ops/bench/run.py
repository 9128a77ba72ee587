"""``wavebridge bench``: the figures wavebridge is measured on, with a naive baseline in the same run.

It drives real daemon processes over OSC and reads their rings with the stub reader at
128-frame blocks in real time, as a host would:

- ``first_audio_ms``: datagram → first frames in the ring (the daemon's ``/wb/first_audio``),
  p50/p99 over repeated plays on idle slots; baseline: a daemon whose first chunk is full size.
- ``prompt_change_ms``: ``/wb/play`` on a playing slot with ≥ 1 s buffered → the new job's
  first frame reaches the read head (the reader sees ``read_index`` pass the splice point);
  baseline: a daemon without splicing, where the new prompt waits behind the buffer.
- ``chord_change_ms`` (synth): ``/wb/chord`` on a playing slot → the read head reaches the beat
  the chord is struck on (it waits for the slot's next beat: 0–500 ms at 120 bpm, plus the guard
  and the crossfade).
- ``max_realtime_slots``: the largest number of slots played together, all read at 128-frame
  blocks in real time, with zero underrun frames over the measuring window.
- ``rtf_single`` / ``aggregate_audio_s_per_s``: the backend alone, one stream and a batch;
  baseline: the same streams generated one at a time.
- synth only: the same figures for the oscillator fallback renderer (``oscillators``,
  ``max_realtime_slots_oscillators``) and ``render_command`` — ``wavebridge render``'s speed.
- ``reader_us_per_block``: the Python reader's cost per 128-frame read (and the C plugin's, if
  ``build/lv2/bench_read`` exists).
- ``cost_per_audio_minute``: compute seconds per audio second × ``--price-per-hour``.

Progress goes to stderr; ``--json`` prints one JSON object as the last line of stdout.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time

import numpy as np

from bridge.control.osc import OscClient
from bridge.core.ring import RingWriter
from bridge.ops.bench.common import machine_info
from bridge.ops.bench.web import run_http_bench
from bridge.ops.demo import DaemonProcess
from bridge.ops.render import render_take
from engine import get_backend
from plugin_stub.player import attach_when_ready, host_ticks
from plugin_stub.reader import RingReader

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

BLOCK = 128


def _say(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def _pct(xs, q):
    return float(np.percentile(np.asarray(xs, dtype=np.float64), q)) if len(xs) else float("nan")


class HostReaders:
    """One host thread reading several slots at BLOCK frames per tick, in real time."""

    def __init__(self, slots, rate_hint=48000):
        self.readers = [attach_when_ready(s, max_block=BLOCK) for s in slots]
        self.rate = self.readers[0].sample_rate
        self.out = np.zeros((BLOCK, self.readers[0].channels), np.float32)
        self._stop = threading.Event()
        self.ticks = 0
        self.late = 0
        self.on_tick = None
        self.th = threading.Thread(target=self._run, daemon=True, name="bench-host")

    def start(self):
        self.th.start()
        return self

    def _run(self):
        for k, late in host_ticks(BLOCK / self.rate, self._stop, late_after=8):
            self.late += late
            for r in self.readers:
                r.read_into(self.out)
            self.ticks = k + 1
            if self.on_tick is not None:
                self.on_tick(k + 1)

    def stop(self):
        self._stop.set()
        self.th.join(2)
        for r in self.readers:
            r.detach()

    def underruns(self):
        return sum(r.underrun_frames for r in self.readers)


class ReadHeadWatch:
    """When a reader's read head reaches a ring frame: armed with the frame, read on the host's
    ticks (``on_tick``), waited for by the bench thread."""

    def __init__(self, reader):
        self.r = reader
        self.target: int | None = None
        self.heard: float | None = None

    def on_tick(self, _k) -> None:
        if self.target is not None and self.heard is None and self.r.read_index >= self.target:
            self.heard = time.monotonic()

    def clear(self) -> None:
        self.target = self.heard = None

    def arm_from_meta(self, frame_of, timeout: float = 5.0) -> bool:
        """Poll the ring's metadata until ``frame_of(meta)`` gives the frame to wait for."""
        end = time.monotonic() + timeout
        while True:                                 # at least once
            f = frame_of(self.r.meta())
            if f is not None:
                self.target = int(f)
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.001)

    def ms_since(self, t: float, timeout: float = 5.0) -> float | None:
        """Milliseconds from ``t`` until the read head got there, or None."""
        end = time.monotonic() + timeout
        while self.heard is None and time.monotonic() < end:
            time.sleep(0.002)
        return None if self.heard is None else (self.heard - t) * 1000.0


def bench_first_audio(d, client, trials: int) -> list[float]:
    out = []
    slot = 1
    for i in range(trials):
        client.send("/wb/play", slot, f"first audio trial {i} with drums", 0.0, i)
        fa = client.wait_for("/wb/first_audio", 5.0)
        if fa is not None:
            out.append(float(fa[2]))
        client.send("/wb/stop", slot, 0.0)
        client.wait_for("/wb/done", 2.0)
        time.sleep(0.03)
    return out


def bench_prompt_change(d, client, trials: int, settle_s: float = 1.3, stops: list | None = None
                        ) -> tuple[list[float], list[float]]:
    """Returns (ms to the read head, buffered seconds at the change); appends a stop's ms to ``stops``."""
    stops = [] if stops is None else stops
    host = HostReaders([2]).start()
    r = host.readers[0]
    watch = ReadHeadWatch(r)
    host.on_tick = watch.on_tick
    lat, buf = [], []
    try:
        client.send("/wb/play", 2, "steady house groove with piano")
        client.wait_for("/wb/first_audio", 5.0)
        for i in range(trials):
            time.sleep(settle_s)
            watch.clear()
            buf.append(r.buffered() / r.sample_rate)
            t = client.send("/wb/play", 2, f"prompt change {i}: ambient pads in D major", 0.0, i)
            started = client.wait_for("/wb/started", 5.0)
            client.wait_for("/wb/first_audio", 5.0)
            # the splice point (or, without splice, where the new job's audio begins): heard past it
            if started and watch.arm_from_meta(
                    lambda m: m["start_at"] + 1 if m.get("job") == started[1] and "start_at" in m else None):
                ms = watch.ms_since(t)
                if ms is not None:
                    lat.append(ms)
        # and a stop with the ring deep: until the fade-out reaches the read head
        time.sleep(settle_s)
        watch.clear()
        t = client.send("/wb/stop", 2, 0.05)
        client.wait_for("/wb/done", 5.0)
        if watch.arm_from_meta(lambda m: m["stop_at"] + 1 if "stop_at" in m else None, timeout=0.0):
            ms = watch.ms_since(t)
            if ms is not None:
                stops.append(ms)
    finally:
        host.stop()
    return lat, buf


CHORDS = ("F#", "Bbmaj7", "Dm7", "E", "Ab/C", "C#m7", "G7sus4", "Ebadd9")


def bench_chord_change(d, client, trials: int, xfade_ms: float = 50.0, bpm: float = 120.0) -> list[float]:
    """``/wb/chord`` on a playing slot (≥ 1 s buffered) → the read head reaches the chord's beat
    (the continuation's splice plus its crossfade: the chord is struck right after), in ms.
    At ``bpm`` a chord waits up to a beat for its line, so the figures spread over ~0..beat."""
    host = HostReaders([3]).start()
    r = host.readers[0]
    watch = ReadHeadWatch(r)
    host.on_tick = watch.on_tick
    lat = []
    try:
        client.send("/wb/play", 3, f"steady pop groove with piano chords, bass and a pad at {bpm:g} bpm")
        client.wait_for("/wb/first_audio", 5.0)
        time.sleep(1.3)
        rng = np.random.default_rng(7)
        lead = int(r.sample_rate * (xfade_ms + 4.0) / 1000.0)
        for i in range(trials):
            time.sleep(0.6 + float(rng.uniform(0.0, 60.0 / bpm)))   # anywhere in the beat
            watch.clear()
            before = r.meta().get("splice_at")
            t = client.send("/wb/chord", 3, CHORDS[i % len(CHORDS)])
            if watch.arm_from_meta(lambda m: m["splice_at"] + lead
                                   if m.get("splice_at") not in (None, before) else None):
                ms = watch.ms_since(t)
                if ms is not None:
                    lat.append(ms)
        client.send("/wb/stop", 3, 0.05)
        client.wait_for("/wb/done", 5.0)
    finally:
        host.stop()
    return lat


def _start_retrying(start_daemon, *args, tries: int = 6):
    """Start a daemon; on a shared machine another process may hold ring ``1`` a moment (ring_busy)."""
    for k in range(tries):
        try:
            return start_daemon(*args)
        except RuntimeError as e:
            if "ring_busy" not in str(e) or k == tries - 1:
                raise
            _say("a ring is held by another process; retrying in 5 s")
            time.sleep(5)


def bench_realtime_slots(start_daemon, counts, window_s: float) -> tuple[int, dict]:
    best, detail = 0, {}
    for n in counts:
        d = _start_retrying(start_daemon, "--slots", str(n))
        try:
            c = OscClient(d.host, d.port, timeout=3.0)
            host = HostReaders(list(range(1, n + 1))).start()
            for s in range(1, n + 1):
                c.send("/wb/play", s, f"slot {s} groove with drums bass pad and lead", 0.0, s)
            got = 0
            end = time.monotonic() + 10
            while got < n and time.monotonic() < end:
                if c.wait_for("/wb/first_audio", 1.0) is not None:
                    got += 1
            time.sleep(window_s)
            ur = host.underruns()
            late = host.late
            host.stop()
            c.close()
        finally:
            d.terminate()
        detail[n] = {"underrun_frames": int(ur), "late_host_ticks": int(late), "started": got}
        _say(f"  {n:3d} slots: {ur} underrun frames, {late} late host ticks")
        if ur == 0 and got == n:
            best = n
        else:
            break
    return best, detail


def bench_backend(backend_name: str, model: str | None, streams: int, **kw) -> dict:
    if model:
        kw["model"] = model
    b = get_backend(backend_name, **kw)
    b.warmup()
    rate = b.sample_rate
    chunk = 8192
    s = b.start(1, "benchmark stream with drums, bass, pad and lead", 0)
    t0 = time.perf_counter()
    frames = 0
    while time.perf_counter() - t0 < 2.0:
        frames += b.generate([s], chunk)[0].shape[0]
    rtf = frames / rate / (time.perf_counter() - t0)
    ss = [b.start(i, f"stream {i} with drums bass pad lead", i) for i in range(streams)]
    agg, naive = {}, {}
    for n in (1024, chunk):                    # a warming slot's small chunks, and steady state
        for mode in ("batched", "naive"):
            t0 = time.perf_counter()
            frames = 0
            while time.perf_counter() - t0 < 1.5:
                if mode == "batched":
                    frames += sum(a.shape[0] for a in b.generate(ss, n))
                else:
                    for x in ss:
                        frames += b.generate([x], n)[0].shape[0]
            v = frames / rate / (time.perf_counter() - t0)
            (agg if mode == "batched" else naive)[n] = v
    what = b.describe() if hasattr(b, "describe") else b.name
    b.close()
    return {"renderer": what, "rtf_single": rtf, "aggregate_audio_s_per_s": agg[chunk], "aggregate_naive_audio_s_per_s": naive[chunk],
            "aggregate_small_chunks_audio_s_per_s": agg[1024],
            "aggregate_small_chunks_naive_audio_s_per_s": naive[1024], "aggregate_streams": streams}


def bench_render_command(seconds: float, soundfont: str | None) -> dict:
    """``wavebridge render``'s speed (in process, same code path): audio seconds per wall/CPU second."""
    t0, c0 = time.perf_counter(), time.process_time()
    audio, _, what = render_take("jazz trio with brushes and upright bass", seconds, soundfont=soundfont)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seconds": seconds, "renderer": what, "x_realtime_wall": round(seconds / wall, 1),
            "x_realtime_cpu": round(seconds / max(cpu, 1e-9), 1)}


def bench_reader() -> dict:
    name = "bench" + secrets.token_hex(4)
    w = RingWriter.open(name, 48000, 2, 1 << 16)
    r = RingReader(name, max_block=BLOCK).attach()
    out = np.zeros((BLOCK, 2), np.float32)
    try:
        w.set_playing(True)
        chunk = np.random.default_rng(0).standard_normal((1 << 14, 2)).astype(np.float32)
        n, t = 0, 0.0
        for _ in range(40):
            w.append(chunk)
            t0 = time.perf_counter_ns()
            for _ in range((1 << 14) // BLOCK):
                r.read_into(out)
            t += time.perf_counter_ns() - t0
            n += (1 << 14) // BLOCK
        res = {"python_us": t / n / 1000.0}
    finally:
        r.detach()
        w.close()
    exe = os.path.join(REPO_ROOT, "build", "lv2-bench", "bench_read")
    if os.path.exists(exe):
        try:
            p = subprocess.run([exe], capture_output=True, text=True, timeout=60)
            for line in p.stdout.splitlines():
                if "c_read_us_per_block" in line:
                    res["c_us"] = float(line.split("=")[1])
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
    return res


def run_bench(args) -> int:
    if getattr(args, "http", False):              # the web side's figures (bridge/ops/bench/web.py)
        return run_http_bench(args)
    if getattr(args, "cluster", False):           # the engine on Ray Serve (bridge/ops/bench/cluster.py)
        from bridge.ops.bench.cluster import run_cluster_bench

        return run_cluster_bench(args)
    if getattr(args, "web_load", False):          # issue #20's loads at full size (bridge/ops/bench/webload.py)
        from bridge.ops.bench.webload import run as run_web_load

        return run_web_load(args)
    quick = bool(getattr(args, "quick", False))
    backend = args.backend
    extra = ["--backend", backend] + (["--model", args.model] if args.model else [])
    soundfont = getattr(args, "soundfont", None)
    if soundfont and backend == "synth":
        extra += ["--soundfont", soundfont]
    price = float(getattr(args, "price_per_hour", None) or 1.0)
    t_all = time.monotonic()
    res: dict = {"backend": backend, "machine": machine_info(), "block_frames": BLOCK}
    _bench_in_process(res, args, quick, price, soundfont)
    _bench_latency(res, extra, quick)
    window = _bench_realtime(res, extra, quick, backend)
    res["bench_seconds"] = round(time.monotonic() - t_all, 1)
    _print_summary(res, window, price)
    if getattr(args, "json", False):
        print(json.dumps(res))
    return 0


def _bench_in_process(res: dict, args, quick: bool, price: float, soundfont: str | None) -> None:
    """The backend alone (throughput, batch vs one at a time, costs), render, the reader's cost."""
    backend = args.backend
    _say("backend throughput (in process) …")
    be = bench_backend(backend, args.model, 16 if quick else 64,
                       **({"soundfont": soundfont} if soundfont and backend == "synth" else {}))
    res.update({k: round(v, 2) if isinstance(v, float) else v for k, v in be.items()})
    res["aggregate_ratio_vs_naive"] = round(be["aggregate_audio_s_per_s"] / be["aggregate_naive_audio_s_per_s"], 2)
    res["aggregate_small_chunks_ratio_vs_naive"] = round(
        be["aggregate_small_chunks_audio_s_per_s"] / be["aggregate_small_chunks_naive_audio_s_per_s"], 2)
    compute_per_audio_s = 1.0 / be["rtf_single"]
    res["price_per_hour"] = price
    res["cost_per_audio_minute"] = round(compute_per_audio_s * 60.0 * price / 3600.0, 6)
    res["cost_per_audio_minute_batched"] = round(60.0 / be["aggregate_audio_s_per_s"] * price / 3600.0, 6)

    if backend == "synth":
        _say("the oscillator fallback renderer (in process) …")
        osc = bench_backend("synth", None, 4 if quick else 16, renderer="oscillators")
        res["oscillators"] = {k: round(v, 2) if isinstance(v, float) else v for k, v in osc.items()}
        _say("wavebridge render speed …")
        res["render_command"] = bench_render_command(5.0 if quick else 30.0, soundfont)

    _say("reader cost per 128-frame block …")
    rd = bench_reader()
    res["reader_us_per_block"] = {k: round(v, 3) for k, v in rd.items()}


def _bench_latency(res: dict, extra: list[str], quick: bool) -> None:
    """First audio, prompt change and stop over OSC, then the naive daemon's, in one run."""
    trials = 8 if quick else 30
    _say(f"first audio over OSC ({trials} plays) …")
    d = _start_retrying(DaemonProcess, *extra, "--slots", "4")
    try:
        c = OscClient(d.host, d.port, timeout=3.0)
        fa = bench_first_audio(d, c, trials)
        pc_trials = 3 if quick else 10
        _say(f"prompt change at the read head ({pc_trials} changes, ≥ 1 s buffered) …")
        stop_ms: list[float] = []
        pc, pc_buf = bench_prompt_change(d, c, pc_trials, stops=stop_ms)
        ch = []
        if "synth" in extra[:2]:
            ch_trials = 4 if quick else 24
            _say(f"chord changes at the read head ({ch_trials} /wb/chord at 120 bpm) …")
            ch = bench_chord_change(d, c, ch_trials)
        c.close()
    finally:
        d.terminate()
    res["first_audio_ms"] = {"p50": round(_pct(fa, 50), 2), "p99": round(_pct(fa, 99), 2), "n": len(fa)}
    res["prompt_change_ms"] = {"p50": round(_pct(pc, 50), 2), "p99": round(_pct(pc, 99), 2), "n": len(pc),
                               "buffered_s_p50": round(_pct(pc_buf, 50), 3)}
    res["stop_ms"] = round(stop_ms[0], 2) if stop_ms else None   # /wb/stop → fade-out at the read head
    if ch:
        res["chord_change_ms"] = {"p50": round(_pct(ch, 50), 2), "p99": round(_pct(ch, 99), 2), "n": len(ch),
                                  "beat_ms": 500.0}

    _say("naive baseline: full first chunk, no splice …")
    d = _start_retrying(DaemonProcess, *extra, "--slots", "4", "--first-chunk", "8192", "--no-splice")
    try:
        c = OscClient(d.host, d.port, timeout=3.0)
        fa_n = bench_first_audio(d, c, max(4, trials // 3))
        pc_n, _ = bench_prompt_change(d, c, 2 if quick else 4)
        c.close()
    finally:
        d.terminate()
    res["first_audio_ms_naive"] = {"p50": round(_pct(fa_n, 50), 2), "p99": round(_pct(fa_n, 99), 2)}
    res["prompt_change_ms_naive"] = {"p50": round(_pct(pc_n, 50), 2), "p99": round(_pct(pc_n, 99), 2)}
    res["prompt_change_speedup_vs_naive"] = round(_pct(pc_n, 50) / max(_pct(pc, 50), 1e-9), 1)


def _bench_realtime(res: dict, extra: list[str], quick: bool, backend: str) -> float:
    """The most slots read in real time with 0 underruns (and the oscillator fallback's); the window."""
    window = 3.0 if quick else 10.0
    counts = [4, 8] if quick else [4, 8, 12, 16, 24, 32, 40, 48, 56, 64]
    _say(f"real-time slots at {BLOCK}-frame blocks, {window:.0f} s windows …")
    best, detail = bench_realtime_slots(lambda *a: DaemonProcess(*extra, *a), counts, window)
    res["max_realtime_slots"] = best
    res["realtime_trials"] = detail
    if backend == "synth":
        _say("real-time slots with the oscillator fallback …")
        env = dict(os.environ, WAVEBRIDGE_SYNTH_RENDERER="oscillators")
        ocounts = [2, 4] if quick else [2, 4, 6, 8, 12, 16]
        obest, odetail = bench_realtime_slots(lambda *a: DaemonProcess(*extra, *a, env=env), ocounts, window)
        res["max_realtime_slots_oscillators"] = obest
        res["realtime_trials_oscillators"] = odetail
    return window


def _print_summary(res: dict, window: float, price: float) -> None:
    backend, best = res["backend"], res["max_realtime_slots"]
    print(f"wavebridge bench — {backend} on {res['machine']['cpu']} ({res['machine']['cores']} cores)")
    print(f"  first audio        p50 {res['first_audio_ms']['p50']:7.2f} ms   p99 {res['first_audio_ms']['p99']:7.2f} ms"
          f"   (naive full first chunk: p50 {res['first_audio_ms_naive']['p50']:.2f} ms)")
    print(f"  prompt change      p50 {res['prompt_change_ms']['p50']:7.2f} ms   p99 {res['prompt_change_ms']['p99']:7.2f} ms"
          f"   (naive, no splice: p50 {res['prompt_change_ms_naive']['p50']:.0f} ms → "
          f"{res['prompt_change_speedup_vs_naive']}× faster)")
    if "chord_change_ms" in res:
        cc = res["chord_change_ms"]
        print(f"  chord change       p50 {cc['p50']:7.2f} ms   p99 {cc['p99']:7.2f} ms   (/wb/chord → its beat at the "
              f"read head; a beat is {cc['beat_ms']:.0f} ms)")
    if res["stop_ms"] is not None:
        print(f"  stop               {res['stop_ms']:7.2f} ms to the fade-out at the read head (≥ 1 s buffered)")
    print(f"  real-time slots    {best} with 0 underruns ({BLOCK}-frame blocks, {window:.0f} s)"
          + (f"; oscillator fallback: {res['max_realtime_slots_oscillators']}"
             if "max_realtime_slots_oscillators" in res else ""))
    print(f"  single stream RTF  {res['rtf_single']:.1f}×   batch of {res['aggregate_streams']}: "
          f"{res['aggregate_audio_s_per_s']:.1f} audio-s/s ({res['aggregate_ratio_vs_naive']}× one-at-a-time); "
          f"1024-frame chunks: {res['aggregate_small_chunks_audio_s_per_s']:.1f} "
          f"({res['aggregate_small_chunks_ratio_vs_naive']}×)")
    if "render_command" in res:
        rc = res["render_command"]
        print(f"  renderer           {res.get('renderer')}; oscillator fallback RTF {res['oscillators']['rtf_single']:.1f}×,"
              f" batch {res['oscillators']['aggregate_audio_s_per_s']:.1f} audio-s/s")
        print(f"  wavebridge render  {rc['x_realtime_wall']:.0f}× real time wall, {rc['x_realtime_cpu']:.0f}× per CPU second"
              f" ({rc['seconds']:.0f} s take)")
    print(f"  reader per block   Python {res['reader_us_per_block'].get('python_us', float('nan')):.2f} µs"
          + (f", C {res['reader_us_per_block']['c_us']:.3f} µs" if "c_us" in res["reader_us_per_block"] else ""))
    print(f"  cost per audio min {res['cost_per_audio_minute']:.6f} at {price}/h (batched "
          f"{res['cost_per_audio_minute_batched']:.6f})")
