"""Prometheus metrics: values come from where the work happens, and the endpoint is optional and local."""
from __future__ import annotations

import queue
import secrets
import socket
import time
import urllib.request

import numpy as np
import pytest

from bridge.core.commands import Command
from bridge.core.daemon import Config, Daemon
from bridge.ops.metrics import Metrics
from engine.synth.backend import SynthBackend
from oscwire import prom_samples as samples
from plugin_stub.reader import RingReader




class FakeOsc:
    def __init__(self):
        self.stats = {"packets_good": 7, "packets_bad": 3, "denied": 1, "rate_limited": 2, "messages": 9}


@pytest.fixture
def live():
    events = queue.Queue()
    names = ["m" + secrets.token_hex(5) for _ in range(2)]
    d = Daemon(Config(slot_names=names, slots=2, target_s=0.3), emit=events.put, backend=SynthBackend()).open()
    osc = FakeOsc()
    m = Metrics(d, osc).attach()
    d.names, d.events, d.osc = names, events, osc
    yield d, m
    m.close()
    d.close(linger_s=0)


def wait_event(d, kind, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            ev = d.events.get(timeout=0.05)
        except queue.Empty:
            continue
        d.bus.drain()        # what the loop does for subscribers (the metrics subscribed outside a loop)
        if ev.kind == kind:
            return ev
    raise AssertionError(f"no {kind} event")


def test_engine_and_event_metrics_fill_from_a_real_daemon(live):
    d, m = live
    a, b = d.names
    reader = RingReader(a, max_block=4096).attach()
    try:
        d.submit(Command("play", slot=a, prompt="house groove with piano"))
        d.submit(Command("play", slot=b, prompt="ambient pads"))
        ev = wait_event(d, "first_audio")
        wait_event(d, "first_audio")
        end = time.monotonic() + 3
        while reader.buffered() < 4096 and time.monotonic() < end:
            time.sleep(0.01)
        for _ in range(1000):                              # read faster than real time: underrun frames
            reader.read(4096)
            if reader.underrun_frames:
                break
        under = reader.underrun_frames
        assert under > 0
        d.count_error("bad_args")
        d.count_error("bad_args")
        # a step's figures are recorded when the step ends, after the chunks it wrote (and their
        # first_audio) went out: wait for the one that generated the second slot
        end = time.monotonic() + 3
        while samples(m.text())["wavebridge_batch_size_sum"] < 2 and time.monotonic() < end:
            time.sleep(0.01)
        s = samples(m.text())
    finally:
        reader.detach()
    assert s["wavebridge_first_audio_seconds_count"] == 2
    assert s["wavebridge_first_audio_seconds_sum"] >= ev.ms / 1000.0
    assert s["wavebridge_chunk_generation_seconds_count"] >= 1
    assert s["wavebridge_batch_size_count"] >= 1 and s["wavebridge_batch_size_sum"] >= 2  # both slots generated
    assert s["wavebridge_queue_wait_seconds_count"] >= 2
    assert s["wavebridge_generated_audio_seconds_total"] > 0
    assert s["wavebridge_retimes_total"] == 0                 # no host here: nothing re-timed (tests/test_retime.py: 1)
    assert s["wavebridge_compute_seconds_total"] > 0
    assert s['wavebridge_realtime_factor{window="overall"}'] > 1.0
    assert s['wavebridge_realtime_factor{window="recent"}'] > 1.0
    assert s[f'wavebridge_slot_playing{{slot="{a}"}}'] == 1.0
    assert s[f'wavebridge_slot_buffered_seconds{{slot="{b}"}}'] > 0.0
    assert s[f'wavebridge_underrun_frames_total{{slot="{a}"}}'] == under     # straight from the ring header
    assert s[f'wavebridge_underrun_frames_total{{slot="{b}"}}'] == 0
    assert s['wavebridge_errors_total{code="bad_args"}'] == 2
    assert s['wavebridge_osc_packets_total{result="good"}'] == 7
    assert s['wavebridge_osc_packets_total{result="bad"}'] == 3
    assert s["wavebridge_engine_loop_age_seconds"] < 5.0
    assert s["wavebridge_commands_total"] == 2
    assert 'wavebridge_info{backend="synth"' in m.text()


def test_jobs_done_and_the_realtime_factor_follow_the_work(live):
    d, m = live
    a = d.names[0]
    d.submit(Command("play", slot=a, prompt="short jingle", seconds=0.2))
    wait_event(d, "done", 5.0)
    s = samples(m.text())
    assert s['wavebridge_jobs_done_total{reason="finished"}'] == 1
    overall, recent = m.realtime_factor()
    assert overall > 1.0 and recent > 1.0
    assert s["wavebridge_generated_audio_seconds_total"] >= 0.2 - 1e-6


def test_http_endpoint_on_loopback_with_a_free_port(live):
    d, m = live
    port = m.start_http("127.0.0.1", 0)
    assert port > 0
    r = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
    assert r.headers["Content-Type"].startswith("text/plain")
    body = r.read().decode()
    assert "wavebridge_first_audio_seconds_bucket" in body
    m.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_serve_metrics_flags(daemon_proc, osc_client):
    d = daemon_proc("--slots", "2", "--metrics-port", "0")
    line = [ln for ln in d.lines if "metrics on" in ln]
    assert line and "http://127.0.0.1:" in line[0]          # loopback by default
    port = int(line[0].rsplit(":", 1)[1].split("/")[0])
    c = osc_client(d.host, d.port)
    c.send("/wb/play", 1, "disco with strings")
    assert c.wait_for("/wb/first_audio", 3.0)
    c.send_raw(b"\x00garbage")
    assert c.wait_for("/wb/error", 3.0)[1] == "malformed"
    s = samples(urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode())
    assert s["wavebridge_first_audio_seconds_count"] == 1
    assert s['wavebridge_osc_packets_total{result="good"}'] >= 1
    assert s['wavebridge_osc_packets_total{result="bad"}'] == 1
    assert s['wavebridge_errors_total{code="malformed"}'] == 1
    assert s['wavebridge_slot_playing{slot="1"}'] == 1.0
    assert d.terminate()[0] == 0
    off = daemon_proc("--slots", "1", "--metrics-port", "off")
    assert not any("metrics on" in ln for ln in off.lines)


def test_a_taken_metrics_port_does_not_stop_the_audio(daemon_proc, osc_client):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    try:
        port = blocker.getsockname()[1]
        d = daemon_proc("--slots", "1", "--metrics-port", str(port))
        assert not any("metrics on" in ln for ln in d.lines)
        c = osc_client(d.host, d.port)
        c.send("/wb/play", 1, "still plays")
        assert c.wait_for("/wb/first_audio", 3.0)
    finally:
        blocker.close()


def test_scrape_during_shutdown_never_raises():
    names = ["m" + secrets.token_hex(5)]
    d = Daemon(Config(slot_names=names, slots=1), backend=SynthBackend()).open()
    m = Metrics(d).attach()
    d.close(linger_s=0)                                      # rings closed under the collector
    text = m.text()
    assert "wavebridge_realtime_factor" in text
    assert np.isfinite(samples(text)['wavebridge_realtime_factor{window="overall"}'])
