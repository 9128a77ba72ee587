"""A remote stream resumed after its replica died is crossfaded in, not butted on (#23).

The cluster's resume is the synth's continuation: the same music in time, not the same samples.
A fake transport plays a 440 Hz tone and dies after 0.5 s; the resume (asked for from the frame the
buffer had, minus the crossfade's length) plays the same tone a quarter period off — a butt splice
there would click. What the engine reads is the old tone up to the seam, the new tone after it,
and between them a fade whose sample-to-sample steps stay those of a 440 Hz tone."""
from __future__ import annotations

import time

import numpy as np

from bridge.cluster import remote
from bridge.cluster.remote import SEAM_FRAMES, RemoteBackend

SR = 48000
F = 440.0


def tone(f0: int, n: int, phase: float) -> np.ndarray:
    t = (np.arange(f0, f0 + n) / SR).astype(np.float64)
    x = (0.5 * np.sin(2 * np.pi * F * t + phase)).astype(np.float32)
    return np.stack([x, x], axis=1)


class FakeCluster(RemoteBackend):
    def __init__(self, die_at: int):
        super().__init__("http://127.0.0.1:9")
        self.die_at = die_at
        self.calls: list[int] = []
        self.sample_rate, self.channels, self.chunk_frames = SR, 2, 4800

    def open_stream(self, prompt, seed, seconds, params, start_frame, priority=True):
        self.calls.append(start_frame)
        first = len(self.calls) == 1
        total = int(seconds * SR)

        def chunks():
            f = start_frame
            while f < total:
                if first and f >= self.die_at:
                    raise ConnectionError("replica died")
                n = min(self.chunk_frames, total - f)
                yield tone(f, n, 0.0 if first else np.pi / 2).astype("<f4").tobytes()
                f += n
        return chunks(), lambda: None


def test_a_resumed_stream_is_crossfaded_in_at_the_frame_it_lacked(monkeypatch):
    monkeypatch.setattr(remote, "RETRY_S", 0.01)
    b = FakeCluster(die_at=24000)
    s = b.start_for(1, "tone", 0, None, seconds=2.0)
    st = s.state
    assert _wait(lambda: st.seams == 1 and st.received >= 48000 + 24000, 5), (b.calls, st.seams, st.received)
    out = np.concatenate([b.generate([s], 4800)[0] for _ in range(12)])     # 1.2 s, as the engine reads
    b.end(s)
    assert b.calls == [0, 24000 - SEAM_FRAMES]           # resumed from the buffer's end minus the fade
    seam = 24000 - SEAM_FRAMES
    assert np.array_equal(out[:seam], tone(0, seam, 0.0))                                  # the old, untouched
    assert np.allclose(out[24000:36000], tone(24000, 12000, np.pi / 2), atol=1e-6)         # the new, in time
    step = np.abs(np.diff(out[:, 0])).max()
    tone_step = 0.5 * 2 * np.pi * F / SR                                                   # a 440 Hz tone's largest step
    assert step < 1.05 * tone_step, (step, tone_step)
    # the same resume butted on (no fade) is a click: the step at the seam is many times the tone's
    butt = np.concatenate([tone(0, 24000, 0.0), tone(24000, 100, np.pi / 2)])
    assert np.abs(np.diff(butt[:, 0])).max() > 5 * tone_step


def test_a_stream_read_down_to_nothing_resumes_without_a_fade(monkeypatch):
    """Nothing left in the buffer at the resume: nothing to fade from; the stream goes on at the
    frame it lacked."""
    monkeypatch.setattr(remote, "RETRY_S", 0.3)
    b = FakeCluster(die_at=9600)
    s = b.start_for(1, "tone", 0, None, seconds=1.0)
    st = s.state
    assert _wait(lambda: st.received >= 9600, 5)
    got = [b.generate([s], 4800)[0] for _ in range(2)]        # the engine takes all it had
    assert _wait(lambda: len(b.calls) == 2, 5)
    assert b.calls == [0, 9600] and st.seams == 0
    assert _wait(lambda: st.received >= 19200, 5)
    more = b.generate([s], 4800)[0]
    b.end(s)
    assert np.array_equal(np.concatenate(got), tone(0, 9600, 0.0))
    assert np.allclose(more, tone(9600, 4800, np.pi / 2), atol=1e-6)


def _wait(fn, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if fn():
            return True
        time.sleep(0.01)
    return bool(fn())


