"""Shared fixtures: unique ring names, a daemon process on a free port, OSC clients."""
from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from plugin_stub import protocol as P  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def private_ring_dir():
    """A private ring directory on tmpfs for the whole session (``$WAVEBRIDGE_SHM_DIR``, mode 0700).

    Every ring a test makes — in this process or in a child it spawns (``wavebridge serve``,
    jalv, Ardour inherit the variable) — lives there, never in the real /dev/shm, so a test run
    never meets the rings of a daemon running on this machine. Removed, with what is left in
    it, at the end.
    """
    old = os.environ.get(P.SHM_DIR_ENV)
    d = tempfile.mkdtemp(prefix="wavebridge-test-", dir="/dev/shm")
    os.chmod(d, 0o700)
    os.environ[P.SHM_DIR_ENV] = d
    try:
        yield d
    finally:
        if old is None:
            os.environ.pop(P.SHM_DIR_ENV, None)
        else:
            os.environ[P.SHM_DIR_ENV] = old
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def slot_name():
    """A ring name no daemon uses; the ring is removed afterwards if a test left it."""
    name = "t" + secrets.token_hex(6)
    yield name
    try:
        os.unlink(P.shm_path(name))
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
        try:
            path = P.shm_path(n)
            with open(path, "rb") as f:
                f.seek(40)
                pid = int.from_bytes(f.read(4), "little")
            if any(pid == p.proc.pid for p in procs):
                os.unlink(path)
        except (FileNotFoundError, OSError, P.RingError):
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
