"""The engine deployment autoscales on ongoing streams (#23): one replica idle, a second one added
while six real-time streams play (target 2 per replica, at most 2), and removed after they end.
A local Ray (2 CPUs), replicas of a quarter CPU, Serve's delays shortened so the test takes a minute.

Serve's handles and replicas report their ongoing requests every 10 s by default, and the
autoscaler looks only ``look_back_period_s`` back: a 2 s look-back with 10 s reports saw no load
most of the time (it scaled in 13 s on one checkout and never within 45 s on another). ``build``
now asks for reports every quarter of a short look-back."""
from __future__ import annotations

import os
import threading
import time

import pytest

import ray
from ray import serve

from bridge.cluster.replica import build


def running_replicas(app="wb-auto") -> int:
    st = serve.status().applications[app]
    return sum(int(d.replica_states.get("RUNNING", 0)) for d in st.deployments.values())


@pytest.fixture(scope="module")
def auto(tmp_path_factory):
    os.environ["RAY_worker_niceness"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _temp_dir=str(tmp_path_factory.mktemp("ray")))
    serve.start(http_options={"host": "127.0.0.1", "port": 0})
    h = serve.run(build("synth", replicas=None, capacity=4, num_cpus=0.25, min_replicas=1, max_replicas=2,
                        target_streams=2, upscale_delay_s=1, downscale_delay_s=3, look_back_period_s=2),
                  name="wb-auto", route_prefix="/auto")
    yield h
    serve.shutdown()
    ray.shutdown()


def test_a_replica_is_added_under_load_and_removed_after(auto):
    assert running_replicas() == 1
    stop = threading.Event()
    got = []

    def listen(seed):
        n = 0
        gen = auto.options(stream=True).stream.remote("ambient pads and a slow bell", seed, 40.0)
        for chunk in gen:
            n += len(chunk)
            if stop.is_set():
                gen.cancel()              # the listener hangs up: the replica's stream ends now
                break
        got.append(n)

    ths = [threading.Thread(target=listen, args=(s,), daemon=True) for s in range(6)]
    for t in ths:
        t.start()
    t0 = time.monotonic()
    peak = 1
    while time.monotonic() - t0 < 45 and peak < 2:
        peak = max(peak, running_replicas())
        time.sleep(0.5)
    up_s = time.monotonic() - t0
    stop.set()
    for t in ths:
        t.join(60)
    print(f"second replica after {up_s:.1f} s")
    assert peak == 2, "no replica was added under load"
    assert len(got) == 6 and all(n > 0 for n in got)
    t1 = time.monotonic()
    while time.monotonic() - t1 < 60 and running_replicas() > 1:
        time.sleep(0.5)
    print(f"back to one replica {time.monotonic() - t1:.1f} s after the streams ended")
    assert running_replicas() == 1, "the extra replica was not removed"



def test_a_short_look_back_gets_load_reports_inside_it_and_a_longer_interval_is_refused():
    from bridge.cluster.replica import metrics_interval_for

    assert metrics_interval_for(None) is None                # Serve's defaults: 30 s over 10 s reports
    assert metrics_interval_for(30.0) is None
    assert metrics_interval_for(10.0) == 2.5                 # no longer than the 10 s reports: a quarter
    assert metrics_interval_for(2.0) == 0.5
    assert metrics_interval_for(30.0, 1.0) == 1.0            # asked for: kept
    for look_back, iv in ((2.0, 2.0), (2.0, 5.0), (None, 0.0), (5.0, -1.0)):
        with pytest.raises(ValueError, match="look_back_period_s|metrics_interval_s"):
            metrics_interval_for(look_back, iv)
