"""Daemon core without sockets: play, splice at the read head, stop, finite jobs, faults."""
from __future__ import annotations

import queue
import secrets
import time

import numpy as np
import pytest

from bridge.core.commands import Command
from bridge.core.daemon import Config, Daemon
from plugin_stub.protocol import WavebridgeError
from dsp import soft_limit
from engine.synth.backend import SynthBackend, render_stream
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


def listening(name, max_block=128, **kw) -> RingReader:
    """A reader attached to ``name`` that has read one block: the daemon now knows its block
    size (the splice guard) and, with ``host_rate=``, its rate."""
    r = RingReader(name, max_block=max_block, **kw).attach()
    r.read(128)
    return r


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
    r = listening(s, max_block=128)
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
    expect = soft_limit(render_stream("ambient pads in D major", 4, 4096 + xf))
    got = ring.load(splice + xf, 4096)
    assert np.array_equal(got, expect[xf:xf + 4096])  # after the crossfade: exactly the new stream
    ev = wait_event(daemon, "done")
    assert ev.extra["reason"] == "replaced"
    r.detach()


def test_stop_fades_at_the_read_head(daemon):
    s = daemon.names[1]
    r = listening(s, max_block=48000)
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
    rb = RingReader(b, max_block=4096).attach()
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
    r = listening(s, max_block=128, host_rate=44100)
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
    ref = render_stream("pads in C major", 0, 24000)[:, 0]
    f_ref = np.argmax(np.abs(np.fft.rfft(ref[2000:20000]))) * 48000 / 18000
    got = a[:, 0][1837:18375]
    f_got = np.argmax(np.abs(np.fft.rfft(got))) * 44100 / got.size
    assert abs(f_got - f_ref) < 6


# ---- edge cases found in review: each failed before its fix --------------------------------------
class FlakyOld(SynthBackend):
    """Fails any call that makes crossfade material (an odd size) for a prompt with 'old'."""

    def generate(self, streams, frames):
        if any("old" in s.prompt for s in streams) and frames & (frames - 1):
            from engine.backend import OutOfMemory

            raise OutOfMemory("simulated")
        return super().generate(streams, frames)


def _daemon(backend, **cfg):
    events = queue.Queue()
    names = ["e" + secrets.token_hex(5) for _ in range(2)]
    d = Daemon(Config(slot_names=names, slots=2, **{"target_s": 0.5, **cfg}), emit=events.put,
               backend=backend).open()
    d.names, d.events = names, events
    return d


def test_failing_crossfade_material_does_not_break_the_prompt_change():
    d = _daemon(FlakyOld())
    try:
        s = d.names[0]
        r = listening(s, max_block=128)
        j1 = d.submit(Command("play", slot=s, prompt="old groove"))
        wait_event(d, "first_audio", job=j1)
        # with almost nothing buffered, the crossfade needs the old job's continuation
        j2 = d.submit(Command("play", slot=s, prompt="new ambient pad", seconds=0.3))
        wait_event(d, "first_audio", job=j2)
        assert not any(e.kind == "error" for e in d.__dict__.get("seen", []))
        r.detach()
    finally:
        d.close(linger_s=0)


def test_second_play_before_the_first_sounds_starts_cleanly_at_the_host_rate(daemon):
    s = daemon.names[0]
    r = listening(s, max_block=128, host_rate=44100)
    j1 = daemon.submit(Command("play", slot=s, prompt="first idea"))
    j2 = daemon.submit(Command("play", slot=s, prompt="second thought"))
    wait_event(daemon, "first_audio", job=j2)
    assert wait_event(daemon, "done", job=j1).extra["reason"] == "replaced"
    assert daemon.slots[s].ring.sample_rate == 44100            # an idle start: follows the host
    assert "splice_at" not in r.meta()                          # appended, not spliced over nothing
    r.detach()


def test_a_finite_job_still_playing_can_be_stopped_or_replaced_at_the_read_head(daemon):
    s = daemon.names[0]
    r = listening(s, max_block=128)
    j1 = daemon.submit(Command("play", slot=s, prompt="short loop", seconds=0.45))
    wait_until(lambda: daemon.slots[s].job is None and daemon.slots[s].tail_job is not None)
    assert daemon.status()[0]["state"] == "playing"             # generated, not yet heard
    j2 = daemon.submit(Command("play", slot=s, prompt="next idea", seed=2))
    wait_event(daemon, "first_audio", job=j2)
    assert wait_event(daemon, "done", job=j1).extra["reason"] == "replaced"
    assert r.meta()["splice_at"] <= r.read_index + daemon.slots[s].ring.guard_frames(10.0) + 1
    daemon.submit(Command("stop", slot=s))
    assert wait_event(daemon, "done", job=j2).extra["reason"] == "stopped"
    r.detach()


def test_a_finite_job_is_done_when_it_has_been_heard():
    from plugin_stub.player import PacedRecorder
    import threading

    d = _daemon(SynthBackend())
    try:
        s = d.names[0]
        r = RingReader(s, max_block=128).attach()
        rec = PacedRecorder(r, 1.5, 128)
        th = threading.Thread(target=rec.run)
        th.start()
        j = d.submit(Command("play", slot=s, prompt="a short phrase", seconds=0.6))
        wait_event(d, "first_audio", job=j)
        done = wait_event(d, "done", job=j)
        t_done = time.monotonic()
        th.join()
        assert done.extra["reason"] == "finished"
        assert rec.real.sum() == int(0.6 * 48000)                   # every frame was heard …
        heard = rec.times[np.nonzero(rec.real)[0][-1]]
        assert heard <= t_done                                      # … before the job said done
        r.detach()
    finally:
        d.close(linger_s=0)


def test_stop_never_rewrites_frames_next_to_the_read_head(daemon):
    s = daemon.names[0]
    r = RingReader(s, max_block=1 << 16).attach()
    r.read(256)
    daemon.submit(Command("play", slot=s, prompt="steady groove"))
    wait_until(lambda: r.buffered() > 20000)
    ring = daemon.slots[s].ring
    r.read(r.buffered() - 300)                                  # leave less than the guard
    before = ring.load(r.read_index, 300).copy()
    job = daemon.slots[s].job.job
    daemon.submit(Command("stop", slot=s, fade_s=0.05))
    assert wait_event(daemon, "done", job=job).extra["reason"] == "stopped"
    assert np.array_equal(ring.load(r.read_index, 300), before)   # published frames untouched
    tail = r.read(r.buffered())
    assert np.abs(tail[-8:]).max() < 0.02                         # and the audio still fades out
    r.detach()


def test_stop_during_a_pending_prompt_change_ends_both_jobs(daemon):
    s = daemon.names[0]
    r = listening(s, max_block=128)
    j1 = daemon.submit(Command("play", slot=s, prompt="first"))
    wait_event(daemon, "first_audio", job=j1)
    j2 = daemon.submit(Command("play", slot=s, prompt="second"))
    daemon.submit(Command("stop", slot=s))
    got = {wait_event(daemon, "done", job=j).job for j in (j1, j2)}
    assert got == {j1, j2}
    r.detach()


def test_long_crossfades_and_fades_are_as_long_as_asked(daemon):
    s = daemon.names[0]
    r = listening(s, max_block=128)
    spy = []
    eng = daemon.engine.writer
    orig = eng._splice
    eng._splice = lambda slot, job, new, *a: (spy.append((eng.xfade_frames(slot), new.shape[0])),
                                              orig(slot, job, new, *a))[1]
    daemon.submit(Command("play", slot=s, prompt="house with piano"))
    wait_until(lambda: r.buffered() > 20000)
    daemon.submit(Command("param", slot=s, name="xfade_ms", value=400.0))
    j2 = daemon.submit(Command("play", slot=s, prompt="ambient pad"))
    wait_event(daemon, "first_audio", job=j2)
    xf, n = spy[-1]
    assert xf == 19200 and n >= xf                               # the whole 400 ms crossfade fits
    wait_until(lambda: r.buffered() > 20000)
    from plugin_stub.player import PacedRecorder
    import threading

    rec = PacedRecorder(r, 3.5, 128)                             # a host that keeps listening
    th = threading.Thread(target=rec.run)
    th.start()
    daemon.submit(Command("stop", slot=s, fade_s=2.0))           # longer than what is buffered
    wait_event(daemon, "done", job=j2, timeout=10)
    th.join()
    assert_heard_fade(rec, r.meta(), 96000)                      # it does fade, over 2 s
    r.detach()


def assert_heard_fade(rec, meta, frames: int) -> None:
    """A stop's fade as the host heard it: ``frames`` long in the metadata, loud at its start,
    quiet at its end, silent at the last frames (``rec`` a ``PacedRecorder`` at 128-frame blocks)."""
    assert meta["end_at"] - meta["stop_at"] == frames
    heard = rec.captured[:int(rec.real.sum())]
    k0 = int(np.searchsorted(rec.read_index[:rec.blocks_done], meta["stop_at"]))
    x = np.abs(heard[k0 * 128:])
    env = x[:x.shape[0] // 128 * 128].reshape(-1, 128, x.shape[1]).max(axis=(1, 2))
    assert env[:20].mean() > 4 * env[-40:].mean()
    assert np.abs(heard[-8:]).max() < 0.02


def test_a_ring_being_created_or_held_by_a_live_writer_is_never_taken(slot_name):
    from plugin_stub.protocol import RingError
    from bridge.core.ring import RingWriter

    w = RingWriter.open(slot_name, 48000, 2, 1 << 12)
    try:
        with pytest.raises(RingError) as e:
            RingWriter.open(slot_name, 48000, 2, 1 << 12)        # same process, other descriptor
        assert e.value.code == "ring_busy"
    finally:
        w.close()


# ---- control-side fixes: queue, params, config, capacity, short jobs, backend.end ----------------
def test_params_are_coalesced_and_stops_are_never_refused():
    from bridge.core.inbox import CommandQueue

    q = CommandQueue(4)
    for v in range(50):                      # a CC sweep fanned out to two slots
        for slot in (1, 2):
            q.put_nowait(Command("param", slot=slot, name="gain", value=v / 50))
    assert q.qsize() == 2 and q.coalesced == 98
    q.put_nowait(Command("play", slot=1, prompt="x"))
    q.put_nowait(Command("play", slot=2, prompt="y"))
    with pytest.raises(queue.Full):
        q.put_nowait(Command("play", slot=3, prompt="z"))
    for slot in (1, 2, 3):
        q.put_nowait(Command("stop", slot=slot))          # note-offs beyond the bound
    got = [q.get_nowait() for _ in range(q.qsize())]
    assert [c.kind for c in got] == ["param", "param", "play", "play", "stop", "stop", "stop"]
    assert got[0].value == got[1].value == 49 / 50          # the newest value, in its first place
    q.put_nowait(Command("param", slot=1, name="gain", value=0.5))   # taken: a new entry again
    assert q.qsize() == 1
    q.get_nowait()
    plays = [Command("play", slot=1, prompt=f"p{k}") for k in range(3)]
    stop = Command("stop", slot=1)
    for c in plays[:2] + [stop, plays[2]]:
        q.put_nowait(c)
    assert plays[0].superseded and not plays[1].superseded   # a stop between
    assert not plays[2].superseded


def test_a_burst_of_prompt_changes_costs_one_start_and_every_job_is_answered(daemon):
    s = daemon.names[0]
    jobs = [daemon.submit(Command("play", slot=s, prompt=f"idea {k}")) for k in range(40)]
    wait_event(daemon, "first_audio", job=jobs[-1])
    for j in jobs[:-1]:
        assert wait_event(daemon, "done", job=j).extra["reason"] == "replaced"


def test_backend_parameter_ranges_win_over_the_common_ones():
    from bridge.core.commands import parse_osc

    class Wide(SynthBackend):
        params = dict(SynthBackend.params, guidance=(0.0, 15.0, 3.0))

    d = Daemon(Config(slot_names=["p" + secrets.token_hex(4)], slots=1), backend=Wide())
    p = d.params()
    assert p["guidance"] == (0.0, 15.0) and p["xfade_ms"] == (1.0, 500.0)
    assert parse_osc("/wb/param", [1, "guidance", 12.0], 1, p).value == 12.0


@pytest.mark.parametrize("field,value", [("first_chunk", 0), ("first_chunk", 16384), ("max_chunk", 0),
                                         ("target_s", 0.0), ("target_s", float("nan")), ("queue_max", 0)])
def test_bad_engine_settings_are_refused_before_any_ring_exists(field, value):
    from bridge.core.daemon import validate_config

    name = "v" + secrets.token_hex(4)
    cfg = Config(slot_names=[name], slots=1, **{field: value})
    with pytest.raises(ValueError, match=field):
        validate_config(cfg)
    with pytest.raises(ValueError, match=field):
        Daemon(cfg, backend=SynthBackend()).open()
    import os
    from plugin_stub.protocol import shm_path
    assert not os.path.exists(shm_path(name))


def test_a_job_shorter_than_a_frame_still_ends():
    from engine.scheduler import Scheduler

    sched = Scheduler(SynthBackend(), target_frames=4800)
    job = sched.start(1, 1, "x", 0, 5e-6)
    assert job.frames_total == 1


def test_backend_end_errors_are_logged(caplog):
    from engine.scheduler import Scheduler

    class BadEnd(SynthBackend):
        def end(self, stream):
            if stream.job:                      # the synth's own warm-up stream (job 0) is freed as usual
                raise RuntimeError("cannot free")

    sched = Scheduler(BadEnd(), target_frames=4800)
    job = sched.start(1, 1, "x", 0)
    sched.attach(job)
    with caplog.at_level("ERROR", logger="wavebridge"):
        sched.end(job)
    assert job.done and "cannot free" in caplog.text


def test_at_backend_capacity_a_prompt_change_still_works_and_a_new_slot_is_refused_clearly():
    class Two(SynthBackend):
        max_batch = 2

    events = queue.Queue()
    names = ["c" + secrets.token_hex(4) for _ in range(3)]
    d = Daemon(Config(slot_names=names, slots=3, target_s=0.3), emit=events.put, backend=Two()).open()
    d.names, d.events = names, events
    try:
        readers = [listening(n) for n in names]
        j1 = d.submit(Command("play", slot=names[0], prompt="one"))
        j2 = d.submit(Command("play", slot=names[1], prompt="two"))
        wait_event(d, "first_audio", job=j1)
        wait_event(d, "first_audio", job=j2)
        j3 = d.submit(Command("play", slot=names[0], prompt="one again"))     # a crossfade at capacity
        wait_event(d, "first_audio", job=j3)
        assert wait_event(d, "done", job=j1).extra["reason"] == "replaced"
        j4 = d.submit(Command("play", slot=names[2], prompt="three"))
        ev = wait_event(d, "error", job=j4)
        assert ev.code == "busy" and "at most 2 streams" in ev.message
        for r in readers:
            r.detach()
    finally:
        d.close(linger_s=0)
