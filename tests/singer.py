"""A synthetic sung take, for the transcription tests: a voice-like tone singing a known melody.

Not a real voice, but the things that make a voice hard to transcribe are there:

* a glottal-like source (harmonics falling about 12 dB per octave) through a vowel's formants
  (an "ah": resonances near 700, 1200 and 2600 Hz), so the strongest partial is often not the
  fundamental;
* vibrato, about 5.5 Hz and ±30 cents, fading in over the first 200 ms of each note, with its
  rate and depth wandering a little;
* portamento: a 60 ms glide in log-frequency from one note to the next (legato), the pitch
  crossing every semitone in between;
* soft attacks (~50 ms) and releases, small random jitter of pitch and level (shimmer);
* breath noise (band-passed noise following the level, plus a floor), and a short breath or
  consonant gap where a phrase breaks or a pitch is sung twice in a row (a singer re-articulates).

:func:`sing` returns the audio and the notes it meant, so a test knows the answer. Deterministic
per seed.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: a 14-note tune in G major, (MIDI pitch, seconds, breath after it): steps, leaps, a repeated
#: pitch, a phrase break, durations 0.25–1 s
TUNE_G_MAJOR = (
    (67, 0.50, False), (69, 0.25, False), (71, 0.50, False), (67, 0.75, True),
    (74, 0.50, False), (71, 0.25, False), (72, 0.50, False), (69, 1.00, True),
    (71, 0.375, True), (71, 0.375, False), (69, 0.25, False), (67, 0.50, False),
    (66, 0.50, False), (67, 1.00, False),
)
#: 16 notes in D major with leaps (a fourth, a fifth, a seventh down) and runs of short notes
TUNE_D_MAJOR = (
    (62, 0.25, False), (66, 0.25, False), (69, 0.50, False), (74, 0.75, True),
    (73, 0.25, False), (71, 0.25, False), (69, 0.50, False), (66, 0.50, True),
    (67, 0.25, False), (69, 0.25, False), (71, 0.50, False), (62, 1.00, True),
    (64, 0.30, False), (66, 0.30, False), (64, 0.30, False), (62, 1.00, False),
)
GLIDE_S = 0.060       # portamento between legato notes
BREATH_S = 0.090      # silence (breath noise only) after a note marked with a breath
LEAD_IN_S = 0.30      # breath noise before the first note, and after the last


class SungNote(NamedTuple):
    start: float   # seconds, where the pitch reaches the note (after the glide into it)
    end: float
    pitch: int     # MIDI


def _formant_gain(freq: np.ndarray) -> np.ndarray:
    """An "ah" vowel's envelope: a source falling ~12 dB/octave above 200 Hz times three
    resonances. ``freq`` in Hz (any shape) → linear gain."""
    source = 1.0 / (1.0 + (freq / 200.0) ** 2)
    env = np.full_like(freq, 0.05)
    for f0, bw, g in ((700.0, 130.0, 1.0), (1220.0, 150.0, 0.5), (2600.0, 250.0, 0.25)):
        env += g / (1.0 + ((freq - f0) / (bw / 2.0)) ** 2)
    return source * env


def _smooth(x: np.ndarray, n: int) -> np.ndarray:
    k = np.hanning(max(3, n))
    return np.convolve(x, k / k.sum(), mode="same")


def sing(tune=TUNE_G_MAJOR, sr: int = 44100, transpose: int = 0, seed: int = 0,
         breath_db: float = -38.0, gains_db: dict[int, float] | None = None) -> tuple[np.ndarray, list[SungNote]]:
    """Sing ``tune`` ((pitch, seconds, breath_after) rows) → (mono float32 audio at ``sr``, the
    notes sung). ``transpose`` in semitones (−12 for a low voice); ``gains_db``: note index →
    level change (a note sung softer or louder); ``breath_db``: the breath noise's level."""
    rng = np.random.default_rng(seed)
    n_total = int(round((2 * LEAD_IN_S + sum(d + (BREATH_S if b else 0.0) for _, d, b in tune)) * sr))
    midi = np.zeros(n_total)          # pitch contour (fractional MIDI)
    level = np.zeros(n_total)         # voiced level 0..1
    notes: list[SungNote] = []
    t = LEAD_IN_S
    prev_pitch, prev_breath = None, True
    for i, (pitch, dur, breath) in enumerate(tune):
        p = pitch + transpose
        a, b = int(round(t * sr)), int(round((t + dur) * sr))
        midi[a:b] = p
        glide = not prev_breath and prev_pitch is not None
        if glide:                     # legato: the glide takes the first GLIDE_S of this note
            g = int(GLIDE_S * sr)
            w = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, g))
            midi[a:a + g] = prev_pitch + (p - prev_pitch) * w
        # vibrato fades in over 200 ms after the pitch is reached
        n = b - a
        tt = np.arange(n) / sr
        rate = 5.5 * (1.0 + 0.05 * rng.standard_normal())
        depth = 0.30 * (1.0 + 0.1 * rng.standard_normal()) * np.clip(tt / 0.2, 0.0, 1.0)
        midi[a:b] += depth * np.sin(2 * np.pi * rate * tt + rng.uniform(0, 2 * np.pi))
        # level: soft attack after a breath (or at the start), a softer dip on legato changes
        env = np.ones(n)
        att = int(0.05 * sr)
        if not glide:
            env[:att] = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, att))
        if breath:
            rel = int(0.05 * sr)
            env[-rel:] *= 0.5 + 0.5 * np.cos(np.linspace(0.0, np.pi, rel))
        env *= (0.8 + 0.2 * rng.random()) * 10 ** ((gains_db or {}).get(i, 0.0) / 20.0)
        level[a:b] = env
        notes.append(SungNote(t + (GLIDE_S if glide else 0.0), t + dur, p))
        t += dur
        if breath:
            t += BREATH_S
        prev_pitch, prev_breath = p, breath
    # between notes (breaths, lead-in and -out) the pitch holds the nearest note's: no voice there
    held = np.where(midi != 0, np.arange(n_total), 0)
    np.maximum.accumulate(held, out=held)
    midi = midi[held]
    midi[midi == 0] = notes[0].pitch if notes else 60
    # jitter (slow random pitch wander, a few cents) and shimmer
    midi += 0.04 * _smooth(rng.standard_normal(n_total), int(0.03 * sr))
    level *= 1.0 + 0.05 * _smooth(rng.standard_normal(n_total), int(0.01 * sr))
    level = np.clip(_smooth(level, int(0.008 * sr)), 0.0, None)

    f0 = 440.0 * 2.0 ** ((midi - 69.0) / 12.0)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    voice = np.zeros(n_total)
    nyq = 0.45 * sr
    for k in range(1, 40):
        fk = k * f0
        gain = _formant_gain(fk) * (fk < min(nyq, 6000.0))
        if not gain.any():
            break
        voice += gain * np.sin(k * phase + rng.uniform(0, 2 * np.pi))
    voice *= level / (np.max(np.abs(voice)) + 1e-12)

    # breath: noise band-passed around 1.5-5 kHz, following the level, over a floor
    noise = rng.standard_normal(n_total)
    spec = np.fft.rfft(noise)
    fr = np.fft.rfftfreq(n_total, 1.0 / sr)
    spec *= np.exp(-0.5 * ((fr - 3000.0) / 1500.0) ** 2)
    noise = np.fft.irfft(spec, n_total)
    noise /= np.max(np.abs(noise)) + 1e-12
    breath = 10 ** (breath_db / 20.0) * noise * (0.3 + level)
    out = 0.5 * voice + breath
    return (out / (np.max(np.abs(out)) + 1e-12) * 0.7).astype(np.float32), notes


def white_noise(seconds: float = 3.0, sr: int = 44100, seed: int = 0, peak: float = 0.5) -> np.ndarray:
    """Plain white noise (no pitch at all), for the "noise-only take" error."""
    x = np.random.default_rng(seed).standard_normal(int(seconds * sr))
    return (peak * x / np.max(np.abs(x))).astype(np.float32)
