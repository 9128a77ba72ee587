"""The capacity model of docs/SCALE.md: replicas and cost for N listeners, and a day of the
autoscaler against the streams' buffers. Pure arithmetic (no Ray): ``wavebridge bench --cluster``
feeds it the figures it measured. ``[control]``

Two kinds of listener, because they cost differently:

- a **personal stream** (an app user's own prompt): one generation per listener, so
  ``replicas = ceil(listeners / (streams_per_replica · utilisation))``;
- a **station** (many listeners of one stream): generated once, encoded once, fanned out by an HTTP
  server or a CDN; the engine's cost is per station, and the listeners cost only egress.

:func:`simulate_day` runs Serve's autoscaling rule (desired replicas = ongoing streams / target per
replica, clamped to min..max; an increase acted on after ``upscale_delay_s``, a decrease after
``downscale_delay_s``; a new replica plays after ``start_s`` — its warm-up) over a day's load curve
minute by minute, and counts the streams that arrived when every replica was full: such a stream
waits for a replica to start. If it waits longer than its buffer, the listener hears the start late.
A stream already playing never moves, so it is never starved by scaling.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Plan:
    listeners: int
    kind: str                   # "personal" or "station"
    replicas: int
    cost_per_hour: float
    cost_per_audio_minute: float
    egress_mbit_s: float


def plan(listeners: int, streams_per_replica: float, replica_cost_per_hour: float, *, kind: str = "personal",
         utilisation: float = 0.75, stations: int = 1, opus_kbit_s: float = 96.0,
         egress_cost_per_gb: float = 0.0) -> Plan:
    """Replicas and cost for ``listeners`` at once. ``utilisation``: the share of a replica's
    measured real-time capacity planned for (the autoscaler's headroom for arrivals)."""
    if listeners <= 0 or streams_per_replica <= 0:
        raise ValueError("listeners and streams_per_replica must be > 0")
    if not 0 < utilisation <= 1:
        raise ValueError("utilisation must be in (0, 1]")
    streams = listeners if kind == "personal" else max(1, int(stations))
    replicas = max(1, math.ceil(streams / (streams_per_replica * utilisation)))
    egress = listeners * opus_kbit_s / 1000.0                            # Mbit/s
    egress_cost = egress / 8.0 * 3600 / 1000.0 * egress_cost_per_gb      # GB an hour × price
    per_hour = replicas * replica_cost_per_hour + egress_cost
    return Plan(listeners, kind, replicas, per_hour, per_hour / (listeners * 60.0), egress)


def day_curve(peak: int, trough_share: float = 0.15, spike_at_h: float | None = 20.0,
              spike_share: float = 0.5, spike_rise_min: float = 5.0) -> list[int]:
    """Concurrent streams for each minute of a day, at most ``peak``: a trough at 05:00, rising
    over 16 hours to a peak at 21:00 and falling over 8 (half cosines); optionally a release at
    ``spike_at_h`` that adds ``spike_share`` of the curve's level within ``spike_rise_min``
    minutes and decays over two hours."""
    raw = []
    for m in range(24 * 60):
        h = m / 60.0
        x = ((h - 5.0) % 24.0)
        phase = x / 16.0 if x <= 16.0 else 1.0 - (x - 16.0) / 8.0          # 0 at 05:00, 1 at 21:00
        v = trough_share + (1 - trough_share) * 0.5 * (1 - math.cos(math.pi * phase))
        if spike_at_h is not None and h >= spike_at_h:
            t = (h - spike_at_h) * 60.0
            v *= 1 + spike_share * min(1.0, t / spike_rise_min) * math.exp(-max(0.0, t - spike_rise_min) / 120.0)
        raw.append(v)
    top = max(raw)
    return [int(round(peak * v / top)) for v in raw]


@dataclass
class DayResult:
    replica_hours: float
    peak_replicas: int
    audio_minutes: float
    cost: float
    cost_per_audio_minute: float
    arrivals: int
    waited: int                 # arrivals that found every replica full
    late: int                   # … and waited longer than the buffer
    longest_wait_s: float


def simulate_day(curve: list[int], capacity: int, target: float, *, min_replicas: int = 1,
                 max_replicas: int = 10_000, upscale_delay_s: float = 30.0, downscale_delay_s: float = 600.0,
                 start_s: float = 8.0, buffer_s: float = 2.0, step_s: float = 1.0, mean_stream_min: float = 20.0,
                 replica_cost_per_hour: float = 1.0) -> DayResult:
    """Run the autoscaler over ``curve`` (concurrent streams per minute). ``capacity``: streams a
    replica serves at most (``max_ongoing_requests``); ``target``: streams per replica it aims at
    (``target_ongoing_requests``). Arrivals per step: the rise of the curve plus the streams that
    end and are replaced (a mean stream lasts ``mean_stream_min``)."""
    if capacity <= 0 or target <= 0 or target > capacity:
        raise ValueError("need 0 < target <= capacity")
    replicas = max(min_replicas, math.ceil(curve[0] / target))
    starting: list[float] = []                 # times at which replicas being started are ready
    want_since: float | None = None
    want_down_since: float | None = None
    t = 0.0
    rh = 0.0
    peak = replicas
    arrivals = waited = late = 0
    longest = 0.0
    waiting: list[float] = []                  # arrival times of streams not yet placed
    playing = float(curve[0])
    steps = int(len(curve) * 60 / step_s)
    for k in range(steps):
        t = k * step_s
        want = curve[min(len(curve) - 1, int(t // 60))]
        # arrivals: growth plus replacements of streams that end
        ends = playing * step_s / (mean_stream_min * 60.0)
        new = max(0.0, want - playing - len(waiting)) + ends       # the queued ones are already wanted
        playing = max(0.0, min(playing, want) - ends)
        n_new = int(new) + (1 if (new - int(new)) > ((k * 0.6180339887) % 1.0) else 0)
        arrivals += n_new
        waiting += [t] * n_new
        # replicas that finished starting
        ready = [s for s in starting if s <= t]
        starting = [s for s in starting if s > t]
        replicas += len(ready)
        # place waiting streams on free capacity
        free = int(replicas * capacity - playing)
        if free > 0 and waiting:
            placed, waiting = waiting[:free], waiting[free:]
            for a in placed:
                w = t - a
                if w > 0:
                    waited += 1
                    longest = max(longest, w)
                    if w > buffer_s:
                        late += 1
            playing += len(placed)
        # the autoscaler: ongoing (playing + queued) / target
        ongoing = playing + len(waiting)
        desired = min(max_replicas, max(min_replicas, math.ceil(ongoing / target)))
        total = replicas + len(starting)
        if desired > total:
            want_down_since = None
            want_since = t if want_since is None else want_since
            if t - want_since >= upscale_delay_s:
                starting += [t + start_s] * (desired - total)
                want_since = None
        elif desired < replicas:
            want_since = None
            want_down_since = t if want_down_since is None else want_down_since
            if t - want_down_since >= downscale_delay_s:
                # only idle capacity goes: never below what is playing
                replicas = max(desired, math.ceil(playing / capacity), min_replicas)
                want_down_since = None
        else:
            want_since = want_down_since = None
        peak = max(peak, replicas + len(starting))
        rh += (replicas + len(starting)) * step_s / 3600.0
    audio_min = sum(curve)                       # stream-minutes
    cost = rh * replica_cost_per_hour
    return DayResult(rh, peak, audio_min, cost, cost / max(1.0, audio_min), arrivals, waited, late, longest)
