"""The web page in a real headless Chromium (Debian's chromium + chromium-driver, Selenium).

The page loads, lists the slots live, plays a prompt on a slot from its controls, and listens to a
private stream — PCM over the WebSocket into an AudioWorklet, then Opus packets decoded by
WebCodecs' AudioDecoder — and the page's own AnalyserNode must see non-silent audio both times. ``WB_WEB_SCREENSHOT=docs/web.png`` also saves the screenshot there.
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
        level = _wait(lambda: (browser.execute_script("return window.wbPeakMax") or -120) > -40 and
                      browser.execute_script("return window.wbPeakMax"), timeout=25)
        ready = browser.execute_script("return window.wbEvents.filter(e => e.type === 'ready')")
        assert ready and ready[0]["container"] == "none", ready
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
        assert _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#slots tbody tr"))
        browser.find_element(By.ID, "lplay").click()
        level = _wait(lambda: (browser.execute_script("return window.wbPeakMax") or -120) > -40 and
                      browser.execute_script("return window.wbPeakMax"), timeout=25)
        assert level and level > -40
        usage = srv.on_loop(srv.http.store.list_keys)[0]
        assert usage["name"] == "web"
    finally:
        srv.close()
