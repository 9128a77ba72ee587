"""MIDI: the map, message → Command mapping without a device, and a real MIDI source through JACK."""
from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import threading
import time

import mido
import pytest

from bridge.core.commands import parse_osc
from bridge.control.midi import DEFAULT_BANKS, MidiInput, MidiMap, MidiMapError, MidiMapper, note_number
from plugin_stub.protocol import WavebridgeError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JACK = "mido.backends.rtmidi/UNIX_JACK"


def on(note, vel=100, ch=1):
    return mido.Message("note_on", channel=ch - 1, note=note, velocity=vel)


def off(note, ch=1):
    return mido.Message("note_off", channel=ch - 1, note=note)


def cc(num, value, ch=1):
    return mido.Message("control_change", channel=ch - 1, control=num, value=value)


def kinds(cmds):
    return [(c.kind, c.slot) for c in cmds]


def mapper(data=None, nslots=4):
    m = MidiMap.default() if data is None else MidiMap.from_dict(data)
    return MidiMapper(m, nslots)


# ------------------------------------------------------------------ the map file
def test_note_names_follow_c4_is_60():
    assert note_number("C4") == 60
    assert note_number("A4") == 69
    assert note_number("C-1") == 0 and note_number("G9") == 127
    assert note_number("F#2") == note_number("Gb2") == 42
    assert note_number(61) == 61
    for bad in ("H2", "C10", "", 128, -1, True, 1.5):
        with pytest.raises(MidiMapError):
            note_number(bad)


def test_the_example_map_loads_and_fits_a_default_daemon():
    from bridge.core.commands import COMMON_PARAMS

    m = MidiMap.load(os.path.join(ROOT, "examples", "midi-map.toml"))
    assert m.mode == "gate" and m.source.endswith("midi-map.toml")
    assert m.notes and m.cc and len(m.banks) == 2
    assert m.check(8, dict(COMMON_PARAMS)) == []
    assert m.check(2, dict(COMMON_PARAMS)), "slot 4 does not exist in a 2-slot daemon"


@pytest.mark.parametrize("data, words", [
    ({"mood": "gate"}, "unknown key"),
    ({"mode": "hold"}, "mode"),
    ({"note": [{"note": "X9", "slot": 1, "prompt": "a"}]}, "note name"),
    ({"note": [{"note": 60, "slot": 1}]}, "prompt"),
    ({"note": [{"note": 60, "slot": 99, "prompt": "a"}]}, "slot"),
    ({"note": [{"note": 60, "slot": 1, "prompt": "x" * 600}]}, "limit"),
    ({"note": [{"note": 60, "slot": 1, "prompt": "bell\x07"}]}, "control"),
    ({"cc": [{"cc": 1}]}, "param"),
    ({"cc": [{"cc": 200, "param": "gain"}]}, "control change"),
    ({"cc": [{"cc": 1, "param": "gain", "min": 0, "max": 1, "curve": "log"}]}, "above 0"),
    ({"channels": {"17": 1}}, "channel"),
    ({"velocity": {"min": "loud"}}, "number"),
    ({"bank": [{"name": "empty", "prompts": []}]}, "non-empty"),
])
def test_bad_maps_are_refused_with_the_key_named(data, words):
    with pytest.raises(MidiMapError) as e:
        MidiMap.from_dict(data)
    assert words in e.value.message
    assert e.value.code == "bad_midi_map"


@pytest.mark.parametrize("data, key, expected", [
    # a wrong type
    ({"clock_tempo": "yes"}, "clock_tempo", "true or false"),
    ({"fade_s": "slow"}, "fade_s", "a number 0..30"),
    ({"velocity": 3}, "velocity", "true or false or a table"),
    ({"velocity": {"enabled": 1}}, "velocity.enabled", "true or false"),
    ({"note": [{"note": 60, "slot": "one", "prompt": "a"}]}, "note[0].slot", "a slot 1..64"),
    ({"notes": [{"note": 60, "slot": 1, "prompt": "a", "seed": 1.5}]}, "notes[0].seed", "an integer"),
    ({"cc": [{"cc": 7, "param": "gain", "channel": "ten"}]}, "cc[0].channel", "a MIDI channel 1..16"),
    ({"bank": [{"prompts": ["a", 3]}]}, "bank[0].prompts[1]", "a string"),
    ({"channels": {"x": 1}}, "channels: key 'x'", "a MIDI channel 1..16"),
    ({"cc": 7}, "cc", "an array of tables"),
    # out of range
    ({"seconds": -1}, "seconds", "0..86400"),
    ({"base_note": 128}, "base_note", "0..127"),
    ({"velocity": {"curve": 50}}, "velocity.curve", "0.05..20"),
    ({"cc": [{"cc": 120, "param": "gain"}]}, "cc[0].cc", "0..119"),
    ({"cc": [{"cc": 7, "param": "gain", "slot": 65}]}, "cc[0].slot", "a slot 1..64 or \"all\""),
    ({"channels": {"0": 1}}, "channels: key 0", "1..16"),
    ({"channels": {"2": 65}}, "channels.2", "a slot 1..64"),
    ({"note": [{"note": 60, "slot": 1, "prompt": "a", "channel": 17}]}, "note[0].channel", "1..16"),
    ({"velocity": {"max": float("inf")}}, "velocity.max", "a finite number"),
    # unknown keys, at the top and in every kind of table
    ({"channel": {"1": 1}}, "'channel'", "known: bank, banks"),
    ({"velocity": {"maximum": 1}}, "velocity.maximum", "known: curve, enabled, max, min, param"),
    ({"note": [{"note": 60, "slot": 1, "prompt": "a"}, {"note": 61, "slot": 1, "prompt": "b", "sead": 3}]},
     "note[1].sead", "known: channel, note, prompt, seconds, seed, slot"),
    ({"cc": {"cc": 7, "param": "gain", "curv": "log"}}, "cc.curv", "known: cc, channel, curve"),
    ({"bank": [{"title": "x", "prompts": ["a"]}]}, "bank[0].title", "known: name, prompts"),
])
def test_wrong_type_out_of_range_and_unknown_keys_are_refused_naming_the_key(data, key, expected):
    with pytest.raises(MidiMapError) as e:
        MidiMap.from_dict(data)
    assert key in e.value.message and expected in e.value.message, e.value.message
    assert e.value.code == "bad_midi_map"


def test_a_single_table_is_an_array_of_one_and_defaults_fill_in():
    m = MidiMap.from_dict({"note": {"note": "C4", "slot": 2, "prompt": "  soft   piano "},
                           "cc": {"cc": 20, "param": "tempo", "slot": "all"},
                           "channels": {"3": 2}, "bank": {"prompts": ["x"]}, "velocity": {"curve": 2}})
    assert [(n.note, n.slot, n.prompt, n.channel) for n in m.notes] == [(60, 2, "soft piano", None)]
    assert [(c.cc, c.param, c.lo, c.hi, c.slot) for c in m.cc] == [(20, "tempo", 60.0, 180.0, "all")]
    assert m.channels == {3: 2} and m.banks == [("bank 0", ["x"])]
    assert (m.velocity, m.velocity_param, m.velocity_min, m.velocity_max, m.velocity_curve) == (True, "gain", 0.25, 1.0, 2.0)
    d = MidiMap.from_dict({})
    assert [c.cc for c in d.cc] == [c.cc for c in MidiMap.default().cc] and d.banks == MidiMap.default().banks


def test_a_broken_file_names_the_file(tmp_path):
    p = tmp_path / "map.toml"
    p.write_text("mode = gate\n")                          # not TOML (unquoted string)
    with pytest.raises(MidiMapError) as e:
        MidiMap.load(str(p))
    assert str(p) in e.value.message
    with pytest.raises(MidiMapError):
        MidiMap.load(str(tmp_path / "missing.toml"))


# ------------------------------------------------------------------ message → Command
def test_default_map_channel_n_plays_slot_n_with_a_bank_prompt_and_velocity_gain():
    mp = mapper()
    cmds = mp.translate(on(48, 127, ch=1))
    assert kinds(cmds) == [("param", 1), ("play", 1)]
    gain, play = cmds
    assert gain.name == "gain" and gain.value == pytest.approx(1.0)
    assert play.prompt == DEFAULT_BANKS[0][1][0]
    assert play.source == "midi" and play.seconds == 0.0
    # the same Command the OSC adapter makes from the same request
    want = parse_osc("/wb/play", [1, DEFAULT_BANKS[0][1][0], 0.0], 4)
    assert (play.kind, play.slot, play.prompt, play.seconds, play.seed) == \
           (want.kind, want.slot, want.prompt, want.seconds, want.seed)
    # next key, next prompt; channel 3 → slot 3; channel 9 has no slot in a 4-slot daemon
    assert mp.translate(on(49, 100, ch=3))[1].prompt == DEFAULT_BANKS[0][1][1]
    assert mp.translate(on(49, 100, ch=3))[1].slot == 3
    assert mp.translate(on(60, 100, ch=9)) == []
    assert mp.stats["unmapped"] == 1
    # keys wrap around the bank
    n = len(DEFAULT_BANKS[0][1])
    assert mp.translate(on(48 + n, 100, ch=2))[1].prompt == DEFAULT_BANKS[0][1][0]


def test_velocity_maps_monotonically_into_the_configured_range():
    mp = mapper({"velocity": {"min": 0.2, "max": 0.9, "curve": 2.0}})
    gains = [mp.translate(on(60, v))[0].value for v in (1, 32, 64, 100, 127)]
    assert gains == sorted(gains)
    assert gains[0] == pytest.approx(0.2, abs=1e-3) and gains[-1] == pytest.approx(0.9)
    mp = mapper({"velocity": False})
    assert kinds(mp.translate(on(60, 5))) == [("play", 1)]


def test_gate_mode_note_off_stops_and_legato_hands_the_slot_over():
    mp = mapper()
    mp.translate(on(60))
    stop = mp.translate(off(60))
    assert kinds(stop) == [("stop", 1)] and stop[0].fade_s == pytest.approx(0.05)
    # legato: B pressed before A released; A's release must not stop B
    mp.translate(on(60))
    mp.translate(on(62))
    assert mp.translate(off(60)) == []
    assert kinds(mp.translate(off(62))) == [("stop", 1)]
    # note-on with velocity 0 is a note-off
    mp.translate(on(64))
    assert kinds(mp.translate(on(64, 0))) == [("stop", 1)]
    # a release nobody pressed is unmapped, not an error
    before = mp.stats["unmapped"]
    assert mp.translate(off(70)) == []
    assert mp.stats["unmapped"] == before + 1


def test_latch_mode_ignores_note_off_and_the_playing_note_again_stops():
    mp = mapper({"mode": "latch", "fade_s": 0.5})
    assert kinds(mp.translate(on(60))) == [("param", 1), ("play", 1)]
    assert mp.translate(off(60)) == []
    stop = mp.translate(on(60))
    assert kinds(stop) == [("stop", 1)] and stop[0].fade_s == 0.5
    assert mp.translate(off(60)) == []
    assert kinds(mp.translate(on(60))) == [("param", 1), ("play", 1)]   # and starts again


def test_explicit_notes_win_channel_specific_first():
    mp = mapper({"note": [
        {"note": "C4", "slot": 2, "prompt": "any channel"},
        {"note": "C4", "channel": 10, "slot": 3, "prompt": "drums on ten", "seed": 9, "seconds": 4},
    ], "unmapped_notes": "ignore", "channels": {"10": 1}})
    a = mp.translate(on(60, ch=1))[-1]
    assert (a.slot, a.prompt, a.seed) == (2, "any channel", None)
    b = mp.translate(on(60, ch=10))[-1]
    assert (b.slot, b.prompt, b.seed, b.seconds) == (3, "drums on ten", 9, 4.0)
    assert mp.translate(on(61, ch=1)) == []                 # unmapped_notes = ignore
    assert kinds(mp.translate(off(60, ch=10))) == [("stop", 3)]


def test_cc_ranges_curves_slots_and_tempo():
    mp = mapper({"cc": [
        {"cc": 1, "param": "brightness", "min": 0.2, "max": 0.8},
        {"cc": 74, "param": "guidance", "min": 1.0, "max": 8.0, "curve": "log"},
        {"cc": 72, "param": "xfade_ms", "min": 10, "max": 2000, "slot": "all"},
        {"cc": 7, "param": "gain", "min": 0, "max": 1.5, "slot": 3},
        {"cc": 7, "param": "gain", "min": 0, "max": 0.5, "channel": 2},
        {"cc": 20, "param": "tempo", "min": 60, "max": 180},
    ]})
    b = [mp.translate(cc(1, v))[0].value for v in (0, 64, 127)]
    assert b[0] == pytest.approx(0.2) and b[2] == pytest.approx(0.8) and b[0] < b[1] < b[2]
    g = mp.translate(cc(74, 64))[0].value
    assert g == pytest.approx(1.0 * 8.0 ** (64 / 127))       # geometric, not linear (4.53)
    assert [c.slot for c in mp.translate(cc(72, 10))] == [1, 2, 3, 4]
    c3 = mp.translate(cc(7, 127, ch=1))
    assert kinds(c3) == [("param", 3)] and c3[0].value == pytest.approx(1.5)
    c2 = mp.translate(cc(7, 127, ch=2))                       # the channel-2 rule wins on channel 2
    assert kinds(c2) == [("param", 2)] and c2[0].value == pytest.approx(0.5)
    t = mp.translate(cc(20, 127))
    assert t[0].kind == "tempo" and t[0].value == pytest.approx(180.0)
    assert mp.translate(cc(33, 5)) == [] and mp.stats["unmapped"] == 1


def test_all_notes_off_stops_the_channel_slot():
    mp = mapper()
    mp.translate(on(60, ch=2))
    assert kinds(mp.translate(cc(123, 0, ch=2))) == [("stop", 2)]
    assert mp.translate(off(60, ch=2)) == []                  # already released by all-notes-off
    assert mp.translate(cc(120, 0, ch=2)) == []               # nothing sounding: nothing to stop


def test_program_change_selects_the_bank_per_channel():
    mp = mapper()
    assert mp.translate(mido.Message("program_change", channel=0, program=1)) == []
    assert mp.translate(on(48, ch=1))[-1].prompt == DEFAULT_BANKS[1][1][0]
    assert mp.translate(on(48, ch=2))[-1].prompt == DEFAULT_BANKS[0][1][0]     # channel 2 unchanged
    assert mp.translate(mido.Message("program_change", channel=0, program=99)) == []
    assert mp.stats["unmapped"] == 1


def test_midi_clock_sets_the_tempo_when_asked():
    mp = mapper({"clock_tempo": True})
    tick = 60e9 / 120 / 24
    out = []
    for i in range(60):
        out += mp.translate(mido.Message("clock"), arrival_ns=1_000_000_000 + int(i * tick))
    tempos = [c.value for c in out if c.kind == "tempo"]
    assert tempos and tempos[0] == pytest.approx(120.0, abs=0.1)
    off_ = mapper()
    assert off_.translate(mido.Message("clock")) == [] and off_.stats["ignored"] == 1


def test_other_messages_are_counted_not_fatal():
    mp = mapper()
    for m in (mido.Message("aftertouch", value=3), mido.Message("pitchwheel", pitch=100),
              mido.Message("sysex", data=[1, 2, 3]), mido.Message("polytouch", note=3, value=3)):
        assert mp.translate(m) == []
    assert mp.stats["ignored"] == 4


def test_reload_keeps_held_notes():
    mp = mapper()
    mp.translate(on(60))
    new = MidiMapper(MidiMap.from_dict({"mode": "gate", "fade_s": 0.2}), 4)
    new.adopt(mp)
    stop = new.translate(off(60))
    assert kinds(stop) == [("stop", 1)] and stop[0].fade_s == 0.2


# ------------------------------------------------------------------ the adapter without a device
class FakeDaemon:
    def __init__(self, nslots=4, busy=False):
        self.slots = {i: None for i in range(1, nslots + 1)}
        self.cmds = []
        self.errors = {}
        self.busy = busy
        self.thread = None

    def params(self):
        from bridge.core.commands import COMMON_PARAMS

        return dict(COMMON_PARAMS)

    def submit(self, cmd):
        self.thread = threading.current_thread()
        if self.busy:
            raise WavebridgeError("busy", "queue full")
        self.cmds.append(cmd)
        return 1

    def count_error(self, code):
        self.errors[code] = self.errors.get(code, 0) + 1


def test_bad_bytes_are_counted_and_never_raise():
    d = FakeDaemon()
    mi = MidiInput(d)
    for data in ([0x90, 200, 1], [0x90], [0xF7], [], [0x80, 60], [0xB0, 7, 300]):
        assert mi.feed(data) == []
    assert mi.stats["bad"] == 6 and d.errors["malformed"] == 6
    assert kinds(mi.feed([0x90, 48, 100])) == [("param", 1), ("play", 1)]
    assert [c.kind for c in d.cmds] == ["param", "play"]
    busy = FakeDaemon(busy=True)
    mi = MidiInput(busy)
    mi.feed([0x90, 48, 100])
    assert mi.stats["rejected"] == 2 and busy.errors["busy"] == 2


def test_the_rtmidi_thread_only_hands_over_and_the_loop_submits():
    d = FakeDaemon()
    mi = MidiInput(d)

    async def main():
        mi.loop = asyncio.get_running_loop()
        t = threading.Thread(target=lambda: [mi._rt_callback(([0x91, 48, 90], 0.0)),
                                             mi._rt_callback(([0x81, 48, 0], 0.0))])
        t.start()
        t.join()
        assert d.cmds == []                     # nothing submitted on the MIDI thread
        for _ in range(50):
            await asyncio.sleep(0.01)
            if len(d.cmds) == 3:
                break

    asyncio.run(main())
    assert [(c.kind, c.slot) for c in d.cmds] == [("param", 2), ("play", 2), ("stop", 2)]
    assert d.thread is threading.main_thread()
    assert all(c.arrival_ns > 0 for c in d.cmds)


def test_port_name_matching():
    mi = MidiInput(FakeDaemon(), port_name="launchkey")
    names = ["RtMidiOut Client:Launchkey MIDI", "system:midi_capture_1", "wbsrc:wbsrc"]
    assert mi.find_port(names) == "RtMidiOut Client:Launchkey MIDI"
    mi.want_port = "wbsrc"
    assert mi.find_port(names) == "wbsrc:wbsrc"
    mi.want_port = "system:midi_capture_1"
    assert mi.find_port(names) == "system:midi_capture_1"
    mi.want_port = "nothing"
    assert mi.find_port(names) is None


# ------------------------------------------------------------------ a real MIDI source through JACK
@pytest.fixture
def jack_env(monkeypatch, tmp_path):
    """A private JACK server (dummy backend) and the environment for clients of it."""
    if not shutil.which("jackd") or not shutil.which("jack_lsp"):
        pytest.skip("jackd (jackd2) is not installed")
    if "UNIX_JACK" not in mido.Backend("mido.backends.rtmidi", load=True).module.get_api_names():
        pytest.skip("python-rtmidi was built without JACK support")
    name = "wbtest-" + secrets.token_hex(4)
    env = dict(os.environ, JACK_DEFAULT_SERVER=name, JACK_NO_START_SERVER="1", MIDO_BACKEND=JACK)
    logf = open(tmp_path / "jackd.log", "w")          # a file, not a pipe: xrun chatter must never block jackd
    proc = subprocess.Popen(["jackd", "--no-realtime", "-n", name, "-d", "dummy", "-r", "48000", "-p", "256"],
                            env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        end = time.monotonic() + 15
        while True:
            r = subprocess.run(["jack_lsp"], env=env, capture_output=True, text=True, timeout=10)
            if r.returncode == 0 and "system:" in r.stdout:
                break
            if proc.poll() is not None or time.monotonic() > end:
                pytest.fail(f"could not start jackd: {(tmp_path / 'jackd.log').read_text()[-500:]}")
            time.sleep(0.1)
        for k in ("JACK_DEFAULT_SERVER", "JACK_NO_START_SERVER", "MIDO_BACKEND"):
            monkeypatch.setenv(k, env[k])
        yield env
    finally:
        proc.terminate()
        try:
            proc.wait(8)              # jackd waits up to 5 s for a client that died mid-cycle
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
            for f in os.listdir("/dev/shm"):              # what a killed server leaves behind
                if f.startswith((f"jack_sem.{os.getuid()}_{name}_", f"jack_{name}_")):
                    try:
                        os.unlink(os.path.join("/dev/shm", f))
                    except OSError:
                        pass
        logf.close()


def jack_connections(env) -> str:
    return subprocess.run(["jack_lsp", "-c"], env=env, capture_output=True, text=True, timeout=10).stdout


def slot_rows(client, nslots=2):
    """{slot: /wb/slot args} from /wb/status (all its pages)."""
    rows, _ = client.status()
    return {r[0]: r for r in rows}


def wait_state(client, slot, state, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        rows = slot_rows(client)
        if slot in rows and rows[slot][1] == state:
            return rows[slot]
        time.sleep(0.05)
    raise AssertionError(f"slot {slot} never became {state}: {slot_rows(client)}")


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{") and line.split(" ")[0] == name:
            return float(line.rsplit(" ", 1)[1])
    return None


@pytest.mark.jack
def test_note_on_plays_and_note_off_stops_through_a_virtual_jack_port(jack_env, daemon_proc, osc_client):
    from plugin_stub.reader import RingReader

    d = daemon_proc("--slots", "2", "--midi", "--metrics-port", "0", env=jack_env)
    assert any("MIDI wavebridge (virtual)" in line and "UNIX_JACK" in line for line in d.lines), d.lines
    c = osc_client(d.host, d.port)
    reader = RingReader(1, max_block=256).attach()
    out = None
    try:
        be = mido.Backend(JACK, load=True)
        names = be.get_output_names()
        target = [n for n in names if n.startswith("wavebridge:")]
        assert target, names
        out = be.open_output(target[0])                   # a real MIDI source, connected through JACK
        assert "wavebridge:wavebridge" in jack_connections(jack_env)
        w0 = reader.write_index
        out.send(mido.Message("note_on", channel=0, note=50, velocity=110))
        row = wait_state(c, 1, "playing")
        assert row[2] == DEFAULT_BANKS[0][1][2]           # C3 + 2 → the bank's third prompt
        end = time.monotonic() + 3
        while reader.write_index == w0 and time.monotonic() < end:
            time.sleep(0.01)
        assert reader.write_index > w0                    # the ring got audio
        assert slot_rows(c)[2][1] == "idle"
        out.send(mido.Message("note_off", channel=0, note=50))
        wait_state(c, 1, "idle")
        # garbage through the port is counted, the daemon carries on
        out._rt.send_message([0x90, 200, 1])
        out.send(mido.Message("pitchwheel", channel=0, pitch=1000))
        out.send(mido.Message("note_on", channel=1, note=48, velocity=90))
        wait_state(c, 2, "playing")
        out.send(mido.Message("control_change", channel=1, control=123, value=0))   # all notes off
        wait_state(c, 2, "idle")
        import urllib.request

        mport = [line for line in d.lines if "metrics on" in line][0].rsplit(":", 1)[1].split("/")[0]
        text = urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5).read().decode()
        assert metric(text, 'wavebridge_midi_messages_total{result="received"}') >= 6
        assert metric(text, 'wavebridge_midi_messages_total{result="ignored"}') >= 1
        assert metric(text, 'wavebridge_midi_connected') == 1.0
        assert d.proc.poll() is None
    finally:
        if out is not None:
            out.close()
        reader.detach()
    rc, _ = d.terminate()             # a clean exit closes the JACK client (SIGKILL leaves jackd waiting)
    assert rc == 0


@pytest.mark.jack
def test_midi_port_connects_to_an_existing_source_in_latch_mode(jack_env, daemon_proc, osc_client, tmp_path):
    mp = tmp_path / "map.toml"
    mp.write_text('mode = "latch"\n[[note]]\nnote = "C4"\nslot = 2\nprompt = "latch test groove with drums"\n')
    be = mido.Backend(JACK, load=True)
    src = be.open_output("wbsrc", virtual=True, client_name="wbsrc")   # a controller that is already there
    try:
        d = daemon_proc("--slots", "2", "--midi-port", "wbsrc", "--midi-map", str(mp), "--metrics-port", "off",
                        env=jack_env)
        assert any("MIDI wbsrc:wbsrc" in line for line in d.lines), d.lines
        c = osc_client(d.host, d.port)
        end = time.monotonic() + 5
        while "wbsrc:wbsrc\n   " not in jack_connections(jack_env) and time.monotonic() < end:
            time.sleep(0.05)
        src.send(mido.Message("note_on", channel=4, note=60, velocity=100))
        row = wait_state(c, 2, "playing")
        assert row[2] == "latch test groove with drums"
        src.send(mido.Message("note_off", channel=4, note=60))
        time.sleep(0.5)
        assert slot_rows(c)[2][1] == "playing"            # latch: note-off does nothing
        src.send(mido.Message("note_on", channel=4, note=60, velocity=100))
        wait_state(c, 2, "idle")                          # the playing note again stops it
        assert d.proc.poll() is None
        rc, _ = d.terminate()
        assert rc == 0
    finally:
        src.close()


@pytest.mark.jack
def test_a_named_port_that_disappears_is_found_again_when_it_comes_back(jack_env, daemon_proc, osc_client):
    """Unplug the controller (its client goes away), plug it back in: the daemon reconnects by itself."""
    be = mido.Backend(JACK, load=True)
    src = be.open_output("wbctl", virtual=True, client_name="wbctl")
    d = None
    try:
        d = daemon_proc("--slots", "2", "--midi-port", "wbctl", "--metrics-port", "off", env=jack_env)
        c = osc_client(d.host, d.port)

        def connected_and_playing(note):
            end = time.monotonic() + 10
            while "wbctl:wbctl\n   " not in jack_connections(jack_env):
                assert time.monotonic() < end, jack_connections(jack_env)
                time.sleep(0.05)
            src.send(mido.Message("note_on", channel=0, note=note, velocity=100))
            wait_state(c, 1, "playing")
            src.send(mido.Message("note_off", channel=0, note=note))
            wait_state(c, 1, "idle")

        connected_and_playing(60)
        src.close()                                        # unplugged
        end = time.monotonic() + 10
        while not any("wbctl:wbctl disappeared" in line for line in d.lines + d.err_lines):
            assert time.monotonic() < end, (d.lines + d.err_lines)[-10:]
            time.sleep(0.05)
        src = be.open_output("wbctl", virtual=True, client_name="wbctl")   # plugged back in
        connected_and_playing(62)
        assert any("MIDI: wbctl:wbctl is open now" in line for line in d.err_lines), d.err_lines[-10:]
        assert d.proc.poll() is None
        rc, _ = d.terminate()
        assert rc == 0
    finally:
        src.close()


@pytest.mark.jack
def test_chords_held_on_channel_16_through_jack_are_heard_in_slot_1(jack_env, daemon_proc, osc_client):
    """A keyboard on the harmony channel (the default map: 16 → slot 1), through a real JACK MIDI
    connection: the slot's audio, read in real time, turns to the chord held within a beat plus
    the splice guard, and back to the song when the keys are let go."""
    import numpy as np

    from engine.compose.chordread import parse_symbol
    from plugin_stub.reader import RingReader
    from test_chord_daemon import heard_from, share

    d = daemon_proc("--slots", "1", "--midi", "--metrics-port", "off", env=jack_env)
    c = osc_client(d.host, d.port)
    reader = RingReader(1, max_block=1024).attach()
    out = None
    try:
        be = mido.Backend(JACK, load=True)
        out = be.open_output([n for n in be.get_output_names() if n.startswith("wavebridge:")][0])
        c.send("/wb/play", 1, "pop with piano chords, bass, a warm pad and drums in C major at 120 bpm", 0.0, 3)
        wait_state(c, 1, "playing")
        while reader.buffered() < 1024:
            time.sleep(0.002)
        sr, audio, marks = 48000, [], {}
        t0 = time.monotonic()
        while len(audio) * 1024 < 8 * sr:
            lag = t0 + len(audio) * 1024 / sr - time.monotonic()
            if lag > 0:
                time.sleep(lag)
            n = len(audio) * 1024
            if "down" not in marks and n >= 2.5 * sr:
                marks["down"] = n
                for k in (54, 58, 61, 66):                    # F# A# C# F#: far from the song's C major
                    out.send(mido.Message("note_on", channel=15, note=k, velocity=90))
            if "up" not in marks and n >= 5.5 * sr:
                marks["up"] = n
                for k in (54, 58, 61, 66):
                    out.send(mido.Message("note_off", channel=15, note=k))
            end = time.monotonic() + 5
            while reader.buffered() < 1024:
                assert time.monotonic() < end, "the ring ran dry"
                time.sleep(0.001)
            audio.append(reader.read(1024).copy())
        assert reader.underrun_frames == 0
        audio = np.concatenate(audio)
        pcs = parse_symbol("F#").pcs
        heard = heard_from(audio, pcs, marks["down"], level=0.45)
        # a beat (0.5 s) plus the guard and crossfade, MIDI through JACK, the keyboard's settle time
        assert heard is not None and heard - marks["down"] < 0.75 * sr, heard
        cs, v = share(audio, pcs)
        assert np.median(v[(cs > heard + sr // 4) & (cs < marks["up"])]) >= 0.55
        assert np.median(v[cs > marks["up"] + 0.75 * sr]) < np.median(v[(cs > heard) & (cs < marks["up"])]) - 0.15
        assert d.proc.poll() is None
    finally:
        if out is not None:
            out.close()
        reader.detach()
    rc, _ = d.terminate()
    assert rc == 0


def test_a_typo_in_mido_backend_stops_serve_before_any_ring_exists(tmp_path):
    import subprocess
    import sys

    from bridge.control.midi import check_backend

    with pytest.raises(ValueError, match="MIDO_BACKEND"):
        check_backend("mido.backends.rtmdi")
    with pytest.raises(ValueError, match="no MIDI API 'UNIX_JAK'"):
        check_backend("mido.backends.rtmidi/UNIX_JAK")
    env = dict(os.environ, MIDO_BACKEND="mido.backends.rtmidi/UNIX_JAK", XDG_CONFIG_HOME=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "bridge", "serve", "--midi", "--osc-port", "0", "--metrics-port",
                        "off", "--slots", "1"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "UNIX_JAK" in p.stderr and "warming up" not in p.stderr


def test_any_table_is_either_a_map_or_a_map_error():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    keys = st.sampled_from(["mode", "fade_s", "seconds", "base_note", "channels", "velocity", "note", "notes",
                            "unmapped_notes", "cc", "bank", "banks", "clock_tempo", "harmony", "harmony_latch",
                            "slot", "prompt", "param",
                            "prompts", "name", "min", "max", "curve", "channel", "enabled", "1", "17", "x"])
    leaf = st.one_of(st.booleans(), st.integers(-200, 200), st.floats(allow_nan=True), st.text(max_size=6),
                     st.sampled_from(["C4", "all", "log", "gain", "tempo", "latch"]))
    tables = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=4)), max_leaves=12)

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(keys, tables, max_size=4))
    def check(data):
        try:
            MidiMap.from_dict(data)
        except MidiMapError as e:
            assert e.message and not e.message.startswith(("Expected", "Object", "Invalid"))  # explained

    check()
