"""Playing along with a DAW: the LV2 stub's prompt, play and state, and the host's transport.

The console ``jalv`` runs the plugin in a private JACK server (dummy backend); the plugin's
``osc_port`` points at a UDP socket of this test (a free port), which records every datagram
the plugin's worker sends. jalv 1.6's console cannot type a string into a parameter, so the
prompt reaches the plugin the way a host restores it: ``preset URI`` on jalv's stdin (a preset
bundle of the test's own on LV2_PATH) and ``jalv -l DIR`` (a saved state). ``jack_transport``
is the JACK timebase master (tempo, bars, roll/stop). The OSC the plugin sends is decoded by
python-osc, an independent implementation of the encoding.
"""
from __future__ import annotations

import math
import os
import random
import socket
import string
import subprocess
import threading
import time
from pathlib import Path

import pytest

from bridge.core.commands import parse_osc
from plugin_stub.protocol import WavebridgeError

from test_lv2 import (BUILD, RATE, URI, SignalWriter, _need, _stop, build_lv2host, free_slots, header,  # noqa: F401
                      jack_env, lv2_env, wait_until)

PROMPT_URI = URI + "#prompt"


# ------------------------------------------------------------------------------ parsing
def test_transport_and_quantize_parse_into_commands():
    c = parse_osc("/wb/transport", [3, 1.0, 97.0, 4.0, 12, 2.5, 480_000, 960_000], 8)
    assert c.kind == "transport" and c.slot == 3 and c.value == 97.0
    assert c.transport.beat == 12 * 4.0 + 2.5 and c.transport.read_index == 480_000
    assert c.transport.host_frame == 960_000 and c.transport.speed == 1.0
    assert parse_osc("/wb/transport", [3, 0.0, 97.0, 3.0, 0, 0.0, -1], 8).transport.host_frame == -1
    p = parse_osc("/wb/play", [2, "dub techno", 0.0, 5, "bar"], 8)
    assert p.kind == "play" and p.quantize == "bar" and p.seed == 5
    assert parse_osc("/wb/play", [2, "dub techno"], 8).quantize == "off"
    for args, code in [([2, "x", 0.0, 5, "half"], "bad_value"), ([2, "x", 0.0, 5, 3], "bad_type")]:
        with pytest.raises(WavebridgeError) as e:
            parse_osc("/wb/play", args, 8)
        assert e.value.code == code and e.value.slot == 2
    bad = [([1, 1.0, 97.0, 4.0, 0, 0.0], "bad_args"), ([1, 1.0, 900.0, 4.0, 0, 0.0, 0], "bad_value"),
           ([1, 1.0, 97.0, 4.0, -1, 0.0, 0], "bad_value"), ([1, 1.0, 97.0, 4.0, 0, float("nan"), 0], "bad_value"),
           ([1, 1.0, 97.0, 4.0, 0, 0.0, -2], "bad_value"), ([1, "x", 97.0, 4.0, 0, 0.0, 0], "bad_type"),
           ([9, 1.0, 97.0, 4.0, 0, 0.0, 0], "bad_slot")]
    for args, code in bad:
        with pytest.raises(WavebridgeError) as e:
            parse_osc("/wb/transport", args, 8)
        assert e.value.code == code, (args, e.value.code)


# ------------------------------------------------------------------------------ a fake daemon
class OscSink:
    """A UDP socket on a free port that records (monotonic time, address, args)."""

    def __init__(self):
        from pythonosc.osc_message import OscMessage

        self._parse = OscMessage
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.got: list[tuple[float, str, list]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.is_set():
            try:
                data, _ = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                m = self._parse(data)
                item = (time.monotonic(), m.address, list(m.params))
            except Exception as e:  # noqa: BLE001 — recorded, asserted empty by the tests
                self.errors.append(f"{e!r}: {data!r}")
                continue
            with self._lock:
                self.got.append(item)

    def messages(self, address: str | None = None, since: float = 0.0):
        with self._lock:
            return [(t, a, p) for t, a, p in self.got if (address is None or a == address) and t >= since]

    def wait(self, address: str, timeout: float, since: float = 0.0, match=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for t, a, p in self.messages(address, since):
                if match is None or match(p):
                    return p
            time.sleep(0.02)
        raise AssertionError(f"no {address} within {timeout} s; got {self.messages()[-8:]}")

    def close(self):
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def sink():
    s = OscSink()
    yield s
    s.close()
    assert not s.errors, s.errors          # every datagram the plugin sent was valid OSC


# ------------------------------------------------------------------------------ jalv
class Jalv:
    def __init__(self, env, tmp: Path, *args: str):
        self.env = env
        self.client = "wbdaw_" + "".join(random.choices(string.ascii_lowercase, k=6))
        self.out_path = tmp / f"{self.client}.out"
        self._out = open(self.out_path, "wb")
        self.proc = subprocess.Popen(["jalv", "-x", "-n", self.client, *args], stdin=subprocess.PIPE,
                                     stdout=self._out, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until(lambda: f"{self.client}:out_r" in self.ports() or self.proc.poll() is not None,
                       15, "jalv's JACK ports")
            assert self.proc.poll() is None, f"jalv exited: {self.out_path.read_text(errors='replace')}"
        except BaseException:
            self.close()
            raise

    def ports(self) -> str:
        return subprocess.run(["jack_lsp"], env=self.env, capture_output=True, text=True, timeout=10).stdout

    def command(self, line: str):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def close(self) -> str:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _stop(self.proc)
        self._out.close()
        return self.out_path.read_text(errors="replace")


@pytest.fixture
def jalv(jack_env, tmp_path):
    started = []

    def start(*args, env=None):
        j = Jalv(env or jack_env, tmp_path, *args)
        started.append(j)
        return j

    yield start
    for j in started:
        j.close()


def turtle_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_state(directory: Path, prompt: str, ports: dict[str, float], uri: str | None = None):
    """A state bundle like the one a host saves: ``state.ttl`` (port values and the plugin's
    state) and its ``manifest.ttl``. ``uri``: the preset's URI (else the file's)."""
    directory.mkdir(parents=True, exist_ok=True)
    subject = f"<{uri}>" if uri else "<>"
    port_lines = " ,\n\t\t".join(f'[ lv2:symbol "{k}" ; pset:value {float(v)!r} ]' for k, v in ports.items())
    (directory / "state.ttl").write_text(f"""@prefix lv2: <http://lv2plug.in/ns/lv2core#> .
@prefix pset: <http://lv2plug.in/ns/ext/presets#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix state: <http://lv2plug.in/ns/ext/state#> .

{subject}
\ta pset:Preset ;
\tlv2:appliesTo <{URI}> ;
\trdfs:label "test" ;
{f"	lv2:port {port_lines} ;" if ports else ""}
\tstate:state [ <{PROMPT_URI}> {turtle_string(prompt)} ] .
""")
    (directory / "manifest.ttl").write_text(f"""@prefix lv2: <http://lv2plug.in/ns/lv2core#> .
@prefix pset: <http://lv2plug.in/ns/ext/presets#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

{subject if uri else "<state.ttl>"}
\ta pset:Preset ;
\tlv2:appliesTo <{URI}> ;
\trdfs:seeAlso <state.ttl> .
""")


def preset_env(jack_env, tmp_path, presets: dict[str, str]):
    """LV2_PATH with the plugin and a bundle per preset (uri → prompt). The whole preset is in
    the bundle's manifest: jalv's ``preset`` command does not load a preset's seeAlso files."""
    root = tmp_path / "presets"
    for i, (uri, prompt) in enumerate(presets.items()):
        write_state(root / f"p{i}.lv2", prompt, {}, uri=uri)
        (root / f"p{i}.lv2" / "manifest.ttl").write_text((root / f"p{i}.lv2" / "state.ttl").read_text())
        (root / f"p{i}.lv2" / "state.ttl").unlink()
    return dict(jack_env, LV2_PATH=f"{BUILD}:{root}")


def jack_transport(env, *lines: str, pause: float = 0.3):
    """Run jack_transport, feeding it ``lines`` (``sleep N`` waits); returns when it quit."""
    p = subprocess.Popen(["jack_transport"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    try:
        for line in lines:
            if line.startswith("sleep "):
                time.sleep(float(line.split()[1]))
                continue
            p.stdin.write(line.encode() + b"\n")
            p.stdin.flush()
            time.sleep(pause)
        p.stdin.write(b"quit\n")
        p.stdin.close()
        p.wait(timeout=5)
    finally:
        _stop(p)


class TransportMaster:
    """jack_transport kept open as the timebase master; commands go to its stdin."""

    def __init__(self, env):
        self.p = subprocess.Popen(["jack_transport"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env)

    def __call__(self, line: str):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()

    def close(self):
        try:
            self("stop")
            self("quit")
            self.p.stdin.close()
            self.p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        _stop(self.p)


@pytest.fixture
def master(jack_env):
    _need("jack_transport")
    made = []

    def make():
        m = TransportMaster(jack_env)
        made.append(m)
        return m

    yield make
    for m in made:
        m.close()


# ------------------------------------------------------------------------------ prompt, play, state

@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.timeout(60)
def test_prompt_from_a_preset_plays_and_play_off_stops(jalv, jack_env, tmp_path, sink):
    """No prompt: play on sends nothing. A preset gives the prompt: the worker sends /wb/param
    gain then /wb/play with slot, prompt, endless, seed and quantize. A new prompt while on
    replays; play off stops with a short fade."""
    first = "dub techno with a deep chord stab, 118 bpm"
    second = 'jazz trio with "brushes", walking bass'
    env = preset_env(jack_env, tmp_path, {"urn:wavebridge:test:first": first,
                                          "urn:wavebridge:test:second": second})
    j = jalv("-c", "slot=5", "-c", "seed=4242", "-c", "quantize=1", "-c", "gain=0.5",
             "-c", f"osc_port={sink.port}", "-c", "play=1", URI, env=env)
    time.sleep(1.0)
    assert sink.messages() == [], "sent something without a prompt"
    j.command("preset urn:wavebridge:test:first")
    play = sink.wait("/wb/play", 5)
    assert play == [5, first, 0.0, 4242, "beat"]
    param = sink.messages("/wb/param")
    assert [p for _, _, p in param] == [[5, "gain", 0.5]]
    assert param[0][0] <= sink.messages("/wb/play")[0][0]          # gain first, then the job

    t = time.monotonic()
    j.command("preset urn:wavebridge:test:second")
    assert sink.wait("/wb/play", 5, since=t) == [5, second, 0.0, 4242, "beat"]
    t = time.monotonic()
    j.command("set seed 7")
    assert sink.wait("/wb/play", 5, since=t) == [5, second, 0.0, 7, "beat"]
    t = time.monotonic()
    j.command("set play 0")
    assert sink.wait("/wb/stop", 5, since=t) == [5, pytest.approx(0.05)]
    time.sleep(0.5)
    assert len(sink.messages("/wb/play")) == 3 and len(sink.messages("/wb/stop")) == 1   # nothing repeated
    assert not sink.messages("/wb/transport"), "no host transport here, nothing to forward"


@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.timeout(60)
def test_slot_change_moves_the_job(jalv, jack_env, tmp_path, sink):
    env = preset_env(jack_env, tmp_path, {"urn:wavebridge:test:p": "ambient pads in D major"})
    j = jalv("-c", "slot=2", "-c", f"osc_port={sink.port}", "-c", "play=1", URI, env=env)
    j.command("preset urn:wavebridge:test:p")
    assert sink.wait("/wb/play", 5)[:2] == [2, "ambient pads in D major"]
    t = time.monotonic()
    j.command("set slot 3")
    assert sink.wait("/wb/stop", 5, since=t)[0] == 2
    assert sink.wait("/wb/play", 5, since=t)[:2] == [3, "ambient pads in D major"]


@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.timeout(60)
def test_saved_state_plays_the_same_again(jalv, tmp_path, sink):
    """``jalv -l DIR``: the saved prompt, seed, slot, quantize and play come back and the same
    /wb/play is sent, each time the session is reopened."""
    prompt = "lofi hip hop with rhodes, vinyl crackle — 82 bpm"
    state = tmp_path / "session"
    write_state(state, prompt, {"slot": 9, "seed": 31337, "quantize": 2, "play": 1, "osc_port": sink.port})
    sent = []
    for _ in range(2):
        t = time.monotonic()
        j = jalv("-l", str(state))
        sent.append(sink.wait("/wb/play", 5, since=t))
        j.close()
    assert sent[0] == sent[1] == [9, prompt, 0.0, 31337, "bar"]


# ------------------------------------------------------------------------------ host transport
@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.timeout(90)
def test_host_transport_is_forwarded_and_drives_play(jalv, jack_env, tmp_path, sink, master):
    """A JACK timebase master at 97 bpm (the prompt says 120): while it is stopped nothing plays;
    rolling sends /wb/transport then /wb/play; positions follow at a few Hz with the host's bpm,
    bars and the ring frame the plugin read; a tempo change is forwarded at once; stop sends
    /wb/stop."""
    (slot,) = free_slots(1)
    writer = SignalWriter(slot, shift=0)                 # a ring, so read_index is real
    try:
        _transport_scenario(jalv, jack_env, tmp_path, sink, master, slot)
    finally:
        writer.close()


def _transport_scenario(jalv, jack_env, tmp_path, sink, master, slot):
    prompt = "house with piano stabs, 120 bpm"
    state = tmp_path / "session"
    write_state(state, prompt, {"slot": slot, "seed": 3, "play": 1, "osc_port": sink.port})
    m = master()
    m("master")
    m("tempo 97")
    time.sleep(0.3)
    j = jalv("-l", str(state))
    # jalv reports the position on change only, and jack_transport computes bars and tempo only
    # while rolling or on a relocate: relocate once jalv runs
    time.sleep(0.5)
    m("locate 480")
    # the host has bars and a tempo and is stopped: following it, nothing plays yet
    first = sink.wait("/wb/transport", 5, match=lambda p: p[2] == pytest.approx(97.0))
    assert first[1] == 0.0
    time.sleep(0.5)
    # before the host's bars were known the plugin may have played on its own; once it follows
    # a stopped host, nothing plays
    plays, stops = sink.messages("/wb/play"), sink.messages("/wb/stop")
    assert len(plays) <= 1 and len(stops) == len(plays)
    assert not plays or plays[0][0] <= stops[0][0]

    t_roll = time.monotonic()
    m("play")
    play = sink.wait("/wb/play", 5, since=t_roll)
    assert play == [slot, prompt, 0.0, 3, "bar"]
    rolling = [p for _, _, p in sink.messages("/wb/transport", t_roll) if p[1] == 1.0]
    assert rolling, "no rolling position before the play"
    t_play = sink.messages("/wb/play", t_roll)[0][0]
    assert sink.messages("/wb/transport", t_roll)[0][0] <= t_play     # position first, then the job
    time.sleep(2.0)
    pos = [p for _, _, p in sink.messages("/wb/transport", t_roll) if p[1] == 1.0]
    assert 5 <= len(pos) <= 14, f"{len(pos)} positions in ~2 s: expected a few per second"
    for p in pos:
        s, speed, bpm, bpb, bar, bar_beat, read_index, host_frame = p
        assert s == slot and bpm == pytest.approx(97.0) and bpb == 4.0 and 0 <= bar_beat < 4.0
        assert read_index >= 0
    # the positions are one clock: beats advance at 97 bpm over the host's frames, and the ring
    # frames the plugin read advance with them (the writer keeps the ring fed). Exact without
    # load; a loaded machine makes the dummy JACK skip cycles, and jack_transport's bars then
    # lag its frames a little (the plugin reports what the host says)
    a, b = pos[1], pos[-1]
    beats = (b[4] * 4 + b[5]) - (a[4] * 4 + a[5])
    frames = b[7] - a[7]
    assert frames > RATE
    assert beats == pytest.approx(frames * 97.0 / (60.0 * RATE), rel=0.05)
    assert b[6] - a[6] == pytest.approx(frames, rel=0.05)

    t_tempo = time.monotonic()
    m("tempo 131")
    fast = sink.wait("/wb/transport", 3, since=t_tempo, match=lambda p: p[2] == pytest.approx(131.0))
    assert fast[1] == 1.0

    t_stop = time.monotonic()
    m("stop")
    assert sink.wait("/wb/stop", 3, since=t_stop) == [slot, pytest.approx(0.05)]
    sink.wait("/wb/transport", 3, since=t_stop, match=lambda p: p[1] == 0.0)
    time.sleep(0.6)
    late = [p for _, _, p in sink.messages("/wb/transport", t_stop + 0.3)]
    assert len(late) <= 1, "positions keep coming while the transport is stopped"

    t_again = time.monotonic()
    m("play")                                              # rolls on from where it stopped
    again = sink.wait("/wb/play", 5, since=t_again)
    assert again == [slot, prompt, 0.0, 3, "bar"]
    j.close()


@pytest.fixture(scope="module")
def lv2host(lv2_env, tmp_path_factory):
    """tests/lv2host.c built against lilv: a host that types a prompt and saves a session."""
    return build_lv2host(tmp_path_factory)


@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.timeout(60)
def test_prompt_typed_in_a_host_is_saved_and_replayed(lv2host, lv2_env, jalv, tmp_path, sink):
    """patch:Set of the prompt (a host's text field) plays it, patch:Get answers it on notify,
    the host saves the session, and ``jalv -l`` on that session sends the same /wb/play."""
    prompt = "synthwave with gated drums and a 'neon' lead"
    session = tmp_path / "saved"
    session.mkdir()
    out = subprocess.run([str(lv2host), URI, str(session), str(sink.port), "12", prompt], env=lv2_env,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert f"notify prompt={prompt}\n" in out.stdout
    typed = sink.wait("/wb/play", 5)
    assert typed == [12, prompt, 0.0, 0, "bar"]
    saved = (session / "state.ttl").read_text()
    assert "urn:wavebridge:stub#prompt" in saved and '"play"' in saved and '"slot"' in saved
    t = time.monotonic()
    j = jalv("-l", str(session))
    assert sink.wait("/wb/play", 5, since=t) == typed
    j.close()


# ------------------------------------------------------------------------------ end to end
def capture(env, client: str, seconds: float, tmp: Path):
    """jack_capture of the plugin's outputs: (frames, 2) float32."""
    from test_lv2 import read_wav_float

    wav = tmp / f"cap_{time.monotonic_ns()}.wav"
    subprocess.run(["jack_capture", "-as", "-d", str(seconds), "-p", f"{client}:out_l", "-p", f"{client}:out_r",
                    str(wav)], env=env, check=True, timeout=seconds + 20,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    audio = read_wav_float(wav)
    wav.unlink()
    return audio


def beat_strength(audio, bpm_candidates, rate=RATE, hop=256, multiples=4):
    """Autocorrelation of the onset envelope (half-wave rectified energy flux) at the first
    ``multiples`` multiples of each candidate tempo's beat period (best within ±1.5 % each,
    averaged: a beat comb): {bpm: normalised strength}."""
    import numpy as np

    x = audio.mean(axis=1).astype(np.float64)
    n = x.size // hop
    energy = np.log1p(1e3 * (x[:n * hop].reshape(n, hop) ** 2).mean(axis=1))
    flux = np.maximum(0.0, np.diff(energy))
    flux -= flux.mean()
    ac = np.correlate(flux, flux, mode="full")[flux.size - 1:]
    ac /= ac[0] if ac[0] > 0 else 1.0
    out = {}
    for bpm in bpm_candidates:
        vals = []
        for k in range(1, multiples + 1):
            lag = k * 60.0 * rate / bpm / hop
            lo, hi = int(lag * 0.985), int(math.ceil(lag * 1.015))
            vals.append(float(ac[lo:hi + 1].max()))
        out[bpm] = float(np.mean(vals))
    return out


def start_daemon_on_slot_1(daemon_proc, wait_s: float = 30.0, *extra):
    """``serve --slots 1``; while another test's daemon holds ring 1, wait for it (then skip)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return daemon_proc("--slots", "1", "--metrics-port", "off", *extra)
        except RuntimeError as e:
            if "ring_busy" not in str(e) or time.monotonic() > deadline:
                if "ring_busy" in str(e):
                    pytest.skip("slot 1's ring is held by another daemon")
                raise
            time.sleep(1.0)


@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.slow
@pytest.mark.timeout(150)
def test_daemon_follows_the_host_tempo(jalv, jack_env, tmp_path, daemon_proc, master):
    """The real chain: a JACK timebase master at 97 bpm, jalv hosting the stub with a saved
    session whose prompt says 120 bpm, the daemon's synth. The captured audio's beat period is
    the host's (onset autocorrelation: strong at 97 bpm's beat, weaker at 120's), it follows a
    tempo change to 131 bpm, and transport stop silences it."""
    import numpy as np

    d = start_daemon_on_slot_1(daemon_proc, 30.0, "--log-level", "INFO")
    prompt = "house with four on the floor kick, hi hats and bass, 120 bpm"
    state = tmp_path / "session"
    write_state(state, prompt, {"slot": 1, "seed": 5, "play": 1, "osc_port": d.port, "quantize": 0})
    m = master()
    m("master")
    m("tempo 97")
    time.sleep(0.3)
    j = jalv("-l", str(state))
    time.sleep(0.5)
    m("locate 0")
    time.sleep(0.5)
    m("play")
    time.sleep(1.5)
    a = capture(jack_env, j.client, 6.0, tmp_path)
    assert np.abs(a).max() > 0.05, "nothing audible"
    s = beat_strength(a, [97.0, 120.0, 131.0])
    assert s[97.0] > 0.05 and s[97.0] > 1.6 * max(s[120.0], s[131.0]), s

    m("tempo 131")
    # heard within a beat, not after the ring's second: the plugin's next position report (a
    # few Hz), the splice guard, then the next beat — the capture starts 0.6 s after the change
    time.sleep(0.6)
    b = capture(jack_env, j.client, 6.0, tmp_path)
    s = beat_strength(b, [97.0, 120.0, 131.0])
    assert s[131.0] > 0.05 and s[131.0] > 1.6 * max(s[97.0], s[120.0]), s
    retimed = [l for l in d.err_lines if "re-timed" in l]
    assert retimed and "131.00 bpm" in retimed[-1], d.err_lines[-5:]   # restarted at the read head

    m("stop")
    time.sleep(1.0)
    c = capture(jack_env, j.client, 1.0, tmp_path)
    assert np.abs(c).max() < 1e-3, "still playing after the transport stopped"


@pytest.mark.lv2
@pytest.mark.jack
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_midi_out_carries_the_notes_in_time(jalv, jack_env, tmp_path, daemon_proc, osc_client, monkeypatch):
    """``serve --midi-out`` under JACK: the notes of slot 1 arrive on channel 1 of the daemon's
    JACK MIDI output while jalv plays the ring, on the synth's beat grid (kick intervals are whole
    beats at the tempo set), and stop with the audio."""
    import mido
    import numpy as np

    env = dict(jack_env, MIDO_BACKEND="mido.backends.rtmidi/UNIX_JACK")
    d = start_daemon_on_slot_1(lambda *a: daemon_proc(*a, "--midi-out", env=env))
    assert any("MIDI out on" in line for line in d.lines), d.lines
    c = osc_client(d.host, d.port)
    j = jalv("-c", "slot=1", URI)                          # reads the ring; sends nothing (no prompt)
    monkeypatch.setenv("JACK_DEFAULT_SERVER", jack_env["JACK_DEFAULT_SERVER"])   # this process's client
    be = mido.Backend("mido.backends.rtmidi/UNIX_JACK", load=True)
    names = []
    wait_until(lambda: bool(names.extend(n for n in be.get_input_names() if "wavebridge out" in n) or names),
               10, "the daemon's MIDI output port")
    got = []
    port = be.open_input(names[0], callback=lambda m: got.append((time.monotonic(), m)))
    try:
        c.send("/wb/tempo", 100.0)
        c.send("/wb/play", 1, "house with four on the floor kick, hi hats and bass", 0.0, 9)
        assert c.wait_for("/wb/first_audio", 5.0) is not None
        time.sleep(5.0)
        underruns = header(1)["underrun_frames"]
        c.send("/wb/stop", 1)
        assert c.wait_for("/wb/done", 3.0) is not None
        time.sleep(0.5)
        n_at_stop = len(got)
        time.sleep(1.0)
    finally:
        port.close()
    ons = [(t, m) for t, m in got if m.type == "note_on" and m.velocity > 0]
    assert len(ons) >= 20, f"only {len(ons)} notes in 5 s"
    assert {m.channel for _, m in ons} == {0}              # slot 1 → MIDI channel 1
    offs = [m for _, m in got if m.type == "note_off" or (m.type == "control_change" and m.control == 123)]
    assert offs, "no note-off"
    kicks = np.array([t for t, m in ons if m.note in (35, 36)])
    assert kicks.size >= 6, f"{kicks.size} kicks"
    beat = 60.0 / 100.0
    steps = np.diff(kicks) / beat
    off_grid = np.abs(steps - np.round(steps)) * beat
    # a JACK period each way and thread wake-ups on a loaded machine: tens of ms of jitter; and
    # when the ring ran dry the audio stalled, and the notes after it follow the audio, late
    if underruns == 0:
        assert np.median(off_grid) < 0.03 and off_grid.max() < 0.12, f"kick intervals off the beat grid by {off_grid}"
    assert len([1 for _, m in got[n_at_stop:] if m.type == "note_on" and m.velocity > 0]) == 0, \
        "notes after the stop"


@pytest.mark.timeout(90)
def test_quantized_prompt_change_lands_on_the_bar_line(daemon_proc, osc_client):
    """``/wb/play … bar`` on a playing slot (no plugin, no host): the daemon holds it and splices
    it so that the crossfade into the new prompt ends on the playing job's next bar line, to the
    millisecond (120 bpm, 4/4: a bar is 96000 frames from the job's first frame)."""
    from plugin_stub.player import PacedRecorder, attach_when_ready

    d = start_daemon_on_slot_1(daemon_proc)
    c = osc_client(d.host, d.port)
    reader = attach_when_ready(1, max_block=8192)
    rec = PacedRecorder(reader, 8.0, 256)
    t = threading.Thread(target=rec.run, daemon=True)
    t.start()
    try:
        c.send("/wb/tempo", 120.0)
        c.send("/wb/play", 1, "techno with a driving kick and hi hats", 0.0, 1)
        assert c.wait_for("/wb/first_audio", 5.0) is not None
        first = reader.meta()
        start_a = first["start_at"]
        time.sleep(1.3)                                    # into the job's first bar
        sent_at_read = reader.read_index
        c.send("/wb/play", 1, "dub techno with a deep chord stab", 0.0, 2, "bar")
        job_b = c.wait_for("/wb/started", 3.0)[1]
        wait_until(lambda: reader.meta().get("job") == job_b and "splice_at" in reader.meta(), 5,
                   "the quantized change to be spliced")
        m = reader.meta()
    finally:
        rec.stop()
        t.join(timeout=5)
        reader.detach()
    bar = 96000
    xfade = int(0.050 * 48000)
    end = m["splice_at"] + xfade                            # where the new prompt has taken over
    line = start_a + math.ceil((sent_at_read - start_a) / bar) * bar
    assert abs(end - line) <= 48, \
        f"crossfade ends {(end - line) / 48:.1f} ms from the bar line at {line}"
    assert m["splice_at"] - sent_at_read > 0.4 * 48000, "the change was not held for the bar"


class PluginStandIn:
    """The plugin's part for a paced reader of slot 1: a host at ``bpm`` (4/4), ``beat0`` at the
    first ring frame read, reported with ``/wb/transport`` about 4 times a second (every 47th
    256-frame block), tied to the ring frame being read."""

    def __init__(self, d, bpm: float, beat0: float, sr: int = 48000):
        self.d, self.bpm, self.beat0, self.sr = d, bpm, beat0, sr
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.f0 = None

    def beat(self, frame):
        return self.beat0 + (frame - self.f0) * self.bpm / (60.0 * self.sr)

    def report(self, k, rec):
        from bridge.control.osc import build

        ri = int(rec.read_index[k])
        if self.f0 is None:
            self.f0 = ri
        if k % 47 == 0:
            b = self.beat(ri)
            self.tx.sendto(build("/wb/transport", 1, 1.0, self.bpm, 4.0, int(b // 4), float(b % 4), ri, ri),
                           (self.d.host, self.d.port))


@pytest.mark.timeout(90)
def test_quantized_change_lands_on_the_hosts_bar_line(daemon_proc, osc_client):
    """A stand-in for the plugin: a paced reader of slot 1 reports a host at 97 bpm (4/4,
    mid-bar) with ``/wb/transport`` 4 times a second, tied to the ring frames it reads. A
    prompt change with ``bar`` then ends its crossfade exactly on a host bar line."""
    from plugin_stub.player import PacedRecorder, attach_when_ready

    bpm, sr = 97.0, 48000
    d = start_daemon_on_slot_1(daemon_proc)
    c = osc_client(d.host, d.port)
    host = PluginStandIn(d, bpm, 1.3)
    tx, host_beat, report = host.tx, host.beat, host.report
    reader = attach_when_ready(1, max_block=8192)

    rec = PacedRecorder(reader, 10.0, 256)
    t = threading.Thread(target=rec.run, kwargs={"on_block": report}, daemon=True)
    t.start()
    try:
        time.sleep(0.5)
        c.send("/wb/play", 1, "techno with a driving kick and hi hats, 120 bpm", 0.0, 1)
        assert c.wait_for("/wb/first_audio", 5.0) is not None
        time.sleep(1.7)
        c.send("/wb/play", 1, "dub techno with a deep chord stab", 0.0, 2, "bar")
        job_b = c.wait_for("/wb/started", 3.0)[1]
        wait_until(lambda: reader.meta().get("job") == job_b and "splice_at" in reader.meta(), 6,
                   "the quantized change to be spliced")
        m = reader.meta()
    finally:
        rec.stop()
        t.join(timeout=5)
        reader.detach()
        tx.close()
    end = m["splice_at"] + int(0.050 * sr)
    beat = host_beat(end)
    off = (beat - 4 * round(beat / 4)) * 60.0 / bpm       # seconds from the nearest host bar line
    assert abs(off) * sr <= 48, f"the crossfade ends {off * 1000:.1f} ms from the host's bar line"


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_beats_land_on_the_hosts_beats_at_the_read_head(daemon_proc, osc_client):
    """A host at 97 bpm reported over ``/wb/transport`` by a paced reader (the plugin's part),
    a prompt that says 120 bpm: the recorded audio's onsets, folded onto the host's beat (each
    captured frame's host beat is known from the ring frame it came from), pile up at the host's
    beat lines (within 1/16 beat), and the onset period is the host's."""
    import numpy as np

    from plugin_stub.player import PacedRecorder, attach_when_ready

    bpm, sr, block = 97.0, 48000, 256
    d = start_daemon_on_slot_1(daemon_proc)
    c = osc_client(d.host, d.port)
    host = PluginStandIn(d, bpm, 2.6)
    tx, host_beat, report = host.tx, host.beat, host.report
    reader = attach_when_ready(1, max_block=8192)

    rec = PacedRecorder(reader, 9.0, block)
    t = threading.Thread(target=rec.run, kwargs={"on_block": report}, daemon=True)
    t.start()
    try:
        time.sleep(0.5)
        c.send("/wb/play", 1, "techno with a driving kick and hi hats, 120 bpm", 0.0, 4)
        assert c.wait_for("/wb/first_audio", 5.0) is not None
        t.join(timeout=20)
    finally:
        rec.stop()
        t.join(timeout=5)
        reader.detach()
        tx.close()
    audio = rec.audio
    n = rec.blocks_done
    real = rec.real[:n] == block
    start = int(np.argmax(np.abs(audio).max(axis=1) > 1e-4)) // block + 8   # skip the first blocks
    blocks = [k for k in range(start, n) if real[k]]
    assert len(blocks) > 5 * sr // block, "too little audio"
    # onset strength per block: rectified rise of the log energy of the low band (kick)
    x = audio[:n * block].mean(axis=1).reshape(n, block).astype(np.float64)
    low = np.cumsum(x, axis=1)[:, ::32]                  # a crude low-pass: running sums
    energy = np.log1p(1e3 * (np.diff(low, axis=1) ** 2).mean(axis=1))
    flux = np.maximum(0.0, np.diff(energy, prepend=energy[0]))
    phases = np.array([host_beat(rec.read_index[k] + block / 2) % 1.0 for k in blocks])
    w = flux[blocks]
    hist, _ = np.histogram(phases, bins=16, range=(0.0, 1.0), weights=w)
    peak = int(np.argmax(hist))
    assert peak in (0, 15, 1), f"onsets pile up at beat phase {peak}/16, not on the host's beat: {hist.round(1)}"
    assert hist[peak] > 2.0 * np.median(hist), f"no beat-phase peak: {hist.round(1)}"


@pytest.mark.lv2
@pytest.mark.timeout(60)
def test_prompt_size_bounds(lv2host, lv2_env, tmp_path, sink):
    """The plugin's limit is 1024 bytes of UTF-8: such a prompt travels whole (multi-byte
    characters intact); one byte more is refused (nothing sent, the prompt stays empty)."""
    longest = ("é" * 300 + "x" * 1024)[:1024 - 300]            # 300 two-byte characters + ASCII
    assert len(longest.encode()) == 1024
    for prompt, sent in [(longest, True), (longest + "y", False)]:
        session = tmp_path / f"s{len(prompt)}"
        session.mkdir()
        out = subprocess.run([str(lv2host), URI, str(session), str(sink.port), "7", prompt], env=lv2_env,
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        if sent:
            assert sink.wait("/wb/play", 5) == [7, prompt, 0.0, 0, "bar"]
            assert f"notify prompt={prompt}\n" in out.stdout
        else:
            assert "notify prompt=\n" in out.stdout
    time.sleep(0.5)
    assert len(sink.messages("/wb/play")) == 1


def _host_beat(frame, bpm1, change, bpm2):
    """The --play host's beat at output frame ``frame`` (tempo bpm1, then bpm2 from ``change``)."""
    import numpy as np

    f = np.asarray(frame, dtype=np.float64)
    return np.where(f < change, f * bpm1, change * bpm1 + (f - change) * bpm2) / (60.0 * RATE)


def onset_envelope(audio, hop=128):
    """Spectral flux (log magnitude, half-wave rectified, summed), minus its local mean."""
    import numpy as np

    x = audio.mean(axis=1).astype(np.float64)
    n = x.size // hop
    spec = np.log1p(100.0 * np.abs(np.fft.rfft(x[:n * hop].reshape(n, hop) * np.hanning(hop), axis=1)))
    flux = np.maximum(0.0, np.diff(spec, axis=0, prepend=spec[:1])).sum(axis=1)
    return flux - np.convolve(flux, np.ones(64) / 64, mode="same")


def score_position(live, reference, bpm, hop=128):
    """Where in the score ``live`` starts: the ``reference`` (the same score rendered from beat 0
    at ``bpm``) is searched for the best match of the onset envelopes. Returns (score beat at the
    live excerpt's first frame, how far the best match stands above the next best)."""
    import numpy as np

    el, er = onset_envelope(live, hop), onset_envelope(reference, hop)
    xc = np.correlate(er, el, mode="valid")
    k = int(np.argmax(xc))
    others = xc[np.abs(np.arange(xc.size) - k) > 40]
    return k * hop * bpm / (60.0 * RATE), float(xc[k] / max(others.max(), 1e-12))


@pytest.mark.lv2
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_downbeats_land_on_the_host_bar_lines(lv2host, lv2_env, daemon_proc, tmp_path):
    """A DAW transport of the test's own (``lv2host --play``: the stub in real time with a
    time:Position every block, 3/4 at 140 bpm, then 165 bpm from 7 s) and a waltz prompt. The
    plugin's output is matched against the same score rendered offline from its first beat
    (onset envelopes): the score beat heard at a host frame differs from the host's beat there
    by whole bars, within 10 ms — so the downbeats sit on the host's bar lines — before the tempo
    change and from a bar after it, when the beat period is the new tempo's."""
    import numpy as np

    from engine.synth.backend import SynthBackend

    prompt = "waltz with strings and piano"
    d = start_daemon_on_slot_1(daemon_proc, 30.0, "--log-level", "INFO")
    out = tmp_path / "take.f32"
    bpm1, bpm2, at_s, seconds = 140.0, 165.0, 7.0, 14.0
    subprocess.run([str(lv2host), "--play", URI, str(d.port), "1", prompt,
                    str(bpm1), "3", str(seconds), str(out), str(at_s), str(bpm2)],
                   env=lv2_env, check=True, timeout=60, capture_output=True)
    a = np.fromfile(out, np.float32).reshape(-1, 2)
    loud = np.flatnonzero(np.abs(a).max(axis=1) > 1e-3)
    assert loud.size and loud[0] < RATE // 2, "no sound in the first half second"
    change = int(at_s * RATE)
    # the same score (seed 0, as the plugin's default), rendered from its first beat at each tempo
    ref = SynthBackend(pool_size=1, workers=1)
    ref.warmup()
    try:
        for bpm, lo, hi in ((bpm1, RATE, change), (bpm2, change + 2 * RATE, a.shape[0])):
            perf = ref.performance(ref.compose(prompt, 0, None))
            perf.set_bpm(bpm)
            reference = perf.read(40 * RATE)
            perf.close()
            score_beat, clear = score_position(a[lo:hi], reference, bpm)
            host_beat = float(_host_beat(lo, bpm1, change, bpm2))
            off = (host_beat - score_beat + 1.5) % 3.0 - 1.5          # bars: whole multiples of 3
            assert clear > 1.2, (bpm, clear)
            assert abs(off) * 60.0 / bpm < 0.010, (bpm, score_beat, host_beat)   # within 10 ms
    finally:
        ref.close()
    s = beat_strength(a[change + RATE:], [bpm1, bpm2])
    assert s[bpm2] > 1.3 * s[bpm1], s
    retimed = [line for line in d.err_lines if "re-timed" in line]
    assert len(retimed) == 1 and "165.00 bpm" in retimed[0], retimed
