"""``GET /v1/stream``: a live session over a WebSocket (see ``docs/http.md``).

JSON ``play``/``param``/``stop`` in (a token bucket per session, 20 a second in bursts of 40, and
one per key shared by its sessions: ``bridge.web.admission.MessageLimit``; refusals are answered
at most once a second and a session that keeps flooding is closed with 1008), binary audio
(Ogg/Opus pages, s16le PCM with ``?format=pcm_s16le``, or one bare Opus packet per
message with ``?format=opus_packets``) and JSON events out. One :class:`LiveSession` per socket
holds the session's :class:`~bridge.web.lease.StreamLease`; its receive loop runs in the handler,
its sender (events, then real-time audio, then the periodic bill, key and quota check) in one task.
The stream is admitted (``StreamLease``: headroom, free slots) before the upgrade, so a refusal is
a plain HTTP 503. The sender reads no audio while the socket holds more than
``admission.SEND_BUFFER_MAX`` unsent, and a client that takes nothing for ``admission.STALL_S``
is closed (1008), its slot freed; a revoked key's session is closed (1008) within a second.
On the ``[control]`` loop; encoding on the pool's worker threads.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time

from aiohttp import WSMsgType, web

from bridge.core.commands import MAX_FADE_S
from bridge.web import admission
from bridge.web.admission import CLOSE, NOTICE, OK, KeyWatch, MessageLimit, backlog, bound_send_buffer
from bridge.web.api import CONFIG, DAEMON, MAX_BODY, ApiError, format_of, number_of, prompt_of, seed_of
from bridge.web.auth import AUTH
from bridge.web.encoding import Encoder, PacketEncoder
from bridge.web.lease import STREAMS, StreamLease
from bridge.web.store import seconds_to_utc_midnight
from bridge.web.stream import StreamError, error_reason
from plugin_stub.protocol import WavebridgeError

log = logging.getLogger("wavebridge.http")

WS_FORMATS = ("opus", "pcm_s16le", "opus_packets")


def _encoder(fmt: str, s):
    return PacketEncoder(s.rate, s.channels) if fmt == "opus_packets" else Encoder(fmt, s.rate, s.channels)


async def ws_stream(request: web.Request) -> web.WebSocketResponse:
    """``GET /v1/stream``: admit, upgrade, then one :class:`LiveSession` until the socket closes. ``[control]``"""
    auth = request.app[AUTH]
    p = auth.identify(request)
    fmt = format_of(request.query.get("format", "opus"), WS_FORMATS)
    auth.admit(p, 0.0)
    # the lease first: no headroom or no free slot is a plain HTTP 503, before any upgrade
    with request.app[STREAMS].lease(auth, p, lambda s: _encoder(fmt, s), realtime=True) as lease:
        # audio does not deflate: no per-message compression (its CPU is the engine's)
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_BODY, compress=False)
        await ws.prepare(request)
        bound_send_buffer(request.transport)
        await LiveSession(request.app, ws, lease, fmt, request.transport).run()
    return ws


class LiveSession:
    """One live WebSocket session: its lease, its message limit, its key watch, its sender task. ``[control]``"""

    def __init__(self, app: web.Application, ws: web.WebSocketResponse, lease: StreamLease, fmt: str,
                 transport=None):
        self.daemon = app[DAEMON]
        self.auth = app[AUTH]
        self.pool = app[STREAMS].pool
        self.send_timeout_s = min(app[CONFIG].send_timeout_s, admission.STALL_S)
        self.ws, self.lease, self.fmt = ws, lease, fmt
        self.transport = transport
        self.stream = lease.stream
        self.p = lease.p
        self.limit = MessageLimit(app[STREAMS].key_buckets.of(self.p.key_id))
        self.key = KeyWatch(self.auth.store, self.p.key_id)

    async def run(self) -> None:
        """Greet, take commands until the socket closes, then end the sender and release. ``[control]``"""
        s = self.stream
        await self.ws.send_json({"type": "ready", "format": self.fmt, "sample_rate": s.rate, "channels": s.channels,
                                 "container": {"opus": "ogg", "opus_packets": "none"}.get(self.fmt, "raw"),
                                 **({"codec": "opus", "frame_ms": 20} if self.fmt == "opus_packets" else {})})
        sender = asyncio.get_running_loop().create_task(self._sender())
        try:
            await self._receive()
        finally:
            self.lease.uncount()              # before any await: a reconnect finds the slot free
            sender.cancel()
            try:
                await sender
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
            self.lease.release()              # the sender has ended: nothing encodes any more
            if not self.ws.closed:
                await self.ws.close()

    # ------------------------------------------------------------------ in: commands
    async def _receive(self) -> None:
        async for msg in self.ws:
            if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                if msg.type == WSMsgType.ERROR:
                    break
                continue
            verdict = self.limit.take()          # before any parsing: a flood costs a bucket check
            if verdict == CLOSE:
                log.info("WebSocket session of %s keeps flooding (%d messages refused); closing",
                         self.p.name, self.limit.refused)
                await self._close(b"too many messages")
                break
            if verdict != OK:
                if verdict == NOTICE:            # at most one reply a second to refused messages
                    await self.ws.send_json({"type": "error", "reason": "bad_request", "code": "rate_limited",
                                             "message": f"too many messages; at most {admission.SESSION_RATE:g} "
                                                        "a second (refused ones get no reply)"})
                continue
            if not self.key.check():
                await self._revoked()
                break
            if msg.type == WSMsgType.BINARY:
                await self._bad("send JSON text messages, not binary")
                continue
            try:
                await self.command(msg.data)
            except (asyncio.CancelledError, ConnectionError):   # the client went away mid-reply
                raise
            except Exception as e:  # noqa: BLE001 — the session (and the daemon) go on
                log.exception("WebSocket command failed")
                await self.ws.send_json({"type": "error", "reason": "internal",
                                         "message": f"internal error: {type(e).__name__}"})

    def _bad(self, message: str):
        return self.ws.send_json({"type": "error", "reason": "bad_request", "message": message})

    async def _revoked(self) -> None:
        """The session's key was revoked: stop its audio and close with 1008. ``[control]``"""
        if self.ws.closed:
            return
        log.info("API key %s was revoked; closing its WebSocket session", self.p.name)
        self.stream.stop(0.0)
        await self._close(b"API key revoked")

    async def _close(self, message: bytes, abort: bool = False) -> None:
        """Close with 1008, waiting at most a second for the client's close frame; then (or with
        ``abort`` always, even when the handler's teardown cancels us here) drop the connection
        with whatever it holds unsent. ``[control]``"""
        done = False
        try:
            async with asyncio.timeout(1.0):
                await self.ws.close(code=1008, message=message, drain=False)
                done = True
        except (TimeoutError, ConnectionError, RuntimeError):
            pass
        finally:
            if (abort or not done) and self.transport is not None:
                self.transport.abort()

    async def command(self, text: str) -> None:
        """One JSON text message (already past the rate limit): ``play``, ``param`` or ``stop``; errors
        are answered as events. ``[control]``"""
        try:
            m = json.loads(text)
        except (ValueError, RecursionError):
            await self._bad("not valid JSON")
            return
        if not isinstance(m, dict):
            await self._bad("a message is a JSON object with a 'type'")
            return
        kind = m.get("type")
        try:
            if kind == "play":
                await self._play(m)
            elif kind == "param":
                await self._param(m)
            elif kind == "stop":
                self.stream.stop(number_of(m, "fade_s", 0.0, MAX_FADE_S, default=0.05))
            else:
                await self._bad(f"unknown type {str(kind)[:40]!r}; known: play, param, stop")
        except ApiError as e:
            await self.ws.send_json({"type": "error", "reason": e.reason, "message": e.message})
        except WavebridgeError as e:
            await self.ws.send_json({"type": "error", "reason": "busy" if e.code == "busy" else "bad_request",
                                     "message": e.message})

    async def _play(self, m: dict) -> None:
        p, s = self.p, self.stream
        prompt = prompt_of(m)
        seconds = number_of(m, "seconds", 0.0, float(p.limits["max_request_s"]) if m.get("seconds") else 1e9,
                            default=0.0)
        seed = seed_of(m)
        if self.auth.used_today(p) + self.lease.frames / s.rate - self.lease.billed_frames / s.rate \
                >= float(p.limits["audio_s_per_day"]):
            await self.ws.send_json({"type": "error", "reason": "quota", "message": "daily allowance used up",
                                     "retry_after": seconds_to_utc_midnight()})
            return
        job = s.play(prompt, seconds, seed)
        await self.ws.send_json({"type": "started", "job": job, "prompt": prompt})

    async def _param(self, m: dict) -> None:
        name = m.get("name")
        params = self.daemon.params()
        if not isinstance(name, str) or name not in params:
            await self._bad(f"unknown parameter; known: {', '.join(sorted(params))}")
            return
        lo, hi = params[name][:2]
        self.stream.param(name, number_of(m, "value", lo, hi, required=True))

    # ------------------------------------------------------------------ out: events and audio
    async def _sender(self) -> None:
        try:
            await self._send_loop()
        except (asyncio.CancelledError, ConnectionError):   # the client went away (reset, "Connection lost")
            raise
        except Exception:  # noqa: BLE001 — end this session cleanly, never the server
            log.exception("WebSocket sender failed")
            await self.ws.close(code=1011, message=b"internal error")

    async def _send_loop(self) -> None:
        loop = asyncio.get_running_loop()
        s, ws = self.stream, self.ws
        last_bill = time.monotonic()
        while not ws.closed:
            await self._send_events()
            if not await self._room():
                return
            try:
                a = await s.read_realtime(s.rate // 4)
            except StreamError:
                continue              # already sent as an error event
            self.lease.frames = s.frames_read
            if a.shape[0]:
                data = await loop.run_in_executor(self.pool, self.lease.enc.push, a)
                if data and not await self._send_audio(data):
                    return
            now = time.monotonic()
            if now - last_bill > 1.0:
                last_bill = now
                if not self.key.check(force=True):
                    await self._revoked()
                    return
                await self._bill_and_check_quota()

    async def _room(self) -> bool:
        """Wait while the socket holds more than ``SEND_BUFFER_MAX`` unsent (no audio is read
        meanwhile: the ring fills and the engine stops making it); False (and the socket
        closed) once the client has taken nothing for ``STALL_S``. ``[control]``"""
        if backlog(self.transport) <= admission.SEND_BUFFER_MAX:
            return True
        t0 = time.monotonic()
        while backlog(self.transport) > admission.SEND_BUFFER_MAX:
            if self.ws.closed:
                return False
            if time.monotonic() - t0 > self.send_timeout_s:
                await self._cut_off()
                return False
            await asyncio.sleep(0.1)
        return True

    async def _cut_off(self) -> None:
        """Close the socket of a client that stopped reading: a close frame if it still fits, then
        the connection dropped with what it holds unsent (it would never be read). ``[control]``"""
        log.info("WebSocket client stopped reading for %.0f s; closing", self.send_timeout_s)
        await self._close(b"client too slow", abort=True)

    async def _send_events(self) -> None:
        s = self.stream
        while not s.events.empty():
            ev = s.events.get_nowait()
            if ev.kind == "first_audio" and ev.job in s.jobs:
                info = s.jobs[ev.job]
                await self.ws.send_json({"type": "first_audio", "job": ev.job, "ms": round(ev.ms, 2),
                                         "frame": info["first_frame"]})
            elif ev.kind == "done" and ev.job in s.jobs:
                x = ev.extra
                await self.ws.send_json({"type": "done", "job": ev.job, "reason": x.get("reason", ""),
                                         "compute_seconds": round(float(x.get("compute_s", 0.0)), 6)})
            elif ev.kind == "error" and ev.code != "not_playing":
                await self.ws.send_json({"type": "error", "reason": error_reason(ev.code), "code": ev.code,
                                         "message": ev.message})

    async def _send_audio(self, data) -> bool:
        """Send encoded audio; False (and the socket closed) if the client stopped reading."""
        try:
            async with asyncio.timeout(self.send_timeout_s):   # no task per send
                if isinstance(data, list):          # opus_packets: one packet per message
                    for pkt in data:
                        await self.ws.send_bytes(pkt)
                else:
                    await self.ws.send_bytes(data)
        except TimeoutError:
            await self._cut_off()
            return False
        return True

    async def _bill_and_check_quota(self) -> None:
        self.lease.bill()
        allowance = float(self.p.limits["audio_s_per_day"])
        if self.auth.store.usage(self.p.key_id)["audio_s"] >= allowance and self.stream.reader.playing:
            self.stream.stop(0.05)
            await self.ws.send_json({"type": "error", "reason": "quota", "message": "daily allowance used up",
                                     "retry_after": seconds_to_utc_midnight()})
