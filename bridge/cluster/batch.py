"""Continuous batching across a replica's streams: one ``backend.generate`` call renders the next
chunk of every stream that wants one now or soon.

A replica serves many paced streams at once; each asks for its next chunk when it is no more
than its lead ahead of real time, and those moments are spread over the chunk's length. Rendered
one by one, a batched model (musicgen: one forward pass for the whole batch) would pay a pass per
stream. :class:`Batcher` runs one render loop per replica instead: a render takes every stream
that is waiting for a chunk, plus every stream that will ask within one chunk (its next chunk is
rendered early and kept), so the streams fall into step and share the backend's passes. Streams
of one chunk size share a pass; a stream's last, shorter chunk goes with the others of its size.

Everything runs on the replica's event loop, and ``generate`` is called on it as before: the
backend is only ever touched by that one thread, and a stream's ``end`` can never run during a
render that holds it. A batch that raises is rendered again stream by stream, so the failure
stays with the stream that caused it. The samples are the ones each stream gets alone (each
stream's state is its own; tested).

Batching pays where one call for the batch costs less than its streams one by one (musicgen: a
decoder step for all of them). Where it does not (the synth renders a batch's streams in turn),
the batcher renders one stream a call and nothing early: measured on one replica of the CPU
synth, batching all of them kept 24 real-time streams, one a call 32."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass(eq=False)
class Entry:
    """One stream the batcher renders for: its backend stream, its chunk size and pacing."""

    stream: object
    frames: int                       # its chunk, in frames
    total: int                        # frames it will have in all
    rate: int
    lead_s: float | None              # None: not paced (as fast as it is taken)
    priority: bool = True
    done: int = 0                     # frames handed to the stream's caller
    made: int = 0                     # frames rendered (done + what is kept)
    kept: list = field(default_factory=list)
    waiter: asyncio.Future | None = None
    error: BaseException | None = None  # its render failed: raised to its caller, nothing more rendered
    t0: float = field(default_factory=time.monotonic)

    def deadline(self) -> float:
        """When the stream's listener runs out of what it has been given (for a new stream: now):
        the render loop serves the earliest deadline first, so a stream running its lead ahead
        never keeps a new one from its first chunk, and a whole-track render (not paced, far
        ahead) yields to the live streams."""
        return self.t0 + self.made / self.rate

    def next_frames(self) -> int:
        return min(self.frames, self.total - self.made)

    def soon(self, now: float, chunk_s: float) -> bool:
        """Will this stream ask for a chunk within ``chunk_s``? (It asks once it is no more than
        its lead ahead of real time.)"""
        if self.lead_s is None:
            return True
        ahead = self.made / self.rate - (now - self.t0)
        return ahead - self.lead_s < chunk_s


class Batcher:
    """The render loop of one replica (see the module doc). ``hold_back()`` tells it whether
    streams with ``priority=False`` are to wait (a DAW stream is behind): they are then neither
    rendered early nor, while they wait, asked for."""

    def __init__(self, backend, hold_back=lambda: False, max_batch: int | None = None, early: bool | None = None):
        self.backend = backend
        self.hold_back = hold_back
        gains = bool(getattr(backend, "batches_streams", False))
        #: streams in one generate call: the backend's ``max_batch`` where a batch is cheaper than
        #: its streams one by one, else 1 (the synth: a batch is its streams rendered in turn, and
        #: a stream would wait for the whole batch's renders before its chunk goes out)
        self.max_batch = max(1, int(max_batch if max_batch is not None
                                    else (getattr(backend, "max_batch", 64) if gains else 1)))
        #: render the streams that will ask within a chunk with the waiting ones
        self.early = gains if early is None else bool(early)
        self.entries: list[Entry] = []
        self.task: asyncio.Task | None = None
        self.batches = 0              # generate calls
        self.chunks = 0               # chunks rendered by them
        self.largest = 0              # the largest batch

    def add(self, stream, frames: int, total: int, rate: int, lead_s: float | None, priority: bool = True) -> Entry:
        e = Entry(stream, int(frames), int(total), int(rate), lead_s, priority)
        self.entries.append(e)
        return e

    def remove(self, e: Entry) -> None:
        if e in self.entries:
            self.entries.remove(e)
        if e.waiter is not None and not e.waiter.done():
            e.waiter.cancel()

    async def take(self, e: Entry):
        """The stream's next chunk (a ``(frames, channels)`` array), or ``None`` at its end."""
        if e.error is not None and not e.kept:
            raise e.error
        if e.done >= e.total:
            return None
        if not e.kept:
            e.waiter = asyncio.get_running_loop().create_future()
            if self.task is None or self.task.done():
                self.task = asyncio.ensure_future(self._run())
            await e.waiter
            e.waiter = None
        x = e.kept.pop(0)
        e.done += len(x)
        return x

    def _batch(self) -> list[Entry]:
        """The streams the next render serves: those of the chunk size of the most urgent waiting
        stream (:meth:`Entry.deadline`) that are waiting, or will ask within one chunk and have
        nothing kept; the waiting and the most urgent first, at most ``max_batch``."""
        waiting = sorted((e for e in self.entries if e.waiter is not None and not e.waiter.done() and not e.kept),
                         key=Entry.deadline)
        if not waiting:
            return []
        k = waiting[0].next_frames()
        now, held = time.monotonic(), self.hold_back()
        asked, out = set(waiting), []
        for e in self.entries:
            if e.kept or e.made >= e.total or e.next_frames() != k:
                continue
            if e in asked or (self.early and (e.priority or not held) and e.soon(now, k / e.rate)):
                out.append(e)
        out.sort(key=lambda e: (e not in asked, e.deadline()))     # the waiting first, the most urgent first
        return out[:self.max_batch]

    def _render(self, batch: list[Entry]) -> None:
        k = batch[0].next_frames()
        try:
            outs = self.backend.generate([e.stream for e in batch], k)
        except Exception as err:  # noqa: BLE001 — the failure stays with the stream that caused it
            if len(batch) == 1:
                self._fail(batch[0], err)
            else:                             # find that stream: the others go on
                for e in batch:
                    self._render([e])
            return
        self.batches += 1
        self.chunks += len(batch)
        self.largest = max(self.largest, len(batch))
        for e, x in zip(batch, outs):
            self._keep(e, x)

    @staticmethod
    def _fail(e: Entry, err: BaseException) -> None:
        e.error, e.made = err, e.total        # nothing more is rendered for it
        if e.waiter is not None and not e.waiter.done():
            e.waiter.set_exception(err)

    @staticmethod
    def _keep(e: Entry, x) -> None:
        e.kept.append(x)
        e.made += len(x)
        if e.waiter is not None and not e.waiter.done():
            e.waiter.set_result(None)

    async def _run(self) -> None:
        while True:
            batch = self._batch()
            if not batch:
                return
            self._render(batch)
            await asyncio.sleep(0)            # the streams just served hand their chunks on
