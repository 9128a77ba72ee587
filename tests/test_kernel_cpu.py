"""dsp.gpu's CUDA kernels, compiled for the CPU, equal the NumPy twins — no GPU needed.

The kernels are written as grid-stride loops, so one "thread" (block 0 of a 1 × 1 grid) covers a
whole launch. A small shim gives the CUDA names a C++ meaning (``__global__``, the thread
indices, the ``_rn`` intrinsics as plain IEEE operations, compiled without FMA contraction; see
``tests/emulated_cupy.py``), g++ builds ``dsp.gpu._SOURCE`` into a shared library, and each kernel is called through ctypes
with the arguments ``dsp.gpu``'s own builders make (``stitch_args`` and friends, given NumPy).
So the indexing, ring wrap-around, strides, crossfade, gain ramp, limiter, envelope, ring fades and
polyphase geometry of the code that will run on the GPU are checked here against NumPy to 1e-6;
what this cannot check (launch configuration, the device's libm, mapped memory) is left to
``tests/test_dsp_gpu.py`` on a GPU.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from dsp import gpu
from dsp.core import soft_limit
from dsp.fused import stitch_and_publish
from dsp.resample import _polyphase_numpy, design

from emulated_cupy import build_kernels, launch  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (make setup installs it)")


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return build_kernels(gpu._SOURCE, tmp_path_factory.mktemp("kernels"))


def hot(shape, seed, scale=1.4):
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


CASES = [
    # (curve, channels, frames, crossfaded frames, envelope, start_frame, gains, interleaved input)
    ("equal_power", 2, 3000, 2400, True, 5, (1.0, 0.9), False),
    ("linear", 2, 3000, 600, False, 1000, (0.5, 1.5), True),       # wraps; chunk = frames.T
    ("equal_power", 1, 777, 0, False, 3, (1.0, 1.0), False),
    ("linear", 2, 2048, 256, True, 4000, (2.0, 2.0), False),
    ("equal_power", 6, 1500, 1500, False, 2047, (1.0, 0.0), True),  # all of it crossfaded
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}ch-xf{c[3]}-{'env' if c[4] else 'noenv'}" for c in CASES])
def test_stitch_kernel_equals_the_numpy_twin(lib, case):
    curve, ch, n, xf, with_env, start, (g0, g1), interleaved = case
    cap = 2048 if n <= 2048 else 8192
    chunk = hot((n, ch), 1).T if interleaved else hot((ch, n), 1)
    prev = hot((ch, xf), 2) if xf else None
    env = np.cos(np.linspace(0, 1.5, n)).astype(np.float32) if with_env else None
    ring_np = np.full((cap, ch), 7.0, dtype=np.float32)
    ring_k = ring_np.copy()
    ref = stitch_and_publish(chunk, ring_np, start, g0, g1, prev=prev, curve=curve, env=env)
    p, args = gpu.stitch_args(np, chunk, ring_k, start, g0, g1, prev, curve, env, 0.97, 0.7)
    launch(lib, "wb_stitch_publish", args)
    assert p.n == ref.frames == n
    np.testing.assert_allclose(ring_k, ring_np, rtol=0, atol=1e-6)
    assert (ring_k == 7.0).sum() == (ring_np == 7.0).sum()      # the same frames left untouched
    assert np.abs(ring_k[ring_k != 7.0]).max() <= 0.97           # the crossfade's mix is limited too


@pytest.mark.parametrize("start,n", [(0, 100), (1000, 48), (1020, 30), (5, 1024)])
def test_ring_scale_kernel_equals_the_numpy_twin(lib, start, n):
    from dsp.fused import scale_ring

    ring_np = hot((1024, 2), 5)
    ring_k = ring_np.copy()
    gains = np.cos(np.linspace(0, 1.57, n)).astype(np.float32)
    scale_ring(ring_np, start, gains)
    _, args = gpu.ring_scale_args(np, ring_k, start, gains)
    launch(lib, "wb_ring_scale", args)
    np.testing.assert_allclose(ring_k, ring_np, rtol=0, atol=1e-7)
    pos = (np.arange(start, start + n)) & 1023
    untouched = np.setdiff1d(np.arange(1024), pos)
    np.testing.assert_array_equal(ring_k[untouched], hot((1024, 2), 5)[untouched])


def test_soft_limit_kernel_equals_core(lib):
    x = hot((3, 5000), 6, scale=2.0)
    y, args = gpu.soft_limit_args(np, x, 0.97, 0.7)
    launch(lib, "wb_soft_limit", args)
    np.testing.assert_allclose(y, soft_limit(x, 0.97, 0.7), rtol=0, atol=1e-6)
    assert np.abs(y).max() <= 0.97


@pytest.mark.parametrize("rates", [(32000, 48000), (48000, 44100), (44100, 48000)])
def test_polyphase_kernel_equals_the_numpy_engine(lib, rates):
    L, M, J, H = design(*rates)
    n_in = 3000
    hist = hot((n_in, 2), 7, scale=0.5)                  # input frames 0 … n_in − 1
    # output m reads inputs ⌊m·M/L⌋ − J + 1 … ⌊m·M/L⌋ + J: keep every one of them inside hist
    m0 = -(-(J - 1) * L // M) + 3
    count = (n_in - 1 - J) * L // M - m0
    ref = _polyphase_numpy(hist.astype(np.float64), 0, H, L, M, J, m0, count)
    y, args = gpu.polyphase_args(np, hist, 0, np.ascontiguousarray(H), L, M, J, m0, count)
    launch(lib, "wb_polyphase", args)
    assert count > 1000
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-6)


def test_arguments_are_checked_against_the_kernel_signature(lib):
    """CuPy packs a scalar by its NumPy size: a builder that passed int64 for an ``int`` parameter
    would shift every later argument on a GPU. The launcher here refuses it, so the tests above
    hold the builders to the kernels' C signatures."""
    ring = np.zeros((1024, 2), dtype=np.float32)
    _, args = gpu.ring_scale_args(np, ring, 0, np.ones(10, np.float32))
    bad = args[:5] + (np.int64(args[5]),)
    with pytest.raises(TypeError, match="wants int32"):
        launch(lib, "wb_ring_scale", bad)
    with pytest.raises(TypeError, match="float32 array"):
        launch(lib, "wb_ring_scale", (args[0].astype(np.float64),) + args[1:])
    assert [k for k, _ in lib.signatures["wb_stitch_publish"]].count("ptr") == 4
