"""Chords steer a running slot: heard within a beat plus the splice guard, no click, the groove
goes on — measured from the audio an independent real-time reader takes out of the ring.

A real daemon core (in process, its own ring name) and the embedded synth. The reader plays in
real time (block by block, never faster than a host would), so the engine works as it does
under a DAW. Every position is a ring frame; no wall-clock time is asserted. The chord is found
in the audio by a chroma of our own (an FFT folded to pitch classes), not by asking the daemon.
"""
from __future__ import annotations

import queue
import secrets
import time

import mido
import numpy as np
import pytest

from bridge.control.midi import MidiMap, MidiMapper
from bridge.core.commands import Command, parse_osc
from bridge.core.daemon import Config, Daemon
from engine.backend import Backend
from engine.compose.chordread import parse_symbol
from engine.synth.backend import render_stream
from plugin_stub.reader import RingReader
from coredaemon import core_daemon, drain
from polling import wait

SR = 48000
BLOCK = 1024
PROMPT = "pop with piano chords, bass, a warm pad and drums in C major at 120 bpm"


@pytest.fixture
def daemon():
    yield from core_daemon("ch")


def _events(d):
    return drain(d)


def play_live(d, seconds, actions, prompt=PROMPT, seed=3):
    """Play the slot ``seconds`` in real time; ``actions``: ``[(at_s, fn(read_index))]``. Returns
    (audio, {at_s: frame of the take it acted at}, :class:`Took`)."""
    r = RingReader(d.name, max_block=BLOCK).attach()
    r.read(BLOCK)
    d.submit(Command("play", slot=d.name, prompt=prompt, seed=seed))
    assert wait(lambda: r.playing and r.buffered() >= BLOCK, 10, step=0.002), "no first audio"
    out, done = [], {}
    t0 = time.monotonic()
    todo = sorted(actions, key=lambda a: a[0])
    while len(out) * BLOCK < seconds * SR:
        lag = t0 + len(out) * BLOCK / SR - time.monotonic()
        if lag > 0:
            time.sleep(lag)
        while todo and len(out) * BLOCK >= todo[0][0] * SR:
            at, fn = todo.pop(0)
            done[at] = r.read_index
            fn(r.read_index)
        assert wait(lambda: r.buffered() >= BLOCK, 10, step=0.001), "the ring ran dry"
        out.append(r.read(BLOCK).copy())
    end = r.read_index
    start = end - len(out) * BLOCK
    took = Took(r.underrun_frames, start)
    r.detach()
    return np.concatenate(out), {k: v - start for k, v in done.items()}, took


class Took:
    """What the reader saw: its underruns, and the ring frame of the take's first frame."""

    def __init__(self, underrun_frames, start):
        self.underrun_frames, self.start = underrun_frames, start


def chroma(x):
    """Energy per pitch class (80 Hz – 2 kHz) of a mono window, summing to 1."""
    n = len(x)
    spec = np.abs(np.fft.rfft(x * np.hanning(n))) ** 2
    f = np.fft.rfftfreq(n, 1.0 / SR)
    m = (f > 80) & (f < 2000)
    pc = np.round(69 + 12 * np.log2(f[m] / 440.0)).astype(int) % 12
    c = np.bincount(pc, weights=spec[m], minlength=12)
    return c / max(c.sum(), 1e-12)


def share(audio, pcs, win=0.1, hop=0.025):
    """(window centres in frames, the share of the chroma on ``pcs``) over the whole take."""
    mono = audio.mean(axis=1)
    w, h = int(win * SR), int(hop * SR)
    centres, vals = [], []
    for a in range(0, len(mono) - w, h):
        centres.append(a + w // 2)
        vals.append(chroma(mono[a:a + w])[list(pcs)].sum())
    return np.array(centres), np.array(vals)


def heard_from(audio, pcs, after, level=None, hold_s=0.25):
    """The frame from which the chord's share of the chroma has changed: the first window after
    ``after`` whose share, and the median of the next ``hold_s``, reach halfway from the level
    before (the second before ``after``) to the level it settles at (the 0.75 s from 0.75 s
    after); ``level`` (if given) is a floor the settled share must reach. None: no clear change."""
    c, v = share(audio, pcs)
    before = np.median(v[(c > after - SR) & (c < after)])
    settled = v[(c > after + 0.75 * SR) & (c < after + 1.5 * SR)]
    if not len(settled):
        return None
    plateau = np.median(settled)
    if plateau - before < 0.25 or (level is not None and plateau < level):
        return None
    mid = before + 0.5 * (plateau - before)
    n = max(1, int(hold_s / 0.025))
    for k in np.nonzero(c > after)[0]:
        if v[k] >= mid and np.median(v[k:k + n]) >= mid:
            return int(c[k])
    return None


def onset_envelope(x):
    """Spectral flux above 3 kHz (hats, snare, attacks) in hops of 256 frames."""
    mono = x.mean(axis=1)
    hop, n = 256, 1024
    frames = np.lib.stride_tricks.sliding_window_view(mono, n)[::hop] * np.hanning(n)
    mag = np.abs(np.fft.rfft(frames, axis=1))[:, int(3000 * n / SR):]
    return np.maximum(np.diff(np.log1p(50 * mag), axis=0), 0).sum(axis=1)


def groove_lag(take, ref):
    """(best lag in hops within ±8, i.e. ±43 ms; the correlation at lag 0) of two takes' onset envelopes."""
    e1, e2 = onset_envelope(take), onset_envelope(ref)
    n = min(len(e1), len(e2))
    e1, e2 = e1[:n], e2[:n]
    corr = lambda lag: np.corrcoef(e1[20 + lag:n - 20 + lag], e2[20:n - 20])[0, 1]  # noqa: E731
    return max(range(-8, 9), key=corr), corr(0)


def no_click(audio, k, xf):
    for c in range(audio.shape[1]):
        d1 = np.abs(np.diff(audio[:, c]))
        win = d1[k - 256:k + xf + 256]
        assert win.max() < max(0.05, 20 * np.median(d1[k - SR // 2:k + SR // 2])), (c, win.max())


def test_each_chord_is_heard_from_the_next_beat_with_no_click_and_the_groove_goes_on(daemon):
    """Three chord changes, each far from what sounds before it (C major → F# → E → B♭m)."""
    d = daemon
    symbols = ["F#", "E", "Bbm"]
    times = [3.0, 5.0, 7.0]
    origin, splices = {}, []

    def change(k):
        def act(_ri):
            st = d.engine.hostlink.start_at[d.name][1]
            if k == 0:
                origin["frame"] = st                              # where the job's frame 0 is in the ring
            else:
                splices.append(st)                                # the previous change's splice
            cmd = parse_osc("/wb/chord", [1, symbols[k].lower()], 1)   # as it comes over OSC, for slot 1 …
            cmd.slot = d.name                                     # … which is the test's own ring here
            d.submit(cmd)
        return act

    audio, at, r = play_live(d, 9.0, [(t, change(k)) for k, t in enumerate(times)])
    splices.append(d.engine.hostlink.start_at[d.name][1])
    slot = d.slots[d.name]
    guard, xf = d.engine.writer.guard(slot), d.engine.writer.xfade_frames(slot)
    beat = 60.0 / 120.0 * SR
    assert r.underrun_frames == 0
    ev = _events(d)
    assert not [e for e in ev if e.kind == "error"], ev
    assert [e.kind for e in ev].count("first_audio") == 1
    ref = render_stream(PROMPT, 3, len(audio) + SR)
    o = origin["frame"] - r.start                                 # the take's frame of the job's frame 0
    ends = [at[t] for t in times[1:]] + [len(audio)]
    for k, sym in enumerate(symbols):
        chord = parse_symbol(sym)
        sent = at[times[k]]
        c, v = share(audio, chord.pcs)
        # before: the chord's tones are a small part of what sounds; after: nearly all of it
        assert np.median(v[(c > sent - SR) & (c < sent)]) < 0.35, sym
        heard = heard_from(audio, chord.pcs, sent, level=0.4)
        assert heard is not None, f"{sym} was never heard"
        # within one beat plus the splice guard and the crossfade (and half the analysis window)
        assert heard - sent <= beat + guard + xf + 0.05 * SR + 0.025 * SR, (sym, (heard - sent) / SR)
        assert np.median(v[(c > heard + SR // 4) & (c < ends[k])]) >= 0.45, sym
        # the splice: its crossfade ends on the beat, with no click
        splice = splices[k] - r.start
        assert sent < splice < heard, sym
        no_click(audio, splice, xf)
        # the groove goes on: the take's onsets are those of the same job never steered (the
        # stream is deterministic: render_stream is what the daemon played), on the same frames
        # — a continuation one hop (5 ms) early or late would show as a lag
        lag, corr = groove_lag(audio[heard + SR // 4:ends[k]], ref[heard + SR // 4 - o:ends[k] - o])
        assert lag == 0 and corr > 0.9, (sym, lag, corr)
    lag, corr = groove_lag(audio[SR:at[times[0]]], ref[SR - o:at[times[0]] - o])
    assert lag == 0 and corr > 0.99
    assert slot.chord == "Bbm" and d.engine.commands.harmony.changes == 3
    assert [s["chord"] for s in d.status()] == ["Bbm"]


def test_keys_on_the_harmony_channel_steer_the_slot_and_letting_go_gives_the_song_back(daemon):
    d = daemon
    m = MidiMapper(MidiMap.from_dict({"harmony": {"16": 1}}), 1)
    slot_cmds = []

    def keys(msgs):
        def send(_ri):
            for msg in msgs:
                for c in m.translate(msg, time.monotonic_ns()):
                    c.slot = d.name                           # slot 1 of the map is the test's own ring
                    slot_cmds.append(c)
                    d.submit(c)
        return send

    down = [mido.Message("note_on", channel=15, note=n, velocity=90) for n in (54, 58, 61, 66)]   # F# A# C# F#
    up = [mido.Message("note_off", channel=15, note=n) for n in (54, 58, 61, 66)]
    audio, at, r = play_live(d, 10.0, [(3.0, keys(down)), (6.5, keys(up))])
    assert r.underrun_frames == 0 and not [e for e in _events(d) if e.kind == "error"]
    assert [c.notes for c in slot_cmds][-1] == () and (54, 58, 61, 66) in [c.notes for c in slot_cmds]
    pcs = parse_symbol("F#").pcs
    slot = d.slots[d.name]
    guard, xf = d.engine.writer.guard(slot), d.engine.writer.xfade_frames(slot)
    beat = 0.5 * SR
    heard = heard_from(audio, pcs, at[3.0])
    # keys arrive one by one: the keyboard's chord settles (15 ms) before it is planned
    assert heard is not None and heard - at[3.0] <= beat + guard + xf + 0.09 * SR, heard
    c, v = share(audio, pcs)
    assert np.median(v[(c > heard + SR // 4) & (c < at[6.5])]) >= 0.55
    # all keys up: the composed progression (in C major) is back within a beat plus the guard
    back = at[6.5] + beat + guard + xf + 0.1 * SR
    assert np.median(v[c > back]) < 0.35
    assert slot.chord == "" and d.engine.commands.harmony.changes == 2


def test_a_held_chord_carries_into_a_new_prompt(daemon):
    d = daemon
    new = "lofi hip hop with dusty piano and a mellow bass"
    audio, at, r = play_live(d, 7.0, [
        (2.0, lambda ri: d.submit(Command("chord", slot=d.name, chord="Ebm7"))),
        (4.0, lambda ri: d.submit(Command("play", slot=d.name, prompt=new, seed=2)))])
    assert r.underrun_frames == 0 and not [e for e in _events(d) if e.kind == "error"]
    pcs = parse_symbol("Ebm7").pcs
    c, v = share(audio, pcs)
    assert np.median(v[(c > SR // 2) & (c < at[2.0])]) < 0.35         # C major: none of its notes
    assert np.median(v[(c > at[2.0] + SR) & (c < at[4.0])]) >= 0.55
    assert np.median(v[c > at[4.0] + SR]) >= 0.55                     # the new prompt, on the held chord
    assert d.slots[d.name].prompt == new


class ScorelessBackend(Backend):
    """A backend without a score (like a neural model): a quiet tone, no beat grid."""

    name = "scoreless"
    max_batch = 4

    def start(self, job, prompt, seed, params=None):
        from engine.backend import Stream
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}))

    def generate(self, streams, frames):
        out = []
        for s in streams:
            t = (s.frames_done + np.arange(frames)) / SR
            s.frames_done += frames
            x = (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
            out.append(np.stack([x, x], axis=1))
        return out


def test_a_backend_without_a_score_says_so_and_plays_on():
    events = queue.Queue()
    name = "cs" + secrets.token_hex(5)
    d = Daemon(Config(slot_names=[name], slots=1, target_s=0.5), emit=events.put, backend=ScorelessBackend()).open()
    try:
        d.name, d.events = name, events
        audio, at, r = play_live(d, 2.5, [(1.0, lambda ri: d.submit(Command("chord", slot=name, chord="Am")))],
                                 prompt="anything")
        err = [e for e in _events(d) if e.kind == "error"]
        assert [e.code for e in err] == ["unsupported"] and "/wb/chord" in err[0].message
        assert r.underrun_frames == 0 and np.abs(audio[-SR // 2:]).max() > 0.05     # still playing
    finally:
        d.close(linger_s=0)


def test_a_chord_for_an_idle_slot_waits_for_its_next_play(daemon):
    d = daemon
    d.submit(Command("chord", slot=d.name, chord="Bbmaj7"))
    assert wait(lambda: d.slots[d.name].chord == "Bbmaj7", 5)
    audio, at, r = play_live(d, 4.0, [])
    c, v = share(audio, parse_symbol("Bbmaj7").pcs)
    assert np.median(v[c > SR]) >= 0.55 and r.underrun_frames == 0
