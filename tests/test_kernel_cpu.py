"""dsp.gpu's CUDA kernels, compiled for the CPU, equal the NumPy twins — no GPU needed.

The kernels are written as grid-stride loops, so one "thread" (block 0 of a 1 × 1 grid) covers a
whole launch. A small shim gives the CUDA names a C++ meaning (``__global__``, the thread
indices, the ``_rn`` intrinsics as plain IEEE operations, compiled without FMA contraction),
g++ builds ``dsp.gpu._SOURCE`` into a shared library, and each kernel is called through ctypes
with the arguments ``dsp.gpu``'s own builders make (``stitch_args`` and friends, given NumPy).
So the indexing, ring wrap-around, strides, crossfade, gain ramp, limiter, tail hand-back and
polyphase geometry of the code that will run on the GPU are checked here against NumPy to 1e-6;
what this cannot check (launch configuration, the device's libm, mapped memory) is left to
``tests/test_dsp_gpu.py`` on a GPU.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from dsp import gpu
from dsp.core import soft_limit
from dsp.fused import stitch_and_publish
from dsp.resample import _polyphase_numpy, design

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (make setup installs it)")

SHIM = r"""
#include <math.h>
struct wb_dim3 { unsigned int x, y, z; };
static const wb_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
static const wb_dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#define __global__
#define __restrict__ __restrict
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
"""

_CTYPES = {np.int64: ctypes.c_int64, np.uint64: ctypes.c_uint64, np.int32: ctypes.c_int32,
           np.float64: ctypes.c_double, np.float32: ctypes.c_float}


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("kernels")
    src = d / "wb_kernels.cpp"
    src.write_text(SHIM + gpu._SOURCE)
    so = d / "wb_kernels.so"
    p = subprocess.run(["g++", "-std=c++14", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-shared",
                        "-Wall", "-Werror", "-Wno-unused-function", "-o", str(so), str(src)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return ctypes.CDLL(str(so))


def launch(lib, name: str, args) -> None:
    """Call kernel ``name`` with ``args`` as built for CuPy: arrays by pointer, NumPy scalars by value."""
    types, vals = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            types.append(ctypes.c_void_p)
            vals.append(a.ctypes.data)
        else:
            t = _CTYPES[type(a)]
            types.append(t)
            vals.append(t(a.item()))
    fn = getattr(lib, name)
    fn.restype = None
    fn.argtypes = types
    fn(*vals)


def hot(shape, seed, scale=1.4):
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


CASES = [
    # (curve, channels, frames, xfade, has_prev, start_frame, gains, interleaved input)
    ("equal_power", 2, 3000, 2400, True, 5, (1.0, 0.9), False),
    ("linear", 2, 3000, 600, True, 1000, (0.5, 1.5), True),       # wraps; chunk = frames.T
    ("equal_power", 1, 777, 0, False, 3, (1.0, 1.0), False),
    ("linear", 2, 4096, 256, False, 4000, (2.0, 2.0), False),      # first chunk: tail held, no crossfade
    ("equal_power", 6, 1500, 1500, True, 2047, (1.0, 0.0), True),  # all of it held back
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}ch-xf{c[3]}-{'prev' if c[4] else 'first'}" for c in CASES])
def test_stitch_kernel_equals_the_numpy_twin(lib, case):
    curve, ch, n, xf, has_prev, start, (g0, g1), interleaved = case
    cap = 2048 if n < 2048 else 8192
    chunk = hot((n, ch), 1).T if interleaved else hot((ch, n), 1)
    prev = hot((ch, xf), 2) if has_prev else None
    ring_np = np.full((cap, ch), 7.0, dtype=np.float32)
    ring_k = ring_np.copy()
    ref = stitch_and_publish(prev, chunk, ring_np, start, xf, g0, g1, curve, 0.97, 0.7)
    p, args, tail = gpu.stitch_args(np, prev, chunk, ring_k, start, xf, g0, g1, curve, 0.97, 0.7)
    launch(lib, "wb_stitch_publish", args)
    assert p.emit == ref.frames
    np.testing.assert_allclose(ring_k, ring_np, rtol=0, atol=1e-6)
    assert (ring_k == 7.0).sum() == (ring_np == 7.0).sum()      # the same frames left untouched
    if xf:
        np.testing.assert_allclose(tail, ref.tail, rtol=0, atol=1e-6)
    else:
        assert tail is None and ref.tail is None


def test_stitch_kernel_writes_into_a_given_tail_buffer(lib):
    chunk, prev = hot((2, 1000), 3), hot((2, 200), 4)
    ring = np.zeros((1024, 2), dtype=np.float32)
    out = np.empty((2, 200), dtype=np.float32)
    _, args, tail = gpu.stitch_args(np, prev, chunk, ring, 0, 200, 1.0, 1.0, "linear", 0.97, 0.7, tail_out=out)
    launch(lib, "wb_stitch_publish", args)
    assert tail is out
    np.testing.assert_array_equal(out, chunk[:, 800:])                # raw, before gain


@pytest.mark.parametrize("start,n", [(0, 100), (1000, 48), (1020, 30), (5, 1024)])
def test_ring_store_kernel_wraps(lib, start, n):
    ring = np.zeros((1024, 2), dtype=np.float32)
    frames = hot((n, 2), 5)
    _, args = gpu.ring_store_args(np, frames, ring, start)
    launch(lib, "wb_ring_store", args)
    pos = (np.arange(start, start + n)) & 1023
    np.testing.assert_array_equal(ring[pos], frames)
    assert np.count_nonzero(ring.any(axis=1)) == min(n, 1024)


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
