"""Scheduler: which slots get audio next, how much, and in one batch.

Owns the jobs (one per slot at most, plus a job being replaced while its crossfade is
written) and their backend streams. Each :meth:`Scheduler.step` is told every playing slot's
buffered frames and free space — numbers only; the scheduler knows no ring and no transport —
and returns the next chunk for every slot that is below its target depth, generated in as
few backend calls as possible: one call per chunk-size bucket, slots ordered by deadline
(buffered frames ÷ rate, earliest first). Streams join and leave between steps (continuous
batching). Chunks grow from a small first chunk (fast first audio) to ``max_chunk`` once the
slot has a safe margin.

A backend exception fails only the streams it belongs to: an ``OutOfMemory`` batch is retried
in halves down to single streams; whatever still fails is reported as a failure for that job
alone. Compute time of every call is shared among the batch's jobs (per-job metering).

Runs entirely on the ``[engine]`` thread; ``clock`` is injectable for tests.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from engine.backend import Backend, BackendError, OutOfMemory, Stream

log = logging.getLogger("wavebridge")


@dataclass
class Job:
    """One request to play a prompt on a slot."""

    job: int
    slot: int
    prompt: str
    seed: int
    seconds: float                      # 0 = endless
    stream: Stream
    frames_total: int                   # 0 = endless
    frames_out: int = 0                 # frames handed back so far
    next_chunk: int = 0
    compute_s: float = 0.0              # this job's share of backend time
    chunks: int = 0
    done: bool = False
    tag: object = None                  # opaque to the engine (the daemon keeps the requester here)
    retimed: bool = False               # a re-timed restart of the same job (bridge.core.daemon.retime)
    cont_of: "Job | None" = None        # the job it continues, until that one has ended
    prior_frames: int = 0               # frames the job had played before this continuation

    @property
    def remaining(self) -> int | None:
        return None if self.frames_total == 0 else self.frames_total - self.frames_out


@dataclass
class Chunk:
    """Audio for one job, in the order it must be written."""

    job: Job
    audio: np.ndarray                   # (n, channels) float32
    first: bool                         # the job's first chunk
    last: bool                          # the job ends with this chunk


@dataclass
class Failure:
    job: Job
    code: str                           # "oom" or "backend"
    message: str


@dataclass
class StepResult:
    chunks: list[Chunk] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    batch_sizes: list[int] = field(default_factory=list)
    compute_s: float = 0.0
    yielded: bool = False               # the step was cut short (``yield_to``); more is planned


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


class Scheduler:
    """Deadline-ordered, batched chunk planning over a backend. ``[engine]``"""

    def __init__(self, backend: Backend, *, target_frames: int, first_chunk: int = 1024,
                 max_chunk: int = 8192, clock=time.perf_counter):
        self.backend = backend
        self.rate = backend.sample_rate
        self.target_frames = int(target_frames)
        self.first_chunk = int(first_chunk)
        self.max_chunk = int(max_chunk)
        self.clock = clock
        self.jobs: dict[int, Job] = {}          # slot → job
        self.max_batch = max(1, int(getattr(backend, "max_batch", 64)))
        self.total_compute_s = 0.0
        self.total_frames = 0
        self.throughput: float | None = None    # audio-s per compute-s (EMA over backend calls)
        self.call_s: float | None = None        # seconds per backend call (EMA)

    # ----------------------------------------------------------------- jobs
    def start(self, slot: int, job_id: int, prompt: str, seed: int, seconds: float = 0.0,
              params: dict | None = None, priority: bool = True) -> Job:
        """Create the slot's new job (the backend encodes the prompt here). Does not end the old one.
        ``priority``: a DAW slot waits on it (a web stream's job: False)."""
        t0 = self.clock()
        start_for = getattr(self.backend, "start_for", None)
        if start_for is not None:
            stream = start_for(job_id, prompt, seed, params, seconds=seconds, priority=priority)
        else:                                   # a duck-typed backend of a test
            stream = self.backend.start(job_id, prompt, seed, params)
        dt = self.clock() - t0
        total = max(1, int(round(seconds * self.rate))) if seconds > 0 else 0   # 0 < seconds < ½ frame: one frame
        job = Job(job=job_id, slot=slot, prompt=prompt, seed=seed, seconds=seconds, stream=stream,
                  frames_total=total, next_chunk=self.first_chunk, compute_s=dt)
        return job

    def attach(self, job: Job) -> Job | None:
        """Make ``job`` the slot's current job; returns the job it replaces (still open)."""
        old = self.jobs.get(job.slot)
        self.jobs[job.slot] = job
        return old

    def end(self, job: Job) -> None:
        """Release a job's stream; remove it if it is still the slot's current job."""
        if self.jobs.get(job.slot) is job:
            del self.jobs[job.slot]
        job.done = True
        try:
            self.backend.end(job.stream)
        except Exception:  # noqa: BLE001 — the job is over either way; the fault is the backend's
            log.exception("backend %s: ending the stream of job %s failed", self.backend.name, job.job)

    def cancel(self, slot: int) -> Job | None:
        job = self.jobs.get(slot)
        if job is not None:
            self.end(job)
        return job

    def extra(self, job: Job, frames: int) -> np.ndarray:
        """Generate ``frames`` more of ``job`` outside the batch (crossfade material). ``[engine]``"""
        out = self._generate([job], frames, StepResult())
        if not out or out[0] is None:
            return None
        return out[0][:frames]

    # ----------------------------------------------------------------- planning
    def chunk_size(self, job: Job, buffered: int, free: int, active: int = 1) -> int:
        """Frames to generate for ``job`` now (0 = nothing), a power-of-two bucket.

        A slot below a quarter of its target grows its chunks by doubling — but no faster than
        the backend can serve every ``active`` slot before this one runs dry: a round of
        ``active`` chunks of ``n`` frames takes ``active × n / throughput`` seconds, which must
        stay under this slot's buffered time (with a margin).
        """
        want = self.target_frames - buffered
        if want <= 0 or free <= 0:
            return 0
        size = job.next_chunk
        if buffered >= self.target_frames // 4:  # safe margin: jump to full-size chunks
            size = self.max_chunk
        elif self.throughput and active > 1 and buffered > 0:
            cap = int(0.7 * buffered * self.throughput / active)
            size = min(size, _pow2_floor(max(cap, 1)))
        # a job's first chunk may be asked larger than max_chunk (a long crossfade must fit in it)
        top = max(self.max_chunk, job.next_chunk) if job.frames_out == 0 else self.max_chunk
        size = min(size, top, _pow2_floor(free))
        if size < self.first_chunk and free >= self.first_chunk:
            size = self.first_chunk
        g = max(1, int(self.backend.granularity))
        if g > 1:
            size = max(g, (size // g) * g)
        rem = job.remaining
        if rem is not None:
            size = min(size, rem)
        return max(0, size)

    def plan(self, buffered: dict[int, int], free: dict[int, int]) -> list[tuple[Job, int]]:
        """(job, frames) for every slot below target, earliest deadline first."""
        out = []
        live = [(s, j) for s, j in self.jobs.items() if not j.done and (j.remaining is None or j.remaining > 0)]
        active = sum(1 for s, _ in live if buffered.get(s, 0) < self.target_frames)
        ready = getattr(self.backend, "ready_frames", None)
        for slot, job in live:
            b = buffered.get(slot, 0)
            n = self.chunk_size(job, b, free.get(slot, 0), active)
            if n > 0 and ready is not None:
                have = ready(job.stream)          # a remote stream: only what has arrived (never wait for it)
                if have is not None and have < n:
                    n = _pow2_floor(have) if have >= 256 else 0
            if n > 0:
                out.append([b / self.rate, job.job, job, n])
        out.sort(key=lambda t: (t[0], t[1]))
        self._fit_round(out)
        return [(job, n) for _, _, job, n in out]

    def _fit_round(self, out: list) -> None:
        """Shrink the largest chunks of a round until the whole round (every planned chunk, at the
        recent throughput) takes at most 0.7 × the tightest buffer among the slots already
        sounding — so a slot that has just started is not starved by the others' full-size
        refills. ``out``: ``[buffered_s, job id, job, frames]``, edited in place."""
        if not self.throughput or len(out) < 2:
            return
        sounding = [b for b, _, job, _ in out if b > 0]
        if not sounding:
            return
        budget = 0.7 * min(sounding) * self.throughput * self.rate      # frames one round may hold
        g = max(1, int(self.backend.granularity))
        floor_n = max(g, self.first_chunk)
        total = sum(t[3] for t in out)
        while total > budget:
            big = max(range(len(out)), key=lambda k: out[k][3])
            n = out[big][3]
            half = max(floor_n, (n // 2 // g) * g)
            if half >= n:
                return                              # nothing left to shrink
            out[big][3] = half
            total -= n - half

    def estimate_s(self, frames: int) -> float:
        """Compute seconds ``frames`` of audio take at the recent throughput (0 while unknown). ``[engine]``"""
        return frames / self.rate / self.throughput if self.throughput else 0.0

    def next_deadline_s(self, buffered: dict[int, int]) -> float | None:
        """Seconds until the earliest slot drops below its target (for the engine's wait)."""
        best = None
        for slot, job in self.jobs.items():
            if job.done or (job.remaining is not None and job.remaining <= 0):
                continue
            d = (buffered.get(slot, 0) - self.target_frames) / self.rate
            best = d if best is None else min(best, d)
        return best

    # ----------------------------------------------------------------- generation
    def step(self, buffered: dict[int, int], free: dict[int, int], sink=None, yield_to=None,
             priority: set | None = None, defer=None, later_batch_s: float | None = None) -> StepResult:
        """Plan, batch by chunk size, generate; chunks come back in deadline order. ``[engine]``

        Batches run most urgent first (a batch's urgency is its earliest deadline). With
        ``sink``, each backend call's chunks are handed to ``sink(chunks)`` as soon as that call
        returns, so the slots closest to running dry are written before the rest is generated.

        ``priority``: the slots served before every other in this step whatever their deadlines
        (the daemon's ring slots, read by a DAW, before its web streams); the others are batched
        apart, after them. ``defer(seconds)`` is asked before each batch of the others with that
        batch's estimated compute time (frames ÷ the recent throughput); ``True`` skips the rest
        of the step's other slots (they are planned again next step), so they never make a
        ``priority`` slot late; ``later_batch_s`` cuts their batches to about that much compute
        each (at the recent throughput), so ``defer`` is asked often enough.

        ``yield_to(frames)`` lets the caller cut a step short: the slots it answers ``False`` for
        (given their buffered depth) are generated first, in batches of their own; before each
        batch of the others it is asked again, and ``True`` ends the step there (the rest is
        planned again next step). The daemon says yes while commands wait and the slot is safe
        for a while, so a burst of plays is not queued behind every other slot's refill.
        """
        res = StepResult()
        plan = self.plan(buffered, free)
        if not plan:
            return res
        # batches of one chunk size; the ``priority`` slots apart and ahead of the rest; with
        # ``yield_to``, the slots it would not wait for (too close to running dry) batched apart
        # and first within each of the two
        groups: dict[tuple[bool, bool, int], list[Job]] = {}
        for job, n in plan:                     # plan is deadline-ordered: so are groups and members
            later = priority is not None and job.slot not in priority
            can_wait = yield_to is not None and yield_to(buffered.get(job.slot, 0))
            groups.setdefault((later, can_wait, n), []).append(job)
        for (later, can_wait, n), jobs in sorted(groups.items(), key=lambda kv: kv[0][:2]):
            size = self.max_batch
            if later and later_batch_s and self.throughput:
                size = max(1, min(size, int(later_batch_s * self.throughput * self.rate / max(1, n))))
            for i in range(0, len(jobs), size):
                batch = jobs[i:i + size]
                if can_wait and yield_to(min(buffered.get(j.slot, 0) for j in batch)):
                    res.yielded = True
                    break
                if later and defer is not None and defer(self.estimate_s(n * len(batch))):
                    res.yielded = True          # the later groups are all deferrable: the step ends
                    break
                audio = self._generate(batch, n, res)
                if audio is None:
                    continue
                done = []
                for job, a in zip(batch, audio):
                    if a is None:
                        continue
                    a = a[:n] if job.remaining is not None else a
                    first = job.frames_out == 0
                    job.frames_out += a.shape[0]
                    job.chunks += 1
                    job.next_chunk = min(self.max_chunk, max(job.next_chunk, a.shape[0]) * 2)
                    last = job.remaining is not None and job.remaining <= 0
                    done.append(Chunk(job, a, first, last))
                res.chunks.extend(done)
                if sink is not None and done:
                    sink(done)
            if res.yielded:
                break
        order = {id(j): k for k, (j, _) in enumerate(plan)}
        res.chunks.sort(key=lambda c: order.get(id(c.job), 0))
        return res

    def _generate(self, batch: list[Job], n: int, res: StepResult):
        """One backend call with OOM splitting; failed jobs go to ``res.failures``."""
        t0 = self.clock()
        try:
            out = self.backend.generate([j.stream for j in batch], n)
            if len(out) != len(batch):
                raise BackendError(f"backend returned {len(out)} outputs for {len(batch)} streams")
            # device arrays: wait for the queued work, so it is metered (not just its launch) and
            # a fault it raises is this batch's, handled below
            devices = {a.device.id: a.device for a in out if type(a).__module__.startswith("cupy")}
            for dev in devices.values():
                dev.synchronize()
        except OutOfMemory as e:
            self._charge(batch, self.clock() - t0, res)
            if len(batch) == 1:
                res.failures.append(Failure(batch[0], "oom", str(e) or "out of memory"))
                return [None]
            half = len(batch) // 2
            a = self._generate(batch[:half], n, res) or [None] * half
            b = self._generate(batch[half:], n, res) or [None] * (len(batch) - half)
            return a + b
        except Exception as e:  # noqa: BLE001 — a backend error must not end the daemon
            self._charge(batch, self.clock() - t0, res)
            if len(batch) == 1:
                code = getattr(e, "code", "backend") if isinstance(e, BackendError) else "backend"
                res.failures.append(Failure(batch[0], code, f"{type(e).__name__}: {e}"))
                return [None]
            half = len(batch) // 2  # isolate the failing stream(s)
            a = self._generate(batch[:half], n, res) or [None] * half
            b = self._generate(batch[half:], n, res) or [None] * (len(batch) - half)
            return a + b
        dt = self.clock() - t0
        self._charge(batch, dt, res)
        if dt > 0:                              # audio-seconds per compute-second, recent average
            tp = n * len(batch) / self.rate / dt
            self.throughput = tp if self.throughput is None else 0.8 * self.throughput + 0.2 * tp
            self.call_s = dt if self.call_s is None else 0.8 * self.call_s + 0.2 * dt
        res.batch_sizes.append(len(batch))
        self.total_frames += n * len(batch)
        # device arrays (CuPy) stay on the device: the daemon stitches them there
        return [a if type(a).__module__.startswith("cupy") else np.asarray(a, dtype=np.float32) for a in out]

    def _charge(self, batch: list[Job], dt: float, res: StepResult) -> None:
        share = dt / max(1, len(batch))
        for j in batch:
            j.compute_s += share
        res.compute_s += dt
        self.total_compute_s += dt
