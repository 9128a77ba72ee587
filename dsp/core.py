"""NumPy reference implementations; each also accepts CuPy arrays (array module follows input).

Audio is ``(frames, channels)`` float32 unless a function says otherwise.
"""
from __future__ import annotations

import numpy as np


def array_module(x):
    """``numpy`` or ``cupy``, whichever owns ``x`` (CuPy is never imported for NumPy input)."""
    mod = type(x).__module__
    if mod.startswith("cupy"):
        import cupy  # lazy: installs without a GPU but fails at first allocation

        return cupy
    return np


def linear_curves(n: int, xp=np, dtype=np.float32):
    """Fade-out and fade-in gains for an ``n``-frame linear crossfade (sum = 1)."""
    t = (xp.arange(n, dtype=xp.float64) + 0.5) / max(n, 1)
    return (1.0 - t).astype(dtype), t.astype(dtype)


def equal_power_curves(n: int, xp=np, dtype=np.float32):
    """Fade-out and fade-in gains for an equal-power crossfade (squares sum to 1)."""
    t = (xp.arange(n, dtype=xp.float64) + 0.5) / max(n, 1)
    return fade_curve(n, 0, n, xp, dtype), xp.sin(t * (np.pi / 2)).astype(dtype)


def fade_curve(total: int, start: int, n: int, xp=np, dtype=np.float32):
    """Gains ``start…start+n`` of the equal-power fade-out ``total`` frames long — a fade applied
    piecewise, chunk by chunk, equals ``equal_power_curves(total)[0]``."""
    t = (xp.arange(start, start + n, dtype=xp.float64) + 0.5) / max(total, 1)
    return xp.cos(t * (np.pi / 2)).astype(dtype)


def crossfade(old, new, curve: str = "equal_power", out=None):
    """Crossfade ``old`` into ``new`` over their common length (both n × ch, or n).

    ``curve`` is ``"equal_power"`` (uncorrelated material keeps its loudness) or
    ``"linear"`` (correlated material, e.g. the same stream's overlap, keeps its amplitude).
    """
    xp = array_module(new)
    n = min(old.shape[0], new.shape[0])
    if curve == "equal_power":
        g_out, g_in = equal_power_curves(n, xp, new.dtype)
    elif curve == "linear":
        g_out, g_in = linear_curves(n, xp, new.dtype)
    else:
        raise ValueError(f"unknown crossfade curve {curve!r} (equal_power, linear)")
    if new.ndim == 2:
        g_out = g_out[:, None]
        g_in = g_in[:, None]
    res = old[:n] * g_out + new[:n] * g_in
    if out is not None:
        out[:n] = res
        return out
    return res


def fade(x, direction: str = "out", curve: str = "equal_power"):
    """A copy of ``x`` faded in or out over its whole length."""
    xp = array_module(x)
    n = x.shape[0]
    g_out, g_in = (equal_power_curves if curve == "equal_power" else linear_curves)(n, xp, x.dtype)
    g = g_out if direction == "out" else g_in
    if x.ndim == 2:
        g = g[:, None]
    return x * g


def gain_ramp(x, g0: float, g1: float):
    """``x`` times a linear ramp from ``g0`` to ``g1`` (zipper-free gain change)."""
    xp = array_module(x)
    n = x.shape[0]
    if g0 == g1:
        return x * x.dtype.type(g0)
    g = xp.linspace(g0, g1, n, endpoint=False, dtype=xp.float64).astype(x.dtype)
    if x.ndim == 2:
        g = g[:, None]
    return x * g


def soft_limit(x, ceiling: float = 0.97, knee: float = 0.7):
    """Transparent below ``knee × ceiling``, a tanh curve above; never exceeds ``ceiling``.

    Memoryless, so it is block-size invariant and can be applied per chunk.
    """
    xp = array_module(x)
    t = x.dtype.type(knee * ceiling)
    span = x.dtype.type(ceiling - knee * ceiling)
    a = xp.abs(x)
    over = a > t
    if xp is np and not over.any():   # (on CuPy this test would sync the device: skip it)
        return x
    shaped = t + span * xp.tanh((a - t) / span)
    return xp.where(over, xp.sign(x) * shaped, x).astype(x.dtype, copy=False)


def stitch(chunks, overlap: int, curve: str = "linear"):
    """Join chunks that overlap by ``overlap`` frames, crossfading each seam.

    Chunk ``k+1``'s first ``overlap`` frames cover the same time as chunk ``k``'s last
    ``overlap`` frames. Output length = sum(lengths) − overlap × (len(chunks) − 1).
    """
    st = Stitcher(overlap, curve)
    parts = [st.push(c) for c in chunks]
    parts.append(st.flush())
    xp = array_module(chunks[0])
    return xp.concatenate([p for p in parts if p.shape[0]], axis=0)


class Stitcher:
    """Streaming form of :func:`stitch`: ``push`` returns what is final, holds the tail. ``[engine]``"""

    def __init__(self, overlap: int, curve: str = "linear"):
        self.overlap = int(overlap)
        self.curve = curve
        self._tail = None
        self._xp = np
        self._shape = ()

    def push(self, chunk):
        self._xp = array_module(chunk)
        self._shape = chunk.shape[1:]
        ov = self.overlap
        if self._tail is not None and ov:
            xp = array_module(chunk)
            head = crossfade(self._tail, chunk[:ov], self.curve)
            body = chunk[ov:]
            joined = xp.concatenate([head, body], axis=0)
        else:
            joined = chunk
        if ov and joined.shape[0] >= ov:
            self._tail = joined[-ov:].copy()
            return joined[:-ov]
        self._tail = None
        return joined

    def flush(self):
        t = self._tail
        self._tail = None
        if t is None:
            return self._xp.zeros((0,) + tuple(self._shape), dtype=np.float32)
        return t


def planar_to_interleaved(x, out=None):
    """``(channels, frames)`` planar → ``(frames, channels)`` C-contiguous interleaved."""
    xp = array_module(x)
    if out is None:
        return xp.ascontiguousarray(x.T)
    out[...] = x.T
    return out


def seam_jump(x, seams, skip: int = 0):
    """Largest |Δ sample| at the given seam positions and the largest inside the rest.

    Returns ``(max_jump_at_seams, max_jump_elsewhere)`` over all channels; ``skip`` excludes
    that many frames after each seam from "elsewhere" (it is the seam's neighbourhood).
    """
    xp = array_module(x)
    d = xp.abs(xp.diff(x, axis=0))
    if d.ndim == 2:
        d = d.max(axis=1)
    mask = xp.ones(d.shape[0], dtype=bool)
    at = []
    for s in seams:
        if 1 <= s < x.shape[0]:
            at.append(float(d[s - 1]))
            mask[max(0, s - 1 - skip):s + skip] = False
    inside = float(d[mask].max()) if bool(mask.any()) else 0.0
    return (max(at) if at else 0.0), inside
