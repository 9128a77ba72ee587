#!/usr/bin/env python3
"""GPU check, musicgen part: the musicgen backend on random weights in musicgen-small's shape.

Runs with a plain ``python3`` that has torch (CUDA), transformers and numpy — nothing else, no
network. Builds the model from configs, saves it like a checkpoint, loads it through the backend
(``get_backend("musicgen", model=DIR)``), warms up (CUDA graphs), and measures:

- first audio: ``start`` (T5) + the first chunk of one stream, idle engine and with 64 busy;
- batch-1 real-time factor over ``--rtf-seconds`` of audio;
- aggregate audio-seconds per second at 1 / 8 / 64 / 256 streams;
- per-step decoder time from the captured graphs at small and full context;
- transformers' ``generate`` on the same weights in the same run (batch 1, fp16, CFG 3) as the
  baseline, and our batch-1 RTF as a ratio of it.

Progress goes to stderr; stdout's last line is one JSON object. Stays under ``--budget-s``
(default 280 s) by skipping what no longer fits. Exit status 0 when every section ran.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import numpy as np  # noqa: E402 — after the path: the repository's modules come first

from engine.backend import get_backend  # noqa: E402
from tiny_musicgen import build_random_musicgen  # noqa: E402 — tests/tiny_musicgen.py

PROMPT = "lofi hip hop beat with warm piano and soft drums"


def say(*a):
    print("[gpu_check_musicgen]", *a, file=sys.stderr, flush=True)


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", default="1,8,64,256")
    ap.add_argument("--seconds", type=float, default=2.0, help="audio per stream in the aggregate runs")
    ap.add_argument("--rtf-seconds", type=float, default=5.0)
    ap.add_argument("--hf-seconds", type=float, default=3.0)
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--model-dir", default=None, help="reuse a saved model instead of building one")
    ap.add_argument("--budget-s", type=float, default=280.0)
    ap.add_argument("--cpu-smoke", action="store_true",
                    help="run every section on the CPU with the tiny model (tests this script, measures nothing)")
    return ap.parse_args()


class Check:
    """One run: the arguments, the report ``res`` and the time budget; one method per section."""

    def __init__(self, args, t_start: float):
        self.args = args
        self.t_start = t_start
        self.res: dict = {"check": "gpu_check_musicgen", "ok": False, "errors": [], "skipped": []}
        self.torch = None
        self.cuda = False
        self.dev = "cpu"
        self.b = None
        self.model_dir = args.model_dir
        self.streams: list[int] = []

    def left(self) -> float:
        return self.args.budget_s - (time.perf_counter() - self.t_start)

    def section(self, name, need_s, fn):
        res = self.res
        if self.left() < need_s:
            res["skipped"].append(name)
            say(f"skip {name}: {self.left():.0f} s left")
            return None
        say(f"{name} …")
        t = time.perf_counter()
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 — report and go on with the next section
            res["errors"].append(f"{name}: {type(e).__name__}: {e}")
            say(traceback.format_exc())
            return None
        say(f"{name} done in {time.perf_counter() - t:.1f} s")
        return out

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    # ------------------------------------------------------------------ the run
    def run(self) -> int:
        res = self.res
        try:
            # imported here, not at the top: without torch or transformers the run still ends
            # with its one JSON line, naming what is missing
            import torch

            self.torch = torch
            res["torch"] = torch.__version__
            import transformers

            res["transformers"] = transformers.__version__
            self.cuda = torch.cuda.is_available() and not self.args.cpu_smoke
            if not self.cuda and not self.args.cpu_smoke:
                res["errors"].append("no CUDA device")
                return finish(res, self.t_start)
            res["device"] = torch.cuda.get_device_name(0) if self.cuda else "cpu (smoke test)"
            self.dev = "cuda" if self.cuda else "cpu"
            self.streams = [int(x) for x in self.args.streams.split(",") if x]
            with tempfile.TemporaryDirectory(prefix="wb-musicgen-") as tmp:
                if not self.measure(tmp):
                    return finish(res, self.t_start)
        except Exception as e:  # noqa: BLE001
            res["errors"].append(f"{type(e).__name__}: {e}")
            say(traceback.format_exc())
        res["ok"] = not res["errors"] and not res["skipped"]
        return finish(res, self.t_start)

    def measure(self, tmp: str) -> bool:
        """Every section in order; False when one the others need (build, load) did not run."""
        res = self.res
        if self.model_dir is None:
            t = time.perf_counter()
            self.model_dir = self.section("build", 60, lambda: self.build(tmp))
            res["build_s"] = round(time.perf_counter() - t, 2)
            if self.model_dir is None:
                return False
        self.b = self.section("load+warmup", 60, self.load)
        if self.b is None:
            return False
        res["first_audio_ms"] = self.section("first_audio", 20, lambda: self.first_audio(0))
        if max(self.streams) >= 65:
            res["first_audio_ms_64_busy"] = self.section("first_audio_64_busy", 40, lambda: self.first_audio(64))
        res["rtf_b1"] = self.section("rtf_b1", 30, self.rtf_b1)
        agg = {}
        for n in self.streams:
            r = self.section(f"aggregate_{n}", 15 + n * 0.15, lambda n=n: self.aggregate(n))
            if r is not None:
                agg[str(n)] = r
        res["aggregate"] = agg
        if not self.b._slots:
            res["step_ms"] = self.section("step_table", 20, self.step_table)
        hf = self.section("hf_generate_baseline", 25 + self.args.hf_seconds * 6, self.hf_baseline)
        res["hf_generate"] = hf
        if hf and res.get("rtf_b1"):
            res["rtf_b1_vs_hf"] = round(res["rtf_b1"] / hf["rtf_b1"], 1)
        if self.cuda:
            res["peak_gpu_gib"] = round(self.torch.cuda.max_memory_allocated() / 2**30, 2)
        res["host_maxrss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
        self.b.close()
        return True

    # ------------------------------------------------------------------ sections
    def build(self, tmp: str) -> str:
        if not self.cuda:
            return build_random_musicgen(os.path.join(tmp, "tiny"), "tiny")
        torch = self.torch
        path = os.path.join(tmp, "small")
        try:                                  # initialising on the GPU is much faster …
            return build_random_musicgen(path, "small", device="cuda", dtype=torch.float16)
        except Exception as e:  # noqa: BLE001 — … but fall back to the CPU if it fails
            say(f"building on cuda failed ({type(e).__name__}: {e}); building on the CPU")
            self.res["build_on_cpu"] = True
            return build_random_musicgen(path, "small", dtype=torch.float16)

    def load(self):
        res = self.res
        t = time.perf_counter()
        b = get_backend("musicgen", model=self.model_dir, device=self.dev,
                        dtype=self.args.dtype if self.cuda else "float32", max_batch=max(self.streams))
        res["load_s"] = round(time.perf_counter() - t, 2)
        res.update(slots=b.max_batch, context_frames=b.context, reprime_frames=b.reprime,
                   dtype=str(b.dtype).replace("torch.", ""), granularity=b.granularity,
                   sample_rate=b.sample_rate)
        t = time.perf_counter()
        b.warmup()
        res["warmup_s"] = round(time.perf_counter() - t, 2)
        res["cuda_graphs"] = len(b._loop.graphs)
        res["device_audio"] = b.device       # "cuda": chunks handed over as CuPy arrays
        if self.cuda and b.device != "cuda":
            res["errors"].append("musicgen hands audio back on the host: its CuPy path did not start "
                                 "(see the log line 'CuPy unavailable')")
        return b

    def first_audio(self, busy: int):
        b, g = self.b, self.b.granularity
        bg = [b.start(1000 + i, f"{PROMPT} {i}", i) for i in range(busy)]
        if bg:
            b.generate(bg, g)
        lat = []
        for i in range(7):
            self.sync()
            t = time.perf_counter()
            s = b.start(i, PROMPT, i)
            a = b.generate([s], g)[0]
            self.sync()                        # the chunk is computed, not just queued
            lat.append((time.perf_counter() - t) * 1e3)
            self.res["audio_finite"] = bool(np.isfinite(a).all())
            self.res["chunk_array"] = type(a).__module__.split(".")[0]
            b.end(s)
        for s in bg:
            b.end(s)
        lat = lat[2:]
        return {"p50": round(statistics.median(lat), 2), "min": round(min(lat), 2), "max": round(max(lat), 2)}

    def rtf_b1(self):
        b, g, sr = self.b, self.b.granularity, self.b.sample_rate
        s = b.start(1, PROMPT, 1)
        self.sync()
        t = time.perf_counter()
        done = b.generate([s], g)[0].shape[0]
        while done < self.args.rtf_seconds * sr:
            done += b.generate([s], 8 * g)[0].shape[0]
        self.sync()
        wall = time.perf_counter() - t
        b.end(s)
        return round(done / sr / wall, 2)

    def aggregate(self, n):
        b, g, sr = self.b, self.b.granularity, self.b.sample_rate
        t = time.perf_counter()
        ss = [b.start(i, f"{PROMPT} {i % 7}", i) for i in range(n)]
        self.sync()
        start_ms = (time.perf_counter() - t) * 1e3 / n
        b.generate(ss, g)
        chunk = 10 * g
        k = max(1, int(round(self.args.seconds * sr / chunk)))
        self.sync()
        t = time.perf_counter()
        for _ in range(k):
            b.generate(ss, chunk)
        self.sync()
        wall = time.perf_counter() - t
        for s in ss:
            b.end(s)
        return {"audio_s_per_s": round(n * k * chunk / sr / wall, 1),
                "rtf_per_stream": round(k * chunk / sr / wall, 2), "start_ms_per_stream": round(start_ms, 2)}

    def step_table(self):
        loop = self.b._loop
        out = {}
        for B in [x for x in (1, 8, 64, 256) if x <= loop.S]:
            for T in sorted({min(128, loop.T), loop.T}):
                steps = 32
                loop.h_pos[:B] = T - steps
                loop.pos[:B] = T - steps
                sched = np.ones((steps, B), dtype=bool)
                loop.run(sched)                                   # warm this bucket
                loop.h_pos[:B] = T - steps
                loop.pos[:B] = T - steps
                self.sync()
                t = time.perf_counter()
                loop.run(sched)
                self.sync()
                out[f"b{B}_ctx{T}"] = round((time.perf_counter() - t) * 1e3 / steps, 3)
        loop.h_pos[:] = 0
        loop.pos.zero_()
        out["b1_eager"] = self._eager_step(loop)
        return out

    def _eager_step(self, loop) -> float:
        """ms per decoder step at batch 1 without the captured graphs."""
        loop.use_graphs, saved = False, loop.use_graphs
        try:
            loop.h_pos[:1] = 0
            sched = np.ones((16, 1), dtype=bool)
            loop.run(sched)
            loop.h_pos[:1] = 0
            loop.pos.zero_()
            self.sync()
            t = time.perf_counter()
            loop.run(sched)
            self.sync()
            return round((time.perf_counter() - t) * 1e3 / 16, 3)
        finally:
            loop.use_graphs = saved
            loop.h_pos[:] = 0
            loop.pos.zero_()

    def hf_baseline(self):
        # optional, as in run(); the model classes load here so the sections before don't pay for them
        from transformers import AutoTokenizer, MusicgenForConditionalGeneration
        from transformers.utils import logging as hf_logging

        torch, dev, cuda, model_dir = self.torch, self.dev, self.cuda, self.model_dir
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        m = MusicgenForConditionalGeneration.from_pretrained(model_dir, local_files_only=True,
                                                             dtype=torch.float16 if cuda else torch.float32)
        m = m.to(dev).eval()
        tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        inp = tok([PROMPT], return_tensors="pt").to(dev)
        fr = m.config.audio_encoder.sampling_rate / float(np.prod(m.config.audio_encoder.upsampling_ratios))
        new = int(round(self.args.hf_seconds * fr)) + m.config.decoder.num_codebooks
        m.generate(**inp, do_sample=True, guidance_scale=3.0, max_new_tokens=8)    # warm
        self.sync()
        t = time.perf_counter()
        wav = m.generate(**inp, do_sample=True, guidance_scale=3.0, max_new_tokens=new)
        self.sync()
        wall = time.perf_counter() - t
        audio_s = wav.shape[-1] / m.config.audio_encoder.sampling_rate
        del m
        if cuda:
            torch.cuda.empty_cache()
        return {"rtf_b1": round(audio_s / wall, 3), "wall_s": round(wall, 2), "audio_s": round(audio_s, 2),
                "ms_per_step": round(wall * 1e3 / new, 2)}


def main() -> int:
    args = _parse_args()
    return Check(args, time.perf_counter()).run()


def finish(res: dict, t_start: float) -> int:
    res["wall_s"] = round(time.perf_counter() - t_start, 1)
    print(json.dumps(res), flush=True)
    return 0 if res.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
