"""A hummed or sung take → its tune (``bridge.ops.transcribe``, basic-pitch's ONNX model on the CPU).

basic-pitch is a required dependency (``make setup`` installs it, without TensorFlow): the tests
that need it fail, never skip, where it is missing. The cleaning rules are tested on note lists
of their own, without the model.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import soundfile as sf

from bridge.ops import transcribe as T
from bridge.ops.transcribe import TNote, TranscribeError
from tests.singer import GLIDE_S, TUNE_D_MAJOR, TUNE_G_MAJOR, sing, white_noise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SR = 44100


def edit_distance(a, b) -> int:
    """Levenshtein distance between two sequences (substitutions, insertions, deletions)."""
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def pitch_accuracy(sung, heard) -> float:
    """Share of the sung notes the transcription got right: 1 − edit distance / notes sung."""
    return 1.0 - edit_distance([n.pitch for n in sung], [n.pitch for n in heard]) / len(sung)


def write_take(tmp_path, audio, name="take.wav", sr=SR) -> str:
    path = str(tmp_path / name)
    sf.write(path, audio, sr, subtype="PCM_16")
    return path


# --- the model is there, on ONNX, without TensorFlow ----------------------------------------------
def test_basic_pitch_runs_on_onnxruntime_without_tensorflow_and_quietly():
    """The model loads from the wheel's ONNX file, TensorFlow never loads, and basic-pitch's
    "X is not installed" warnings do not reach a configured stderr log."""
    code = ("import logging, sys; logging.basicConfig(level=logging.WARNING); "
            "from bridge.ops import transcribe as T; m, _, _ = T._basic_pitch(); "
            "print(type(m.model).__module__.split('.')[0], 'tensorflow' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"basic-pitch does not load (make setup installs it): {r.stderr[-2000:]}"
    assert r.stdout.split() == ["onnxruntime", "False"]
    assert "not installed" not in r.stderr, r.stderr


@pytest.mark.parametrize("missing", ["basic_pitch", "onnxruntime"])
def test_without_basic_pitch_or_onnxruntime_the_error_says_make_setup(missing):
    code = (f"import sys; sys.modules[{missing!r}] = None; import numpy as np; "
            "from bridge.ops import transcribe as T\n"
            "try:\n    T.transcribe(np.ones(22050, np.float32), 22050)\n"
            "except T.TranscribeError as e:\n    print(e.code, '|', e.message)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("not_installed |") and "make setup" in r.stdout


# --- a sung take → the sung tune ------------------------------------------------------------------
@pytest.mark.parametrize("tune,transpose,seed", [
    (TUNE_G_MAJOR, 0, 0),      # a high voice
    (TUNE_G_MAJOR, -12, 1),    # a low voice: the strongest partial is the 3rd-5th, not the fundamental
    (TUNE_D_MAJOR, -5, 2),     # leaps and runs of short notes
], ids=["G-high", "G-low", "D-leaps"])
def test_a_sung_take_gives_its_pitch_sequence(tmp_path, tune, transpose, seed):
    audio, sung = sing(tune, sr=SR, transpose=transpose, seed=seed)
    heard = T.transcribe_file(write_take(tmp_path, audio))
    acc = pitch_accuracy(sung, heard)
    print(f"{len(sung)} notes sung, {len(heard)} heard: pitch sequence {acc:.0%} right "
          f"(edit distance {edit_distance([n.pitch for n in sung], [n.pitch for n in heard])})")
    assert acc >= 0.9, ([n.pitch for n in sung], [n.pitch for n in heard])
    # one note at a time, none a blip, each where it was sung (its glide in counts as its start)
    assert all(a.end <= b.start + 1e-9 for a, b in zip(heard, heard[1:]))
    assert all(n.end - n.start >= T.MIN_NOTE_S - 1e-9 for n in heard)
    assert all(1 <= n.velocity <= 127 for n in heard)
    if len(heard) == len(sung):
        off = [abs(h.start - (s.start - GLIDE_S / 2)) for h, s in zip(heard, sung)]
        assert max(off) < 0.1, np.round(off, 3)
        off = [abs(h.end - s.end) for h, s in zip(heard, sung)]
        assert max(off) < 0.1, np.round(off, 3)


def test_the_same_pitch_sung_twice_is_two_notes_and_a_held_note_with_vibrato_is_one(tmp_path):
    """The G-major tune sings B4 twice with a breath between (notes 9 and 10) and holds
    A4 for 1 s with vibrato (note 8): basic-pitch cuts the held note into pieces and runs the
    first B into the second; the cleaning gives back one A and two Bs."""
    audio, sung = sing(TUNE_G_MAJOR, sr=SR, seed=3)
    heard = T.transcribe(audio, SR)
    assert [n.pitch for n in heard] == [n.pitch for n in sung]
    a, b1, b2 = heard[7], heard[8], heard[9]
    assert a.end - a.start > 0.85
    assert b1.pitch == b2.pitch and b2.start - b1.end >= 0.05     # the breath (90 ms) is a rest


def test_a_note_sung_softer_gets_a_lower_velocity():
    audio, sung = sing(TUNE_G_MAJOR, sr=SR, seed=4, gains_db={4: -12.0})
    heard = T.transcribe(audio, SR)
    assert [n.pitch for n in heard] == [n.pitch for n in sung]
    v = [n.velocity for n in heard]
    assert v[4] <= min(v[:4] + v[5:]) - 15, v


def test_any_rate_and_channel_count_give_the_same_tune():
    audio, sung = sing(TUNE_G_MAJOR, sr=48000, seed=5)
    stereo = np.stack([audio, 0.8 * audio], axis=1)
    a = [n.pitch for n in T.transcribe(stereo, 48000)]
    b = [n.pitch for n in T.transcribe(audio[::2].copy(), 24000)]
    assert a == b == [n.pitch for n in sung]


# --- takes with no tune: a clear error, never a traceback -----------------------------------------
@pytest.mark.parametrize("kind", ["silence", "near-silence", "white-noise", "quiet-noise", "breath-only"])
def test_silence_or_noise_is_a_clear_error(tmp_path, kind):
    rng = np.random.default_rng(7)
    if kind == "silence":
        audio = np.zeros(3 * SR, np.float32)
    elif kind == "near-silence":
        audio = (1e-5 * rng.standard_normal(3 * SR)).astype(np.float32)
    elif kind == "white-noise":
        audio = white_noise(3.0, SR, seed=1)
    elif kind == "quiet-noise":
        audio = white_noise(3.0, SR, seed=2, peak=0.01)
    else:   # the singer's breath alone: the voice muted
        audio, _ = sing(TUNE_G_MAJOR[:4], sr=SR, seed=6, gains_db={i: -200.0 for i in range(4)})
    path = write_take(tmp_path, audio, sr=SR)
    with pytest.raises(TranscribeError) as e:
        T.transcribe_file(path)
    assert e.value.code == "no_notes"
    assert e.value.message == f"no notes heard in {path}: is it silent or noise?"


@pytest.mark.parametrize("kind", ["text", "empty", "missing", "directory", "no-samples"])
def test_a_file_that_is_not_audio_is_a_clear_error(tmp_path, kind):
    path = tmp_path / "take.wav"
    if kind == "text":
        path.write_text("this is not a sound\n" * 50)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "directory":
        path.mkdir()
    elif kind == "no-samples":
        sf.write(str(path), np.zeros(0, np.float32), SR)
    with pytest.raises(TranscribeError) as e:
        T.transcribe_file(path)
    assert e.value.code == "not_audio"
    assert str(path) in e.value.message and "Traceback" not in e.value.message


def test_bad_arrays_are_a_clear_error():
    for audio, sr in ((np.zeros((2, 2, 2)), SR), (np.array([0.0, np.nan] * 100), SR), (np.zeros(100), 0)):
        with pytest.raises(TranscribeError) as e:
            T.transcribe(audio, sr)
        assert e.value.code == "not_audio"


# --- the CLI helper -------------------------------------------------------------------------------
def test_theme_from_audio_prints_the_notes_and_writes_them_as_midi(tmp_path, capsys):
    import mido

    audio, sung = sing(TUNE_G_MAJOR, sr=SR, seed=8)
    take = write_take(tmp_path, audio)
    out = tmp_path / "theme.mid"
    rc = T.main_theme_from_audio(argparse.Namespace(from_audio=take, out=str(out)))
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    assert printed.out.count("vel") == len(sung)
    ons = [m.note for m in mido.MidiFile(str(out)) if m.type == "note_on" and m.velocity > 0]
    assert ons == [n.pitch for n in T.transcribe_file(take)]


def test_wavebridge_theme_from_audio_runs_from_the_command_line(tmp_path):
    """``wavebridge theme --from-audio`` (``bridge.ops.cli``): the notes and a MIDI file, exit 0;
    a silent take: one line on stderr, exit 2, no traceback and no basic-pitch warnings."""
    audio, sung = sing(TUNE_G_MAJOR, sr=SR, seed=10)
    take, silent = write_take(tmp_path, audio), write_take(tmp_path, np.zeros(SR, np.float32), "silent.wav")
    out = tmp_path / "theme.mid"
    run = [sys.executable, "-m", "bridge", "theme", "--from-audio"]
    ok = subprocess.run(run + [take, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("vel") == len(sung) and out.exists() and ok.stderr == ""
    bad = subprocess.run(run + [silent], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [f"wavebridge theme: no notes heard in {silent}: is it silent or noise?"]


def test_theme_from_audio_on_a_bad_take_says_why_in_one_line(tmp_path, capsys):
    take = write_take(tmp_path, np.zeros(SR, np.float32))
    out = tmp_path / "theme.mid"
    rc = T.main_theme_from_audio(argparse.Namespace(from_audio=take, out=str(out)))
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert err.strip().splitlines() == [f"wavebridge theme: no notes heard in {take}: is it silent or noise?"]


# --- the cleaning rules, on note lists -------------------------------------------------------------
def N(start, end, pitch, vel=100):
    return TNote(start, end, pitch, vel)


def test_overlaps_go_to_the_strongest_note_and_the_weaker_keeps_what_is_left():
    notes = [N(0.0, 1.0, 60, 100), N(0.9, 1.5, 62, 100), N(0.3, 0.4, 72, 70)]   # a tail overlap, an octave blip
    assert T.clean_sung_line(notes) == [N(0.0, 1.0, 60, 100), N(1.0, 1.5, 62, 100)]


def test_pieces_of_one_pitch_join_unless_the_gap_is_long():
    joined = T.clean_sung_line([N(0.0, 0.3, 64, 90), N(0.33, 0.6, 64, 110), N(0.6, 0.9, 64, 100)])
    assert joined == [N(0.0, 0.9, 64, 110)]
    apart = T.clean_sung_line([N(0.0, 0.3, 64), N(0.35, 0.6, 64)])
    assert [n.start for n in apart] == [0.0, 0.35]


def test_a_level_dip_between_pieces_of_one_pitch_keeps_them_two_notes():
    level = np.full(100, -20.0)              # 1 s of level, 10 ms frames
    pieces = [N(0.0, 0.5, 64), N(0.5, 0.9, 64)]
    assert len(T.clean_sung_line(pieces, level)) == 1
    level[40:48] = -45.0                     # a breath at 0.40-0.48 s
    assert T.clean_sung_line(pieces, level) == pieces


def test_blips_and_unsure_notes_go_and_the_notes_they_parted_join():
    notes = [N(0.0, 0.4, 67), N(0.4, 0.45, 69), N(0.45, 0.9, 67), N(1.2, 1.5, 50, 40)]
    assert T.clean_sung_line(notes) == [N(0.0, 0.9, 67)]


# --- a figure, not an assertion ---------------------------------------------------------------------
def test_time_to_transcribe_a_2s_window():
    audio, _ = sing(TUNE_G_MAJOR, sr=T.MODEL_SR, seed=9)
    window = audio[int(0.3 * T.MODEL_SR):int(2.3 * T.MODEL_SR)]
    T.transcribe(window, T.MODEL_SR)                         # warm: model loaded, first run done
    t0 = time.perf_counter()
    notes = T.transcribe(window, T.MODEL_SR)
    ms = (time.perf_counter() - t0) * 1000
    print(f"transcribing a 2 s window: {ms:.1f} ms on {os.cpu_count()} CPUs ({len(notes)} notes)")
    assert notes
