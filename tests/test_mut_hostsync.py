"""engine.hostsync, exactly: the host position's arithmetic, refused positions, the start's bar
phase at each side of ``start_slack``, the lock's tolerances at their boundary, a newer report
replacing the plan of an older one, the slew's fewest beats, the relocate's wait, and the quantize
boundaries. Reports are placed on exact frame/beat pairs (120 bpm at 48 kHz: 24 000 frames a
beat) so a nudged constant or a flipped comparison in the module changes an asserted number
(issue #24). A TempoMap alone: no daemon, no threads."""
from __future__ import annotations

import dataclasses
import math

import pytest

from engine.hostsync import QUANTIZE, HostPosition, HostSync, stream_frame
from engine.score import TempoMap

SR = 48000
BEAT = 24000                    # frames per beat at 120 bpm


def grid(tempo: TempoMap, f0: int, f1: int, step: int = 997):
    return [tempo.beat_at(f) for f in range(f0, f1, step)]


# ---------------------------------------------------------------- HostPosition


def test_host_position_arithmetic_with_speed():
    p = HostPosition(bpm=120.0, beat=3.0, frame=1000.0, speed=0.5)
    assert p.beat_at(1000.0 + SR, SR) == 4.0                 # one second at half speed: one beat
    assert p.beat_at(1000.0 - SR, SR) == 2.0
    assert p.beat_at(1000.0 + SR, SR // 2) == 5.0
    assert p.frame_at(4.0, SR) == 1000.0 + SR
    assert p.frame_at(5.0, SR // 2) == 1000.0 + SR
    assert p.frame_at(3.0, SR) == 1000.0
    q = HostPosition(bpm=90.0, beat=-2.0, frame=-500.0)
    assert q.beat_at(-500.0 + 2 * SR, SR) == pytest.approx(-2.0 + 3.0)
    assert q.frame_at(q.beat_at(12345.0, SR), SR) == pytest.approx(12345.0)
    assert HostPosition(1.0, 0.0, 0.0).beats_per_bar == 4.0 and HostPosition(1.0, 0.0, 0.0).speed == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):      # a report is a value: shared, never edited
        p.bpm = 60.0


# ---------------------------------------------------------------- refused and stopped positions


@pytest.mark.parametrize("bpm, beat", [(0.0, 0.0), (-120.0, 0.0), (math.nan, 0.0), (math.inf, 0.0),
                                       (120.0, math.nan), (120.0, math.inf), (120.0, -math.inf)])
def test_an_invalid_host_position_is_refused_and_changes_nothing(bpm, beat):
    tempo = TempoMap(100.0, SR, beat0=0.3)
    sync = HostSync(tempo)
    before = grid(tempo, 0, 10 * SR)
    with pytest.raises(ValueError, match="bad host position"):
        sync.update(HostPosition(bpm=bpm, beat=beat, frame=0.0), 5 * SR)
    assert sync.last is None and sync.last_action == ""
    assert grid(tempo, 0, 10 * SR) == before


def test_a_just_positive_tempo_is_accepted():
    sync = HostSync(TempoMap(120.0, SR))
    assert sync.update(HostPosition(bpm=1e-3, beat=0.0, frame=0.0), 0) == "start"


@pytest.mark.parametrize("speed", [0.0, -1.0])
def test_a_stopped_host_is_remembered_but_changes_nothing(speed):
    tempo = TempoMap(100.0, SR)
    sync = HostSync(tempo)
    tempo.align(3 * SR, 7.0, 80.0)                         # a plan of an earlier report
    before = grid(tempo, 0, 10 * SR)
    pos = HostPosition(bpm=120.0, beat=0.0, frame=0.0, speed=speed)
    assert sync.update(pos, SR) == "stopped"
    assert sync.last is pos and sync.last_action == "stopped"
    assert grid(tempo, 0, 10 * SR) == before               # not even the plan is discarded


def test_a_slow_rolling_host_is_followed():
    sync = HostSync(TempoMap(120.0, SR))
    assert sync.update(HostPosition(bpm=120.0, beat=0.0, frame=0.0, speed=1e-6), 0) == "start"


# ---------------------------------------------------------------- start


@pytest.mark.parametrize("host_beat0, bpb_host, expect_beat0", [
    (0.0, 4.0, 0.0), (0.2, 4.0, 0.2), (0.25, 4.0, 0.25),       # within start_slack: its first bar
    (0.3, 4.0, -3.7), (5.1, 4.0, -2.9), (3.75, 4.0, -0.25),    # else: bar 0 at the host's next bar line
    (-0.5, 4.0, -0.5), (8.0, 4.0, 0.0),
    (5.1, 3.0, 0.1), (5.5, 3.0, -0.5),                          # other meter: beats are locked
])
def test_a_start_places_bar_zero_exactly(host_beat0, bpb_host, expect_beat0):
    tempo = TempoMap(100.0, SR)
    sync = HostSync(tempo, 4.0)
    pos = HostPosition(bpm=120.0, beat=host_beat0 + 10.0, frame=10.0 * BEAT, beats_per_bar=bpb_host)
    assert sync.update(pos, 0) == "start" and sync.last_action == "start"
    assert tempo.beat_at(0) == pytest.approx(expect_beat0, abs=1e-9)
    assert tempo.bpm_at(0) == 120.0 and tempo.bpm_at(10 * SR) == 120.0


def test_start_slack_and_meter_tolerance_are_the_given_ones():
    tempo = TempoMap(100.0, SR)
    HostSync(tempo, 4.0, start_slack=0.5).update(HostPosition(120.0, 0.45, 0.0), 0)
    assert tempo.beat_at(0) == pytest.approx(0.45)
    tempo = TempoMap(100.0, SR)
    HostSync(tempo, 4.0, start_slack=0.0).update(HostPosition(120.0, 0.001, 0.0), 0)
    assert tempo.beat_at(0) == pytest.approx(-3.999)
    tempo = TempoMap(100.0, SR)                            # meters 4 and 4.0000005: the same meter
    HostSync(tempo, 4.0).update(HostPosition(120.0, 5.1, 0.0, beats_per_bar=4.0000005), 0)
    assert tempo.beat_at(0) == pytest.approx(-2.9)
    tempo = TempoMap(100.0, SR)                            # 4 and 4.00001: not
    HostSync(tempo, 4.0).update(HostPosition(120.0, 5.1, 0.0, beats_per_bar=4.00001), 0)
    assert tempo.beat_at(0) == pytest.approx(0.1)


def test_start_flag_overrides_the_head():
    # start=True at a head past 0: the first frame is placed (a fresh stream on an old map)
    tempo = TempoMap(100.0, SR)
    assert HostSync(tempo).update(HostPosition(120.0, 0.2, 0.0), 5 * SR, start=True) == "start"
    assert tempo.beat_at(0) == pytest.approx(0.2)
    # start=False at head 0: a continuation keeps its beat at the head and locks from its next line
    tempo = TempoMap(120.0, SR, beat0=0.5)
    act = HostSync(tempo).update(HostPosition(120.0, 0.5, 0.0), 0, start=False)
    assert act == "locked" and tempo.beat_at(0) == 0.5
    # a negative head is the start of the stream
    tempo = TempoMap(100.0, SR)
    assert HostSync(tempo).update(HostPosition(120.0, 0.2, 0.0), -7) == "start"


# ---------------------------------------------------------------- lock tolerances


def playing(bpm=120.0):
    tempo = TempoMap(bpm, SR)                              # beat k at frame k·BEAT
    return tempo, HostSync(tempo, 4.0)


@pytest.mark.parametrize("late, action", [(0, "locked"), (16, "locked"), (-16, "locked"), (17, "slew"),
                                          (-17, "slew")])
def test_the_phase_tolerance_boundary(late, action):
    """The host's beat 12 is ``late`` frames after the score's: within 16 frames nothing moves."""
    tempo, sync = playing()
    head = 10 * BEAT + 500
    before = grid(tempo, 0, 20 * BEAT)
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + late), head) == action
    if action == "locked":
        assert grid(tempo, 0, 20 * BEAT) == before
    else:                                                  # one beat takes it up, then the host's tempo
        assert tempo.frame_at(11.0) == 11 * BEAT
        assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT + late, abs=0.5)
        assert tempo.bpm_at(12 * BEAT + late + 1) == 120.0
        assert tempo.bpm_at(11 * BEAT + 1) == pytest.approx(120.0 * BEAT / (BEAT + late))
        assert tempo.bpm_at(head) == 120.0                 # the past is never re-timed


def test_a_custom_tolerance_is_used():
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, 4.0, tolerance_frames=40)
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 40), 10 * BEAT) == "locked"
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 41), 10 * BEAT) == "slew"


@pytest.mark.parametrize("host_bpm, action", [(120.15, "locked"), (119.85, "locked"), (120.17, "slew"),
                                              (119.83, "slew")])
def test_the_tempo_tolerance_boundary(host_bpm, action):
    """In phase at the next beat line, the tempo within 2 × tolerance / nominal of the host's
    (0.16 bpm here) is locked, the host's tempo taken from that line on; beyond, a slew."""
    tempo, sync = playing()
    head = 10 * BEAT + 500
    assert sync.update(HostPosition(host_bpm, 11.0, 11 * BEAT), head) == action
    assert tempo.bpm_at(head) == 120.0
    assert tempo.bpm_at(11 * BEAT + 1) == pytest.approx(host_bpm)
    assert tempo.frame_at(11.0) == 11 * BEAT
    assert tempo.frame_at(12.0) == pytest.approx(11 * BEAT + 60.0 * SR / host_bpm, abs=1.0)


def test_locked_at_the_same_tempo_adds_nothing():
    tempo, sync = playing()
    assert sync.update(HostPosition(120.0, 11.0, 11 * BEAT), 10 * BEAT + 500) == "locked"
    assert tempo._frames == [0] and tempo._bpm == [120.0]


# ---------------------------------------------------------------- replanning


def test_a_newer_report_replaces_the_plan_of_an_older_one():
    """Two reports at the same head: the map is what the newer alone would have made."""
    head = 10 * BEAT + 500
    tempo, sync = playing()
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 3000), head) == "slew"
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT + 3000, abs=0.5)
    newer = HostPosition(120.0, 12.0, 12 * BEAT - 2000)
    assert sync.update(newer, head) == "slew"
    fresh, fresh_sync = playing()
    fresh_sync.update(newer, head)
    assert tempo._frames == fresh._frames and tempo._beats == fresh._beats and tempo._bpm == fresh._bpm
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT - 2000, abs=0.5)
    # and an unchanged transport reported again later leaves it alone
    assert sync.update(newer, 13 * BEAT) == "locked"
    assert tempo._frames == fresh._frames


def test_a_report_inside_a_slewed_beat_returns_to_the_host_tempo_from_the_next_line():
    """The head sits in the slewed beat: its return to the host's tempo is discarded with the
    old plan and put back (tempo only) at the next line, the phase being right."""
    head = 11 * BEAT + 100
    tempo, sync = playing()
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 10), 10 * BEAT + 500) == "locked"
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 20), 10 * BEAT + 500) == "slew"
    slewed = tempo.bpm_at(head)
    assert slewed == pytest.approx(120.0 * BEAT / (BEAT + 20))
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 20), head) == "locked"
    assert tempo.bpm_at(head) == slewed and tempo.bpm_at(12 * BEAT + 21) == 120.0
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT + 20, abs=0.5)
    assert tempo.frame_at(16.0) == pytest.approx(16 * BEAT + 20, abs=0.5)


# ---------------------------------------------------------------- slew over a few beats, wait


@pytest.mark.parametrize("late_beats, n", [(0.2, 1), (0.25, 1), (0.3, 2), (0.45, 2), (0.55, 3), (0.9, 4),
                                           (-0.19, 1), (-0.21, 2), (-0.5, 3), (-0.7, 4)])
def test_a_phase_error_is_taken_up_over_the_fewest_beats_within_max_slew(late_beats, n):
    """max_slew 1.25: one beat takes up to +25 % (late host) or −20 % (early host, 1/1.25)."""
    tempo, sync = playing()
    late = late_beats * BEAT
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + late), 10 * BEAT + 500) == "slew"
    assert tempo.frame_at(11.0) == 11 * BEAT
    land = 11 * BEAT + n * BEAT + late                    # the host's beat 11 + n
    assert tempo.frame_at(11.0 + n) == pytest.approx(land, abs=0.5)
    period = (land - 11 * BEAT) / n
    for k in range(n):                                    # each beat played at the same, bounded tempo
        assert tempo.frame_at(12.0 + k) - tempo.frame_at(11.0 + k) == pytest.approx(period, abs=1.0)
    assert BEAT / 1.25 - 1 <= period <= BEAT * 1.25 + 1
    assert tempo.bpm_at(land + 1) == 120.0


def test_a_wider_max_slew_takes_it_up_in_one_beat():
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, 4.0, max_slew=2.0)
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 0.9 * BEAT), 10 * BEAT + 500) == "slew"
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT + 0.9 * BEAT, abs=0.5)


def test_the_plan_spans_at_most_a_bar():
    """A 3-beat bar: an error needing 4 beats is not spread; the grid holds for the host's line."""
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, 3.0)
    assert sync.max_plan == 3
    # 0.9 beat late: 1.9, 2.9 or 3.9 beats over 1, 2, 3 — each over ×1.25: beat 11 waits for the line
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + 0.9 * BEAT, beats_per_bar=3.0),
                       10 * BEAT + 500) == "wait"
    assert tempo.frame_at(12.0) == pytest.approx(12.9 * BEAT, abs=0.5)
    tempo, sync = playing()                                # a 4-beat bar: 4.9 over 4 beats (×1.225)
    assert sync.update(HostPosition(120.0, 12.0, 12.9 * BEAT), 10 * BEAT + 500) == "slew"
    assert tempo.frame_at(15.0) == pytest.approx(15.9 * BEAT, abs=0.5)
    assert HostSync(TempoMap(120.0, SR), 2.5).max_plan == 3
    assert HostSync(TempoMap(120.0, SR), 0.5).max_plan == 1


@pytest.mark.parametrize("shift_beats", [1.5, 2.0, 2.7, -1.5, -2.5])
def test_a_relocate_holds_one_beat_until_the_host_line(shift_beats):
    """Bars locked (offset a whole bar): the host's next bar line is ``shift_beats`` away from the
    score's expected one; the grid never goes back, and beat 11 → 12 lasts until a host line."""
    tempo, sync = playing()
    late = shift_beats * BEAT
    act = sync.update(HostPosition(120.0, 12.0, 12 * BEAT + late), 10 * BEAT + 500)
    assert act in ("slew", "wait")
    d = tempo.frame_at(12.0) - tempo.frame_at(11.0)
    assert d >= BEAT / 1.25 - 1                            # never rushed
    host_line = (tempo.frame_at(12.0) - (12 * BEAT + late)) / BEAT
    assert host_line == pytest.approx(round(host_line), abs=1e-4)   # lands on a host beat line
    assert act == ("slew" if d <= BEAT * 1.25 + 1 else "wait")
    assert tempo.bpm_at(tempo.frame_at(12.0) + 1) == 120.0


def test_a_late_host_by_most_of_a_beat_lands_on_its_next_line_in_wait():
    tempo, sync = playing()
    sync.max_plan = 1
    # host 0.5 beat late: one beat cannot take it (×1.5 > 1.25): beat 11 is held to the host's line
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + BEAT // 2), 10 * BEAT + 500) == "wait"
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT + BEAT // 2, abs=0.5)
    assert sync.last_action == "wait"
    # host 0.5 beat early: its line 0.5 beat away is too close: the host's next bar is taken (4.5 beats)
    tempo, sync = playing()
    sync.max_plan = 1
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT - BEAT // 2), 10 * BEAT + 500) == "wait"
    assert tempo.frame_at(12.0) == pytest.approx(15.5 * BEAT, abs=0.5)
    # host 0.2 beat early: 0.8 of a beat is within 1/1.25 — a slew of one beat
    tempo, sync = playing()
    sync.max_plan = 1
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT - BEAT // 5), 10 * BEAT + 500) == "slew"
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT - BEAT // 5, abs=0.5)
    # host 0.21 beat early: 0.79 of a beat is too short: the host's next bar (4.79 beats)
    tempo, sync = playing()
    sync.max_plan = 1
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT - 0.21 * BEAT), 10 * BEAT + 500) == "wait"
    assert tempo.frame_at(12.0) == pytest.approx(15.79 * BEAT, abs=0.5)
    # other meter (beats locked): the host's next beat line instead (1.79 beats)
    tempo, sync = playing()
    sync.max_plan = 1
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT - 0.21 * BEAT, beats_per_bar=3.0),
                       10 * BEAT + 500) == "wait"
    assert tempo.frame_at(12.0) == pytest.approx(12.79 * BEAT, abs=0.5)


def test_bars_lock_to_bars_and_beats_to_beats():
    # the score's beat 12 is a bar line; the host's beat 13 (not a bar line) falls where score 12 is
    tempo, sync = playing()
    sync.update(HostPosition(120.0, 13.0, 12 * BEAT), 10 * BEAT + 500)
    host_beat_at_score_bar = 13.0 + (tempo.frame_at(12.0) - 12 * BEAT) / BEAT
    assert host_beat_at_score_bar % 4.0 == pytest.approx(0.0, abs=1e-4)   # bars on bars
    tempo, sync = playing()
    sync.update(HostPosition(120.0, 13.0, 12 * BEAT, beats_per_bar=3.0), 10 * BEAT + 500)
    assert sync.last_action == "locked"                    # other meter: a beat line is enough


# ---------------------------------------------------------------- quantize boundaries


def test_next_boundary_frame():
    tempo = TempoMap(120.0, SR, beat0=0.5)                 # beat 1 at 12 000, bar 1 (beat 4) at 84 000
    sync = HostSync(tempo, 4.0)
    assert sync.next_boundary_frame(100.2, "off") == 101
    assert sync.next_boundary_frame(100.0, "off") == 100
    assert sync.next_boundary_frame(0, "beat") == 12000
    assert sync.next_boundary_frame(12000, "beat") == 12000         # on a line: that line
    assert sync.next_boundary_frame(12001, "beat") == 36000
    assert sync.next_boundary_frame(0, "bar") == 84000
    assert sync.next_boundary_frame(84000, "bar") == 84000
    assert sync.next_boundary_frame(84000.5, "bar") == 84000 + 4 * BEAT
    # within rounding of a line: that line
    assert HostSync(TempoMap(120.0, SR, beat0=1e-10)).next_boundary_frame(0, "beat") == 0
    assert HostSync(TempoMap(120.0, SR, beat0=-1e-11)).next_boundary_frame(0, "beat") == 0
    assert HostSync(TempoMap(120.0, SR, beat0=-1e-8)).next_boundary_frame(0, "beat") == 1
    assert QUANTIZE == ("off", "beat", "bar")
    with pytest.raises(ValueError, match="quantize must be one of"):
        sync.next_boundary_frame(0, "half")


def test_next_boundary_frame_rounds_up_to_a_whole_frame():
    tempo = TempoMap(100.0, SR)                            # 28 800 frames a beat
    sync = HostSync(tempo, 3.0)
    tempo.align(10, 0.0, 97.0)                             # beat 1 at 10 + 29 690.72…
    f = sync.next_boundary_frame(11, "beat")
    assert f == math.ceil(10 + 60.0 * SR / 97.0)
    assert sync.next_boundary_frame(11, "bar") == math.ceil(10 + 3 * 60.0 * SR / 97.0)


def test_stream_frame():
    assert stream_frame(1000, 400, 48000, 48000) == 600
    assert stream_frame(1000, 400, 48000, 32000) == 400
    assert stream_frame(400, 1000, 44100, 44100) == -600


# ---------------------------------------------------------------- defaults, exact boundaries, bar numbering


def test_the_default_meter_is_four_beats():
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo)
    assert sync.beats_per_bar == 4.0 and sync.max_plan == 4
    assert sync.next_boundary_frame(1, "bar") == 4 * BEAT
    # a 4-beat host locks bars: score bar lines on the host's (the host's beat 13 is no bar line)
    sync.update(HostPosition(120.0, 13.0, 12 * BEAT), 10 * BEAT + 500)
    assert (13.0 + (tempo.frame_at(12.0) - 12 * BEAT) / BEAT) % 4.0 == pytest.approx(0.0, abs=1e-4)


def test_a_head_exactly_on_a_beat_line_plans_from_that_line():
    """The render head sits on beat 11 itself: beat 11 is still to be played, so the slew starts there."""
    tempo, sync = playing()
    head = 11 * BEAT
    assert tempo.beat_at(head) == 11.0
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT + BEAT // 5), head) == "slew"
    assert tempo.frame_at(11.0) == 11 * BEAT
    assert tempo.frame_at(12.0) == pytest.approx(12 * BEAT + BEAT // 5, abs=0.5)   # beat 11 → 12 took it up
    assert tempo.bpm_at(head) == pytest.approx(120.0 / 1.2)


def test_the_tempo_tolerance_is_inclusive():
    """tolerance 25 frames: 2 × 25 / 24 000 × 120 bpm = 0.25 bpm exactly; a score at 120.25 bpm in
    phase with a 120 bpm host is locked (the host's tempo from the next line), not slewed."""
    tempo = TempoMap(120.25, SR)
    sync = HostSync(tempo, 4.0, tolerance_frames=25)
    head = 10 * BEAT
    b_next = math.ceil(tempo.beat_at(head) - 1e-9)
    f_next = tempo.frame_at(b_next)
    assert sync.update(HostPosition(120.0, float(b_next), f_next), head) == "locked"
    assert tempo.bpm_at(f_next + 1) == 120.0
    tempo = TempoMap(120.25 + 1e-9, SR)
    sync = HostSync(tempo, 4.0, tolerance_frames=25)
    f_next = tempo.frame_at(b_next)
    assert sync.update(HostPosition(120.0, float(b_next), f_next), head) == "slew"


def test_an_early_host_by_exactly_one_fifth_of_a_beat_is_one_beat_at_max_slew():
    """0.8 beat is exactly 1 / 1.25 of a beat: the fewest beats within max_slew is one."""
    tempo, sync = playing()
    assert sync.update(HostPosition(120.0, 12.0, 12 * BEAT - BEAT // 5), 10 * BEAT + 500) == "slew"
    assert tempo.frame_at(12.0) == 12 * BEAT - BEAT // 5
    assert tempo.bpm_at(11 * BEAT + 1) == pytest.approx(120.0 * 1.25)
    assert tempo.bpm_at(12 * BEAT - BEAT // 5 + 1) == 120.0


def maps(tempo):
    return list(zip(tempo._frames, tempo._beats, tempo._bpm))


@pytest.mark.parametrize("late_beats, max_plan", [(0.2, 4), (0.3, 4), (0.9, 4), (-0.21, 4), (-0.7, 4),
                                                  (0.5, 1), (-0.5, 1), (-0.21, 1), (1.5, 4), (-2.5, 4)])
@pytest.mark.parametrize("bars", [2, -3])
def test_the_hosts_bar_numbers_do_not_matter(late_beats, max_plan, bars):
    """A host that counts its bars from elsewhere (whole bars more or fewer) gets the same plan:
    the slew, the wait and the host's next bar line when its next line is too close."""
    def plan(shift):
        tempo, sync = playing()
        sync.max_plan = max_plan
        act = sync.update(HostPosition(120.0, 12.0 + shift, 12 * BEAT + late_beats * BEAT), 10 * BEAT + 500)
        return act, maps(tempo)
    act, ref = plan(0)
    act2, got = plan(4.0 * bars)
    assert act2 == act
    assert len(got) == len(ref)
    for (f, b, bpm), (f2, b2, bpm2) in zip(ref, got):
        assert (f2, b2) == (f, b) and bpm2 == pytest.approx(bpm)


def test_the_hosts_next_bar_line_after_a_too_close_one_in_beats():
    """Meters differ (beats locked), one beat of plan, max_slew 1.5: the host half a beat ahead
    has its line 0.5 beat away (too close, < 1/1.5) — the next, 1.5 beats away, is exactly within
    max_slew: a slew; one 1.45 beats away with max_slew 1.6 too."""
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, 1.0, max_slew=1.5)
    assert sync.max_plan == 1
    pos = HostPosition(120.0, 11.5, 11 * BEAT, beats_per_bar=4.0)
    assert sync.update(pos, 10 * BEAT + 500) == "slew" and sync.last_action == "slew"
    assert tempo.frame_at(11.0) == 11 * BEAT
    assert tempo.frame_at(12.0) == pos.frame_at(13.0, SR) == 11 * BEAT + 1.5 * BEAT
    assert tempo.bpm_at(11 * BEAT + 1) == pytest.approx(120.0 / 1.5)
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, 1.0, max_slew=1.6)
    pos = HostPosition(120.0, 11.45, 11 * BEAT, beats_per_bar=4.0)
    assert sync.update(pos, 10 * BEAT + 500) == "slew"
    assert tempo.frame_at(12.0) == pytest.approx(pos.frame_at(13.0, SR), abs=0.5)
    # 0.4 beat ahead: its line 0.6 beat away is too close, the next 1.6 beats away beyond max_slew
    # 1.25 — beat 11 is held until that line: a wait
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, 1.0)
    pos = HostPosition(120.0, 11.4, 11 * BEAT, beats_per_bar=4.0)
    assert sync.update(pos, 10 * BEAT + 500) == "wait"
    assert tempo.frame_at(12.0) == pytest.approx(pos.frame_at(13.0, SR), abs=0.5)
