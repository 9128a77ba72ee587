"""Engine events and the bus that carries them to the control loop.

:class:`Event` is what the engine reports (``first_audio``, ``done``, ``error``, ``watchdog``).
:class:`EventBus` is the one way they travel: the ``[engine]`` thread (or any thread) calls
:meth:`EventBus.publish`, which only enqueues; every subscriber is called later on the asyncio
loop it subscribed from (``[control]``), in the order it subscribed — so the OSC server, the HTTP
service and the metrics each hear every event without one of them relaying for the others.
A *tap* (``Daemon(emit=…)``) is called on the publishing thread and must itself only enqueue.
"""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
from dataclasses import dataclass, field

log = logging.getLogger("wavebridge")


@dataclass
class Event:
    kind: str                         # first_audio | done | error | watchdog
    slot: int | str = -1             # a DAW slot's number, or a private (web) slot's name
    job: int = 0
    ms: float = 0.0
    code: str = ""
    message: str = ""
    reply_to: object = None
    extra: dict = field(default_factory=dict)


class EventBus:
    """Fan engine events out to subscribers on their loops. ``publish`` is thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._taps: list = []
        self._subs: dict = {}          # loop (or None) -> [callback, …]
        self._queues: dict = {}        # loop (or None) -> SimpleQueue of events not yet delivered

    def tap(self, fn) -> None:
        """Call ``fn(ev)`` on the publishing thread (``fn`` must only enqueue). ``[control]``"""
        with self._lock:
            self._taps = [*self._taps, fn]

    def subscribe(self, fn) -> None:
        """Call ``fn(ev)`` for every event, on the running loop of the caller. ``[control]``

        Called outside a running loop, the events wait until :meth:`drain` is called with no
        loop (tests and tools that deliver by hand).
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            subs = dict(self._subs)
            subs[loop] = [*subs.get(loop, ()), fn]
            self._subs = subs
            self._queues.setdefault(loop, queue.SimpleQueue())

    def unsubscribe(self, fn) -> None:
        """Stop calling ``fn``; a no-op if it was not subscribed. ``[control]``"""
        with self._lock:
            subs = {lp: [f for f in fns if f != fn] for lp, fns in self._subs.items()}
            self._subs = {lp: fns for lp, fns in subs.items() if fns}
            self._queues = {lp: q for lp, q in self._queues.items() if lp in self._subs}

    def publish(self, ev: Event) -> None:
        """Hand ``ev`` to every tap now and to every subscriber on its loop. Any thread; never blocks."""
        for fn in self._taps:
            try:
                fn(ev)
            except Exception:  # noqa: BLE001 — a broken tap must not cost the engine
                log.exception("event tap failed")
        for loop, q in list(self._queues.items()):
            q.put(ev)
            if loop is not None and not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(self.drain, loop)
                except RuntimeError:      # the loop closed between the check and the call
                    pass

    def drain(self, loop=None) -> None:
        """Deliver what is waiting for ``loop``'s subscribers (``None``: those that subscribed
        outside a loop). ``[control]``"""
        q = self._queues.get(loop)
        if q is None:
            return
        while True:
            try:
                ev = q.get_nowait()
            except queue.Empty:
                return
            for fn in self._subs.get(loop, ()):
                try:
                    fn(ev)
                except Exception:  # noqa: BLE001 — one subscriber's bug must not starve the others
                    log.exception("event subscriber failed")
