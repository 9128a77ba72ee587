"""Underrun frames of a real-time reader in the first 10 s after a musicgen slot's first audio.

python measure_mg.py TREE MODEL_DIR OMP(unset|N) [extra env k=v ...]
The daemon (Daemon core from TREE, musicgen on CPU, one uniquely named slot) runs in a child
process; the reader (TREE's RingReader, 128-frame blocks, real time) in this one, like a DAW.
"""
import os, secrets, subprocess, sys, threading, time, json
tree, model, omp = sys.argv[1], sys.argv[2], sys.argv[3]
extra = dict(a.split("=", 1) for a in sys.argv[4:])
sys.path.insert(0, tree)
import numpy as np
from plugin_stub.player import PacedRecorder, attach_when_ready
try:
    from plugin_stub.protocol import shm_path
except ImportError:                 # a tree from before the layout change (#19)
    from bridge.protocol import shm_path
name = "m" + secrets.token_hex(5)
launcher = f"""
import sys, time
sys.path.insert(0, {tree!r})
try:
    from bridge.core.daemon import Config, Daemon
    from bridge.core.commands import Command
except ImportError:
    from bridge.daemon import Config, Daemon
    from bridge.commands import Command
d = Daemon(Config(backend="musicgen", backend_kwargs={{"model": {model!r}, "device": "cpu"}},
                  slot_names=[{name!r}], slots=1)).open()
print("ready", flush=True)
sys.stdin.readline()
d.submit(Command("play", slot={name!r}, prompt="lofi jazz piano with drums", seconds=0.0, seed=3))
sys.stdin.readline()
d.close()
"""
env = {**os.environ, **extra}
if omp == "unset":
    env.pop("OMP_NUM_THREADS", None)
else:
    env["OMP_NUM_THREADS"] = omp
p = subprocess.Popen(["nice", "-n", "5", sys.executable, "-c", launcher], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True, env=env, cwd=tree)
try:
    assert p.stdout.readline().strip() == "ready"
    reader = attach_when_ready(name, max_block=128)
    rec = PacedRecorder(reader, 16.0, 128)
    th = threading.Thread(target=rec.run, daemon=True)
    th.start()
    time.sleep(0.3)
    p.stdin.write("play\n"); p.stdin.flush()
    th.join(30)
    k = rec.blocks_done
    real = rec.real[:k]
    heard = np.nonzero(real)[0]
    first = int(heard[0])
    win = int(10 * 48000 / 128)
    seg = slice(first, min(k, first + win))
    short = (real[seg] < 128) & rec.playing[seg]
    under = int(np.sum(128 - real[seg][short]))
    print(json.dumps({"tree": tree, "omp": omp, "first_block_s": round(first * 128 / 48000, 3),
                      "underrun_frames_10s": under, "short_blocks": int(short.sum()),
                      "first_short_at_s": [round(float(x) * 128 / 48000, 2) for x in np.nonzero(short)[0][:8]],
                      "late_blocks": rec.late_blocks}))
    reader.detach()
finally:
    try:
        p.stdin.write("end\n"); p.stdin.flush()
        p.wait(20)
    except Exception:
        p.kill()
    try:
        os.unlink(shm_path(name))
    except FileNotFoundError:
        pass
