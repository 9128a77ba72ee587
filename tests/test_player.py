"""`wavebridge play --slot N` on a sound card: PortAudio (callback mode) → JACK dummy server."""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from bridge.core.ring import RingWriter
from plugin_stub.player import read_wav

pytestmark = pytest.mark.jack
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 48000


@pytest.fixture
def jack():
    for tool in ("jackd", "jack_lsp", "jack_capture", "jack_wait"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} missing: `make setup` installs jackd2 and jack-capture")
    name = "wbp" + secrets.token_hex(4)
    env = dict(os.environ, JACK_DEFAULT_SERVER=name, JACK_NO_AUDIO_RESERVATION="1")
    proc = subprocess.Popen(["jackd", "-n", name, "--no-realtime", "-d", "dummy", "-r", str(RATE), "-p", "256"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    ok = subprocess.run(["jack_wait", "-w", "-t", "10"], env=env, capture_output=True).returncode == 0
    if not ok:
        proc.kill()
        pytest.fail("jackd did not start")
    yield env
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_play_slot_on_the_sound_card_through_jack(jack, tmp_path):
    slot = 50 + secrets.randbelow(6)
    w = RingWriter.open(slot, RATE, 2, 1 << 16)
    stop = threading.Event()

    def writer():                                  # a 440 Hz tone, phase-continuous, playing
        pos = 0
        w.set_playing(True)
        while not stop.is_set():
            if w.buffered() < RATE // 4:
                t = (np.arange(pos, pos + 4096) / RATE)
                tone = (0.5 * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)
                pos += w.append(np.stack([tone, tone], axis=1))
            time.sleep(0.005)

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    player = subprocess.Popen([sys.executable, "-m", "bridge", "play", "--slot", str(slot), "--seconds", "6",
                               "--block", "256"], env=jack, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        ports = []
        end = time.monotonic() + 15
        while time.monotonic() < end and len(ports) < 2:
            out = subprocess.run(["jack_lsp"], env=jack, capture_output=True, text=True).stdout.splitlines()
            ports = [p for p in out if not p.startswith("system:") and ("out" in p.lower())]
            time.sleep(0.2)
        assert len(ports) >= 2, f"player's JACK ports not found: {out}"
        wav = tmp_path / "cap.wav"
        args = ["jack_capture", "-as", "-d", "2"]
        for p in ports[:2]:
            args += ["-p", p]
        subprocess.run(args + [str(wav)], env=jack, capture_output=True, timeout=30, cwd=tmp_path)
        audio, rate = read_wav(str(wav))
        assert rate == RATE and np.isfinite(audio).all()
        x = audio[:, 0]
        assert np.abs(x).max() > 0.3
        spec = np.abs(np.fft.rfft(x * np.hanning(x.size)))
        peak = np.argmax(spec) * RATE / x.size
        assert abs(peak - 440.0) < 3.0
        out, err = player.communicate(timeout=20)
        assert player.returncode == 0, err[-2000:]
        assert "played" in out
    finally:
        stop.set()
        if player.poll() is None:
            player.kill()
        th.join(2)
        w.close()
