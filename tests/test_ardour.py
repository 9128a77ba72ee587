"""The stub in a real DAW: Ardour 7, headless (``ardour7-lua``), on Ardour's own dummy audio backend.

``tests/ardour_session.lua`` makes a session at 97 bpm in 3/4, puts the stub on a MIDI track (its
slot and OSC port set before it runs: the test's writer and OSC sink, never a daemon's), and
records the track's output on a second track while the transport rolls — a user's live bounce of
a soft synth. The session is saved, opened again by a second Ardour run, and bounced again.

What a studio engineer would check: Ardour lists the stub as an instrument; what Ardour recorded is
the ring's audio frame for frame, with no gap, no repeat and no underrun; the host's tempo and meter
reach the daemon's address as the host plays them; the session brings the plugin's settings back.
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from test_daw import OscSink
from test_lv2 import (BUILD, RATE, SignalWriter, _need, assert_contiguous, decode, free_slots, header,  # noqa: F401
                      lv2_env)

pytestmark = [pytest.mark.lv2, pytest.mark.timeout(240)]

LUA = Path(__file__).with_name("ardour_session.lua")
BPM, METER, SEED, SHIFT = 97.0, (3, 4), 4242, 37
SECONDS = 3


def _lv2_path() -> str:
    """The build, then the system's LV2 folders: lilv learns the plugin classes (lv2:InstrumentPlugin)
    from the LV2 specification bundles there, as it does in a user's DAW."""
    system = subprocess.run(["pkg-config", "--variable=lv2dir", "lv2"], capture_output=True, text=True).stdout.strip()
    dirs = [str(BUILD)] + [d for d in (system, "/usr/lib/lv2", "/usr/local/lib/lv2") if d and os.path.isdir(d)]
    return os.pathsep.join(dict.fromkeys(dirs))


def _ardour(env: dict, mode: str, session: Path, **extra: str) -> dict:
    """One ``ardour7-lua`` run of the driver; its SCAN / TAKE / CTL lines, parsed."""
    env = dict(env, WB_MODE=mode, WB_SESSION=str(session), WB_SECONDS=str(SECONDS), **extra)
    r = subprocess.run(["ardour7-lua", str(LUA)], env=env, capture_output=True, text=True, timeout=150)
    out = r.stdout
    if r.returncode != 0 or "DONE" not in out:
        raise AssertionError(f"ardour7-lua {mode}: rc {r.returncode}\n{out[-3000:]}\n{r.stderr[-2000:]}")
    got: dict = {"ctl": {}}
    for line in out.splitlines():
        if line.startswith("SCAN"):
            got["category"], got["instrument"] = line[5:].rsplit("|", 1)
        elif line.startswith("RECORDING"):
            assert line.split()[1] == "true", f"{mode}: Ardour is not recording the bounce track"
        elif line.startswith("TAKE"):
            got["take_frames"] = int(line.split()[1])
        elif line.startswith("CTL "):
            name, value = line[4:].rsplit("=", 1)
            got["ctl"][name] = float(value)
    return got


def _takes(session: Path) -> list[np.ndarray]:
    """The bounce track's recordings, in take order, as (n, 2) float32."""
    files = glob.glob(str(session / "interchange" / "*" / "audiofiles" / "*bounce*%L.wav"))
    takes = []
    for left in sorted(files, key=lambda f: int(re.search(r"Take(\d+)_", f).group(1))):
        lc, sr = sf.read(left, dtype="float32")
        rc, _ = sf.read(left.replace("%L.wav", "%R.wav"), dtype="float32")
        assert sr == RATE
        takes.append(np.stack([lc, rc], axis=1))
    return takes


@pytest.fixture(scope="module")
def ardour(lv2_env, tmp_path_factory):
    """Both Ardour runs (new session, then the saved one), a writer on a free slot, an OSC sink."""
    _need("ardour7-lua")
    (slot,) = free_slots(1)
    yield from _runs(lv2_env, slot, tmp_path_factory.mktemp("ardour"))


def _runs(base_env: dict, slot: int, tmp: Path):
    session = tmp / "session"
    sink = OscSink()
    writer = SignalWriter(slot, shift=SHIFT)
    env = dict(base_env, LV2_PATH=_lv2_path(), HOME=str(tmp), XDG_CONFIG_HOME=str(tmp / "config"),
               XDG_CACHE_HOME=str(tmp / "cache"), XDG_DATA_HOME=str(tmp / "data"))
    try:
        controls = f"Slot={slot};Daemon OSC port={sink.port};Seed={SEED};Sync to host=1;Play=0"
        new = _ardour(env, "new", session, WB_BPM=str(BPM), WB_METER=f"{METER[0]}/{METER[1]}", WB_CONTROLS=controls)
        ring_after_new = header(slot)
        loaded = _ardour(env, "load", session)
        yield {"slot": slot, "session": session, "new": new, "load": loaded, "sink": sink,
               "ring": header(slot), "ring_after_new": ring_after_new}
    finally:
        writer.close()
        sink.close()


def test_ardour_lists_the_stub_as_an_instrument(ardour):
    """Its plugin browser puts it with the instruments (lv2:InstrumentPlugin; MIDI in, audio out)."""
    assert ardour["new"]["category"] == "Instrument Plugin"
    assert ardour["new"]["instrument"] == "true"


def test_what_ardour_records_is_the_ring_frame_for_frame(ardour):
    """Both takes are the writer's signal (its shift: this slot's ring, channels in order), every
    frame once and in order, with no silent frame once it starts, for the whole take."""
    takes = _takes(ardour["session"])
    assert len(takes) == 2, "one take from each Ardour run"
    for take, run in zip(takes, ("new", "load")):
        rolled = ardour[run]["take_frames"]
        assert rolled >= SECONDS * RATE * 0.9, f"the transport rolled {rolled} frames"
        idx, interior = decode(take, SHIFT)
        assert interior == 0, f"{interior} silent frames inside the {run} take"
        assert_contiguous(idx)
        # the signal starts once the stub's worker has attached the ring; the take is recorded
        # until the stop, so most of it is the ring's audio
        assert len(idx) >= len(take) // 2, f"{run}: {len(idx)} of {len(take)} frames are the ring's audio"


def test_no_frame_is_lost_in_ardours_process_graph(ardour):
    """The ring's own counters: read at Ardour's rate and period, no underrun frame, and the
    reader moved on by at least what Ardour rolled (the engine runs between the takes too)."""
    ring, before = ardour["ring"], ardour["ring_after_new"]
    assert ring["underrun_frames"] == 0
    assert ring["reader_sample_rate"] == RATE and ring["reader_block_frames"] == 256
    assert ring["read_index"] - before["read_index"] >= ardour["load"]["take_frames"]
    for run in ("new", "load"):
        assert ardour[run]["ctl"]["Underrun frames"] == 0.0


def test_the_saved_session_brings_the_settings_back(ardour):
    """The second run opens the saved session: the stub is on its track with what was set."""
    new, loaded = ardour["new"]["ctl"], ardour["load"]["ctl"]
    for name in ("Slot", "Seed", "Daemon OSC port", "Sync to host", "Play", "Quantize", "Gain"):
        assert loaded[name] == new[name], name
    assert loaded["Slot"] == ardour["slot"] and loaded["Seed"] == SEED
    assert loaded["Daemon OSC port"] == ardour["sink"].port


def test_ardours_tempo_and_meter_reach_the_daemon_address(ardour):
    """While Ardour rolls, the stub forwards its position: 97 bpm, 3 beats a bar, beats advancing
    at 97 bpm over the host's frames; a stop is forwarded as speed 0. Play is off and no prompt is
    set, so the stub asks for nothing to be played."""
    sink = ardour["sink"]
    assert not sink.errors, sink.errors
    pos = [p for _, _, p in sink.messages("/wb/transport")]
    rolling = [p for p in pos if p[1] == 1.0]
    assert len(rolling) >= 4, f"{len(rolling)} rolling positions in two takes: {pos[:6]}"
    for s, speed, bpm, bpb, bar, bar_beat, read_index, host_frame in rolling:
        assert s == ardour["slot"] and bpm == pytest.approx(BPM) and bpb == float(METER[0])
        assert 0.0 <= bar_beat < METER[0] and bar >= 0
    # the ring frame each position was played from: -1 ("no ring") only until the stub's worker
    # has attached the slot's ring (a loaded session may roll first), then the ring's frames, in order
    takes, cur = [], []
    for p in pos:
        if p[1] == 1.0:
            cur.append(p[6])
        elif cur:
            takes.append(cur)
            cur = []
    takes += [cur] if cur else []
    assert len(takes) == 2, f"rolling positions in {len(takes)} runs, not 2"
    for reads in takes:
        attached = [r for r in reads if r >= 0]
        assert attached, f"no position carries a ring frame: {reads}"
        assert reads[len(reads) - len(attached):] == attached and set(reads[:len(reads) - len(attached)]) <= {-1}, reads
        assert attached == sorted(attached), reads
    # within one take: beats over frames is the tempo
    first_take = []
    for p in pos:
        if p[1] != 1.0:
            if first_take:
                break
            continue
        first_take.append(p)
    a, b = first_take[0], first_take[-1]
    frames = b[7] - a[7]
    assert frames > RATE, f"positions over {frames} host frames only"
    beats = (b[4] * METER[0] + b[5]) - (a[4] * METER[0] + a[5])
    assert beats == pytest.approx(frames * BPM / (60.0 * RATE), rel=0.02)
    assert any(p[1] == 0.0 for p in pos[pos.index(b):]), "the stop was not forwarded"
    assert not sink.messages("/wb/play"), "play is off: nothing may be asked for"
