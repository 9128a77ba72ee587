"""A slot's music around its read head, and chords played into it: the page's piano roll and Web MIDI.

``GET /v1/slots/{slot}/roll?ahead=8&behind=4`` is what the slot plays around its read head: the
score's notes starting from ``behind`` seconds before the read head to ``ahead`` seconds after it
(in beats), the playhead's beat and bar, the tempo, the parts, the chord a player steers it with.
``?idle=ok`` answers "nothing to show" with 200 ``{"playing": false, "reason": …}`` instead of 409 (a
page that polls). ``POST /v1/slots/{slot}/chord`` with ``{"chord": "Am7/G"}`` or ``{"notes": [50, 54, 57]}`` (the
keys held now; ``""`` / ``[]`` releases) submits what OSC's ``/wb/chord`` / ``/wb/keys`` would.

Which slots: a DAW slot for the local admin only (as ``/v1/status`` shows them, and as
``/v1/slots/{slot}/play`` drives them); a private web stream for whoever may see it there (its
owner, the admin). Everything else is as every route: ``bridge.web.guard`` checks Host and Origin first.

Where the roll comes from (synth backend): the playing job's performance (``job.stream.state``)
holds its :class:`~engine.score.Score` and its tempo map; ``hostlink.start_at[slot]`` is the ring
frame of the job's frame 0, so the ring's read head is a stream frame
(:func:`engine.hostsync.stream_frame`) and that a beat. Those objects are the engine thread's:
the tempo map and the fields are only read here (a read racing the engine sees the old or the new
value; one that fails is answered 409 and the page asks again). The composer's bars are *made*
on a private copy of the score's composer (:func:`private_score`), never on the engine's: its
section plans and bar cache are the engine's, filled and emptied as it renders, and stay so. A
backend without a score (musicgen) is 409 ``no_score``. ``[control]``
"""
from __future__ import annotations

import math
import time

from aiohttp import web

from bridge.core.commands import parse_osc
from bridge.web.api import DAEMON, ApiError, read_json
from bridge.web.auth import AUTH
from bridge.web.lease import STREAMS
from bridge.web.slots import visible_streams
from engine.hostsync import stream_frame
from plugin_stub.protocol import WavebridgeError

__all__ = ["ROLLS", "RollCache", "private_score", "roll", "slot_chord"]

MAX_WINDOW_S = 60.0          # ahead / behind at most
MAX_NOTES = 4000             # notes in one answer at most (the window's first ones)
MAX_KEYS = 16                # as /wb/keys


class RollCache:
    """Per slot: the score last seen and its private copy (made once per score). ``[control]``"""

    def __init__(self):
        self.scores: dict = {}      # slot name → (the engine's score, its private copy)

    def copy_of(self, name, score):
        hit = self.scores.get(name)
        if hit is not None and hit[0] is score:
            return hit[1]
        own = private_score(score)
        self.scores[name] = (score, own)
        if len(self.scores) > 256:                   # slots come and go (web streams): forget the oldest
            self.scores.pop(next(iter(self.scores)))
        return own


ROLLS = web.AppKey("wavebridge.rolls", RollCache)


def setup(app: web.Application) -> None:
    """Give ``app`` its roll cache. ``[control]``"""
    app[ROLLS] = RollCache()


def private_score(score):
    """``score`` with bars made by a copy of its composer (own section plans, own bar cache), so
    that reading it from the control thread never touches the engine's composer; a score that is
    not the composer's (a test's, a file's) is returned as it is. ``[control]``"""
    from engine.compose.composer import Composer, detached

    if not isinstance(getattr(score.make_bar, "__self__", None), Composer):
        return score
    return detached(score)


# ---------------------------------------------------------------------- which slot
def _resolve(request: web.Request, admin_for_daw: bool = True):
    """(slot key, principal) of ``{slot}`` as the request's principal may reach it: a DAW slot for
    the admin only (403), a private stream if it may see it (else 404). ``[control]``"""
    d, auth = request.app[DAEMON], request.app[AUTH]
    p = auth.identify(request)
    name = request.match_info["slot"]
    for n, s in list(d.slots.items()):
        if str(n) != name:
            continue
        if s.private:
            if name in visible_streams(request.app[STREAMS].streams, p):
                return n, p
            break
        if admin_for_daw and not p.admin:
            auth.identify_admin(request)             # raises the DAW slots' 403
        return n, p
    raise ApiError(404, "bad_request", f"no slot {name[:40]!r}")


def _seconds(request: web.Request, key: str, default: float) -> float:
    v = request.query.get(key)
    if v is None or v == "":
        return default
    try:
        x = float(v)
    except ValueError:
        raise ApiError(400, "bad_request", f"{key} must be a number of seconds") from None
    if not math.isfinite(x) or not 0.0 <= x <= MAX_WINDOW_S:
        raise ApiError(400, "bad_request", f"{key} must be 0..{MAX_WINDOW_S:g} seconds")
    return x


# ---------------------------------------------------------------------- the roll
def roll_of(daemon, name, ahead_s: float, behind_s: float, cache: RollCache | None = None) -> dict:
    """The roll of slot ``name`` (see the module); raises ApiError 409 when nothing with a score
    plays there (``not_playing``, ``no_score``). ``[control]``"""
    slot = daemon.slots.get(name)
    if slot is None:
        raise ApiError(404, "bad_request", f"no slot {str(name)[:40]!r}")
    job = slot.sm.job
    if job is None or job.done:
        raise ApiError(409, "not_playing", f"slot {name} plays nothing")
    perf = getattr(job.stream, "state", None)
    score, tempo = getattr(perf, "score", None), getattr(perf, "tempo", None)
    if score is None or tempo is None or not hasattr(score, "notes_between"):
        raise ApiError(409, "no_score", f"the {daemon.backend.name} backend has no score to show")
    origin = daemon.engine.hostlink.start_at.get(slot.name)
    if origin is None or origin[0] != job.job:
        raise ApiError(409, "not_playing", f"slot {name}: its first audio is not in the ring yet")
    ring = slot.ring
    rr, sr = int(ring.sample_rate), int(daemon.backend.sample_rate)
    read = int(ring.read_index)
    f = stream_frame(read, origin[1], rr, sr)
    beat = tempo.beat_at(f)
    bpm = tempo.bpm_at(f)
    b0 = max(0.0, tempo.beat_at(f - behind_s * sr))
    b1 = max(b0, tempo.beat_at(f + ahead_s * sr))
    own = cache.copy_of(slot.name, score) if cache is not None else private_score(score)
    notes = own.notes_between(b0, b1)[:MAX_NOTES]
    bpb = float(score.beats_per_bar)
    return {
        "slot": name, "playing": True, "job": job.job, "prompt": job.prompt,
        "bpm": bpm, "beats_per_bar": bpb, "meter": f"{score.meter[0]}/{score.meter[1]}",
        "read_frame": read, "start_frame": int(origin[1]), "sample_rate": rr,
        "reader_alive": _reader_alive(ring),
        "playhead_beat": beat, "bar": int(math.floor(max(beat, 0.0) / bpb)) + 1 if bpb > 0 else 1,
        "from_beat": b0, "to_beat": b1,
        "chord": slot.chord, "key": slot.chord_key or score.key_name,
        "parts": [{"index": i, "name": p.name, "role": p.role, "is_drums": bool(p.is_drums), "program": int(p.program)}
                  for i, p in enumerate(score.parts)],
        "notes": [{"part": n.part, "start_beat": n.start, "dur_beats": n.dur, "pitch": n.pitch, "vel": n.vel}
                  for n in notes],
    }


def _reader_alive(ring) -> bool:
    try:
        return time.monotonic_ns() - ring.reader_heartbeat_ns < 1_000_000_000
    except Exception:  # noqa: BLE001
        return False


async def roll(request: web.Request) -> web.Response:
    """``GET /v1/slots/{slot}/roll?ahead=8&behind=4``. ``[control]``"""
    try:
        name, _ = _resolve(request)
    except ApiError as e:
        # a page polling the roll of a web stream that has just ended (or one it may not see: the
        # same answer, so nothing is told) gets a 200 with idle=ok, not a 404 its console logs
        if e.status != 404 or request.query.get("idle") != "ok":
            raise
        return web.json_response({"playing": False, "reason": "gone", "message": "no such slot (now)"},
                                 headers={"Cache-Control": "no-store"})
    ahead, behind = _seconds(request, "ahead", 8.0), _seconds(request, "behind", 4.0)
    d = request.app[DAEMON]
    try:
        try:
            body = roll_of(d, name, ahead, behind, request.app.get(ROLLS))
        except ApiError:
            raise
        except Exception as e:  # noqa: BLE001 — the engine moved under us: ask again
            raise ApiError(409, "not_playing", f"slot {name}: changing ({type(e).__name__}); try again") from None
    except ApiError as e:
        if e.status != 409 or request.query.get("idle") != "ok":
            raise
        # a page polling the roll asks for 200 here: a browser logs every 409 as a console error
        body = {"slot": name, "playing": False, "reason": e.reason, "message": e.message}
    resp = web.json_response(body, headers={"Cache-Control": "no-store"})
    resp.enable_compression()      # gzip/deflate where the client takes it: 20–35 KB of JSON a poll, a quarter of it so
    return resp


# ---------------------------------------------------------------------- chords
def chord_command(body: dict, slot):
    """The body's chord (``chord``: a symbol, ``quantize`` optional) or keys (``notes``) as the
    Command OSC's ``/wb/chord`` / ``/wb/keys`` makes; raises ApiError 400. ``[control]``"""
    has_chord, has_notes = "chord" in body, "notes" in body
    if has_chord == has_notes:
        raise ApiError(400, "bad_request", 'give one of "chord" (a symbol, "" releases) or "notes" '
                                           '(MIDI note numbers held, [] releases)')
    try:
        if has_chord:
            sym = body["chord"]
            if not isinstance(sym, str):
                raise ApiError(400, "bad_chord", "chord must be a string")
            args = [1, sym]
            if body.get("quantize") is not None:
                if not isinstance(body["quantize"], str):
                    raise ApiError(400, "bad_request", "quantize must be beat, bar or off")
                args.append(body["quantize"])
            cmd = parse_osc("/wb/chord", args, 1)
            cmd.source = "http"
        else:
            notes = body["notes"]
            if not isinstance(notes, list) or any(isinstance(n, bool) or not isinstance(n, int) for n in notes):
                raise ApiError(400, "bad_request", "notes must be a list of MIDI note numbers (integers 0..127)")
            if len(set(notes)) > MAX_KEYS:
                raise ApiError(400, "bad_request", f"at most {MAX_KEYS} keys at once")
            cmd = parse_osc("/wb/keys", [1, *sorted(set(notes))], 1)
    except WavebridgeError as e:
        raise ApiError(400, "bad_chord" if e.code == "bad_chord" else "bad_request", e.message) from None
    cmd.slot = slot                                   # validated for "slot 1": it is this one
    return cmd


async def slot_chord(request: web.Request) -> web.Response:
    """``POST /v1/slots/{slot}/chord``: ``{"chord": "Am7/G"}`` or ``{"notes": [50, 54, 57]}``. ``[control]``"""
    name, _ = _resolve(request)
    body = await read_json(request)
    cmd = chord_command(body, name)
    try:
        request.app[DAEMON].submit(cmd)
    except WavebridgeError as e:
        raise ApiError(503 if e.code == "busy" else 400, "bad_request", e.message) from None
    out = {"slot": name}
    if "notes" in body:
        out["notes"] = list(cmd.notes)
    else:
        out["chord"] = cmd.chord
    return web.json_response(out)
