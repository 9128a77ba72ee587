"""``wavebridge bench --http``: the web side's figures, against a real ``serve`` process on loopback.

- ``first_request``: the first ``POST /v1/audio/generate`` after start (first byte, first audio
  event) against the median of the next 20: the web path's warm-up makes the ratio ≈ 1.
- ``sse_first_byte_ms`` / ``sse_first_audio_ms``: request sent → response headers / first
  ``audio_chunk`` event parsed (``POST /v1/audio/generate``, Opus), p50/p99.
- ``raw_opus_first_audio_ms``: ``Accept: audio/ogg`` → the first body bytes holding an audio page.
- ``ws_first_audio_ms``: ``play`` sent on an open WebSocket session → the first binary audio message.
- ``ws_prompt_change_ms``: ``play`` of a new prompt on a playing session (≥ 1 s generated ahead) →
  the first frame of the new prompt (the server's ``first_audio.frame``) has arrived at the client.
- ``concurrent_ws_opus_streams``: the most WebSocket Opus sessions held in real time together with
  0 gaps, a gap being a moment when a client with a 150 ms jitter buffer would have run dry
  (audio time from the Ogg granule positions of what arrived).
- ``capacity_beside_daw`` (#20): a second daemon with 8 DAW slots playing, each read in real time
  at 128-frame blocks by this process; Opus live sessions (clients that play and read) are added
  4 at a time, 3 s apart, until the admission (503 before the upgrade) refuses two steps in a row
  whole, or a DAW slot underruns: the sessions admitted and held together, the refusals, and the
  DAW underrun frames while they played. ``WB_BENCH_CAPACITY_ONLY=1`` runs only this stage;
  ``WB_BENCH_DAW_SLOTS`` (default 8) and ``WB_BENCH_DAW_PLAY`` (how many of them play) change it.
- ``opus_encode_cpu_per_stream_s``: CPU seconds to encode one second of a stream in 20 ms blocks
  (PyAV/libopus), and MP3 for comparison.
- ``track_30s``: a queued 30 s track: wall time to render and store, compute seconds, cost at
  ``--price-per-hour`` (the source documents' figures: $0.18 → $0.05 per track).

The client runs in this process on the same cores as the daemon, as a user's would on one box.
"""
from __future__ import annotations

import asyncio
import json
import os
import struct
import sys
import tempfile
import time

import aiohttp
import numpy as np

from bridge.ops.bench.common import machine_info
from bridge.ops.demo import DaemonProcess
from bridge.web.encoding import Encoder
from engine import get_backend
from plugin_stub.protocol import shm_path

PROMPTS = ["deep house in A minor with piano, warm bass and drums, 122 bpm",
           "dreamy ambient pads and a slow bell melody in D major",
           "funky disco groove with slap bass, 118 bpm", "lofi hip hop with rhodes and vinyl drums"]


def _say(msg: str) -> None:
    print(f"bench-http: {msg}", file=sys.stderr, flush=True)


def _pct(xs, q):
    return round(float(np.percentile(np.asarray(xs, dtype=np.float64), q)), 2) if len(xs) else None


def _stats(xs) -> dict:
    return {"p50": _pct(xs, 50), "p99": _pct(xs, 99), "n": len(xs)}


def ogg_granules(data: bytes) -> list[int]:
    """Granule positions of the Ogg pages in ``data`` (bench-side bookkeeping only)."""
    out, i = [], 0
    while True:
        i = data.find(b"OggS", i)
        if i < 0 or i + 27 > len(data):
            return out
        out.append(struct.unpack_from("<q", data, i + 6)[0])
        nseg = data[i + 26]
        i += 27 + nseg + sum(data[i + 27:i + 27 + nseg])


async def _sse_once(s, url, fmt="opus"):
    t0 = time.perf_counter()
    async with s.post(url + "/v1/audio/generate", json={"prompt": PROMPTS[0], "duration_seconds": 1.0,
                                                        "format": fmt}) as r:
        t_head = time.perf_counter()
        first = None
        async for line in r.content:
            if first is None and line.startswith(b'data: {"event":"audio_chunk"'):
                first = time.perf_counter()
        return (t_head - t0) * 1e3, (first - t0) * 1e3


async def _raw_once(s, url):
    t0 = time.perf_counter()
    async with s.post(url + "/v1/audio/generate", headers={"Accept": "audio/ogg"},
                      json={"prompt": PROMPTS[1], "duration_seconds": 1.0}) as r:
        buf = b""
        while True:
            chunk = await r.content.readany()
            if not chunk:
                return None
            buf += chunk
            if any(g > 0 for g in ogg_granules(buf)):     # an audio page (headers have granule 0)
                t = (time.perf_counter() - t0) * 1e3
                await r.read()
                return t


async def _generate_timed(url: str, prompt: str) -> tuple[float, float]:
    """One ``POST /v1/audio/generate`` (SSE, 1 s, Opus) on a fresh connection, written by hand so no
    client-side first-use cost is counted: (ms to the response's first byte, ms to the first audio)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    body = json.dumps({"prompt": prompt, "duration_seconds": 1.0, "format": "opus"}).encode()
    head = (f"POST /v1/audio/generate HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    r, w = await asyncio.open_connection(host.strip("[]"), int(port))
    try:
        t0 = time.perf_counter()
        w.write(head + body)
        buf = await r.read(65536)
        t_byte = time.perf_counter()
        while b'"event":"audio_chunk"' not in buf:
            more = await r.read(65536)
            if not more:
                break
            buf += more
        t_audio = time.perf_counter()
        while await r.read(65536):
            pass
    finally:
        w.close()
    return (t_byte - t0) * 1e3, (t_audio - t0) * 1e3


async def _first_request(url: str, n: int = 20) -> dict:
    """The first request after start against the next ``n``: a warm daemon answers the first as fast."""
    first_b, first_a = await _generate_timed(url, PROMPTS[0])
    later = [await _generate_timed(url, PROMPTS[i % len(PROMPTS)]) for i in range(1, n + 1)]
    med_b = float(np.median([b for b, _ in later]))
    med_a = float(np.median([a for _, a in later]))
    return {"first_request": {"first_byte_ms": round(first_b, 2), "first_audio_ms": round(first_a, 2),
                              f"next{n}_first_byte_p50_ms": round(med_b, 2),
                              f"next{n}_first_audio_p50_ms": round(med_a, 2),
                              "first_byte_ratio": round(first_b / max(med_b, 1e-6), 2),
                              "first_audio_ratio": round(first_a / max(med_a, 1e-6), 2)}}


async def _ws_first_and_change(s, url, trials):
    first, change = [], []
    frames = 0                                # the session's frames so far (server frame numbers count them)
    async with s.ws_connect(url + "/v1/stream?format=pcm_s16le") as ws:
        await ws.receive_json()
        for k in range(trials):
            end = time.perf_counter() + 0.7   # idle (the server's pacing starts afresh); count any tail
            while (left := end - time.perf_counter()) > 0:
                try:
                    m = await ws.receive(timeout=left)
                except asyncio.TimeoutError:
                    break
                if m.type.name == "BINARY":
                    frames += len(m.data) // 4
            t0 = time.perf_counter()
            await ws.send_json({"type": "play", "prompt": PROMPTS[k % 4]})
            t_first = None
            while t_first is None:
                m = await ws.receive()
                if m.type.name == "BINARY":
                    t_first = time.perf_counter()
                    frames += len(m.data) // 4
            first.append((t_first - t0) * 1e3)
            # let it play 1.2 s, then change the prompt and wait for the splice frame to arrive
            end = time.perf_counter() + 1.2
            while time.perf_counter() < end:
                m = await ws.receive()
                if m.type.name == "BINARY":
                    frames += len(m.data) // 4
            t1 = time.perf_counter()
            await ws.send_json({"type": "play", "prompt": PROMPTS[(k + 1) % 4]})
            splice = None
            while True:
                m = await ws.receive()
                if m.type.name == "BINARY":
                    frames += len(m.data) // 4
                elif m.type.name == "TEXT":
                    ev = json.loads(m.data)
                    if ev["type"] == "first_audio" and splice is None and ev.get("frame") is not None:
                        splice = ev["frame"]
                if splice is not None and frames > splice:
                    change.append((time.perf_counter() - t1) * 1e3)
                    break
            await ws.send_json({"type": "stop", "fade_s": 0.0})
            while True:                       # drain to the stop
                m = await ws.receive()
                if m.type.name == "BINARY":
                    frames += len(m.data) // 4
                elif m.type.name == "TEXT" and json.loads(m.data).get("reason") == "stopped":
                    break
    return first, change


async def _concurrent(url, n, window_s, buffer_s=0.15):
    gaps = [0] * n
    got_s = [0.0] * n
    refused = [0]

    async def one(i, s):
        try:
            await _one(i, s)
        except aiohttp.WSServerHandshakeError as e:   # the admission's 503 (no headroom): not a gap
            if e.status not in (429, 503):
                raise
            refused[0] += 1
            got_s[i] = window_s

    async def _one(i, s):
        async with s.ws_connect(url + "/v1/stream?format=opus") as ws:
            await ws.receive_json()
            await ws.send_json({"type": "play", "prompt": PROMPTS[i % 4], "seed": i})
            t_start = None
            end = None
            buf = b""
            while True:
                m = await ws.receive()
                now = time.perf_counter()
                if m.type.name != "BINARY":
                    if m.type.name in ("CLOSE", "CLOSED", "ERROR"):
                        return
                    continue
                buf = (buf + m.data)[-65536:]
                g = [x for x in ogg_granules(m.data) if x > 0]
                if not g:
                    continue
                audio = (g[-1] - 312) / 48000.0           # Opus pre-skip of libopus: 312 samples
                if t_start is None:
                    t_start, end = now + buffer_s, now + window_s
                    continue
                if now > end:
                    got_s[i] = audio
                    return
                played = now - t_start
                if audio < played - 1e-3 and played > 0:
                    gaps[i] += 1
                    t_start += played - audio     # the player waits (one gap), then goes on

    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn) as s:
        await asyncio.gather(*(one(i, s) for i in range(n)))
    if refused[0]:
        _say(f"{refused[0]} of {n} sessions refused by the admission (503 before the upgrade)")
    return sum(gaps) + (1 if refused[0] else 0), min(got_s) if got_s else 0.0


def _encode_cost(fmt: str, seconds: float = 10.0) -> float:
    b = get_backend("synth")
    b.warmup()
    st = b.start(1, PROMPTS[0], 1)
    a = np.asarray(b.generate([st], int(seconds * 48000))[0], dtype=np.float32)
    enc = Encoder(fmt)
    t0 = time.process_time()
    for i in range(0, a.shape[0], 960):
        enc.push(a[i:i + 960])
    enc.finish()
    return (time.process_time() - t0) / seconds


async def _track(url, seconds=30.0):
    async with aiohttp.ClientSession() as s:
        t0 = time.perf_counter()
        async with s.post(url + "/v1/tracks", json={"prompt": PROMPTS[2], "seconds": seconds, "format": "opus"}) as r:
            tid = (await r.json())["id"]
        while True:
            async with s.get(f"{url}/v1/tracks/{tid}") as r:
                row = await r.json()
            if row["state"] in ("done", "error"):
                break
            await asyncio.sleep(0.05)
        wall = time.perf_counter() - t0
    return {"state": row["state"], "wall_s": round(wall, 3), "render_s": round(row["render_s"] or 0, 3),
            "compute_s": round(row["compute_s"] or 0, 4), "cost_usd": row["cost_usd"],
            "realtime_factor": round(seconds / wall, 1) if wall > 0 else None}


async def _run(url, quick: bool) -> dict:
    out = {}
    trials = 10 if quick else 40
    async with aiohttp.ClientSession() as s:
        await _sse_once(s, url)                          # warm the path (PyAV import, first encoder)
        heads, firsts = [], []
        for _ in range(trials):
            h, f = await _sse_once(s, url)
            heads.append(h)
            firsts.append(f)
        out["sse_first_byte_ms"] = _stats(heads)
        out["sse_first_audio_ms"] = _stats(firsts)
        _say(f"SSE first audio p50 {out['sse_first_audio_ms']['p50']} ms, p99 {out['sse_first_audio_ms']['p99']} ms")
        raw = [t for t in [await _raw_once(s, url) for _ in range(trials)] if t is not None]
        out["raw_opus_first_audio_ms"] = _stats(raw)
        _say(f"raw Opus first audio page p50 {out['raw_opus_first_audio_ms']['p50']} ms")
        first, change = await _ws_first_and_change(s, url, 3 if quick else 10)
        out["ws_first_audio_ms"] = _stats(first)
        out["ws_prompt_change_ms"] = _stats(change)
        _say(f"WebSocket first audio p50 {out['ws_first_audio_ms']['p50']} ms; prompt change at the client "
             f"p50 {out['ws_prompt_change_ms']['p50']} ms, p99 {out['ws_prompt_change_ms']['p99']} ms")
    window = 3.0 if quick else 8.0
    best, runs = 0, {}
    for n in ([2, 4] if quick else [8, 16, 24, 32, 48]):
        g, least = await _concurrent(url, n, window)
        runs[str(n)] = {"gaps": g, "least_audio_s": round(least, 2)}
        _say(f"{n} concurrent WebSocket Opus sessions for {window:.0f} s: {g} gaps")
        if g:
            break
        best = n
    out["concurrent_ws_opus_streams"] = best
    out["concurrent_runs"] = runs
    out["track_30s"] = await _track(url, 10.0 if quick else 30.0)
    _say(f"track: {out['track_30s']}")
    return out


class _DawReaders:
    """One thread reading every DAW slot at 128-frame blocks on a real-time grid (as a host would)."""

    def __init__(self, slots):
        import threading

        from plugin_stub.player import attach_when_ready

        self.readers = [attach_when_ready(s, max_block=128) for s in slots]
        self.out = np.zeros((128, self.readers[0].channels), np.float32)
        self._stop = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True, name="bench-daw")
        self.th.start()

    def _run(self):
        from plugin_stub.player import host_ticks

        for _k, _late in host_ticks(128 / self.readers[0].sample_rate, self._stop, late_after=8):
            for r in self.readers:
                r.read_into(self.out)

    def underruns(self) -> int:
        return sum(int(r.underrun_frames) for r in self.readers)

    def stop(self):
        self._stop.set()
        self.th.join(2)
        for r in self.readers:
            r.detach()


async def _capacity(url, slots, step=4, hold_s=3.0, top=96) -> dict:
    """Opus sessions added ``step`` at a time beside the DAW slots (a refused one is not retried)
    until two steps in a row are refused whole (503), or a DAW slot underruns."""
    async with aiohttp.ClientSession() as s:
        for slot in slots[:int(os.environ.get("WB_BENCH_DAW_PLAY", len(slots)))]:
            async with s.post(f"{url}/v1/slots/{slot}/play", json={"prompt": PROMPTS[hash(slot) % 4]}) as r:
                assert r.status == 200, await r.text()
    daw = _DawReaders(slots)
    await asyncio.sleep(2.0)
    u0 = daw.underruns()
    admitted, refused, stop = 0, 0, asyncio.Event()

    async def one(i, c):
        nonlocal admitted, refused
        try:
            async with c.ws_connect(url + "/v1/stream?format=opus") as ws:
                admitted += 1
                await ws.receive_json()
                await ws.send_json({"type": "play", "prompt": PROMPTS[i % 4], "seed": i})
                while not stop.is_set():
                    try:
                        await ws.receive(timeout=0.5)
                    except asyncio.TimeoutError:
                        pass
        except aiohttp.WSServerHandshakeError as e:
            if e.status != 503:
                raise
            refused += 1
            if refused == 1:                  # why (the same check answers a plain GET with its reason)
                async with c.get(url + "/v1/stream") as r:
                    _say(f"capacity: refused: {(await r.text())[:200]}")

    tasks = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as c:
        full = 0                              # steps in a row that admitted nobody
        while admitted < top and full < 2 and daw.underruns() == u0:
            before = admitted
            tasks += [asyncio.create_task(one(len(tasks) + k, c)) for k in range(step)]
            await asyncio.sleep(hold_s)
            full = full + 1 if admitted == before else 0
            _say(f"capacity: {admitted} Opus sessions admitted beside {len(slots)} DAW slots, {refused} refused, "
                 f"DAW underruns {daw.underruns() - u0} frames")
        under = daw.underruns() - u0
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    daw.stop()
    return {"daw_slots": len(slots), "sessions_admitted": admitted, "refused": refused,
            "daw_underrun_frames": under}


def _bench_capacity(args, tmp, quick=False) -> dict:
    n = int(os.environ.get("WB_BENCH_DAW_SLOTS", "2" if quick else "8"))   # 8 DAW slots unless told
    names = [f"bc{os.getpid()}x{k}" for k in range(n)]
    cfg = os.path.join(tmp, "capacity.toml")
    with open(cfg, "w") as f:
        f.write("[engine]\nslot_names = [%s]\n" % ", ".join(f'"{n}"' for n in names))
    d = DaemonProcess("--config", cfg, "--metrics-port", "off", "--http", "127.0.0.1:0", "--state-dir",
                      os.path.join(tmp, "state-capacity"), "--backend", args.backend)
    try:
        return asyncio.run(_capacity("http://%s:%d" % d.http, names, hold_s=2.0 if quick else 3.0,
                                     top=8 if quick else 96))
    finally:
        d.terminate()
        for n in names:
            try:
                os.unlink(shm_path(n))
            except FileNotFoundError:
                pass


def run_http_bench(args) -> int:
    quick = bool(getattr(args, "quick", False))
    price = args.price_per_hour if getattr(args, "price_per_hour", None) is not None else 1.0
    tmp = tempfile.mkdtemp(prefix="wb-bench-http-")
    cfg = os.path.join(tmp, "config.toml")
    with open(cfg, "w") as f:
        f.write(f'[engine]\nslot_names = ["bh{os.getpid()}"]\n')
    res = {"machine": None, "price_per_hour": price}
    res["machine"] = machine_info()
    if getattr(args, "capacity_only", False) or os.environ.get("WB_BENCH_CAPACITY_ONLY"):
        res["capacity_beside_daw"] = _bench_capacity(args, tmp, quick)
        print(json.dumps(res) if getattr(args, "json", False) else f"capacity_beside_daw: {res['capacity_beside_daw']}")
        return 0
    res["opus_encode_cpu_per_stream_s"] = round(_encode_cost("opus"), 5)
    res["mp3_encode_cpu_per_stream_s"] = round(_encode_cost("mp3"), 5)
    _say(f"Opus encode {res['opus_encode_cpu_per_stream_s'] * 1000:.2f} ms CPU per stream-second, "
         f"MP3 {res['mp3_encode_cpu_per_stream_s'] * 1000:.2f} ms")
    d = DaemonProcess("--config", cfg, "--metrics-port", "off", "--http", "127.0.0.1:0", "--state-dir",
                      os.path.join(tmp, "state"), "--price-per-hour", str(price), "--backend", args.backend)
    try:
        url = "http://%s:%d" % d.http
        res.update(asyncio.run(_first_request(url)))     # before anything else touches the web path
        _say(f"first request after start: {res['first_request']}")
        res.update(asyncio.run(_run(url, quick)))
    finally:
        d.terminate()
        try:
            os.unlink(shm_path(f"bh{os.getpid()}"))
        except FileNotFoundError:
            pass
    res["capacity_beside_daw"] = _bench_capacity(args, tmp, quick)
    _say(f"web-stream capacity beside the DAW slots: {res['capacity_beside_daw']}")
    if getattr(args, "json", False):
        print(json.dumps(res))
    else:
        for k, v in res.items():
            if k != "machine":
                print(f"{k}: {v}")
    return 0
