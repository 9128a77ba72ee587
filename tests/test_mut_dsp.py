"""dsp.core and dsp.seams on known signals, exactly: curves by value, crossfades of unequal
lengths, the Stitcher's held tail (reset by a flush, never heard twice), and the seam metrics'
maths (jump, curvature, spectral flux and which frame pairs span a seam). Written so that a
flipped comparison, a swapped operator or a deleted statement in those modules fails a test
(issue #24); NumPy only, no GPU, a few ms each."""
from __future__ import annotations

import numpy as np
import pytest

from dsp import core, seams
from dsp.core import (Stitcher, crossfade, equal_power_curves, fade, fade_curve, gain_ramp,
                      linear_curves, planar_to_interleaved, seam_jump, soft_limit, stitch)
from dsp.seams import SeamReport, seam_discontinuity, seam_flux, seam_positions, seam_report, spectral_flux


# ---------------------------------------------------------------- curves


def test_linear_curves_by_value():
    g_out, g_in = linear_curves(4)
    np.testing.assert_array_equal(g_in, np.array([0.125, 0.375, 0.625, 0.875], np.float32))
    np.testing.assert_array_equal(g_out, np.array([0.875, 0.625, 0.375, 0.125], np.float32))
    assert g_out.dtype == np.float32 and g_in.dtype == np.float32
    one_out, one_in = linear_curves(1)
    assert one_out.tolist() == [0.5] and one_in.tolist() == [0.5]
    e_out, e_in = linear_curves(0)
    assert e_out.shape == (0,) and e_in.shape == (0,)
    assert linear_curves(3, dtype=np.float64)[1].dtype == np.float64


def test_equal_power_curves_by_value():
    g_out, g_in = equal_power_curves(2, dtype=np.float64)
    t = np.array([0.25, 0.75])
    np.testing.assert_allclose(g_out, np.cos(t * np.pi / 2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(g_in, np.sin(t * np.pi / 2), rtol=0, atol=1e-15)
    g_out, g_in = equal_power_curves(7, dtype=np.float64)
    np.testing.assert_allclose(g_out ** 2 + g_in ** 2, 1.0, atol=1e-15)
    np.testing.assert_allclose(g_out, g_in[::-1], atol=1e-15)      # mirror images
    one_out, one_in = equal_power_curves(1, dtype=np.float64)
    assert one_out[0] == pytest.approx(np.sqrt(0.5)) and one_in[0] == pytest.approx(np.sqrt(0.5))
    assert equal_power_curves(0)[0].shape == (0,)


def test_a_fade_applied_piecewise_equals_the_whole_fade():
    whole = equal_power_curves(10, dtype=np.float64)[0]
    pieces = np.concatenate([fade_curve(10, 0, 3, dtype=np.float64), fade_curve(10, 3, 4, dtype=np.float64),
                             fade_curve(10, 7, 3, dtype=np.float64)])
    np.testing.assert_array_equal(pieces, whole)
    np.testing.assert_allclose(fade_curve(4, 1, 2, dtype=np.float64), np.cos(np.array([1.5, 2.5]) / 4 * np.pi / 2),
                               atol=1e-15)
    assert fade_curve(0, 0, 0).shape == (0,)
    assert fade_curve(0, 0, 1)[0] == pytest.approx(np.cos(0.5 * np.pi / 2))   # total 0 counts as 1


# ---------------------------------------------------------------- crossfade, fade, gain


def test_crossfade_of_unequal_lengths_uses_the_common_length():
    old = np.full((5, 2), 2.0, np.float32)
    new = np.full((3, 2), 4.0, np.float32)
    res = crossfade(old, new, "linear")
    assert res.shape == (3, 2)
    g_out, g_in = linear_curves(3)
    np.testing.assert_allclose(res[:, 0], 2.0 * g_out + 4.0 * g_in, atol=1e-6)
    np.testing.assert_allclose(res[:, 1], res[:, 0])
    res2 = crossfade(new, old, "linear")             # the other way round: also 3 frames
    assert res2.shape == (3, 2)
    np.testing.assert_allclose(res2[:, 0], 4.0 * g_out + 2.0 * g_in, atol=1e-6)


def test_crossfade_equal_power_by_value_mono_and_out():
    old = np.array([1.0, 1.0, 1.0, 1.0], np.float32)
    new = np.array([-1.0, -1.0, -1.0, -1.0, 9.0], np.float32)
    g_out, g_in = equal_power_curves(4)
    np.testing.assert_allclose(crossfade(old, new), g_out - g_in, atol=1e-6)
    out = np.full(6, 7.0, np.float32)
    got = crossfade(old, new, out=out)
    assert got is out
    np.testing.assert_allclose(out[:4], g_out - g_in, atol=1e-6)
    assert out[4:].tolist() == [7.0, 7.0]              # beyond the common length: untouched
    with pytest.raises(ValueError, match="unknown crossfade curve"):
        crossfade(old, new, "cubic")


def test_crossfade_of_the_same_stream_keeps_its_amplitude():
    x = np.linspace(-1, 1, 64, dtype=np.float32)[:, None].repeat(2, axis=1)
    np.testing.assert_allclose(crossfade(x, x, "linear"), x, atol=1e-6)


def test_fade_in_and_out_by_value():
    x = np.ones((4, 2), np.float32)
    lo, li = linear_curves(4)
    eo, ei = equal_power_curves(4)
    np.testing.assert_array_equal(fade(x, "out", "linear"), np.stack([lo, lo], axis=1))
    np.testing.assert_array_equal(fade(x, "in", "linear"), np.stack([li, li], axis=1))
    np.testing.assert_array_equal(fade(x[:, 0], "out"), eo)
    np.testing.assert_array_equal(fade(x[:, 0], "in"), ei)


def test_gain_ramp_by_value():
    x = np.ones((4, 2), np.float32)
    np.testing.assert_array_equal(gain_ramp(x, 0.0, 1.0)[:, 1], [0.0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(gain_ramp(x[:, 0], 1.0, 0.0), [1.0, 0.75, 0.5, 0.25])
    flat = gain_ramp(x, 0.5, 0.5)
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(flat, 0.5)


def test_soft_limit_is_transparent_below_the_knee_and_bounded_above():
    quiet = np.array([0.0, 0.5, -0.6, 0.679], np.float32)     # knee × ceiling = 0.679
    assert soft_limit(quiet) is quiet
    x = np.array([0.5, 0.9, -0.9, 5.0, -50.0], np.float32)
    y = soft_limit(x)
    t, span = np.float32(0.7 * 0.97), np.float32(0.97 - 0.7 * 0.97)
    expect = t + span * np.tanh((np.float32(0.9) - t) / span)
    assert y[0] == np.float32(0.5)
    assert y[1] == pytest.approx(expect, abs=1e-6) and y[2] == pytest.approx(-expect, abs=1e-6)
    assert 0.96 < y[3] <= 0.97 and -0.97 <= y[4] < -0.96
    assert y.dtype == np.float32
    z = soft_limit(np.array([0.9], np.float32), ceiling=0.5, knee=0.5)
    tt, ss = 0.25, 0.25
    assert z[0] == pytest.approx(tt + ss * np.tanh((0.9 - tt) / ss), abs=1e-6)


def test_planar_to_interleaved():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = planar_to_interleaved(x)
    assert y.flags.c_contiguous and y.tolist() == [[0, 3], [1, 4], [2, 5]]
    out = np.zeros((3, 2), np.float32)
    assert planar_to_interleaved(x, out) is out and out.tolist() == y.tolist()


# ---------------------------------------------------------------- stitch and the Stitcher


def _chunks(lengths, ch=2, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, ch)).astype(np.float32) for n in lengths]


def test_stitch_by_value():
    a, b = _chunks([10, 8])
    y = stitch([a, b], 4)
    assert y.shape == (14, 2)
    np.testing.assert_array_equal(y[:6], a[:6])
    lo, li = linear_curves(4)
    np.testing.assert_allclose(y[6:10], a[6:] * lo[:, None] + b[:4] * li[:, None], atol=1e-6)
    np.testing.assert_array_equal(y[10:], b[4:])
    np.testing.assert_array_equal(stitch([a, b], 0), np.concatenate([a, b]))


@pytest.mark.parametrize("lengths, overlap", [([10, 8, 9], 4), ([10, 2], 4), ([3], 4), ([5, 5, 5], 1),
                                              ([4, 4], 4)])
def test_stitch_length_is_sum_minus_overlaps(lengths, overlap):
    y = stitch(_chunks(lengths), overlap)
    assert y.shape[0] == max(sum(lengths) - overlap * (len(lengths) - 1), 0) or len(lengths) == 1


def test_the_stitcher_holds_the_tail_and_a_flush_resets_it():
    a, b, c = _chunks([10, 8, 6], seed=1)
    st = Stitcher(4)
    assert st.flush().shape == (0,)                    # nothing pushed yet
    np.testing.assert_array_equal(st.push(a), a[:6])
    tail = st.flush()
    np.testing.assert_array_equal(tail, a[6:])
    # the held tail is given once: a second flush is empty, shaped like the audio
    again = st.flush()
    assert again.shape == (0, 2) and again.dtype == np.float32
    # and it is not crossfaded into the next, unrelated chunk (no stale audio)
    np.testing.assert_array_equal(st.push(b), b[:4])
    np.testing.assert_array_equal(st.flush(), b[4:])
    np.testing.assert_array_equal(st.push(c), c[:2])


def test_the_stitcher_streams_what_stitch_joins():
    chunks = _chunks([10, 8, 9, 7], seed=2)
    st = Stitcher(3, "equal_power")
    parts = [st.push(c) for c in chunks] + [st.flush()]
    np.testing.assert_array_equal(np.concatenate(parts), stitch(chunks, 3, "equal_power"))
    assert [p.shape[0] for p in parts] == [7, 5, 6, 4, 3]


def test_a_chunk_shorter_than_the_overlap_ends_the_held_tail():
    a, b, c = _chunks([10, 2, 6], seed=3)
    st = Stitcher(4)
    st.push(a)
    lo, li = linear_curves(2)
    short = st.push(b)                                 # crossfaded with the tail's first 2 frames
    np.testing.assert_allclose(short, a[6:8] * lo[:, None] + b * li[:, None], atol=1e-6)
    assert st.flush().shape == (0, 2)                  # nothing left held: the next chunk starts fresh
    np.testing.assert_array_equal(st.push(c), c[:2])


def test_a_stitcher_without_overlap_holds_nothing():
    a, b = _chunks([5, 3], ch=1, seed=4)
    st = Stitcher(0)
    assert st.push(a) is a and st.push(b) is b
    assert st.flush().shape == (0, 1)


# ---------------------------------------------------------------- seam_jump


def test_seam_jump_by_value():
    x = np.array([0.0, 0.1, 0.3, 1.3, 1.2, 1.0, 1.05])[:, None]
    # |Δ| = [0.1, 0.2, 1.0, 0.1, 0.2, 0.05]; the seam at frame 3 is the jump between 2 and 3
    at, inside = seam_jump(x, [3])
    assert at == pytest.approx(1.0) and inside == pytest.approx(0.2)
    at, inside = seam_jump(x, [3], skip=1)             # frames 1..3 of Δ are the seam's: left out
    assert at == pytest.approx(1.0) and inside == pytest.approx(0.2)   # Δ[5]=0.05, Δ[0]=0.1, Δ[4]=0.2
    at, inside = seam_jump(x, [3], skip=2)             # Δ[0..4] left out: only Δ[5]
    assert at == pytest.approx(1.0) and inside == pytest.approx(0.05)
    assert seam_jump(x, [1]) == pytest.approx((0.1, 1.0))
    assert seam_jump(x, [6]) == pytest.approx((0.05, 1.0))       # the last frame is a seam
    assert seam_jump(x, [0, 7]) == pytest.approx((0.0, 1.0))     # outside: ignored
    assert seam_jump(x, [3, 5]) == pytest.approx((1.0, 0.2))     # Δ[2], Δ[4] at seams; the rest's max Δ[1]
    assert seam_jump(x, [2, 5], skip=1) == pytest.approx((0.2, 0.0))   # Δ[0..2] and Δ[3..5] are the seams'
    assert seam_jump(x[:2], [1]) == pytest.approx((0.1, 0.0))    # nothing left elsewhere


def test_seam_jump_takes_the_loudest_channel():
    x = np.zeros((4, 2), np.float32)
    x[2:, 1] = -3.0
    x[1:, 0] = 0.5
    assert seam_jump(x, [2]) == pytest.approx((3.0, 0.5))


# ---------------------------------------------------------------- seam metrics


def test_seam_positions():
    assert seam_positions([10, 20, 30], 4) == [6, 22]
    assert seam_positions([10, 20, 30]) == [10, 30]
    assert seam_positions([7]) == []
    assert seam_positions((n for n in [5, 5]), 1) == [4]


def test_seam_discontinuity_sees_a_kink_that_the_jump_hides():
    n, s = 40, 20
    f = np.arange(n, dtype=np.float64)
    x = np.where(f < s, 0.01 * f, 0.21 - 0.02 * (f - s))[:, None]   # slope +0.01, then −0.02
    # Δ = 0.01 … 0.01, Δ[19] = 0.02, −0.02 …: the jump at the seam is no larger than elsewhere
    j_at, j_else, c_at, c_else = seam_discontinuity(x, [s])
    assert j_at == pytest.approx(0.02, abs=1e-12) and j_else == pytest.approx(0.02, abs=1e-12)
    # Δ² = 0.01 at 18, −0.04 at 19, 0 elsewhere: the kink stands out
    assert c_at == pytest.approx(0.04, abs=1e-12)
    assert c_else == pytest.approx(0.0, abs=1e-12)
    # a seam three frames later: the kink is elsewhere
    _, _, c_at2, c_else2 = seam_discontinuity(x, [s + 3])
    assert c_at2 == pytest.approx(0.0, abs=1e-12) and c_else2 == pytest.approx(0.04, abs=1e-12)


def test_seam_discontinuity_skip_is_one_wider_for_the_curvature():
    x = np.zeros((30, 1))
    x[10:, 0] = 1.0                                   # a step: Δ at 9, Δ² at 8 and 9
    x[14, 0] += 0.5                                   # a bump: Δ² at 12, 13, 14
    _, _, c_at, c_else = seam_discontinuity(x, [10], skip=2)
    dd = np.abs(np.diff(np.diff(x[:, 0])))
    assert c_at == pytest.approx(1.0)
    # skip 2 → the curvature leaves out 3 frames after seam 10 (Δ² indices ≤ 12): 13 and 14 count
    assert c_else == pytest.approx(max(dd[13], dd[14]))
    assert c_else == pytest.approx(1.0)
    _, _, _, c_else0 = seam_discontinuity(x, [10], skip=0)
    assert c_else0 == pytest.approx(dd[12:].max())


def _blocks(amps, frame=8, seed=5):
    """Non-overlapping blocks of one noise burst, each scaled: every STFT frame (hop = frame)
    has the same spectrum times its amplitude."""
    s = np.random.default_rng(seed).standard_normal(frame)
    return np.concatenate([a * s for a in amps])


def test_spectral_flux_is_the_rectified_rise_over_the_previous_magnitude():
    x = _blocks([1.0, 2.0, 2.0, 0.5, 3.5])
    flux, starts = spectral_flux(x, frame=8, hop=8)
    # each pair: max(a_t − a_{t−1}, 0) / a_{t−1}
    np.testing.assert_allclose(flux, [1.0, 0.0, 0.0, 6.0], rtol=1e-9, atol=1e-12)
    assert starts.tolist() == [8, 16, 24, 32]
    assert flux.dtype == np.float64


def test_spectral_flux_matches_a_reference_on_a_sine_and_a_step():
    frame, hop = 64, 16
    n = 400
    t = np.arange(n)
    x = 0.5 * np.sin(2 * np.pi * 5.3 * t / frame)
    x[200:] += 0.3                                    # a step
    flux, starts = spectral_flux(np.stack([x, x], axis=1).astype(np.float32), frame, hop)
    win = np.hanning(frame)
    xs = x.astype(np.float32).astype(np.float64)
    ref_starts = list(range(0, n - frame + 1, hop))
    mags = [np.abs(np.fft.rfft(xs[a:a + frame] * win)) for a in ref_starts]
    ref = [np.maximum(mags[k] - mags[k - 1], 0).sum() / (mags[k - 1].sum() + 1e-12) for k in range(1, len(mags))]
    np.testing.assert_allclose(flux, ref, rtol=1e-6, atol=1e-9)
    assert starts.tolist() == ref_starts[1:]
    assert flux.dtype == np.float64 and starts.dtype == np.int64
    i = int(np.argmax(flux))
    assert starts[i] - hop <= 200 < starts[i] + frame            # the largest rise spans the step
    steady = flux[starts + frame < 200]
    assert steady.max() < 0.2 * flux.max()


def test_spectral_flux_of_silence_and_of_short_input():
    flux, starts = spectral_flux(np.zeros(64), frame=16, hop=8)
    assert flux.shape == (6,) and np.all(flux == 0.0)
    f, s = spectral_flux(np.ones(23), frame=16, hop=8)             # < frame + hop: no pair
    assert f.shape == (0,) and s.shape == (0,)
    f, s = spectral_flux(_blocks([1.0, 3.0], frame=16), frame=16, hop=16)   # exactly frame + hop... 32
    assert f.shape == (1,) and s.tolist() == [16] and f[0] == pytest.approx(2.0, rel=1e-9)
    f, s = spectral_flux(_blocks([1.0, 3.0], frame=16)[:-1], frame=16, hop=16)
    assert f.shape == (0,)
    f, s = spectral_flux(np.ones(24), frame=16, hop=8)                 # exactly frame + hop (24)
    assert f.shape == (1,) and s.tolist() == [8]
    # rising out of silence: huge, bounded by the epsilon, not a division error
    f, _ = spectral_flux(_blocks([0.0, 1.0]), frame=8, hop=8)
    assert f[0] > 1e9


def test_seam_flux_counts_the_pairs_whose_span_contains_a_seam():
    # pairs start at 8, 16, 24 (frame 8, hop 8) and cover [start − 8, start + 8); flux 0, 3, 0
    x = _blocks([1.0, 1.0, 4.0, 1.0])
    flux, starts = spectral_flux(x, 8, 8)
    np.testing.assert_allclose(flux, [0.0, 3.0, 0.0], atol=1e-9)
    assert seam_flux(x, [8], 8, 8) == pytest.approx((3.0, 0.0), abs=1e-9)    # pairs 8 and 16
    assert seam_flux(x, [24], 8, 8) == pytest.approx((0.0, 3.0), abs=1e-9)   # pair 24 only
    assert seam_flux(x, [23], 8, 8) == pytest.approx((3.0, 0.0), abs=1e-9)   # pairs 16 and 24
    assert seam_flux(x, [7], 8, 8) == pytest.approx((0.0, 3.0), abs=1e-9)    # pair 8 only
    assert seam_flux(x, [], 8, 8) == pytest.approx((0.0, 3.0), abs=1e-9)
    assert seam_flux(x, [8, 24], 8, 8) == pytest.approx((3.0, 0.0), abs=1e-9)  # every pair near
    assert seam_flux(x[:20], [8], 8, 8) == (0.0, 0.0)                        # too short


def test_seam_report_fields_and_ratios():
    x = _blocks([1.0, 1.0, 4.0, 1.0])[:, None]
    r = seam_report(x, [16], skip=0, frame=8, hop=8)
    assert isinstance(r, SeamReport)
    j = seam_discontinuity(x, [16], 0)
    f = seam_flux(x, [16], 8, 8)
    assert (r.jump_at_seams, r.jump_elsewhere, r.curvature_at_seams, r.curvature_elsewhere) == j
    assert (r.flux_at_seams, r.flux_elsewhere) == f
    assert r.jump_ratio == pytest.approx(j[0] / j[1])
    assert r.curvature_ratio == pytest.approx(j[2] / j[3])
    assert r.flux_ratio == pytest.approx(f[0] / 1e-12) and f[1] == pytest.approx(0.0, abs=1e-9)
    d = r.as_dict()
    assert d["flux_ratio"] == r.flux_ratio and len(d) == 9


def test_ratio_guards_a_zero_denominator():
    assert seams._ratio(2.0, 4.0) == 0.5
    assert seams._ratio(1.0, 0.0) == pytest.approx(1e12)
    assert seams._ratio(0.0, 0.0) == 0.0
    assert seams._ratio(3.0, 1e-13) == pytest.approx(3e12)


def test_array_module_is_numpy_for_numpy():
    assert core.array_module(np.zeros(1)) is np
    assert core.array_module([1.0]) is np

    class Fake:
        pass
    Fake.__module__ = "cupy_fake._core"
    try:
        import cupy  # noqa: F401
    except Exception:
        with pytest.raises(ImportError):
            core.array_module(Fake())
