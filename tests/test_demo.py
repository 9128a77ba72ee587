"""`wavebridge demo`, as `make demo` runs it (shortened)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from plugin_stub.player import read_wav


def test_demo_runs_end_to_end(tmp_path):
    wav = tmp_path / "demo.wav"
    p = subprocess.run([sys.executable, "-m", "bridge", "demo", "--seconds", "4", "--wav", str(wav)],
                       capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "first audio:" in p.stdout and "prompt change:" in p.stdout and "underruns:" in p.stdout
    audio, rate = read_wav(str(wav))
    assert rate == 48000 and audio.shape[1] == 2
    assert abs(audio.shape[0] - 4 * rate) < 256
    assert np.isfinite(audio).all() and np.abs(audio).max() > 0.05
    # the prompt changes halfway: the two halves differ in spectrum
    h = audio.shape[0] // 2
    a = np.abs(np.fft.rfft(audio[int(0.3 * h):int(0.9 * h), 0]))
    b = np.abs(np.fft.rfft(audio[int(1.2 * h):int(1.8 * h), 0]))
    n = min(a.size, b.size)
    corr = np.corrcoef(a[:n], b[:n])[0, 1]
    assert corr < 0.9
