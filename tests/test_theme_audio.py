"""A tune heard, not just written: the rendered lead sings a given tune (found by basic-pitch in
the audio), and a sung take goes through ``wavebridge theme --from-audio … --send`` into a running
daemon's slot, whose lead then sings what was sung.
"""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from bridge.ops.render import render_take
from bridge.ops.transcribe import main_theme_from_audio, raw_notes, to_model_rate
from engine.compose.composer import composer_of
from engine.compose.theme import clean
from singer import TUNE_G_MAJOR, sing

# a tune in whole beats at 120 bpm: G A B G | D B C A (quarters and halves)
TUNE = [(0, 1, 67), (1, 1, 69), (2, 1, 71), (3, 1, 67), (4, 1, 74), (5, 1, 71), (6, 1, 72), (7, 1, 69)]


def test_the_rendered_lead_is_heard_singing_the_tune():
    """basic-pitch on the mix (polyphonic): each note of the tune, where the score puts it in the
    first phrase, has a transcribed note of its pitch class starting within 90 ms."""
    th = clean([(t, d * 0.9, p, 100) for t, d, p in TUNE])
    audio, score, _ = render_take("a solo flute melody over soft strings and a harp, 100 bpm", 24.0, seed=1,
                                  sample_rate=22050, theme=th)
    c = composer_of(score)
    lead = {j for j, pl in enumerate(c.plans) if pl.role == "lead"}
    sung = [n for i in range(c.theme_bar0, c.theme_bar0 + 2) for n in score.bar(i)[0] if n.part in lead]
    assert len(sung) == len(TUNE)
    heard = raw_notes(to_model_rate(audio, 22050))
    spb = 60.0 / score.bpm
    found = 0
    for n in sung:
        t = n.start * spb
        found += any(h.pitch % 12 == n.pitch % 12 and abs(h.start - t) < 0.09 for h in heard)
    assert found >= 0.9 * len(sung), (found, len(sung))


def test_a_sung_take_is_sent_to_a_daemons_slot_and_its_lead_sings_it(tmp_path, daemon_proc, osc_client):
    audio, _ = sing(TUNE_G_MAJOR, sr=44100, seed=3)
    take = tmp_path / "take.wav"
    sf.write(take, audio, 44100)
    d = daemon_proc("--slots", "1", "--metrics-port", "off", "--log-level", "INFO")
    c = osc_client(d.host, d.port)
    c.send("/wb/play", 1, "pop with piano chords, bass and drums at 120 bpm", 0.0, 2)
    assert c.wait_for("/wb/first_audio", 10.0) is not None
    args = SimpleNamespace(from_audio=str(take), from_input=None, out=str(tmp_path / "t.mid"), send=1,
                           bpm=120.0, host=d.host, port=d.port)
    assert main_theme_from_audio(args) == 0
    end = time.monotonic() + 10
    want = " ".join(["G4", "A4", "B4", "G4", "D5", "B4", "C5", "A4", "B4", "B4", "A4", "G4", "F#4", "G4"])
    while time.monotonic() < end:
        lines = [ln for ln in d.lines + d.err_lines if "a tune of" in ln]
        if lines:
            break
        time.sleep(0.05)
    assert lines and want in lines[-1], (lines, want, (d.lines + d.err_lines)[-12:])
    # a take that is only noise: a clear error, nothing sent
    sf.write(tmp_path / "noise.wav", np.random.default_rng(1).normal(0, 0.1, 44100).astype(np.float32), 44100)
    args.from_audio = str(tmp_path / "noise.wav")
    assert main_theme_from_audio(args) == 2
    assert d.proc.poll() is None


def test_from_input_records_the_sound_cards_input(monkeypatch, capsys):
    """``--from-input``: PortAudio's input is recorded and transcribed (a fake pyaudio plays the
    sung take into it: this machine has no microphone)."""
    import sys
    import types

    audio, meant = sing(TUNE_G_MAJOR, sr=22050, seed=1)
    mono = audio.mean(axis=1).astype(np.float32) if audio.ndim == 2 else audio.astype(np.float32)

    class Stream:
        pos = 0

        def read(self, n, exception_on_overflow=True):
            out = np.zeros(n, np.float32)
            chunk = mono[self.pos:self.pos + n]
            out[:len(chunk)] = chunk
            self.pos += n
            return out.tobytes()

        def stop_stream(self):
            pass

        def close(self):
            pass

    class PyAudio:
        def open(self, **kw):
            assert kw["input"] and kw["rate"] == 22050 and kw["channels"] == 1
            return Stream()

        def terminate(self):
            pass

    fake = types.SimpleNamespace(PyAudio=PyAudio, paFloat32=1)
    monkeypatch.setitem(sys.modules, "pyaudio", fake)
    args = SimpleNamespace(from_audio=None, from_input=len(mono) / 22050, device=None, out=None, send=None)
    assert main_theme_from_audio(args) == 0
    printed = [ln.split()[3] for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert [int(p) for p in printed] == [m.pitch for m in meant]
