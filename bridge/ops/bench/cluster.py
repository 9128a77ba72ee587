"""``wavebridge bench --cluster``: the engine deployment measured on this machine, and the capacity
model (docs/SCALE.md) computed from what was measured.

1. Serve's own cost per chunk: one stream rendered as fast as the replica can, in 100 ms chunks
   and in 20 ms chunks; the difference over the difference in chunk count.
2. Real-time streams per replica: N streams at once on one replica of one CPU, each read by a
   listener that starts playing 1 s after its first chunk. A stream keeps up if every chunk
   arrives before the listener needs it. The largest N whose streams all keep up is the replica's
   figure (the synth on the CPU here; a GPU box's figure comes from ``scripts/gpu-check``).
3. From those: replicas and cost per audio-minute for 100 / 10,000 / 1,000,000 listeners, and a
   day of the autoscaler against the streams' buffers (:mod:`bridge.cluster.capacity`).
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import threading
import time

from bridge.cluster.capacity import day_curve, plan, simulate_day

PROMPT = "house with piano, bass and drums, 124 bpm"
LISTEN_BUFFER_S = 1.0


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _per_chunk_cost(handle, seconds: float) -> dict:
    out = {}
    for ms in (100, 20):
        n = int(48000 * ms / 1000)
        t0 = time.perf_counter()
        k = sum(1 for _ in handle.options(stream=True).stream.remote(PROMPT, 1, seconds, None, n, 0, None))
        out[ms] = (time.perf_counter() - t0, k)
    (t100, k100), (t20, k20) = out[100], out[20]
    return {"seconds": seconds, "wall_100ms_s": round(t100, 3), "wall_20ms_s": round(t20, 3),
            "chunks_100ms": k100, "chunks_20ms": k20,
            "per_chunk_ms": round(max(0.0, (t20 - t100) / max(1, k20 - k100)) * 1000, 3)}


def _streams_keep_up(handle, n: int, seconds: float) -> dict:
    """``n`` paced streams at once; each listener's worst lateness (s) against a 1 s buffer."""
    worst = [math.inf] * n
    first = [math.nan] * n

    def listen(i):
        t_req = time.monotonic()
        t0, done, late = None, 0, -math.inf
        for chunk in handle.options(stream=True).stream.remote(PROMPT, 100 + i, seconds):
            now = time.monotonic()
            if t0 is None:
                t0 = now
                first[i] = now - t_req
            need = t0 + LISTEN_BUFFER_S + done / 48000          # when the listener plays this chunk
            late = max(late, now - need)
            done += len(chunk) // 8
        worst[i] = late

    before = handle.info.remote().result()
    ths = [threading.Thread(target=listen, args=(i,), daemon=True) for i in range(n)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(seconds + 60)
    after = handle.info.remote().result()
    ok = all(w <= 0 for w in worst)
    renders = after["batches"] - before["batches"]
    return {"streams": n, "keep_up": ok, "worst_late_s": round(max(worst), 3),
            "first_chunk_p50_ms": round(sorted(first)[n // 2] * 1000, 1),
            "chunks_per_render": round((after["batched_chunks"] - before["batched_chunks"]) / max(1, renders), 2)}


def run_cluster_bench(args) -> int:
    try:
        import ray
        from ray import serve
    except ImportError:
        print("wavebridge: bench --cluster needs the cluster extra (make setup installs it)", file=sys.stderr)
        return 2
    from bridge.cluster.replica import build

    quick = bool(getattr(args, "quick", False))
    price = float(getattr(args, "price_per_hour", None) or 1.0)     # per replica (one CPU here) an hour
    os.environ["RAY_worker_niceness"] = "0"
    res: dict = {"cpus": os.cpu_count(), "ray": ray.__version__, "price_per_replica_hour": price}
    tmp = tempfile.mkdtemp(prefix="wbbench", dir="/tmp")
    t0 = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, configure_logging=False,
             _temp_dir=tmp)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": 0})
        handle = serve.run(build("synth", replicas=1, capacity=64, num_cpus=1.0), name="wb-bench",
                           route_prefix="/bench")
        res["deploy_s"] = round(time.perf_counter() - t0, 1)
        _say(f"deployed 1 replica in {res['deploy_s']} s; Serve's cost per chunk …")
        res["serve_chunk"] = _per_chunk_cost(handle, 5.0 if quick else 30.0)
        _say(f"  {res['serve_chunk']['per_chunk_ms']} ms a chunk; real-time streams per replica …")
        rows = []
        for n in ((2, 4) if quick else (4, 8, 12, 16, 24, 32, 48)):
            r = _streams_keep_up(handle, n, 4.0 if quick else 10.0)
            rows.append(r)
            _say(f"  {n:3d} streams: {'keep up' if r['keep_up'] else 'LATE'} (worst {r['worst_late_s']:+.3f} s, "
                 f"first chunk p50 {r['first_chunk_p50_ms']} ms, {r['chunks_per_render']} chunks a render)")
            if not r["keep_up"]:
                break
        res["streams"] = rows
        spr = max([r["streams"] for r in rows if r["keep_up"]] or [1])
        res["streams_per_replica"] = spr
    finally:
        serve.shutdown()
        ray.shutdown()
    res["plans"] = [vars(plan(n, spr, price)) for n in (100, 10_000, 1_000_000)]
    res["plans"].append(vars(plan(1_000_000, spr, price, kind="station", stations=50, egress_cost_per_gb=0.02)))
    curve = day_curve(10_000)
    target = max(1, int(spr * 0.75))
    res["day"] = {}
    for up in (30, 120, 300):
        d = simulate_day(curve, capacity=spr, target=target, upscale_delay_s=up, start_s=res["deploy_s"] / 2,
                         buffer_s=2.0, step_s=2.0, replica_cost_per_hour=price)
        res["day"][f"upscale_{up}s"] = vars(d)
    _print(res)
    if getattr(args, "json", False):
        print(json.dumps(res, default=float))
    return 0


def _print(res: dict) -> None:
    c = res["serve_chunk"]
    print(f"cluster bench: {res['cpus']} CPUs, Ray {res['ray']}, synth on the CPU")
    print(f"  Serve per chunk: {c['per_chunk_ms']} ms ({c['chunks_100ms']} chunks of 100 ms in {c['wall_100ms_s']} s, "
          f"{c['chunks_20ms']} of 20 ms in {c['wall_20ms_s']} s)")
    print(f"  real-time streams per replica (1 CPU): {res['streams_per_replica']}")
    print("  streams at once: chunks a render (continuous batching) " +
          ", ".join(f"{r['streams']}: {r['chunks_per_render']}" for r in res["streams"]))
    print("  listeners        kind      replicas  cost/h   cost/audio-min  egress")
    for p in res["plans"]:
        print(f"  {p['listeners']:>10,}  {p['kind']:>9}  {p['replicas']:>8,}  {p['cost_per_hour']:>8.2f}  "
              f"{p['cost_per_audio_minute']:>13.6f}  {p['egress_mbit_s']:>8,.0f} Mbit/s")
    print("  a day at 10,000 peak (target 75 % of a replica), by upscale delay:")
    for k, d in res["day"].items():
        print(f"    {k:>13}: {d['replica_hours']:,.0f} replica-h, peak {d['peak_replicas']}, "
              f"{d['cost_per_audio_minute']:.6f}/audio-min, {d['waited']} waited, {d['late']} past their buffer "
              f"(longest {d['longest_wait_s']:.0f} s)")
