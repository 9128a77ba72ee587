"""The piano roll and chords over HTTP (``bridge.web.roll``), without a browser.

A real daemon core with its HTTP API in this process (``tests.httpserver``), its own ring names,
and a reader that plays a DAW slot's ring in real time, as a host would. ``GET
/v1/slots/{slot}/roll`` must give the notes of the slot's score around the read head — the same
notes the composer writes for that prompt and seed — and a playhead that moves with the read head
(compared in frames, never in wall-clock time); ``POST /v1/slots/{slot}/chord`` steers the slot
like ``/wb/chord`` and ``/wb/keys``; a bad chord is 400; and both routes are refused to another
origin, to a cross-site request and to a key that is not the studio's. The page's side is
``tests/test_web_browser.py``.
"""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("av")

from tests.httpserver import InProcessServer  # noqa: E402
from tests.polling import wait  # noqa: E402
from tests.test_web_origin import EVIL, Spy, request  # noqa: E402

PROMPT = "pop with piano chords, bass, a warm pad and drums in C major at 120 bpm"
SEED = 3


class LiveReader:
    """Reads a ring in real time on a thread (a host's audio callback), from when it starts."""

    def __init__(self, name, block=1024, keep=False):
        from plugin_stub.reader import RingReader

        self.keep = keep                # keep what it read: [(ring frame, block)]
        self.r = RingReader(name, max_block=block).attach()
        self.block, self.sr = block, self.r.sample_rate
        self.stop_ = threading.Event()
        self.chunks = []
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _ready(self):
        r = self.r
        end = time.monotonic() + 10
        while not self.stop_.is_set() and time.monotonic() < end:
            if r.playing and r.buffered() >= self.block:
                return True
            time.sleep(0.002)
        return False

    def _run(self):
        self._ready()                   # from the first audio on, as play_live does (no underrun)
        t0, n = time.monotonic(), 0
        while not self.stop_.is_set():
            lag = t0 + n * self.block / self.sr - time.monotonic()
            if lag > 0:
                time.sleep(lag)
            if not self._ready():
                break
            if self.keep:
                self.chunks.append((self.r.read_index, self.r.read(self.block).copy()))
            else:
                self.r.read(self.block)
            n += 1

    @property
    def read_index(self):
        return self.r.read_index

    def take(self):
        """(audio read so far, the ring frame of its first frame)."""
        import numpy as np

        chunks = list(self.chunks)
        return np.concatenate([c for _, c in chunks]), chunks[0][0]

    def close(self):
        self.stop_.set()
        self.t.join(2)
        self.r.detach()


@pytest.fixture
def srv(tmp_path):
    s = InProcessServer(tmp_path / "state", slots=2)
    s.spy = Spy(s.daemon)
    yield s
    s.close()


def get_json(srv, path, headers=None):
    import json

    st, _, raw = request("GET", srv.url + path, headers)
    return st, json.loads(raw)


def post_json(srv, path, body, headers=None):
    import json

    st, _, raw = request("POST", srv.url + path, headers, body)
    return st, json.loads(raw)


def playing(srv, name):
    """Play PROMPT on DAW slot ``name`` with a live reader; returns the reader once the roll answers."""
    st, j = post_json(srv, f"/v1/slots/{name}/play", {"prompt": PROMPT, "seed": SEED})
    assert st == 200, j
    rd = LiveReader(name)
    assert wait(lambda: get_json(srv, f"/v1/slots/{name}/roll")[0] == 200, 15), get_json(srv, f"/v1/slots/{name}/roll")
    return rd


def test_the_roll_is_the_scores_notes_around_the_read_head_and_moves_with_it(srv):
    from engine.compose import compose

    name = srv.names[0]
    rd = playing(srv, name)
    try:
        assert wait(lambda: rd.read_index > 2 * rd.sr, 10)          # two seconds in: notes behind and ahead
        st, a = get_json(srv, f"/v1/slots/{name}/roll?ahead=8&behind=1.5")
        assert st == 200, a
        time.sleep(0.5)
        st, b = get_json(srv, f"/v1/slots/{name}/roll?ahead=8&behind=1.5")
        assert st == 200, b
    finally:
        rd.close()
    score = compose(PROMPT, seed=SEED)                             # what the composer writes for it
    assert a["slot"] == name and a["bpm"] == pytest.approx(score.bpm) and a["beats_per_bar"] == score.beats_per_bar
    assert a["key"] == score.key_name and a["chord"] == "" and a["reader_alive"]
    assert [p["name"] for p in a["parts"]] == [p.name for p in score.parts]
    assert [p["is_drums"] for p in a["parts"]] == [p.is_drums for p in score.parts]
    assert [p["program"] for p in a["parts"]] == [p.program for p in score.parts]
    # the window: 1.5 s behind and 8 s ahead of the playhead, in beats at the score's tempo
    per_s = score.bpm / 60.0
    assert a["from_beat"] == pytest.approx(a["playhead_beat"] - 1.5 * per_s) and a["from_beat"] > 0
    assert a["to_beat"] == pytest.approx(a["playhead_beat"] + 8 * per_s)
    for r in (a, b):
        want = [(n.part, n.start, n.dur, n.pitch, n.vel) for n in score.notes_between(r["from_beat"], r["to_beat"])]
        got = [(n["part"], n["start_beat"], n["dur_beats"], n["pitch"], n["vel"]) for n in r["notes"]]
        assert got == want and len(got) > 20
        assert any(a["parts"][n[0]]["is_drums"] for n in got) and not all(a["parts"][n[0]]["is_drums"] for n in got)
    # the playhead is the read head's beat: it moved as many beats as the read head moved frames
    moved = b["read_frame"] - a["read_frame"]
    assert moved > 0
    assert b["playhead_beat"] - a["playhead_beat"] == pytest.approx(moved / a["sample_rate"] * per_s, abs=1e-6)
    beat_at_read = (a["read_frame"] - a["start_frame"]) / a["sample_rate"] * per_s
    assert a["playhead_beat"] == pytest.approx(beat_at_read, abs=1e-6)
    assert a["bar"] == int(a["playhead_beat"] // a["beats_per_bar"]) + 1
    # the engine's own score of the job is the same piece
    job_score = srv.daemon.slots[name].job.stream.state.score
    assert [(n.start, n.pitch) for n in job_score.notes_between(a["from_beat"], a["to_beat"])] == \
        [(n["start_beat"], n["pitch"]) for n in a["notes"]]


def test_the_roll_goes_compressed_to_a_client_that_takes_it(srv):
    import gzip
    import json
    import urllib.request

    name = srv.names[0]
    rd = playing(srv, name)
    try:
        url = srv.url + f"/v1/slots/{name}/roll?ahead=8&behind=4"
        with urllib.request.urlopen(urllib.request.Request(url), timeout=5) as r:      # no Accept-Encoding
            plain_enc, plain = r.headers.get("Content-Encoding"), r.read()
        req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=5) as r:
            gz_enc, gz = r.headers.get("Content-Encoding"), r.read()
    finally:
        rd.close()
    assert plain_enc is None and gz_enc == "gzip"
    a, b = json.loads(plain), json.loads(gzip.decompress(gz))
    assert a["slot"] == b["slot"] == name and len(b["notes"]) > 20
    assert len(gz) * 3 < len(plain), (len(gz), len(plain))     # measured: 34.6 KB → 8.6 KB


def test_chords_and_keys_over_http_steer_the_slot_and_a_bad_chord_is_400(srv):
    name = srv.names[0]
    slot = srv.daemon.slots[name]
    rd = playing(srv, name)
    try:
        st, j = post_json(srv, f"/v1/slots/{name}/chord", {"chord": "f#m7"})
        assert st == 200 and j == {"slot": name, "chord": "F#m7"}, j
        assert wait(lambda: slot.chord == "F#m7", 5)
        assert wait(lambda: get_json(srv, f"/v1/slots/{name}/roll")[1].get("chord") == "F#m7", 5)
        # once spliced, the roll is the steered score's: F# A C# E over the bass and the chords
        from bridge.web.roll import private_score

        assert wait(lambda: srv.daemon.slots[name].job.stream.state.score.make_bar.__self__.harmony, 5)
        time.sleep(1.0)
        st, r = get_json(srv, f"/v1/slots/{name}/roll?ahead=4&behind=0")
        steered = private_score(srv.daemon.slots[name].job.stream.state.score)
        assert [(n["part"], n["start_beat"], n["pitch"]) for n in r["notes"]] == \
            [(n.part, n.start, n.pitch) for n in steered.notes_between(r["from_beat"], r["to_beat"])]
        roles = {p["index"]: p["role"] for p in r["parts"]}
        voiced = [n["pitch"] % 12 for n in r["notes"] if roles[n["part"]] in ("chords", "pad", "bass")]
        assert len(voiced) > 4 and sum(pc in (6, 9, 1, 4) for pc in voiced) >= 0.8 * len(voiced), voiced
        assert [r["chord"] for r in get_json(srv, "/v1/status")[1]["slots"] if r["slot"] == name] == ["F#m7"]
        # keys held (a keyboard through Web MIDI): named as a chord; none held gives the song back
        st, j = post_json(srv, f"/v1/slots/{name}/chord", {"notes": [57, 50, 54]})
        assert st == 200 and j == {"slot": name, "notes": [50, 54, 57]}, j
        assert wait(lambda: slot.chord == "D", 5), slot.chord
        st, _ = post_json(srv, f"/v1/slots/{name}/chord", {"notes": []})
        assert st == 200 and wait(lambda: slot.chord == "", 5)
        st, _ = post_json(srv, f"/v1/slots/{name}/chord", {"chord": "Bb", "quantize": "bar"})
        assert st == 200 and wait(lambda: slot.chord == "Bb", 5)
        st, _ = post_json(srv, f"/v1/slots/{name}/chord", {"chord": ""})
        assert st == 200 and wait(lambda: slot.chord == "", 5)
        before = len(srv.spy.commands)
        for body, reason in [({"chord": "H#9zz"}, "bad_chord"), ({"chord": "C" * 40}, "bad_chord"),
                             ({"chord": 7}, "bad_chord"), ({"notes": [300]}, "bad_request"),
                             ({"notes": [60.5]}, "bad_request"), ({"notes": [True]}, "bad_request"),
                             ({"notes": list(range(40, 60))}, "bad_request"), ({"notes": "C"}, "bad_request"),
                             ({}, "bad_request"), ({"chord": "C", "notes": [60]}, "bad_request"),
                             ({"chord": "C", "quantize": "soon"}, "bad_request")]:
            st, j = post_json(srv, f"/v1/slots/{name}/chord", body)
            assert st == 400 and j["reason"] == reason, (body, st, j)
        assert len(srv.spy.commands) == before                     # nothing bad reached the daemon
        assert post_json(srv, "/v1/slots/nope/chord", {"chord": "C"})[0] == 404
        assert get_json(srv, "/v1/slots/nope/roll")[0] == 404
        # the page's poll of a stream that just ended: 200 "gone", no console error
        st, j = get_json(srv, "/v1/slots/nope/roll?idle=ok")
        assert st == 200 and j["playing"] is False and j["reason"] == "gone", j
        assert get_json(srv, f"/v1/slots/{name}/roll?ahead=-1")[0] == 400
        assert get_json(srv, f"/v1/slots/{name}/roll?behind=nan")[0] == 400
        assert slot.state == "playing"
    finally:
        rd.close()


def test_the_roll_reads_a_private_copy_of_the_composer_that_writes_the_same_bars():
    """The web side makes its bars on a copy of the composer, so the engine's section plans and
    bar cache are never touched from the control thread — and the copy's bars are the engine's."""
    from bridge.web.roll import private_score
    from engine.compose import compose
    from engine.compose.chordread import parse_symbol
    from engine.compose.composer import composer_of, steer

    for score in (compose(PROMPT, seed=SEED), steer(compose(PROMPT, seed=SEED), 6.0, parse_symbol("Ebm7"), (3, "minor"))):
        c = composer_of(score)
        sections, key = dict(c._sections), (c.key_root, c.scale)
        own = private_score(score)
        assert composer_of(own) is not c and own is not score
        notes = own.notes_between(0.0, 64.0)
        assert c._sections == sections and (c.key_root, c.scale) == key and not score._cache   # untouched
        assert notes == score.notes_between(0.0, 64.0) and len(notes) > 100


def test_an_idle_slot_or_a_backend_without_a_score_has_no_roll(srv, tmp_path):
    st, j = get_json(srv, f"/v1/slots/{srv.names[1]}/roll")
    assert st == 409 and j["reason"] == "not_playing", j
    st, j = get_json(srv, f"/v1/slots/{srv.names[1]}/roll?idle=ok")      # the page's poll: no console error
    assert st == 200 and j["playing"] is False and j["reason"] == "not_playing", j
    from tests.test_chord_daemon import ScorelessBackend

    s = InProcessServer(tmp_path / "state2", slots=1, backend=ScorelessBackend())
    try:
        assert post_json(s, f"/v1/slots/{s.names[0]}/play", {"prompt": "anything"})[0] == 200
        rd = LiveReader(s.names[0])
        try:
            assert wait(lambda: get_json(s, f"/v1/slots/{s.names[0]}/roll")[1].get("reason") == "no_score", 10)
        finally:
            rd.close()
    finally:
        s.close()


def test_roll_and_chord_are_refused_across_origins_and_to_keys_that_are_not_the_studios(srv, tmp_path):
    name = srv.names[0]
    roll, chord = f"/v1/slots/{name}/roll", f"/v1/slots/{name}/chord"
    # another origin, before any handler
    for h in ({"Origin": EVIL}, {"Origin": "null"}, {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"}):
        assert request("POST", srv.url + chord, h, {"chord": "C"})[0] == 403
        assert request("GET", srv.url + roll, h)[0] == 403
    # a foreign <img>/<script> sends no Origin but says cross-site; a foreign Host is misdirected
    for site in ("cross-site", "same-site"):
        h = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors"}
        assert request("GET", srv.url + roll, h)[0] == 403
        assert request("POST", srv.url + chord, h, {"chord": "C"})[0] == 403
    assert request("GET", srv.url + roll, {"Host": "evil.example"})[0] == 421
    assert request("POST", srv.url + chord, {"Host": f"evil.example:{srv.port}"}, {"chord": "C"})[0] == 421
    # a form post (no JSON) is refused too
    assert request("POST", srv.url + chord, {"Content-Type": "text/plain"}, data=b'{"chord": "C"}')[0] == 415
    # a browser page of this origin without the page token is the local user, not the admin
    page = {"Origin": srv.url, "Sec-Fetch-Site": "same-origin"}
    st, _, raw = request("POST", srv.url + chord, page, {"chord": "C"})
    assert st == 403 and b"local admin" in raw
    assert request("GET", srv.url + roll, page)[0] == 403
    tok = srv.http.guard.token
    assert request("POST", srv.url + chord, {**page, "X-Wavebridge-Token": tok}, {"chord": "C"})[0] == 200
    assert [c.kind for c in srv.spy.commands] == ["chord"]
    # keys: one without the admin scope neither sees nor steers a DAW slot; the studio's does
    user = srv.on_loop(srv.http.store.add_key, "user", "pro")
    admin = srv.on_loop(srv.http.store.add_key, "studio", "pro", "admin")
    assert request("GET", srv.url + roll)[0] == 401                 # keys exist now: one is needed
    assert request("POST", srv.url + chord, {"Authorization": f"Bearer {user}"}, {"chord": "C"})[0] == 403
    assert request("GET", srv.url + roll, {"Authorization": f"Bearer {user}"})[0] == 403
    assert request("POST", srv.url + chord, {"Authorization": f"Bearer {admin}"}, {"chord": "D"})[0] == 200
    assert request("GET", srv.url + roll, {"Authorization": f"Bearer {admin}"})[0] == 409   # idle
    assert [c.chord for c in srv.spy.commands] == ["C", "D"]


def test_a_private_stream_has_a_roll_for_its_owner_only(srv):
    """A web stream's slot: its owner's key sees its roll and steers it; another key gets 404."""
    import asyncio
    import json

    import aiohttp

    a = srv.on_loop(srv.http.store.add_key, "a", "pro")
    b = srv.on_loop(srv.http.store.add_key, "b", "pro")
    out = {}

    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(srv.url + f"/v1/stream?format=pcm_s16le&key={a}") as ws:
                await ws.send_json({"type": "play", "prompt": PROMPT, "seed": SEED})
                name = None
                end = time.monotonic() + 15
                while time.monotonic() < end:
                    msg = await ws.receive(timeout=5)
                    if msg.type == aiohttp.WSMsgType.TEXT:
                        m = json.loads(msg.data)
                        if m.get("type") == "first_audio":
                            break
                rows = [r for r in (await (await s.get(srv.url + "/v1/status", headers={"Authorization": f"Bearer {a}"})).json())["slots"]
                        if r["private"]]
                assert rows, "no private row"
                name = rows[0]["slot"]
                h = {"Authorization": f"Bearer {a}"}
                for _ in range(100):
                    r = await s.get(srv.url + f"/v1/slots/{name}/roll", headers=h)
                    out["own"] = (r.status, await r.json())
                    if r.status == 200:
                        break
                    await ws.receive(timeout=1)
                r = await s.get(srv.url + f"/v1/slots/{name}/roll", headers={"Authorization": f"Bearer {b}"})
                out["other"] = r.status
                r = await s.post(srv.url + f"/v1/slots/{name}/chord", json={"chord": "E"}, headers={"Authorization": f"Bearer {b}"})
                out["other_chord"] = r.status
                r = await s.post(srv.url + f"/v1/slots/{name}/chord", json={"chord": "E"}, headers=h)
                out["own_chord"] = r.status
                out["name"] = name
                for _ in range(200):
                    if srv.daemon.slots.get(name) is not None and srv.daemon.slots[name].chord == "E":
                        break
                    await ws.receive(timeout=1)
                out["chord"] = srv.daemon.slots[name].chord
    asyncio.run(go())
    st, j = out["own"]
    assert st == 200 and j["notes"] and j["slot"] == out["name"], (st, j)
    assert out["other"] == 404 and out["other_chord"] == 404
    assert out["own_chord"] == 200 and out["chord"] == "E"
