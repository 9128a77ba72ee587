"""Fused write into a ring: one call from a chunk of audio to audio published in a slot's ring. ``[engine]``

``stitch_and_publish`` is the daemon's single call per chunk, whatever the chunk lives on. Per
frame ``i`` of an ``n``-frame chunk:

1. gain: ``x[i] · g(i)``, ``g`` a linear ramp ``gain0 → gain1`` over the chunk (``dsp.core.gain_ramp``);
2. crossfade (a splice): over the first ``k`` frames, ``prev[i]·g_out(i) + x[i]·g_in(i)`` with
   ``prev`` the ``k`` frames being replaced, as they are heard (``dsp.core.crossfade`` semantics,
   ``equal_power`` or ``linear``) — so the mix is limited in the next step;
3. the soft limiter (``dsp.core.soft_limit``);
4. envelope: ``· env[i]`` (a stop's fade, per frame), after the limiter;
5. convert planar ``(channels, frames)`` to interleaved and store it in the ring's data region
   ``(capacity, channels)`` at ``start_frame & (capacity − 1)``, wrapping at the end;
6. once the audio is in the ring (for CuPy: after the stream is synchronized), call
   ``publish(start_frame + n)`` if given — e.g. ``RingWriter.publish``.

This module is the NumPy twin and the dispatcher: CuPy input goes to :mod:`dsp.gpu` (one
RawKernel launch plus a stream sync, writing through the registered mapping of the ring), NumPy
input is a composition of the ``dsp.core`` functions, so the two agree to float32 rounding. It
does not check ``read_index``: room in the ring is the caller's business. No threads, no locks;
call it from the ``[engine]`` thread only.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from dsp.core import array_module, equal_power_curves, gain_ramp, linear_curves, soft_limit
from dsp.plan import Published, plan

@lru_cache(maxsize=16)
def _curves(n: int, curve: str) -> tuple[np.ndarray, np.ndarray]:
    """``dsp.core``'s crossfade gains as read-only ``(n, 1)`` columns, computed once per length."""
    g_out, g_in = (equal_power_curves if curve == "equal_power" else linear_curves)(n)
    g_out, g_in = g_out[:, None], g_in[:, None]
    g_out.setflags(write=False)
    g_in.setflags(write=False)
    return g_out, g_in


def stitch_and_publish(chunk, ring_data, start_frame: int, gain0: float = 1.0, gain1: float = 1.0, *,
                       prev=None, curve: str = "equal_power", env=None, ceiling: float = 0.97,
                       knee: float = 0.7, publish: Callable[[int], None] | None = None) -> Published:
    """Gain, crossfade, limit, envelope, interleave and store one chunk into a ring; then publish. ``[engine]``

    ``chunk`` is planar ``(channels, n)`` float32 (any strides, so ``frames.T`` of an interleaved
    block works too). ``prev`` (planar ``(channels, k)``, ``k ≤ n``) is the audio being replaced
    at ``start_frame…`` as it is heard; the chunk's first ``k`` frames crossfade from it. ``env``
    (``(n,)`` float32) multiplies the limited output. ``ring_data`` is the ring's
    ``(capacity, channels)`` float32 data region: the ``RingWriter.data`` view on the host; for
    CuPy input, that view registered with :func:`dsp.gpu.register_host` (or any device array,
    for tests). ``publish(end)`` runs after the audio is in the ring.
    """
    if array_module(chunk) is not np:
        from dsp import gpu

        return gpu.stitch_and_publish(chunk, ring_data, start_frame, gain0, gain1, prev=prev, curve=curve,
                                      env=env, ceiling=ceiling, knee=knee, publish=publish)
    chunk = np.asarray(chunk, dtype=np.float32)
    p = plan(chunk, ring_data, start_frame, prev, env, curve)
    y = gain_ramp(chunk.T, gain0, gain1)                          # (n, channels)
    if p.xfade:
        g_out, g_in = _curves(p.xfade, curve)                     # dsp.core.crossfade with cached curves
        y = np.array(y, dtype=np.float32)
        y[:p.xfade] = np.asarray(prev, dtype=np.float32).T * g_out + y[:p.xfade] * g_in
    y = soft_limit(np.ascontiguousarray(y, dtype=np.float32), ceiling, knee)
    if env is not None:
        y = y * np.asarray(env, dtype=np.float32)[:, None]
    if p.n:
        first = min(p.n, p.mask + 1 - p.pos0)
        ring_data[p.pos0:p.pos0 + first] = y[:first]
        if first < p.n:
            ring_data[:p.n - first] = y[first:]
    end = int(start_frame) + p.n
    if publish is not None:
        publish(end)  # plain stores above, then this store: ordered on x86-64 (TSO)
    return Published(p.n, end)


def scale_ring(ring_data, start_frame: int, gains, publish: Callable[[int], None] | None = None) -> int:
    """Multiply ring frames ``start_frame…`` by ``gains`` (``(n,)``), wrapping: a stop's fade over
    audio already stored. CuPy ``gains`` go to the kernel in :mod:`dsp.gpu`. Returns n. ``[engine]``"""
    if array_module(gains) is not np:
        from dsp import gpu

        return gpu.scale_ring(ring_data, start_frame, gains, publish=publish)
    gains = np.asarray(gains, dtype=np.float32)
    n = int(gains.shape[0])
    cap = int(ring_data.shape[0])
    if n > cap or cap & (cap - 1):
        raise ValueError(f"{n} gains do not fit a ring of {cap} frames")
    pos0 = int(start_frame) & (cap - 1)
    first = min(n, cap - pos0)
    ring_data[pos0:pos0 + first] *= gains[:first, None]
    if first < n:
        ring_data[:n - first] *= gains[first:, None]
    if publish is not None:
        publish(int(start_frame) + n)
    return n
