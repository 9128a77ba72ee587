"""Config: search order, flags over file over defaults, validation, SIGHUP reload without dropping audio."""
from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import fields

import numpy as np
import pytest

from bridge.ops.config import ConfigError, Settings, find_config, load_file, parse, resolve, search_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_search_order_explicit_then_user_then_system(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    assert search_path(env) == [str(tmp_path / "xdg" / "wavebridge" / "config.toml"), "/etc/wavebridge/config.toml"]
    assert search_path({"HOME": "/home/u"})[0] == "/home/u/.config/wavebridge/config.toml"
    user = write(tmp_path / "xdg" / "wavebridge" / "config.toml", "[engine]\nslots = 3\n")
    assert find_config(None, env) == str(user)
    other = write(tmp_path / "other.toml", "[engine]\nslots = 5\n")
    assert find_config(str(other), env) == str(other)
    with pytest.raises(ConfigError):
        find_config(str(tmp_path / "missing.toml"), env)


def test_flags_override_the_file_which_overrides_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing-here"))
    cfg = write(tmp_path / "c.toml", '[osc]\nport = 9999\nhost = "0.0.0.0"\n[engine]\nslots = 3\n'
                                     '[metrics]\nport = 0\n')
    s = resolve({"config": str(cfg), "osc_port": 0, "slots": None})
    assert s.osc_port == 0                       # flag wins
    assert s.osc_host == "0.0.0.0" and s.slots == 3 and s.metrics_port == 0   # file wins over defaults
    assert s.backend == "synth" and s.target_s == 1.0                         # defaults
    assert s.config_path == str(cfg)
    assert resolve({"config": str(cfg), "metrics": False}).metrics is False


def test_the_example_config_is_valid_and_complete():
    d = load_file(os.path.join(ROOT, "examples", "config.toml"))
    assert d["params"] == {"gain": 0.9}
    assert d["slot_params"] == {2: {"gain": 0.7, "xfade_ms": 400.0}}
    s = Settings(**{k: v for k, v in d.items()})
    assert s.live_params()[0] == (None, "gain", 0.9)
    assert s.live_params()[-1][0] == 2                  # slot lines come after (and win over) every-slot lines
    with open(os.path.join(ROOT, "examples", "config.toml")) as f:
        text = f.read()
    from bridge.ops.config import SCHEMA

    for section, keys in SCHEMA.items():                # every key is shown in the example
        for k in keys:
            assert k in text, f"{section}.{k} missing from examples/config.toml"


@pytest.mark.parametrize("text, words", [
    ("[engine]\nslot = 3\n", "unknown key engine.slot"),
    ("volume = 3\n", "unknown key 'volume'"),
    ("[engine]\nslots = \"eight\"\n", "integer"),
    ("[engine]\nslots = 99\n", "1..64"),
    ("[osc]\nport = 70000\n", "0..65535"),
    ("[params]\ngain = \"loud\"\n", "finite number"),
    ("[params.x]\ngain = 1\n", "slot number"),
    ("tempo = 5\n", "bpm"),
    ("[engine\n", "not valid TOML"),
])
def test_bad_configs_name_the_file_and_key(tmp_path, text, words):
    p = write(tmp_path / "bad.toml", text)
    with pytest.raises(ConfigError) as e:
        load_file(str(p))
    assert words in e.value.message and str(p) in e.value.message


def test_relative_paths_are_taken_from_the_config_file(tmp_path):
    d = parse({"midi": {"map": "maps/live.toml"}, "engine": {"model": "~/models/m"}}, str(tmp_path))
    assert d["midi_map"] == str(tmp_path / "maps" / "live.toml")
    assert d["model"] == os.path.expanduser("~/models/m")


def test_naming_a_midi_port_or_map_turns_midi_on(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    assert resolve({"midi_port": "Launchkey"}).midi is True
    assert resolve({"midi_map": "x.toml"}).midi is True
    assert resolve({"midi_map": "x.toml", "midi": False}).midi is False
    p = write(tmp_path / "c.toml", '[midi]\nmap = "m.toml"\n')
    assert resolve({"config": str(p)}).midi is True
    p = write(tmp_path / "c2.toml", '[midi]\nmap = "m.toml"\nenabled = false\n')
    assert resolve({"config": str(p)}).midi is False


def test_user_config_is_picked_up_by_serve(tmp_path, daemon_proc, osc_client):
    write(tmp_path / "xdg" / "wavebridge" / "config.toml",
          '[engine]\nslots = 2\n[osc]\nport = 1\n[metrics]\nenabled = false\n')
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    d = daemon_proc(env=env)                             # --osc-port 0 on the command line beats port 1
    c = osc_client(d.host, d.port)
    c.send("/wb/status")
    rows = [c.wait_for("/wb/slot", 2.0) for _ in range(3)]
    assert [r[0] for r in rows if r] == [1, 2]          # two slots, from the file


def test_a_bad_config_stops_serve_with_a_clear_message(tmp_path):
    import subprocess
    import sys

    p = write(tmp_path / "bad.toml", "[engine]\nslotz = 2\n")
    r = subprocess.run([sys.executable, "-m", "bridge", "serve", "--config", str(p), "--osc-port", "0"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2
    assert "engine.slotz" in r.stderr and str(p) in r.stderr


def _rms(a):
    return float(np.sqrt(np.mean(a.astype(np.float64) ** 2))) if a.size else 0.0


def test_sighup_reloads_params_and_midi_map_without_dropping_audio(tmp_path, daemon_proc, osc_client):
    from plugin_stub.player import PacedRecorder, attach_when_ready

    cfg = write(tmp_path / "c.toml", '[engine]\nslots = 2\n[metrics]\nenabled = false\n'
                                     '[params]\ngain = 1.0\n')
    mp = write(tmp_path / "map.toml", 'mode = "gate"\n')
    d = daemon_proc("--config", str(cfg), "--midi", "--midi-map", str(mp))
    c = osc_client(d.host, d.port)
    reader = attach_when_ready(1, max_block=128)
    rec = PacedRecorder(reader, 5.0, 128)
    th = threading.Thread(target=rec.run, daemon=True)
    th.start()
    c.send("/wb/play", 1, "warm ambient pad drone with soft strings")
    started = c.wait_for("/wb/started", 3.0)
    assert c.wait_for("/wb/first_audio", 3.0)
    time.sleep(1.5)
    write(cfg, '[engine]\nslots = 2\n[metrics]\nenabled = false\n[params]\ngain = 0.2\n')
    write(mp, 'mode = "latch"\n')
    t_reload = time.monotonic()
    d.proc.send_signal(signal.SIGHUP)
    end = time.monotonic() + 5
    while not any("reloaded" in line for line in d.lines) and time.monotonic() < end:
        time.sleep(0.05)
    assert any("reloaded" in line and "MIDI map" in line for line in d.lines), d.lines
    # a broken edit is refused and the daemon keeps the running settings
    write(cfg, "[engine\n")
    d.proc.send_signal(signal.SIGHUP)
    th.join(10)
    assert any("reload failed" in line and str(cfg) in line for line in d.lines), d.lines
    resyncs = reader.resyncs
    reader.detach()
    # the same job played through: no stop, no new job, the stream was never reset
    replies = []
    while (r := c.recv(0.2)) is not None:
        replies.append(r[0])
    assert "/wb/done" not in replies and "/wb/started" not in replies, replies
    assert resyncs == 0
    c.send("/wb/status")
    row = c.wait_for("/wb/slot", 2.0, match=lambda a: a[0] == 1)
    assert row[1] == "playing" and row[2] == "warm ambient pad drone with soft strings"
    n = rec.blocks_done
    real = rec.real[:n]
    heard = np.nonzero(real > 0)[0]
    assert heard.size and (real[heard[0]:] > 0).mean() > 0.9, "audio dropped out around the reload"
    a = rec.captured
    tb = np.repeat(rec.times[:n], rec.block)[:a.shape[0]]
    loud = _rms(a[(tb >= t_reload - 1.0) & (tb < t_reload)])
    quiet = _rms(a[tb >= t_reload + 2.0])               # past the 1 s the ring held at the reload
    assert loud > 0.01
    print(f"rms before {loud:.4f}, after {quiet:.4f}")
    assert quiet < loud * 0.5, (loud, quiet)             # gain 1.0 → 0.2 arrived …
    assert quiet > 0.0                                  # … on the same, still sounding job
    assert d.proc.poll() is None
    assert started is not None


@pytest.mark.parametrize("data, key, expected", [
    # a wrong type
    ({"engine": {"slots": 2.5}}, "engine.slots", "an integer 1..64"),
    ({"engine": {"splice": 1}}, "engine.splice", "true or false"),
    ({"osc": {"allow": "10.0.0.0/8"}}, "osc.allow", "a list of CIDR strings"),
    ({"metrics": {"allow": [10]}}, "metrics.allow[0]", "a string"),
    ({"engine": {"slot_names": ["drums", "two words"]}}, "engine.slot_names[1]", "[A-Za-z0-9_-]{1,32}"),
    ({"params": {"2": {"gain": "loud"}}}, "params.2.gain", "a finite number"),
    ({"log": "DEBUG"}, "log", "a table"),
    ({"resume": "yes"}, "resume", "true or false"),
    # out of range
    ({"engine": {"slots": 0}}, "engine.slots", "1..64"),
    ({"metrics": {"port": 65536}}, "metrics.port", "0..65535"),
    ({"tempo": 401}, "tempo", "20..400 bpm"),
    ({"engine": {"target_s": float("inf")}}, "engine.target_s", "a finite number"),
    ({"params": {"gain": float("nan")}}, "params.gain", "a finite number"),
    ({"engine": {"slot_names": []}}, "engine.slot_names", "1..64 distinct names"),
    # unknown keys, at the top, in a section, in a tier
    ({"engin": {"slots": 2}}, "'engin'", "known: engine"),
    ({"metrics": {"alow": []}}, "metrics.alow", "known: allow, enabled, host, port"),
    ({"http": {"tiers": {"free": {"concurrency": 2}}}}, "free.concurrency", "known: audio_s_per_day"),
])
def test_wrong_type_out_of_range_and_unknown_keys_are_refused_naming_the_key(data, key, expected):
    with pytest.raises(ConfigError) as e:
        parse(data)
    assert key in e.value.message and expected in e.value.message, e.value.message
    assert e.value.code == "bad_config"


def test_a_refused_value_is_quoted_and_nothing_is_half_applied():
    with pytest.raises(ConfigError) as e:
        parse({"engine": {"slots": 99}})
    assert e.value.message == "engine.slots must be an integer 1..64, not 99"
    with pytest.raises(ConfigError) as e:
        parse({"engine": {"slot_names": ["a", "a"]}})
    assert "engine.slot_names must be distinct" in e.value.message
    with pytest.raises(ConfigError) as e:
        parse({"params": {"65": {"gain": 1.0}}})
    assert "[params.65]" in e.value.message and "1..64" in e.value.message


def test_only_what_the_file_sets_is_returned_with_types_kept():
    d = parse({"engine": {"target_s": 2, "slots": 3}, "osc": {"allow": ["10.0.0.0/8"]}, "tempo": 120})
    assert d == {"target_s": 2.0, "slots": 3, "allow": ["10.0.0.0/8"], "tempo": 120.0}
    assert isinstance(d["target_s"], float) and isinstance(d["tempo"], float)


def test_every_schema_key_maps_to_a_settings_field():
    import msgspec

    from bridge.ops import config

    names = {f.name for f in fields(Settings)}
    structs = {"": config._Config, "osc": config._Osc, "engine": config._Engine, "midi": config._Midi,
               "metrics": config._Metrics, "http": config._Http, "log": config._Log}
    for section, keys in config.SCHEMA.items():
        declared = {f.encode_name for f in msgspec.structs.fields(structs[section])}
        assert set(keys) <= declared, section
        if section:
            assert set(keys) == declared, section
        assert set(keys.values()) <= names


def test_any_table_is_either_settings_or_a_config_error():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from bridge.ops.config import SCHEMA

    keys = st.sampled_from(sorted({k for t in SCHEMA.values() for k in t}
                                  | {"osc", "engine", "midi", "metrics", "http", "log", "params", "tiers", "2", "x"}))
    leaf = st.one_of(st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True), st.text(max_size=8))
    tables = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=4)), max_leaves=12)

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(keys, tables, max_size=4))
    def check(data):
        try:
            parse(data)
        except ConfigError as e:
            assert e.message and not e.message.startswith(("Expected", "Object", "Invalid"))  # explained

    check()
