"""Scheduler with a fake backend and a fake clock: order, batching, join/leave, faults, metering."""
from __future__ import annotations

import numpy as np
import pytest

from engine.backend import Backend, BackendError, OutOfMemory, Stream
from engine.scheduler import Scheduler


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class FakeBackend(Backend):
    """Each stream emits its job id as the sample value; records every call."""

    name = "fake"
    sample_rate = 1000
    channels = 1
    max_batch = 4

    def __init__(self, clock, cost_per_call=0.01, fail_jobs=(), oom_over=None):
        self.clock = clock
        self.calls = []
        self.cost = cost_per_call
        self.fail_jobs = set(fail_jobs)
        self.oom_over = oom_over
        self.ended = []

    def start(self, job, prompt, seed, params=None):
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}))

    def generate(self, streams, frames):
        self.clock.t += self.cost
        if self.oom_over is not None and len(streams) > self.oom_over:
            raise OutOfMemory(f"batch {len(streams)} too big")
        bad = [s.job for s in streams if s.job in self.fail_jobs]
        if bad:
            raise BackendError(f"stream {bad[0]} exploded")
        self.calls.append(([s.job for s in streams], frames))
        out = []
        for s in streams:
            out.append(np.full((frames, 1), float(s.job), np.float32))
            s.frames_done += frames
        return out

    def end(self, stream):
        self.ended.append(stream.job)


@pytest.fixture
def env():
    clock = FakeClock()
    be = FakeBackend(clock)
    sch = Scheduler(be, target_frames=1000, first_chunk=16, max_chunk=256, clock=clock)
    return clock, be, sch


def add(sch, slot, job, seconds=0.0):
    j = sch.start(slot, job, f"p{job}", 0, seconds)
    sch.attach(j)
    return j


def test_earliest_deadline_first_and_one_batch(env):
    clock, be, sch = env
    for slot in (1, 2, 3):
        add(sch, slot, slot)
    plan = sch.plan({1: 500, 2: 100, 3: 300}, {1: 10 ** 6, 2: 10 ** 6, 3: 10 ** 6})
    assert [j.slot for j, _ in plan] == [2, 3, 1]
    res = sch.step({1: 0, 2: 0, 3: 0}, {1: 10 ** 6, 2: 10 ** 6, 3: 10 ** 6})
    assert len(be.calls) == 1 and sorted(be.calls[0][0]) == [1, 2, 3]   # one backend call for all
    assert [c.job.slot for c in res.chunks] == [1, 2, 3]


def test_full_slots_cost_nothing(env):
    clock, be, sch = env
    add(sch, 1, 1)
    res = sch.step({1: 1000}, {1: 10 ** 6})
    assert res.chunks == [] and be.calls == []
    assert sch.next_deadline_s({1: 1500}) == pytest.approx(0.5)


def test_progressive_chunks_grow_from_small_first_chunk(env):
    clock, be, sch = env
    add(sch, 1, 1)
    buffered, sizes = 0, []
    for _ in range(6):
        res = sch.step({1: buffered}, {1: 10 ** 6})
        n = res.chunks[0].audio.shape[0]
        sizes.append(n)
        buffered += n
    assert sizes[0] == 16
    assert sizes == sorted(sizes) and sizes[-1] == 256
    assert res.chunks[0].first is False


def test_chunks_respect_free_space(env):
    clock, be, sch = env
    add(sch, 1, 1)
    res = sch.step({1: 900}, {1: 40})
    assert res.chunks[0].audio.shape[0] <= 40


def test_join_and_leave_between_steps(env):
    clock, be, sch = env
    def served(buffered):
        n = len(be.calls)
        sch.step(buffered, {s: 10 ** 6 for s in buffered})
        return sorted(j for c in be.calls[n:] for j in c[0])

    add(sch, 1, 1)
    assert served({1: 0}) == [1]
    add(sch, 2, 2)                                   # joins between steps
    assert served({1: 0, 2: 0}) == [1, 2]
    sch.cancel(1)                                    # leaves between steps
    assert served({2: 0}) == [2]
    assert 1 in be.ended


def test_max_batch_splits_into_several_calls(env):
    clock, be, sch = env
    for s in range(1, 11):
        add(sch, s, s)
    sch.step({s: 0 for s in range(1, 11)}, {s: 10 ** 6 for s in range(1, 11)})
    assert [len(c[0]) for c in be.calls] == [4, 4, 2]


def test_finite_job_ends_exactly(env):
    clock, be, sch = env
    add(sch, 1, 1, seconds=0.1)                     # 100 frames at 1 kHz
    got, last = 0, False
    for _ in range(20):
        res = sch.step({1: 0}, {1: 10 ** 6})
        for c in res.chunks:
            got += c.audio.shape[0]
            last = c.last
        if last:
            break
    assert got == 100 and last


def test_backend_error_fails_only_its_job(env):
    clock, be, sch = env
    be.fail_jobs = {2}
    for s in (1, 2, 3):
        add(sch, s, s)
    res = sch.step({1: 0, 2: 0, 3: 0}, {1: 10 ** 6, 2: 10 ** 6, 3: 10 ** 6})
    assert [f.job.job for f in res.failures] == [2] and res.failures[0].code == "backend"
    assert sorted(c.job.job for c in res.chunks) == [1, 3]


def test_oom_retries_smaller_batches(env):
    clock, be, sch = env
    be.oom_over = 1
    for s in (1, 2, 3, 4):
        add(sch, s, s)
    res = sch.step({s: 0 for s in (1, 2, 3, 4)}, {s: 10 ** 6 for s in (1, 2, 3, 4)})
    assert sorted(c.job.job for c in res.chunks) == [1, 2, 3, 4]
    assert all(len(c[0]) == 1 for c in be.calls)
    be.oom_over = 0
    res = sch.step({s: 0 for s in (1, 2, 3, 4)}, {s: 10 ** 6 for s in (1, 2, 3, 4)})
    assert sorted(f.job.job for f in res.failures) == [1, 2, 3, 4]
    assert {f.code for f in res.failures} == {"oom"}


def test_compute_is_shared_across_the_batch(env):
    clock, be, sch = env
    jobs = [add(sch, s, s) for s in (1, 2)]
    sch.step({1: 0, 2: 0}, {1: 10 ** 6, 2: 10 ** 6})
    assert jobs[0].compute_s == pytest.approx(0.005)
    assert jobs[1].compute_s == pytest.approx(0.005)
    assert sch.total_compute_s == pytest.approx(0.01)


def test_ramping_chunks_grow_no_faster_than_a_round_of_all_slots_can_be_served(env):
    """With many slots warming at once, a slot's next chunk must not outlast its buffer."""
    clock, be, sch = env
    for s in range(1, 9):
        add(sch, s, s)
    sch.throughput = 4.0                    # audio-seconds per compute-second
    n = sch.chunk_size(sch.jobs[1], buffered=64, free=10 ** 6, active=8)
    assert n * 8 / be.sample_rate / sch.throughput <= 64 / be.sample_rate   # a round fits the buffer
    assert sch.chunk_size(sch.jobs[1], buffered=64, free=10 ** 6, active=1) == 16   # alone: doubling rules
    sch.throughput = None                   # unknown: plain doubling
    assert sch.chunk_size(sch.jobs[1], buffered=64, free=10 ** 6, active=8) == 16


def test_each_batch_is_handed_over_as_soon_as_it_is_made(env):
    clock, be, sch = env
    for s in range(1, 11):
        add(sch, s, s)
    seen = []
    sch.step({s: s * 10 for s in range(1, 11)}, {s: 10 ** 6 for s in range(1, 11)},
             sink=lambda chunks: seen.append([c.job.slot for c in chunks]))
    assert [len(x) for x in seen] == [4, 4, 2]                 # one hand-over per backend call
    assert sum(seen, []) == list(range(1, 11))                 # most urgent first


def test_a_step_yields_to_waiting_commands_only_once_the_urgent_slots_are_served(env):
    """``yield_to``: slots it would not wait for go first in batches of their own; the step ends
    before the first batch of slots that can wait (and is planned again next step)."""
    clock, be, sch = env
    for s in range(1, 7):
        add(sch, s, s)
    buffered = {1: 500, 2: 10, 3: 400, 4: 20, 5: 0, 6: 300}
    free = {s: 10 ** 6 for s in buffered}
    waiting = [True]
    res = sch.step(buffered, free, yield_to=lambda frames: waiting[0] and frames >= 250)
    assert res.yielded
    assert sorted(c.job.slot for c in res.chunks) == [2, 4, 5]        # the urgent ones, and only they
    assert all(set(ids) <= {2, 4, 5} for ids, _ in be.calls)
    waiting[0] = False                                                 # nothing waits: all are served
    be.calls.clear()
    buffered.update({2: 260, 4: 260, 5: 260})
    res = sch.step(buffered, free, yield_to=lambda frames: waiting[0] and frames >= 250)
    assert not res.yielded and sorted(c.job.slot for c in res.chunks) == [1, 2, 3, 4, 5, 6]


def test_without_yield_to_a_step_serves_every_slot_below_target(env):
    clock, be, sch = env
    for s in range(1, 4):
        add(sch, s, s)
    res = sch.step({1: 500, 2: 10, 3: 900}, {s: 10 ** 6 for s in (1, 2, 3)})
    assert not res.yielded and sorted(c.job.slot for c in res.chunks) == [1, 2, 3]


def test_a_round_fits_the_tightest_buffer_of_the_slots_already_sounding(env):
    """Slots with deep buffers ask for full chunks while one slot has just started: the round's
    total generation time (at the recent throughput) stays under 0.7 × that slot's buffer, so it
    is served again before it runs dry."""
    clock, be, sch = env
    for s in range(1, 11):
        add(sch, s, s)
        sch.jobs[s].next_chunk = 256
        sch.jobs[s].frames_out = 1000
    sch.throughput = 20.0                        # audio-seconds per compute-second
    buffered = {s: 240 for s in range(1, 10)}    # below a quarter of the target: ramping
    buffered[10] = 40                            # just started: 40 ms
    plan = sch.plan(buffered, {s: 10 ** 6 for s in buffered})
    total_s = sum(n for _, n in plan) / be.sample_rate / sch.throughput
    assert total_s <= 0.7 * 40 / be.sample_rate + 1e-9
    assert {j.slot for j, _ in plan} == set(buffered)       # everyone still gets a chunk
    assert all(n >= sch.first_chunk for _, n in plan)
