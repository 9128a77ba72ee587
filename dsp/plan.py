"""The geometry of one fused write into a ring, shared by the NumPy and CuPy paths.

:func:`plan` validates the arguments of :func:`dsp.fused.stitch_and_publish` (and of its CuPy
form in :mod:`dsp.gpu`) and works out where the chunk lands, so both paths reject the same
inputs and agree on the layout; :class:`Published` is what a write reports. Pure arithmetic on
shapes; no threads. ``[engine]``
"""
from __future__ import annotations

from typing import NamedTuple

CURVES = ("equal_power", "linear")


class Published(NamedTuple):
    """What one :func:`stitch_and_publish` call did."""

    frames: int          #: frames stored in the ring
    end: int             #: ``start_frame + frames`` — the ``write_index`` to publish


class Plan(NamedTuple):
    channels: int
    n: int          # chunk frames (all stored)
    xfade: int      # crossfaded frames at the start (0: none)
    pos0: int       # ring position of start_frame
    mask: int


def plan(chunk, ring_data, start_frame: int, prev=None, env=None, curve: str = "equal_power") -> Plan:
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
    if n > capacity:
        raise ValueError(f"{n} frames exceed the ring capacity {capacity}")
    xf = 0
    if prev is not None:
        if prev.ndim != 2 or int(prev.shape[0]) != channels or int(prev.shape[1]) > n:
            raise ValueError(f"prev must be planar ({channels}, k ≤ {n}), got {tuple(prev.shape)}")
        xf = int(prev.shape[1])
    if env is not None and tuple(env.shape) != (n,):
        raise ValueError(f"env must hold one gain per frame ({n},), got {tuple(env.shape)}")
    start = int(start_frame)
    if start < 0:
        raise ValueError(f"start_frame {start} is negative")
    return Plan(channels, n, xf, start & (capacity - 1), capacity - 1)
