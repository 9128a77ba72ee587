"""Polling for tests that watch another process (a daemon, a reader): one ``wait`` for all."""
from __future__ import annotations

import time


def wait(cond, timeout: float, step: float = 0.01) -> bool:
    """Poll ``cond`` until it is true or ``timeout`` seconds pass; the last answer of ``cond``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()
