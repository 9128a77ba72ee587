"""Shared fixtures: unique ring names, a daemon process on a free port, OSC clients."""
from __future__ import annotations

import os
import secrets
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture
def slot_name():
    """A ring name no daemon uses; the ring is removed afterwards if a test left it."""
    name = "t" + secrets.token_hex(6)
    yield name
    try:
        os.unlink(f"/dev/shm/wavebridge.{name}")
    except FileNotFoundError:
        pass


@pytest.fixture
def daemon_proc():
    """Start ``wavebridge serve`` processes on free ports; all are killed at teardown."""
    from bridge.ops.demo import DaemonProcess

    procs = []

    def start(*args, env=None):
        p = DaemonProcess(*args, env=env)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.kill()
    # remove rings a killed daemon may have left
    for n in range(1, 65):
        path = f"/dev/shm/wavebridge.{n}"
        try:
            with open(path, "rb") as f:
                f.seek(40)
                pid = int.from_bytes(f.read(4), "little")
            if any(pid == p.proc.pid for p in procs):
                os.unlink(path)
        except (FileNotFoundError, OSError):
            pass


@pytest.fixture
def osc_client():
    from bridge.control.osc import OscClient

    clients = []

    def make(host, port, timeout=3.0):
        c = OscClient(host, port, timeout=timeout)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()
