"""The web page in a real headless Chromium (Debian's chromium + chromium-driver, Selenium).

The page loads, lists the slots live, plays a prompt on a slot from its controls, and listens to a
private stream — PCM over the WebSocket into an AudioWorklet, then Opus packets decoded by
WebCodecs' AudioDecoder — and the page's own AnalyserNode must see non-silent audio both times.
Its piano roll draws a playing slot's notes (those of the score's MIDI export) and moves with the
read head; keys held on a Web MIDI keyboard (a fake input the test plays) become the slot's chord,
heard in the ring's audio.
A page of another origin, in the same browser, can neither play into a DAW slot, queue a track,
read status, tracks, audio or the page's token, nor open a WebSocket (``bridge.web.guard``). ``WB_WEB_SCREENSHOT=docs/web.png`` also saves the screenshot there.
"""
from __future__ import annotations

import os
import shutil
import time

import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("av")
selenium = pytest.importorskip("selenium")

from tests.httpserver import InProcessServer  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)

pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium and chromium-driver are not installed "
                                                                   "(scripts/setup installs them)")


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--autoplay-policy=no-user-gesture-required", "--disable-dev-shm-usage",
              "--window-size=1280,800", f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})      # console messages, for _console_errors
    drv = webdriver.Chrome(options=opts, service=Service(DRIVER, log_output=os.devnull))
    drv.set_page_load_timeout(30)
    yield drv
    drv.quit()


def _wait(fn, timeout=20.0, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()


def _console_errors(browser) -> list[dict]:
    """The console's errors since the last call (a failed load, e.g. a missing favicon, is one)."""
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def test_page_lists_slots_plays_and_its_analyser_hears_the_stream(tmp_path, browser):
    from selenium.webdriver.common.by import By

    srv = InProcessServer(tmp_path / "state", slots=2)
    try:
        browser.get(srv.url + "/")
        assert "wavebridge" in browser.title
        rows = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr"))
        names = [r.get_attribute("data-slot") for r in rows]
        assert names[:2] == srv.names
        assert _wait(lambda: browser.find_element(By.ID, "conn").text == "live")

        # a slot's own controls: prompt box + Play
        row = rows[0]
        box = row.find_element(By.CSS_SELECTOR, "input.sprompt")
        box.send_keys("funky disco groove with slap bass, 118 bpm")
        row.find_element(By.CSS_SELECTOR, "button.splay").click()
        assert _wait(lambda: "playing" in row.find_element(By.CSS_SELECTOR, ".state").text), "slot never played"
        assert _wait(lambda: "disco" in row.find_element(By.CSS_SELECTOR, ".prompt").text)

        # listen in the browser: the private stream shows up as a web row and the analyser hears it
        browser.find_element(By.ID, "lplay").click()
        level = _wait(lambda: (browser.execute_script("return window.wbPeakMax") or -120) > -40 and
                      browser.execute_script("return window.wbPeakMax"), timeout=25)
        events = browser.execute_script("return window.wbEvents.map(e => e.type)")
        assert level and level > -40, (level, events, browser.find_element(By.ID, "log").text[:500])
        assert "first_audio" in events
        dom_level = float(browser.find_element(By.ID, "llevel").get_attribute("data-level"))
        assert dom_level > -60
        assert _wait(lambda: any(r.find_elements(By.CSS_SELECTOR, ".badge")
                                 for r in browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr")))
        time.sleep(0.5)
        shot = tmp_path / "web.png"
        browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        dest = os.environ.get("WB_WEB_SCREENSHOT")
        if dest:
            shutil.copy(shot, dest)
        # stop: the stream ends with a done event
        browser.find_element(By.ID, "lstop").click()
        assert _wait(lambda: "done" in browser.execute_script("return window.wbEvents.map(e => e.type)"))
        row.find_element(By.CSS_SELECTOR, "button.sstop").click()
        assert _wait(lambda: "idle" in row.find_element(By.CSS_SELECTOR, ".state").text)
        assert not _console_errors(browser)

        # the JavaScript SSE example of docs/http.md, run in the page as written
        import re

        md = open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "http.md")).read()
        js = next(b for b in re.findall(r"```js\n(.*?)```", md, re.S) if "async function generate" in b)
        js = js.replace("http://127.0.0.1:8137", srv.url)
        size = browser.execute_async_script(js + """
            const done = arguments[arguments.length - 1];
            generate("lofi hip hop with rhodes", 1.5).then(b => done(b.size), e => done("error: " + e));""")
        assert isinstance(size, int) and size > 10_000, size

        # listen again, Opus packets decoded by WebCodecs' AudioDecoder into the same worklet
        from selenium.webdriver.support.ui import Select

        Select(browser.find_element(By.ID, "ltransport")).select_by_value("opus_packets")
        browser.execute_script("window.wbPeakMax = -120; window.wbEvents = [];")
        browser.find_element(By.ID, "lplay").click()
        kinds = "return window.wbEvents.map(e => e.type)"
        # the new socket's ready and first audio first (the level then is this stream's, not a tail of the last)
        assert _wait(lambda: "first_audio" in browser.execute_script(kinds), timeout=25), \
            browser.execute_script(kinds)
        ready = browser.execute_script("return window.wbEvents.filter(e => e.type === 'ready')")
        assert ready and ready[0]["container"] == "none", ready
        browser.execute_script("window.wbPeakMax = -120;")
        level = _wait(lambda: (browser.execute_script("return window.wbPeakMax") or -120) > -40 and
                      browser.execute_script("return window.wbPeakMax"), timeout=25)
        assert level and level > -40, (level, browser.find_element(By.ID, "log").text[:500])
        browser.find_element(By.ID, "lstop").click()
        assert not _console_errors(browser)
    finally:
        srv.close()


def test_page_on_a_locked_server_asks_for_a_key_and_works_with_one(tmp_path, browser):
    from selenium.webdriver.common.by import By

    srv = InProcessServer(tmp_path / "state")
    try:
        key = srv.on_loop(srv.http.store.add_key, "web", "pro")
        browser.get(srv.url + "/")
        assert _wait(lambda: browser.find_element(By.ID, "conn").text == "API key needed")
        assert not browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr")
        browser.get(srv.url + "/#key=" + key)
        browser.refresh()
        assert _wait(lambda: browser.find_element(By.ID, "conn").text == "live")
        time.sleep(0.6)                 # a few status pushes: a key without the admin scope sees no DAW row
        assert not browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr")
        browser.find_element(By.ID, "lplay").click()
        level = _wait(lambda: (browser.execute_script("return window.wbPeakMax") or -120) > -40 and
                      browser.execute_script("return window.wbPeakMax"), timeout=25)
        assert level and level > -40
        rows = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr"))
        assert rows and all(r.find_elements(By.CSS_SELECTOR, ".badge") for r in rows)   # its own stream only
        usage = srv.on_loop(srv.http.store.list_keys)[0]
        assert usage["name"] == "web"
        # the studio's key (scope admin) sees and drives the DAW slots
        admin = srv.on_loop(srv.http.store.add_key, "studio", "pro", "admin")
        browser.get(srv.url + "/#key=" + admin)
        browser.refresh()
        assert _wait(lambda: srv.names[0] in [r.get_attribute("data-slot") for r in
                                              browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr")])
    finally:
        srv.close()


HOSTILE_JS = """
const T = %(target)s, SLOT = %(slot)s, TRACK = %(track)s;
const results = {}; window.results = results;
const settle = (name, p) => p.then(v => { results[name] = v; }, e => { results[name] = "blocked: " + e; });
const wsTry = (path) => new Promise((resolve) => {
  const got = [];
  const ws = new WebSocket(T.replace("http", "ws") + path);
  ws.onopen = () => { got.push("open"); ws.send(JSON.stringify({type: "play", prompt: "hostile ws play"})); };
  ws.onmessage = (e) => got.push(typeof e.data === "string" ? e.data : "binary");
  ws.onerror = () => got.push("error");
  ws.onclose = () => resolve(got);
  setTimeout(() => { try { ws.close(); } catch (e) {} resolve(got); }, 4000);
});
const jobs = [
  settle("post_text_plain", fetch(T + "/v1/slots/" + SLOT + "/play", {method: "POST", mode: "no-cors",
         headers: {"Content-Type": "text/plain"}, body: JSON.stringify({prompt: "hostile text/plain"})})
         .then(r => r.type)),
  settle("post_json_cors", fetch(T + "/v1/slots/" + SLOT + "/play", {method: "POST",
         headers: {"Content-Type": "application/json"}, body: JSON.stringify({prompt: "hostile json"})})
         .then(r => r.status)),
  settle("queue_track", fetch(T + "/v1/tracks", {method: "POST", mode: "no-cors",
         headers: {"Content-Type": "text/plain"}, body: JSON.stringify({prompt: "hostile track", seconds: 1})})
         .then(r => r.type)),
  settle("read_status", fetch(T + "/v1/status").then(r => r.text())),
  settle("read_tracks", fetch(T + "/v1/tracks").then(r => r.text())),
  settle("read_track_audio", fetch(T + "/v1/tracks/" + TRACK + "/audio").then(r => r.arrayBuffer())
         .then(b => b.byteLength)),
  settle("read_page", fetch(T + "/").then(r => r.text())),
  settle("ws_stream", wsTry("/v1/stream?format=pcm_s16le")),
  settle("ws_status", wsTry("/v1/status/ws")),
  settle("audio_element", new Promise((resolve) => {
    const a = new Audio(); a.muted = true;
    a.onloadedmetadata = () => resolve("loaded " + a.duration); a.onerror = () => resolve("error");
    a.src = T + "/v1/tracks/" + TRACK + "/audio"; a.play().catch(() => {});
    setTimeout(() => resolve("timeout"), 4000);
  })),
  settle("form_post", new Promise((resolve) => {
    const f = document.createElement("form");
    f.method = "POST"; f.enctype = "text/plain"; f.target = "sink";
    f.action = T + "/v1/slots/" + SLOT + "/play";
    const i = document.createElement("input"); i.name = '{"prompt":"hostile form","x":"'; i.value = '"}';
    f.appendChild(i); document.body.appendChild(f);
    document.getElementById("sink").onload = () => resolve("submitted");
    f.submit();
    setTimeout(() => resolve("submitted (no load event)"), 3000);
  })),
];
Promise.all(jobs).then(() => { window.hostileDone = true; });
"""


def _hostile_site(js: str):
    """A second origin (another port of 127.0.0.1: same site, another origin) serving one page."""
    import http.server
    import threading

    html = ("<!doctype html><html><head><title>hostile</title></head><body>"
            "<iframe name='sink' id='sink'></iframe><script>" + js + "</script></body></html>").encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = html if self.path == "/" else b""
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def test_a_page_of_another_origin_can_drive_and_read_nothing_while_the_own_page_can(tmp_path, browser):
    """Finding 1/2 of #20 in the browser: a page on another origin (another port of 127.0.0.1) tries
    to play into a DAW slot (text/plain fetch, JSON fetch, a form), queue a track, read status,
    tracks, a track's audio and the page (its token), and open both WebSockets; the daemon sees
    none of it. Then, in the same browser, the project's own page lists, plays and streams."""
    import json
    import urllib.request

    from selenium.webdriver.common.by import By

    srv = InProcessServer(tmp_path / "state", slots=2)
    hostile = None
    try:
        req = urllib.request.Request(srv.url + "/v1/tracks", method="POST",
                                     headers={"Content-Type": "application/json"},
                                     data=json.dumps({"prompt": "a finished track", "seconds": 1.0}).encode())
        track = json.loads(urllib.request.urlopen(req, timeout=10).read())["id"]
        assert _wait(lambda: srv.on_loop(srv.http.store.track, track)["state"] == "done", timeout=30)
        daw = {n for n, s in srv.daemon.slots.items() if not s.private}
        seen, opened = [], []
        submit, open_stream = srv.daemon.submit, srv.http.hub.open

        def spy_submit(cmd, *a, **kw):                 # every command for a DAW slot
            if cmd.slot in daw:
                seen.append(cmd)
            return submit(cmd, *a, **kw)

        def spy_open():                                # every private stream opened
            opened.append(1)
            return open_stream()

        srv.daemon.submit, srv.http.hub.open = spy_submit, spy_open
        tracks_before = srv.on_loop(srv.http.store.queue_depth)

        hostile = _hostile_site(HOSTILE_JS % {"target": json.dumps(srv.url), "slot": json.dumps(srv.names[0]),
                                              "track": json.dumps(track)})
        browser.get(f"http://127.0.0.1:{hostile.server_address[1]}/")
        assert _wait(lambda: browser.execute_script("return window.hostileDone === true"), timeout=30)
        res = browser.execute_script("return window.results")
        for name in ("read_status", "read_tracks", "read_track_audio", "read_page", "post_json_cors"):
            assert str(res[name]).startswith("blocked"), (name, res[name])
        assert res["audio_element"] == "error", res
        assert res["ws_stream"] in (["error"], []) and res["ws_status"] in (["error"], []), res
        assert seen == [] and opened == [], (seen, opened)          # nothing played, no stream opened
        assert srv.on_loop(srv.http.store.queue_depth) == tracks_before    # no track queued
        assert all(r["state"] == "idle" for r in srv.on_loop(srv.daemon.status))
        _console_errors(browser)                                    # the hostile page's refusals

        # the project's own page, same browser: lists the slots, plays one, listens
        browser.get(srv.url + "/")
        rows = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr"))
        assert [r.get_attribute("data-slot") for r in rows][:2] == srv.names
        row = rows[0]
        row.find_element(By.CSS_SELECTOR, "input.sprompt").send_keys("funky disco groove with slap bass")
        row.find_element(By.CSS_SELECTOR, "button.splay").click()
        assert _wait(lambda: "playing" in row.find_element(By.CSS_SELECTOR, ".state").text), "slot never played"
        browser.find_element(By.ID, "lplay").click()
        level = _wait(lambda: (browser.execute_script("return window.wbPeakMax") or -120) > -40 and
                      browser.execute_script("return window.wbPeakMax"), timeout=25)
        assert level and level > -40, (level, browser.execute_script("return window.wbEvents"),
                                       browser.find_element(By.ID, "log").text[:800])
        row.find_element(By.CSS_SELECTOR, "button.sstop").click()
        assert _wait(lambda: "idle" in row.find_element(By.CSS_SELECTOR, ".state").text)
        assert [c.kind for c in seen] == ["play", "stop"] and len(opened) == 1
        assert not _console_errors(browser)
    finally:
        if hostile is not None:
            hostile.shutdown()
        srv.close()


FAKE_MIDI = """
(() => {
  // a USB keyboard for the page's Web MIDI: one input whose messages the test plays
  const input = { id: "kbd1", name: "Test Keys", manufacturer: "wavebridge tests", type: "input",
                  state: "connected", connection: "open", onmidimessage: null };
  const access = { inputs: new Map([["kbd1", input]]), outputs: new Map(), sysexEnabled: false, onstatechange: null };
  let asked = 0;
  Object.defineProperty(Navigator.prototype, "requestMIDIAccess", {
    configurable: true, value: () => { asked += 1; return Promise.resolve(access); } });
  // the site not yet allowed MIDI: a real browser would prompt on requestMIDIAccess
  const query = navigator.permissions.query.bind(navigator.permissions);
  navigator.permissions.query = (d) => (d && d.name === "midi") ? Promise.resolve({ state: "prompt" }) : query(d);
  window.__fakeMidi = {
    asked: () => asked,
    play(msgs) { for (const m of msgs) input.onmidimessage && input.onmidimessage({ data: new Uint8Array(m) }); },
    bound: () => typeof input.onmidimessage === "function",
  };
})();
"""


def _midi_export(score, path, bars):
    """{(part, tick, pitch)} of every note of ``score``'s MIDI export (``wavebridge render --midi``)."""
    import mido

    from engine.midifile import write_midi

    write_midi(score, str(path), bars=bars)
    out = set()
    for k, track in enumerate(mido.MidiFile(str(path)).tracks[1:]):     # track 0: the conductor
        t = 0
        for msg in track:
            t += msg.time
            if msg.type == "note_on" and msg.velocity > 0:
                out.add((k, t, msg.note))
    return out


def test_the_piano_roll_draws_the_slots_score_and_web_midi_keys_steer_the_slot(tmp_path, browser):
    """A DAW slot plays (a host reads its ring in real time): the page's roll draws that slot's
    notes — those of the MIDI export of its prompt and seed — and its playhead moves with the read head;
    a chord held on a (fake) USB keyboard through Web MIDI becomes the slot's chord, in its status
    and in the audio the host reads (chroma); letting go gives the song back."""
    import json
    import urllib.request

    import numpy as np
    from selenium.webdriver.common.by import By

    from engine.compose import compose
    from engine.compose.chordread import parse_symbol
    from tests.test_chord_daemon import heard_from, share
    from tests.test_web_roll import PROMPT, SEED, LiveReader

    srv = InProcessServer(tmp_path / "state", slots=2)
    rd = None
    try:
        name = srv.names[0]
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FAKE_MIDI})
        req = urllib.request.Request(srv.url + f"/v1/slots/{name}/play", method="POST",
                                     headers={"Content-Type": "application/json"},
                                     data=json.dumps({"prompt": PROMPT, "seed": SEED}).encode())
        assert json.loads(urllib.request.urlopen(req, timeout=10).read())["slot"] == name
        rd = LiveReader(name, keep=True)
        browser.get(srv.url + "/")
        drawn = lambda: browser.execute_script(f"return window.__wbRoll[{json.dumps(name)}] || null")  # noqa: E731
        first = _wait(lambda: (d := drawn()) and len(d["notes"]) > 10 and d)
        assert first, browser.find_element(By.ID, "log").text[:500]
        # the notes drawn are the score's, as its MIDI export has them (the prompt and seed the slot
        # plays, 16 bars): none that the file lacks, none of the file's in the drawn window left out
        score = compose(PROMPT, seed=SEED)
        export = _midi_export(score, tmp_path / "score.mid", bars=16)
        tick = lambda b: max(0, int(round(b * 480)))  # noqa: E731
        got = {(n["part"], tick(n["start_beat"]), n["pitch"]) for n in first["notes"] if n["dur_beats"] > 0}
        assert first["right"] < 16 * score.beats_per_bar
        assert got <= export, sorted(got - export)[:5]
        lo, hi = max(first["left"], first["from_beat"]), min(first["right"], first["to_beat"])
        want = {(p, t, k) for p, t, k in export if tick(lo) <= t < tick(hi)}
        assert len(want) > 10 and want <= got, sorted(want - got)[:5]
        drums = {i for i, p in enumerate(score.parts) if p.is_drums}
        assert {n[0] for n in got} & drums and {n[0] for n in got} - drums     # drums in their lane, and the rest
        # it moves with the read head: the drawn playhead, and the read head's beat it was polled at (the
        # next poll waited for, not a fixed sleep: a loaded CI machine's next poll came after 0.6 s)
        later = _wait(lambda: (d := drawn()) and d["playhead_beat"] > first["playhead_beat"]
                      and d["polled_beat"] > first["polled_beat"] and d, timeout=10)
        assert later and later["playhead_beat"] > first["playhead_beat"] and later["polled_beat"] > first["polled_beat"]
        assert later["bpm"] == pytest.approx(score.bpm)
        roll = browser.find_element(By.CSS_SELECTOR, f'.roll[data-slot="{name}"]')
        assert roll.find_element(By.CSS_SELECTOR, ".rbar").text.startswith("bar ")
        assert "composed" in roll.find_element(By.CSS_SELECTOR, ".rchord").text

        # Web MIDI: not asked for at load (a browser prompts for it), only when the button is clicked
        pill = browser.find_element(By.ID, "midi")
        assert _wait(lambda: pill.text == "MIDI: click to connect"), pill.text
        assert browser.execute_script("return window.__fakeMidi.asked()") == 0
        pill.click()
        # then the indicator names the keyboard and the slot; an F# major chord held on it
        assert _wait(lambda: browser.execute_script("return window.__fakeMidi.bound()"))
        assert browser.execute_script("return window.__fakeMidi.asked()") == 1
        assert _wait(lambda: browser.find_element(By.ID, "midi").text == f"MIDI: Test Keys → slot {name}"), \
            browser.find_element(By.ID, "midi").text
        assert _wait(lambda: rd.chunks and rd.read_index > rd.chunks[0][0] + 2 * rd.sr)   # 2 s of the song first
        sent_at = rd.read_index
        browser.execute_script("window.__fakeMidi.play([[0x90, 54, 96], [0x90, 58, 90], [0x90, 61, 90], [0x90, 66, 80]])")
        slot = srv.daemon.slots[name]
        assert _wait(lambda: slot.chord == "F#", timeout=5), slot.chord
        sent = browser.execute_script("return window.__wbMidi.sent")
        assert [s["notes"] for s in sent] == [[54, 58, 61, 66]], sent       # one POST for the chord (debounced)
        status = json.loads(urllib.request.urlopen(srv.url + "/v1/status", timeout=5).read())
        assert [r["chord"] for r in status["slots"] if r["slot"] == name] == ["F#"]
        assert _wait(lambda: "F#" in roll.find_element(By.CSS_SELECTOR, ".rchord").text)
        # … and the host hears it: F# A# C# from a beat or so after the keys
        _wait(lambda: rd.read_index > sent_at + 3 * rd.sr, timeout=10)
        released_at = rd.read_index
        browser.execute_script("window.__fakeMidi.play([[0x80, 54, 0], [0x80, 58, 0], [0x90, 61, 0], [0x80, 66, 0]])")
        assert _wait(lambda: slot.chord == "", timeout=5), slot.chord
        _wait(lambda: rd.read_index > released_at + 3 * rd.sr, timeout=10)
        audio, start = rd.take()
        pcs = parse_symbol("F#").pcs
        at, off = sent_at - start, released_at - start
        heard = heard_from(audio, pcs, at)
        assert heard is not None and heard - at < 1.5 * rd.sr, (heard, at)
        c, v = share(audio, pcs)
        assert np.median(v[(c > at - 2 * rd.sr) & (c < at)]) < 0.35               # C major before
        assert np.median(v[(c > heard + rd.sr // 4) & (c < off)]) >= 0.6          # F# major while held
        assert np.median(v[c > off + 1.5 * rd.sr]) < 0.35                         # the song's own after
        assert [s["notes"] for s in browser.execute_script("return window.__wbMidi.sent")][-1] == []
        assert not _console_errors(browser)
    finally:
        if rd is not None:
            rd.close()
        srv.close()
