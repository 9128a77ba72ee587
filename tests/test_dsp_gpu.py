"""CuPy == NumPy for dsp (within 1e-6), and the fused path into a real registered /dev/shm ring.

Each test runs twice: on a GPU (marked ``gpu``; skipped cleanly when CuPy is missing or no CUDA
device can allocate; ``python3 -m pytest -m gpu tests/test_dsp_gpu.py``, as ``scripts/gpu-check``
does) and on ``tests/emulated_cupy.py`` everywhere (the kernels compiled for the CPU, host memory
as device memory: the logic around the kernels, not the device).
Imports of ours: ``dsp`` and ``bridge.core.ring`` only.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

TOL = 1e-6


def _gpu_probe() -> tuple[bool, str]:
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device"
        a = cupy.arange(4, dtype=cupy.float32) + 1
        if float(a.sum()) != 10.0:
            return False, "CuPy allocation gave a wrong result"
        return True, ""
    except Exception as e:  # ImportError, CUDARuntimeError, driver missing, ...
        return False, f"{type(e).__name__}: {e}"


GPU_OK, WHY = _gpu_probe()


@pytest.fixture(scope="module", params=[
    pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=f"needs CuPy and a CUDA device ({WHY})")]),
    pytest.param("emulated", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")),
])
def cp(request, tmp_path_factory):
    """Real CuPy on a GPU, or tests/emulated_cupy.py (the same kernels compiled for the CPU)."""
    from dsp import gpu

    if request.param == "cuda":
        import cupy

        gpu.warmup()
        yield cupy
        return
    from emulated_cupy import install

    with pytest.MonkeyPatch.context() as mp:
        emulated = install(mp, tmp_path_factory.mktemp("emulated_cupy"))
        gpu.warmup()
        yield emulated


def close(a, b, tol=TOL):
    import cupy

    a = cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else np.asarray(a)
    b = cupy.asnumpy(b) if isinstance(b, cupy.ndarray) else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=0, atol=tol)


def hot(shape, seed=0, scale=1.4):
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


# --------------------------------------------------------------------------- dsp.core on CuPy
def test_core_functions_follow_cupy_input(cp):
    import dsp

    x = hot((3000, 2), 1)
    y = hot((3000, 2), 2)
    xc, yc = cp.asarray(x), cp.asarray(y)
    assert dsp.array_module(xc) is cp
    for n in (1, 480, 2400):
        for f in (dsp.linear_curves, dsp.equal_power_curves):
            for a, b in zip(f(n, cp), f(n)):
                close(a, b)
    for curve in ("linear", "equal_power"):
        close(dsp.crossfade(xc, yc, curve), dsp.crossfade(x, y, curve))
        close(dsp.crossfade(xc[:, 0], yc[:100, 0], curve), dsp.crossfade(x[:, 0], y[:100, 0], curve))
        for direction in ("in", "out"):
            close(dsp.fade(xc, direction, curve), dsp.fade(x, direction, curve))
    close(dsp.gain_ramp(xc, 0.3, 1.7), dsp.gain_ramp(x, 0.3, 1.7))
    close(dsp.gain_ramp(xc, 0.5, 0.5), dsp.gain_ramp(x, 0.5, 0.5))
    close(dsp.soft_limit(xc), dsp.soft_limit(x))
    close(dsp.soft_limit(xc * 0.1), dsp.soft_limit(x * 0.1))
    chunks = [hot((n, 2), n) for n in (500, 300, 1200)]
    close(dsp.stitch([cp.asarray(c) for c in chunks], 128, "linear"), dsp.stitch(chunks, 128, "linear"))
    st = dsp.Stitcher(64, "equal_power")
    ref = dsp.Stitcher(64, "equal_power")
    for c in chunks:
        close(st.push(cp.asarray(c)), ref.push(c))
    close(st.flush(), ref.flush())
    planar = np.ascontiguousarray(x.T)
    close(dsp.planar_to_interleaved(cp.asarray(planar)), dsp.planar_to_interleaved(planar))
    out = cp.empty((3000, 2), dtype=cp.float32)
    close(dsp.planar_to_interleaved(cp.asarray(planar), out=out), x)
    assert dsp.seam_jump(xc, [100, 2000], 8) == pytest.approx(dsp.seam_jump(x, [100, 2000], 8), abs=TOL)


def test_gpu_soft_limit_kernel_equals_core(cp):
    from dsp import gpu, soft_limit

    x = np.concatenate([np.linspace(-30, 30, 100001), [np.inf, -np.inf]]).astype(np.float32)
    y = gpu.soft_limit(cp.asarray(x), 0.97, 0.7)
    close(y, soft_limit(x, 0.97, 0.7))
    assert float(cp.abs(y).max()) <= np.float32(0.97)


def test_seam_metrics_on_cupy_equal_numpy(cp):
    from dsp.seams import seam_report

    x = hot((20000, 2), 3, 0.3)
    x[9000] += 0.5
    a = seam_report(cp.asarray(x), [5000, 9000], skip=64).as_dict()
    b = seam_report(x, [5000, 9000], skip=64).as_dict()
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-5, abs=TOL), k


# --------------------------------------------------------------------------- fused stitch-and-publish
@pytest.mark.parametrize("curve", ["linear", "equal_power"])
@pytest.mark.parametrize("capacity", [1024, 4096])
def test_fused_cupy_equals_numpy_twin(cp, curve, capacity):
    from dsp.fused import stitch_and_publish

    ch = 2
    lengths = [700, 96, 1000, 333, 1024, 200, 150]
    gains = [(1, 1), (1, .5), (.5, .5), (.5, 1.2), (1.2, 1.2), (1.2, 0), (0, 1)]
    ring_np = np.full((capacity, ch), np.nan, np.float32)
    ring_cp = cp.asarray(ring_np)
    start = capacity - 300
    for k, (n, (g0, g1)) in enumerate(zip(lengths, gains)):
        planar = hot((ch, n), 10 + k)
        prev = hot((ch, min(n, 96)), 30 + k) if k % 2 else None
        env = np.linspace(1, 0, n, dtype=np.float32) if k % 3 == 1 else None
        # every other chunk reaches the kernel as a transposed interleaved view (strided reads)
        chunk = cp.asarray(planar) if k % 2 else cp.ascontiguousarray(cp.asarray(planar).T).T
        a = stitch_and_publish(planar, ring_np, start, g0, g1, prev=prev, env=env, curve=curve)
        published = []
        b = stitch_and_publish(chunk, ring_cp, start, g0, g1, curve=curve, publish=published.append,
                               prev=None if prev is None else cp.asarray(prev),
                               env=None if env is None else cp.asarray(env))
        assert (a.frames, a.end) == (b.frames, b.end) and published == [b.end]
        got = cp.asnumpy(ring_cp)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ring_np))   # same frames touched
        close(np.nan_to_num(got), np.nan_to_num(ring_np))
        start = a.end


def test_fused_and_ring_fades_into_registered_dev_shm_ring(cp):
    from bridge.core.ring import RingWriter
    from dsp import gpu
    from dsp.fused import scale_ring, stitch_and_publish

    w = RingWriter.open(f"tgpu{os.getpid()}", 48000, 2, 4096)
    reg = None
    try:
        reg = gpu.register_host(w.data)
        twin = np.zeros_like(w.data)
        start = w.write_index + 4096 - 1000                     # wraps on the second chunk
        for k in range(6):
            planar = hot((2, 1900), 20 + k, 0.8)
            prev = hot((2, 480), 40 + k, 0.8)
            a = stitch_and_publish(planar, twin, start, 1.0, 0.8, prev=prev)
            b = stitch_and_publish(cp.asarray(planar), w.data, start, 1.0, 0.8, prev=cp.asarray(prev),
                                   publish=w.publish)
            assert w.write_index == b.end == a.end
            close(w.data, twin)                                  # the host sees the kernel's writes
            start = a.end
        g = np.cos(np.linspace(0, 1.5, 3000)).astype(np.float32)
        scale_ring(twin, start - 3000, g)
        scale_ring(w.data, start - 3000, cp.asarray(g))
        close(w.data, twin)
    finally:
        if reg is not None:
            reg.close()
        w.close()


def test_an_unregistered_host_ring_is_refused(cp):
    from dsp import gpu

    with pytest.raises(ValueError):
        gpu.device_view(np.zeros((1024, 2), np.float32))                 # never registered


# --------------------------------------------------------------------------- resampling
@pytest.mark.parametrize("rates", [(32000, 48000), (44100, 48000), (48000, 44100), (48000, 32000)])
def test_resample_cupy_equals_numpy_and_streams(cp, rates):
    from dsp.resample import Resampler, resample

    src, dst = rates
    x = hot((src // 2, 2), 7, 0.3)
    ref = resample(x, src, dst, engine="numpy")
    one = resample(cp.asarray(x), src, dst)
    close(one, ref)
    rs = Resampler(src, dst, 2)
    parts, i, k = [], 0, 0
    while i < x.shape[0]:
        n = (1, 64, 65, 8192, 8193)[k % 5]
        parts.append(rs.push(cp.asarray(x[i:i + n])))
        i, k = i + n, k + 1
    parts.append(rs.flush())
    assert rs.engine == "cupy"
    close(cp.concatenate(parts, axis=0), one)
