"""A daemon core in process, for tests that play a slot and read its ring: one slot with a ring
name of the test's own, the embedded synth (or a backend given), events collected in a queue."""
from __future__ import annotations

import queue
import secrets

from bridge.core.daemon import Config, Daemon


def core_daemon(prefix: str, backend=None, target_s: float = 1.0):
    """Generator for a pytest fixture: ``yield from core_daemon("ch")``. The daemon has ``.name``
    (its slot's ring name) and ``.events`` (a queue of every event it emitted)."""
    if backend is None:
        from engine.synth.backend import SynthBackend

        backend = SynthBackend(pool_size=4, workers=1)
    events = queue.Queue()
    name = prefix + secrets.token_hex(5)
    d = Daemon(Config(slot_names=[name], slots=1, target_s=target_s), emit=events.put, backend=backend).open()
    d.name, d.events = name, events
    try:
        yield d
    finally:
        d.close(linger_s=0)


def drain(d) -> list:
    """The events the daemon emitted since the last call."""
    out = []
    while True:
        try:
            out.append(d.events.get_nowait())
        except queue.Empty:
            return out
