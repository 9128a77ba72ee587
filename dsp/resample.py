"""Resampling from a model's rate to the ring's (host) rate, streaming: chunked == one-shot.

:class:`Resampler` is one stream's state. Three engines behind one ``push``:

* ``soxr`` — libsoxr's ``ResampleStream`` (CPU, quality ``HQ``); chunked output is bit-identical
  to one-shot output. The default for NumPy input when ``soxr`` is installed.
* ``numpy`` — a polyphase windowed-sinc resampler (Kaiser, ~100 dB stopband, pass band to
  91.3 % of the lower Nyquist, stop band from it, zero phase): the fallback when soxr is missing.
* ``cupy`` — the same polyphase filter as a CUDA kernel (:func:`dsp.gpu.polyphase`); equals
  the ``numpy`` engine within 1e-6, chunked == one-shot.

Polyphase geometry (shared by ``numpy`` and ``cupy``): ``out/in = L/M`` in lowest terms; output
frame ``m`` sits at input time ``t = m·M/L``; with ``k = ⌊t⌋`` and phase ``p = m·M mod L`` it is
``Σ_j x[k − J + 1 + j] · H[p, j]``, ``j < 2J``. The stream emits an output as soon as input
``k + J`` has arrived; ``last=True`` pads ``J`` zeros and ends the stream at ``⌈n_in·L/M⌉``
frames (then the object is ready for a new stream).

Against soxr (HQ), on band-limited signals (components ≤ 0.8 × the lower Nyquist, peak ≤ 1),
the polyphase engines agree within :data:`SOXR_TOLERANCE` (max abs difference) away from the
first and last :data:`SOXR_EDGE` output frames; both are zero-delay.

Audio is ``(frames, channels)`` float32 (or ``(frames,)`` for one channel). No threads; a
:class:`Resampler` belongs to the ``[engine]`` thread.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

from dsp.core import array_module

PASSBAND = 0.913          # end of the pass band, fraction of the lower Nyquist (soxr HQ's)
ATTENUATION_DB = 100.0    # Kaiser stop-band design target
SOXR_TOLERANCE = 2e-4     # max |polyphase − soxr| on band-limited test signals (measured ≤ 4e-5)
SOXR_EDGE = 256           # output frames at each end excluded from that comparison
ENGINES = ("auto", "soxr", "numpy", "cupy")
_BLOCK_OUT = 1024         # NumPy engine: outputs per matmul block per phase row


def have_soxr() -> bool:
    try:
        import soxr  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=32)
def design(in_rate: int, out_rate: int, passband: float = PASSBAND,
           atten_db: float = ATTENUATION_DB) -> tuple[int, int, int, np.ndarray]:
    """``(L, M, J, H)``: the polyphase table for ``in_rate → out_rate`` (read-only ``H``, float64).

    ``H[p, j] = h(p/L − j + J − 1)`` with ``h`` a Kaiser-windowed sinc whose −6 dB point is
    midway between ``passband`` and 1 × the lower Nyquist, each phase row normalized to unit DC gain.
    """
    r = Fraction(int(out_rate), int(in_rate))
    L, M = r.numerator, r.denominator
    lower = min(in_rate, out_rate)
    trans = (1.0 - passband) * (lower / 2.0) / in_rate           # cycles per input sample
    taps = (atten_db - 7.95) / (2.285 * 2.0 * np.pi * trans) + 1.0
    J = max(2, int(np.ceil(taps / 2.0)))
    nu = (passband + 1.0) / 2.0 * (lower / 2.0) / in_rate        # cutoff, cycles per input sample
    beta = 0.1102 * (atten_db - 8.7) if atten_db > 50 else 0.5842 * (atten_db - 21) ** 0.4 + 0.07886 * (atten_db - 21)
    p = np.arange(L, dtype=np.float64)[:, None]
    j = np.arange(2 * J, dtype=np.float64)[None, :]
    tau = p / L - j + (J - 1)                                   # in (−J, J]
    win = np.i0(beta * np.sqrt(np.clip(1.0 - (tau / J) ** 2, 0.0, None))) / np.i0(beta)
    H = 2.0 * nu * np.sinc(2.0 * nu * tau) * win
    H /= H.sum(axis=1, keepdims=True)
    H.setflags(write=False)
    return L, M, J, H


class Resampler:
    """One stream's resampler ``in_rate → out_rate``; :meth:`push` chunks, ``last=True`` at the end. ``[engine]``

    ``engine="auto"`` picks at the first push: CuPy input → ``cupy``; NumPy input → ``soxr``
    if installed, else ``numpy``. Output lives where the input lives.
    """

    def __init__(self, in_rate: int, out_rate: int, channels: int, engine: str = "auto",
                 quality: str = "HQ"):
        if engine not in ENGINES:
            raise ValueError(f"unknown resampler engine {engine!r} ({', '.join(ENGINES)})")
        if in_rate <= 0 or out_rate <= 0 or channels <= 0:
            raise ValueError("rates and channels must be positive")
        self.in_rate, self.out_rate, self.channels = int(in_rate), int(out_rate), int(channels)
        self.quality = quality
        self.requested = engine
        self.engine = None if engine == "auto" else engine
        self._soxr = None
        self._H_dev = None
        self._reset_polyphase()

    # ------------------------------------------------------------------ state
    def _reset_polyphase(self) -> None:
        self._hist = None       # input frames from absolute index self._base on, (len, C)
        self._base = 0
        self._n_in = 0          # real input frames received in this stream
        self._m_next = 0        # next output frame to emit

    def reset(self) -> None:
        """Forget the stream (the next push starts a new one). ``[engine]``"""
        self._reset_polyphase()
        if self._soxr is not None:
            self._soxr.clear()

    def _resolve(self, xp) -> str:
        if self.engine is None:
            if xp is not np:
                self.engine = "cupy"
            else:
                self.engine = "soxr" if have_soxr() else "numpy"
        if self.engine == "soxr" and self._soxr is None:
            import soxr

            self._soxr = soxr.ResampleStream(self.in_rate, self.out_rate, self.channels,
                                             dtype="float32", quality=self.quality)
        return self.engine

    # ------------------------------------------------------------------ streaming
    def push(self, x, last: bool = False):
        """Resample the next chunk ``(n, channels)``; returns what is final so far. ``[engine]``"""
        xp = array_module(x)
        mono = x.ndim == 1
        x2 = x[:, None] if mono else x
        if x2.ndim != 2 or int(x2.shape[1]) != self.channels:
            raise ValueError(f"expected (frames, {self.channels}), got {tuple(x.shape)}")
        engine = self._resolve(xp)
        if (engine == "cupy") != (xp is not np):
            raise TypeError(f"engine {engine!r} got a {type(x).__module__} array")
        if self.in_rate == self.out_rate:
            y = x2.astype(np.float32, copy=True)
        elif engine == "soxr":
            y = self._soxr.resample_chunk(np.ascontiguousarray(x2, dtype=np.float32), last=last)
            if y.ndim == 1:
                y = y[:, None]
            if last:
                self._soxr.clear()
        else:
            y = self._push_polyphase(xp, x2, last)
        return y[:, 0] if mono else y

    def flush(self):
        """End the stream: the remaining output frames. ``[engine]``"""
        xp = np
        if self.engine == "cupy":
            import cupy as xp
        return self.push(xp.zeros((0, self.channels), dtype=np.float32), last=True)

    def _push_polyphase(self, xp, x, last: bool):
        L, M, J, H = design(self.in_rate, self.out_rate)
        C = self.channels
        # history dtype: float64 on the host (BLAS then needs no per-block conversion; same
        # result), float32 on the device (the kernel accumulates in float64)
        hdt = np.float64 if xp is np else np.float32
        x = xp.ascontiguousarray(x, dtype=hdt)
        if self._hist is None:
            self._hist = xp.zeros((J - 1, C), dtype=hdt)
            self._base = -(J - 1)
        parts = [self._hist, x]
        self._n_in += int(x.shape[0])
        if last:
            parts.append(xp.zeros((J, C), dtype=hdt))
            m_end = -(-self._n_in * L // M)
        else:
            avail = self._n_in - J
            m_end = max(self._m_next, -(-avail * L // M)) if avail > 0 else self._m_next
        hist = xp.concatenate(parts, axis=0)
        count = m_end - self._m_next
        if xp is not np:
            from dsp import gpu

            if self._H_dev is None:
                self._H_dev = xp.asarray(H)
            y = gpu.polyphase(hist, self._base, self._H_dev, L, M, J, self._m_next, count)
        else:
            y = _polyphase_numpy(hist, self._base, H, L, M, J, self._m_next, count)
        self._m_next = m_end
        if last:
            self._reset_polyphase()
        else:
            keep = (self._m_next * M) // L - J + 1 - self._base
            self._hist = hist[keep:].copy() if keep > 0 else hist
            self._base += max(0, keep)
        return y


def _polyphase_numpy(hist, base: int, H, L: int, M: int, J: int, m0: int, count: int):
    """Outputs ``m0 … m0+count`` from ``hist`` (input frames ``base…``, float64); see the module docstring."""
    C = hist.shape[1]
    taps = 2 * J
    y = np.empty((count, C), dtype=np.float32)
    if count == 0:
        return y
    win = np.lib.stride_tricks.sliding_window_view(hist, taps, axis=0)   # (len−taps+1, C, taps)
    for o in range(min(L, count)):
        m = m0 + o
        k = (m * M) // L
        p = (m * M) - k * L
        r = k - J + 1 - base
        q = len(range(o, count, L))          # outputs o, o+L, … share phase p; their rows step by M
        h = H[p]
        for b in range(0, q, _BLOCK_OUT):
            nb = min(_BLOCK_OUT, q - b)
            rows = win[r + b * M: r + (b + nb - 1) * M + 1: M]       # (nb, C, taps)
            y[o + b * L: o + (b + nb - 1) * L + 1: L] = rows @ h
    return y


def resample(x, in_rate: int, out_rate: int, engine: str = "auto"):
    """One-shot resampling of ``(frames, channels)`` (or ``(frames,)``). ``[engine]``"""
    channels = 1 if x.ndim == 1 else int(x.shape[1])
    return Resampler(in_rate, out_rate, channels, engine).push(x, last=True)
