"""scripts/mir-audit's own measures that need no MIR tools, and its blind prompt set.

The audio measures (essentia, librosa) run only in the separate measuring venv
(``mir-audit selftest`` checks those on synthetic click tracks); what is checked here is what
the project's venv can run: the prompt file's labels, the meter arithmetic, and the MIDI measures
(swing, arrival of named instruments) on MIDI files written by ``engine.midifile`` itself.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os

import pytest

from engine.midifile import write_midi
from engine.score import DRUM_CHANNEL, Note, Part, Score

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILIES = {"electronic", "hiphop", "pop", "rock", "metal", "jazz", "soulfunk", "latin", "caribbean", "folk",
            "classical", "ambient"}


def _load():
    path = os.path.join(ROOT, "scripts", "mir-audit")
    loader = importlib.machinery.SourceFileLoader("mir_audit", path)
    spec = importlib.util.spec_from_loader("mir_audit", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


mir = _load()


def _prompts():
    with open(os.path.join(ROOT, "scripts", "mir-prompts.json")) as fh:
        return json.load(fh)


def test_prompt_set_covers_every_family_with_labels_the_measures_can_use():
    rows = _prompts()
    assert len(rows) == 40
    assert len({r["prompt"] for r in rows}) == 40
    fams = {}
    for r in rows:
        assert set(r) >= {"prompt", "family", "style", "meter", "bpm", "instruments", "percussion"}
        fams[r["family"]] = fams.get(r["family"], 0) + 1
        for ins in r["instruments"]:
            assert ins["word"] and ins["programs"] and all(0 <= p <= 127 for p in ins["programs"])
        for per in r["percussion"]:                 # GM2's drum map adds 27–34 and 82–87 (82: shaker)
            assert per["word"] and per["keys"] and all(27 <= k <= 87 for k in per["keys"])
        if r["meter"] is not None:
            mir.parse_meter(r["meter"])
        assert r["bpm"] is None or 30 <= r["bpm"] <= 260
    assert set(fams) == FAMILIES and all(3 <= n <= 4 for n in fams.values()), fams
    kinds = [mir.meter_kind(mir.parse_meter(r["meter"]), r.get("groups") or ()) for r in rows if r["meter"]]
    assert kinds.count("compound") >= 3 and kinds.count("additive") >= 3
    words = {p["word"] for r in rows for p in r["percussion"]}
    for w in ("shaker", "handclaps", "tambourine", "cowbell", "congas", "bongos", "timbales", "cuica", "guiro",
              "triangle"):
        assert w in words
    melodic = {i["word"] for r in rows for i in r["instruments"]}
    for w in ("fiddle", "tin whistle", "trumpets", "harmonica", "square-wave lead", "accordion"):
        assert w in melodic


def test_meter_kinds_and_rivals():
    assert mir.meter_kind((6, 8)) == "compound" and mir.meter_kind((12, 8)) == "compound"
    assert mir.meter_kind((9, 8), (2, 2, 2, 3)) == "additive" and mir.meter_kind((7, 8)) == "additive"
    assert mir.meter_kind((3, 4)) == "simple"
    assert mir.meter_rivals((4, 4)) == [3, 5]
    assert mir.meter_rivals((3, 4)) == [2, 4]
    assert mir.meter_rivals((7, 8)) == [6, 8]
    assert 4 in mir.meter_rivals((6, 8)) and 6 not in mir.meter_rivals((6, 8))


@pytest.mark.parametrize("heard,quarter,meter,ok", [
    (120, 120, (4, 4), True), (60, 120, (4, 4), True), (80, 120, (4, 4), False),   # a dotted quarter in 4/4
    (131, 120, (4, 4), False),                                                   # off the grid
    (90, 90, (12, 8), True),        # 12/8 at dotted quarter 60: trackers tap the eighth pairs
    (116, 174, (6, 8), True), (100, 150, (7, 8), True),
])
def test_tracker_must_tap_the_score_grid(heard, quarter, meter, ok):
    assert mir.tracker_ok(heard, quarter, meter)[0] is ok


def _score(meter, bpm, swing, fiddle_from_bar):
    """A hand-made score: a fiddle (GM 110) playing eighths from ``fiddle_from_bar``, every other
    eighth delayed by ``swing`` of an eighth, and a cowbell on every beat from bar 0 on the brush kit
    (kit 40, the number of GM's violin program: a drum channel's kit is no instrument)."""
    bpb = meter[0] * 4.0 / meter[1]
    parts = [Part("fiddle", "lead", 110, 0), Part("drums", "drums", 40, DRUM_CHANNEL)]

    def bar(i):
        notes = [Note(1, i * bpb + b, 0.2, 56, 90) for b in range(int(bpb))]
        if i >= fiddle_from_bar:
            for e in range(int(bpb * 2)):
                notes.append(Note(0, i * bpb + e * 0.5 + (0.5 * swing if e % 2 else 0.0), 0.4, 69, 90))
        return notes, []

    return Score(prompt="test", seed=0, bpm=bpm, meter=meter, key_root=9, mode="minor", genre="test", parts=parts,
                 make_bar=bar, section_of=lambda i: "A", chord_of=lambda i: (57, 60, 64))


@pytest.mark.parametrize("swing,even", [(0.0, True), (0.33, False)])
def test_swing_measure_reads_the_project_midi(tmp_path, swing, even):
    path = str(tmp_path / "t.mid")
    write_midi(_score((6, 8), 174.0, swing, 0), path, seconds=20)
    notes, tpq, sig = mir.midi_events(path)
    pos, n = mir.swing_position(notes, tpq)
    assert sig == (6, 8) and n > 50
    assert (abs(pos - 0.5) <= mir.SWING_TOL) is even


def test_arrival_of_named_instruments_and_percussion(tmp_path):
    path = str(tmp_path / "t.mid")
    write_midi(_score((4, 4), 120.0, 0.0, 5), path, seconds=30)      # bar 5 of 4/4 at 120 = 10 s
    notes, _, _ = mir.midi_events(path)
    got = mir.arrivals(notes, [{"word": "fiddle", "programs": [40, 110]}, {"word": "banjo", "programs": [105]}],
                       [{"word": "cowbell", "keys": [56]}, {"word": "cuica", "keys": [78, 79]}])
    by = {a["word"]: a for a in got}
    assert by["fiddle"]["first"] == pytest.approx(10.0, abs=0.01) and not by["fiddle"]["ok"]
    assert by["banjo"]["first"] is None and not by["banjo"]["ok"]
    assert by["cowbell"]["first"] == pytest.approx(0.0, abs=0.01) and by["cowbell"]["ok"]
    assert by["cuica"]["first"] is None and not by["cuica"]["ok"]
