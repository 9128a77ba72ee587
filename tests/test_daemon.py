"""Daemon core without sockets: play, splice at the read head, stop, finite jobs, faults."""
from __future__ import annotations

import queue
import secrets
import time

import numpy as np
import pytest

from bridge.commands import Command
from bridge.daemon import Config, Daemon
from bridge.protocol import WavebridgeError
from dsp import soft_limit
from engine.synth import SynthBackend, arrange, render
from plugin_stub.reader import RingReader


class Boom(SynthBackend):
    """Fails any stream whose prompt contains 'boom'."""

    def generate(self, streams, frames):
        for s in streams:
            if "boom" in s.prompt:
                raise RuntimeError("kaboom")
        return super().generate(streams, frames)


@pytest.fixture
def daemon():
    events = queue.Queue()
    names = ["d" + secrets.token_hex(5) for _ in range(2)]
    d = Daemon(Config(slot_names=names, slots=2, target_s=0.5), emit=events.put, backend=Boom()).open()
    d.names = names
    d.events = events
    yield d
    d.close(linger_s=0)


def wait_event(d, kind, timeout=5.0, **match):
    """The first not yet consumed event of ``kind`` matching ``match`` (events are kept in order)."""
    end = time.monotonic() + timeout
    seen = d.__dict__.setdefault("seen", [])
    while True:
        for ev in seen:
            if ev.kind == kind and all(getattr(ev, k) == v for k, v in match.items()):
                seen.remove(ev)
                return ev
        if time.monotonic() > end:
            raise AssertionError(f"no {kind} event {match}; had {[(e.kind, e.code) for e in seen]}")
        try:
            seen.append(d.events.get(timeout=0.05))
        except queue.Empty:
            pass


def wait_until(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    raise AssertionError("condition not reached")


def test_play_publishes_audio_and_metadata(daemon):
    s = daemon.names[0]
    r = RingReader(s, max_block=128).attach()
    job = daemon.submit(Command("play", slot=s, prompt="house with piano"))
    ev = wait_event(daemon, "first_audio", job=job)
    assert ev.ms > 0
    assert r.playing and r.buffered() > 0
    meta = r.meta()
    assert meta["prompt"] == "house with piano" and meta["job"] == job and meta["backend"] == "synth"
    wait_until(lambda: r.buffered() >= 0.5 * 48000)          # fills to the target depth
    a = r.read(128)
    assert np.isfinite(a).all() and np.abs(a).max() > 0
    r.detach()


def test_prompt_change_splices_at_the_read_head(daemon):
    s = daemon.names[0]
    r = RingReader(s, max_block=128).attach()
    r.read(128)                                       # publishes reader_block_frames
    daemon.submit(Command("play", slot=s, prompt="techno in F minor"))
    wait_until(lambda: r.buffered() >= 0.5 * 48000)
    ri = r.read_index
    j2 = daemon.submit(Command("play", slot=s, prompt="ambient pads in D major", seed=4))
    wait_event(daemon, "first_audio", job=j2)
    meta = r.meta()
    splice = meta["splice_at"]
    ring = daemon.slots[s].ring
    guard = ring.guard_frames(daemon.config.guard_ms)
    assert splice == ri + guard                      # rewritten from read_index + guard, not after 0.5 s
    xf = int(48000 * daemon.config.xfade_ms / 1000)
    wait_until(lambda: ring.write_index >= splice + xf + 4096)
    expect = soft_limit(render([arrange("ambient pads in D major", 4)], np.array([0]), 4096 + xf)[0])
    got = ring.load(splice + xf, 4096)
    assert np.array_equal(got, expect[xf:xf + 4096])  # after the crossfade: exactly the new stream
    ev = wait_event(daemon, "done")
    assert ev.extra["reason"] == "replaced"
    r.detach()


def test_stop_fades_at_the_read_head(daemon):
    s = daemon.names[1]
    r = RingReader(s, max_block=48000).attach()
    r.read(128)
    job = daemon.submit(Command("play", slot=s, prompt="rock with drums"))
    wait_until(lambda: r.buffered() >= 0.4 * 48000)
    daemon.submit(Command("stop", slot=s, fade_s=0.02))
    ev = wait_event(daemon, "done", job=job)
    assert ev.extra["reason"] == "stopped"
    ring = daemon.slots[s].ring
    assert not r.playing
    assert r.buffered() <= ring.guard_frames(daemon.config.guard_ms) + int(0.02 * 48000)
    tail = r.read(r.buffered())
    assert np.abs(tail[-16:]).max() < 0.02           # ends faded, no click
    assert daemon.status()[1]["state"] == "idle"
    r.detach()


def test_finite_job_has_exact_length_and_ends_faded(daemon):
    s = daemon.names[0]
    r = RingReader(s, max_block=48000).attach()
    job = daemon.submit(Command("play", slot=s, prompt="pop with bass", seconds=0.25))
    ev = wait_event(daemon, "done", job=job)
    assert ev.extra["reason"] == "finished"
    assert r.buffered() == 12000
    a = r.read(12000)
    assert np.abs(a[-8:]).max() < 0.01
    assert not r.playing
    r.detach()


def test_backend_failure_ends_only_that_job(daemon):
    a, b = daemon.names
    rb = RingReader(b, max_block=128).attach()
    daemon.submit(Command("play", slot=b, prompt="fine music"))
    wait_event(daemon, "first_audio")
    job = daemon.submit(Command("play", slot=a, prompt="boom"))
    ev = wait_event(daemon, "error", job=job)
    assert ev.code == "backend" and "kaboom" in ev.message
    w0 = daemon.slots[b].ring.write_index
    rb.read(4096)
    wait_until(lambda: daemon.slots[b].ring.write_index > w0)   # the other slot keeps going
    assert daemon.status()[0]["state"] == "error"
    daemon.submit(Command("play", slot=a, prompt="recovered"))   # the slot is usable again
    wait_event(daemon, "first_audio")
    rb.detach()


def test_gain_param_ramps_without_clicks(daemon):
    s = daemon.names[0]
    r = RingReader(s, max_block=8192).attach()
    daemon.submit(Command("param", slot=s, name="gain", value=0.0))
    daemon.submit(Command("play", slot=s, prompt="house"))
    wait_until(lambda: r.buffered() >= 8192)
    assert np.abs(r.read(8192)).max() == 0.0


def test_unknown_slot_is_refused(daemon):
    with pytest.raises(WavebridgeError) as e:
        daemon.submit(Command("play", slot=99, prompt="x"))
    assert e.value.code == "bad_slot"


def test_stop_on_idle_slot_is_an_error_not_a_crash(daemon):
    daemon.submit(Command("stop", slot=daemon.names[0]))
    ev = wait_event(daemon, "error")
    assert ev.code == "not_playing"


def test_slot_follows_the_host_rate(daemon):
    """A host at 44.1 kHz gets a 44.1 kHz ring: the daemon resamples, the header says so."""
    from plugin_stub.player import PacedRecorder

    s = daemon.names[0]
    r = RingReader(s, max_block=128, host_rate=44100).attach()
    r.read(128)
    rec = PacedRecorder(r, 1.0, 128)
    rec.rate = 44100
    import threading
    th = threading.Thread(target=rec.run)
    th.start()
    job = daemon.submit(Command("play", slot=s, prompt="pads in C major", seconds=0.5))
    wait_event(daemon, "done", job=job)
    th.join()
    assert daemon.slots[s].ring.sample_rate == 44100 and r.sample_rate == 44100
    a = rec.captured[rec.real.nonzero()[0][0] * 128:]
    n = int(rec.real.sum())
    assert abs(n - 22050) < 300                 # 0.5 s at the host's rate, none skipped
    a = a[:n]
    assert np.isfinite(a).all() and np.abs(a).max() > 0.01
    # pitch is preserved: the spectrum's peak matches the 48 kHz render's
    ref = render([arrange("pads in C major", 0)], np.array([0]), 24000)[0][:, 0]
    f_ref = np.argmax(np.abs(np.fft.rfft(ref[2000:20000]))) * 48000 / 18000
    got = a[:, 0][1837:18375]
    f_got = np.argmax(np.abs(np.fft.rfft(got))) * 44100 / got.size
    assert abs(f_got - f_ref) < 6
