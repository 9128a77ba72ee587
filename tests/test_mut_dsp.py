"""dsp.core and dsp.seams on known signals, exactly: curves by value, crossfades of unequal
lengths, the Stitcher's held tail (reset by a flush, never heard twice), and the seam metrics'
maths (jump, curvature, spectral flux and which frame pairs span a seam). Written so that a
flipped comparison, a swapped operator or a deleted statement in those modules fails a test
(issue #24); dtypes and defaults kept; CuPy input through ``Dev``, a strict CPU emulation of a
device array (no host array in device arithmetic, no device sync where the code says it skips one).
NumPy only, no GPU, a few ms each."""
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


# ---------------------------------------------------------------- dtypes, defaults, 1-D stitching


def test_curves_and_crossfades_keep_the_audio_dtype():
    for dt in (np.float32, np.float64):
        assert all(c.dtype == dt for c in equal_power_curves(5, dtype=dt))
        assert all(c.dtype == dt for c in linear_curves(5, dtype=dt))
        a, b = np.ones((6, 2), dt), np.zeros((6, 2), dt)
        for curve in ("equal_power", "linear"):
            assert crossfade(a, b, curve).dtype == dt
        assert fade(a).dtype == dt and fade(a, "in", "linear").dtype == dt


def test_float64_audio_is_crossfaded_and_faded_with_float64_gains():
    """No rounding of the gains to float32 on the way: exact to float64 precision."""
    n = 1000
    t = (np.arange(n) + 0.5) / n
    old, new = np.full(n, 0.75), np.full(n, -0.5)
    want = 0.75 * np.cos(t * np.pi / 2) - 0.5 * np.sin(t * np.pi / 2)
    np.testing.assert_allclose(crossfade(old, new), want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(crossfade(old, new, "linear"), 0.75 * (1 - t) - 0.5 * t, rtol=0, atol=1e-15)
    np.testing.assert_allclose(fade(old), 0.75 * np.cos(t * np.pi / 2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(fade(old, "in", "linear"), 0.75 * t, rtol=0, atol=1e-15)


def test_fade_defaults_to_an_equal_power_fade_out():
    x = np.ones((8, 2), np.float32)
    np.testing.assert_array_equal(fade(x), fade(x, "out", "equal_power"))
    np.testing.assert_array_equal(fade(x)[:, 0], equal_power_curves(8)[0])
    assert fade(x)[0, 0] > fade(x)[-1, 0]


def test_stitch_joins_mono_chunks():
    a, b = np.ones(6, np.float32), np.zeros(5, np.float32)
    y = stitch([a, b], 2)
    assert y.shape == (9,)
    g_out, g_in = linear_curves(2)
    np.testing.assert_array_equal(y, np.concatenate([a[:4], g_out, b[2:]]))
    assert stitch([np.ones(1, np.float32), np.ones(1, np.float32)], 0).shape == (2,)


# ---------------------------------------------------------------- seam metrics: defaults, edges


def _noise(n, seed=3):
    return np.random.default_rng(seed).standard_normal(n)


def test_the_seam_metrics_default_parameters():
    """skip 0, a 1024-frame STFT every 256 frames: the defaults give exactly what they name."""
    x = np.sin(np.arange(6000) * 0.05) * 0.5
    x[3001:] += 0.3                                        # a step just after the seam at 3000
    x += 0.01 * _noise(6000)
    seams_at = [3000]
    assert seam_discontinuity(x, seams_at) == seam_discontinuity(x, seams_at, 0)
    assert seam_discontinuity(x, seams_at) != seam_discontinuity(x, seams_at, 1)
    f, s = spectral_flux(x)
    f2, s2 = spectral_flux(x, 1024, 256)
    np.testing.assert_array_equal(f, f2)
    np.testing.assert_array_equal(s, s2)
    assert s[:3].tolist() == [256, 512, 768] and len(f) == (6000 - 1024) // 256
    assert seam_flux(x, seams_at) == seam_flux(x, seams_at, 1024, 256)
    assert seam_flux(x, seams_at) != seam_flux(x, seams_at, 1025, 257)
    assert seam_report(x, seams_at) == seam_report(x, seams_at, 0, 1024, 256)
    for other in (dict(skip=1), dict(frame=1025), dict(hop=257)):
        assert seam_report(x, seams_at) != seam_report(x, seams_at, **other)


def test_seam_discontinuity_passes_skip_to_the_jump():
    x = np.zeros(40)
    x[20:] = 1.0                                           # the seam's own step at 20
    x[22:] = 3.0                                           # a bigger one 2 frames after it
    j_at, j_else, _, _ = seam_discontinuity(x, [20], 0)
    assert (j_at, j_else) == (1.0, 2.0)
    j_at, j_else, _, _ = seam_discontinuity(x, [20], 2)  # the seam's neighbourhood left out
    assert (j_at, j_else) == (1.0, 0.0)


def test_seam_flux_of_one_frame_pair_and_of_none():
    x = _blocks([1.0, 3.0], frame=16)                      # frame + hop: exactly one pair, flux 2
    assert seam_flux(x, [16], 16, 16) == pytest.approx((2.0, 0.0), rel=1e-9)
    assert seam_flux(x, [100], 16, 16) == pytest.approx((0.0, 2.0), rel=1e-9)
    assert seam_flux(x[:-1], [16], 16, 16) == (0.0, 0.0)  # no pair: nothing at the seam, nothing else


def test_spectral_flux_frames_never_run_past_the_end():
    """n − frame + 1 a multiple of hop: the last frame would start one past the last that fits."""
    x = _noise(16 - 1 + 3 * 8)                             # frame 16, hop 8: starts 0, 8, 16
    f, s = spectral_flux(x, 16, 8)
    assert s.tolist() == [8, 16] and f.shape == (2,)
    f, s = spectral_flux(np.ones(10), 16, 8)
    assert s.dtype.kind == "i" and s.shape == (0,) and f.dtype == np.float64


# ---------------------------------------------------------------- CuPy input (a strict emulation)


class Dev(np.ndarray):
    """A device array the way CuPy treats one: NumPy's functions dispatch to it (NEP 13/18), but a
    host array mixed into its arithmetic is refused, and its truth value is a device sync."""

    syncs = 0

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kw):
        for a in inputs + (out or ()):
            if isinstance(a, np.ndarray) and not isinstance(a, Dev):
                raise TypeError(f"a host array in a device {ufunc.__name__}")
        args = [a.view(np.ndarray) if isinstance(a, Dev) else a for a in inputs]
        if out:
            kw["out"] = tuple(o.view(np.ndarray) for o in out)
        return _dev(getattr(ufunc, method)(*args, **kw))

    def __array_function__(self, func, types, args, kwargs):
        return _dev(func(*_host(args), **_host(kwargs)))

    def __bool__(self):
        Dev.syncs += 1
        return bool(self.view(np.ndarray))

    def any(self, *a, **kw):
        return _dev(np.asarray(self.view(np.ndarray).any(*a, **kw)))


Dev.__module__ = "cupy._core.core"


def _dev(r):
    if isinstance(r, np.ndarray):
        return r.view(Dev)
    if isinstance(r, (np.bool_, np.number)):
        return np.asarray(r).view(Dev)
    if isinstance(r, tuple):
        return tuple(_dev(v) for v in r)
    return r


def _host(a):
    if isinstance(a, Dev):
        return a.view(np.ndarray)
    if isinstance(a, (list, tuple)):
        return type(a)(_host(v) for v in a)
    if isinstance(a, dict):
        return {k: _host(v) for k, v in a.items()}
    return a


@pytest.fixture
def cp(monkeypatch):
    import sys
    import types

    mod = types.ModuleType("cupy")

    def wrap(f):
        return lambda *a, **kw: _dev(f(*_host(a), **_host(kw)))

    mod.__getattr__ = lambda name: (wrap(getattr(np, name)) if callable(getattr(np, name))
                                    and not isinstance(getattr(np, name), type) else getattr(np, name))
    mod.fft = types.SimpleNamespace(rfft=wrap(np.fft.rfft))
    monkeypatch.setitem(sys.modules, "cupy", mod)
    Dev.syncs = 0
    return mod


def dev(x):
    return np.array(x).view(Dev)


def test_device_input_is_computed_with_the_device_module(cp):
    """Every function on a CuPy array stays on the device: no host array enters its arithmetic
    (CuPy refuses one), and what it returns is a device array."""
    assert core.array_module(dev([1.0])) is cp
    old = dev(np.full((8, 2), 0.5, np.float32))
    new = dev(np.full((8, 2), -0.5, np.float32))
    host = lambda f, *a: f(*[np.asarray(v.view(np.ndarray)) if isinstance(v, Dev) else v for v in a])  # noqa: E731
    for curve in ("equal_power", "linear"):
        y = crossfade(old, new, curve)
        assert isinstance(y, Dev)
        np.testing.assert_array_equal(y.view(np.ndarray), host(crossfade, old, new, curve))
    for d in ("in", "out"):
        assert isinstance(fade(old, d), Dev)
        np.testing.assert_array_equal(fade(old, d).view(np.ndarray), host(fade, old, d))
    y = gain_ramp(old, 1.0, 0.0)
    assert isinstance(y, Dev)
    np.testing.assert_array_equal(y.view(np.ndarray), host(gain_ramp, old, 1.0, 0.0))
    assert isinstance(planar_to_interleaved(dev(np.ones((2, 5), np.float32))), Dev)
    st = Stitcher(4)
    assert isinstance(st.push(old), Dev) and isinstance(st.flush(), Dev)
    st.push(dev(np.ones((2, 2), np.float32)))             # shorter than the overlap: nothing held
    empty = st.flush()
    assert isinstance(empty, Dev) and empty.shape == (0, 2)
    assert isinstance(stitch([old, new], 2), Dev)


def test_the_limiter_never_syncs_the_device(cp):
    quiet = dev(np.full(16, 0.1, np.float32))
    loud = dev(np.full(16, 2.0, np.float32))
    y = soft_limit(quiet)
    assert isinstance(y, Dev) and y is not quiet
    np.testing.assert_array_equal(y.view(np.ndarray), np.full(16, 0.1, np.float32))
    assert float(soft_limit(loud).view(np.ndarray).max()) <= 0.97
    assert Dev.syncs == 0


def test_the_seam_metrics_of_device_input(cp):
    x = _blocks([1.0, 1.0, 4.0, 1.0])
    assert seam_flux(dev(x), [8], 8, 8) == pytest.approx(seam_flux(x, [8], 8, 8))
    f, s = spectral_flux(dev(x), 8, 8)
    assert isinstance(f, Dev)
    np.testing.assert_allclose(f.view(np.ndarray), spectral_flux(x, 8, 8)[0])
    y = np.sin(np.arange(200) * 0.3)
    assert seam_discontinuity(dev(y), [100], 2) == pytest.approx(seam_discontinuity(y, [100], 2))
