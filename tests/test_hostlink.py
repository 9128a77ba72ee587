"""bridge.core.hostlink without a daemon: a fake engine with one playing slot and a synth-like beat grid."""
from __future__ import annotations

import queue
import time
from types import SimpleNamespace

import pytest

from bridge.core.commands import parse_osc
from bridge.core.hostlink import RETIME_MARGIN_S, HostLink
from engine.hostsync import HostPosition, HostSync
from engine.score import TempoMap

SR = 48000


class FakeRing:
    sample_rate = SR
    capacity = 1 << 17
    reader_block_frames = 256

    epoch = 1

    def __init__(self):
        self.read_index = 10_000

    def guard_frames(self, min_ms=10.0):
        return max(2 * self.reader_block_frames, int(SR * min_ms / 1000))


def engine(backend_name="synth"):
    grid = HostSync(TempoMap(120.0, SR), 4.0)
    stream = SimpleNamespace(frames_done=SR)
    backend = SimpleNamespace(name=backend_name, sample_rate=SR, beat_grid=lambda s: grid,
                              render_head=lambda s: SR)
    slot = SimpleNamespace(name=1, ring=FakeRing(), job=SimpleNamespace(job=7, stream=stream), pending="")
    events = []
    d = SimpleNamespace(slots={1: slot}, backend=backend, config=SimpleNamespace(guard_ms=10.0),
                        emit=events.append)
    retimes = []
    writer = SimpleNamespace(xfade_frames=lambda s: int(0.05 * SR), guard=lambda s: 512)
    commands = SimpleNamespace(
        retime=lambda slot, at, origin, beat_at, shift=0.0: retimes.append((at, origin, beat_at(at), shift)) or True)
    eng = SimpleNamespace(owner=d, q=queue.Queue(), writer=writer, commands=commands, retimes=retimes)
    link = HostLink(eng)
    link.published(slot, slot.job, 0)              # the playing job's frame 0 is ring frame 0
    return link, eng, slot, grid, events


def play(args, job):
    c = parse_osc("/wb/play", args, 8)
    c.job_id = job
    c.arrival_ns = time.monotonic_ns()
    return c


def test_a_bar_quantized_play_is_held_and_lands_exactly():
    link, eng, slot, grid, events = engine()
    cmd = play([1, "dub techno", 0.0, 2, "bar"], 8)
    assert link.defer(cmd) is True                  # held
    # the crossfade starts xfade before the job's next bar line (ring frame 96000 at 120 bpm)
    assert cmd.splice_at == 96000 - int(0.05 * SR)
    released = eng.q.get(timeout=3.0)               # the timer puts it back on the queue
    assert released is cmd and not link.stale(cmd)
    assert link.defer(cmd) is False                  # not held twice
    link.started(slot, SimpleNamespace(job=8, stream=None), True, cmd)
    assert link.splice_frame(SimpleNamespace(job=8)) == cmd.splice_at
    assert link.splice_frame(SimpleNamespace(job=8)) is None   # once
    link.close()


def test_stop_or_newer_play_drops_a_held_play_with_done():
    link, eng, slot, grid, events = engine()
    first = play([1, "a", 0.0, 1, "bar"], 8)
    assert link.defer(first)
    second = play([1, "b", 0.0, 1, "bar"], 9)
    assert link.defer(second)                         # supersedes the first
    assert [(e.kind, e.job, e.extra["reason"]) for e in events] == [("done", 8, "replaced")]
    link.stopped(1)
    assert [(e.kind, e.job) for e in events] == [("done", 8), ("done", 9)]
    time.sleep(0.1)
    assert link.stale(second)                         # had it fired, it is dropped, answered once
    assert len(events) == 2
    link.close()


def test_unquantized_or_idle_plays_start_at_once():
    link, eng, slot, grid, events = engine()
    assert link.defer(play([1, "a"], 8)) is False
    slot.job = None
    assert link.defer(play([1, "a", 0.0, 1, "bar"], 9)) is False
    link.close()


def test_transport_locks_the_playing_stream_and_musicgen_hears_the_bpm():
    link, eng, slot, grid, events = engine()
    # the host at 97 bpm, beat 5.5 at ring frame 10000 (the reader is there)
    t = parse_osc("/wb/transport", [1, 1.0, 97.0, 4.0, 1, 1.5, 10_000, 0], 8)
    t.arrival_ns = time.monotonic_ns()
    link.transport(t)
    assert grid.last_action in ("slew", "wait")
    assert grid.tempo.bpm == pytest.approx(97.0)
    assert link.prompt_for(1, "ambient pads") == "ambient pads"            # the synth has a grid
    link2, *_ = engine("musicgen")
    link2.transport(t)
    assert link2.prompt_for(1, "ambient pads") == "ambient pads, 97 bpm"
    assert link2.prompt_for(1, "ambient pads at 70 bpm") == "ambient pads at 70 bpm"
    # a report from before the job's first frame, or without a ring, changes nothing
    link3, _, _, grid3, _ = engine()
    link3.published(slot, slot.job, 20_000)
    link3.transport(t)
    assert grid3.last_action == ""
    link.close()
    link2.close()
    link3.close()


def test_a_new_host_tempo_restarts_the_stream_at_the_read_head_once():
    """The grid follows from the render head at once; what the ring holds up to it (a second at
    the old tempo) is replaced by a re-timed continuation spliced in after the guard."""
    link, eng, slot, grid, events = engine()
    grid.update(HostPosition(120.0, 0.0, 0.0), 1)
    head = {"f": 2 * SR}
    link.daemon.backend.render_head = lambda s: head["f"]
    here = 10_000 * 120.0 / 60.0 / SR                         # the grid's beat at the read head
    t = parse_osc("/wb/transport", [1, 1.0, 120.0, 4.0, 0, here, 10_000, 0], 8)
    link.transport(t)
    assert eng.retimes == []                                  # the tempo and phase it plays: nothing to do
    t = parse_osc("/wb/transport", [1, 1.0, 97.0, 4.0, 0, here, 10_000, 0], 8)
    link.transport(t)
    at, origin, beat, shift = eng.retimes[0]
    assert at == 10_000 + 512 + int(RETIME_MARGIN_S * SR) and origin == 0
    assert beat == pytest.approx(here + (at - 10_000) * 97.0 / 60.0 / SR)   # the host's beat there
    assert shift == 0.0                                       # in phase: only re-timed
    slot.ring.read_index += SR // 2
    link.transport(parse_osc("/wb/transport", [1, 1.0, 90.0, 4.0, 1, 1.5, slot.ring.read_index, 0], 8))
    assert len(eng.retimes) == 1                              # at most one per 1.5 s of audio
    link.close()


def test_a_relocated_host_restarts_the_stream_in_its_bar_phase():
    """The host jumps 1.5 beats on (a locate): the restart moves the music the nearer way round
    to the host's bar phase at the splice point; a loop of whole bars changes nothing."""
    link, eng, slot, grid, events = engine()
    grid.update(HostPosition(120.0, 0.0, 0.0), 1)
    link.daemon.backend.render_head = lambda s: 2 * SR
    beat_here = 10_000 * 120.0 / 60.0 / SR                     # the grid's beat at the read head
    link.transport(parse_osc("/wb/transport", [1, 1.0, 120.0, 4.0, 3, beat_here, 10_000, 0], 8))
    assert eng.retimes == []                                  # 3 bars on, same phase: a loop
    link.transport(parse_osc("/wb/transport", [1, 1.0, 120.0, 4.0, 0, beat_here + 1.5, 10_000, 0], 8))
    at, origin, beat, shift = eng.retimes[0]
    assert shift == pytest.approx(1.5)
    link.close()
