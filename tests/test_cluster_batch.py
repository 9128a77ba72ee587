"""Continuous batching across a replica's streams (#23, bridge/cluster/batch.py): streams waiting
together share one generate call, paced streams that start apart fall into step, batching gives
each stream exactly the samples it gets alone, a failing stream fails alone, and web streams are
not rendered early while a DAW stream is behind. No Ray: the batcher is the replica's loop."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from bridge.cluster.batch import Batcher
from engine import get_backend


class Fake:
    """A backend whose stream ``i`` is the ramp ``1000 * i + frame``; it records its batches."""

    sample_rate, channels, max_batch, batches_streams = 1000, 1, 64, True

    def __init__(self, fail=()):
        self.calls, self.fail = [], set(fail)
        self.pos = {}

    def generate(self, streams, frames):
        self.calls.append(sorted(streams))
        if self.fail & set(streams):
            raise RuntimeError(f"stream {sorted(self.fail & set(streams))[0]} broke")
        out = []
        for s in streams:
            p = self.pos.get(s, 0)
            out.append((1000 * s + np.arange(p, p + frames, dtype=np.float32))[:, None])
            self.pos[s] = p + frames
        return out


async def drain(bt, e, pace_s=0.0):
    got = []
    while (x := await bt.take(e)) is not None:
        got.append(x)
        await asyncio.sleep(pace_s)
    return np.concatenate(got) if got else np.zeros((0, 1), np.float32)


def test_streams_waiting_together_share_a_render_and_each_gets_its_own_frames():
    be = Fake()
    bt = Batcher(be)

    async def main():
        es = [bt.add(i, 100, 450, be.sample_rate, None) for i in (1, 2, 3)]
        return es, await asyncio.gather(*(drain(bt, e) for e in es))

    es, outs = asyncio.run(main())
    for i, x in zip((1, 2, 3), outs):
        assert np.array_equal(x[:, 0], 1000 * i + np.arange(450, dtype=np.float32))
    assert be.calls == [[1, 2, 3]] * 5           # 4 chunks of 100 and the last 50: all three at once
    assert (bt.batches, bt.chunks, bt.largest) == (5, 15, 3)


def test_streams_that_will_ask_within_a_chunk_are_rendered_with_the_waiting_one():
    import time

    be = Fake()
    bt = Batcher(be)

    async def main():
        now = time.monotonic()
        asks = bt.add(1, 100, 1000, be.sample_rate, 0.1)            # 100 ms chunks, 100 ms lead
        soon = bt.add(2, 100, 1000, be.sample_rate, 0.1)            # 150 ms given, 100 ms played:
        soon.t0, soon.made = now - 0.1, 150                          # asks again in ~50 ms, within a chunk
        be.pos[2] = 150
        later = bt.add(3, 100, 1000, be.sample_rate, 0.1)           # 400 ms given, 100 ms played:
        later.t0, later.made = now - 0.1, 400                        # asks again in ~200 ms: not yet
        be.pos[3] = 400
        await bt.take(asks)
        return soon, later

    soon, later = asyncio.run(main())
    assert be.calls == [[1, 2]]                  # the waiting stream and the one due within a chunk
    assert len(soon.kept) == 1 and soon.made == 250 and not later.kept
    assert np.array_equal(soon.kept[0][:, 0], 2000 + np.arange(150, 250, dtype=np.float32))


def test_a_failing_stream_fails_alone():
    be = Fake(fail={2})
    bt = Batcher(be)

    async def main():
        es = [bt.add(i, 100, 300, be.sample_rate, None) for i in (1, 2, 3)]
        return await asyncio.gather(*(drain(bt, e) for e in es), return_exceptions=True)

    ok1, bad, ok3 = asyncio.run(main())
    assert isinstance(bad, RuntimeError) and "stream 2" in str(bad)
    assert np.array_equal(ok1[:, 0], 1000 + np.arange(300, dtype=np.float32))
    assert np.array_equal(ok3[:, 0], 3000 + np.arange(300, dtype=np.float32))
    # the batch that broke is rendered stream by stream; the broken one is not asked again
    assert be.calls == [[1, 2, 3], [1], [2], [3], [1, 3], [1, 3]]


def test_a_stream_that_fails_while_rendered_early_gets_its_error_when_it_asks():
    be = Fake(fail={2})
    bt = Batcher(be)

    async def main():
        a = bt.add(1, 100, 300, be.sample_rate, 3.0)
        b = bt.add(2, 100, 300, be.sample_rate, 3.0)     # will ask soon: rendered early with a, and fails
        await bt.take(a)
        with pytest.raises(RuntimeError, match="stream 2"):
            await asyncio.wait_for(bt.take(b), 5)       # the error, not a wait for ever
        return await bt.take(a)

    x = asyncio.run(main())
    assert x is not None and be.calls[:3] == [[1, 2], [1], [2]]


def test_web_streams_are_not_rendered_early_while_a_daw_stream_is_behind():
    be = Fake()
    held = {"v": True}
    bt = Batcher(be, hold_back=lambda: held["v"])

    async def main():
        daw = bt.add(1, 100, 200, be.sample_rate, 3.0, priority=True)
        web = bt.add(2, 100, 200, be.sample_rate, 1.0, priority=False)
        await bt.take(daw)
        first = list(be.calls)
        held["v"] = False
        await bt.take(daw)
        return first, list(be.calls)

    first, after = asyncio.run(main())
    assert first == [[1]]                        # held back: the web stream waits its turn
    assert after == [[1], [1, 2]]                # not held: rendered early with the DAW stream


def test_a_batch_holds_at_most_max_batch_streams_the_waiting_first():
    be = Fake()
    bt = Batcher(be, max_batch=2)

    async def main():
        es = [bt.add(i, 100, 200, be.sample_rate, None) for i in (1, 2, 3)]
        return await asyncio.gather(*(drain(bt, e) for e in es))

    outs = asyncio.run(main())
    assert [len(x) for x in outs] == [200] * 3
    assert max(len(c) for c in be.calls) == 2 and bt.chunks == 6
    be1 = Fake()
    be1.batches_streams = False
    one = Batcher(be1)
    assert (one.max_batch, one.early) == (1, False)


def test_the_most_urgent_stream_is_rendered_first():
    be = Fake()
    be.batches_streams = False                   # one stream a call: the order is all there is
    bt = Batcher(be)

    async def main():
        ahead = bt.add(1, 100, 1000, be.sample_rate, 3.0)
        ahead.made = ahead.done = 500            # half a second given already
        be.pos[1] = 500
        new = bt.add(2, 100, 1000, be.sample_rate, 3.0)
        await asyncio.gather(bt.take(ahead), bt.take(new))

    asyncio.run(main())
    assert be.calls == [[2], [1]]                # the new stream's first chunk before the one ahead


def test_chunk_sizes_are_batched_apart():
    be = Fake()
    bt = Batcher(be)

    async def main():
        a = bt.add(1, 100, 200, be.sample_rate, None)
        b = bt.add(2, 50, 100, be.sample_rate, None)
        return await asyncio.gather(drain(bt, a), drain(bt, b))

    xa, xb = asyncio.run(main())
    assert len(xa) == 200 and len(xb) == 100
    assert all(len(c) == 1 for c in be.calls)    # 100- and 50-frame chunks never share a call


@pytest.fixture(scope="module")
def synth():
    b = get_backend("synth", pool_size=3, workers=1)
    b.warmup()
    return b


@pytest.mark.slow                # a synth render: seconds; left out of the mutation run
def test_batched_synth_streams_are_bit_exact_with_each_stream_alone(synth):
    prompts = [("deep house with a shaker", 1), ("celtic jig with fiddle", 2), ("ambient pads", 3)]
    n, k = 48000, 4800

    def alone(job, prompt, seed):
        s = synth.start(job, prompt, seed)
        try:
            return np.concatenate([synth.generate([s], k)[0] for _ in range(n // k)])
        finally:
            synth.end(s)

    ref = [alone(10 + i, p, seed) for i, (p, seed) in enumerate(prompts)]
    assert Batcher(synth).max_batch == 1 and not Batcher(synth).early     # the synth gains nothing
    bt = Batcher(synth, max_batch=8)

    async def main():
        ss = [synth.start(20 + i, p, seed) for i, (p, seed) in enumerate(prompts)]
        es = [bt.add(s, k, n, synth.sample_rate, None) for s in ss]
        try:
            return await asyncio.gather(*(drain(bt, e) for e in es))
        finally:
            for s in ss:
                synth.end(s)

    outs = asyncio.run(main())
    assert bt.largest == 3
    for x, r in zip(outs, ref):
        assert x.shape == r.shape and np.array_equal(x, r)
        assert np.abs(r).max() > 0.01            # music, not silence


@pytest.mark.slow                # builds and runs a tiny MusicGen: seconds; left out of the mutation run
def test_a_musicgen_replica_renders_its_streams_in_one_pass_each_as_alone(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tiny_musicgen import build_tiny_musicgen

    b = get_backend("musicgen", model=build_tiny_musicgen(tmp_path / "tiny"), device="cpu")
    try:
        k = 4 * b.granularity
        prompts = [("lofi piano beat", 7), ("fast drums", 8), ("slow strings", 9)]

        def alone(job, p, seed):
            s = b.start(job, p, seed)
            x = np.concatenate([b.generate([s], k)[0] for _ in range(3)])
            codes = b.stream_codes(s)
            b.end(s)
            return x, codes

        ref = [alone(10 + i, p, seed) for i, (p, seed) in enumerate(prompts)]
        bt = Batcher(b)
        assert bt.early and bt.max_batch > 1          # musicgen gains from a batch: it batches

        async def main():
            ss = [b.start(20 + i, p, seed) for i, (p, seed) in enumerate(prompts)]
            es = [bt.add(s, k, 3 * k, b.sample_rate, None) for s in ss]
            outs = await asyncio.gather(*(drain(bt, e) for e in es))
            codes = [b.stream_codes(s) for s in ss]
            for s in ss:
                b.end(s)
            return outs, codes

        outs, codes = asyncio.run(main())
        assert bt.largest == 3 and bt.batches == 3      # three chunks, each one pass for all three
        for (x, c), (rx, rc) in zip(zip(outs, codes), ref):
            assert np.array_equal(c, rc)                # the same tokens as the stream alone
            assert x.shape == rx.shape and np.isfinite(x).all()
    finally:
        b.close()
