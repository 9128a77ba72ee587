"""The bounded OSC decoder, the per-host budgets and the reply-size arithmetic, without a daemon.

The hypothesis tests are hang detectors: every generated datagram must be decoded (or refused)
within a generous deadline, run in a worker thread so a loop is caught instead of hanging the
suite. The deadline is not a speed target.
"""
from __future__ import annotations

import concurrent.futures
import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.control.netguard import AllowList, HostBudgets, exposure_warnings, host_key
from bridge.control.osc import build, cut_utf8, osc_size, status_pages
from bridge.control.oscdecode import MAX_DEPTH, OscDecodeError, decode, timetag_to_unix
from oscwire import bundle, msg, timetag

MINUS_FOUR = bytes.fromhex("2362756e646c65000000000000000001fffffffc")
DEADLINE_S = 2.0                  # per datagram: a hang detector, generous on a loaded 2-core machine

_pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)


def decode_within_deadline(data: bytes):
    """decode(data) in a worker; raises if it takes longer than DEADLINE_S (a hang)."""
    fut = _pool.submit(_decode_outcome, data)
    try:
        return fut.result(DEADLINE_S)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"decoding {len(data)} bytes took over {DEADLINE_S} s: {data[:64].hex()}")


def _decode_outcome(data):
    try:
        return decode(data)
    except OscDecodeError as e:
        assert e.code in ("malformed", "busy") and e.message
        return e


# ------------------------------------------------------------------ known inputs
def test_the_minus_four_bundle_is_refused_not_looped():
    r = decode_within_deadline(MINUS_FOUR)
    assert isinstance(r, OscDecodeError) and r.code == "malformed" and "-4" in r.message


@pytest.mark.parametrize("size", [-4, -8, -16, -(2 ** 31), 0, 3, 6, 2 ** 31 - 1, 4096])
def test_every_lying_element_size_is_refused(size):
    data = b"#bundle\0" + timetag(None) + struct.pack(">i", size) + msg("/wb/ping")
    r = decode_within_deadline(data)
    assert isinstance(r, OscDecodeError) and r.code == "malformed"


def test_an_element_size_pointing_at_its_own_field_is_refused():
    # the size field says "the next 4 bytes" = the element is just its own size field's successor
    data = b"#bundle\0" + timetag(None) + struct.pack(">i", 4) + struct.pack(">i", -4)
    assert isinstance(decode_within_deadline(data), OscDecodeError)


def test_messages_round_trip_with_python_osc_as_the_encoder():
    data = build("/wb/play", 3, "ambient pads in D", 2.5, 7, b"\x01\x02\x03")
    (tm,) = decode(data)
    assert tm.time == 0.0
    m = tm.message
    assert m.address == "/wb/play"
    assert m.params[0] == 3 and m.params[1] == "ambient pads in D" and m.params[3] == 7
    assert m.params[2] == pytest.approx(2.5) and m.params[4] == b"\x01\x02\x03"


def test_all_type_tags_and_arrays():
    body = (struct.pack(">i", -5) + struct.pack(">f", 0.5) + b"ab\0\0" + struct.pack(">i", 2) + b"xy\0\0"
            + struct.pack(">q", 2 ** 40) + struct.pack(">d", 1.25) + struct.pack(">Q", 1) + struct.pack(">I", 65)
            + struct.pack(">I", 0xFF00FF00) + b"\x90\x3c\x40\x00" + b"sym\0" + struct.pack(">i", 9))
    data = msg("/x", tags=",ifsbhdtcrmTFNIS[i]") + body
    (tm,) = decode(data)
    assert tm.message.params == [-5, 0.5, "ab", b"xy", 2 ** 40, 1.25, 0.0, "A", 0xFF00FF00, b"\x90\x3c\x40\x00",
                                 True, False, None, float("inf"), "sym", [9]]


@pytest.mark.parametrize("tags", [",[i", ",i]", ",[[[[[i]]]]]", ",x", ",i\x01"])
def test_bad_type_tags_are_refused(tags):
    data = msg("/x", tags=tags) + struct.pack(">i", 1)
    assert isinstance(decode_within_deadline(data), OscDecodeError)


def test_nested_bundles_run_at_the_later_timetag_and_depth_is_bounded():
    t = time.time() + 5
    data = bundle(timetag(t), msg("/a"), bundle(timetag(None), msg("/b")), bundle(timetag(t + 1), msg("/c")))
    got = decode(data)
    assert [m.message.address for m in got] == ["/a", "/b", "/c"]
    assert got[0].time == pytest.approx(t, abs=1e-6) and got[1].time == got[0].time
    assert got[2].time == pytest.approx(t + 1, abs=1e-6)
    inner = msg("/wb/ping")
    for _ in range(MAX_DEPTH):                            # MAX_DEPTH bundles, one inside the other
        inner = bundle(timetag(None), inner)
    assert len(decode(inner)) == 1
    r = decode_within_deadline(bundle(timetag(None), inner))
    assert isinstance(r, OscDecodeError) and "deeper" in r.message


def test_per_datagram_budgets():
    r = decode_within_deadline(bundle(timetag(None), *[msg("/wb/ping")] * 300))
    assert isinstance(r, OscDecodeError) and r.code == "busy"          # messages
    r = decode_within_deadline(bundle(timetag(None), *[bundle(timetag(None), msg("/a"))] * 80))
    assert isinstance(r, OscDecodeError) and "bundles" in r.message     # bundles
    r = decode_within_deadline(msg("/x", tags="," + "N" * 2000))
    assert isinstance(r, OscDecodeError) and "arguments" in r.message   # arguments
    assert isinstance(decode_within_deadline(b"\0" * 70000), OscDecodeError)   # bytes
    assert isinstance(decode_within_deadline(b""), OscDecodeError)


def test_timetags():
    assert timetag_to_unix(0) == 0.0 and timetag_to_unix(1) == 0.0
    sec = 2208988800 + 1_000_000
    assert timetag_to_unix((sec << 32) | (1 << 31)) == pytest.approx(1_000_000.5)


# ------------------------------------------------------------------ generated hostile input
def _element(data: bytes, size: int | None = None) -> bytes:
    return struct.pack(">i", len(data) if size is None else size) + data


sizes = st.one_of(st.sampled_from([-4, -8, -1, 0, 1, 2, 3, 4, 8, 2 ** 31 - 1, -(2 ** 31)]),
                  st.integers(-(2 ** 31), 2 ** 31 - 1))
messages = st.one_of(
    st.just(msg("/wb/ping")),
    st.builds(lambda s: msg("/wb/play", 1, s), st.text(max_size=40)),
    st.builds(lambda t, tail: msg("/wb/x", tags="," + t) + tail,
              st.text(alphabet="ifsbhdtcrmTFNIS[]xq", max_size=24), st.binary(max_size=64)),
)


@st.composite
def hostile_bundles(draw, depth=0):
    """Bundles whose elements are real messages, nested bundles, or sizes that lie."""
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            parts.append(_element(draw(messages)))
        elif kind == 1 and depth < 12:
            parts.append(_element(draw(hostile_bundles(depth + 1))))
        elif kind == 2:
            body = draw(messages)
            parts.append(_element(body, draw(sizes)))
        else:
            parts.append(struct.pack(">i", draw(sizes)) + draw(st.binary(max_size=32)))
    tt = draw(st.one_of(st.just(timetag(None)), st.binary(min_size=8, max_size=8)))
    return b"#bundle\0" + tt + b"".join(parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_bundles())
def test_hypothesis_hostile_bundles_never_hang(data):
    r = decode_within_deadline(data)
    if not isinstance(r, OscDecodeError):
        assert len(r) <= 256 and all(m.message.address.startswith("/") for m in r)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_hypothesis_random_bytes_never_hang(data):
    decode_within_deadline(data)
    decode_within_deadline(b"#bundle\0" + data)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 4000), st.sampled_from([-4, -8, 4, 8, 16]))
def test_hypothesis_deep_nesting_and_huge_counts_stay_bounded(depth, size):
    # a chain of bundles that each claim `size` bytes, and a huge declared type-tag count
    data = (b"#bundle\0" + timetag(None) + struct.pack(">i", size)) * min(depth, 3000)
    decode_within_deadline(data[:65536 - (len(data[:65536]) % 4)])
    decode_within_deadline(msg("/x", tags="," + "i" * depth) + b"\0" * min(4 * depth, 60000))


# ------------------------------------------------------------------ reply sizes and pages
@given(st.lists(st.one_of(st.integers(-(2 ** 40), 2 ** 40), st.floats(width=32, allow_nan=False),
                          st.text(st.characters(blacklist_characters="\x00"), max_size=30), st.binary(min_size=1, max_size=30)), max_size=6))
def test_osc_size_is_the_built_size(args):
    assert osc_size("/wb/slot", *args) == len(build("/wb/slot", *args))


@given(st.lists(st.integers(44, 300), max_size=70), st.integers(100, 20000))
def test_status_pages_cover_every_row_once_and_fit(sizes, budget):
    pages = status_pages(sizes, budget, 44, 28)
    covered = [k for i, j in pages for k in range(i, j)]
    assert covered == list(range(len(sizes)))
    for i, j in pages:
        term = 44 if j == len(sizes) else 28
        assert j - i == 1 or sum(sizes[i:j]) + term <= budget     # a lone row is shortened to fit


def test_cut_utf8_keeps_characters_whole():
    assert cut_utf8("héllo", 2) == "h"
    assert cut_utf8("héllo", 3) == "hé"
    assert cut_utf8("abc", 10) == "abc"


# ------------------------------------------------------------------ per-host budgets
def test_hosts_are_keyed_per_host_not_per_port():
    assert host_key("127.0.0.1") == host_key("127.9.9.9") == host_key("::1") == "loopback"
    assert host_key("::ffff:10.0.0.7") == host_key("10.0.0.7") == "10.0.0.7"
    assert host_key("2001:db8::1") == host_key("2001:db8::ffff") == "2001:db8::/64"
    assert host_key("2001:db8:0:1::1") != host_key("2001:db8::1")


def test_host_budgets_are_bounded_and_expire():
    hb = HostBudgets(rate=100.0, burst=10.0, max_hosts=64)
    for k in range(10_000):
        hb.admit(f"10.0.{k // 256}.{k % 256}", now=0.0)
        assert len(hb) <= 64
    assert hb.evicted > 0
    hb.admit("10.9.9.9", now=100.0)                      # everything else has expired
    assert len(hb) == 1


def test_host_budgets_limit_messages_and_cpu():
    hb = HostBudgets(rate=10.0, burst=5.0, cpu_rate=0.1, cpu_burst=0.01)
    assert [hb.admit("h", 0.0) for _ in range(7)] == ["", "", "", "", "", "rate", "rate"]
    assert hb.admit("h", 1.0) == ""                       # refilled
    assert hb.admit("other", 0.0) == ""                   # another host has its own
    hb.charge("c", 0.0, 0.05)                             # one expensive datagram: in debt
    assert hb.admit("c", 0.05) == "cpu"
    assert hb.admit("c", 0.3) == ""                       # paid back at 0.1 CPU-s per second
    assert hb.should_warn("h", 0.0) and not hb.should_warn("h", 0.5) and hb.should_warn("h", 1.6)


def test_exposure_warnings():
    lo = AllowList()
    assert exposure_warnings("OSC", "127.0.0.1", 1, lo, "--allow") == []
    assert exposure_warnings("OSC", "::1", 1, lo, "--allow") == []
    (w,) = exposure_warnings("OSC", "0.0.0.0", 9137, lo, "--allow")
    assert "every interface" in w and "only loopback" in w and "--allow" in w
    (w,) = exposure_warnings("/metrics", "::", 9464, AllowList(["192.168.1.0/24"]), "--metrics-allow")
    assert "192.168.1.0/24" in w and "no authentication" in w
    assert AllowList().allows("::ffff:127.0.0.1") and not AllowList().allows("10.0.0.1")
    assert not AllowList().allows("not an address")
