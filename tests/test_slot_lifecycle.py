"""The slot lifecycle, end to end, in simulated time: a Hypothesis state machine drives a real
daemon core and listens like a host would.

The daemon is the real one (``Daemon``, its engine, scheduler, rings and slot machine) with its
engine turned by hand (``open(start_threads=False)``) and a clock the test owns. The backend is a
deterministic sine per job (frequency from the job id, amplitude ``A``), so what the host should
hear is known. The host is :class:`SimHost`: a ring reader written from the protocol that reads
one block per engine turn in simulated time, at 48, 44.1 or 32 kHz, and records everything.

Rules: play (endless or finite), stop with any fade, gain, xfade_ms, a backend failure, reader
attach at another rate, detach, and waiting. The oracle reads what the host heard:

* no sample step larger than the music's own (beyond the crossfade's own slope);
* never above the limiter's ceiling, never louder than the gains in effect allow (crossfade
  material goes through gain and limiter, the mix is limited again);
* a stop's fade never rises (a second, shorter stop bends it down continuously), is as long as
  asked and ends in silence;
* a new prompt is heard within 100 ms of its command, at its own pitch (the host's rate followed);
* every job ends in exactly one ``done`` or ``error``; no hung notes; no underrun while playing.
"""
from __future__ import annotations

import math
import mmap
import os
import secrets

import numpy as np
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from plugin_stub import protocol as P
from bridge.core.commands import Command
from bridge.core.daemon import Config, Daemon
from bridge.core.slotstate import FADING, DRAINING
from engine.backend import Backend, BackendError, Stream

A = 0.55                                  # every job's amplitude
FREQS = (200.0, 290.0, 420.0, 600.0)      # job k plays FREQS[k % 4]: consecutive jobs always differ
BLOCK = 256
CEILING = 0.97


class SineBackend(Backend):
    """Job ``k``: ``A·sin(2π f_k t + φ_k)`` from its first frame on; fails when told to."""

    name = "sine"
    sample_rate = 48000
    channels = 2
    max_batch = 16

    def start(self, job, prompt, seed, params=None):
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}),
                      state={"f": FREQS[job % 4], "phi": 0.37 * job, "fail": False})

    def generate(self, streams, frames):
        out = []
        for s in streams:
            if s.state["fail"]:
                raise BackendError(f"job {s.job} told to fail")
            t = np.arange(s.frames_done, s.frames_done + frames, dtype=np.float64) / self.sample_rate
            x = (A * np.sin(2 * np.pi * s.state["f"] * t + s.state["phi"])).astype(np.float32)
            s.frames_done += frames
            out.append(np.repeat(x[:, None], 2, axis=1))
        return out


class SimHost:
    """A host reading one slot's ring in simulated time (ring protocol v1, written from the spec)."""

    def __init__(self, name: str, rate: int, clock):
        self.clock = clock
        self.rate = rate
        fd = os.open(P.shm_path(name), os.O_RDWR)
        self.mm = mmap.mmap(fd, os.fstat(fd).st_size)
        os.close(fd)
        self.u64 = np.frombuffer(self.mm, dtype="<u8", count=P.DATA_OFFSET // 8)
        self.u32 = np.frombuffer(self.mm, dtype="<u4", count=P.DATA_OFFSET // 4)
        cap = int(self.u64[P.OFF_CAPACITY // 8])
        ch = int(self.u32[P.OFF_CHANNELS // 4])
        self.cap, self.ch = cap, ch
        self.data = np.frombuffer(self.mm, dtype=np.float32, count=cap * ch, offset=P.DATA_OFFSET).reshape(cap, ch)
        self.epoch = int(self.u64[P.OFF_EPOCH // 8])
        w = int(self.u64[P.OFF_WRITE_INDEX // 8])
        r = int(self.u64[P.OFF_READ_INDEX // 8])
        self.r = r if 0 <= w - r <= cap else w
        self.u64[P.OFF_READ_INDEX // 8] = self.r
        self.u32[P.OFF_READER_RATE // 4] = rate
        self.u32[P.OFF_READER_BLOCK // 4] = BLOCK
        self.u32[P.OFF_READER_PID // 4] = os.getpid()
        self.u64[P.OFF_READER_HEARTBEAT // 8] = clock()
        self.blocks: list[np.ndarray] = []
        self.ring_rate: list[int] = []      # the ring's rate for each block as read
        self.underruns = 0                  # frames zero-filled while the writer said playing

    def read(self) -> None:
        w = int(self.u64[P.OFF_WRITE_INDEX // 8])
        ep = int(self.u64[P.OFF_EPOCH // 8])
        if ep != self.epoch or w < self.r or w - self.r > self.cap:
            self.epoch = ep
            self.r = w
        k = min(BLOCK, w - self.r)
        out = np.zeros((BLOCK, self.ch), dtype=np.float32)
        idx = (np.arange(self.r, self.r + k) & (self.cap - 1))
        out[:k] = self.data[idx]
        if k < BLOCK and self.u32[P.OFF_FLAGS // 4] & P.FLAG_PLAYING:
            self.underruns += BLOCK - k
        self.r += k
        self.u64[P.OFF_READ_INDEX // 8] = self.r
        self.u64[P.OFF_READER_HEARTBEAT // 8] = self.clock()
        self.blocks.append(out[:, 0].copy())
        self.ring_rate.append(int(self.u32[P.OFF_SAMPLE_RATE // 4]))

    @property
    def heard(self) -> int:
        return len(self.blocks) * BLOCK

    def audio(self) -> np.ndarray:
        return np.concatenate(self.blocks) if self.blocks else np.zeros(0, np.float32)

    def close(self) -> None:
        del self.u64, self.u32, self.data
        self.mm.close()


def window_peaks(x: np.ndarray, win: int) -> np.ndarray:
    n = x.shape[0] // win
    return np.abs(x[:n * win]).reshape(n, win).max(axis=1)


def tone(x: np.ndarray, f: float, rate: int) -> float:
    """Amplitude of the ``f`` Hz component of ``x`` (Hann-windowed projection)."""
    n = x.shape[0]
    w = np.hanning(n)
    t = np.arange(n) / rate
    return float(2 * abs(np.sum(w * x * np.exp(-2j * np.pi * f * t))) / w.sum())


class SlotLifecycle(RuleBasedStateMachine):
    """One slot, one host, random commands; the oracle runs at teardown over what was heard."""

    @initialize()
    def start(self):
        self.now = 1_000_000_000
        self.name = "h" + secrets.token_hex(5)
        self.events = []
        cfg = Config(slot_names=[self.name], slots=1, target_s=0.5, first_chunk=1024, max_chunk=4096)
        self.d = Daemon(cfg, emit=self.events.append, backend=getattr(self, "backend", None) or SineBackend(),
                        clock_ns=lambda: self.now)
        self.d.open(start_threads=False)
        self.slot = self.d.slots[self.name]
        self.host: SimHost | None = None
        self.sessions: list[tuple[SimHost, list]] = []  # (host, log of (heard index, what, args, lifecycle))
        self.jobs: list[int] = []
        self.commands: list[tuple] = []     # (what, args, sim ns), every session's
        self.gain = 1.0
        self.gains = [(0, 1.0)]             # (sim ns, gain target) in order
        self.attach(48000)

    # ---------------------------------------------------------------- time
    def advance(self, seconds: float) -> None:
        rate = self.host.rate if self.host is not None else 48000
        for _ in range(max(1, int(round(seconds * rate / BLOCK)))):
            self.d.engine.turn(0)
            if self.host is not None:
                self.host.read()
            self.now += int(BLOCK * 1e9 / rate)

    def note(self, what: str, **args) -> None:
        self.commands.append((what, args, self.now))
        if self.host is not None:
            self.sessions[-1][1].append((self.host.heard, what, args, self.slot.sm.state, self.now))

    def submit(self, cmd: Command) -> int:
        job = self.d.submit(cmd)
        self.d.engine.turn(0)               # the engine takes it at once (commands are not the test)
        return job

    # ---------------------------------------------------------------- rules
    @rule(seconds=st.sampled_from([0.0, 0.0, 0.0, 0.08, 0.3, 0.7]))
    def play(self, seconds):
        k = len(self.jobs) + 1
        self.note("play", job=k, seconds=seconds)
        job = self.submit(Command("play", slot=self.name, prompt=f"tone {k}", seconds=seconds))
        assert job == k
        self.jobs.append(job)
        self.advance(0.005)

    @rule(fade=st.sampled_from([0.0, 0.01, 0.05, 0.3, 1.0, 2.5]))
    def stop(self, fade):
        if not self.slot.sm.busy:
            return
        self.note("stop", fade=fade)
        self.submit(Command("stop", slot=self.name, fade_s=fade))
        self.advance(0.005)

    @precondition(lambda self: self.slot.sm.state not in (FADING, DRAINING))
    @rule(value=st.sampled_from([0.25, 0.5, 1.0, 1.6, 2.5]))
    def gain_param(self, value):
        self.note("gain", value=value)
        self.gain = value
        self.gains.append((self.now, value))
        self.submit(Command("param", slot=self.name, name="gain", value=value))

    @rule(value=st.sampled_from([1.0, 10.0, 50.0, 200.0]))
    def xfade(self, value):
        self.submit(Command("param", slot=self.name, name="xfade_ms", value=value))

    @precondition(lambda self: self.slot.sm.job is not None)
    @rule()
    def backend_fails(self):
        self.note("fail")
        self.slot.sm.job.stream.state["fail"] = True
        self.advance(0.005)

    @precondition(lambda self: self.host is None)
    @rule(rate=st.sampled_from([48000, 44100, 32000]))
    def attach(self, rate):
        self.host = SimHost(self.name, rate, lambda: self.now)
        self.sessions.append((self.host, []))
        self.note("attach", rate=rate)
        self.advance(0.005)

    @precondition(lambda self: self.host is not None)
    @rule()
    def detach(self):
        self.note("detach")
        self.host = None
        self.advance(0.01)

    @rule(seconds=st.sampled_from([0.02, 0.1, 0.4, 1.0]))
    def wait(self, seconds):
        self.advance(seconds)

    # ---------------------------------------------------------------- always
    @invariant()
    def no_underrun_while_playing(self):
        for h, _ in self.sessions:
            assert h.underruns == 0, f"{h.underruns} frames of underrun while a job played"

    # ---------------------------------------------------------------- oracle
    def teardown(self):
        if not hasattr(self, "d"):
            return
        try:
            if self.host is None:
                self.attach(48000)
            if self.slot.sm.busy:
                self.note("stop", fade=0.05)
                self.submit(Command("stop", slot=self.name, fade_s=0.05))
            self.note("end")
            self.advance(1.2)
            self.check_jobs()
            assert not self.slot.sm.busy and not self.slot.ring.playing, "a note is left hanging"
            for h, log in self.sessions:
                self.check_session(h, log)
        finally:
            for h, _ in self.sessions:
                h.close()
            self.d.close(linger_s=0)

    def check_jobs(self):
        ends: dict[int, list[str]] = {}
        for ev in self.events:
            if ev.kind in ("done", "error") and ev.job:
                ends.setdefault(ev.job, []).append(ev.kind if ev.kind == "error" else ev.extra["reason"])
        for j in self.jobs:
            assert len(ends.get(j, [])) == 1, f"job {j} ended {ends.get(j, [])} (wants exactly one done or error)"

    def gain_bound(self, t_ns: int, since_ns: int | None = None) -> float:
        """The largest gain in effect at any time from ``since_ns`` (default: 1.5 s before ``t_ns``)."""
        since = t_ns - 1_500_000_000 if since_ns is None else min(since_ns, t_ns - 1_500_000_000)
        before = [v for t, v in self.gains if t < since]
        recent = [v for t, v in self.gains if since <= t <= t_ns]
        return max(recent + before[-1:])

    def check_session(self, h: SimHost, log: list):
        x = h.audio()
        rate = h.rate
        if x.size < 2:
            return
        assert np.isfinite(x).all()
        assert np.abs(x).max() <= CEILING + 1e-4, f"peak {np.abs(x).max():.3f} above the limiter's ceiling"
        # 1. steps: the music's own (a gained sine, rescaled by the crossfade's curves) plus the
        #    curves' own slope at the shortest crossfade (1 ms), never a cut
        g_max = max(v for _, v in self.gains)
        music = A * g_max * 2 * np.pi * max(FREQS) / rate     # the limiter's slope is ≤ 1: the input's
        allowed = 1.5 * music + 0.03
        d = np.abs(np.diff(x))
        k = int(d.argmax())
        assert d[k] <= allowed, f"a step of {d[k]:.3f} at heard frame {k} (allowed {allowed:.3f}); log {log}"
        # 2. level: never louder than the gains in effect allow (crossfade material included)
        win = rate // 100
        peaks = window_peaks(x, win)
        t0 = log[0][4] if log else self.now
        # a host joining a ring nobody read hears the buffer the writer kept full, from any time
        for i, p in enumerate(peaks):
            t = t0 + int((i + 1) * win * 1e9 / rate)       # the window's end
            stale = 0 if t - t0 < 1_500_000_000 else None
            bound = min(CEILING, math.sqrt(3) * A * self.gain_bound(t, stale)) + 0.02   # mid-crossfade retrigger: √3
            assert p <= bound, f"level {p:.3f} at heard {i * win} above {bound:.3f} (gains {self.gains}); log {log}"
        # 3. per command
        marks = [e for e in log]
        for n, (at, what, args, state, t_ns) in enumerate(marks):
            nxt = marks[n + 1][0] if n + 1 < len(marks) else x.shape[0]
            if what == "stop":
                # the fade multiplies what the ring holds: a gain ramp, a crossfade or a session's
                # stale buffer from the last 1.5 s may rise under it; check the fades over steady music
                steady = not any(e[1] in ("play", "gain", "attach") and t_ns - e[4] < 1_500_000_000
                                 for e in marks[:n])
                plays = [e for e in marks[:n] if e[1] == "play"]
                finite = bool(plays) and plays[-1][2]["seconds"] > 0     # may end before its fade does
                self.check_stop(x, rate, at, nxt, args["fade"], state, steady, finite)
            if what == "play":
                self.check_play(x, rate, at, nxt, args["job"], args["seconds"], h, log, n)
            if what == "attach" and state == "playing":
                job = self.slot_job_at(log, n)
                if job is not None:
                    self.check_pitch(x, rate, at + int(0.3 * rate), nxt, job, "after a host at another rate joined")

    def slot_job_at(self, log, n):
        """The endless job that should sound when ``log[n]`` happened (None if unsure)."""
        t = log[n][4]
        for what, args, t_ns in reversed([c for c in self.commands if c[2] < t]):
            if what == "play":
                return args["job"] if args["seconds"] == 0.0 else None
            if what in ("stop", "fail"):
                return None
        return None

    def check_stop(self, x, rate, at, nxt, fade, state, steady, finite):
        if state not in ("playing", "fading"):
            return
        win = rate // 100
        guard = 2 * BLOCK + rate // 100 + win
        span = int(max(fade, 0.001) * rate)
        lead = 2 * BLOCK + rate // 100        # the fade starts at the read head + the guard
        seg = x[at + lead:nxt]
        peaks = window_peaks(seg, win)
        if peaks.size < 3:
            return
        # over steady music the fade never rises (a shorter second stop bends it down from where it is)
        if steady:
            top = np.maximum.accumulate(peaks)
            i = int(np.argmax(peaks[1:] - 1.05 * top[:-1])) + 1
            assert peaks[i] <= 1.05 * top[i - 1] + 0.02, (
                f"level rose {top[i - 1]:.3f} → {peaks[i]:.3f} during a stop's fade ({fade} s), at +{i * win} frames")
        if nxt - at < span + guard + 6 * win:
            return                           # interrupted: the next command's check takes over
        quiet = np.nonzero(peaks > 0.01)[0]
        silent_at = (quiet[-1] + 1) * win + lead if quiet.size else 0
        assert silent_at <= span + guard + 2 * win, f"a {fade} s fade still sounds after {silent_at / rate:.3f} s"
        if state == "playing" and fade >= 0.05 and not finite:
            assert silent_at >= 0.85 * span, f"a {fade} s fade was silent after {silent_at / rate:.3f} s"

    def check_play(self, x, rate, at, nxt, job, seconds, h, log, n):
        f = FREQS[job % 4]
        heard_by = at + int(0.1 * rate)
        if nxt < heard_by or any(e[1] == "fail" and e[0] < heard_by for e in log[n + 1:]):
            return
        if h.ring_rate[min(len(h.ring_rate) - 1, heard_by // BLOCK)] != rate and seconds == 0.0:
            return                           # a rate switch is still under way (checked by pitch later)
        win = int(0.03 * rate)
        seg = x[at:heard_by]
        amps = [tone(seg[i:i + win], f, rate) for i in range(0, seg.shape[0] - win + 1, win // 3)]
        assert max(amps, default=0.0) > 0.04, (
            f"job {job} ({f} Hz) not heard within 100 ms of its play (tone {max(amps, default=0):.3f}); log {log}")
        if seconds == 0.0:
            self.check_pitch(x, rate, at + int(0.3 * rate), nxt, job, "after its play")

    def check_pitch(self, x, rate, start, nxt, job, when):
        """The job's own frequency within 2 % (zero crossings over 100 ms): a host at another
        rate hearing unresampled audio is 8 % off."""
        win = int(0.1 * rate)
        if nxt < start + win:
            return
        seg = x[start:start + win].astype(np.float64)
        if window_peaks(seg, win // 10).min() < 0.05:
            return                           # not one steady tone here
        f = FREQS[job % 4]
        z = np.nonzero(np.signbit(seg[:-1]) != np.signbit(seg[1:]))[0]
        zt = z + seg[z] / (seg[z] - seg[z + 1])                 # interpolated crossing positions
        got = (len(zt) - 1) / 2 / ((zt[-1] - zt[0]) / rate)
        assert abs(got / f - 1) < 0.02, f"job {job} should sound at {f} Hz {when} on a {rate} Hz host, heard {got:.1f} Hz"


SlotLifecycle.TestCase.settings = settings(
    max_examples=int(os.environ.get("WB_LIFECYCLE_EXAMPLES", "120")), stateful_step_count=40, deadline=None,
    derandomize=not os.environ.get("WB_LIFECYCLE_RANDOM"), database=None, report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.generate] + ([] if os.environ.get("WB_LIFECYCLE_NO_SHRINK") else [Phase.shrink]), suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestSlotLifecycle = SlotLifecycle.TestCase


# ---- the probes that found the bugs, as fixed scenarios (the same oracle judges them) --------------
def run_scenario(*steps):
    """Drive :class:`SlotLifecycle` through ``steps`` ((rule, kwargs) pairs); teardown runs the oracle."""
    m = SlotLifecycle()
    m.start()
    try:
        for name, kw in steps:
            getattr(m, name)(**kw)
        return m
    finally:
        m.teardown()


def test_a_play_during_a_long_stop_fade_is_heard_at_once():
    """``/wb/stop 1 3.0``, then ``/wb/play`` 0.3 s later: the new prompt replaces the fading audio
    at the read head (the oracle asks for it within 100 ms, crossfaded, no step)."""
    m = run_scenario(("play", {"seconds": 0.0}), ("wait", {"seconds": 1.0}), ("stop", {"fade": 2.5}),
                     ("wait", {"seconds": 0.3}), ("play", {"seconds": 0.0}), ("wait", {"seconds": 1.0}))
    reasons = [e.extra.get("reason") for e in m.events if e.kind == "done"]
    assert reasons[0] == "stopped"                       # the faded job ends, reported to its stop


def test_a_second_shorter_stop_bends_the_fade_down_without_a_jump():
    m = SlotLifecycle()
    m.start()
    try:
        m.play(seconds=0.0)
        m.wait(seconds=1.0)
        m.stop(fade=2.5)
        m.wait(seconds=1.0)
        m.stop(fade=1.0)
        m.wait(seconds=1.0)
        m.wait(seconds=0.4)
        x = m.host.audio()
        log = m.sessions[-1][1]
        s1, s2 = [e[0] for e in log if e[1] == "stop"]
        peaks = window_peaks(x[s1:], 480)
        assert np.all(np.diff(peaks[2:]) <= 0.02)       # never rises, before, at and after the second stop
        assert peaks[(s2 - s1) // 480 + 120] < 0.01     # silent ~1.2 s after the second stop (1 s fade + guard)
    finally:
        m.teardown()


def test_a_44k1_host_joining_a_playing_slot_hears_it_at_pitch():
    """A job started for a 48 kHz host; a 44.1 kHz host takes over: the slot switches rate with a
    fade (no step, no underrun) and the oracle finds the job's own frequency 300 ms later."""
    m = run_scenario(("play", {"seconds": 0.0}), ("wait", {"seconds": 1.0}), ("detach", {}),
                     ("attach", {"rate": 44100}), ("wait", {"seconds": 1.0}))
    assert m.slot.ring.sample_rate == 44100


def test_fast_retriggers_at_low_gain_stay_at_that_gain():
    """A retrigger 5 ms after a play at gain 0.25: the crossfade needs the first job's continuation
    (crossfade material), which must be as quiet as the rest — an equal-power mix of two tones
    peaks at √2 × their level."""
    m = run_scenario(("gain_param", {"value": 0.25}), ("xfade", {"value": 200.0}), ("play", {"seconds": 0.0}),
                     ("play", {"seconds": 0.0}), ("wait", {"seconds": 0.4}))
    assert np.abs(m.sessions[0][0].audio()).max() <= math.sqrt(2) * A * 0.25 + 0.01
    run_scenario(("gain_param", {"value": 0.25}), ("play", {"seconds": 0.0}),
                 ("play", {"seconds": 0.0}), ("play", {"seconds": 0.0}), ("play", {"seconds": 0.0}),
                 ("wait", {"seconds": 0.4}))


def test_hot_crossfades_are_limited():
    run_scenario(("gain_param", {"value": 2.5}), ("xfade", {"value": 200.0}), ("play", {"seconds": 0.0}),
                 ("wait", {"seconds": 0.4}), ("play", {"seconds": 0.0}), ("wait", {"seconds": 0.4}))


def test_two_readers_on_one_slot_are_reported():
    """Two plugin instances advancing one ring: the reader pid flips back and forth."""
    m = SlotLifecycle()
    m.start()
    try:
        m.play(seconds=0.0)
        for k in range(12):
            m.host.u32[P.OFF_READER_PID // 4] = 4000 + k % 2
            m.advance(0.02)
        st = m.d.status()[0]
        assert st["readers"] == 2 and m.d.errors_by_code.get("two_readers") == 1
        m.host.u32[P.OFF_READER_PID // 4] = 4000
    finally:
        m.teardown()


# ---- the same machine on the device path (tests/emulated_cupy.py: the kernels compiled for the CPU)
_EMULATED: dict = {}


class DeviceSineBackend(SineBackend):
    """The sine backend handing its chunks back as (emulated) CuPy arrays, as a GPU backend would."""

    device = "cuda"

    def generate(self, streams, frames):
        cp = _EMULATED["cp"]
        return [cp.asarray(a) for a in super().generate(streams, frames)]


class DeviceSlotLifecycle(SlotLifecycle):
    """Every write, splice, fade and resample goes through ``dsp.gpu``'s kernels."""

    @initialize()
    def start(self):
        import shutil
        import sys
        import tempfile

        from dsp import gpu
        from emulated_cupy import build_kernels, make_module

        if shutil.which("g++") is None:
            import pytest

            pytest.skip("needs g++")
        if "cp" not in _EMULATED:
            lib = build_kernels(gpu._SOURCE, tempfile.mkdtemp(prefix="wb_lifecycle_kernels"))
            _EMULATED["cp"] = make_module(lambda code: lib)
        self._saved = (sys.modules.get("cupy"), gpu._cp, gpu._available, gpu._kernels, gpu._registry)
        sys.modules["cupy"] = _EMULATED["cp"]
        gpu._cp, gpu._available, gpu._kernels, gpu._registry = None, None, None, {}
        self.backend = DeviceSineBackend()
        super().start()
        assert self.d.dsp_path == "cupy"

    def teardown(self):
        import sys

        from dsp import gpu

        try:
            super().teardown()
        finally:
            if hasattr(self, "_saved"):
                mod, gpu._cp, gpu._available, gpu._kernels, gpu._registry = self._saved
                if mod is None:
                    sys.modules.pop("cupy", None)
                else:
                    sys.modules["cupy"] = mod


DeviceSlotLifecycle.TestCase.settings = settings(
    SlotLifecycle.TestCase.settings, max_examples=int(os.environ.get("WB_LIFECYCLE_DEVICE_EXAMPLES", "15")))
TestDeviceSlotLifecycle = DeviceSlotLifecycle.TestCase
