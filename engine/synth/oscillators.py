"""oscillators: the fallback renderer — a small additive/noise synth that plays a Score's MIDI.

Used when libfluidsynth or a SoundFont is missing. It is an :mod:`engine.synth.perform` instrument
(``quantum = 1``: events start on their exact frame) with one voice per sounding note:

* **Age from the real onset.** A voice's time is counted from the frame its note-on arrived,
  so a swung or humanised note starts when it starts and nothing jumps at off-beats.
* **Envelopes are continuous.** Attack and decay are closed-form in the voice's age; a note-off
  (or a steal) starts an exponential release from the level the voice had at that frame.
* **Legato pads.** A sustained part (pad, strings, choir, organ) that strikes a key that is still
  sounding on the same part continues that voice instead of re-attacking, and chord changes
  cross-fade through long attack/release, so bar lines do not dip.
* **Fixed vibrato.** Lead voices get ±8 cents at 5.2 Hz that fades in after 0.25 s, integrated
  into the phase (a constant depth, not one that grows with the note's age).
* **Band-limited drums.** Noise for hats, snares and cymbals comes from tables filtered to a
  band (hats 6–13 kHz, never to Nyquist), made once per sample rate.
* A send reverb of feedback combs (delays ≥ one production block, so each block is computed
  with array operations).

Timbre follows the GM program family (piano, chromatic percussion, organ, guitar, bass,
strings, ensemble, brass, reed, pipe, synth lead, synth pad). Pure NumPy; all calls on the
``[engine]`` thread. Each voice reads band-limited single-cycle tables (partials below 0.45 × the
sample rate for its pitch, made once per model and pitch range); a decaying timbre cross-fades
from the full table to a fundamental-heavy one.
"""
from __future__ import annotations

import math

import numpy as np

from engine.score import DRUM_CHANNEL, Control, Part
from engine.synth import perform

_NOISE: dict = {}


def _band_noise(sr: int, lo: float, hi: float, n: int = 1 << 16, seed: int = 7) -> np.ndarray:
    """A looped table of white noise filtered to ``[lo, hi]`` Hz (unit RMS)."""
    key = (sr, lo, hi)
    t = _NOISE.get(key)
    if t is None:
        rng = np.random.default_rng(seed + int(lo))
        spec = np.fft.rfft(rng.standard_normal(n))
        f = np.fft.rfftfreq(n, 1.0 / sr)
        w = np.clip((f - lo * 0.7) / (lo * 0.3), 0, 1) * np.clip((hi * 1.3 - f) / (hi * 0.3), 0, 1)
        t = np.fft.irfft(spec * w, n)
        t = (t / (np.sqrt(np.mean(t * t)) + 1e-12)).astype(np.float32)
        _NOISE[key] = t
    return t


# model → (partial amplitudes, decay per s of the fundamental, extra decay per partial, sustain
#          level, attack s, release s, detune cents, vibrato)
MODELS = {
    "piano": ([1.0, 0.5, 0.3, 0.18, 0.1, 0.06, 0.04], 1.6, 0.9, 0.0, 0.003, 0.1, 0.0, False),
    "epiano": ([1.0, 0.25, 0.12, 0.05, 0.02], 1.2, 1.4, 0.0, 0.003, 0.12, 3.0, False),
    "mallet": ([1.0, 0.0, 0.35, 0.0, 0.12, 0.0, 0.05], 2.5, 1.5, 0.0, 0.002, 0.2, 0.0, False),
    "organ": ([1.0, 0.7, 0.5, 0.4, 0.0, 0.3, 0.0, 0.2], 0.0, 0.0, 1.0, 0.008, 0.08, 2.0, False),
    "guitar": ([1.0, 0.6, 0.4, 0.25, 0.15, 0.1, 0.06, 0.04], 2.2, 1.2, 0.0, 0.002, 0.08, 0.0, False),
    "bass": ([1.0, 0.45, 0.2, 0.08], 1.5, 1.0, 0.45, 0.004, 0.06, 0.0, False),
    "strings": ([1.0, 0.5, 0.33, 0.25, 0.2, 0.16, 0.13, 0.1, 0.08], 0.0, 0.0, 1.0, 0.18, 0.45, 7.0, False),
    "pad": ([1.0, 0.4, 0.25, 0.12, 0.08, 0.05], 0.0, 0.0, 1.0, 0.3, 0.6, 9.0, False),
    "choir": ([1.0, 0.3, 0.5, 0.15, 0.1], 0.0, 0.0, 1.0, 0.2, 0.5, 6.0, False),
    "brass": ([1.0, 0.8, 0.6, 0.45, 0.3, 0.2, 0.12], 0.3, 0.4, 0.8, 0.03, 0.1, 0.0, True),
    "reed": ([1.0, 0.2, 0.55, 0.15, 0.35, 0.1, 0.2], 0.2, 0.3, 0.85, 0.025, 0.09, 0.0, True),
    "pipe": ([1.0, 0.12, 0.06, 0.02], 0.1, 0.2, 0.9, 0.03, 0.1, 0.0, True),
    "synthlead": ([1.0, 0.5, 0.33, 0.25, 0.2, 0.16, 0.12], 0.2, 0.2, 0.8, 0.01, 0.08, 0.0, True),
}
SUSTAINED = {"organ", "strings", "pad", "choir"}


def model_for(part: Part) -> str:
    """The oscillator model for a part's GM program (mostly by family = program // 8)."""
    prog = int(part.program) & 127
    if prog in (4, 5):
        return "epiano"
    if prog in (6, 7):
        return "guitar"             # harpsichord, clavinet: bright plucks
    if 52 <= prog <= 54:
        return "choir"
    return ["piano", "mallet", "organ", "guitar", "bass", "strings", "strings", "brass", "reed",
            "pipe", "synthlead", "pad", "pad", "mallet", "mallet", "mallet"][prog // 8]


_MODEL_GAIN = {"piano": 0.5, "epiano": 0.6, "mallet": 0.5, "organ": 0.22, "guitar": 0.45, "bass": 0.8,
               "strings": 0.2, "pad": 0.25, "choir": 0.25, "brass": 0.25, "reed": 0.3, "pipe": 0.45,
               "synthlead": 0.25}

# GM drum keys → (kind, tone Hz, noise band, decay s, gain)
def _drum(key: int):
    if key in (35, 36):
        return ("kick", 52.0, None, 0.32, 1.0)
    if key in (38, 40):
        return ("snare", 190.0, (900.0, 9000.0), 0.14, 0.6)
    if key == 37:
        return ("snare", 400.0, (1500.0, 8000.0), 0.04, 0.35)
    if key == 39:
        return ("clap", 0.0, (900.0, 6000.0), 0.12, 0.55)
    if key in (42, 44):
        return ("hat", 0.0, (6000.0, 13000.0), 0.045, 0.17)
    if key == 46:
        return ("hat", 0.0, (6000.0, 13000.0), 0.3, 0.15)
    if key in (49, 52, 55, 57):
        return ("cymbal", 0.0, (3500.0, 13000.0), 1.2, 0.14)
    if key in (51, 53, 59):
        return ("ride", 0.0, (4500.0, 12000.0), 0.7, 0.1)
    if key in (41, 43, 45, 47, 48, 50):
        return ("tom", 80.0 + (key - 41) * 18.0, None, 0.3, 0.7)
    return ("perc", 500.0 + (key % 12) * 60.0, (2000.0, 9000.0), 0.08, 0.3)


TABLE = 2048
_TABLES: dict = {}


def _table(model: str, nyq_k: int, bright: float, dull: bool) -> np.ndarray:
    """One band-limited cycle of ``model`` (partials ≤ ``nyq_k``), with a guard sample."""
    key = (model, nyq_k, bright, dull)
    t = _TABLES.get(key)
    if t is None:
        amps = MODELS[model][0][:nyq_k]
        i = np.arange(TABLE + 1) * (2 * np.pi / TABLE)
        b = 0.4 + 0.9 * bright
        t = np.zeros(TABLE + 1)
        for k, a in enumerate(amps[:2] if dull else amps, start=1):
            t += a * (b ** (k - 1)) * np.sin(k * i)
        _TABLES[key] = t
    return t


def _lookup(table: np.ndarray, ph: np.ndarray) -> np.ndarray:
    x = ph * (TABLE / (2 * np.pi))
    fl = np.floor(x)
    i = fl.astype(np.int64) & (TABLE - 1)
    fr = x - fl
    return table[i] + fr * (table[i + 1] - table[i])


class _Voice:
    __slots__ = ("part", "key", "vel", "hz", "age", "phase", "off_age", "off_level", "rel", "model",
                 "drum", "noise_at")

    def __init__(self, part, key, vel, hz, model, drum=None):
        self.part, self.key, self.vel, self.hz, self.model, self.drum = part, key, vel, hz, model, drum
        self.age = 0                 # frames since the note-on
        self.phase = 0.0
        self.off_age = None          # age at the note-off (release starts there)
        self.off_level = 0.0
        self.rel = 0.0
        self.noise_at = (key * 7919 + vel * 104729) % 65536


class OscInstrument:
    """The fallback renderer's instrument for one stream. ``[engine]``"""

    quantum = 1
    name = "oscillators"
    MAX_VOICES = 32

    def __init__(self, sample_rate: int = 48000):
        self.sr = int(sample_rate)
        self.voices: list[_Voice] = []
        self.parts: list[Part] = []
        self.bright = 0.7
        self.bend = []
        # send reverb: feedback combs, delays ≥ 1024 frames so a block is array arithmetic
        ds = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617]
        self.comb_d = [int(d * self.sr / 44100) + 1024 - 1116 + 64 for d in ds]
        self.comb_g = 0.8
        self.comb_buf = [np.zeros(d + 2, dtype=np.float32) for d in self.comb_d]
        self.comb_pos = [0] * len(ds)
        self._tone = None
        self._tone_zi = None

    def setup(self, parts: list[Part]) -> None:
        self.parts = list(parts)
        self.models = [None if (p.is_drums or p.role == "drums") else model_for(p) for p in parts]
        self.bend = [0.0] * len(parts)
        self.gain_lr = []
        for p in parts:
            a = (max(-1.0, min(1.0, p.pan)) + 1) * math.pi / 4
            self.gain_lr.append((math.cos(a), math.sin(a)))
        for lo, hi in {(900.0, 9000.0), (1500.0, 8000.0), (900.0, 6000.0), (6000.0, 13000.0),
                       (3500.0, 13000.0), (4500.0, 12000.0), (2000.0, 9000.0)}:
            _band_noise(self.sr, lo, hi)

    # --- events
    def note_on(self, part: int, key: int, vel: int) -> None:
        model = self.models[part]
        if model is None:
            d = _drum(int(key))
            for v in self.voices:          # a drum re-struck (or a closed hat over an open one) is choked
                if v.part == part and v.off_age is None and (
                        v.key == key or (v.key == 46 and d[0] == "hat" and int(key) in (42, 44))):
                    self._release(v, 0.03)
            self.voices.append(_Voice(part, key, vel, d[1], None, d))
        else:
            if model in SUSTAINED:
                for v in self.voices:
                    if v.part == part and v.key == key and (v.off_age is None or v.off_age == v.age):
                        v.off_age, v.vel = None, max(v.vel, vel)          # legato: keep sounding
                        return
            self.voices.append(_Voice(part, key, vel, 440.0 * 2 ** ((key - 69) / 12), model))
        if len(self.voices) > self.MAX_VOICES:
            held = [v for v in self.voices if v.rel != 0.004]
            victim = min(held or self.voices, key=lambda v: (v.off_age is None, -v.age))
            self._release(victim, 0.004)

    def note_off(self, part: int, key: int) -> None:
        for v in self.voices:
            if v.part == part and v.key == key and v.off_age is None and v.drum is None:
                self._release(v, MODELS[v.model][5])

    def control(self, part: int, c: Control) -> None:
        if c.kind == "bend":
            self.bend[part] = max(-2.0, min(2.0, float(c.value)))

    def set_brightness(self, b: float) -> None:
        """0 dark … 1 open: the partials' tilt, and a 2nd-order low-pass from 1.2 kHz (0) to 19 kHz (1)
        over the whole instrument (drums too). ``[engine]``"""
        from scipy.signal import butter
        self.bright = max(0.0, min(1.0, float(b)))
        fc = min(1200.0 * 2 ** (4 * self.bright), 0.45 * self.sr)
        self._tone = butter(2, fc, fs=self.sr, output="sos")
        if self._tone_zi is None:
            self._tone_zi = np.zeros((1, 2, 2))

    def _release(self, v: _Voice, rel_s: float) -> None:
        v.off_level = self._env_at(v, v.age)
        v.off_age = v.age
        v.rel = rel_s

    # --- envelopes (closed form in the age, in frames)
    def _hold_env(self, v: _Voice, t: np.ndarray) -> np.ndarray:
        sr = self.sr
        if v.drum is not None:
            return np.exp(-t / (v.drum[3] * sr)) * np.minimum(1.0, t / (0.0008 * sr))
        _, dec, _, sus, att, _, _, _ = MODELS[v.model]
        a = np.minimum(1.0, t / (att * sr))
        if dec > 0:
            pitch_k = (v.hz / 261.6) ** 0.5
            d = sus + (1 - sus) * np.exp(-t * dec * pitch_k / sr)
        else:
            d = 1.0
        return a * d

    def _env_at(self, v: _Voice, age: int) -> float:
        h = float(self._hold_env(v, np.array([float(age)]))[0])
        if v.off_age is None:
            return h
        return v.off_level * math.exp(-(age - v.off_age) / (v.rel * self.sr))

    def _env(self, v: _Voice, t: np.ndarray) -> np.ndarray:
        if v.off_age is None:
            return self._hold_env(v, t)
        return v.off_level * np.exp(-np.maximum(t - v.off_age, 0) / (v.rel * self.sr))

    # --- audio
    def render(self, out: np.ndarray) -> None:
        n = out.shape[0]
        out[:] = 0.0
        if n == 0:
            return
        sr = self.sr
        left = np.zeros(n, dtype=np.float64)
        right = np.zeros(n, dtype=np.float64)
        send = np.zeros(n, dtype=np.float64)
        k = np.arange(n, dtype=np.float64)
        keep = []
        for v in self.voices:
            t = v.age + k
            env = self._env(v, t)
            sig = self._voice(v, t, k, n) * env
            p = self.parts[v.part]
            g = (v.vel / 127.0) ** 1.5 * p.level
            gl, gr = self.gain_lr[v.part]
            left += sig * (g * gl)
            right += sig * (g * gr)
            send += sig * (g * p.reverb)
            v.age += n
            if env[-1] > 1e-3 or (v.off_age is None and v.age < 0.05 * sr):
                keep.append(v)                 # a voice ends 60 dB down (held or released)
        self.voices = keep
        wet = self._reverb(send.astype(np.float32))
        out[:, 0] = left + wet[:, 0]
        out[:, 1] = right + wet[:, 1]
        if self._tone is not None:
            from scipy.signal import sosfilt
            y, self._tone_zi = sosfilt(self._tone, out, axis=0, zi=self._tone_zi)
            out[:] = y

    def _voice(self, v: _Voice, t: np.ndarray, k: np.ndarray, n: int) -> np.ndarray:
        sr = self.sr
        if v.drum is not None:
            kind, tone, band, dec, gain = v.drum
            sig = np.zeros(n)
            if tone:
                if kind == "kick":
                    tau = 0.035 * sr
                    ph = 2 * np.pi * (tone * t / sr + 90.0 * 0.035 * (1 - np.exp(-t / tau)))
                    sig += np.sin(ph)
                else:
                    sig += np.sin(2 * np.pi * tone * t / sr) * np.exp(-t / (0.05 * sr)) * (0.6 if band else 1.0)
            if band:
                tab = _band_noise(sr, band[0], band[1])
                idx = (v.noise_at + t.astype(np.int64)) % tab.size
                nz = tab[idx]
                if kind == "clap":
                    nz = nz * (1.0 + 0.8 * np.exp(-((t / sr) % 0.011) / 0.002) * (t < 0.033 * sr))
                sig += nz * (0.8 if tone else 1.0)
            return sig * gain
        amps, _, hdec, _, _, _, detune, vib = MODELS[v.model]
        mg = _MODEL_GAIN[v.model]
        hz = v.hz * 2 ** (self.bend[v.part] / 12)
        w = 2 * np.pi * hz / sr
        if vib:
            ts = t / sr
            depth = (8.0 / 1200.0 * math.log(2)) * np.clip((ts - 0.25) / 0.3, 0.0, 1.0)
            inc = w * (1.0 + depth * np.sin(2 * np.pi * 5.2 * ts))
            ph = v.phase + np.cumsum(inc) - inc[0]
            v.phase = float(ph[-1] + inc[-1])
        else:
            ph = v.phase + w * k
            v.phase = float(v.phase + w * n)
        nyq_k = max(1, min(len(amps), int(0.45 * sr / max(hz, 1.0))))
        bq = round(self.bright, 1)
        full = _table(v.model, nyq_k, bq, False)
        sig = _lookup(full, ph)
        if hdec:                          # upper partials fade: cross-fade toward the fundamental
            dull = _lookup(_table(v.model, nyq_k, bq, True), ph)
            sig = dull + (sig - dull) * np.exp(-t * (hdec / sr))
        if detune:
            sig = 0.6 * (sig + _lookup(full, ph * (2 ** (detune / 1200.0)) + 1.3))
        return sig * mg

    def _reverb(self, send: np.ndarray) -> np.ndarray:
        n = send.size
        out = np.zeros((n, 2), dtype=np.float32)
        if n == 0:
            return out
        for i, (d, buf) in enumerate(zip(self.comb_d, self.comb_buf)):
            size = buf.size
            pos = self.comb_pos[i]
            idx = (pos + np.arange(n)) % size
            back = buf[(idx - d) % size]
            back1 = buf[(idx - d - 1) % size]
            y = send + self.comb_g * 0.5 * (back + back1)          # damped feedback
            buf[idx] = y
            self.comb_pos[i] = (pos + n) % size
            out[:, i % 2] += y * 0.06
        return out


_CAL: dict = {}


def _calibration(sr: int) -> dict:
    """K-weighted loudness of each model (one note, velocity 100) and each drum key, measured once."""
    cal = _CAL.get(sr)
    if cal is not None:
        return cal
    n = int(0.5 * sr)
    kw = perform.k_weighting_power(n, sr)

    def ms_of(x):
        spec = np.fft.rfft(x.astype(np.float64), axis=0)
        return 2.0 * (np.abs(spec) ** 2 * kw[:, None]).sum() / (n * n)

    cal = {}
    buf = np.zeros((n, 2), dtype=np.float32)
    fam_prog = {m: None for m in MODELS}
    for prog in range(128):
        m = model_for(Part("x", "x", prog, 0))
        if fam_prog[m] is None:
            fam_prog[m] = prog
    for m, prog in fam_prog.items():
        if prog is None:
            continue
        inst = OscInstrument(sr)
        inst.setup([Part("x", "x", prog, 0, level=1.0, reverb=0.0)])
        inst.note_on(0, 60 if m != "bass" else 40, 100)
        inst.render(buf)
        cal[m] = ms_of(buf)
    for key in (36, 38, 42, 46, 49, 51, 39, 45):
        inst = OscInstrument(sr)
        inst.setup([Part("d", "drums", 0, DRUM_CHANNEL, level=1.0, reverb=0.0)])
        inst.note_on(0, key, 100)
        inst.render(buf)
        cal[("drum", key)] = ms_of(buf) * 0.5         # energy: mean square × 0.5 s
    _CAL[sr] = cal
    return cal


def expected_lufs(score, inst: OscInstrument) -> float | None:
    """The score's loudness through the oscillators, from their calibration. ``[engine]``"""
    cal = _calibration(inst.sr)
    drum_e = float(np.mean([v for k, v in cal.items() if isinstance(k, tuple)]))
    note_ms = [0.0 if m is None else cal[m] for m in inst.models]
    hit = [drum_e if m is None else 0.0 for m in inst.models]
    return perform.expected_lufs(score, note_ms, hit)
