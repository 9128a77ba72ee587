"""amp: a guitar amplifier and speaker cabinet for the parts that ask for one (``Part.drive``).

General MIDI's overdriven and distortion guitars (programs 29 and 30) are samples of a mildly
driven amp heard through a clean channel: next to a real rock or metal record they are thin and
polite. A take heard by a music tagger trained on real records (``scripts/mir-genre``) showed it:
set T's thrash-metal take, its guitars soloed, was tagged *jazz* and *blues*; its drums and bass
*electronic*. The same guitars through this stage were tagged *rock* (0.74) and *metal* (0.28).

The stage, per part, in mono (the part's pan is applied after it, as a miked cabinet would be):

1. **Input**: a slow level follower (RMS, τ 0.3 s, held through silence) brings the part's
   signal to a fixed reference before the gain, so ``drive`` means the same distortion whatever
   the part's level, velocity or the SoundFont's own loudness.
2. **Pre-emphasis**: a 90 Hz high-pass (the low end that turns to mud when clipped) and a broad
   mid push at 800 Hz, as an overdrive pedal in front of the amp.
3. **Gain and clipping**: ``tanh`` of the signal times 8 … 36 dB (``drive`` 0 … 1), biased off
   centre and its negative half flattening at 0.75 instead of 1, so the clipping is asymmetric
   (even harmonics, a valve's character); its output at rest is subtracted (silence stays 0)
   and the cabinet's high-pass takes the rest of the offset out.
4. **Tone stack and cabinet**: a mid scoop at 450 Hz (deeper with more drive, as metal's is), a
   4×12 cabinet's response — a 70 Hz high-pass, a fourth-order fall from 5 kHz — and a presence
   lift at 2.5 kHz.
5. **Output**: the level follower's inverse on the cabinet's output (τ 0.3 s): the part leaves
   the amp at the loudness it came in with, so the calibrated mix (:mod:`engine.synth.fluid`)
   and the stream's loudness estimate still hold — its dynamics are the amp's, compressed.

Works on whole blocks of a stream (:data:`engine.synth.perform.BLOCK` frames) on the
``[engine]`` thread; its filter and follower states carry from block to block, so a stream is
the same whatever its read sizes.
"""
from __future__ import annotations

import math

import numpy as np

from engine.synth.perform import BLOCK, _highpass, _lowpass, _peak

#: the gain in front of the clipper at ``drive`` 0 and 1 (dB)
GAIN_DB = (8.0, 36.0)
#: the level (RMS) the input follower brings a part to before the gain
REF_RMS = 0.25
#: the clipper's bias (at the reference level, before the gain): the signal's zero crossings move
#: off the clipper's centre, so even a hard-driven wave is asymmetric (even harmonics); the
#: clipper's output at rest is taken back off, so silence stays silent
BIAS = 0.05
#: where the clipper's negative half flattens, against the positive half's 1
NEG_CEILING = 0.75
#: the level followers' time constant (s)
FOLLOW_S = 0.3
#: below this input RMS the followers hold (a rest is not pumped up)
SILENCE_RMS = 1e-5


class Amp:
    """One part's amp and cabinet (module doc). ``process(x)`` filters a mono float64 block in
    place. ``[engine]``"""

    def __init__(self, sr: int, drive: float):
        from scipy.signal import sosfilt
        self._sosfilt = sosfilt
        self.sr = int(sr)
        d = max(0.0, min(1.0, float(drive)))
        self.gain = 10 ** ((GAIN_DB[0] + (GAIN_DB[1] - GAIN_DB[0]) * d) / 20)
        self.pre = np.stack([_highpass(90.0, sr), _peak(800.0, 3.0 + 4.0 * d, 0.7, sr)])
        self.post = np.stack([_peak(450.0, -(2.0 + 5.0 * d), 0.9, sr), _highpass(70.0, sr),
                              _lowpass(5000.0, sr, 0.54), _lowpass(5000.0, sr, 1.31),
                              _peak(2500.0, 2.0, 1.2, sr)])
        self._ramp = np.arange(BLOCK) / BLOCK      # a block's gain ramp (0 … 1, end excluded)
        self._rest = float(self._clip(np.array([self.gain * BIAS]))[0])
        self.zi_pre = np.zeros((self.pre.shape[0], 2))
        self.zi_post = np.zeros((self.post.shape[0], 2))
        self.rms_in = None              # the followers' running mean squares
        self.rms_out = None
        self.g_in = 1.0                 # the gains applied at the end of the last block
        self.g_out = 1.0

    @staticmethod
    def _clip(u: np.ndarray) -> np.ndarray:
        neg = u < 0.0
        u[neg] = NEG_CEILING * np.tanh(u[neg] / NEG_CEILING)
        np.tanh(u, out=u, where=~neg)
        return u

    def _follow(self, ms: float | None, x: np.ndarray) -> float | None:
        m = float(np.dot(x, x) / x.size) if x.size else 0.0
        if m < SILENCE_RMS ** 2:
            return ms
        if ms is None:
            return m
        a = math.exp(-x.size / (FOLLOW_S * self.sr))
        return a * ms + (1 - a) * m

    def process(self, x: np.ndarray) -> None:
        n = x.size
        if not n:
            return
        first = self.rms_in is None
        self.rms_in = self._follow(self.rms_in, x)
        if self.rms_in is None:                       # silence so far: nothing to play
            x[:] = 0.0
            return
        g_in = REF_RMS / math.sqrt(self.rms_in)
        if first:                                     # the first sound: its own level, at once
            self.g_in = g_in
        ramp = self._ramp[:n] if n == BLOCK else np.arange(n) / n
        x *= self.g_in + (g_in - self.g_in) * ramp
        y, self.zi_pre = self._sosfilt(self.pre, x, zi=self.zi_pre)
        y = self._clip(self.gain * (y + BIAS)) - self._rest
        y, self.zi_post = self._sosfilt(self.post, y, zi=self.zi_post)
        self.rms_out = self._follow(self.rms_out, y)
        if self.rms_out is None:
            x[:] = 0.0
            self.g_in = g_in
            return
        # out: the level the part came in with (both followers' mean squares, the same τ)
        g_out = math.sqrt(self.rms_in / self.rms_out)
        if first:
            self.g_out = g_out
        x[:] = y * (self.g_out + (g_out - self.g_out) * ramp)
        self.g_in, self.g_out = g_in, g_out
