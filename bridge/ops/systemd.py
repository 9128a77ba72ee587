"""Running under a supervisor: the sd_notify protocol, the engine watchdog, restart recovery.

- :class:`Notifier` speaks systemd's notify protocol itself (no libsystemd): one datagram of
  ``KEY=VALUE`` lines to the ``AF_UNIX`` socket named by ``NOTIFY_SOCKET`` (a leading ``@``
  means the abstract namespace). Without ``NOTIFY_SOCKET`` every call is a no-op, so the
  daemon runs the same in a terminal. Sending never blocks and never raises.
- :class:`Watchdog` is an asyncio task on the control loop. ``WATCHDOG=1`` is sent only on
  proof that the daemon works: the engine thread's ``alive_ns`` (stamped once per engine loop
  iteration) is fresh, *and*, with a ``probe`` (``serve`` always has one:
  :class:`bridge.control.osc.ServingProbe`), the control loop has just served a command — the watchdog
  sends a ``/wb/ping`` from its own socket to the OSC port and pings systemd from the handler of
  the ``/wb/pong`` that comes back through the same decode → validate → reply path as everyone's.
  A stuck engine, a stuck or starved loop, or an OSC socket that is no longer read stops the
  pings, and systemd restarts the daemon. It also keeps a one-line ``STATUS=``.
- :func:`interrupted_jobs` reads the rings a dead daemon left behind (writer pid gone, the
  ``playing`` flag still set) and returns what they were playing, so a restarted daemon can
  carry on where the crashed one stopped; readers keep their mapping throughout (the new
  writer re-attaches the same segment and bumps its epoch).

Threading: ``[control]`` throughout (the loop thread); :func:`interrupted_jobs` runs before the
daemon opens its rings.
"""
from __future__ import annotations

import asyncio
import logging
import mmap
import os
import socket
import struct
import time

import msgpack

from plugin_stub import protocol as P


log = logging.getLogger("wavebridge.systemd")


class Notifier:
    """sd_notify(3) without libsystemd. ``[control]``"""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        self.address = env.get("NOTIFY_SOCKET") or None
        self._addr = None
        self._sock = None
        self._warned = False
        self.sent: list[str] = []          # the last few messages (for tests and logs)
        if self.address:
            a = self.address
            if a.startswith("@"):
                self._addr = "\0" + a[1:]
            elif a.startswith("/"):
                self._addr = a
            else:                         # vsock: and friends — not needed on a workstation
                log.warning("NOTIFY_SOCKET=%r is not a unix socket path; not notifying systemd", a)
                self.address = None
        self.watchdog_usec = 0
        wd = env.get("WATCHDOG_USEC")
        pid = env.get("WATCHDOG_PID")
        if wd:
            try:
                usec = int(wd)
                if usec > 0 and (not pid or int(pid) == os.getpid()):
                    self.watchdog_usec = usec
            except ValueError:
                log.warning("ignoring WATCHDOG_USEC=%r", wd)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    @property
    def watchdog_interval_s(self) -> float:
        """Half of ``WATCHDOG_USEC`` in seconds, or 0 when systemd asked for no watchdog."""
        return self.watchdog_usec / 2e6

    def notify(self, *lines: str) -> bool:
        """Send ``lines`` (``"READY=1"``, ``"STATUS=…"``) as one datagram; False if not sent."""
        if not self.enabled or not lines:
            return False
        msg = "\n".join(line.replace("\n", " ") for line in lines)
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.setblocking(False)
            self._sock.sendto(msg.encode("utf-8", "replace"), self._addr)
        except OSError as e:
            if not self._warned:
                log.warning("cannot notify systemd at %s: %s", self.address, e)
                self._warned = True
            return False
        self.sent.append(msg)
        del self.sent[:-32]
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def reloading(self) -> bool:
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={usec}", "STATUS=reloading configuration")

    def stopping(self, status: str = "shutting down") -> bool:
        return self.notify("STOPPING=1", f"STATUS={status}")

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={text}")

    def extend_timeout(self, seconds: float) -> bool:
        return self.notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1e6)}")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class Watchdog:
    """Pings systemd on proof that the daemon serves; keeps ``STATUS=`` current. ``[control]``

    ``engine`` is anything with ``alive_ns`` (CLOCK_MONOTONIC ns of its last loop iteration)
    and ``is_alive()``; ``summary`` returns the one-line status. ``probe`` (optional) has
    ``send()``, ``answered_ns`` and an ``on_answer`` hook: with it, each round sends a probe
    and ``WATCHDOG=1`` goes out from :meth:`proof` when the answer arrives, never from the timer.
    Without it the ping comes from the round itself (which runs on the loop).
    """

    def __init__(self, notifier: Notifier, engine, summary=None, stale_s: float | None = None,
                 status_every_s: float = 5.0, probe=None):
        self.n = notifier
        self.engine = engine
        self.summary = summary or (lambda: "")
        self.interval_s = notifier.watchdog_interval_s
        # the engine loop turns at least every 50 ms when idle and once per batch when busy
        self.stale_s = stale_s if stale_s is not None else max(0.5, self.interval_s or 5.0)
        self.status_every_s = status_every_s
        self.probe = probe
        if probe is not None:
            probe.on_answer = self.proof
        self.pings = 0
        self.withheld = 0
        self.proofs = 0
        self._pinged_ns = None              # when WATCHDOG=1 last went out
        self._task: asyncio.Task | None = None
        self._last_status = ""
        self._was_fresh = True
        self._started_ns = time.monotonic_ns()

    def engine_fresh(self, now_ns: int | None = None) -> bool:
        e = self.engine
        if e is None or not e.is_alive():
            return False
        now = time.monotonic_ns() if now_ns is None else now_ns
        return (now - e.alive_ns) <= self.stale_s * 1e9

    def serving(self, now_ns: int | None = None) -> bool:
        """True without a probe; with one, whether it was answered within ``stale_s``."""
        if self.probe is None:
            return True
        now = time.monotonic_ns() if now_ns is None else now_ns
        last = max(self.probe.answered_ns, self._started_ns)     # grace until the first answer
        return (now - last) <= self.stale_s * 1e9

    def _state(self, now_ns: int | None) -> tuple[bool, str]:
        now = time.monotonic_ns() if now_ns is None else now_ns
        e = self.engine
        if not self.engine_fresh(now):
            if e is not None and e.is_alive():
                return False, f"engine stalled for {(now - e.alive_ns) / 1e9:.1f} s"
            return False, "engine thread is not running"
        if not self.serving(now):
            return False, (f"control loop has not served its own probe for "
                           f"{(now - self.probe.answered_ns) / 1e9:.1f} s" if self.probe.answered_ns
                           else "control loop has not served its own probe yet")
        return True, self.summary()

    def _pinged_recently(self, now_ns: int | None) -> bool:
        """A ping went out less than a quarter interval ago. When a stalled socket is read again,
        the probes queued meanwhile are all answered at once; one ping proves as much as a dozen,
        and a burst would overflow the notify socket's queue (``net.unix.max_dgram_qlen``, 10),
        losing the STATUS that travels with it."""
        if self._pinged_ns is None:
            return False
        now = time.monotonic_ns() if now_ns is None else now_ns
        return now - self._pinged_ns < self.interval_s * 0.25e9

    def _notify(self, fresh: bool, status: str, ping: bool, now_ns: int | None = None) -> None:
        lines = []
        if fresh != self._was_fresh:            # the log gets the transitions, STATUS= the detail
            if fresh:
                log.warning("watchdog: healthy again; pinging systemd")
            else:
                log.error("watchdog: %s; not pinging systemd", status)
            self._was_fresh = fresh
        if self.interval_s > 0:
            if fresh and ping and not self._pinged_recently(now_ns):
                lines.append("WATCHDOG=1")
                self.pings += 1
                self._pinged_ns = time.monotonic_ns() if now_ns is None else now_ns
            elif not fresh:
                self.withheld += 1
        if status and status != self._last_status:
            lines.append(f"STATUS={status}")
            self._last_status = status
        if lines:
            self.n.notify(*lines)

    def tick(self, now_ns: int | None = None) -> bool:
        """One round: STATUS, and WATCHDOG=1 if all is fresh — from here only without a probe;
        with one, this sends the next probe and :meth:`proof` pings when it is answered."""
        fresh, status = self._state(now_ns)
        self._notify(fresh, status, ping=self.probe is None, now_ns=now_ns)
        if self.probe is not None:
            self.probe.send()
        return fresh

    def proof(self, now_ns: int | None = None) -> None:
        """The probe was answered: commands are being served. Ping if the engine is fresh too."""
        self.proofs += 1
        fresh, status = self._state(now_ns)
        self._notify(fresh, status, ping=True, now_ns=now_ns)

    async def run(self) -> None:
        period = self.interval_s if self.interval_s > 0 else self.status_every_s
        period = min(period, self.status_every_s)
        if self.probe is not None:
            period /= 2                     # a probe lost in a flood costs half a ping period
        while True:
            self.tick()
            await asyncio.sleep(period)

    def start(self) -> "Watchdog":
        if self.n.enabled and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(), name="wavebridge-watchdog")
        return self

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self.probe is not None:
            self.probe.close()


# --------------------------------------------------------------------------- restart recovery

def read_ring_state(slot) -> dict | None:
    """Header fields and job metadata of a slot's ring, or None if there is no valid ring.

    Read-only and without the resource tracker; the metadata is read under its seqlock.
    """
    try:
        path = P.shm_path(slot)
        fd, st = P.open_segment(path, writable=False)   # no links or FIFOs; ours, 0600
    except (OSError, P.RingError):
        return None
    try:
        size = st.st_size
        if size < P.DATA_OFFSET:
            return None
        mm = mmap.mmap(fd, P.DATA_OFFSET, mmap.MAP_SHARED, mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    try:
        try:
            P.validate_header(mm, size)
        except P.RingError:
            return None
        pid, flags, hb = struct.unpack_from("<IIQ", mm, P.OFF_WRITER_PID)
        meta = {}
        for _ in range(100):
            seq = struct.unpack_from("<I", mm, P.OFF_META_SEQ)[0]
            if seq & 1:
                time.sleep(0.001)
                continue
            n = struct.unpack_from("<I", mm, P.OFF_META_LEN)[0]
            blob = bytes(mm[P.OFF_META:P.OFF_META + min(n, P.META_MAX)])
            if struct.unpack_from("<I", mm, P.OFF_META_SEQ)[0] == seq:
                try:
                    meta = msgpack.unpackb(blob, raw=False) if n else {}
                except Exception:  # noqa: BLE001 — damaged metadata: no job to resume
                    meta = {}
                break
        return {"writer_pid": pid, "flags": flags, "writer_heartbeat_ns": hb,
                "meta": meta if isinstance(meta, dict) else {}}
    finally:
        mm.close()


def interrupted_jobs(slots) -> list[dict]:
    """Jobs a dead daemon was playing: ``[{slot, prompt, seed, seconds}]``. ``[control]``

    A ring counts when its writer pid is gone (or is us, after an exec) while the ``playing``
    flag is still set — a daemon that shut down cleanly unlinks its rings or clears the flag.
    Finite jobs resume with the time they had left; those that had ended are skipped.
    """
    out = []
    now = time.time()
    for s in slots:
        st = read_ring_state(s)
        if st is None or not st["flags"] & P.FLAG_PLAYING:
            continue
        if st["writer_pid"] != os.getpid() and P.pid_alive(st["writer_pid"]):
            continue
        m = st["meta"]
        prompt = m.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            continue
        seconds = m.get("seconds", 0.0)
        seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
        if seconds > 0:
            started = m.get("started_unix")
            if isinstance(started, (int, float)):
                seconds -= max(0.0, now - float(started))
            if seconds < 0.5:
                continue
        seed = m.get("seed")
        out.append({"slot": s, "prompt": prompt, "seed": seed if isinstance(seed, int) else None,
                    "seconds": max(0.0, seconds)})
    return out


# --------------------------------------------------------------------------- the unit file
UNIT_NAME = "wavebridge.service"


def render_unit(exec_start: str, *, run_as: str | None = None, groups: list[str] | None = None,
                watchdog_s: int = 20) -> str:
    """The systemd unit. Without ``run_as`` it serves as a user unit and as a system unit.

    ``scripts/wavebridge.service`` is this text for ``/usr/local/bin/wavebridge serve``;
    ``wavebridge install-service`` writes it with the real executable (and, for a system unit,
    ``User=`` — the rings are mode 0600, so the daemon must run as the DAW's user).
    """
    who = ""
    if run_as:
        who = f"User={run_as}\n"
        if groups:
            who += f"SupplementaryGroups={' '.join(groups)}\n"
    return f"""\
# wavebridge: generated music, live, inside your DAW.
#
# Install:  wavebridge install-service --user           (recommended: runs as you, next to the DAW)
#           sudo wavebridge install-service --run-as YOU  (a system unit with User=YOU)
# Control:  systemctl [--user] start|stop|reload|status wavebridge
#           reload = SIGHUP: re-reads the config, the MIDI map and the live parameters; audio keeps playing
# Settings: ~/.config/wavebridge/config.toml (user) or /etc/wavebridge/config.toml, environment
#           variables (MIDO_BACKEND, JACK_DEFAULT_SERVER, CUDA_VISIBLE_DEVICES …) in
#           ~/.config/wavebridge/environment or /etc/wavebridge/environment (%E/wavebridge/environment).
# Works as a user unit too; to keep a user unit running after logout: loginctl enable-linger YOU

[Unit]
Description=wavebridge generated-music daemon (OSC/MIDI control, shared-memory rings to the DAW)
After=network.target sound.target

[Service]
Type=notify
NotifyAccess=main
{who}ExecStart={exec_start}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2
# warm-up loads the model; READY=1 is sent when the engine is warm and the rings exist
TimeoutStartSec=300
TimeoutStopSec=15
# WATCHDOG=1 is sent while the engine loop turns and the control loop answers its own OSC probe
# (every WatchdogSec/4); a stuck engine or control loop is restarted
WatchdogSec={watchdog_s}
Environment=PYTHONUNBUFFERED=1
EnvironmentFile=-%E/wavebridge/environment
UMask=0077

# real-time priority and locked memory for the engine; systemd caps these to what the manager
# itself may grant (a user manager gets the limits PAM gave the user, e.g. the audio group's)
LimitRTPRIO=95
LimitMEMLOCK=infinity

# Hardening that keeps what the daemon shares with the DAW: /dev/shm (the rings and JACK's
# sockets; PrivateTmp= does not touch it), /dev/snd and /dev/nvidia* — hence no PrivateDevices=,
# DeviceAllow= or ProtectClock= (which installs a device allow-list). No MemoryDenyWriteExecute=
# or SystemCallFilter=: CUDA and the JIT compilers need both W+X memory and unusual ioctls.
NoNewPrivileges=yes
ProtectSystem=full
PrivateTmp=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
RestrictNamespaces=yes
RestrictSUIDSGID=yes
LockPersonality=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
ProtectHostname=yes
SystemCallArchitectures=native

[Install]
WantedBy=default.target
"""
