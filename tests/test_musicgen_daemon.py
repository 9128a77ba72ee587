"""`wavebridge serve --backend musicgen --model DIR` end to end, on a tiny random model, in real time."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

pytest.importorskip("transformers")

from plugin_stub.player import PacedRecorder, attach_when_ready  # noqa: E402
from tiny_musicgen import build_tiny_musicgen  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return str(build_tiny_musicgen(tmp_path_factory.mktemp("mg") / "tiny-musicgen"))


def test_musicgen_daemon_plays_into_the_ring_in_real_time(model_dir, daemon_proc, osc_client):
    # one torch thread: the tiny model is launch-bound (each step is a few small ops), so a second
    # OpenMP thread only spins between them and takes the core this test's real-time reader runs on
    d = daemon_proc("--backend", "musicgen", "--model", model_dir, "--device", "cpu", "--slots", "2",
                    env={**os.environ, "OMP_NUM_THREADS": "1"})
    c = osc_client(d.host, d.port, timeout=10)
    reader = attach_when_ready(1, max_block=128)
    assert reader.sample_rate == 48000 and reader.channels == 2
    rec = PacedRecorder(reader, 4.0, 128)
    th = threading.Thread(target=rec.run, daemon=True)
    th.start()
    c.send("/wb/play", 1, "lofi jazz piano with drums", 0.0, 3)
    assert c.wait_for("/wb/started", 10) is not None
    fa = c.wait_for("/wb/first_audio", 20)
    assert fa is not None and fa[2] > 0
    th.join(10)
    k = rec.blocks_done
    heard = np.nonzero(rec.real[:k])[0]
    assert heard.size > 0
    a = rec.captured[heard[0] * 128:]
    assert np.isfinite(a).all() and np.abs(a).max() > 1e-3
    # once it started, the tiny model keeps up with a real-time reader on this CPU
    short = np.nonzero((rec.real[:k] < 128) & rec.playing[:k])[0]
    print("short blocks while playing:", short.size, "of", k, "at", (short - heard[0])[:40])
    assert rec.short_blocks_while_playing() <= 2
    c.send("/wb/status")
    row = c.wait_for("/wb/slot", 5, match=lambda r: r[0] == 1)
    assert row[1] == "playing"
    c.send("/wb/stop", 1)
    assert c.wait_for("/wb/done", 5) is not None
    reader.detach()


def test_missing_model_directory_is_a_clear_startup_error(tmp_path):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "bridge", "serve", "--osc-port", "0", "--backend", "musicgen",
                        "--model", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "nope" in p.stderr and ("not" in p.stderr.lower() or "missing" in p.stderr.lower())
