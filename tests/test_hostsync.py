"""engine.hostsync with a TempoMap alone: a simulated host reports its transport at the read
head a few times a second while a simulated renderer advances the render head; the score's
beat grid must follow the host's tempo and land its bar lines on the host's."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.hostsync import HostPosition, HostSync, stream_frame
from engine.score import TempoMap

SR = 48000
BLOCK = 256                    # one host block: the lock's tolerance
BPB = 4.0


class Host:
    """A host transport on the stream's frame axis: piecewise-constant tempo, beat 0 at
    ``origin`` (a frame, may be negative: the host was already rolling)."""

    def __init__(self, bpm: float, origin: float = 0.0, beat0: float = 0.0):
        self.segments = [(origin, beat0, bpm)]       # (frame, beat, bpm)

    def change(self, frame: float, bpm: float):
        self.segments.append((frame, self.beat_at(frame), bpm))

    def _seg(self, frame):
        seg = self.segments[0]
        for s in self.segments:
            if s[0] <= frame:
                seg = s
        return seg

    def beat_at(self, frame):
        f0, b0, bpm = self._seg(frame)
        return b0 + (frame - f0) * bpm / (60.0 * SR)

    def frame_at(self, beat):
        seg = self.segments[0]
        for s in self.segments:
            if s[1] <= beat:
                seg = s
        f0, b0, bpm = seg
        return f0 + (beat - b0) * 60.0 * SR / bpm

    def report(self, read_frame: float) -> HostPosition:
        """What the plugin sends: bpm and beat at the frame its read head plays."""
        return HostPosition(bpm=self._seg(read_frame)[2], beat=self.beat_at(read_frame),
                            frame=read_frame, beats_per_bar=BPB)


def play(host: Host, sync: HostSync, frames: int, *, buffer: int = 0, chunk: int = 2048,
         report_every: int = SR // 4, head0: int = 0):
    """Advance the render head by ``chunk`` frames at a time, reporting every ``report_every``
    frames with the read head ``buffer`` frames behind. The sync is told the head from which it
    may change the map; returns the actions taken."""
    actions = []
    head = head0
    next_report = head0
    while head < head0 + frames:
        if head >= next_report:
            read = max(0, head - buffer)
            actions.append(sync.update(host.report(read), head))
            next_report += report_every
        head += chunk
    return actions


def score_downbeats(tempo: TempoMap, f0: float, f1: float):
    """(score bar index, frame) of every bar line of the score in [f0, f1)."""
    b0, b1 = tempo.beat_at(f0), tempo.beat_at(f1)
    out = []
    k = math.ceil(b0 / BPB)
    while k * BPB < b1:
        out.append((k, tempo.frame_at(k * BPB)))
        k += 1
    return out


def assert_bars_on_host(tempo: TempoMap, host: Host, f0: float, f1: float):
    """Every score bar line in [f0, f1) sits on a host bar line, within one host block."""
    bars = score_downbeats(tempo, f0, f1)
    assert len(bars) >= 2, "no bars to check"
    for k, f in bars:
        hb = host.beat_at(f)
        nearest = round(hb / BPB) * BPB
        err = f - host.frame_at(nearest)
        assert abs(err) <= BLOCK, f"score bar {k} at frame {f:.0f} is {err:+.0f} frames off the host's bar"


def beat_periods(tempo: TempoMap, f0: float, f1: float) -> np.ndarray:
    b0, b1 = math.ceil(tempo.beat_at(f0)), math.floor(tempo.beat_at(f1))
    frames = np.array([tempo.frame_at(b) for b in range(b0, b1 + 1)])
    return np.diff(frames)


def test_start_in_phase_with_a_rolling_host():
    """A stream that has rendered nothing starts with the host's tempo and bar phase."""
    host = Host(97.0, origin=-123_457.0)                 # the host is mid-bar at frame 0
    tempo = TempoMap(120.0, SR)                          # the prompt said 120
    sync = HostSync(tempo, BPB)
    assert sync.update(host.report(0), 0) == "start"
    b0 = tempo.beat_at(0)
    assert -BPB < b0 <= 0.25                             # the score's bar 0 begins at a host bar line
    assert tempo.frame_at(0.0) == pytest.approx(host.frame_at(math.ceil(host.beat_at(0) / BPB - 0.25 / BPB) * BPB),
                                                abs=1.0)
    assert_bars_on_host(tempo, host, 0, 20 * SR)
    np.testing.assert_allclose(beat_periods(tempo, 0, 10 * SR), 60.0 * SR / 97.0, atol=1.0)


@pytest.mark.parametrize("score_bpm,host_bpm,origin", [(120.0, 97.0, 0.0), (90.0, 140.0, -31_000.0),
                                                       (128.0, 128.0, 7_777.0), (100.0, 101.5, 0.0)])
def test_playing_stream_locks_to_the_host(score_bpm, host_bpm, origin):
    """A stream already playing at its own tempo and phase: after the first report its beat
    period is the host's and its bar lines sit on the host's, within one block."""
    tempo = TempoMap(score_bpm, SR, beat0=0.37)
    sync = HostSync(tempo, BPB)
    host = Host(host_bpm, origin=origin)
    head0 = 5 * SR                                       # it has rendered 5 s on its own
    actions = play(host, sync, 20 * SR, buffer=SR // 2, head0=head0)
    assert actions[0] in ("slew", "wait")
    assert actions[-1] == "locked"                       # repeated reports change nothing
    # within a bar: a phase error one beat cannot take is spread over up to a bar's beats
    lock_by = head0 + (BPB + 1) * 60.0 * SR / min(score_bpm, host_bpm) * sync.max_slew + 2048
    assert_bars_on_host(tempo, host, lock_by, head0 + 20 * SR)
    np.testing.assert_allclose(beat_periods(tempo, lock_by, head0 + 20 * SR), 60.0 * SR / host_bpm, atol=1.0)
    # the past was never re-timed: frames before the first report keep the score's own tempo
    np.testing.assert_allclose(beat_periods(tempo, 0, head0), 60.0 * SR / score_bpm, atol=1.0)


def test_small_phase_error_is_slewed_not_jumped():
    """A drift of a few ms is taken up over one beat, the beat grid stays continuous."""
    host = Host(120.0)
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, BPB)
    sync.update(host.report(0), 0)
    host2 = Host(120.0, origin=300.0)                    # the host is 300 frames (6 ms) later
    head = 3 * SR + 1000
    assert sync.update(host2.report(head - SR // 2), head) == "slew"
    periods = beat_periods(tempo, head, head + 10 * SR)
    assert periods.max() - periods.min() <= 300 + 2        # one beat absorbs it
    assert_bars_on_host(tempo, host2, head + SR, head + 10 * SR)


@pytest.mark.parametrize("err_beats", [0.3, 0.6, -0.4, -0.9])
def test_a_phase_error_too_big_for_one_beat_is_spread_over_a_few(err_beats):
    """A late report after a tempo jump leaves the grid a fraction of a beat off: instead of one
    beat held up to a bar long (or rushed), a few beats play at most ``max_slew`` faster or
    slower, and the bars are on the host's within a bar."""
    host = Host(120.0)
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, BPB)
    sync.update(host.report(0), 0)
    off = Host(120.0, origin=-err_beats * 60.0 * SR / 120.0)   # the host is err_beats ahead
    head = 3 * SR + 1000
    assert sync.update(off.report(head - SR // 2), head) == "slew"
    nominal = 60.0 * SR / 120.0
    first = tempo.frame_at(math.ceil(tempo.beat_at(head)))
    periods = beat_periods(tempo, first, first + 6 * SR)
    assert periods.min() >= nominal / sync.max_slew - 1 and periods.max() <= nominal * sync.max_slew + 1, periods[:6]
    assert (np.abs(periods - nominal) > 1).sum() <= BPB           # spread over a bar at most
    assert_bars_on_host(tempo, off, first + (BPB + 1) * nominal * sync.max_slew, first + 8 * SR)


def test_tempo_change_is_followed_from_the_next_beat():
    """The host speeds up; from the beat after the head the score plays at the new tempo and
    its bars land on the host's again within a beat."""
    host = Host(100.0)
    tempo = TempoMap(100.0, SR)
    sync = HostSync(tempo, BPB)
    play(host, sync, 4 * SR)
    change = 4 * SR + 5000
    host.change(change, 132.0)
    head = change + 3000                                 # the report reaches the render head late
    sync.update(host.report(change + 1000), head)
    beat_new = 60.0 * SR / 132.0
    first_beat = tempo.frame_at(math.ceil(tempo.beat_at(head)))
    settled = first_beat + 60.0 * SR / 100.0 * 1.3       # one (slewed) beat later at the latest
    periods = beat_periods(tempo, settled, settled + 8 * SR)
    np.testing.assert_allclose(periods, beat_new, atol=1.0)
    assert_bars_on_host(tempo, host, settled, settled + 8 * SR)
    # frames rendered before the head are untouched by the change
    np.testing.assert_allclose(beat_periods(tempo, 0, head), 60.0 * SR / 100.0, atol=1.0)


def test_relocate_waits_for_the_new_bar():
    host = Host(120.0)
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, BPB)
    play(host, sync, 3 * SR)
    jumped = Host(120.0, origin=1.5 * 60 * SR / 120)     # the host relocated by a bar and a half
    act = sync.update(jumped.report(3 * SR), 3 * SR)
    assert act == "wait"
    assert_bars_on_host(tempo, jumped, 3 * SR + 2 * SR, 10 * SR)
    beats = [tempo.beat_at(f) for f in range(0, 10 * SR, 480)]
    assert all(b1 >= b0 for b0, b1 in zip(beats, beats[1:])), "the grid went backwards"


@pytest.mark.parametrize("shift_beats", [0.6, 1.0, 1.5, 2.0, 2.5, 3.4, -0.7, -1.9])
def test_any_relocate_keeps_the_grid_monotonic_and_locks(shift_beats):
    """Whatever the relocate, the tempo map's beats only move forward and skip nothing
    (frame_at inverts beat_at) and the bars are on the host's three seconds later."""
    host = Host(120.0)
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, BPB)
    play(host, sync, 3 * SR)
    moved = Host(120.0, origin=shift_beats * 60 * SR / 120)
    play(moved, sync, 8 * SR, head0=3 * SR + 2048)
    beats = [tempo.beat_at(f) for f in range(0, 11 * SR, 480)]
    assert all(b1 >= b0 for b0, b1 in zip(beats, beats[1:])), "the grid went backwards"
    for b in np.arange(1.0, tempo.beat_at(11 * SR), 0.37):     # no beat skipped: frame_at inverts
        assert tempo.beat_at(tempo.frame_at(b)) == pytest.approx(b, abs=1e-6)
    assert_bars_on_host(tempo, moved, 6 * SR, 11 * SR)


def test_other_meter_locks_beats():
    """A 3/4 host and a 4/4 score: beats are locked (bars cannot all agree)."""
    host = Host(90.0, origin=-1000.0)
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, BPB)
    pos = host.report(0)
    sync.update(HostPosition(pos.bpm, pos.beat, pos.frame, beats_per_bar=3.0), 0)
    for b in range(1, 20):
        f = tempo.frame_at(math.ceil(tempo.beat_at(0)) + b)
        hb = host.beat_at(f)
        assert abs(hb - round(hb)) * 60 * SR / 90.0 <= BLOCK


def test_stopped_host_changes_nothing():
    tempo = TempoMap(120.0, SR)
    sync = HostSync(tempo, BPB)
    before = [tempo.frame_at(b) for b in range(16)]
    assert sync.update(HostPosition(97.0, 3.0, 0.0, speed=0.0), 1000) == "stopped"
    assert [tempo.frame_at(b) for b in range(16)] == before
    with pytest.raises(ValueError):
        sync.update(HostPosition(float("nan"), 0.0, 0.0), 0)


def test_next_boundary_frame_for_quantize():
    tempo = TempoMap(120.0, SR)                          # a beat is 24000 frames, a bar 96000
    sync = HostSync(tempo, BPB)
    assert sync.next_boundary_frame(1000, "off") == 1000
    assert sync.next_boundary_frame(1000, "beat") == 24000
    assert sync.next_boundary_frame(24000, "beat") == 24000
    assert sync.next_boundary_frame(1000, "bar") == 96000
    assert sync.next_boundary_frame(96001, "bar") == 192000
    with pytest.raises(ValueError):
        sync.next_boundary_frame(0, "half")
    # after a lock, the bar line it names is the host's bar line
    host = Host(97.0, origin=-50_000.0)
    sync.update(host.report(0), 0)
    f = sync.next_boundary_frame(3 * SR, "bar")
    hb = host.beat_at(f)
    assert abs(hb / BPB - round(hb / BPB)) * BPB * 60 * SR / 97.0 <= BLOCK


def test_start_just_after_a_bar_line_begins_in_the_first_bar():
    """A transport start: the job's first frame is a few ms after the host's bar line."""
    host = Host(120.0, origin=-1200.0)                   # 25 ms after bar 0 at frame 0
    tempo = TempoMap(100.0, SR)
    HostSync(tempo, BPB).update(host.report(0), 0)
    assert tempo.beat_at(0) == pytest.approx(1200 * 120 / (60 * SR))
    assert_bars_on_host(tempo, host, 0, 10 * SR)


def test_stream_frame_maps_ring_frames():
    assert stream_frame(150_000, 50_000, 48000, 48000) == 100_000
    assert stream_frame(150_000, 50_000, 48000, 32000) == pytest.approx(100_000 * 2 / 3)
