"""Seam-quality metrics: does the audio at chunk seams stand out from the audio inside chunks?

Used by the tests and by ``wavebridge bench``. Three views of one question, each reported as
*at seams* vs *elsewhere* (the largest value in each set) and their ratio (≈ 1 or below: the
seam is as smooth as the material; ≫ 1: an audible click or splice):

* **jump** — largest |Δ sample| (:func:`dsp.core.seam_jump`, reused as is);
* **curvature** — largest |Δ² sample|, ``seam_jump`` on the first difference: it catches a
  kink (slope break) that a plain jump hides inside loud high-frequency material;
* **flux** — spectral flux (half-wave rectified increase of the STFT magnitude between
  successive frames, normalized by the previous frame's magnitude), frames whose span
  contains a seam vs all others: it catches a broadband burst even when samples stay small.

Works on NumPy or CuPy input (array module follows input); returns Python floats. No threads.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from dsp.core import array_module, seam_jump

_EPS = 1e-12


@dataclass
class SeamReport:
    """Seam metrics of one signal (see the module docstring)."""

    jump_at_seams: float
    jump_elsewhere: float
    jump_ratio: float
    curvature_at_seams: float
    curvature_elsewhere: float
    curvature_ratio: float
    flux_at_seams: float
    flux_elsewhere: float
    flux_ratio: float

    def as_dict(self) -> dict:
        return asdict(self)


def seam_positions(lengths, overlap: int = 0) -> list[int]:
    """Frame where each seam starts in ``stitch(chunks, overlap)`` output, from the chunk lengths.

    Seam ``k`` (between chunks ``k`` and ``k+1``) starts at ``Σ_{i≤k} len_i − (k+1)·overlap``
    and its crossfade covers ``overlap`` frames from there.
    """
    out, pos = [], 0
    for n in list(lengths)[:-1]:
        pos += int(n) - int(overlap)
        out.append(pos)
    return out


def _ratio(at: float, elsewhere: float) -> float:
    return at / max(elsewhere, _EPS)


def seam_discontinuity(x, seams, skip: int = 0) -> tuple[float, float, float, float]:
    """``(jump_at, jump_elsewhere, curvature_at, curvature_elsewhere)`` over all channels.

    ``skip`` frames after each seam (its crossfade) are left out of "elsewhere".
    """
    j_at, j_else = seam_jump(x, seams, skip)
    xp = array_module(x)
    d = xp.diff(x, axis=0)
    d_seams = sorted({q for s in seams for q in (s - 1, s)})
    c_at, c_else = seam_jump(d, d_seams, skip + 1)
    return j_at, j_else, c_at, c_else


def spectral_flux(x, frame: int = 1024, hop: int = 256):
    """``(flux, starts)``: normalized rectified spectral flux of each STFT frame ``t ≥ 1`` and its start.

    ``flux[t]`` compares frames ``t−1`` and ``t`` (Hann window, channels averaged); ``starts``
    are the first frame index of each of those frames ``t``.
    """
    xp = array_module(x)
    mono = x if x.ndim == 1 else x.mean(axis=1)
    mono = mono.astype(xp.float64)
    n = int(mono.shape[0])
    if n < frame + hop:
        return xp.zeros((0,), dtype=xp.float64), xp.zeros((0,), dtype=xp.int64)
    starts = xp.arange(0, n - frame + 1, hop, dtype=xp.int64)
    idx = starts[:, None] + xp.arange(frame, dtype=xp.int64)[None, :]
    win = xp.asarray(np.hanning(frame))
    mag = xp.abs(xp.fft.rfft(mono[idx] * win, axis=1))
    rise = xp.maximum(mag[1:] - mag[:-1], 0.0).sum(axis=1)
    flux = rise / (mag[:-1].sum(axis=1) + _EPS)
    return flux, starts[1:]


def seam_flux(x, seams, frame: int = 1024, hop: int = 256) -> tuple[float, float]:
    """``(flux_at_seams, flux_elsewhere)``: largest spectral flux over frame pairs that span a seam vs the rest."""
    flux, starts = spectral_flux(x, frame, hop)
    if int(flux.shape[0]) == 0:
        return 0.0, 0.0
    xp = array_module(flux)
    lo = starts - hop                       # the compared pair covers [start_{t−1}, start_t + frame)
    hi = starts + frame
    near = xp.zeros(flux.shape, dtype=bool)
    for s in seams:
        near |= (lo <= s) & (s < hi)
    at = float(flux[near].max()) if bool(near.any()) else 0.0
    rest = ~near
    elsewhere = float(flux[rest].max()) if bool(rest.any()) else 0.0
    return at, elsewhere


def seam_report(x, seams, skip: int = 0, frame: int = 1024, hop: int = 256) -> SeamReport:
    """All seam metrics of ``x`` ``(frames, channels)`` or ``(frames,)`` at ``seams`` (frame indices)."""
    j_at, j_else, c_at, c_else = seam_discontinuity(x, seams, skip)
    f_at, f_else = seam_flux(x, seams, frame, hop)
    return SeamReport(j_at, j_else, _ratio(j_at, j_else), c_at, c_else, _ratio(c_at, c_else),
                      f_at, f_else, _ratio(f_at, f_else))
