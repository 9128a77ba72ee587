"""scripts/gpu_check_musicgen.py runs every section on the CPU (``--cpu-smoke``) and reports them all.

The GPU check only runs where a GPU is lent, rarely and against a short device budget; this
keeps its code from rotting in between: every section must run without error and leave its
figure in the JSON line. It measures nothing (the tiny model on a CPU), so no value is judged
beyond being present and sane.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The smoke builds and loads the tiny model, then runs every section: first audio (alone and beside
# 64 streams), rtf, aggregates over 1/8/64/256 streams, the step table, transformers' generate. With
# the script's default lengths it took over 550 s on a 2-core machine at load 6 (rtf_b1 alone 287 s,
# 5 s of audio) and ran past the old 240 s limit on a loaded 2-core CI machine. The lengths below
# keep every code path (each loop still turns many times) at a fraction of the work; the limit is
# 3× or more what that takes on a loaded 2-core machine, and the script's own budget sits just
# under it, so no section is skipped for lack of time before the test would time out.
SMOKE_ARGS = ["--cpu-smoke", "--rtf-seconds", "1", "--seconds", "0.5", "--hf-seconds", "1"]
SMOKE_TIMEOUT_S = 1200
SMOKE_BUDGET_S = SMOKE_TIMEOUT_S - 60


@pytest.mark.slow
@pytest.mark.timeout(SMOKE_TIMEOUT_S + 60)
def test_musicgen_gpu_check_runs_every_section_on_the_cpu():
    p = subprocess.run([sys.executable, "scripts/gpu_check_musicgen.py", *SMOKE_ARGS,
                        "--budget-s", str(SMOKE_BUDGET_S)], cwd=ROOT,
                       capture_output=True, text=True, timeout=SMOKE_TIMEOUT_S)
    assert p.returncode == 0, p.stderr[-4000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert res["ok"] is True and res["errors"] == [] and res["skipped"] == [], res
    for key in ("first_audio_ms", "first_audio_ms_64_busy", "rtf_b1", "step_ms", "hf_generate", "rtf_b1_vs_hf"):
        assert key in res, f"section result {key!r} missing"
    assert res["audio_finite"] is True
    assert sorted(res["aggregate"], key=int) == ["1", "8", "64", "256"]
    for n, agg in res["aggregate"].items():
        assert agg["audio_s_per_s"] > 0, (n, agg)
    assert res["hf_generate"]["audio_s"] > 0 and res["rtf_b1"] > 0


def test_gpu_check_dsp_bench_runs_on_the_emulated_cupy(monkeypatch, tmp_path):
    """scripts/gpu-check's dsp benchmark, every measurement, on tests/emulated_cupy.py: its calls
    into dsp.gpu, the ring and CuPy's API hold together, and the fused seam it times matches NumPy."""
    import importlib.machinery
    import importlib.util
    import shutil

    if shutil.which("g++") is None:
        pytest.skip("needs g++ (make setup installs it)")
    from emulated_cupy import install

    install(monkeypatch, tmp_path / "emulated_cupy")
    loader = importlib.machinery.SourceFileLoader("wb_gpu_check", os.path.join(ROOT, "scripts", "gpu-check"))
    spec = importlib.util.spec_from_loader("wb_gpu_check", loader)
    mod = importlib.util.module_from_spec(spec)
    cwd = os.getcwd()
    try:
        loader.exec_module(mod)                  # chdirs to the repo root, as when run
    finally:
        os.chdir(cwd)
    timed = mod.timed
    monkeypatch.setattr(mod, "timed", lambda fn, iters, warm=20: timed(fn, min(iters, 5), 1))  # few, not 3000
    out = mod.bench()
    assert out["device"] == "emulated"
    assert out["seam_matches_numpy"] is True
    for key in ("seam_cupy", "seam_numpy", "second_cupy_fused", "second_cupy_ring_fade",
                "second_cupy_pageable", "second_numpy_host", "resample_1s_32k_to_48k_cupy"):
        assert out[key]["iters"] == 5 and out[key]["p50_us"] > 0, key
    assert "torch_error" in out or "seam_torch" in out      # no CUDA torch here: the baseline says why
