"""The capacity model (docs/SCALE.md): replicas and cost for N listeners, and the autoscaler over a
day against the streams' buffers. Pure arithmetic: known answers and the properties that matter."""
from __future__ import annotations

import math

import pytest

from bridge.cluster.capacity import day_curve, plan, simulate_day


def test_personal_streams_need_a_replica_share_each_and_a_station_does_not():
    p = plan(10_000, 12, 2.0, utilisation=0.75)
    assert p.replicas == math.ceil(10_000 / 9) == 1112
    assert p.cost_per_hour == pytest.approx(1112 * 2.0)
    assert p.cost_per_audio_minute == pytest.approx(1112 * 2.0 / (10_000 * 60))
    assert plan(100, 12, 1.0, utilisation=1.0).replicas == 9
    s = plan(1_000_000, 12, 2.0, kind="station", stations=50, utilisation=0.75, egress_cost_per_gb=0.0)
    assert s.replicas == 6 and s.cost_per_hour == pytest.approx(12.0)
    assert s.egress_mbit_s == pytest.approx(96_000.0)              # 96 kbit/s Opus each
    e = plan(1_000, 12, 0.0, kind="station", egress_cost_per_gb=0.1)
    assert e.cost_per_hour == pytest.approx(1_000 * 96e3 / 8 * 3600 / 1e9 * 0.1)
    for bad in ((0, 12, 1.0), (10, 0, 1.0)):
        with pytest.raises(ValueError):
            plan(*bad)
    with pytest.raises(ValueError):
        plan(10, 12, 1.0, utilisation=1.5)


def test_the_day_curve_has_its_trough_peak_and_release():
    c = day_curve(10_000, trough_share=0.1, spike_at_h=None)
    assert len(c) == 1440 and max(c) == 10_000
    assert c[21 * 60] == 10_000 and c[5 * 60] == min(c) == 1_000
    assert c[13 * 60] < c[17 * 60] < c[21 * 60] and c[23 * 60] > c[3 * 60]     # rises 16 h, falls 8 h
    r = day_curve(10_000, trough_share=0.1, spike_at_h=20.0, spike_share=0.5, spike_rise_min=5)
    assert max(r) == 10_000 and 20 * 60 + 4 <= r.index(max(r)) <= 20 * 60 + 60
    assert r[20 * 60 + 5] > 1.3 * r[20 * 60 - 1]                  # +50 % within five minutes


def test_a_flat_day_costs_exactly_its_replicas_and_nobody_waits():
    r = simulate_day([600] * 1440, capacity=8, target=6, replica_cost_per_hour=2.0, step_s=10)
    assert r.peak_replicas == 100
    assert r.replica_hours == pytest.approx(100 * 24)
    assert r.cost == pytest.approx(2.0 * 100 * 24)
    assert r.waited == 0 and r.late == 0
    assert r.cost_per_audio_minute == pytest.approx(2.0 * 100 * 24 / (600 * 1440))


def test_headroom_carries_a_release_and_no_headroom_makes_listeners_wait():
    curve = day_curve(4_000, spike_at_h=20.0, spike_share=0.6, spike_rise_min=3)
    roomy = simulate_day(curve, capacity=8, target=6, upscale_delay_s=30, start_s=8, buffer_s=2, step_s=2)
    assert roomy.late == 0
    tight = simulate_day(curve, capacity=8, target=8, upscale_delay_s=120, start_s=8, buffer_s=2, step_s=2)
    assert tight.late > 0 and tight.longest_wait_s > 2
    slow = simulate_day(curve, capacity=8, target=8, upscale_delay_s=300, start_s=8, buffer_s=2, step_s=2)
    assert slow.late > tight.late and slow.longest_wait_s > tight.longest_wait_s
    # replicas are never fewer than the streams playing need, and more headroom costs more
    assert roomy.peak_replicas >= math.ceil(max(curve) / 8)
    assert roomy.replica_hours > tight.replica_hours


def test_bad_autoscaler_settings_are_refused():
    for cap, tgt in ((0, 1), (8, 0), (8, 9)):
        with pytest.raises(ValueError):
            simulate_day([10] * 10, capacity=cap, target=tgt)
