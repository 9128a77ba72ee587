"""Host tempo changes reach the read head within a beat: a re-timed continuation of the playing
stream (``Performance.seek``, ``SynthBackend.continuation``) spliced in at the read head.

A real daemon core (in process, its own ring name), the embedded synth, and a host of the test's
own: transport reports as the plugin sends them (the host's beat at the ring's ``read_index``),
read in step with the audio the test consumes. No wall-clock timing is asserted: positions are
ring frames.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from bridge.core.commands import Command, HostTransport
from engine.hostsync import stream_frame
from engine.synth.perform import Performance
from engine.synth.backend import SynthBackend
from plugin_stub.reader import RingReader
from coredaemon import core_daemon, drain
from polling import wait

SR = 48000


# ----------------------------------------------------------------------------- Performance.seek
class Recorder:
    """An instrument that records (frame, what) instead of sounding."""

    quantum = 1

    def __init__(self):
        self.frame = 0
        self.log = []

    def setup(self, parts):
        pass

    def note_on(self, part, key, vel):
        self.log.append((self.frame, "on", part, key, vel))

    def note_off(self, part, key):
        self.log.append((self.frame, "off", part, key))

    def control(self, part, ctl):
        self.log.append((self.frame, "ctl", part))

    def set_brightness(self, b):
        pass

    def render(self, out):
        out[:] = 0.0
        self.frame += out.shape[0]


def _score(prompt="soul with rhodes, strings pad, bass and drums", seed=3):
    from engine.compose import compose

    return compose(prompt, seed=seed)


@pytest.mark.parametrize("beat", [13.0, 22.37])
def test_seek_plays_what_the_full_performance_plays_from_that_beat(beat):
    score = _score()
    full, sought = Recorder(), Recorder()
    a = Performance(score, full, SR)
    a.read(SR * 40)
    b = Performance(score, sought, SR)
    b.seek(beat)
    b.read(SR * 12)
    f0 = a.tempo.frame_at(beat)
    horizon = min(b.tempo.frame_at(beat + 16), SR * 11) - 1
    ons_full = [(round(f - f0), p, k, v) for f, w, p, k, *v in [e for e in full.log if e[1] == "on"]
                if f0 + 1 <= f <= f0 + horizon]
    ons_seek = [(f, p, k, v) for f, w, p, k, *v in [e for e in sought.log if e[1] == "on"] if 1 <= f <= horizon]
    assert ons_seek and ons_seek == ons_full             # every later note, on its frame
    # notes ringing across the seek point (not drum hits) are struck again at frame 0
    held = {(n.part, n.pitch) for i in range(int(beat // score.beats_per_bar) - 4, int(beat // score.beats_per_bar) + 1)
            if i >= 0 for n in score.bar(i)[0]
            if n.start < beat and n.start + n.dur - beat >= Performance.SEEK_MIN_LEFT and not score.parts[n.part].is_drums}
    struck = {(p, k) for f, w, p, k, *_ in sought.log if w == "on" and f == 0}
    assert held and held <= struck
    assert all(not score.parts[p].is_drums or any(n.start == beat for n in score.notes_between(beat, beat + 1e-6))
               for p, _ in struck)


def test_a_preroll_performs_the_seconds_before_and_drops_them():
    """``seek(beat, preroll=P)``: the notes of the P frames before ``beat`` are played (on their
    frames, in the dropped audio), and from frame 0 on everything is where a plain seek has it."""
    score = _score()
    beat, pre = 22.37, 6 * 4096
    plain, rolled = Recorder(), Recorder()
    a = Performance(score, plain, SR)
    a.seek(beat)
    a.read(SR * 6)
    b = Performance(score, rolled, SR)
    b.seek(beat, preroll=pre - 100)                      # rounded up to whole blocks
    out = b.read(SR * 6)
    assert out.shape == (SR * 6, 2) and b.frames_read == SR * 6
    later = lambda log, off: [(f - off, p, k) for f, w, p, k, *_ in log if w == "on" and f - off >= 1]
    assert later(rolled.log, pre) and later(rolled.log, pre) == later(plain.log, 0)
    # the preroll held the notes that start in it, drums too, on their frames
    b0 = beat - pre * score.bpm / (60.0 * SR)
    inside = [n for n in score.notes_between(b0 + 0.01, beat - 0.01) if n.dur > 0]
    assert any(score.parts[n.part].is_drums for n in inside)
    struck = [(round(f), p, k) for f, w, p, k, *_ in rolled.log if w == "on" and f < pre]
    for n in inside:
        f = round((n.start - b0) * 60.0 * SR / score.bpm)
        assert any(abs(g - f) <= 1 and p == n.part and k == n.pitch for g, p, k in struck), n


def test_a_continuation_crossfades_into_the_same_sound():
    """A continuation at the same tempo, spliced mid-beat with the daemon's crossfade, sounds
    like the stream it replaces: a slow pad keeps its level (a fresh instrument without the
    preroll re-attacked the pad from silence: about 20 dB down for half a second)."""
    from dsp.core import crossfade

    prompt = "ambient pad with strings, slow"
    b = SynthBackend(pool_size=3, workers=1)
    b.warmup()
    streams = []
    try:
        s = b.start(1, prompt, 1)
        streams.append(s)
        f = int(round(s.state.tempo.frame_at(16.37)))
        whole = b.generate([s], f + SR)[0]
        t = b.start(2, prompt, 1)
        streams.append(t)
        b.generate([t], f + 1)
        c = b.continuation(t, f, 3)
        streams.append(c)
        new = b.generate([c], SR)[0]
        xf = SR // 20
        spliced = np.concatenate([crossfade(whole[f:f + xf], new[:xf]), new[xf:]])
        env = lambda x: 10 * np.log10(np.mean(x.reshape(-1, SR // 50, 2).astype(np.float64) ** 2, axis=(1, 2)) + 1e-12)
        dev = env(spliced[:SR // 2]) - env(whole[f:f + SR // 2])
        assert dev.min() > -4.0 and dev.max() < 4.0, dev.round(1)
    finally:
        for st in streams:
            b.end(st)
        b.close()


def test_seek_only_before_anything_was_produced():
    p = Performance(_score(), Recorder(), SR)
    p.read(16)
    with pytest.raises(RuntimeError):
        p.seek(4.0)


def test_a_continuation_keeps_the_level_and_the_beat():
    b = SynthBackend(pool_size=2, workers=1)
    b.warmup()
    s = b.start(1, "house with four on the floor kick, bass and piano", 2)
    try:
        b.generate([s], SR * 6)
        f = SR * 3 + 1234
        c = b.continuation(s, f, 1)
        try:
            assert c.state.tempo.beat_at(0) == pytest.approx(s.state.tempo.beat_at(f))
            assert c.state.mix.gain_db == s.state.mix.gain_db
            new = b.generate([c], SR * 2)[0]
            # the same music from there: loudness within 1.5 dB of the full stream's same seconds
            r2 = SynthBackend(pool_size=1, workers=1)
            r2.warmup()
            t = r2.start(1, "house with four on the floor kick, bass and piano", 2)
            whole = r2.generate([t], f + SR * 2)[0][f:]
            r2.end(t)
            r2.close()
            db = lambda x: 10 * np.log10(np.mean(x[SR // 2:].astype(np.float64) ** 2) + 1e-20)
            assert abs(db(new) - db(whole)) < 1.5, (db(new), db(whole))
        finally:
            b.end(c)
    finally:
        b.end(s)
        b.close()


# ----------------------------------------------------------------------------- the daemon
class Host:
    """A transport of the test's own: beat ``beat0`` at ring frame ``r0``, then tempo changes at
    ring frames (the beat stays continuous)."""

    def __init__(self, bpm, r0):
        self.segs = [(r0, 0.0, bpm)]           # (ring frame, beat, bpm)

    def set_bpm(self, bpm, at):
        self.segs.append((at, self.beat_at(at), bpm))

    def locate(self, beats, at):
        """The playhead jumps ``beats`` on at ring frame ``at`` (same tempo)."""
        self.segs.append((at, self.beat_at(at) + beats, self.seg(at)[2]))

    def seg(self, f):
        return [s for s in self.segs if s[0] <= f][-1] if f >= self.segs[0][0] else self.segs[0]

    def beat_at(self, f):
        r, b, bpm = self.seg(f)
        return b + (f - r) * bpm / (60.0 * SR)

    def report(self, name, read_index):
        _, _, bpm = self.seg(read_index)
        beat = self.beat_at(read_index)
        bar, bar_beat = divmod(beat, 4.0)
        return Command("transport", slot=name, value=bpm, arrival_ns=time.monotonic_ns(),
                       transport=HostTransport(speed=1.0, bpm=bpm, beats_per_bar=4.0, bar=int(bar), bar_beat=bar_beat,
                                               beat=beat, read_index=int(read_index), host_frame=-1))


def wait_until(cond, timeout=10.0, what="condition"):
    assert wait(cond, timeout, step=0.002), f"{what} not reached"


@pytest.fixture
def daemon():
    yield from core_daemon("rt")


def _events(d):
    return drain(d)


def _audible_bpm(d, name, ring_frame):
    """The tempo the slot's ring holds at ``ring_frame``: the playing job's beat grid there."""
    slot = d.slots[name]
    job = slot.job
    origin = d.engine.hostlink.start_at[name]
    assert origin[0] == job.job
    grid = d.backend.beat_grid(job.stream)
    f = stream_frame(ring_frame, origin[1], slot.ring.sample_rate, d.backend.sample_rate)
    return grid.tempo.bpm_at(f), grid.tempo.beat_at(f)


def _run(d, host, change_at_s, change_bpm, total_s, block=1024, report_every=6000, change=None):
    """Consume the slot's audio block by block (waiting for the daemon rather than underrunning),
    sending the host's position as the plugin does; the host changes tempo after ``change_at_s``
    seconds of audio. Returns (audio, ring frame of the change)."""
    name = d.name
    r = RingReader(name, max_block=block).attach()
    r.read(block)
    host.segs = [(r.read_index, 0.0, host.segs[0][2])]
    d.submit(host.report(name, r.read_index))           # the host's position first, then the play
    d.submit(Command("play", slot=name, prompt="house with four on the floor kick, hats, bass and piano", seed=4))
    wait_until(lambda: r.playing and r.buffered() >= block, what="first audio")
    act = change or (lambda h, ri: h.set_bpm(change_bpm, ri))
    out, change = [], None
    next_report = 0
    t0 = time.monotonic()
    while len(out) * block < total_s * SR:
        lag = t0 + len(out) * block / SR - time.monotonic()     # a host plays in real time
        if lag > 0:
            time.sleep(lag)
        ri = r.read_index
        if change is None and len(out) * block >= change_at_s * SR:
            act(host, ri)
            change = ri
            next_report = 0
        if next_report <= 0:
            d.submit(host.report(name, ri))
            next_report = report_every
        wait_until(lambda: r.buffered() >= block, what="audio in the ring")
        out.append(r.read(block).copy())
        next_report -= block
    d.underruns = r.underrun_frames
    r.detach()
    return np.concatenate(out), change


def test_a_host_tempo_change_is_heard_from_the_next_beat(daemon):
    d = daemon
    host = Host(100.0, 0)
    audio, change = _run(d, host, 4.0, 140.0, 7.0)
    slot = d.slots[d.name]
    assert d.retimes == 1                                 # started at the host's tempo; one change
    from bridge.ops.metrics import Metrics

    assert "wavebridge_retimes_total 1.0" in Metrics(d).text().splitlines()   # and /metrics says so
    ev = _events(d)
    kinds = [(e.kind, e.job) for e in ev if e.kind in ("started", "first_audio", "done")]
    assert len({j for _, j in kinds}) == 1 and [k for k, _ in kinds].count("first_audio") == 1, kinds
    assert not [e for e in ev if e.kind == "error"]
    # within a beat of the splice point (guard + start-up after the report), the ring plays 140
    guard = d.engine.writer.guard(slot)
    by = change + guard + int(0.05 * SR) + int(60.0 / 100.0 * SR)
    read_end = slot.ring.read_index
    assert by < read_end
    # from the next beat after the splice the tempo is the host's (one beat may be played up
    # to 1.25× faster to catch the host's phase), and the host's exactly one beat later
    for f in np.linspace(by, read_end - 1, 24):
        bpm, beat = _audible_bpm(d, d.name, int(f))
        assert 140.0 / 1.01 <= bpm <= 140.0 * 1.25 * 1.01, (int(f), bpm)
    late = by + int(60.0 / 140.0 * 1.25 * SR)
    for f in np.linspace(late, read_end - 1, 24):
        assert _audible_bpm(d, d.name, int(f))[0] == pytest.approx(140.0, rel=1e-3)
    # and locked to the host's beat grid there (bars on the host's bars), within 10 ms
    f = read_end - SR // 2
    _, beat = _audible_bpm(d, d.name, f)
    hb = host.beat_at(f)
    err_beats = ((beat - hb + 2.0) % 4.0) - 2.0
    assert abs(err_beats) * 60.0 / 140.0 < 0.010, (beat, hb)
    # no click where the continuation was spliced in (the crossfade): no one-sample jump above
    # 20× the local median (and 0.05)
    splice = d.engine.hostlink.start_at[d.name][1]
    assert change < splice < change + guard + int(0.1 * SR)
    k = splice - (read_end - len(audio))
    for c in range(2):
        d1 = np.abs(np.diff(audio[:, c]))
        win = d1[k - 256:k + d.engine.writer.xfade_frames(slot) + 256]
        assert win.max() < max(0.05, 20 * np.median(d1[k - SR // 2:k + SR // 2])), (c, win.max())
    assert d.underruns == 0


def test_a_steady_host_never_restarts_the_stream(daemon):
    d = daemon
    host = Host(100.0, 0)
    _run(d, host, 99.0, 100.0, 4.0)
    assert d.retimes == 0


def test_a_relocated_host_gets_the_music_in_its_bars_at_once(daemon):
    """The host's playhead jumps 1.5 beats (a locate mid-bar): instead of holding a beat for up
    to a bar, the daemon restarts the music at the read head moved into the host's bar phase."""
    d = daemon
    host = Host(100.0, 0)
    audio, change = _run(d, host, 4.0, 100.0, 7.0, change=lambda h, ri: h.locate(1.5, ri))
    slot = d.slots[d.name]
    assert d.retimes == 1
    assert d.underruns == 0
    by = change + d.engine.writer.guard(slot) + int(0.05 * SR)
    for f in np.linspace(by, slot.ring.read_index - 1, 24):
        bpm, beat = _audible_bpm(d, d.name, int(f))
        off = (host.beat_at(f) - beat + 2.0) % 4.0 - 2.0
        assert abs(off) * 60.0 / 100.0 < 0.010, (int(f), beat, host.beat_at(f))   # in its bars
        assert bpm == pytest.approx(100.0, rel=0.01)


def _playing_with_host(d, host, seconds=1.5, block=1024):
    """Start the slot under ``host`` and consume ``seconds`` in real time; returns the reader."""
    name = d.name
    r = RingReader(name, max_block=block).attach()
    r.read(block)
    host.segs = [(r.read_index, 0.0, host.segs[0][2])]
    d.submit(host.report(name, r.read_index))
    d.submit(Command("play", slot=name, prompt="soul with rhodes, strings pad, bass and drums", seed=2))
    wait_until(lambda: r.playing and r.buffered() >= block, what="first audio")
    t0 = time.monotonic()
    for k in range(int(seconds * SR / block)):
        lag = t0 + k * block / SR - time.monotonic()
        if lag > 0:
            time.sleep(lag)
        r.read(block)
    return r


@pytest.mark.parametrize("then", ["stop", "play"])
def test_a_stop_or_a_play_right_after_a_retime_ends_the_job_once(daemon, then):
    """A stop or a new prompt applied while the re-timed continuation waits for its first chunk:
    the job is answered with exactly one /wb/done, and the slot does what was asked."""
    d = daemon
    host = Host(100.0, 0)
    r = _playing_with_host(d, host)
    job = d.slots[d.name].job.job
    host.set_bpm(150.0, r.read_index)
    d.submit(host.report(d.name, r.read_index))               # → a re-timed restart …
    if then == "stop":
        d.submit(Command("stop", slot=d.name, fade_s=0.05))   # … and at once a stop
    else:
        d.submit(Command("play", slot=d.name, prompt="ambient pads", seed=1))
    end = time.monotonic() + 3
    while time.monotonic() < end:
        r.read(min(r.buffered(), 1024) or 1)
        time.sleep(0.01)
    ev = _events(d)
    done = [e for e in ev if e.kind == "done" and e.job == job]
    assert len(done) == 1, [(e.kind, e.job, e.extra) for e in ev]
    assert d.retimes == 1
    assert not [e for e in ev if e.kind == "error"]
    slot = d.slots[d.name]
    if then == "stop":
        assert done[0].extra["reason"] == "stopped" and slot.job is None
    else:
        assert done[0].extra["reason"] == "replaced" and slot.job is not None and slot.job.prompt == "ambient pads"
        assert [e.kind for e in ev if e.job == slot.job.job].count("first_audio") == 1
    r.detach()
