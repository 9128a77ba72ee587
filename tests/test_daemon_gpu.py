"""The daemon's CuPy path: a backend whose audio is on the GPU gets stitched and stored on the device.

Each test runs twice: on a GPU with CuPy (``gpu`` marker; skipped without one) and everywhere
on ``tests/emulated_cupy.py`` (the same kernels compiled for the CPU, host memory as "device"
memory), which checks the daemon's logic on that path in every ``make test``.
"""
from __future__ import annotations

import queue
import secrets
import shutil
import time

import numpy as np
import pytest

from bridge.core.commands import Command
from bridge.core.daemon import Config, Daemon
from engine.synth.backend import SynthBackend
from plugin_stub.reader import RingReader
from test_daemon import assert_heard_fade, listening


def _cupy_device():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        cupy.zeros(1).sum()
        return cupy
    except Exception:  # noqa: BLE001 — no CuPy, no driver, or no device
        return None


CUDA = _cupy_device()


@pytest.fixture(params=[
    pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(CUDA is None, reason="needs CuPy and an NVIDIA GPU")]),
    pytest.param("emulated", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")),
])
def cp(request, monkeypatch, tmp_path_factory):
    """Real CuPy on a GPU, or tests/emulated_cupy.py: the same kernels compiled for the CPU."""
    if request.param == "cuda":
        return CUDA
    from emulated_cupy import install

    return install(monkeypatch, tmp_path_factory.mktemp("emulated_cupy"))


class DeviceSynth(SynthBackend):
    """The synth, handing its chunks back as CuPy arrays, as a GPU backend would."""

    device = "cuda"

    def __init__(self, cp):
        super().__init__()
        self.cp = cp

    def generate(self, streams, frames):
        return [self.cp.asarray(a) for a in super().generate(streams, frames)]


def _capture(backend, host_frames: int | None = None, after_device: int = 12000):
    """Play one job and record it from its first frame: ``(dsp path, frame where the device path
    began or None, audio)``. Records ``after_device`` frames past the first frame a kernel wrote
    into the ring, or ``host_frames`` frames on the host path."""
    from dsp import gpu

    events = queue.Queue()
    name = "g" + secrets.token_hex(5)
    d = Daemon(Config(slot_names=[name], slots=1, target_s=1.0), emit=events.put, backend=backend).open()
    first_device = []
    kernel_write = gpu.stitch_and_publish

    def spy(chunk, ring_data, start_frame, *a, **k):
        if not first_device:
            first_device.append(int(start_frame))
        return kernel_write(chunk, ring_data, start_frame, *a, **k)

    gpu.stitch_and_publish = spy
    try:
        r = RingReader(name, max_block=1 << 16).attach()
        start = r.read_index
        d.submit(Command("play", slot=name, prompt="house with piano", seed=1))
        parts, got = [], 0
        end = time.monotonic() + 15
        while time.monotonic() < end:
            want = (host_frames if host_frames is not None
                    else first_device[0] - start + after_device if first_device else None)
            if want is not None and got >= want:
                break
            n = r.buffered()
            if n:
                parts.append(r.read(n).copy())
                got += n
            time.sleep(0.005)
        r.detach()
        audio = np.concatenate(parts) if parts else np.zeros((0, 2), np.float32)
        return d.dsp_path, (first_device[0] - start if first_device else None), audio
    finally:
        gpu.stitch_and_publish = kernel_write
        d.close(linger_s=0)


def test_device_path_equals_host_path(cp):
    path_gpu, first, a = _capture(DeviceSynth(cp))
    assert path_gpu == "cupy" and first is not None, "no chunk took the device path"
    path_cpu, none, b = _capture(SynthBackend(), host_frames=a.shape[0])
    assert path_cpu == "numpy" and none is None
    n = first + 12000                                   # host-path frames, then ≥ 12000 device-path frames
    assert a.shape[0] >= n and b.shape[0] >= n
    np.testing.assert_allclose(a[:n], b[:n], atol=1e-6)


def test_a_long_stop_fade_continues_over_device_chunks(cp):
    """A stop whose fade is longer than what is buffered fades over the chunks that follow it —
    the buffered part by ``wb_ring_scale`` through the mapped ring, the rest inside the write
    kernel as its envelope — and the job ends."""
    import threading

    from plugin_stub.player import PacedRecorder

    events = queue.Queue()
    name = "g" + secrets.token_hex(5)
    d = Daemon(Config(slot_names=[name], slots=1, target_s=0.3), emit=events.put, backend=DeviceSynth(cp)).open()
    try:
        assert d.dsp_path == "cupy"
        r = listening(name)
        job = d.submit(Command("play", slot=name, prompt="house with piano", seed=1))
        end = time.monotonic() + 10
        while r.buffered() < 20000 and time.monotonic() < end:
            time.sleep(0.01)
        rec = PacedRecorder(r, 3.0, 128)                 # a host that keeps listening
        th = threading.Thread(target=rec.run)
        th.start()
        d.submit(Command("stop", slot=name, fade_s=1.5))
        done = None
        end = time.monotonic() + 10
        while done is None and time.monotonic() < end:
            try:
                ev = events.get(timeout=0.1)
            except queue.Empty:
                continue
            if ev.kind == "done" and ev.job == job:
                done = ev
        th.join()
        assert done is not None, "the stop never completed"
        assert_heard_fade(rec, r.meta(), 72000)
        r.detach()
    finally:
        d.close(linger_s=0)


@pytest.fixture(scope="module")
def tiny_musicgen_dir(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tiny_musicgen import build_tiny_musicgen

    return build_tiny_musicgen(tmp_path_factory.mktemp("musicgen") / "tiny")


def test_musicgen_hands_device_chunks_to_the_daemon(cp, tiny_musicgen_dir, monkeypatch):
    """musicgen → CuPy chunks (dlpack, its stitcher and FIFO on the device) → the daemon's kernels
    → the ring, equal to the same model played through the host path."""
    import engine.musicgen.backend as mg
    from engine.backend import get_backend

    if cp is not CUDA:                        # emulated: the CPU model hands over "device" arrays
        monkeypatch.setattr(mg, "_device_audio_module", lambda dev, want: None if want is False else cp)
    dev = "cuda" if cp is CUDA else "cpu"
    on_device = get_backend("musicgen", model=tiny_musicgen_dir, device=dev, dtype="float32", max_batch=4)
    on_host = get_backend("musicgen", model=tiny_musicgen_dir, device=dev, dtype="float32", max_batch=4,
                          device_audio=False)
    assert (on_device.device, on_host.device) == ("cuda", "cpu")
    s = on_device.start(1, "lofi piano", 3)
    chunk = on_device.generate([s], 3000)[0]
    assert isinstance(chunk, cp.ndarray) and chunk.shape[1] == 2
    on_device.end(s)
    path_gpu, first, a = _capture(on_device)
    assert path_gpu == "cupy" and first is not None, "no chunk took the device path"
    path_cpu, none, b = _capture(on_host, host_frames=a.shape[0])
    assert path_cpu == "numpy" and none is None
    n = first + 12000
    assert a.shape[0] >= n and b.shape[0] >= n
    assert np.sqrt(np.mean(a[first:n] ** 2)) > 1e-3
    np.testing.assert_allclose(a[:n], b[:n], atol=1e-5)
