"""CuPy kernels for dsp: the fused write into a ring, fades over a ring, soft limiter, resampling.

Owns the device side of ``dsp``: four RawKernels in one module compiled once by
:func:`warmup`, and the registration of a ring's shared-memory data region with the CUDA runtime
(:class:`HostRegistration`: ``cudaHostRegister`` with the *mapped* flag, then the region's device
address from ``cudaPointerGetAttributes`` wrapped as a CuPy array through ``UnownedMemory``). A
kernel then writes interleaved frames straight into ``/dev/shm``; the host publishes
``write_index`` after the stream is synchronized (kernel completion makes the mapped writes
visible to the CPU; the index store is then ordered after them on x86-64).

Importing this module does not import CuPy (it installs without a GPU but fails at the first
allocation); the first call that needs it does. :func:`available` says whether a device works.
Every function here is NumPy-twinned: ``dsp.fused`` (stitch and publish, ring fades), ``dsp.core``
(soft limiter) and ``dsp.resample`` (polyphase) hold the reference, and every kernel is on the
daemon's device path: ``wb_stitch_publish`` writes every chunk (gain, splice crossfade, limiter,
stop envelope, store), ``wb_ring_scale`` fades audio already in the ring at a stop,
``wb_soft_limit`` limits the replaced job's crossfade material, ``wb_polyphase`` resamples to
the host's rate, and the GPU tests hold the
two to 1e-6. Threading: kernels run on the caller's current CuPy stream; call from the
``[engine]`` thread, register and warm up from ``[control]`` at start.
"""
from __future__ import annotations

import mmap
import threading

import numpy as np

from dsp.plan import Published, plan

# cudaHostRegister flags (driver_types.h); CuPy exposes the call, not these names.
HOST_REGISTER_PORTABLE = 1
HOST_REGISTER_MAPPED = 2
_ERR_ALREADY_REGISTERED = 712      # cudaErrorHostMemoryAlreadyRegistered
_BLOCK = 256
_MAX_GRID = 4096                   # grid-stride loops cover the rest

_SOURCE = r"""
#define WB_HALF_PI 1.5707963267948966

// One thread per (frame, channel) of the chunk, in interleaved order so ring stores coalesce.
// dsp.fused.stitch_and_publish step by step: gain ramp, crossfade from prev over the first xf
// frames, limiter, envelope, store. Arithmetic mirrors dsp.core with round-to-nearest
// intrinsics (no FMA contraction), so results equal NumPy's to float32 rounding of cos/sin/tanh.
extern "C" __global__ void wb_stitch_publish(
    const float* __restrict__ chunk, const long long ch_cs, const long long ch_fs,
    const float* __restrict__ prev, const long long pv_cs, const long long pv_fs,
    const float* __restrict__ env, const int has_env,
    float* ring, const unsigned long long pos0, const unsigned long long mask,
    const long long n, const int C, const long long xf, const int equal_power,
    const double g0, const double gstep, const float thr, const float span)
{
    const long long total = n * (long long)C;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / C;
        const int c = (int)(idx - i * C);
        const float g = (float)__dadd_rn(__dmul_rn((double)i, gstep), g0);
        float v = __fmul_rn(chunk[c * ch_cs + i * ch_fs], g);
        if (i < xf) {
            const double t = ((double)i + 0.5) / (double)xf;
            float g_out, g_in;
            if (equal_power) {
                g_out = (float)cos(t * WB_HALF_PI);
                g_in = (float)sin(t * WB_HALF_PI);
            } else {
                g_out = (float)(1.0 - t);
                g_in = (float)t;
            }
            v = __fadd_rn(__fmul_rn(prev[c * pv_cs + i * pv_fs], g_out), __fmul_rn(v, g_in));
        }
        const float a = fabsf(v);
        if (a > thr) {
            v = copysignf(__fadd_rn(thr, __fmul_rn(span, tanhf(__fdiv_rn(__fsub_rn(a, thr), span)))), v);
        }
        if (has_env) v = __fmul_rn(v, env[i]);
        ring[((pos0 + (unsigned long long)i) & mask) * (unsigned long long)C + c] = v;
    }
}

// Ring frames pos0.. (wrapping, through the mapped pointer) times one gain per frame: a stop's
// fade over audio already stored.
extern "C" __global__ void wb_ring_scale(
    float* ring, const unsigned long long pos0, const unsigned long long mask,
    const float* __restrict__ gains, const long long n, const int C)
{
    const long long total = n * (long long)C;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / C;
        const int c = (int)(idx - i * C);
        float* p = ring + ((pos0 + (unsigned long long)i) & mask) * (unsigned long long)C + c;
        *p = __fmul_rn(*p, gains[i]);
    }
}

// dsp.core.soft_limit, elementwise over a contiguous float32 buffer (same rounding as the stitch).
extern "C" __global__ void wb_soft_limit(
    const float* __restrict__ x, float* __restrict__ y, const long long n, const float thr, const float span)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float v = x[i];
        const float a = fabsf(v);
        y[i] = (a > thr) ? copysignf(__fadd_rn(thr, __fmul_rn(span, tanhf(__fdiv_rn(__fsub_rn(a, thr), span)))), v)
                         : v;
    }
}

// Polyphase windowed-sinc resampler, one thread per (output frame, channel); see
// dsp.resample for the geometry. hist holds input frames k_base.. interleaved (len, C).
extern "C" __global__ void wb_polyphase(
    const float* __restrict__ hist, const long long k_base, const int C,
    const double* __restrict__ H, const int taps, const long long L, const long long M,
    const int J, const long long m0, const long long count, float* __restrict__ y)
{
    const long long total = count * (long long)C;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long q = idx / C;
        const int c = (int)(idx - q * C);
        const long long t = (m0 + q) * M;
        const long long k = t / L;
        const long long p = t - k * L;
        const float* x = hist + (k - J + 1 - k_base) * C + c;
        const double* h = H + p * taps;
        double acc = 0.0;
        for (int j = 0; j < taps; ++j) acc += (double)x[(long long)j * C] * h[j];
        y[idx] = (float)acc;
    }
}
"""

# Every kernel in _SOURCE, compiled together (tests/test_kernel_source.py compiles them with NVRTC
# on machines without a GPU).
KERNEL_NAMES = ("wb_stitch_publish", "wb_ring_scale", "wb_soft_limit", "wb_polyphase")

_lock = threading.Lock()
_cp = None
_available = None
_kernels = None
_registry: dict[int, "HostRegistration"] = {}


def cupy():
    """Import CuPy on first use (never at module import)."""
    global _cp
    if _cp is None:
        import cupy

        _cp = cupy
    return _cp


def available() -> bool:
    """True when CuPy imports, sees a device and can allocate on it (cached). ``[control]``"""
    global _available
    if _available is None:
        try:
            cp = cupy()
            ok = cp.cuda.runtime.getDeviceCount() > 0
            if ok:
                probe = cp.arange(4, dtype=cp.float32) + 1
                ok = float(probe.sum()) == 10.0
            _available = bool(ok)
        except Exception:
            _available = False
    return _available


class _Kernels:
    def __init__(self, cp):
        module = cp.RawModule(code=_SOURCE)        # one NVRTC compile for all four
        self.stitch, self.ring_scale, self.soft_limit, self.polyphase = (
            module.get_function(name) for name in KERNEL_NAMES)


def kernels() -> _Kernels:
    """The compiled kernels (compiles on first use if :func:`warmup` was not called)."""
    global _kernels
    if _kernels is None:
        with _lock:
            if _kernels is None:
                _kernels = _Kernels(cupy())
    return _kernels


def warmup() -> None:
    """Compile every kernel and run each once so the first real chunk pays nothing. ``[control]``"""
    cp = cupy()
    kernels()
    ring = cp.zeros((8, 2), dtype=cp.float32)
    chunk = cp.zeros((2, 6), dtype=cp.float32)
    stitch_and_publish(chunk, ring, 6, 1.0, 0.5, prev=cp.zeros((2, 2), dtype=cp.float32),
                       env=cp.ones(6, dtype=cp.float32))
    scale_ring(ring, 7, cp.ones(3, dtype=cp.float32))
    soft_limit(cp.ones(4, dtype=cp.float32))
    polyphase(cp.zeros((8, 2), dtype=cp.float32), 0, cp.full((1, 2), 0.5), 1, 1, 1, 0, 4)
    cp.cuda.get_current_stream().synchronize()


def _grid(total: int) -> tuple[int]:
    return (max(1, min(_MAX_GRID, (total + _BLOCK - 1) // _BLOCK)),)


# ------------------------------------------------------------------------ host registration
class HostRegistration:
    """A host array (e.g. ``RingWriter.data``) page-locked, mapped and visible to kernels. ``[control]``

    ``device`` is a CuPy array of the same shape over the same bytes. Register once when the
    ring opens, :meth:`close` before the ring's mapping is closed (an unmapped but still
    registered range stays pinned; a registered view also keeps ``mmap.close`` from
    succeeding). Also a context manager.
    """

    def __init__(self, host: np.ndarray):
        cp = cupy()
        if not isinstance(host, np.ndarray) or not host.flags.c_contiguous:
            raise ValueError("register_host needs a C-contiguous numpy array")
        self.host = host
        self.ptr = int(host.__array_interface__["data"][0])
        self.nbytes = int(host.nbytes)
        page = mmap.PAGESIZE
        self._base = self.ptr & ~(page - 1)
        size = ((self.ptr + self.nbytes + page - 1) & ~(page - 1)) - self._base
        rt = cp.cuda.runtime
        self._owned = False
        try:
            rt.hostRegister(self._base, size, HOST_REGISTER_PORTABLE | HOST_REGISTER_MAPPED)
            self._owned = True
        except rt.CUDARuntimeError as e:   # registered by someone else: use theirs, never unregister it
            if getattr(e, "status", None) != _ERR_ALREADY_REGISTERED:
                raise
        dptr = int(rt.pointerGetAttributes(self._base).devicePointer) + (self.ptr - self._base)
        self.device_pointer = dptr
        mem = cp.cuda.UnownedMemory(dptr, self.nbytes, self, device_id=rt.getDevice())
        self.device = cp.ndarray(host.shape, dtype=host.dtype, memptr=cp.cuda.MemoryPointer(mem, 0),
                                 strides=host.strides)
        _registry.setdefault(self.ptr, self)

    def close(self) -> None:
        """Wait for the device, then unregister (idempotent). ``[control]``"""
        if self.device is None:
            return
        cp = cupy()
        cp.cuda.runtime.deviceSynchronize()
        if _registry.get(self.ptr) is self:
            del _registry[self.ptr]
        self.device = None
        self.host = None            # let the ring's mmap close
        if self._owned:
            cp.cuda.runtime.hostUnregister(self._base)
            self._owned = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def register_host(host: np.ndarray) -> HostRegistration:
    """Register ``host`` (e.g. ``RingWriter.data``) with CUDA; see :class:`HostRegistration`. ``[control]``"""
    return HostRegistration(host)


def device_view(ring_data):
    """The device-addressable CuPy array for ``ring_data`` (a CuPy array, or a registered NumPy one)."""
    cp = cupy()
    if isinstance(ring_data, cp.ndarray):
        return ring_data
    if isinstance(ring_data, np.ndarray):
        reg = _registry.get(int(ring_data.__array_interface__["data"][0]))
        if reg is not None and reg.device is not None and reg.host.shape == ring_data.shape:
            return reg.device
        raise ValueError("this NumPy ring is not registered with CUDA: call dsp.gpu.register_host(ring.data) "
                         "when the ring opens")
    raise TypeError(f"ring_data must be a cupy or a registered numpy array, not {type(ring_data).__name__}")


def _elem_strides(a) -> tuple[int, int]:
    s0, s1 = (int(s) // a.itemsize for s in a.strides)
    return s0, s1


# ------------------------------------------------------------------------ launch arguments
# One builder per kernel, generic over the array module ``xp``: CuPy here, NumPy in
# tests/test_kernel_cpu.py, which runs this module's CUDA source compiled for the CPU with the
# very arguments built below (so argument order, strides and geometry are tested without a GPU).
def stitch_args(xp, chunk, ring, start_frame: int, gain0: float, gain1: float, prev, curve: str, env,
                ceiling: float, knee: float):
    """``(plan, args)`` for ``wb_stitch_publish``; ``ring`` is already device-addressable."""
    if not isinstance(chunk, xp.ndarray) or chunk.dtype != xp.float32:
        chunk = xp.asarray(chunk, dtype=xp.float32)
    if ring.dtype != xp.float32 or not ring.flags.c_contiguous:
        raise ValueError("ring_data must be C-contiguous float32")
    if prev is not None and (not isinstance(prev, xp.ndarray) or prev.dtype != xp.float32 or min(prev.strides) < 0):
        prev = xp.ascontiguousarray(xp.asarray(prev, dtype=xp.float32))
    if env is not None:
        env = xp.ascontiguousarray(xp.asarray(env, dtype=xp.float32))
    p = plan(chunk, ring, start_frame, prev, env, curve)
    if min(chunk.strides) < 0:
        chunk = xp.ascontiguousarray(chunk)
    ch_cs, ch_fs = _elem_strides(chunk)
    if prev is not None and p.xfade:
        pv_cs, pv_fs = _elem_strides(prev)
    else:
        prev, pv_cs, pv_fs = chunk, 0, 0     # never read (xf = 0); a valid pointer all the same
    g0 = float(gain0)
    gstep = (float(gain1) - g0) / p.n if p.n and float(gain1) != g0 else 0.0
    thr = np.float32(knee * ceiling)
    span = np.float32(ceiling - knee * ceiling)
    args = (chunk, np.int64(ch_cs), np.int64(ch_fs), prev, np.int64(pv_cs), np.int64(pv_fs),
            env if env is not None else chunk, np.int32(env is not None),       # no env: never read
            ring, np.uint64(p.pos0), np.uint64(p.mask),
            np.int64(p.n), np.int32(p.channels), np.int64(p.xfade), np.int32(curve == "equal_power"),
            np.float64(g0), np.float64(gstep), thr, span)
    return p, args


def ring_scale_args(xp, ring, start_frame: int, gains):
    """``(n, args)`` for ``wb_ring_scale``: ring frames ``start_frame…`` times ``gains``."""
    gains = xp.ascontiguousarray(xp.asarray(gains, dtype=xp.float32))
    n, cap, ch = int(gains.shape[0]), int(ring.shape[0]), int(ring.shape[1])
    if ring.dtype != xp.float32 or not ring.flags.c_contiguous or cap & (cap - 1):
        raise ValueError(f"ring {tuple(ring.shape)} must be C-contiguous float32 with a power-of-two capacity")
    if gains.ndim != 1 or n > cap:
        raise ValueError(f"{n} gains do not fit a ring of {cap} frames")
    return n, (ring, np.uint64(int(start_frame) & (cap - 1)), np.uint64(cap - 1), gains, np.int64(n), np.int32(ch))


def soft_limit_args(xp, x, ceiling: float, knee: float):
    """``(y, args)`` for ``wb_soft_limit`` over float32 ``x`` (made contiguous)."""
    x = xp.ascontiguousarray(x)
    y = xp.empty_like(x)
    return y, (x, y, np.int64(x.size), np.float32(knee * ceiling), np.float32(ceiling - knee * ceiling))


def polyphase_args(xp, hist, k_base: int, H_dev, L: int, M: int, J: int, m0: int, count: int):
    """``(y, args)`` for ``wb_polyphase``; see :func:`polyphase`."""
    ch = int(hist.shape[1])
    y = xp.empty((int(count), ch), dtype=xp.float32)
    return y, (hist, np.int64(k_base), np.int32(ch), H_dev, np.int32(H_dev.shape[1]),
               np.int64(L), np.int64(M), np.int32(J), np.int64(m0), np.int64(count), y)


# ------------------------------------------------------------------------ fused path
def stitch_and_publish(chunk, ring_data, start_frame: int, gain0: float = 1.0, gain1: float = 1.0, *,
                       prev=None, curve: str = "equal_power", env=None, ceiling: float = 0.97,
                       knee: float = 0.7, publish=None, sync: bool = True) -> Published:
    """CuPy form of :func:`dsp.fused.stitch_and_publish`: one kernel launch, then sync. ``[engine]``

    ``ring_data`` is a registered NumPy ring (see :func:`register_host`) or a device array.
    With ``sync=False`` the caller must synchronize the current stream before publishing
    (``publish`` is then refused).
    """
    cp = cupy()
    if publish is not None and not sync:
        raise ValueError("publish needs sync=True: the audio must be in the ring before write_index moves")
    p, args = stitch_args(cp, chunk, device_view(ring_data), start_frame, gain0, gain1, prev, curve, env,
                          ceiling, knee)
    total = p.n * p.channels
    if total:
        kernels().stitch(_grid(total), (_BLOCK,), args)
    if sync:
        cp.cuda.get_current_stream().synchronize()
    end = int(start_frame) + p.n
    if publish is not None:
        publish(end)
    return Published(p.n, end)


def scale_ring(ring_data, start_frame: int, gains, publish=None) -> int:
    """CuPy form of :func:`dsp.fused.scale_ring`: ring frames times ``gains`` in one kernel, then sync. ``[engine]``"""
    cp = cupy()
    ring = device_view(ring_data)
    n, args = ring_scale_args(cp, ring, start_frame, gains)
    if n:
        kernels().ring_scale(_grid(n * int(ring.shape[1])), (_BLOCK,), args)
    cp.cuda.get_current_stream().synchronize()
    if publish is not None:
        publish(int(start_frame) + n)
    return n


# ------------------------------------------------------------------------ other dsp functions
def soft_limit(x, ceiling: float = 0.97, knee: float = 0.7):
    """``dsp.core.soft_limit`` as one kernel (no host sync; float32 only). ``[engine]``

    ``dsp.core.soft_limit`` also runs on CuPy but reads ``over.any()`` back to the host.
    """
    cp = cupy()
    if not isinstance(x, cp.ndarray) or x.dtype != cp.float32:
        from dsp.core import soft_limit as ref

        return ref(x, ceiling, knee)
    y, args = soft_limit_args(cp, x, ceiling, knee)
    if y.size:
        kernels().soft_limit(_grid(y.size), (_BLOCK,), args)
    return y


def polyphase(hist, k_base: int, H_dev, L: int, M: int, J: int, m0: int, count: int):
    """Outputs ``m0 … m0+count`` of a polyphase resampler (see ``dsp.resample``). ``[engine]``

    ``hist`` is a C-contiguous float32 ``(len, channels)`` device array of input frames
    ``k_base…``; ``H_dev`` the float64 ``(L, taps)`` device table.
    """
    cp = cupy()
    y, args = polyphase_args(cp, hist, k_base, H_dev, L, M, J, m0, count)
    if count:
        kernels().polyphase(_grid(int(count) * int(hist.shape[1])), (_BLOCK,), args)
    return y
