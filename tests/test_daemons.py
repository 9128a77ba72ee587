"""Daemons beside each other and slots nobody (or somebody unusual) reads.

- a second daemon whose slots overlap a running one's refuses to start, naming its pid; one on
  disjoint slots starts;
- one fast in-process reader (a web stream's private slot, read as fast as generated) is not
  "two readers"; two real readers of one ring still are;
- a timed play on a slot nobody reads ends (``done``, the slot idle) instead of staying
  ``playing``.

Every ring here has a name of its own (``t<hex>…``): no test touches a real daemon's slots.
"""
from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from bridge.core.commands import Command
from bridge.core.daemon import Config, Daemon
from engine.backend import Backend, Stream
from plugin_stub import protocol as P
from plugin_stub.reader import RingReader
from polling import wait

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ToneBackend(Backend):
    """A 220 Hz tone per job, as fast as asked (the engine, not the backend, is under test)."""

    name = "tone"
    sample_rate = 48000
    channels = 2
    max_batch = 16

    def start(self, job, prompt, seed, params=None):
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}))

    def generate(self, streams, frames):
        out = []
        for s in streams:
            t = np.arange(s.frames_done, s.frames_done + frames) / self.sample_rate
            s.frames_done += frames
            x = (0.3 * np.sin(2 * np.pi * 220.0 * t)).astype(np.float32)
            out.append(np.repeat(x[:, None], 2, axis=1))
        return out


@pytest.fixture
def names():
    """A prefix for ring names no daemon uses; every ring under it is removed afterwards."""
    prefix = "t" + secrets.token_hex(4)
    yield prefix
    for f in os.listdir(P.shm_dir()):
        if f.startswith(f"wavebridge.{prefix}"):
            try:
                os.unlink(os.path.join(P.shm_dir(), f))
            except FileNotFoundError:
                pass


def _config(tmp_path, tag: str, slot_names: list[str]) -> str:
    path = tmp_path / f"{tag}.toml"
    listed = ", ".join(f'"{n}"' for n in slot_names)
    path.write_text(f"resume = false\n[engine]\nslots = {len(slot_names)}\nslot_names = [{listed}]\n")
    return str(path)


# ---- 1. a second daemon on overlapping slots ------------------------------------------------------
def test_a_second_daemon_on_overlapping_slots_refuses_to_start_naming_the_first(daemon_proc, names, tmp_path):
    first = [f"{names}a{k}" for k in range(1, 5)]
    a = daemon_proc("--config", _config(tmp_path, "a", first), "--metrics-port", "off")
    overlapping = first + [f"{names}b{k}" for k in range(1, 13)]       # 16 slots, 4 of them a's
    cmd = [sys.executable, "-m", "bridge.ops.cli", "serve", "--osc-port", "0", "--http", "off",
           "--metrics-port", "off", "--log-level", "WARNING", "--config", _config(tmp_path, "b", overlapping)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode != 0
    line = [ln for ln in out.stderr.splitlines() if ln.startswith("wavebridge:") and "served by" in ln]
    assert len(line) == 1, out.stderr
    assert f"served by wavebridge pid {a.proc.pid}" in line[0] and "disjoint slots" in line[0]
    assert all(n in line[0] for n in first) and f"{names}b1" not in line[0]
    assert "listening for OSC" not in out.stdout
    assert not any(os.path.exists(P.shm_path(n)) for n in overlapping[4:])   # it left nothing behind
    assert a.proc.poll() is None                                       # the first serves on
    c = daemon_proc("--config", _config(tmp_path, "c", [f"{names}c{k}" for k in range(1, 5)]),
                    "--metrics-port", "off")                           # disjoint: it starts
    assert c.terminate()[0] == 0 and a.terminate()[0] == 0


def test_refusal_names_numbered_slots_as_spans():
    from bridge.core.daemon import refuse_served

    with pytest.raises(P.RingError) as e:
        refuse_served(list(range(1, 17)), {1: 812, 2: 812, 3: 812, 4: 812, 7: 900})
    assert e.value.code == "ring_busy"
    assert e.value.message.startswith("slots 1-4 are served by wavebridge pid 812; slot 7 is served by "
                                      "wavebridge pid 900; pick disjoint slots")
    refuse_served([1, 2], {1: 0, 2: 0})                                # free slots: no refusal


# ---- 2. one fast reader is not two readers; two real readers are --------------------------------
class SimDaemon:
    """A daemon on :class:`ToneBackend` whose engine is turned by hand in simulated time."""

    def __init__(self, name: str):
        self.now = 1_000_000_000
        self.events = []
        cfg = Config(slot_names=[name], slots=1, target_s=1.0)
        self.d = Daemon(cfg, emit=self.events.append, backend=ToneBackend(), clock_ns=lambda: self.now)
        self.d.open(start_threads=False)

    def play(self, slot, seconds: float) -> int:
        job = self.d.submit(Command("play", slot=slot, prompt="tone", seconds=seconds))
        self.d.engine.turn(0)
        return job

    def tick(self, seconds: float) -> None:
        self.d.engine.turn(0)
        self.now += int(seconds * 1e9)

    def done(self, job: int) -> bool:
        return any(e.kind == "done" and e.job == job for e in self.events)


def test_one_reader_reading_a_private_slot_fast_is_not_two_readers(names, caplog):
    """A generate request's reader: as fast as its encoder takes it (here 4 × real time, in the
    window a speed test would have taken for two readers), 30 s of audio."""
    sim = SimDaemon(f"{names}d")
    slot = sim.d.open_private_slot(prefix=f"{names}w")
    reader = RingReader(slot.name, max_block=960).attach()
    try:
        job = sim.play(slot.name, 30.0)
        out = np.empty((8192, 2), dtype=np.float32)
        got, tick = 0, 0.01
        with caplog.at_level(logging.WARNING, logger="wavebridge"):
            while not sim.done(job) and got < 40 * 48000:
                budget = int(4 * 48000 * tick)                  # what the encoder takes per tick
                while budget > 0:
                    k = reader.read_into(out[:min(budget, 8192)])
                    if not k:
                        break
                    got, budget = got + k, budget - k
                sim.tick(tick)
        assert got >= 29 * 48000
        assert "two_readers" not in sim.d.errors_by_code
        assert not [r for r in caplog.records if "two readers" in r.getMessage()]
        assert sim.d.slots[slot.name].readers == 1
    finally:
        reader.detach()
        sim.d.close(linger_s=0)


def test_two_real_readers_of_one_ring_are_still_reported(names, caplog):
    """Two plugin instances on one slot, 512- and 128-frame blocks, their reads in either order
    (two audio threads): each publishes its own position, so read_index steps back and forth."""
    name = f"{names}d"
    sim = SimDaemon(name)
    a = RingReader(name, max_block=512, host_rate=48000).attach()
    b = RingReader(name, max_block=128, host_rate=48000).attach()
    rng = np.random.default_rng(7)
    try:
        sim.play(name, 0.0)
        with caplog.at_level(logging.WARNING, logger="wavebridge"):
            for k in range(4 * 48000 // 128):                   # 4 s of audio, one 128-frame period a tick
                readers = [(b, 128)] + ([(a, 512)] if k % 4 == 0 else [])
                for r, n in (readers if rng.random() < 0.5 else readers[::-1]):
                    r.read(n)
                sim.tick(128 / 48000)
        assert sim.d.errors_by_code.get("two_readers") == 1
        assert sim.d.status()[0]["readers"] == 2
        assert [r for r in caplog.records if "two readers" in r.getMessage()]
    finally:
        a.detach()
        b.detach()
        sim.d.close(linger_s=0)


# ---- 3. a timed play on a slot nobody reads ends -------------------------------------------------
def test_a_short_play_on_a_slot_nobody_reads_ends(names):
    """``/wb/play slot prompt 2.0`` with no plugin on the slot: the writer's void clock plays the
    ring out at its rate, so the job is generated in its time and ends — ``done``, the slot idle.
    An endless play there fills the ring and stays playing (nobody frees room: ``read_index`` is
    the reader's alone)."""
    events = []
    name = f"{names}u"
    d = Daemon(Config(slot_names=[name], slots=1), emit=events.append, backend=ToneBackend()).open()
    try:
        job = d.submit(Command("play", slot=name, prompt="tone", seconds=2.0))
        assert wait(lambda: any(e.kind == "first_audio" and e.job == job for e in events), 10)
        assert wait(lambda: any(e.kind == "done" and e.job == job for e in events), 30)
        assert [e.extra.get("reason") for e in events if e.kind == "done" and e.job == job] == ["finished"]
        assert wait(lambda: d.status()[0]["state"] == "idle", 5)
        ring = d.slots[name].ring
        assert ring.write_index >= 2 * 48000 and not ring.playing
        # an endless play into the void fills the ring (from the real read_index) and stays playing
        job2 = d.submit(Command("play", slot=name, prompt="tone", seconds=0.0))
        assert wait(lambda: any(e.kind == "first_audio" and e.job == job2 for e in events), 10)
        assert wait(lambda: ring.buffered() >= ring.capacity - ring.capacity // 8, 30)
        assert ring.buffered() <= ring.capacity and ring.read_index == 0
        assert d.status()[0]["state"] == "playing" and ring.playing
        assert not any(e.kind == "done" and e.job == job2 for e in events)
    finally:
        d.close(linger_s=0)


def test_timed_plays_into_the_void_never_store_read_index(names):
    """The writer never stores ``read_index`` (ring protocol, writer rule 9): a timed play longer
    than the ring on a slot nobody reads is made until the ring is full, ends by the writer's void
    clock in about its length (``done``, reason finished, ``playing`` cleared, idle) and bumps the
    ring's ``epoch``; the next timed play starts on an emptied ring and ends too. Sampled from a
    read-only mapping all along, ``read_index`` (and the other reader fields) never move."""
    events = []
    name = f"{names}v"
    d = Daemon(Config(slot_names=[name], slots=1), emit=events.append, backend=ToneBackend()).open()
    fd, _ = P.open_segment(P.shm_path(name), writable=False, mode=False)
    seen: set[bytes] = set()
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            seen.add(os.pread(fd, 24, P.OFF_READ_INDEX))     # read_index, underrun_frames, reader heartbeat
            time.sleep(0.002)

    t = threading.Thread(target=sample, daemon=True)
    try:
        ring = d.slots[name].ring
        before = os.pread(fd, 24, P.OFF_READ_INDEX)
        t.start()
        seconds = 1.5 * ring.capacity / 48000                  # longer than the ring holds
        e0 = ring.epoch
        job = d.submit(Command("play", slot=name, prompt="tone", seconds=seconds))
        assert wait(lambda: any(e.kind == "first_audio" and e.job == job for e in events), 10)
        t0 = time.monotonic()
        assert wait(lambda: any(e.kind == "done" and e.job == job for e in events), 30)
        took = time.monotonic() - t0
        assert [e.extra.get("reason") for e in events if e.kind == "done" and e.job == job] == ["finished"]
        assert seconds - 0.5 < took < seconds + 3.0          # played out in about its length, not at once
        assert wait(lambda: d.status()[0]["state"] == "idle", 5)
        assert not ring.playing and ring.epoch != e0
        assert ring.capacity - ring.capacity // 8 <= ring.write_index <= ring.capacity   # full, never past it
        # the next timed play on the slot starts on an emptied ring and ends as well
        e1 = ring.epoch
        job2 = d.submit(Command("play", slot=name, prompt="tone", seconds=1.0))
        assert wait(lambda: any(e.kind == "done" and e.job == job2 for e in events), 30)
        assert [e.extra.get("reason") for e in events if e.kind == "done" and e.job == job2] == ["finished"]
        assert wait(lambda: d.status()[0]["state"] == "idle", 5) and ring.epoch != e1
    finally:
        stop.set()
        t.join(2)
        d.close(linger_s=0)
        os.close(fd)
    assert seen == {before} and int.from_bytes(before[:8], "little") == 0


def test_the_start_ups_objects_are_frozen_out_of_the_collector(names):
    """A full collection of the start-up's objects held the GIL for 40–50 ms and landed on prompt
    changes: the daemon collects once when it opens and freezes what is left."""
    import gc

    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    sim = SimDaemon(f"{names}g")
    try:
        assert gc.get_freeze_count() > 0
    finally:
        sim.d.close(linger_s=0)
        gc.unfreeze()
