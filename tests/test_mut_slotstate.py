"""The slot state machine, transition by transition, and a property test of what the reader hears.

Written to kill ``bridge/core/slotstate.py``'s mutants (``make mutate``, docs/TESTING.md). Two parts:

* the transition table, exactly: every state × event gives these actions, in this order, and
  this next state (envelopes compared by their segments);
* :class:`Listener`, a Hypothesis state machine that runs the machine's actions on a model ring
  — the frames each job wrote, the fades applied, a reader that plays them — and checks what the
  reader hears against the commands given, not against the flags the code under test sets: the
  playing flag is up exactly while the reader can be hearing a job that still generates, every
  job ends once, a stopped slot falls silent by the end of its fade, a failed job's audio fades
  out instead of stopping dead. ``test_the_listener_fails_when_the_playing_flag_is_never_raised``
  breaks the machine on purpose (the flag never raised at first audio) and asserts the property
  test catches it.
Pure: no daemon, no ring, no threads.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from bridge.core import slotstate as S
from bridge.core.slotstate import (AUDIBLE, DRAINING, ERROR, FADING, IDLE, PLAYING, QUICK_FADE_S, REPLACING,
                                   STARTING, STATES, SWITCHING, ChunkReady, Close, Drop, End, Envelope,
                                   Failed, FadeRing, Fault, FirstAudio, Flush, Hold, Param, Play, PlayedOut,
                                   Progress, Reattach, Release, RingView, SetParam, SetPlaying, SetRate,
                                   SlotMachine, Stop, Tail, Write)
from dsp.splice import splice_start

RATE = 1000
QUICK = int(QUICK_FADE_S * RATE)          # 20 frames


class J:
    """An opaque job."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def R(read=0, write=0, guard=10, rate=RATE, **kw) -> RingView:
    return RingView(read, write, guard, rate, **kw)


def norm(x):
    """Actions with envelopes as their segments (Envelope has no equality of its own)."""
    if isinstance(x, Envelope):
        return ("Envelope", x.segments)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__,) + tuple(norm(v) for v in x)
    if isinstance(x, list):
        return [norm(v) for v in x]
    return x


def same(got, want):
    assert norm(got) == norm(want), f"\n got {norm(got)}\nwant {norm(want)}"


def playing(m: SlotMachine, job=None, read=0, write=500) -> J:
    """``m`` playing ``job`` (its first chunk written)."""
    job = job or J("a")
    m.handle(Play(job, R(read, write)))
    m.handle(ChunkReady(job, "c0", True, False))
    assert m.state == PLAYING
    return job


# ----------------------------------------------------------------------------- envelopes
def test_a_fade_out_is_one_equal_power_segment():
    e = Envelope.fade_out(100.0, 50)
    assert e.segments == ((100, 50, 1.0),) and type(e.segments[0][0]) is int and type(e.segments[0][1]) is int
    assert (e.start, e.end) == (100, 150)
    assert Envelope.fade_out(7, 0).segments == ((7, 1, 1.0),)
    assert Envelope.fade_out(7, -5).end == 8
    g = e.gains(90, 70)
    assert g.dtype == np.float32 and g.shape == (70,)
    assert np.all(g[:11] == 1.0)                                   # up to and at the start: full gain
    assert g[10 + 25] == pytest.approx(math.cos(math.pi / 4), abs=1e-6)
    assert g[10 + 10] == pytest.approx(math.cos(10 / 50 * math.pi / 2), abs=1e-6)
    assert np.all(g[60:] == 0.0)                                   # from the end on: silence
    assert g[59] == pytest.approx(math.cos(49 / 50 * math.pi / 2), abs=1e-6) and g[59] > 0
    assert np.all(np.diff(g) <= 0)
    assert e.gain_at(125) == pytest.approx(math.cos(math.pi / 4), abs=1e-6) and type(e.gain_at(125)) is float
    assert e.gain_at(200) == 0.0 and e.gain_at(0) == 1.0


def test_a_shorter_stop_bends_the_fade_down_from_its_own_gain():
    e = Envelope.fade_out(0, 100)
    assert e.shortened(50, 50) is e                                # ends at 100 anyway
    assert e.shortened(60, 80) is e
    s = e.shortened(40, 20)
    g40 = e.gain_at(40)
    assert s.segments == ((0, 100, 1.0), (40, 20, g40))
    assert (s.start, s.end) == (0, 60)
    g = s.gains(0, 100)
    assert np.allclose(g[:41], e.gains(0, 41), atol=1e-6)          # the second segment is not in force before 40
    assert g[40] == pytest.approx(g40, abs=1e-6)
    assert g[50] == pytest.approx(min(e.gain_at(50), g40 * math.cos(0.5 * math.pi / 2)), abs=1e-6)
    assert np.all(g[60:] == 0.0) and g[59] > 0
    assert np.all(np.diff(g) <= 1e-7)
    assert e.shortened(40, 0).segments[-1][1] == 1
    assert e.shortened(40, 0).end == 41
    assert repr(e) == "Envelope(((0, 100, 1.0),))"


def test_rescale_turns_audio_under_one_envelope_into_audio_under_another():
    old = Envelope.fade_out(0, 100)
    new = old.shortened(20, 40)
    r = old.rescale(new, 0, 120)
    assert r.dtype == np.float32 and r.shape == (120,)
    g_old, g_new = old.gains(0, 120).astype(np.float64), new.gains(0, 120).astype(np.float64)
    live = g_old > 0
    assert np.allclose(r[live], np.clip(g_new[live] / g_old[live], 0, 1), atol=1e-6)
    assert np.all(r[~live] == 0.0) and np.all(r[100:] == 0)
    assert np.all(r[:21] == pytest.approx(1.0, abs=1e-6)) and np.all(r[60:] == 0)
    un = old.rescale(None, 0, 120)                                  # back to unfaded: at most 1
    assert np.all(un[:100] == 1.0) and np.all(un[100:] == 0.0)
    assert np.all((r >= 0) & (r <= 1))


def test_a_ring_view_splices_at_read_plus_guard_or_write():
    r = R(100, 1000, 50)
    assert r.head == splice_start(100, 1000, 50) == 150
    assert R(100, 120, 50).head == 120
    assert R(100, 100, 50).head == 100
    v = RingView(1, 2, 3, 4)
    assert (v.reader_rate, v.reader_alive, v.reader_left, v.void) == (0, True, False, None)


# ----------------------------------------------------------------------------- basics
def test_a_new_machine_is_idle_and_holds_nothing():
    m = SlotMachine(3)
    assert m.slot == 3 and SlotMachine().slot is None
    assert m.state == IDLE and not m.busy
    assert (m.job, m.old, m.prev, m.env, m.end, m.tail, m.reply, m.rate) == (None,) * 7 + (0,)
    assert (m.sounded, m.fade_in, m.held) == (False, False, 0)
    assert m.snapshot() == {"state": IDLE, "job": None, "old": None, "env": None, "end": None, "tail": None}
    assert STATES == (IDLE, STARTING, PLAYING, REPLACING, FADING, DRAINING, SWITCHING, ERROR)
    assert set(AUDIBLE) == {PLAYING, REPLACING, FADING, DRAINING, SWITCHING}


def test_busy_is_everything_but_idle_and_error():
    m = SlotMachine()
    for s in STATES:
        m.state = s
        assert m.busy == (s not in (IDLE, ERROR))


def test_reset_and_snapshot():
    m = SlotMachine()
    a = playing(m)
    assert m.snapshot() == {"state": PLAYING, "job": a, "old": None, "env": None, "end": None, "tail": None}
    m.reset()
    assert m.state == IDLE and m.job is None and m.snapshot()["job"] is None


def test_param_goes_to_the_generating_job():
    m = SlotMachine()
    same(m.handle(Param("gain", 0.5)), [SetParam(None, "gain", 0.5)])
    a = playing(m)
    same(m.handle(Param("xfade_ms", 20.0)), [SetParam(a, "xfade_ms", 20.0)])


# ----------------------------------------------------------------------------- play
@pytest.mark.parametrize("start", [IDLE, ERROR])
def test_play_on_a_silent_slot_starts(start):
    m = SlotMachine()
    m.state = start
    a = J("a")
    same(m.handle(Play(a, R())), [])
    assert (m.state, m.job, m.sounded, m.fade_in) == (STARTING, a, False, True)


def test_a_second_play_before_the_first_chunk_replaces_the_first():
    m = SlotMachine()
    a, b = J("a"), J("b")
    m.handle(Play(a, R()))
    same(m.handle(Play(b, R())), [End(a, "replaced")])
    assert (m.state, m.job, m.fade_in) == (STARTING, b, True)
    same(m.handle(ChunkReady(a, "late", True, False)), [])          # the first job's chunk: stale
    same(m.handle(ChunkReady(b, "b0", True, False)),
         [Write("b0", False, None, None, True), SetPlaying(True), FirstAudio(b)])


def test_play_while_playing_crossfades_from_the_playing_job():
    m = SlotMachine()
    a = playing(m)
    b = J("b")
    same(m.handle(Play(b, R(0, 500))), [])
    assert (m.state, m.job, m.old, m.env, m.reply) == (REPLACING, b, a, None, None)
    assert m.prev == (PLAYING, a, None, None, None, None)
    assert (m.sounded, m.fade_in) == (False, False)
    # a third play before b sounded: b is dropped, a still crossfades
    c = J("c")
    same(m.handle(Play(c, R(0, 500))), [End(b, "replaced")])
    assert (m.state, m.job, m.old) == (REPLACING, c, a)
    same(m.handle(ChunkReady(c, "c0", True, False)),
         [Write("c0", True, None, a, False), End(a, "replaced", None), SetPlaying(True), FirstAudio(c)])
    assert (m.state, m.job, m.old, m.prev) == (PLAYING, c, None, None)


def test_play_during_a_long_fade_crossfades_and_ends_the_faded_job_as_stopped():
    m = SlotMachine()
    a = playing(m, write=50)
    m.handle(Stop(500, "r1", R(0, 50)))
    assert m.state == FADING
    env = m.env
    b = J("b")
    same(m.handle(Play(b, R(0, 50))), [])
    assert (m.state, m.job, m.old, m.env, m.reply) == (REPLACING, b, a, env, "r1")
    same(m.handle(ChunkReady(b, "b0", True, False)),
         [Write("b0", True, env, a, False), End(a, "stopped", "r1"), SetPlaying(True), FirstAudio(b)])


def test_play_while_draining_a_finished_job():
    m = SlotMachine()
    a = playing(m)
    m.handle(ChunkReady(a, "c1", False, True))
    assert (m.state, m.tail) == (DRAINING, a)
    b = J("b")
    same(m.handle(Play(b, R(0, 500))), [End(a, "replaced")])
    assert (m.state, m.job, m.old, m.tail) == (REPLACING, b, None, None)
    assert m.prev == (DRAINING, None, None, None, None, None)
    same(m.handle(ChunkReady(b, "b0", True, False)),
         [Write("b0", True, None, None, False), SetPlaying(True), FirstAudio(b)])


def test_play_while_draining_a_stop():
    m = SlotMachine()
    playing(m)
    m.handle(Stop(30, "r", R(0, 500)))
    assert m.state == DRAINING and m.tail is None
    env, end = m.env, m.end
    b = J("b")
    same(m.handle(Play(b, R(0, 500))), [])
    assert m.prev == (DRAINING, None, env, end, None, None)
    assert (m.state, m.old, m.env) == (REPLACING, None, env)


def test_play_during_a_rate_switch_starts_over_after_it():
    m = SlotMachine()
    a = playing(m)
    m.handle(Progress(R(0, 500, reader_rate=44100)))
    assert m.state == SWITCHING
    b = J("b")
    same(m.handle(Play(b, R(0, 500))), [End(a, "replaced")])
    assert (m.state, m.job, m.sounded, m.fade_in) == (SWITCHING, b, False, True)


# ----------------------------------------------------------------------------- stop
@pytest.mark.parametrize("start", [IDLE, ERROR])
def test_stop_on_a_silent_slot(start):
    m = SlotMachine(2)
    m.state = start
    same(m.handle(Stop(10, "to", R())), [S.Error("not_playing", "slot 2 is not playing", "to")])
    assert m.state == start


def test_stop_before_the_first_chunk():
    m = SlotMachine()
    a = J("a")
    m.handle(Play(a, R()))
    same(m.handle(Stop(10, "to", R())), [End(a, "stopped", "to")])
    assert (m.state, m.job) == (IDLE, None)


def test_a_stop_that_fits_in_the_ring_drains():
    m = SlotMachine()
    a = playing(m, write=500)
    r = R(100, 500, 10)
    env = Envelope.fade_out(110, 200)
    same(m.handle(Stop(200, "to", r)), [FadeRing(None, env, 110, a), SetPlaying(False), End(a, "stopped", "to")])
    assert (m.state, m.job, m.env.segments, m.end) == (DRAINING, None, env.segments, 310)
    # exactly filling the ring still fits
    m2 = SlotMachine()
    a2 = playing(m2, write=500)
    out = m2.handle(Stop(390, None, R(100, 500, 10)))
    assert [type(x).__name__ for x in out] == ["FadeRing", "SetPlaying", "End"] and m2.state == DRAINING
    assert out[2] == End(a2, "stopped", None)


def test_a_stop_longer_than_the_ring_fades_while_the_job_generates():
    m = SlotMachine()
    a = playing(m, write=500)
    env = Envelope.fade_out(110, 391)
    same(m.handle(Stop(391, "to", R(100, 500, 10))), [FadeRing(None, env, 110, a)])
    assert (m.state, m.job, m.reply, m.env.segments) == (FADING, a, "to", env.segments)
    # a longer second stop changes nothing but where the reply goes
    same(m.handle(Stop(2000, "to2", R(120, 520, 10))), [])
    assert (m.state, m.reply, m.env.segments) == (FADING, "to2", env.segments)
    same(m.handle(Stop(2000, None, R(120, 520, 10))), [])
    assert m.reply == "to2"
    # chunks keep coming under the envelope
    same(m.handle(ChunkReady(a, "c1", False, False)), [Write("c1", False, m.env, None, False)])
    # the fade's end is written: the job is done
    same(m.handle(Progress(R(200, 500))), [])
    assert m.state == FADING
    same(m.handle(Progress(R(200, 501))), [SetPlaying(False), End(a, "stopped", "to2")])
    assert (m.state, m.job, m.env.segments, m.end) == (DRAINING, None, env.segments, 501)


def test_a_shorter_second_stop_bends_the_fade():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(Stop(1000, "r1", R(0, 500, 10)))
    old = m.env
    new = old.shortened(60, 100)
    same(m.handle(Stop(100, "r2", R(50, 500, 10))),
         [FadeRing(old, new, 60, a), SetPlaying(False), End(a, "stopped", "r2")])
    assert m.state == DRAINING and m.env.segments == new.segments and m.end == new.end
    # the reply of the first stop when the second has none
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(Stop(1000, "r1", R(0, 500, 10)))
    out = m.handle(Stop(100, None, R(50, 500, 10)))
    assert out[-1] == End(a, "stopped", "r1")
    m = SlotMachine()
    a = playing(m, write=100)
    m.handle(Stop(1000, "r1", R(0, 100, 10)))
    out = m.handle(Stop(500, None, R(50, 100, 10)))
    assert [type(x).__name__ for x in out] == ["FadeRing"] and (m.state, m.reply) == (FADING, "r1")


def test_stop_while_draining_a_finished_job():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    env = Envelope.fade_out(110, 100)
    same(m.handle(Stop(100, "to", R(100, 500, 10))), [FadeRing(None, env, 110, a), End(a, "stopped", "to")])
    assert (m.state, m.tail, m.env.segments, m.end) == (DRAINING, None, env.segments, 210)
    # a longer stop than the one in force: nothing to fade, no job to end
    same(m.handle(Stop(1000, "x", R(100, 500, 10))), [])
    assert m.end == 210
    # a shorter one bends it and ends earlier
    out = m.handle(Stop(20, "y", R(120, 500, 10)))
    same(out, [FadeRing(env, env.shortened(130, 20), 130, None)])
    assert m.end == 150


def test_a_longer_stop_while_draining_a_tail_with_a_fade_in_force_ends_the_tail():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(Stop(1000, "r", R(0, 500)))                            # fading
    m.handle(ChunkReady(a, "c1", False, True))                      # its last chunk under the fade
    assert m.state == DRAINING
    b = J("b")
    m.handle(Play(b, R(0, 500)))
    m.handle(ChunkReady(b, "b0", True, True))                       # b: one chunk, then done
    assert (m.state, m.tail) == (DRAINING, b)
    m.env = Envelope.fade_out(0, 10_000)
    same(m.handle(Stop(50_000, "z", R(0, 500))), [End(b, "stopped", "z")])


def test_stop_during_a_replacement_cancels_it_and_stops_the_audible_job():
    m = SlotMachine()
    a = playing(m, write=500)
    b = J("b")
    m.handle(Play(b, R(0, 500)))
    env = Envelope.fade_out(10, 100)
    same(m.handle(Stop(100, "to", R(0, 500, 10))),
         [End(b, "stopped", "to"), Reattach(a), FadeRing(None, env, 10, a), SetPlaying(False),
          End(a, "stopped", "to")])
    assert m.state == DRAINING and m.sounded


def test_stop_during_a_replacement_of_a_drained_job():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    b = J("b")
    m.handle(Play(b, R(0, 500)))                                    # ends the tail a
    out = m.handle(Stop(100, "to", R(0, 500, 10)))
    same(out, [End(b, "stopped", "to"), FadeRing(None, Envelope.fade_out(10, 100), 10, None)])
    assert (m.state, m.job) == (DRAINING, None)


def test_stop_during_a_rate_switch_ends_the_job_and_drains_the_quick_fade():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(Progress(R(0, 500, 10, reader_rate=48000)))
    assert m.state == SWITCHING
    end = m.end
    same(m.handle(Stop(100, "to", R(0, 500))), [End(a, "stopped", "to")])
    assert (m.state, m.job, m.end) == (DRAINING, None, end)


def test_a_stop_of_no_frames_is_one_frame():
    m = SlotMachine()
    a = playing(m, write=500)
    same(m.handle(Stop(0, None, R(0, 500, 10))),
         [FadeRing(None, Envelope.fade_out(10, 1), 10, a), SetPlaying(False), End(a, "stopped", None)])


# ----------------------------------------------------------------------------- chunks
def test_chunks_of_a_playing_job():
    m = SlotMachine()
    a = J("a")
    m.handle(Play(a, R()))
    same(m.handle(ChunkReady(a, "c0", True, False)),
         [Write("c0", False, None, None, True), SetPlaying(True), FirstAudio(a)])
    assert (m.state, m.sounded, m.fade_in) == (PLAYING, True, False)
    same(m.handle(ChunkReady(a, "c1", False, False)), [Write("c1", False, None, None, False)])
    same(m.handle(ChunkReady(J("x"), "cx", False, False)), [])
    same(m.handle(ChunkReady(a, "c2", False, True)), [Write("c2", False, None, None, False), SetPlaying(False),
                                                       Release(a)])
    assert (m.state, m.job, m.tail) == (DRAINING, None, a)
    same(m.handle(ChunkReady(a, "c3", False, False)), [])


def test_a_one_chunk_job():
    m = SlotMachine()
    a = J("a")
    m.handle(Play(a, R()))
    same(m.handle(ChunkReady(a, "c0", True, True)),
         [Write("c0", False, None, None, True), SetPlaying(True), FirstAudio(a), SetPlaying(False), Release(a)])


def test_the_last_chunk_of_a_fading_job_ends_it_as_stopped():
    m = SlotMachine()
    a = playing(m, write=100)
    m.handle(Stop(1000, "r", R(0, 100)))
    env = m.env
    same(m.handle(ChunkReady(a, "c1", False, True)),
         [Write("c1", False, env, None, False), SetPlaying(False), End(a, "stopped", "r")])
    assert (m.state, m.env, m.tail, m.end) == (DRAINING, env, None, None)


@pytest.mark.parametrize("state", [IDLE, DRAINING, ERROR])
def test_chunks_in_states_without_a_generating_job_are_stale(state):
    m = SlotMachine()
    a = J("a")
    m.state, m.job = state, a
    same(m.handle(ChunkReady(a, "c", True, False)), [])


# ----------------------------------------------------------------------------- progress
def test_draining_ends_once_the_reader_heard_it():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    same(m.handle(Progress(R(499, 500))), [])
    same(m.handle(Progress(R(500, 500))), [End(a, "finished")])
    assert (m.state, m.tail) == (IDLE, None)


def test_draining_a_stop_ends_at_the_fades_end_not_at_write():
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Stop(100, "r", R(0, 500, 10)))                          # ends at 110
    same(m.handle(Progress(R(109, 500))), [])
    same(m.handle(Progress(R(110, 500))), [])
    assert m.state == IDLE
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Stop(100, "r", R(0, 500, 10)))
    same(m.handle(Progress(R(79, 80))), [])
    assert m.state == DRAINING
    same(m.handle(Progress(R(80, 80))), [])                          # write pulled back (a drop): min(end, write)
    assert m.state == IDLE


def test_draining_with_a_dead_reader_or_into_the_void():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    same(m.handle(Progress(R(0, 500, reader_alive=False))), [End(a, "finished")])
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    same(m.handle(Progress(R(500, 500, void=499))), [])             # the reader's own index does not count
    same(m.handle(Progress(R(0, 500, void=500))), [End(a, "finished")])
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    same(m.handle(Progress(R(0, 500, reader_alive=False, reader_left=True))), [Drop(), End(a, "finished")])


def test_a_silent_slots_unheard_audio_is_dropped_when_the_reader_left():
    m = SlotMachine()
    same(m.handle(Progress(R(10, 20, reader_left=True))), [Drop()])
    same(m.handle(Progress(R(20, 20, reader_left=True))), [])
    same(m.handle(Progress(R(10, 20))), [])
    m.state = ERROR
    same(m.handle(Progress(R(10, 20, reader_left=True))), [Drop()])
    m = SlotMachine()
    m.handle(Play(J("a"), R()))
    same(m.handle(Progress(R(10, 20, void=10))), [Drop()])
    same(m.handle(Progress(R(20, 20, void=20))), [])
    same(m.handle(Progress(R(10, 20))), [])


@pytest.mark.parametrize("want,switch", [(0, False), (RATE, False), (7999, False), (8000, True),
                                         (384000, True), (384001, False), (44100, True)])
def test_a_silent_slot_switches_to_the_readers_rate(want, switch):
    m = SlotMachine()
    same(m.handle(Progress(R(20, 20, reader_rate=want))), [SetRate(want)] if switch else [])
    same(m.handle(Progress(R(10, 20, reader_rate=want))), [])       # once its last audio is heard
    same(m.handle(Progress(R(20, 20, reader_rate=want, reader_alive=False))), [])
    m.handle(Play(J("a"), R()))
    same(m.handle(Progress(R(20, 20, reader_rate=want))), [SetRate(want)] if switch else [])
    m.state = ERROR
    same(m.handle(Progress(R(20, 20, reader_rate=want))), [SetRate(want)] if switch else [])


def test_a_playing_slot_fades_out_switches_rate_and_carries_on():
    m = SlotMachine()
    a = playing(m, write=500)
    same(m.handle(Progress(R(0, 29, 10, reader_rate=48000))), [])   # 19 < 20 frames buffered past the head
    env = Envelope.fade_out(10, QUICK)
    same(m.handle(Progress(R(0, 30, 10, reader_rate=48000))), [FadeRing(None, env, 10, a), SetPlaying(False)])
    assert (m.state, m.job, m.rate, m.held, m.end, m.env.segments) == (SWITCHING, a, 48000, 0, 30, env.segments)
    same(m.handle(ChunkReady(a, "c1", False, False)), [Hold("c1")])
    same(m.handle(ChunkReady(a, "c2", False, False)), [Hold("c2")])
    assert m.held == 2
    same(m.handle(Progress(R(29, 40))), [])
    same(m.handle(Progress(R(30, 40))), [SetRate(48000), Flush()])
    assert (m.state, m.job, m.held, m.fade_in) == (PLAYING, a, 0, True)
    same(m.handle(ChunkReady(a, "c1", False, False)), [Write("c1", False, None, None, True)])
    assert m.fade_in is False


def test_a_rate_switch_ends_early_when_the_reader_died_or_write_fell_back():
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Progress(R(0, 500, 10, reader_rate=48000)))
    same(m.handle(Progress(R(0, 500, reader_alive=False))), [SetRate(48000), Flush()])
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Progress(R(0, 500, 10, reader_rate=48000)))             # end = 30
    same(m.handle(Progress(R(5, 5))), [SetRate(48000), Flush()])    # min(end, write)


def test_a_switch_of_a_job_that_never_sounded_starts_it_again():
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Progress(R(0, 500, 10, reader_rate=48000)))
    b = J("b")
    m.handle(Play(b, R(0, 500)))
    same(m.handle(Progress(R(30, 40))), [SetRate(48000), Flush()])
    assert (m.state, m.job) == (STARTING, b)


@pytest.mark.parametrize("state", [REPLACING, FADING, DRAINING])
def test_no_rate_switch_while_the_slot_settles(state):
    m = SlotMachine()
    a = playing(m, write=5000)
    if state == REPLACING:
        m.handle(Play(J("b"), R(0, 5000)))
    elif state == FADING:
        m.handle(Stop(100_000, None, R(0, 5000)))
    else:
        m.handle(ChunkReady(a, "c1", False, True))
    assert m.state == state
    out = m.handle(Progress(R(0, 5000, 10, reader_rate=48000)))
    assert not any(isinstance(x, SetRate) for x in out) and m.state == state


def test_a_long_fade_nobody_hears_is_cut_short():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(Stop(5000, "r", R(0, 500, 10)))
    old = m.env
    new = old.shortened(110, QUICK)
    same(m.handle(Progress(R(100, 500, 10, reader_alive=False))),
         [FadeRing(old, new, 110, a), SetPlaying(False), End(a, "stopped", "r")])
    assert m.state == DRAINING
    # when the quick fade does not fit either, the fade goes on, then ends when written
    m = SlotMachine()
    a = playing(m, write=100)
    m.handle(Stop(5000, "r", R(0, 100, 10)))
    out = m.handle(Progress(R(95, 100, 10, reader_alive=False)))
    assert [type(x).__name__ for x in out] == ["FadeRing"] and m.state == FADING
    out = m.handle(Progress(R(95, 200, 10, reader_alive=False)))
    assert out[-2:] == [SetPlaying(False), End(a, "stopped", "r")] and m.state == DRAINING


# ----------------------------------------------------------------------------- played out, failures, faults
def test_a_timed_job_played_into_the_void_finishes():
    m = SlotMachine()
    a = playing(m)
    same(m.handle(PlayedOut(J("x"))), [])
    same(m.handle(PlayedOut(a)), [SetPlaying(False), Release(a), End(a, "finished")])
    assert (m.state, m.job) == (IDLE, None)
    m = SlotMachine()
    b = J("b")
    m.handle(Play(b, R()))
    same(m.handle(PlayedOut(b)), [])                                # not playing yet
    assert m.state == STARTING


def test_a_job_that_fails_before_sounding():
    m = SlotMachine()
    a = J("a")
    m.handle(Play(a, R()))
    same(m.handle(Failed(J("x"), R())), [])
    same(m.handle(Failed(a, R(0, 0))), [Release(a), SetPlaying(False)])
    assert (m.state, m.job, m.busy) == (ERROR, None, False)


def test_a_failed_job_fades_out_in_what_is_buffered():
    m = SlotMachine()
    a = playing(m, write=500)
    env = Envelope.fade_out(110, QUICK)
    same(m.handle(Failed(a, R(100, 500, 10))), [Release(a), FadeRing(None, env, 110, a), SetPlaying(False)])
    assert m.state == ERROR
    m = SlotMachine()
    a = playing(m, write=500)
    same(m.handle(Failed(a, R(100, 130, 10))), [Release(a), FadeRing(None, Envelope.fade_out(110, QUICK), 110, a),
                                                 SetPlaying(False)])      # exactly a fade buffered


def test_a_failed_job_with_too_little_buffered_ends_on_a_mirrored_tail():
    m = SlotMachine()
    a = playing(m, write=500)
    same(m.handle(Failed(a, R(100, 129, 10))), [Release(a), Tail(QUICK), SetPlaying(False)])
    m = SlotMachine()
    a = playing(m, write=500)
    same(m.handle(Failed(a, R(100, 100, 10))), [Release(a), SetPlaying(False)])   # nothing left to hear


def test_a_failed_replacement_fades_what_is_audible_and_ends_the_old_job():
    m = SlotMachine()
    a = playing(m, write=500)
    b = J("b")
    m.handle(Play(b, R(0, 500)))
    same(m.handle(Failed(b, R(0, 500, 10))),
         [Release(b), End(a, "stopped"), FadeRing(None, Envelope.fade_out(10, QUICK), 10, b), SetPlaying(False)])
    assert (m.state, m.old) == (ERROR, None)


def test_a_failed_fading_job_shortens_its_fade():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(Stop(5000, "r", R(0, 500, 10)))
    old = m.env
    same(m.handle(Failed(a, R(100, 500, 10))),
         [Release(a), FadeRing(old, old.shortened(110, QUICK), 110, a), SetPlaying(False)])
    # a fade already ending sooner is left alone
    m = SlotMachine()
    a = playing(m, write=50)
    m.handle(Stop(60, "r", R(0, 50, 10)))                            # ends at 70, fading (write 50)
    assert m.state == FADING
    same(m.handle(Failed(a, R(50, 500, 10))), [Release(a), SetPlaying(False)])   # 60 + 20 >= 70


def test_a_failure_while_a_tail_drains_ends_the_tail():
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    b = J("b")
    m.handle(Play(b, R(0, 500)))                                    # tail a ended as replaced
    m.tail = a                                                      # (a tail still there: ends too)
    out = m.handle(Failed(b, R(0, 500, 10)))
    assert out[:2] == [Release(b), End(a, "stopped")] and out[-1] == SetPlaying(False)


@pytest.mark.parametrize("ev,state", [(Fault("f"), ERROR), (Close("c"), IDLE)])
def test_a_fault_or_close_ends_every_job_at_once(ev, state):
    m = SlotMachine()
    a = playing(m, write=500)
    m.handle(ChunkReady(a, "c1", False, True))
    b = J("b")
    m.handle(Play(b, R(0, 500)))
    m.tail, m.old = a, J("o")
    old = m.old
    same(m.handle(ev), [End(b, "stopped", ev.reply_to), End(old, "stopped", ev.reply_to),
                        End(a, "stopped", ev.reply_to), SetPlaying(False)])
    assert (m.state, m.job, m.old, m.tail, m.sounded, m.fade_in, m.held) == (state, None, None, None, False, False, 0)
    m = SlotMachine()
    a = playing(m)
    m.tail = a                                                      # one job in two roles: ended once
    same(m.handle(ev), [End(a, "stopped", ev.reply_to), SetPlaying(False)])
    same(SlotMachine().handle(type(ev)()), [SetPlaying(False)])


# ----------------------------------------------------------------------------- what the reader hears
class Listener(RuleBasedStateMachine):
    """The machine's actions run on a model ring, the reader's ears checked against the commands.

    The ring is a per-frame record of (job, gain); Write appends a chunk (CHUNK frames of its job)
    or splices it at the head; FadeRing rescales from the envelope; Tail appends a short faded tail;
    Drop pulls write back to read. The reader advances ``read`` and hears the frames it passes.
    """

    CHUNK = 40
    GUARD = 16

    def __init__(self):
        super().__init__()
        self.m = SlotMachine(1)
        self.frames = []                  # per frame: [job or None, gain]
        self.read = 0
        self.flag = False
        self.ended = {}                   # job → End count
        self.released = set()
        self.started = []                 # jobs in order of play
        self.sent = {}                    # job → chunks it has produced
        self.first_heard = {}
        self.wrote = set()                # jobs with audio in the ring
        self.failed = set()
        self.stopped_at = None            # (frame by which the slot must be silent) of a stop in force
        self.n = 0

    # -------------------------------------------------------------- the model ring
    def view(self, **kw) -> RingView:
        return RingView(self.read, len(self.frames), self.GUARD, RATE, **kw)

    def run(self, ev) -> list:
        out = self.m.handle(ev)
        for a in out:
            if isinstance(a, Write):
                job = a.chunk[0]
                block = [[job, 1.0] for _ in range(self.CHUNK)]
                if a.splice:
                    at = self.view().head
                    if a.env is not None:                          # the old material fades under the envelope
                        pass
                    del self.frames[at:]
                    self.frames += block
                else:
                    if a.env is not None:
                        g = a.env.gains(len(self.frames), self.CHUNK)
                        for f, x in zip(block, g):
                            f[1] = float(x)
                    self.frames += block
                self.wrote.add(job)
            elif isinstance(a, FadeRing):
                w = len(self.frames)
                if a.at < w:
                    g = (a.old.rescale(a.new, a.at, w - a.at) if a.old is not None else a.new.gains(a.at, w - a.at))
                    for f, x in zip(self.frames[a.at:w], g):
                        f[1] *= float(x)
                    if a.new.end < w:
                        del self.frames[max(a.new.end, self.read):]
            elif isinstance(a, Tail):
                last = self.frames[-1][0] if self.frames else None
                self.frames += [[last, math.cos(math.pi / 2 * (k + 1) / a.frames)] for k in range(a.frames)]
            elif isinstance(a, Drop):
                del self.frames[self.read:]
            elif isinstance(a, SetPlaying):
                self.flag = a.playing
            elif isinstance(a, End):
                self.ended[a.job] = self.ended.get(a.job, 0) + 1
            elif isinstance(a, Release):
                self.released.add(a.job)
            elif isinstance(a, Reattach):
                self.released.discard(a.job)
        return out

    def live(self):
        """Jobs that generate and have been written: what the reader may be hearing right now."""
        return [j for j in self.wrote if j not in self.ended and j not in self.released]

    # -------------------------------------------------------------- rules
    @rule(finite=st.integers(0, 3))
    def play(self, finite):
        self.n += 1
        job = J(f"j{self.n}")
        self.started.append(job)
        self.sent[job] = 0
        job.chunks = finite or 10 ** 9
        self.stopped_at = None
        self.run(Play(job, self.view()))

    @precondition(lambda self: self.m.job is not None and self.m.state != SWITCHING)
    @rule(k=st.integers(1, 3))
    def chunks(self, k):
        for _ in range(k):
            job = self.m.job
            if job is None or self.m.state == SWITCHING:
                return
            i = self.sent[job]
            self.sent[job] = i + 1
            self.run(ChunkReady(job, (job, i), i == 0, i + 1 >= job.chunks))

    @rule(frames=st.integers(0, 300))
    def stop(self, frames):
        before = self.m.state
        self.run(Stop(frames, None, self.view()))
        if before not in (IDLE, ERROR) and self.m.env is not None:
            self.stopped_at = self.m.env.end

    @rule(frames=st.integers(1, 120))
    def listen(self, frames):
        w = len(self.frames)
        to = min(w, self.read + frames)
        for p in range(self.read, to):
            job, g = self.frames[p]
            if job is not None and g > 0:
                self.first_heard.setdefault(job, p)
            if self.stopped_at is not None and p >= self.stopped_at:
                assert g == 0.0 or job not in self.stopped_jobs(), (p, job, g)
        self.read = to
        self.run(Progress(self.view()))

    @precondition(lambda self: self.m.job is not None)
    @rule()
    def backend_fails(self):
        job = self.m.job
        heard = self.read < len(self.frames) and self.m.sounded
        w0 = len(self.frames)
        self.failed.add(job)
        self.run(Failed(job, self.view()))
        if heard and w0 > self.read:
            # what is left after the head falls to silence: the last written frame is faded out
            assert self.frames[-1][1] < 0.2, self.frames[-1]

    def stopped_jobs(self):
        return {j for j in self.started if self.ended.get(j)}

    # -------------------------------------------------------------- what must hold
    @invariant()
    def the_flag_is_up_exactly_while_a_generating_job_is_heard(self):
        if self.m.state == SWITCHING:
            return
        assert self.flag == bool(self.live()), (self.flag, self.live(), self.m.state)

    @invariant()
    def every_job_ends_at_most_once(self):
        assert all(n == 1 for n in self.ended.values()), self.ended

    @invariant()
    def at_most_one_job_generates(self):
        assert len(self.live()) <= 1, self.live()

    def teardown(self):
        # stop and listen to the end: everything ends, the reader ends in silence
        self.run(Stop(30, None, self.view()))
        for _ in range(200):
            if self.m.state in (IDLE, ERROR):
                break
            job = self.m.job
            if job is not None and self.m.state in (STARTING, PLAYING, REPLACING, FADING):
                i = self.sent[job]                                  # a fade longer than the ring: generate on
                self.sent[job] = i + 1
                self.run(ChunkReady(job, (job, i), i == 0, i + 1 >= job.chunks))
            self.read = len(self.frames)
            self.run(Progress(self.view()))
        assert self.m.state in (IDLE, ERROR), self.m.state
        for j in self.started:
            assert self.ended.get(j, 0) + (j in self.released and j in self.failed) >= 1, (j, self.ended)
        assert not self.flag


LISTENER = settings(max_examples=80, stateful_step_count=30, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck), database=None)


def test_the_listener():
    run_state_machine_as_test(Listener, settings=LISTENER)


def test_the_listener_fails_when_the_playing_flag_is_never_raised(monkeypatch):
    """The mutant that never raises the flag at first audio (``SetPlaying(True)`` → ``False``):
    the property test must fail on it."""
    real = S.SetPlaying
    monkeypatch.setattr(S, "SetPlaying", lambda playing: real(False))
    with pytest.raises(AssertionError, match="playing"):
        run_state_machine_as_test(Listener, settings=settings(LISTENER, report_multiple_bugs=False,
                                                                    phases=[Phase.generate]))


def test_the_listener_fails_when_the_first_audio_raises_no_flag(monkeypatch):
    """The same bug as a dropped action (``out += [FirstAudio(job)]``, a mutant mutmut does not
    generate): the first chunk's actions lack ``SetPlaying(True)`` — the property test must fail."""
    real = SlotMachine._on_chunkready

    def without_the_flag(self, ev):
        return [a for a in real(self, ev) if a != SetPlaying(True)]

    monkeypatch.setattr(SlotMachine, "_on_chunkready", without_the_flag)
    with pytest.raises(AssertionError, match="playing"):
        run_state_machine_as_test(Listener, settings=settings(LISTENER, report_multiple_bugs=False,
                                                                    phases=[Phase.generate]))


# ----------------------------------------------------------------------------- more exact transitions


def test_a_reader_at_the_rings_own_rate_switches_nothing():
    m = SlotMachine()
    same(m.handle(Progress(R(20, 20, rate=48000, reader_rate=48000))), [])
    same(m.handle(Progress(R(20, 20, rate=48000, reader_rate=44100))), [SetRate(44100)])
    m = SlotMachine()
    playing(m, write=500)
    same(m.handle(Progress(R(0, 500, 10, rate=48000, reader_rate=48000))), [])
    assert m.state == PLAYING


@pytest.mark.parametrize("second", [100, 1000])
def test_a_stop_during_the_replacement_of_a_long_fade_goes_on_from_that_fade(second):
    """Play during a long fade, then a stop (without a reply address) before the new job sounds:
    the fade in progress is what the stop shortens (or keeps), and its reply is the first stop's."""
    m = SlotMachine()
    a = playing(m, write=50)
    m.handle(Stop(500, "r1", R(0, 50)))
    env = m.env
    assert m.state == FADING and env.segments == ((10, 500, 1.0),)
    b = J("b")
    m.handle(Play(b, R(0, 50)))
    out = m.handle(Stop(second, None, R(0, 60, 10)))
    if second == 100:
        short = env.shortened(10, 100)
        same(out, [End(b, "stopped", None), Reattach(a), FadeRing(env, short, 10, a)])
        assert m.env.segments == short.segments
        same(m.handle(Progress(R(0, 200))), [SetPlaying(False), End(a, "stopped", "r1")])
    else:                                   # longer than the fade in progress: it changes nothing
        same(out, [End(b, "stopped", None), Reattach(a)])
        assert (m.state, m.env, m.reply) == (FADING, env, "r1")
        same(m.handle(Progress(R(0, 510))), [SetPlaying(False), End(a, "stopped", "r1")])


def test_a_stop_during_the_replacement_of_a_draining_fade_keeps_its_end():
    """A long fade that the job wrote past (its end at 110, write at 200): draining ends once the
    reader is at the fade's end, also after a play and a stop that cancelled it."""
    m = SlotMachine()
    a = playing(m, write=50)
    m.handle(Stop(100, "r1", R(0, 50)))
    same(m.handle(Progress(R(0, 200))), [SetPlaying(False), End(a, "stopped", "r1")])
    assert (m.state, m.end) == (DRAINING, 110)
    b = J("b")
    m.handle(Play(b, R(0, 200)))
    same(m.handle(Stop(1000, "r2", R(0, 200, 10))), [End(b, "stopped", "r2")])
    assert (m.state, m.end) == (DRAINING, 110)
    same(m.handle(Progress(R(109, 200))), [])
    same(m.handle(Progress(R(110, 200))), [])
    assert m.state == IDLE


def test_a_longer_stop_while_draining_a_rate_switch_keeps_the_switchs_end():
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Progress(R(0, 500, 10, reader_rate=48000)))     # the quick fade ends at 30
    m.handle(Stop(100, "to", R(0, 500)))
    assert (m.state, m.end) == (DRAINING, 30)
    m.handle(Stop(1000, "t2", R(0, 500, 10)))
    assert (m.state, m.end) == (DRAINING, 30)
    same(m.handle(Progress(R(29, 500))), [])
    same(m.handle(Progress(R(30, 500))), [])
    assert m.state == IDLE


def test_a_job_that_never_sounded_failing_during_a_rate_switch_adds_nothing():
    """The switch's own quick fade (10 … 30) is in the ring: the unheard new job's failure needs
    no tail and no fade of its own."""
    m = SlotMachine()
    playing(m, write=500)
    m.handle(Progress(R(0, 30, 10, reader_rate=48000)))
    b = J("b")
    m.handle(Play(b, R(0, 30)))
    assert (m.state, m.sounded) == (SWITCHING, False)
    same(m.handle(Failed(b, R(5, 30, 10))), [Release(b), SetPlaying(False)])
    assert m.state == ERROR
