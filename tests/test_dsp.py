"""NumPy tests of dsp: core functions, the fused stitch-and-publish twin, resampling, seam metrics."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import dsp
from dsp import (Stitcher, crossfade, equal_power_curves, fade, gain_ramp, linear_curves,
                 planar_to_interleaved, seam_jump, soft_limit, stitch)
from dsp.fused import stitch_and_publish
from dsp.resample import SOXR_EDGE, SOXR_TOLERANCE, Resampler, design, have_soxr, resample
from dsp.seams import seam_positions, seam_report

SR = 48000
BLOCKS = [1, 64, 65, 8192, 8193]


def rng(seed=0):
    return np.random.default_rng(seed)


def tones(n, sr=SR, freqs=(220.0, 1375.0, 4100.0), channels=2, amp=0.25, phase=0.0):
    """A band-limited multi-tone (frames, channels) float32; channel c is phase-shifted by c."""
    t = np.arange(n) / sr
    return np.stack([sum(amp * np.sin(2 * np.pi * f * t + phase + c + i) for i, f in enumerate(freqs))
                     for c in range(channels)], axis=1).astype(np.float32)


def overlapping_chunks(sig, lengths, overlap):
    """Slices of one continuous signal that overlap by ``overlap`` frames (what a backend hands back)."""
    out, pos = [], 0
    for n in lengths:
        out.append(sig[pos:pos + n])
        pos += n - overlap
    return out


# --------------------------------------------------------------------------- crossfade curves
@pytest.mark.parametrize("n", [1, 2, 7, 480, 2400])
def test_equal_power_curves_squares_sum_to_one(n):
    g_out, g_in = equal_power_curves(n)
    assert g_out.shape == g_in.shape == (n,) and g_out.dtype == np.float32
    np.testing.assert_allclose(g_out.astype(np.float64) ** 2 + g_in.astype(np.float64) ** 2, 1.0, atol=1e-6)
    if n > 1:
        assert np.all(np.diff(g_out) < 0) and np.all(np.diff(g_in) > 0)
    np.testing.assert_allclose(g_out, g_in[::-1], atol=1e-7)      # symmetric


@pytest.mark.parametrize("n", [1, 2, 7, 480, 2400])
def test_linear_curves_sum_to_one(n):
    g_out, g_in = linear_curves(n)
    np.testing.assert_allclose(g_out + g_in, 1.0, atol=1e-6)
    if n > 1:
        np.testing.assert_allclose(np.diff(g_in), 1.0 / n, rtol=1e-4)


def test_crossfade_keeps_constant_material_and_rejects_unknown_curve():
    a = np.full((256, 2), 0.5, np.float32)
    np.testing.assert_allclose(crossfade(a, a, "linear"), 0.5, atol=1e-6)
    # equal power on identical (correlated) material bulges by up to √2 in the middle
    ep = crossfade(a, a, "equal_power")
    assert ep.max() == pytest.approx(0.5 * np.sqrt(2), rel=1e-3)
    with pytest.raises(ValueError):
        crossfade(a, a, "cubic")


def test_crossfade_goes_from_old_to_new():
    old = np.ones((1000, 1), np.float32)
    new = -np.ones((1000, 1), np.float32)
    for curve in ("linear", "equal_power"):
        y = crossfade(old, new, curve)[:, 0]
        assert y[0] > 0.99 and y[-1] < -0.99
        assert np.all(np.diff(y) < 0)


# --------------------------------------------------------------------------- stitching
@pytest.mark.parametrize("overlap", [0, 1, 64, 480])
def test_stitch_length_and_continuity(overlap):
    lengths = [3000, 1000, 4096, 777, 2500]
    sig = tones(sum(lengths))
    chunks = overlapping_chunks(sig, lengths, overlap)
    y = stitch(chunks, overlap, "linear")
    assert y.shape == (sum(lengths) - overlap * (len(lengths) - 1), 2)
    # overlapping slices of one signal, linear (sum-to-one) fades: the signal comes back
    np.testing.assert_allclose(y, sig[:y.shape[0]], atol=2e-6)
    seams = seam_positions(lengths, overlap)
    at, inside = seam_jump(y, seams, skip=overlap)
    assert at <= inside * 1.05


@pytest.mark.parametrize("curve", ["linear", "equal_power"])
def test_stitcher_streaming_equals_one_shot(curve):
    r = rng(1)
    chunks = [r.standard_normal((n, 2)).astype(np.float32) for n in (500, 300, 1200, 257, 900)]
    one = stitch(chunks, 128, curve)
    st = Stitcher(128, curve)
    parts = [st.push(c) for c in chunks] + [st.flush()]
    streamed = np.concatenate([p for p in parts if p.shape[0]], axis=0)
    np.testing.assert_array_equal(streamed, one)
    assert sum(p.shape[0] for p in parts[:-1]) == one.shape[0] - 128   # the tail waits for the next chunk


def test_stitch_crossfades_unrelated_chunks_without_a_click():
    a = tones(4000, freqs=(300.0,), amp=0.8)
    b = tones(4000, freqs=(300.0,), amp=0.8, phase=2.0)          # a hard cut here would click
    hard = np.concatenate([a, b])
    soft = stitch([a, b], 480, "equal_power")
    assert seam_jump(hard, [4000])[0] > 3 * seam_jump(hard, [4000], skip=8)[1]
    at, inside = seam_jump(soft, [4000 - 480], skip=480)
    assert at <= inside * 1.05


# --------------------------------------------------------------------------- fades, gain, limiter
def test_fades():
    x = np.ones((1000, 2), np.float32)
    out = fade(x, "out")
    inn = fade(x, "in")
    assert out.shape == x.shape and out[0, 0] > 0.99 and out[-1, 0] < 0.01
    assert inn[0, 0] < 0.01 and inn[-1, 0] > 0.99
    assert np.all(np.diff(out[:, 0]) < 0) and np.all(np.diff(inn[:, 1]) > 0)
    np.testing.assert_allclose(fade(x, "out", "linear")[:, 0] + fade(x, "in", "linear")[:, 0], 1.0, atol=1e-6)


def test_gain_ramp():
    x = np.ones((100, 2), np.float32)
    np.testing.assert_array_equal(gain_ramp(x, 0.5, 0.5), 0.5)
    y = gain_ramp(x, 0.0, 1.0)
    np.testing.assert_allclose(y[:, 0], np.arange(100) / 100, atol=1e-7)   # endpoint excluded: next block starts at g1
    np.testing.assert_array_equal(y[:, 0], y[:, 1])
    assert y.dtype == np.float32


def test_soft_limit_never_exceeds_ceiling_and_is_identity_below_knee():
    ceiling, knee = 0.97, 0.7
    x = np.concatenate([np.linspace(-50, 50, 20001), [np.inf, -np.inf, 1e30, -1e30]]).astype(np.float32)
    y = soft_limit(x, ceiling, knee)
    assert np.all(np.abs(y) <= np.float32(ceiling))
    assert np.all(np.diff(y[:20001]) >= 0)                                  # monotonic
    np.testing.assert_array_equal(soft_limit(-x, ceiling, knee), -y)        # odd
    below = np.abs(x) <= knee * ceiling
    np.testing.assert_array_equal(y[below], x[below])
    quiet = (0.6 * np.sin(np.linspace(0, 50, 5000))).astype(np.float32)
    assert soft_limit(quiet) is quiet                                       # nothing over: untouched
    # continuous at the knee
    t = np.float32(knee * ceiling)
    assert abs(float(soft_limit(np.array([t * 1.0001], np.float32))[0]) - float(t)) < 1e-3


def test_planar_to_interleaved():
    p = np.arange(12, dtype=np.float32).reshape(2, 6)
    y = planar_to_interleaved(p)
    assert y.shape == (6, 2) and y.flags.c_contiguous
    np.testing.assert_array_equal(y[:, 0], p[0])
    np.testing.assert_array_equal(y.reshape(-1), [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11])
    out = np.empty((6, 2), np.float32)
    assert planar_to_interleaved(p, out=out) is out
    np.testing.assert_array_equal(out, y)


# --------------------------------------------------------------------------- fused twin
def reference_write(chunk_planar, g0, g1, prev=None, env=None, curve="equal_power"):
    """What the fused path must store, from the core functions: gain_ramp, crossfade, soft_limit, × env."""
    y = gain_ramp(planar_to_interleaved(chunk_planar), g0, g1)
    if prev is not None:
        k = prev.shape[1]
        y = np.concatenate([crossfade(planar_to_interleaved(prev), y[:k], curve), y[k:]])
    y = soft_limit(y, 0.97, 0.7)
    return y * env[:, None] if env is not None else y


@pytest.mark.parametrize("curve", ["linear", "equal_power"])
@pytest.mark.parametrize("capacity", [1024, 4096])
def test_fused_twin_equals_core_composition_across_wraps(curve, capacity):
    r = rng(2)
    ch = 2
    lengths = [700, 96, 1000, 333, 1024, 200]
    chunks = [(1.4 * r.standard_normal((ch, n))).astype(np.float32) for n in lengths]  # hot: limiter works
    gains = [(1.0, 1.0), (1.0, 0.5), (0.5, 0.5), (0.5, 1.2), (1.2, 1.2), (1.2, 0.0)]
    ring = np.full((capacity, ch), np.nan, np.float32)
    start = capacity - 300                                     # first chunk already wraps
    published = []
    for k, (chunk, (g0, g1)) in enumerate(zip(chunks, gains)):
        n = chunk.shape[1]
        prev = (1.4 * r.standard_normal((ch, min(n, 96)))).astype(np.float32) if k % 2 else None
        env = np.linspace(1, 0, n, dtype=np.float32) if k % 3 == 2 else None
        exp = reference_write(chunk, g0, g1, prev, env, curve)
        res = stitch_and_publish(chunk, ring, start, g0, g1, prev=prev, env=env, curve=curve, publish=published.append)
        assert res.frames == n and res.end == start + n and published[-1] == res.end
        got = np.stack([ring[(start + i) & (capacity - 1)] for i in range(n)])
        np.testing.assert_allclose(got, exp, rtol=0, atol=1e-6)
        start = res.end
    assert np.all(np.abs(ring[~np.isnan(ring)]) <= np.float32(0.97))   # mixes are limited too


def test_fused_accepts_transposed_interleaved():
    r = rng(3)
    inter = np.clip(r.standard_normal((500, 2)) * 0.1, -0.6, 0.6).astype(np.float32)  # below the knee
    ring_a = np.zeros((1024, 2), np.float32)
    ring_b = np.zeros((1024, 2), np.float32)
    stitch_and_publish(inter.T, ring_a, 10)
    stitch_and_publish(np.ascontiguousarray(inter.T), ring_b, 10)
    np.testing.assert_array_equal(ring_a, ring_b)
    np.testing.assert_array_equal(ring_a[10:510], inter)


def test_fused_ring_wrap_writes_only_its_frames():
    cap = 256
    ring = np.full((cap, 2), -7.0, np.float32)
    chunk = np.tile(np.arange(100, dtype=np.float32) / 1000, (2, 1))
    res = stitch_and_publish(chunk, ring, 5 * cap + 200)       # positions 200..255, 0..43
    assert res.frames == 100 and res.end == 5 * cap + 300
    np.testing.assert_array_equal(ring[200:, 0], chunk[0, :56])
    np.testing.assert_array_equal(ring[:44, 1], chunk[1, 56:])
    assert np.all(ring[44:200] == -7.0)


def test_scale_ring_fades_stored_frames_in_place_wrapping():
    from dsp.fused import scale_ring

    ring = np.ones((256, 2), np.float32)
    g = np.linspace(1, 0, 100, dtype=np.float32)
    assert scale_ring(ring, 5 * 256 + 200, g) == 100
    np.testing.assert_array_equal(ring[200:, 0], g[:56])
    np.testing.assert_array_equal(ring[:44, 1], g[56:])
    assert np.all(ring[44:200] == 1.0)


def test_fused_into_a_real_ring_publishes():
    from bridge.core.ring import RingWriter

    slot = f"tdsp{os.getpid()}"
    w = RingWriter.open(slot, SR, 2, 1024)
    try:
        sig = tones(2700)
        start = w.write_index
        for i in range(3):
            res = stitch_and_publish(sig[i * 900:(i + 1) * 900].T, w.data, start, publish=w.publish)
            start = res.end
        assert w.write_index == 2700
        np.testing.assert_allclose(w.load(2700 - 800, 800), soft_limit(sig[-800:]), atol=1e-6)
    finally:
        w.close()


def test_fused_rejects_bad_arguments():
    ring = np.zeros((1024, 2), np.float32)
    chunk = np.zeros((2, 100), np.float32)
    with pytest.raises(ValueError):
        stitch_and_publish(chunk, ring, 0, prev=np.zeros((2, 10), np.float32), curve="cubic")
    with pytest.raises(ValueError):
        stitch_and_publish(chunk, ring, 0, prev=np.zeros((2, 101), np.float32))   # longer than the chunk
    with pytest.raises(ValueError):
        stitch_and_publish(chunk, ring, 0, env=np.ones(99, np.float32))           # one gain per frame
    with pytest.raises(ValueError):
        stitch_and_publish(chunk, np.zeros((1000, 2), np.float32), 0)  # not a power of two
    with pytest.raises(ValueError):
        stitch_and_publish(chunk, np.zeros((64, 2), np.float32), 0)    # more than capacity
    with pytest.raises(ValueError):
        stitch_and_publish(np.zeros((3, 100), np.float32), ring, 0)


# --------------------------------------------------------------------------- resampling
def dominant_hz(y, sr):
    spec = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    return np.argmax(spec) * sr / len(y)


def chunked(rs, x, blocks=BLOCKS):
    parts, i, k = [], 0, 0
    while i < x.shape[0]:
        n = blocks[k % len(blocks)]
        parts.append(rs.push(x[i:i + n]))
        i += n
        k += 1
    parts.append(rs.flush())
    return np.concatenate(parts, axis=0)


ENGINES = ["numpy"] + (["soxr"] if have_soxr() else [])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rates", [(32000, 48000), (44100, 48000), (48000, 44100), (48000, 32000)])
def test_resample_streaming_equals_one_shot(engine, rates):
    src, dst = rates
    x = (0.3 * rng(4).standard_normal((src // 2, 2))).astype(np.float32)
    one = resample(x, src, dst, engine=engine)
    streamed = chunked(Resampler(src, dst, 2, engine), x)
    assert streamed.shape == one.shape
    assert abs(one.shape[0] - x.shape[0] * dst / src) <= 1
    np.testing.assert_allclose(streamed, one, rtol=0, atol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_resample_keeps_frequency_and_level(engine):
    x = tones(32000, sr=32000, freqs=(1000.0,), amp=0.5, channels=1)[:, 0]
    y = resample(x, 32000, 48000, engine=engine)
    assert y.ndim == 1 and y.shape[0] == 48000
    assert dominant_hz(y, 48000) == pytest.approx(1000.0, abs=2.0)
    mid = y[1000:-1000]
    assert np.max(np.abs(mid)) == pytest.approx(0.5, rel=2e-3)


@pytest.mark.skipif(not have_soxr(), reason="soxr not installed")
@pytest.mark.parametrize("rates", [(32000, 48000), (44100, 48000), (48000, 44100), (24000, 48000)])
def test_polyphase_matches_soxr_on_band_limited_signals(rates):
    import soxr

    src, dst = rates
    nyq = min(src, dst) / 2
    x = tones(src // 2, sr=src, freqs=tuple(f * nyq for f in (0.02, 0.31, 0.55, 0.8)), amp=0.22)
    ours = resample(x, src, dst, engine="numpy")
    ref = soxr.resample(x, src, dst, quality="HQ")
    assert ours.shape == ref.shape
    e = SOXR_EDGE
    assert np.max(np.abs(ours[e:-e] - ref[e:-e])) <= SOXR_TOLERANCE


def test_resample_falls_back_to_numpy_without_soxr(monkeypatch):
    monkeypatch.setitem(sys.modules, "soxr", None)          # import soxr → ImportError
    rs = Resampler(32000, 48000, 2)
    y = rs.push(np.zeros((3200, 2), np.float32), last=True)
    assert rs.engine == "numpy" and y.shape == (4800, 2)


def test_resample_design_is_sane():
    L, M, J, H = design(32000, 48000)
    assert (L, M) == (3, 2) and H.shape == (3, 2 * J)
    np.testing.assert_allclose(H.sum(axis=1), 1.0, atol=1e-12)
    assert not H.flags.writeable
    same = resample(np.ones((100, 2), np.float32), 48000, 48000)
    np.testing.assert_array_equal(same, 1.0)
    with pytest.raises(ValueError):
        Resampler(32000, 48000, 2).push(np.zeros((10, 3), np.float32))


# --------------------------------------------------------------------------- seam metrics
def stitched_tones(lengths, overlap):
    sig = tones(sum(lengths), freqs=(440.0, 3000.0), amp=0.3)
    return stitch(overlapping_chunks(sig, lengths, overlap), overlap, "linear")


def test_seam_metrics_pass_a_clean_stitch():
    lengths, ov = [9000, 12000, 7000, 15000, 9000], 480
    y = stitched_tones(lengths, ov)
    rep = seam_report(y, seam_positions(lengths, ov), skip=ov)
    assert rep.jump_ratio < 1.1 and rep.curvature_ratio < 1.1 and rep.flux_ratio < 2.0


@pytest.mark.parametrize("kind", ["impulse", "polarity", "cut"])
def test_seam_metrics_detect_a_planted_click(kind):
    lengths, ov = [9000, 12000, 7000, 15000, 9000], 480
    y = stitched_tones(lengths, ov)
    seams = seam_positions(lengths, ov)
    s = seams[2]
    z = y.copy()
    if kind == "impulse":
        z[s] += 0.3
    elif kind == "polarity":
        z[s:] *= -1
    else:
        z[s:] = np.roll(z[s:], 37, axis=0)
    clean = seam_report(y, seams, skip=ov)
    bad = seam_report(z, seams, skip=ov)
    assert bad.curvature_ratio > 4 and bad.curvature_ratio > 4 * clean.curvature_ratio
    assert bad.flux_ratio > 20 and bad.flux_ratio > 20 * clean.flux_ratio


def test_seam_positions():
    assert seam_positions([100, 200, 50], 10) == [90, 280]
    assert seam_positions([100]) == []


# --------------------------------------------------------------------------- lazy CuPy
def fresh_python(code: str, **env) -> None:
    """Run ``code`` in a fresh interpreter at the repo root; it must exit 0."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                       env={**os.environ, **env})
    assert p.returncode == 0, p.stdout + p.stderr


def test_dsp_imports_without_cupy():
    fresh_python("import sys, dsp, dsp.gpu, dsp.fused, dsp.resample, dsp.seams; "
                 "bad = [m for m in sys.modules if m.split('.')[0] in ('cupy', 'torch', 'soxr', 'bridge', 'engine')]; "
                 "print(bad); sys.exit(1 if bad else 0)")


def test_gpu_available_is_false_not_an_error_without_cupy():
    # "import cupy" fails, whether or not CuPy is installed here
    fresh_python("import sys; sys.modules['cupy'] = None; import dsp.gpu as g; "
                 "ok = g.available(); print(ok); sys.exit(0 if ok is False else 1)")


def test_gpu_available_is_false_not_an_error_without_a_device():
    # CuPy installed (make setup installs it) but no usable device: a clean False, cached
    fresh_python("import sys, dsp.gpu as g; a = g.available(); b = g.available(); print(a, b); "
                 "sys.exit(0 if a is b is False else 1)", CUDA_VISIBLE_DEVICES="")


def test_array_module_is_numpy_for_numpy():
    assert dsp.array_module(np.zeros(1)) is np


def test_a_fade_applied_chunk_by_chunk_equals_the_whole_curve():
    from dsp import equal_power_curves, fade_curve

    whole = equal_power_curves(1000)[0]
    parts = np.concatenate([fade_curve(1000, a, b - a) for a, b in ((0, 7), (7, 400), (400, 1000))])
    np.testing.assert_allclose(parts, whole, atol=1e-7)
