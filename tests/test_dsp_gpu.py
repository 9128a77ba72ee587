"""CuPy == NumPy for dsp (within 1e-6), and the fused path into a real registered /dev/shm ring.

Each test runs twice: on a GPU (marked ``gpu``; skipped cleanly when CuPy is missing or no CUDA
device can allocate; ``python3 -m pytest -m gpu tests/test_dsp_gpu.py``, as ``scripts/gpu-check``
does) and on ``tests/emulated_cupy.py`` everywhere (the kernels compiled for the CPU, host memory
as device memory: the logic around the kernels, not the device).
Imports of ours: ``dsp`` and ``bridge.ring`` only.
"""
from __future__ import annotations

import mmap
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

    xf, ch = 96, 2
    lengths = [700, 96, 1000, 333, 1024 + 96, 200, 150]
    gains = [(1, 1), (1, .5), (.5, .5), (.5, 1.2), (1.2, 1.2), (1.2, 0), (0, 1)]
    ring_np = np.full((capacity, ch), np.nan, np.float32)
    ring_cp = cp.asarray(ring_np)
    tail_np = tail_cp = None
    start = capacity - 300
    for k, (n, (g0, g1)) in enumerate(zip(lengths, gains)):
        planar = hot((ch, n), 10 + k)
        # every other chunk reaches the kernel as a transposed interleaved view (strided reads)
        chunk = cp.asarray(planar) if k % 2 else cp.ascontiguousarray(cp.asarray(planar).T).T
        a = stitch_and_publish(tail_np, planar, ring_np, start, xf, g0, g1, curve, 0.97, 0.7)
        published = []
        b = stitch_and_publish(tail_cp, chunk, ring_cp, start, xf, g0, g1, curve, 0.97, 0.7,
                               publish=published.append)
        assert (a.frames, a.end) == (b.frames, b.end) and published == [b.end]
        assert isinstance(b.tail, cp.ndarray)
        got = cp.asnumpy(ring_cp)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ring_np))   # same frames touched
        close(np.nan_to_num(got), np.nan_to_num(ring_np))
        close(b.tail, a.tail)
        tail_np, tail_cp, start = a.tail, b.tail, a.end
    a = stitch_and_publish(None, tail_np, ring_np, start, 0)
    b = stitch_and_publish(None, tail_cp, ring_cp, start, 0)
    assert b.tail is None
    close(np.nan_to_num(cp.asnumpy(ring_cp)), np.nan_to_num(ring_np))


def test_fused_into_registered_dev_shm_ring(cp):
    from bridge.ring import RingWriter
    from dsp import gpu
    from dsp.fused import stitch_and_publish

    w = RingWriter.open(f"tgpu{os.getpid()}", 48000, 2, 4096)
    reg = None
    try:
        reg = gpu.register_host(w.data)
        twin = np.zeros_like(w.data)
        tail_cp = tail_np = None
        start = w.write_index + 4096 - 1000                     # wraps on the second chunk
        tails = [cp.empty((2, 480), dtype=cp.float32) for _ in range(2)]
        for k in range(6):
            planar = hot((2, 2400), 20 + k, 0.8)
            a = stitch_and_publish(tail_np, planar, twin, start, 480, 1.0, 0.8, "equal_power")
            b = stitch_and_publish(tail_cp, cp.asarray(planar), w.data, start, 480, 1.0, 0.8, "equal_power",
                                   publish=w.publish, tail_out=tails[k % 2])
            assert w.write_index == b.end == a.end
            close(w.data, twin)                                  # the host sees the kernel's writes
            tail_np, tail_cp, start = a.tail, b.tail, a.end
    finally:
        if reg is not None:
            reg.close()
        w.close()


def test_store_to_ring_wraps_with_memcpy_and_kernel(cp):
    from dsp import gpu

    mm = mmap.mmap(-1, 4096 + 1024 * 2 * 4)
    host = np.frombuffer(mm, dtype=np.float32, count=1024 * 2, offset=4096).reshape(1024, 2)
    frames = hot((300, 2), 5)
    with gpu.register_host(host) as reg:
        for method in ("memcpy", "kernel"):
            host[:] = 0
            gpu.store_to_ring(cp.asarray(frames), host, 7 * 1024 + 900, method=method)
            np.testing.assert_array_equal(np.concatenate([host[900:], host[:176]]), frames)
            assert not host[176:900].any()
            gpu.store_to_ring(cp.asarray(frames[:10]), reg.device, 0, method=method)
            np.testing.assert_array_equal(host[:10], frames[:10])
    del host
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
