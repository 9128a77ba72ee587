"""Just enough of CuPy, on the CPU, to drive the daemon's device path without a GPU.

"Device" arrays are a NumPy subclass whose type says ``cupy`` (so ``dsp.array_module`` and the
scheduler treat them as device arrays); the runtime calls the path makes (host registration,
pointer attributes, async copies, stream syncs) act on host memory; and ``RawModule`` compiles
``dsp.gpu``'s CUDA source for the CPU with the shim of ``tests/test_kernel_cpu.py`` and calls the
kernels through ctypes. What this proves is the daemon's and ``dsp.gpu``'s logic on that path
(which chunks go to the device, tails, gains, fades, publishing after the sync); what it cannot
prove (the device, mapped memory, launch geometry) stays with the ``gpu`` tests. Nor does it
catch an implicit device → host conversion (``np.asarray`` of a device array): real CuPy raises
there, but these arrays are a NumPy subclass. Kernel launches are checked against the kernels'
C signatures, argument by argument, as CuPy would pack them.

``install(monkeypatch, build_dir)`` puts it in ``sys.modules["cupy"]`` and resets ``dsp.gpu``'s
cached state; the monkeypatch undoes both.
"""
from __future__ import annotations

import ctypes
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

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

# C parameter types → (NumPy type of the launch argument, ctypes type); pointers take arrays
_C_TYPES = {"long long": (np.int64, ctypes.c_int64), "unsigned long long": (np.uint64, ctypes.c_uint64),
            "int": (np.int32, ctypes.c_int32), "float": (np.float32, ctypes.c_float),
            "double": (np.float64, ctypes.c_double)}
_C_POINTERS = {"float": np.float32, "double": np.float64}


def kernel_signatures(source: str) -> dict[str, list[tuple[str, object]]]:
    """``{kernel: [("ptr", dtype) | ("val", numpy type), …]}`` from the ``extern "C"`` kernels of ``source``."""
    sigs = {}
    for m in re.finditer(r'extern "C" __global__ void (\w+)\s*\(([^)]*)\)', source):
        params = []
        for decl in m.group(2).split(","):
            words = decl.replace("*", " * ").split()
            words = [w for w in words if w not in ("const", "__restrict__")][:-1]   # drop the name
            if words[-1] == "*":
                params.append(("ptr", _C_POINTERS[" ".join(words[:-1])]))
            else:
                params.append(("val", _C_TYPES[" ".join(words)][0]))
        sigs[m.group(1)] = params
    return sigs


class Kernels:
    """The compiled library and the kernels' C signatures."""

    def __init__(self, lib: ctypes.CDLL, source: str):
        self.lib = lib
        self.signatures = kernel_signatures(source)


def build_kernels(source: str, build_dir) -> Kernels:
    """``source`` (CUDA, grid-stride kernels) behind the shim, compiled by g++ into a library."""
    d = Path(build_dir)
    d.mkdir(parents=True, exist_ok=True)
    src, so = d / "wb_kernels.cpp", d / "wb_kernels.so"
    src.write_text(SHIM + source)
    p = subprocess.run(["g++", "-std=c++14", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-shared",
                        "-Wall", "-Werror", "-Wno-unused-function", "-o", str(so), str(src)],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"g++ could not build the kernels:\n{p.stderr}")
    return Kernels(ctypes.CDLL(str(so)), source)


def launch(kernels: Kernels, name: str, args) -> None:
    """Call kernel ``name`` with launch ``args`` after checking them against its C signature.

    Each argument must be what CuPy would pack for that parameter: an array of the pointee's
    dtype for a pointer, a NumPy scalar of exactly the parameter's width otherwise (CuPy packs a
    scalar by its NumPy size, so an ``np.int64`` for an ``int`` shifts every later argument on a GPU).
    """
    sig = kernels.signatures[name]
    if len(args) != len(sig):
        raise TypeError(f"{name}: {len(args)} arguments for {len(sig)} parameters")
    tys, vals = [], []
    for i, (a, (kind, want)) in enumerate(zip(args, sig)):
        if kind == "ptr":
            if not isinstance(a, np.ndarray) or a.dtype != want:
                raise TypeError(f"{name} argument {i}: wants a {np.dtype(want)} array, got {type(a).__name__} "
                                f"{getattr(a, 'dtype', '')}")
            tys.append(ctypes.c_void_p)
            vals.append(a.ctypes.data)
        else:
            if type(a) is not want:
                raise TypeError(f"{name} argument {i}: wants {want.__name__}, got {type(a).__name__}")
            t = _C_TYPES[next(k for k, v in _C_TYPES.items() if v[0] is want)][1]
            tys.append(t)
            vals.append(t(a.item()))
    fn = getattr(kernels.lib, name)
    fn.restype = None
    fn.argtypes = tys
    fn(*vals)


class _EmulatedDevice:
    id = 0

    def synchronize(self):
        pass


class _Data:
    def __init__(self, ptr: int):
        self.ptr = ptr


class ndarray(np.ndarray):
    """A "device" array: host memory, typed as CuPy's."""

    __module__ = "cupy"

    def __new__(cls, shape, dtype=np.float32, memptr=None, strides=None):
        if memptr is None:
            return np.empty(shape, dtype).view(cls)
        dtype = np.dtype(dtype)
        n = int(np.prod(shape))
        buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(memptr.ptr)
        return np.ndarray(shape, dtype, buffer=buf, strides=strides).view(cls)

    @property
    def data(self):                                   # CuPy: .data.ptr is the device address
        return _Data(self.ctypes.data)

    @property
    def device(self):                                 # CuPy: the cupy.cuda.Device holding it
        return _EmulatedDevice()

    def get(self, stream=None, out=None):
        """Device → host copy (into ``out`` if given)."""
        host = np.asarray(self).view(np.ndarray)
        if out is None:
            return host.copy()
        out[...] = host
        return out


def _dev(a):
    if isinstance(a, np.ndarray):
        return a.view(ndarray)
    if isinstance(a, tuple):
        return tuple(_dev(x) for x in a)
    return a


def _numpy_attr(name: str):
    """The rest of CuPy's NumPy-like API: NumPy's function, its array results typed as device arrays."""
    f = getattr(np, name)
    if not callable(f) or isinstance(f, type):
        return f

    def call(*args, **kw):
        return _dev(f(*args, **kw))

    return call


def make_module(lib_factory) -> types.ModuleType:
    cp = types.ModuleType("cupy")
    cp.__version__ = "emulated"
    cp.ndarray = ndarray
    cp.float32, cp.float64, cp.int64 = np.float32, np.float64, np.int64
    # like CuPy: host data is copied to the "device"; a device array of the right dtype is kept
    cp.asarray = lambda a, dtype=None: _dev(np.array(a, dtype=dtype, copy=None if isinstance(a, ndarray) else True))
    cp.ascontiguousarray = lambda a, dtype=None: _dev(np.ascontiguousarray(a, dtype=dtype))
    cp.empty = lambda shape, dtype=np.float32: _dev(np.empty(shape, dtype))
    cp.zeros = lambda shape, dtype=np.float32: _dev(np.zeros(shape, dtype))
    cp.full = lambda shape, v, dtype=None: _dev(np.full(shape, v, dtype))
    cp.ones = lambda shape, dtype=np.float32: _dev(np.ones(shape, dtype))
    cp.arange = lambda *a, dtype=None: _dev(np.arange(*a, dtype=dtype))
    cp.empty_like = lambda a: _dev(np.empty_like(a))
    cp.concatenate = lambda xs, axis=0: _dev(np.concatenate([np.asarray(x) for x in xs], axis=axis))
    cp.asnumpy = lambda a: np.array(np.asarray(a).view(np.ndarray), copy=True)
    cp.from_dlpack = lambda t: _dev(np.from_dlpack(t))      # a CPU torch tensor, shared

    class Stream:
        ptr = 0

        def synchronize(self):
            pass

    class Device:
        def __init__(self, i=0):
            pass

        def synchronize(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *e):
            pass

    class CUDARuntimeError(RuntimeError):
        def __init__(self, status):
            super().__init__(status)
            self.status = status

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, getDevice=lambda: 0, deviceSynchronize=lambda: None,
        hostRegister=lambda ptr, size, flags: None, hostUnregister=lambda ptr: None,
        pointerGetAttributes=lambda ptr: types.SimpleNamespace(devicePointer=ptr),
        memcpyAsync=lambda dst, src, size, kind, stream: ctypes.memmove(dst, src, size),
        getDeviceProperties=lambda i: {"name": b"emulated"},
        CUDARuntimeError=CUDARuntimeError)

    class UnownedMemory:
        def __init__(self, ptr, size, owner, device_id=-1):
            self.ptr, self.size, self.owner = ptr, size, owner

    class MemoryPointer:
        def __init__(self, mem, offset):
            self.mem, self.ptr = mem, mem.ptr + offset

    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=Device, UnownedMemory=UnownedMemory,
                                    MemoryPointer=MemoryPointer, get_current_stream=lambda: Stream())

    class RawModule:
        def __init__(self, code: str, **kw):
            self.lib = lib_factory(code)

        def get_function(self, name):
            lib = self.lib
            return lambda grid, block, args: launch(lib, name, args)

    cp.RawModule = RawModule
    cp.__getattr__ = _numpy_attr          # PEP 562: whatever is not defined above
    return cp


def install(monkeypatch, build_dir):
    """Make ``import cupy`` give the emulation for one test; returns the module."""
    from dsp import gpu

    libs = {}

    def lib_for(code):
        if code not in libs:
            libs[code] = build_kernels(code, Path(build_dir) / f"k{len(libs)}")
        return libs[code]

    cp = make_module(lib_for)
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(gpu, "_cp", None)
    monkeypatch.setattr(gpu, "_available", None)
    monkeypatch.setattr(gpu, "_kernels", None)
    monkeypatch.setattr(gpu, "_registry", {})
    return cp
