"""``wavebridge demo``: the whole path once, as a user would run it.

Starts a daemon process (``wavebridge serve --osc-port 0``), sends a prompt over OSC, records
the slot through the stub reader at 128-frame blocks in real time, moves through several genres
(house → lofi hip hop → a 3/4 waltz → ambient; just the first and last under 8 s), stops, sends
SIGTERM, and prints first-audio latency (daemon-measured and at the read head), each prompt
change's latency at the read head, underruns, each genre's loudness and the level of the WAV.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np

from bridge.control.osc import OscClient
from engine.synth.perform import k_weighting_power
from plugin_stub.player import PacedRecorder, attach_when_ready, write_wav
from plugin_stub.protocol import shm_path


class DaemonProcess:
    """A ``wavebridge serve`` child process on a free port (also used by bench and tests)."""

    def __init__(self, *extra, env=None, startup_timeout: float = 60.0, prefix=(), cwd=None):
        """``prefix``: a command the daemon runs under (e.g. ``nsenter -t PID -m --``, which execs it)."""
        web = [] if "--http" in extra else ["--http", "off"]   # no shared default port for test daemons
        cmd = [*prefix, sys.executable, "-m", "bridge.ops.cli", "serve", "--osc-port", "0", "--log-level", "WARNING",
               *web, *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env or os.environ.copy(), cwd=cwd)
        self.host, self.port = None, None
        self.http = None                  # (host, port) of the HTTP API when started with --http
        self.lines: list[str] = []
        end = time.monotonic() + startup_timeout
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(r"HTTP API and web page on http://([^/]+):(\d+)/", line)
            if m:
                self.http = (m.group(1), int(m.group(2)))
            m = re.search(r"listening for OSC on ([\d.:a-f]+):(\d+)", line)
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                break
        if self.port is None:
            self.proc.kill()
            err = self.proc.stderr.read()
            raise RuntimeError(f"daemon did not start: {''.join(self.lines)} {err[-2000:]}")
        self.err_lines: list[str] = []
        self._drain = threading.Thread(target=self._drain_out, args=(self.proc.stdout, self.lines), daemon=True)
        self._drain.start()
        self._drain_err = threading.Thread(target=self._drain_out, args=(self.proc.stderr, self.err_lines),
                                           daemon=True)
        self._drain_err.start()

    @staticmethod
    def _drain_out(stream, into: list):
        """Keep reading the child's output so a chatty daemon never blocks on a full pipe."""
        for line in stream:
            into.append(line)
            if len(into) > 2000:
                del into[:1000]

    def terminate(self, timeout: float = 5.0) -> tuple[int, float]:
        """SIGTERM; returns (exit code, seconds it took)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        return rc, time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


DEMO_MIDDLE = ("lofi hip hop with rhodes, swung drums and upright bass",
               "viennese waltz with strings and harp")


def _lufs(x: np.ndarray, sr: int) -> float:
    """Ungated BS.1770 loudness of a stereo excerpt (K-weighting in the frequency domain)."""
    n = x.shape[0]
    spec = np.fft.rfft(x.astype(np.float64), axis=0)
    ms = 2.0 * (np.abs(spec) ** 2 * k_weighting_power(n, sr)[:, None]).sum() / (n * n)
    return -0.691 + 10 * np.log10(ms + 1e-20)


def _dbfs(x: float) -> float:
    return 20 * np.log10(max(x, 1e-9))


def run_demo(args) -> int:
    seconds = float(args.seconds)
    block = 128
    print("wavebridge demo: starting the daemon (synth backend) …", flush=True)
    sf = getattr(args, "soundfont", None)
    d = DaemonProcess("--slots", "2", *(("--soundfont", sf) if sf else ()))
    try:
        c = OscClient(d.host, d.port)
        c.send("/wb/ping")
        if c.wait_for("/wb/pong", 5.0) is None:
            print("daemon did not answer /wb/ping", file=sys.stderr)
            return 1
        reader = attach_when_ready(1, max_block=block)
        rec = PacedRecorder(reader, seconds, block)
        th = threading.Thread(target=rec.run, name="host", daemon=True)
        th.start()
        time.sleep(0.2)
        print(f"  OSC on {d.host}:{d.port}; reading slot 1 at {block}-frame blocks, {reader.sample_rate} Hz")
        prompts = [args.prompt, *(DEMO_MIDDLE if seconds >= 8 else ()), args.prompt2]
        seg = seconds / len(prompts)
        t1 = c.send("/wb/play", 1, prompts[0])
        started = c.wait_for("/wb/started", 5.0)
        fa = c.wait_for("/wb/first_audio", 5.0)
        print(f"  ▶ \"{prompts[0]}\"  (job {started[1] if started else '?'})")
        changes = []                            # (sent at, daemon's first_audio reply, splice frame)
        for k, p in enumerate(prompts[1:], start=1):
            time.sleep(max(0.0, k * seg - 0.2 - (time.monotonic() - t1)))
            t2 = c.send("/wb/play", 1, p)
            c.wait_for("/wb/started", 5.0)
            fa2 = c.wait_for("/wb/first_audio", 5.0)
            changes.append((t2, fa2, int(reader.meta().get("splice_at", -1))))
            print(f"  ▶ \"{p}\"  (prompt change at {t2 - t1:.1f} s)")
        th.join(seconds + 5)
        c.send("/wb/stop", 1)
        c.wait_for("/wb/done", 3.0)
        underruns = reader.underrun_frames
        reader.detach()
        rc, took = d.terminate()
        rings_gone = not os.path.exists(shm_path(1)) and not os.path.exists(shm_path(2))
    finally:
        d.kill()

    n = rec.blocks_done
    times, real, ridx = rec.times[:n], rec.real[:n], rec.read_index[:n]
    heard = np.nonzero((times >= t1) & (real > 0))[0]
    head_ms = (times[heard[0]] - t1) * 1000 if heard.size else float("nan")
    change_ms = []
    for t2, _, splice_at in changes:
        k = np.nonzero(ridx + real > splice_at)[0] if splice_at >= 0 else np.zeros(0, int)
        change_ms.append((times[k[0]] - t2) * 1000 if k.size else float("nan"))
    audio = rec.captured
    write_wav(args.wav, audio, reader.sample_rate)
    peak = float(np.abs(audio).max()) if audio.size else 0.0
    rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))) if audio.size else 0.0
    print()
    print(f"  first audio:    {fa[2]:.1f} ms datagram → ring (daemon), {head_ms:.1f} ms to the read head"
          if fa else "  first audio:    (no /wb/first_audio reply)")
    for (t2, fa2, _), ms in zip(changes, change_ms):
        print(f"  prompt change:  {ms:.1f} ms datagram → new audio at the read head"
              f" (daemon: {fa2[2]:.1f} ms to splice)" if fa2 else "  prompt change:  (no reply)")
    sr = reader.sample_rate
    levels = []
    for k, p in enumerate(prompts):             # each genre's level, away from the changes
        a, b = int((k * seg + 0.5) * sr), int(((k + 1) * seg - 0.1) * sr)
        if b - a > sr // 2:
            levels.append(f"{_lufs(audio[a:b], sr):.1f}")
    print(f"  loudness:       {' / '.join(levels)} LUFS (ungated, K-weighted, per prompt)")
    print(f"  underruns:      {underruns} frames in the ring header, "
          f"{rec.short_blocks_while_playing()} short blocks while playing, {rec.late_blocks} late host blocks")
    print(f"  wrote {args.wav}: {audio.shape[0] / reader.sample_rate:.1f} s stereo, peak {_dbfs(peak):.1f} dBFS, "
          f"RMS {_dbfs(rms):.1f} dBFS, NaN: {bool(np.isnan(audio).any())}")
    print(f"  daemon: SIGTERM → exit {rc} in {took * 1000:.0f} ms, rings removed: {rings_gone}")
    ok = fa is not None and rc == 0 and rings_gone and peak > 0.01 and not np.isnan(audio).any()
    return 0 if ok else 1
