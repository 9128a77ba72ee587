"""Fused stitch-and-publish: one call from a generated chunk to audio in a slot's ring. ``[engine]``

``stitch_and_publish`` is the daemon's single call per chunk, whatever the chunk lives on:

1. crossfade the seam — the held tail of the previous chunk against this chunk's first
   ``xfade`` frames (``dsp.core.crossfade`` semantics, ``equal_power`` or ``linear``);
2. hold this chunk's last ``xfade`` frames back as the next tail (raw, before gain), exactly
   like :class:`dsp.core.Stitcher`;
3. apply a gain ramp ``gain0 → gain1`` over the frames it emits (``dsp.core.gain_ramp``) and
   the soft limiter (``dsp.core.soft_limit``);
4. convert planar ``(channels, frames)`` to interleaved and store it in the ring's data
   region ``(capacity, channels)`` at ``start_frame & (capacity − 1)``, wrapping at the end;
5. once the audio is in the ring (for CuPy: after the stream is synchronized), call
   ``publish(start_frame + frames)`` if given — e.g. ``RingWriter.publish``.

This module is the NumPy twin and the dispatcher: CuPy input goes to :mod:`dsp.gpu` (one
RawKernel launch plus a stream sync), NumPy input is a composition of the ``dsp.core``
functions, so the two agree to float32 rounding. It does not check ``read_index``: room in the
ring is the caller's business (``RingWriter.free()``). No threads, no locks; call it from the
``[engine]`` thread only.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, NamedTuple

import numpy as np

from .core import array_module, equal_power_curves, gain_ramp, linear_curves, soft_limit

CURVES = ("equal_power", "linear")


class Published(NamedTuple):
    """What one :func:`stitch_and_publish` call did."""

    frames: int          #: frames stored in the ring (chunk frames − the held tail)
    tail: object         #: planar ``(channels, xfade)`` copy to pass as the next ``prev_tail``; None if xfade == 0
    end: int             #: ``start_frame + frames`` — the ``write_index`` to publish


class Plan(NamedTuple):
    channels: int
    n: int          # chunk frames
    xfade: int      # crossfade / held-tail frames
    emit: int       # frames stored in the ring
    has_prev: bool  # a previous tail is crossfaded in
    pos0: int       # ring position of start_frame
    mask: int


@lru_cache(maxsize=16)
def _curves(n: int, curve: str) -> tuple[np.ndarray, np.ndarray]:
    """``dsp.core``'s crossfade gains as read-only ``(n, 1)`` columns, computed once per length."""
    g_out, g_in = (equal_power_curves if curve == "equal_power" else linear_curves)(n)
    g_out, g_in = g_out[:, None], g_in[:, None]
    g_out.setflags(write=False)
    g_in.setflags(write=False)
    return g_out, g_in


def plan(prev_tail, chunk, ring_data, start_frame: int, xfade: int, curve: str) -> Plan:
    """Validate the arguments of :func:`stitch_and_publish` and work out its geometry.

    Shared by the NumPy twin and :mod:`dsp.gpu` so both reject the same inputs.
    """
    if curve not in CURVES:
        raise ValueError(f"unknown crossfade curve {curve!r} ({', '.join(CURVES)})")
    if chunk.ndim != 2:
        raise ValueError(f"chunk must be planar (channels, frames), got shape {tuple(chunk.shape)}")
    channels, n = int(chunk.shape[0]), int(chunk.shape[1])
    if ring_data.ndim != 2 or int(ring_data.shape[1]) != channels:
        raise ValueError(f"ring_data must be (capacity, {channels}), got {tuple(ring_data.shape)}")
    capacity = int(ring_data.shape[0])
    if capacity <= 0 or capacity & (capacity - 1):
        raise ValueError(f"ring capacity {capacity} is not a power of two")
    xf = int(xfade)
    if xf < 0 or xf > n:
        raise ValueError(f"xfade {xf} must be in 0..{n} (the chunk's frames)")
    has_prev = xf > 0 and prev_tail is not None
    if has_prev and tuple(prev_tail.shape) != (channels, xf):
        raise ValueError(f"prev_tail must be planar ({channels}, {xf}), got {tuple(prev_tail.shape)}")
    emit = n - xf
    if emit > capacity:
        raise ValueError(f"{emit} frames exceed the ring capacity {capacity}")
    start = int(start_frame)
    if start < 0:
        raise ValueError(f"start_frame {start} is negative")
    return Plan(channels, n, xf, emit, has_prev, start & (capacity - 1), capacity - 1)


def stitch_and_publish(prev_tail, chunk, ring_data, start_frame: int, xfade: int,
                       gain0: float = 1.0, gain1: float = 1.0, curve: str = "linear",
                       ceiling: float = 0.97, knee: float = 0.7, *,
                       publish: Callable[[int], None] | None = None, tail_out=None) -> Published:
    """Crossfade, gain, limit, interleave and store one chunk into a ring; then publish. ``[engine]``

    ``chunk`` is planar ``(channels, n)`` float32 (any strides, so ``frames.T`` of an
    interleaved block works too). ``prev_tail`` is the ``tail`` of the previous call (planar
    ``(channels, xfade)``) or None for a stream's first chunk. ``ring_data`` is the ring's
    ``(capacity, channels)`` float32 data region: the ``RingWriter.data`` view on the host;
    for CuPy input, that view registered with :func:`dsp.gpu.register_host` or its
    ``.device`` twin (or any device array, for tests). ``start_frame`` is the absolute frame
    the first stored frame gets (normally ``write_index``).

    Stores ``n − xfade`` frames and returns :class:`Published`. To end a stream, pass the last
    tail as ``chunk`` with ``xfade=0``. ``tail_out`` (planar ``(channels, xfade)``) receives
    the tail instead of a new array (on the GPU it must not alias ``prev_tail``: ping-pong
    two). ``publish(end)`` runs after the audio is in the ring.
    """
    if array_module(chunk) is not np:
        from . import gpu

        return gpu.stitch_and_publish(prev_tail, chunk, ring_data, start_frame, xfade, gain0, gain1,
                                      curve, ceiling, knee, publish=publish, tail_out=tail_out)
    chunk = np.asarray(chunk, dtype=np.float32)
    p = plan(prev_tail, chunk, ring_data, start_frame, xfade, curve)
    x = chunk.T                                                   # (n, channels) view
    if p.has_prev:
        g_out, g_in = _curves(p.xfade, curve)       # dsp.core.crossfade with cached curves
        head = np.asarray(prev_tail, dtype=np.float32).T * g_out + x[:p.xfade] * g_in
        joined = np.concatenate([head, x[p.xfade:]], axis=0)
    else:
        joined = x
    tail = None
    if p.xfade:
        held = joined[p.emit:].T
        if tail_out is not None:
            tail_out[...] = held
            tail = tail_out
        else:
            tail = np.ascontiguousarray(held)
    if p.emit:
        y = soft_limit(gain_ramp(joined[:p.emit], gain0, gain1), ceiling, knee)
        first = min(p.emit, p.mask + 1 - p.pos0)
        ring_data[p.pos0:p.pos0 + first] = y[:first]
        if first < p.emit:
            ring_data[:p.emit - first] = y[first:]
    end = int(start_frame) + p.emit
    if publish is not None:
        publish(end)  # plain stores above, then this store: ordered on x86-64 (TSO)
    return Published(p.emit, tail, end)
