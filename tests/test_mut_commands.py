"""Command parsing at every boundary: each OSC field of each address, one step inside and one step
outside its range, its type, its argument count, its defaults — and the error each bad input
gets (the stable code, the slot it is reported on, a message that names the address and the
field). Written to kill ``bridge/core/commands.py``'s mutants (``make mutate``, docs/TESTING.md):
a check deleted, a bound moved by one, a default changed, a field dropped must fail here.
Pure parsing: no daemon, no sockets.
"""
from __future__ import annotations

import io
import math

import pytest

from bridge.core import commands as C
from bridge.core.commands import (COMMON_PARAMS, MAX_CHORD_CHARS, MAX_FADE_S, MAX_KEYS, MAX_PROMPT_CHARS,
                                  MAX_SECONDS, MAX_THEME_FILE, SEED_MAX, SEED_MIN, Command, HostTransport,
                                  check_seed, check_slot, clean_prompt, parse_osc)
from plugin_stub.protocol import WavebridgeError

N = 4          # slots in these tests


def fail(address, args, nslots=N, params=None) -> WavebridgeError:
    with pytest.raises(WavebridgeError) as ei:
        parse_osc(address, list(args), nslots, params)
    return ei.value


def bad(address, args, code, *words, slot=None, nslots=N):
    """The message fails with ``code``, on ``slot`` (when given), naming the address and ``words``."""
    e = fail(address, args, nslots)
    assert e.code == code, (address, args, e.code, e.message)
    if slot is not None:
        assert e.slot == slot, (address, args, e.slot)
    assert address in e.message, e.message
    for w in words:
        assert w in e.message, (w, e.message)
    return e


# ----------------------------------------------------------------------------- argument counts
#: address → (fewest, most) arguments, and a valid message of the most arguments
FULL = {
    "/wb/play": (2, 5, [1, "a prompt", 8.0, 7, "bar"]),
    "/wb/stop": (1, 2, [1, 0.5]),
    "/wb/param": (3, 3, [1, "gain", 1.0]),
    "/wb/transport": (7, 8, [1, 1.0, 120.0, 4.0, 2, 1.0, 100, 5000]),
    "/wb/chord": (2, 3, [1, "Am7", "bar"]),
    "/wb/keys": (1, 1 + MAX_KEYS, [1] + list(range(60, 60 + MAX_KEYS))),
    "/wb/theme": (2, 2, [1, "record"]),
    "/wb/tempo": (1, 1, [120.0]),
    "/wb/status": (0, 2, [3, b"pad"]),
    "/wb/ping": (0, 0, []),
}


@pytest.mark.parametrize("address", sorted(FULL))
def test_every_address_takes_its_argument_counts_and_no_other(address):
    lo, hi, full = FULL[address]
    for n in range(lo, hi + 1):                 # every count in range parses (the first n of a full message)
        parse_osc(address, full[:n], N)
    if lo > 0:
        e = bad(address, full[:lo - 1], "bad_args", f"got {lo - 1}")
    e = bad(address, full + [1], "bad_args", f"got {hi + 1}")
    want = f"{lo}" if lo == hi else f"{lo}–{hi}"
    assert e.message == f"{address} takes {want} arguments, got {hi + 1}"


def test_unknown_addresses_are_named_and_cut():
    e = fail("/wb/nope", [])
    assert e.code == "unknown_address" and e.message == "unknown address '/wb/nope'"
    e = fail("/wb/" + "x" * 100, [])
    assert e.message == f"unknown address {('/wb/' + 'x' * 100)[:64]!r}"
    for near in ("/WB/PLAY", "/wb/play/", "wb/play", "/wb/Play"):
        assert fail(near, [1, "p"]).code == "unknown_address"


# ----------------------------------------------------------------------------- ints, slots, seeds
@pytest.mark.parametrize("v,ok", [(1, 1), (N, N), (2.0, 2), (float(N), N)])
def test_a_slot_in_range_is_an_int(v, ok):
    got = check_slot(v, N, "/x")
    assert got == ok and type(got) is int


@pytest.mark.parametrize("v", [0, N + 1, -1, 0.0, float(N + 1)])
def test_a_slot_out_of_range_is_bad_slot_reported_on_no_slot(v):
    with pytest.raises(WavebridgeError) as ei:
        check_slot(v, N, "/x")
    e = ei.value
    assert e.code == "bad_slot" and e.slot == -1
    assert e.message == f"/x: slot {int(v)} does not exist (1..{N})"


@pytest.mark.parametrize("v,name", [(True, "bool"), (False, "bool"), ("1", "str"), (1.5, "float"),
                                    (math.inf, "float"), (math.nan, "float"), (None, "NoneType"),
                                    (b"1", "bytes")])
def test_a_slot_that_is_no_int_is_bad_type(v, name):
    with pytest.raises(WavebridgeError) as ei:
        check_slot(v, N, "/x")
    assert ei.value.code == "bad_type"
    assert ei.value.message == f"/x: slot must be an int, got {name}"


@pytest.mark.parametrize("seed", [SEED_MIN, SEED_MIN + 1, -1, 0, 63, 64, 65, 2 ** 31 - 1, 2 ** 31,
                                  SEED_MAX - 1, float(2 ** 20)])
def test_every_seed_of_the_32_bit_range_is_taken(seed):
    got = check_seed(seed, "/wb/play")
    assert got == int(seed) and type(got) is int
    assert parse_osc("/wb/play", [1, "p", 0.0, seed], N).seed == int(seed)


@pytest.mark.parametrize("seed", [SEED_MIN - 1, SEED_MAX, SEED_MAX + 1, 2 ** 40, -(2 ** 40)])
def test_a_seed_outside_the_range_is_bad_value(seed):
    with pytest.raises(WavebridgeError) as ei:
        check_seed(seed, "where")
    assert ei.value.code == "bad_value" and ei.value.message == "where: seed out of range"
    bad("/wb/play", [2, "p", 0.0, seed], "bad_value", "seed", slot=2)


def test_the_seed_range_is_a_signed_or_unsigned_32_bit_value():
    assert (SEED_MIN, SEED_MAX) == (-(2 ** 31), 2 ** 32)


@pytest.mark.parametrize("seed", [True, "7", 7.5, math.nan])
def test_a_seed_of_another_type_is_bad_type(seed):
    with pytest.raises(WavebridgeError) as ei:
        check_seed(seed, "where")
    assert ei.value.code == "bad_type" and ei.value.message.startswith("where: seed must be an int")
    bad("/wb/play", [3, "p", 0.0, seed], "bad_type", "seed", slot=3)


# ----------------------------------------------------------------------------- prompts
def test_a_prompt_is_collapsed_and_kept():
    assert clean_prompt("  warm \t pads\n and  rain ") == "warm pads and rain"
    assert clean_prompt(b"caf\xc3\xa9 jazz") == "café jazz"
    assert clean_prompt(bytearray(b"lofi")) == "lofi"
    assert clean_prompt("x" * MAX_PROMPT_CHARS) == "x" * MAX_PROMPT_CHARS


@pytest.mark.parametrize("v,code,msg", [
    (b"\xff\xfe", "bad_prompt", "/a: prompt is not UTF-8 text"),
    (7, "bad_type", "/a: prompt must be a string, got int"),
    (None, "bad_type", "/a: prompt must be a string, got NoneType"),
    ("x" * (MAX_PROMPT_CHARS + 1), "prompt_too_long",
     f"/a: prompt has {MAX_PROMPT_CHARS + 1} characters, the limit is {MAX_PROMPT_CHARS}"),
    # the limit is on what was sent, before whitespace collapses
    ("a" + " " * MAX_PROMPT_CHARS, "prompt_too_long",
     f"/a: prompt has {MAX_PROMPT_CHARS + 1} characters, the limit is {MAX_PROMPT_CHARS}"),
    ("bell\x07", "bad_prompt", "/a: prompt contains control characters"),
    ("zero\u200bwidth", "bad_prompt", "/a: prompt contains control characters"),
    ("a\rb", "bad_prompt", "/a: prompt contains control characters"),
    ("", "bad_prompt", "/a: prompt is empty"),
    (" \t\n ", "bad_prompt", "/a: prompt is empty"),
])
def test_bad_prompts(v, code, msg):
    with pytest.raises(WavebridgeError) as ei:
        clean_prompt(v, "/a")
    assert (ei.value.code, ei.value.message) == (code, msg)


def test_a_prompt_error_names_play_by_default_and_the_slot_on_play():
    with pytest.raises(WavebridgeError) as ei:
        clean_prompt("")
    assert ei.value.message == "/wb/play: prompt is empty"
    bad("/wb/play", [4, ""], "bad_prompt", "prompt is empty", slot=4)


# ----------------------------------------------------------------------------- /wb/play
def test_play_defaults_and_fields():
    c = parse_osc("/wb/play", [2, " soft  piano "], N)
    assert (c.kind, c.slot, c.prompt, c.seconds, c.seed, c.quantize) == ("play", 2, "soft piano", 0.0, None, "off")
    c = parse_osc("/wb/play", [3, "p", 12, -5, "beat"], N)
    assert (c.slot, c.seconds, c.seed, c.quantize) == (3, 12.0, -5, "beat")
    assert type(c.seconds) is float


@pytest.mark.parametrize("seconds", [0.0, 0, 0.001, MAX_SECONDS])
def test_play_seconds_in_range(seconds):
    assert parse_osc("/wb/play", [1, "p", seconds], N).seconds == float(seconds)


@pytest.mark.parametrize("seconds,code", [(-0.001, "bad_value"), (MAX_SECONDS + 1, "bad_value"),
                                          (math.inf, "bad_value"), (math.nan, "bad_value"),
                                          ("8", "bad_type"), (True, "bad_type")])
def test_play_seconds_out_of_range(seconds, code):
    bad("/wb/play", [2, "p", seconds], code, "seconds", slot=2)


@pytest.mark.parametrize("q", ["off", "beat", "bar"])
def test_play_quantize_values(q):
    assert parse_osc("/wb/play", [1, "p", 0.0, 0, q], N).quantize == q


def test_play_quantize_errors():
    e = bad("/wb/play", [2, "p", 0.0, 0, "Beat"], "bad_value", "'Beat' is not off, beat or bar", slot=2)
    e = bad("/wb/play", [2, "p", 0.0, 0, "q" * 40], "bad_value", repr("q" * 16), slot=2)
    assert "q" * 17 not in e.message
    bad("/wb/play", [2, "p", 0.0, 0, 1], "bad_type", "quantize must be a string (off, beat or bar)", slot=2)


def test_play_on_a_bad_slot():
    bad("/wb/play", [0, "p"], "bad_slot", "slot 0", slot=-1)
    bad("/wb/play", [N + 1, "p"], "bad_slot", f"slot {N + 1}", slot=-1, nslots=N)
    parse_osc("/wb/play", [7, "p"], 7)


# ----------------------------------------------------------------------------- numbers
@pytest.mark.parametrize("v,code,words", [
    (True, "bad_type", ["fade_s must be a number, got bool"]),
    ("1", "bad_type", ["fade_s must be a number, got str"]),
    (math.inf, "bad_value", ["fade_s must be finite, got inf"]),
    (-math.inf, "bad_value", ["fade_s must be finite, got -inf"]),
    (math.nan, "bad_value", ["fade_s must be finite, got nan"]),
    (-0.5, "bad_value", ["fade_s -0.5 is outside [0, 30]"]),
    (MAX_FADE_S + 0.5, "bad_value", ["fade_s 30.5 is outside [0, 30]"]),
])
def test_stop_fade_errors(v, code, words):
    bad("/wb/stop", [3, v], code, *words, slot=3)


def test_stop_fields():
    c = parse_osc("/wb/stop", [2], N)
    assert (c.kind, c.slot, c.fade_s) == ("stop", 2, 0.05)
    assert parse_osc("/wb/stop", [2, 0], N).fade_s == 0.0
    assert parse_osc("/wb/stop", [2, MAX_FADE_S], N).fade_s == MAX_FADE_S
    assert type(parse_osc("/wb/stop", [2, 3], N).fade_s) is float
    bad("/wb/stop", [0], "bad_slot", slot=-1)


# ----------------------------------------------------------------------------- /wb/param
@pytest.mark.parametrize("name", sorted(COMMON_PARAMS))
def test_param_bounds_of_every_common_parameter(name):
    lo, hi = COMMON_PARAMS[name]
    for v in (lo, hi, (lo + hi) / 2):
        c = parse_osc("/wb/param", [2, name, v], N)
        assert (c.kind, c.slot, c.name, c.value) == ("param", 2, name, float(v))
    span = hi - lo
    for v in (lo - span * 1e-3, hi + span * 1e-3):
        bad("/wb/param", [2, name, v], "bad_value", name, "outside", slot=2)
    bad("/wb/param", [2, name, math.nan], "bad_value", name, "finite", slot=2)
    bad("/wb/param", [2, name, "1"], "bad_type", f"{name} must be a number", slot=2)


def test_param_names():
    e = bad("/wb/param", [3, "volume", 1.0], "unknown_param", "'volume'", slot=3)
    assert e.message.endswith("known: " + ", ".join(sorted(COMMON_PARAMS)))
    e = bad("/wb/param", [3, "v" * 60, 1.0], "unknown_param", repr("v" * 40), slot=3)
    assert "v" * 41 not in e.message
    bad("/wb/param", [3, 5, 1.0], "bad_type", "name must be a string", slot=3)
    bad("/wb/param", [3, b"gain", 1.0], "bad_type", "name must be a string", slot=3)
    bad("/wb/param", [0, "gain", 1.0], "bad_slot", slot=-1)


def test_param_takes_the_backends_own_table():
    params = {"cutoff": (100.0, 200.0, "Hz")}
    c = parse_osc("/wb/param", [1, "cutoff", 150], N, params)
    assert (c.name, c.value) == ("cutoff", 150.0)
    for v in (99.0, 201.0):
        e = fail("/wb/param", [1, "cutoff", v], N, params)
        assert e.code == "bad_value" and "[100, 200]" in e.message and e.slot == 1
    assert fail("/wb/param", [1, "gain", 1.0], N, params).code == "unknown_param"
    # no table, or an empty one: the common parameters
    assert parse_osc("/wb/param", [1, "gain", 4.0], N, {}).value == 4.0
    assert parse_osc("/wb/param", [1, "gain", 4.0], N, None).value == 4.0


# ----------------------------------------------------------------------------- /wb/tempo, status, ping
def test_tempo():
    for bpm in (20, 20.0, 120.5, 400.0):
        c = parse_osc("/wb/tempo", [bpm], N)
        assert (c.kind, c.value) == ("tempo", float(bpm))
    for bpm in (19.99, 400.01):
        bad("/wb/tempo", [bpm], "bad_value", "bpm", "[20, 400]")
    bad("/wb/tempo", [math.inf], "bad_value", "bpm must be finite")
    bad("/wb/tempo", ["120"], "bad_type", "bpm must be a number")
    bad("/wb/tempo", [120.0, 4], "bad_args", "takes 1 arguments, got 2")
    bad("/wb/tempo", [], "bad_args", "got 0")


def test_status_pages():
    assert parse_osc("/wb/status", [], N).page == 0
    for page in (0, 1, 2 ** 16 - 1):
        c = parse_osc("/wb/status", [page], N)
        assert (c.kind, c.page) == ("status", page)
    assert parse_osc("/wb/status", [5, "padding"], N).page == 5
    assert parse_osc("/wb/status", [5, bytearray(8)], N).page == 5
    for page in (-1, 2 ** 16, 2 ** 20):
        bad("/wb/status", [page], "bad_value", f"page {page} is out of range")
    bad("/wb/status", ["1"], "bad_type", "page must be an int")
    bad("/wb/status", [True], "bad_type", "page must be an int")
    bad("/wb/status", [1, 2], "bad_type", "padding must be a blob or a string")
    bad("/wb/status", [1, 2.0], "bad_type", "padding must be a blob or a string")


def test_ping():
    assert parse_osc("/wb/ping", [], N).kind == "ping"
    bad("/wb/ping", [1], "bad_args", "takes 0 arguments, got 1")


# ----------------------------------------------------------------------------- /wb/transport
T_OK = [2, 1.0, 120.0, 4.0, 3, 1.5, 1000]


def test_transport_fields():
    c = parse_osc("/wb/transport", T_OK, N)
    assert (c.kind, c.slot, c.value) == ("transport", 2, 120.0)
    assert c.transport == HostTransport(1.0, 120.0, 4.0, 3, 1.5, 3 * 4.0 + 1.5, 1000, -1)
    c = parse_osc("/wb/transport", T_OK + [48000], N)
    assert c.transport.host_frame == 48000 and c.transport.read_index == 1000
    c = parse_osc("/wb/transport", [1, -2.0, 90.0, 3.0, 0, 0.0, -1, -1], N)
    assert c.transport == HostTransport(-2.0, 90.0, 3.0, 0, 0.0, 0.0, -1, -1)


#: index → (name, accepted boundary values, rejected values (bad_value))
T_RANGES = {
    1: ("speed", [-16.0, 0.0, 16.0], [-16.01, 16.01, math.nan, math.inf]),
    2: ("bpm", [20.0, 400.0], [19.99, 400.01, math.inf]),
    3: ("beats_per_bar", [1.5, 64.0], [0.99, 64.01, math.nan]),
    5: ("bar_beat", [0.0, 4.0], [-0.01, 64.01, math.inf]),
}


@pytest.mark.parametrize("i", sorted(T_RANGES))
def test_transport_number_ranges(i):
    name, good, worse = T_RANGES[i]
    for v in good:
        args = list(T_OK)
        args[i] = v
        if i == 3:
            args[5] = min(args[5], v)
        parse_osc("/wb/transport", args, N)
    for v in worse:
        args = list(T_OK)
        args[i] = v
        bad("/wb/transport", args, "bad_value", name, slot=2)
    args = list(T_OK)
    args[i] = "1"
    bad("/wb/transport", args, "bad_type", f"{name} must be a number", slot=2)


def test_transport_positions():
    def at(i, v):
        args = list(T_OK)
        args[i] = v
        return args
    msg = "bar, bar_beat or read_index out of range"
    parse_osc("/wb/transport", at(4, 0), N)
    bad("/wb/transport", at(4, -1), "bad_value", msg, slot=2)
    parse_osc("/wb/transport", at(6, -1), N)
    parse_osc("/wb/transport", at(6, 0), N)
    bad("/wb/transport", at(6, -2), "bad_value", msg, slot=2)
    # the beat inside the bar is at most the bar's length
    parse_osc("/wb/transport", at(5, 4.0), N)
    bad("/wb/transport", at(5, 4.01), "bad_value", msg, slot=2)
    for i, name in ((4, "bar"), (6, "read_index"), (7, "host_frame")):
        args = list(T_OK) + [0]
        args[i] = 1.5
        bad("/wb/transport", args, "bad_type", f"{name} must be an int", slot=2)
    bad("/wb/transport", at(0, 0), "bad_slot", slot=-1)


# ----------------------------------------------------------------------------- /wb/chord
def test_chord_symbols():
    c = parse_osc("/wb/chord", [2, "am7"], N)
    assert (c.kind, c.slot, c.chord, c.quantize) == ("chord", 2, "Am7", "beat")
    assert parse_osc("/wb/chord", [2, b"F#m7b5"], N).chord == "F#m7b5"
    assert parse_osc("/wb/chord", [2, bytearray(b"E5")], N).chord == "E5"
    assert parse_osc("/wb/chord", [2, "Bbmaj7/D", "bar"], N).quantize == "bar"
    assert parse_osc("/wb/chord", [2, "C", "off"], N).quantize == "off"
    # released: the composed progression comes back
    assert parse_osc("/wb/chord", [2, ""], N).chord == ""
    assert parse_osc("/wb/chord", [2, "   "], N).chord == ""
    # the length limit is on the symbol, not on the blanks around it
    assert parse_osc("/wb/chord", [2, " " * 40 + "Am7" + " " * 40], N).chord == "Am7"


def test_chord_errors():
    e = bad("/wb/chord", [3, "X" * (MAX_CHORD_CHARS + 1)], "bad_chord",
            f"a chord symbol has at most {MAX_CHORD_CHARS} characters", slot=3)
    e = bad("/wb/chord", [3, "Q" * MAX_CHORD_CHARS], "bad_chord", "is not a chord symbol", slot=3)
    assert "at most" not in e.message
    bad("/wb/chord", [3, "H7"], "bad_chord", "is not a chord symbol", slot=3)
    bad("/wb/chord", [3, b"\xff\xfe"], "bad_chord", slot=3)
    bad("/wb/chord", [3, 7], "bad_type", "chord must be a string, got int", slot=3)
    bad("/wb/chord", [3, None], "bad_type", "chord must be a string, got NoneType", slot=3)
    bad("/wb/chord", [3, "Am", "bars"], "bad_value", "'bars' is not off, beat or bar", slot=3)
    bad("/wb/chord", [3, "Am", 1], "bad_type", "quantize must be a string", slot=3)
    bad("/wb/chord", [N + 1, "Am"], "bad_slot", slot=-1)


# ----------------------------------------------------------------------------- /wb/keys
def test_keys():
    c = parse_osc("/wb/keys", [2, 64, 60, 67, 60], N)
    assert (c.kind, c.slot, c.notes, c.source, c.quantize, c.chord) == ("chord", 2, (60, 64, 67), "keys", "beat", "")
    assert parse_osc("/wb/keys", [2], N).notes == ()
    assert parse_osc("/wb/keys", [2, 0, 127], N).notes == (0, 127)
    assert parse_osc("/wb/keys", [2, 60.0], N).notes == (60,)
    assert all(type(n) is int for n in parse_osc("/wb/keys", [2, 61.0, 60], N).notes)


def test_keys_errors():
    for note in (-1, 128, 1000):
        bad("/wb/keys", [3, 60, note], "bad_value", "a note is 0..127", slot=3)
    for note in (True, "60", 60.5, b"<"):
        bad("/wb/keys", [3, note], "bad_type", "note must be an int", slot=3)
    bad("/wb/keys", [0, 60], "bad_slot", slot=-1)
    bad("/wb/keys", [], "bad_args", f"takes 1–{1 + MAX_KEYS} arguments, got 0")


# ----------------------------------------------------------------------------- /wb/theme
def smf(notes=((60, 0, 480), (64, 480, 480))) -> bytes:
    import mido

    mid = mido.MidiFile(ticks_per_beat=480)
    tr = mido.MidiTrack()
    mid.tracks.append(tr)
    t = 0
    events = []
    for p, start, dur in notes:
        events += [(start, "note_on", p), (start + dur, "note_off", p)]
    for when, kind, p in sorted(events):
        tr.append(mido.Message(kind, note=p, velocity=90 if kind == "note_on" else 0, time=when - t))
        t = when
    buf = io.BytesIO()
    mid.save(file=buf)
    return buf.getvalue()


def test_theme_actions_and_files():
    for action in C.THEME_ACTIONS:
        c = parse_osc("/wb/theme", [2, action], N)
        assert (c.kind, c.slot, c.chord, c.theme_notes) == ("theme", 2, action, ())
    c = parse_osc("/wb/theme", [3, smf()], N)
    assert (c.kind, c.slot, c.chord) == ("theme", 3, "")
    assert isinstance(c.theme_notes, tuple)
    assert [(n[0], n[1], n[2]) for n in c.theme_notes] == [(0.0, 1.0, 60), (1.0, 1.0, 64)]
    assert parse_osc("/wb/theme", [3, bytearray(smf())], N).theme_notes == c.theme_notes


def test_theme_errors():
    e = bad("/wb/theme", [2, "Record"], "bad_value", "'Record' is not record, stop or clear", slot=2)
    e = bad("/wb/theme", [2, "r" * 40], "bad_value", repr("r" * 16), slot=2)
    assert "r" * 17 not in e.message
    bad("/wb/theme", [2, 5], "bad_type", "expects record, stop, clear or a MIDI file blob", slot=2)
    bad("/wb/theme", [2, None], "bad_type", slot=2)
    e = bad("/wb/theme", [2, b"\0" * (MAX_THEME_FILE + 1)], "bad_value",
            f"a MIDI file of at most {MAX_THEME_FILE} bytes", slot=2)
    # at the limit the file is read (and this one is no MIDI file)
    e = bad("/wb/theme", [2, b"\0" * MAX_THEME_FILE], "bad_value", "not a Standard MIDI File", slot=2)
    assert "at most" not in e.message
    bad("/wb/theme", [2, b"MThd"], "bad_value", "not a Standard MIDI File", slot=2)
    bad("/wb/theme", [0, "record"], "bad_slot", slot=-1)


def test_a_default_command_is_a_plain_value():
    c = Command("ping")
    assert (c.slot, c.seed, c.fade_s, c.quantize, c.notes, c.theme_notes) == (-1, None, 0.05, "off", (), ())


# ----------------------------------------------------------------------------- messages, word for word


def test_a_bar_beat_beyond_64_is_out_of_its_own_range():
    """A 64-beat bar: bar_beat 64.5 fails bar_beat's own range (0..64), named as such."""
    args = list(T_OK)
    args[3], args[5] = 64.0, 64.0
    assert parse_osc("/wb/transport", args, N).transport.bar_beat == 64.0
    args[5] = 64.5
    e = fail("/wb/transport", args)
    assert (e.code, e.slot) == ("bad_value", 2)
    assert e.message == "/wb/transport: bar_beat 64.5 is outside [0, 64]"


def test_the_play_seconds_message_names_the_field():
    e = fail("/wb/play", [1, "p", -1.0])
    assert e.message == "/wb/play: seconds -1 is outside [0, 86400]"
    e = fail("/wb/play", [1, "p", "8"])
    assert e.message == "/wb/play: seconds must be a number, got str"
