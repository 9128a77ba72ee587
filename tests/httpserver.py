"""Test helpers: a real daemon with its HTTP API on a loopback port, in this process or as a child.

``InProcessServer`` runs ``HttpService`` on its own asyncio loop in a thread, over a ``Daemon``
with uniquely named slots (no ring of another daemon is touched) and a temporary state dir.
"""
from __future__ import annotations

import asyncio
import base64
import io
import json
import secrets
import threading

import numpy as np


class InProcessServer:
    def __init__(self, state_dir, tiers=None, slots=1, storage=None, host="127.0.0.1", price_per_hour=1.0,
                 backend=None, **http_kw):
        from bridge.core.daemon import Config, Daemon
        from bridge.web.app import HttpConfig, HttpService

        self.loop = asyncio.new_event_loop()
        self._t = threading.Thread(target=self.loop.run_forever, name="test-http-loop", daemon=True)
        self._t.start()
        self.names = ["h" + secrets.token_hex(5) for _ in range(slots)]
        self.daemon = Daemon(Config(slot_names=self.names, slots=slots, price_per_hour=price_per_hour),
                             backend=backend)
        self.http = None
        self.daemon.open()
        try:
            self.http = HttpService(self.daemon, HttpConfig(host=host, port=0, state_dir=str(state_dir),
                                                            tiers=tiers or {}, storage=storage,
                                                            price_per_hour=price_per_hour, **http_kw))
            self.host, self.port = self.call(self.http.start())
        except BaseException:
            self.daemon.close()
            raise
        self.url = f"http://{self.host}:{self.port}"

    def call(self, coro, timeout=30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def on_loop(self, fn, *args):
        async def run():
            return fn(*args)
        return self.call(run())

    def close(self):
        try:
            if self.http is not None:
                self.call(self.http.close())
        finally:
            self.daemon.close()
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._t.join(5)


async def ws_connect_busy_aware(session, url: str, tries: int = 20, **kw):
    """``session.ws_connect(url)`` as a client that honours ``503 Retry-After`` does it: a web
    stream is refused while a DAW slot that just started is still building its lead (the DAW comes
    first), and on a loaded machine that takes a moment. Any other refusal is raised."""
    import aiohttp

    for _ in range(tries):
        try:
            return await session.ws_connect(url, **kw)
        except aiohttp.WSServerHandshakeError as e:
            if e.status != 503:
                raise
            wait = float((e.headers or {}).get("Retry-After", 1))
            await asyncio.sleep(min(wait, 2.0))
    raise AssertionError(f"{url}: refused busy {tries} times")


def decode(data: bytes, fmt: str, rate: int = 48000, channels: int = 2) -> tuple[np.ndarray, int, int]:
    """Decode a whole file (PyAV) → (frames × channels float32, sample rate, channels)."""
    if fmt == "pcm_s16le":
        x = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0
        return x.reshape(-1, channels), rate, channels
    import av

    c = av.open(io.BytesIO(data))
    st = c.streams.audio[0]
    out = []
    for fr in c.decode(st):
        a = fr.to_ndarray()
        if fr.format.is_planar:
            a = a.T
        else:
            a = a.reshape(-1, st.channels)
        if a.dtype == np.int16:
            a = a.astype(np.float32) / 32768.0
        out.append(a.astype(np.float32))
    rate_, ch = st.rate, st.channels
    c.close()
    return np.concatenate(out) if out else np.zeros((0, ch), np.float32), rate_, ch


def parse_sse(raw: bytes) -> list[dict]:
    events = []
    for block in raw.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                events.append(json.loads(line[6:]))
    return events


def sse_audio(events: list[dict]) -> bytes:
    return b"".join(base64.b64decode(e["audio"]) for e in events if e.get("event") == "audio_chunk")


def rms_db(x: np.ndarray) -> float:
    return float(20 * np.log10(max(float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))), 1e-9)))
