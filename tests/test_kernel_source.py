"""The CUDA source of ``dsp.gpu`` compiles with NVRTC, cleanly, for the GPUs we target — no GPU needed.

NVRTC is a library (``nvidia-cuda-nvrtc-cu12``, installed by ``make setup`` with CuPy), so a machine
without a GPU or a driver can still compile the kernels to PTX. This catches what a GPU session
would otherwise find first: a syntax error, a missing or renamed kernel, a warning. The numerics
are held to NumPy by ``tests/test_dsp_gpu.py`` (``gpu`` marker) on a machine with a device.
"""
from __future__ import annotations

import re

import pytest

from dsp import gpu

try:
    from cupy_backends.cuda.libs import nvrtc

    nvrtc.getVersion()
    NVRTC, WHY = True, ""
except Exception as e:  # CuPy or the NVRTC library missing (make setup installs both)
    NVRTC, WHY = False, f"{type(e).__name__}: {e}"

pytestmark = pytest.mark.skipif(not NVRTC, reason=f"needs CuPy's NVRTC binding and libnvrtc ({WHY}); run make setup")

# Turing, Ampere, Hopper (the H200 is compute_90; NVRTC 12.9 deprecates anything before 7.5).
ARCHES = ("compute_75", "compute_80", "compute_90")


def compile_ptx(source: str, arch: str) -> tuple[str, str]:
    prog = nvrtc.createProgram(source, "wavebridge_dsp.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(prog, [f"--gpu-architecture={arch}", "--std=c++14"])
        except nvrtc.NVRTCError as e:
            raise AssertionError(f"NVRTC ({arch}) rejected dsp.gpu's source: {e}\n{nvrtc.getProgramLog(prog)}")
        ptx = nvrtc.getPTX(prog)
        log = nvrtc.getProgramLog(prog)
    finally:
        nvrtc.destroyProgram(prog)
    ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
    log = log.decode() if isinstance(log, bytes) else log
    return ptx, log.strip("\x00").strip()


@pytest.mark.parametrize("arch", ARCHES)
def test_kernels_compile_without_warnings(arch):
    ptx, log = compile_ptx(gpu._SOURCE, arch)
    assert log == "", f"NVRTC warnings for {arch}:\n{log}"
    entries = set(re.findall(r"\.entry\s+(\w+)", ptx))
    assert entries == set(gpu.KERNEL_NAMES), f"kernels in PTX {sorted(entries)} != KERNEL_NAMES {gpu.KERNEL_NAMES}"


def test_a_broken_source_is_reported():
    """The check itself can fail: a kernel with a type error is rejected with NVRTC's log."""
    with pytest.raises(AssertionError, match="rejected"):
        compile_ptx(gpu._SOURCE + '\nextern "C" __global__ void wb_bad(float* x) { x[0] = undefined_name; }\n',
                    "compute_90")
