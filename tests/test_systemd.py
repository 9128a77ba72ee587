"""systemd: the notify protocol from a real `wavebridge serve`, the engine watchdog, the unit file."""
from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from bridge.ops.systemd import Notifier, Watchdog, interrupted_jobs, render_unit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class NotifySocket:
    """A datagram socket standing in for systemd's notify socket (path or abstract)."""

    def __init__(self, tmp_path=None, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = "wbtest-notify-" + secrets.token_hex(6)
            self.sock.bind("\0" + name)
            self.env = "@" + name
        else:
            path = str(tmp_path / "notify.sock")
            self.sock.bind(path)
            self.env = path
        self.sock.settimeout(0.2)
        self.messages: list[dict] = []

    def read(self, timeout=0.2) -> list[dict]:
        end = time.monotonic() + timeout
        got = []
        while time.monotonic() < end:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            fields = dict(line.split("=", 1) for line in data.decode().split("\n") if "=" in line)
            got.append(fields)
        self.messages += got
        return got

    def wait_for(self, key, value=None, timeout=10.0) -> dict:
        end = time.monotonic() + timeout
        for m in self.messages:
            if key in m and (value is None or m[key] == value):
                self.messages.remove(m)
                return m
        while time.monotonic() < end:
            for m in self.read(0.1):
                if key in m and (value is None or m[key] == value):
                    self.messages.remove(m)
                    return m
        raise AssertionError(f"no {key}={value} within {timeout} s; got {self.messages}")

    def close(self):
        self.sock.close()


# ------------------------------------------------------------------ the protocol
@pytest.mark.parametrize("abstract", [False, True])
def test_notifier_sends_datagrams_to_path_and_abstract_sockets(tmp_path, abstract):
    ns = NotifySocket(tmp_path, abstract)
    try:
        n = Notifier({"NOTIFY_SOCKET": ns.env, "WATCHDOG_USEC": "3000000"})
        assert n.enabled and n.watchdog_interval_s == pytest.approx(1.5)
        assert n.ready("all good")
        m = ns.wait_for("READY", "1", 2)
        assert m["STATUS"] == "all good"
        n.status("line one\nline two")                 # one line, always
        assert ns.wait_for("STATUS")["STATUS"] == "line one line two"
        n.stopping()
        ns.wait_for("STOPPING", "1", 2)
        n.reloading()
        assert int(ns.wait_for("RELOADING", "1", 2)["MONOTONIC_USEC"]) > 0
        n.close()
    finally:
        ns.close()


def test_without_notify_socket_nothing_is_sent_and_nothing_fails(tmp_path):
    n = Notifier({})
    assert not n.enabled and n.watchdog_interval_s == 0
    assert n.ready() is False and n.notify("WATCHDOG=1") is False
    gone = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    assert gone.ready() is False                        # warns once, never raises
    assert Notifier({"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"}).watchdog_usec == 0
    assert Notifier({"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "1000000",
                     "WATCHDOG_PID": str(os.getpid())}).watchdog_usec == 1_000_000


class FakeEngine:
    def __init__(self):
        self.alive_ns = time.monotonic_ns()
        self.alive = True

    def is_alive(self):
        return self.alive


def test_watchdog_pings_only_while_the_engine_loop_is_fresh(tmp_path):
    ns = NotifySocket(tmp_path)
    try:
        n = Notifier({"NOTIFY_SOCKET": ns.env, "WATCHDOG_USEC": "2000000"})
        eng = FakeEngine()
        wd = Watchdog(n, eng, summary=lambda: "2/8 slots playing")
        assert wd.interval_s == 1.0 and wd.stale_s == 1.0
        now = time.monotonic_ns()
        eng.alive_ns = now - 100_000_000
        assert wd.tick(now) is True
        m = ns.wait_for("WATCHDOG", "1", 2)
        assert m["STATUS"] == "2/8 slots playing"
        eng.alive_ns = now - 3_000_000_000                # stuck for 3 s
        assert wd.tick(now) is False
        got = ns.read(0.3)
        assert all("WATCHDOG" not in g for g in got)
        assert any("stalled" in g.get("STATUS", "") for g in got)
        eng.alive_ns = now
        eng.alive = False                                 # the thread died
        assert wd.tick(now) is False
        assert all("WATCHDOG" not in g for g in ns.read(0.3))
        assert wd.pings == 1 and wd.withheld == 2
    finally:
        ns.close()


def test_a_burst_of_answered_probes_pings_once(tmp_path):
    """A socket read again after a stall answers every probe queued meanwhile at once: that is
    one proof, not a dozen datagrams that would overflow the notify queue (10 deep)."""
    class Probe:
        answered_ns = 0
        on_answer = None

        def send(self):
            pass

        def close(self):
            pass

    ns = NotifySocket(tmp_path)
    try:
        n = Notifier({"NOTIFY_SOCKET": ns.env, "WATCHDOG_USEC": "400000"})
        eng = FakeEngine()
        wd = Watchdog(n, eng, summary=lambda: "ok", probe=Probe())
        now = time.monotonic_ns()
        eng.alive_ns = now
        for i in range(12):                               # 12 pongs within a millisecond
            wd.probe.answered_ns = now + i * 50_000
            wd.probe.on_answer(now + i * 50_000)
        assert wd.proofs == 12 and wd.pings == 1
        later = now + 60_000_000                          # a quarter interval (50 ms) on
        eng.alive_ns = later
        wd.probe.answered_ns = later
        wd.probe.on_answer(later)
        assert wd.pings == 2
        got = ns.read(0.3)
        assert sum(g.get("WATCHDOG") == "1" for g in got) == 2
        assert got[0]["STATUS"] == "ok"
    finally:
        ns.close()


def test_a_stuck_engine_thread_stops_the_pings(tmp_path):
    """A real Daemon whose backend hangs inside generate(): the control loop lives, pings stop."""
    from bridge.core.commands import Command
    from bridge.core.daemon import Config, Daemon
    from engine.synth.backend import SynthBackend

    release = threading.Event()

    class Hang(SynthBackend):
        def generate(self, streams, frames):
            if any("hang" in s.prompt for s in streams):
                release.wait(30)
            return super().generate(streams, frames)

    ns = NotifySocket(tmp_path)
    names = ["s" + secrets.token_hex(5)]
    d = Daemon(Config(slot_names=names, slots=1, target_s=0.3), backend=Hang()).open()
    try:
        n = Notifier({"NOTIFY_SOCKET": ns.env, "WATCHDOG_USEC": "600000"})     # ping every 0.3 s

        async def main():
            wd = Watchdog(n, d.engine, summary=lambda: "ok").start()
            await asyncio.sleep(1.0)
            healthy = wd.pings
            d.submit(Command("play", slot=names[0], prompt="hang here"))
            await asyncio.sleep(0.9)                      # the stale threshold (0.5 s) passes, with margin
            p0 = wd.pings
            await asyncio.sleep(1.5)
            stuck = wd.pings - p0
            release.set()
            await asyncio.sleep(1.0)
            wd.stop()
            return healthy, stuck, wd.pings - p0 - stuck

        healthy, stuck, after = asyncio.run(main())
        assert healthy >= 2
        assert stuck == 0
        assert after >= 1                                 # pings resume once the engine turns again
        statuses = [m.get("STATUS", "") for m in ns.read(0.3) + ns.messages]
        assert any("stalled" in s for s in statuses)
    finally:
        release.set()
        d.close(linger_s=0)
        ns.close()


# ------------------------------------------------------------------ a real daemon
@pytest.mark.parametrize("abstract", [False, True])
def test_serve_notifies_ready_watchdog_status_reloading_and_stopping(tmp_path, daemon_proc, osc_client, abstract):
    ns = NotifySocket(tmp_path, abstract)
    try:
        env = dict(os.environ, NOTIFY_SOCKET=ns.env, WATCHDOG_USEC="400000")
        d = daemon_proc("--slots", "2", "--metrics-port", "off", env=env)
        ready = ns.wait_for("READY", "1", 10)              # after warm-up: OSC already answers
        assert "slots playing" in ready.get("STATUS", "")
        c = osc_client(d.host, d.port)
        c.send("/wb/ping")
        assert c.wait_for("/wb/pong", 3) is not None
        ns.wait_for("WATCHDOG", "1", 3)
        ns.wait_for("WATCHDOG", "1", 3)
        c.send("/wb/play", 1, "house groove for the watchdog")
        assert c.wait_for("/wb/first_audio", 5)
        end = time.monotonic() + 5
        while True:
            st = [m.get("STATUS", "") for m in ns.read(0.3)]
            if any(s.startswith("1/2 slots playing") for s in st):
                break
            assert time.monotonic() < end, "STATUS never showed the playing slot"
        d.proc.send_signal(signal.SIGHUP)
        ns.wait_for("RELOADING", "1", 5)
        ns.wait_for("READY", "1", 5)
        rc, _ = d.terminate()
        assert rc == 0
        ns.wait_for("STOPPING", "1", 3)
        # no inheritance: the daemon removed NOTIFY_SOCKET from its environment for children
    finally:
        ns.close()


def test_serve_without_notify_socket_runs_as_before(daemon_proc, osc_client):
    d = daemon_proc("--slots", "1", "--metrics-port", "off")
    c = osc_client(d.host, d.port)
    c.send("/wb/ping")
    assert c.wait_for("/wb/pong", 3) is not None
    assert d.terminate()[0] == 0


# ------------------------------------------------------------------ restart recovery (unit level)
def test_interrupted_jobs_reads_what_a_dead_writer_was_playing(slot_name):
    from bridge.core.ring import RingWriter

    w = RingWriter.open(slot_name, 48000, 2, 1 << 16)
    try:
        w.set_meta({"slot": slot_name, "job": 3, "prompt": "left playing", "seed": 5, "seconds": 0.0,
                    "started_unix": time.time()})
        w.set_playing(True)
        # our own pid counts as "dead" only for an exec'd daemon: use a pid that cannot exist
        w._u32[40 // 4] = 2 ** 22 + 12345
        jobs = interrupted_jobs([slot_name])
        assert jobs == [{"slot": slot_name, "prompt": "left playing", "seed": 5, "seconds": 0.0}]
        w._u32[40 // 4] = os.getppid()                    # a live writer: not ours to resume
        assert interrupted_jobs([slot_name]) == []
        w._u32[40 // 4] = 2 ** 22 + 12345
        w.set_playing(False)                              # stopped cleanly
        assert interrupted_jobs([slot_name]) == []
        w.set_playing(True)
        w.set_meta({"prompt": "short", "seconds": 2.0, "started_unix": time.time() - 10})
        assert interrupted_jobs([slot_name]) == []        # a finite job that had ended
        assert interrupted_jobs(["no-such-ring-" + secrets.token_hex(3)]) == []
    finally:
        w.close()


# ------------------------------------------------------------------ the unit file
def test_the_shipped_unit_is_the_rendered_one():
    with open(os.path.join(ROOT, "scripts", "wavebridge.service")) as f:
        assert f.read() == render_unit("/usr/local/bin/wavebridge serve")


def test_unit_has_the_contract():
    u = render_unit("/usr/bin/wavebridge serve")
    lines = {ln.split("=", 1)[0]: ln.split("=", 1)[1] for ln in u.splitlines() if "=" in ln and not ln.startswith("#")}
    assert lines["Type"] == "notify"
    assert int(lines["WatchdogSec"]) > 0
    assert lines["Restart"] == "on-failure"
    assert lines["NoNewPrivileges"] == "yes"
    assert lines["ProtectSystem"] in ("full", "strict", "yes")
    assert lines["PrivateTmp"] == "yes"
    assert set(lines["RestrictAddressFamilies"].split()) == {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}
    assert "LimitRTPRIO" in lines and "LimitMEMLOCK" in lines
    assert "ExecReload" in lines and "HUP" in lines["ExecReload"]
    for forbidden in ("PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectClock", "User"):
        assert forbidden not in lines, forbidden        # /dev/shm, /dev/snd, the GPU stay shared
    assert "User=alice\n" in render_unit("/usr/bin/wavebridge serve", run_as="alice")


def _verify(path, user, tmp_path):
    env = dict(os.environ)
    cmd = ["systemd-analyze", "verify", "--man=no"]
    if user:
        rt = tmp_path / "xdg-runtime"
        rt.mkdir(mode=0o700, exist_ok=True)
        env["XDG_RUNTIME_DIR"] = str(rt)
        cmd.append("--user")
    return subprocess.run(cmd + [str(path)], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
@pytest.mark.parametrize("user", [False, True])
def test_systemd_analyze_verify_accepts_the_installed_unit(tmp_path, user):
    p = subprocess.run([sys.executable, "-m", "bridge", "install-service", "--unit-dir", str(tmp_path),
                        *(["--user"] if user else ["--run-as", "root"])],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    unit = tmp_path / "wavebridge.service"
    assert unit.exists()
    r = _verify(unit, user, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    for word in ("Unknown key", "Unknown section", "Invalid", "not executable", "Failed to parse"):
        assert word not in out, out
    # the check can fail: a typo in a key is reported
    bad = tmp_path / "bad.service"
    bad.write_text(unit.read_text().replace("WatchdogSec=", "WatchdogSecs="))
    assert "Unknown key" in (lambda r: r.stdout + r.stderr)(_verify(bad, user, tmp_path))


def test_install_service_dry_run_changes_nothing(tmp_path):
    p = subprocess.run([sys.executable, "-m", "bridge", "install-service", "--user", "--dry-run",
                        "--unit-dir", str(tmp_path / "units"), "--", "--midi", "--slots", "16"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "units").exists()
    assert "Type=notify" in p.stdout and "serve --midi --slots 16" in p.stdout
    assert "would run: systemctl --user daemon-reload" in p.stdout
