"""perform: plays a :class:`~engine.score.Score` through an instrument, on a fixed frame grid.

One :class:`Performance` per stream owns everything that makes a stream's audio independent of
how it is asked for:

* the stream's :class:`~engine.score.TempoMap` (beats → frames; where tempo changes and, later,
  host tempo lock act),
* an event queue filled bar by bar from :meth:`Score.bar` (note-ons, note-offs, controls), each
  event put on its frame — snapped to the instrument's ``quantum`` (FluidSynth applies events only
  at its 64-frame internal block boundaries, so its events land on the nearest multiple of 64
  frames from the stream's frame 0, ≤ 0.67 ms away; the oscillator fallback has a quantum of 1),
* production in fixed :data:`BLOCK`-frame blocks on a grid from frame 0, each block split at its
  event frames, then the :class:`Mix` (loudness follower and look-ahead limiter, also per block),
* a FIFO that serves any chunk size from the produced blocks.

So ``read(n)`` returns the same frames whatever the sequence of chunk sizes (tested for 1, 64,
65, 2048, 8193). An *instrument* is anything with ``quantum``, ``setup(parts)``,
``note_on(part, key, vel)``, ``note_off(part, key)``, ``control(part, ctl)``,
``set_brightness(b)`` and ``render(out)`` (fill an ``(n, 2)`` float32 view); ``engine.synth.fluid``
and ``engine.synth.oscillators`` provide the two.

Everything here runs on the ``[engine]`` thread (or in the ``render`` command); buffers are
allocated when the performance is made, not per block.
"""
from __future__ import annotations

import dataclasses
import heapq
import math

import numpy as np

from engine.score import Score, TempoMap

BLOCK = 4096                 # production block (frames); a multiple of FluidSynth's 64
TARGET_LUFS = -14.0
CEILING = 10 ** (-1.8 / 20)  # limiter ceiling on samples and 4×-interpolated peaks (≤ −1 dBTP with margin)

# event kinds, in the order they apply on one frame: a note ends before the next one starts
_OFF, _CTL, _ON = 0, 1, 2


def k_weighting_power(n: int, sr: int) -> np.ndarray:
    """|H(f)|² of the BS.1770 K-weighting (shelf + high-pass) at the bins of an ``n``-point rfft."""
    f = np.fft.rfftfreq(n, 1.0 / sr)
    # analog prototypes of the two BS.1770 stages, evaluated on the jω axis
    s = 2j * np.pi * np.maximum(f, 1e-3)
    f0, g, q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
    w0 = 2 * np.pi * f0
    vh = 10 ** (g / 20)
    shelf = (vh * s * s + math.sqrt(vh) * w0 / q * s + w0 * w0) / (s * s + w0 / q * s + w0 * w0)
    f1, q1 = 38.13547087602444, 0.5003270373238773
    w1 = 2 * np.pi * f1
    hp = (s * s) / (s * s + w1 / q1 * s + w1 * w1)
    return (np.abs(shelf * hp) ** 2).astype(np.float64)


#: acoustic plucked strings (nylon and steel guitars, the acoustic bass, banjo, sitar, shamisen,
#: koto, harp, dulcimer, pizzicato) ring on after a short note: a strummed 16th or a banjo roll
#: sounds for at least RING_S seconds (an electric guitar's or bass's note is as long as it is held)
RINGING = frozenset((24, 25, 32, 15, 45, 46, 104, 105, 106, 107))
RING_S = 0.3


def hold_energy(held: float, holds: tuple, db: tuple) -> float:
    """A note's energy over its mean square (s) when held ``held`` s, from measured points: at
    each of ``holds`` (s, rising) the energy was ``held · 10^(db/10)`` (the attack and the ring
    after the key is let go included). Interpolated in log energy over log length, the end
    segments' slopes carried on past the first and the last point (a sustained sound's grows
    with its length, a piano's hardly once it has died away)."""
    h = max(held, 1e-3)
    lh = [math.log(x) for x in holds]
    le = [math.log(x) + d * math.log(10) / 10 for x, d in zip(holds, db)]
    x = math.log(h)
    k = 0 if x <= lh[1] else len(lh) - 2 if x >= lh[-2] else next(i for i in range(len(lh) - 1) if lh[i] <= x <= lh[i + 1])
    t = (x - lh[k]) / (lh[k + 1] - lh[k])
    return math.exp(le[k] + t * (le[k + 1] - le[k]))


def expected_lufs(score: Score, note_ms: list[float], hit_energy: list[float], bars: int = 4,
                  vel_power: float = 3.0, holds: tuple | None = None,
                  hold_db: list | None = None, sends: tuple = (1.5, 1.0)) -> float | None:
    """The score's loudness guessed from its notes (first ``bars`` bars) and calibrated parts.

    ``note_ms[i]``: K-weighted mean square of part ``i`` holding one note at velocity 100
    (melodic parts; sounding time capped at 3 s, and at least :data:`RING_S` for a plucked
    string of :data:`RINGING`); ``hit_energy[i]``: K-weighted energy
    (mean square × seconds) of one drum hit at velocity 100. Levels scale as ``level²`` and
    velocity as ``(vel/100) ** vel_power``, the renderer's own velocity curve in power: 3 for
    the oscillators (amplitude ∝ vel^1.5), 4 for FluidSynth (its default velocity modulator,
    amplitude ∝ vel²; measured within 0.1 dB from velocity 30 to 120); the reverb and
    chorus sends add ``sends`` = (reverb, chorus) times the send to a part's power. ``hold_db[i]`` (with ``holds``; ``None`` for a part without):
    part ``i``'s measured energy at each of ``holds`` (:func:`hold_energy`) — a piano's short
    notes ring on and its long ones die away — instead of its mean square times the note's
    length. ``None`` if the bars are silent. ``[engine]``
    """
    bpb = score.beats_per_bar
    span_beats = bars * bpb
    sec_per_beat = 60.0 / score.bpm
    energy = 0.0
    for n in score.notes_between(0.0, span_beats):
        p = score.parts[n.part]
        v = (n.vel / 100.0) ** vel_power * p.level ** 2 * (1.0 + sends[0] * p.reverb + sends[1] * p.chorus)
        if hit_energy[n.part] > 0:
            energy += hit_energy[n.part] * v
        else:
            held = n.dur * sec_per_beat
            if hold_db is not None and hold_db[n.part] is not None:
                # what sounds inside the bars (a pad held for 16 bars counts for these)
                held = min(held, (span_beats - n.start) * sec_per_beat)
                energy += note_ms[n.part] * v * hold_energy(held, holds, hold_db[n.part])
                continue
            if p.program in RINGING:
                held = max(held, RING_S)       # a plucked string sounds on past a short note
            energy += note_ms[n.part] * v * min(held, 3.0)
    if energy <= 0:
        return None
    return -0.691 + 10 * math.log10(energy / (span_beats * sec_per_beat))


def _shelf(kind: str, f0: float, db: float, sr: int) -> np.ndarray:
    """RBJ shelving biquad (slope 1) as one second-order section."""
    a = 10 ** (db / 40)
    w = 2 * math.pi * f0 / sr
    cw, sw = math.cos(w), math.sin(w)
    al = sw / 2 * math.sqrt(2)
    sq = 2 * math.sqrt(a) * al
    if kind == "low":
        b0, b1, b2 = a * ((a + 1) - (a - 1) * cw + sq), 2 * a * ((a - 1) - (a + 1) * cw), a * ((a + 1) - (a - 1) * cw - sq)
        a0, a1, a2 = (a + 1) + (a - 1) * cw + sq, -2 * ((a - 1) + (a + 1) * cw), (a + 1) + (a - 1) * cw - sq
    else:
        b0, b1, b2 = a * ((a + 1) + (a - 1) * cw + sq), -2 * a * ((a - 1) + (a + 1) * cw), a * ((a + 1) + (a - 1) * cw - sq)
        a0, a1, a2 = (a + 1) - (a - 1) * cw + sq, 2 * ((a - 1) - (a + 1) * cw), (a + 1) - (a - 1) * cw - sq
    return np.array([b0 / a0, b1 / a0, b2 / a0, 1.0, a1 / a0, a2 / a0])


def _peak(f0: float, db: float, q: float, sr: int) -> np.ndarray:
    """RBJ peaking biquad."""
    a = 10 ** (db / 40)
    w = 2 * math.pi * f0 / sr
    cw, al = math.cos(w), math.sin(w) / (2 * q)
    a0 = 1 + al / a
    return np.array([(1 + al * a) / a0, -2 * cw / a0, (1 - al * a) / a0, 1.0, -2 * cw / a0, (1 - al / a) / a0])


def _lowpass(f0: float, sr: int, q: float = 1 / math.sqrt(2)) -> np.ndarray:
    w = 2 * math.pi * f0 / sr
    cw, al = math.cos(w), math.sin(w) / (2 * q)
    a0 = 1 + al
    return np.array([(1 - cw) / 2 / a0, (1 - cw) / a0, (1 - cw) / 2 / a0, 1.0, -2 * cw / a0, (1 - al) / a0])


def _highpass(f0: float, sr: int) -> np.ndarray:
    w = 2 * math.pi * f0 / sr
    cw, al = math.cos(w), math.sin(w) / 2 * math.sqrt(2)
    a0 = 1 + al
    return np.array([(1 + cw) / 2 / a0, -(1 + cw) / a0, (1 + cw) / 2 / a0, 1.0, -2 * cw / a0, (1 - al) / a0])


class Balance:
    """Adaptive tonal balance: a 25 Hz high-pass and a 16 kHz low-pass (nothing harsh near
    Nyquist), a low shelf (90 Hz) that cuts while more than 12 % of the energy sits below 60 Hz,
    and a broad bell at 4 kHz (Q 0.7, about 2–8 kHz) that lifts while that presence band is under
    −14 dB of the total; past +9 dB of lift a low shelf at 350 Hz also tilts the low mids down
    (to −8 dB) for mixes with little above 2 kHz. Once the user sets ``brightness`` the presence
    lift and tilt relax to flat (the low-end cleanup stays). Band shares come from slow running means (τ 3 s) of
    the band powers of the balanced output (a feedback loop); the shelves move fast for the
    first 3 s or while far off target (9 dB/s), else ≤ 2.3 dB/s, within −12 / +18 dB, relaxing
    back when the music no longer needs them.

    ``tone`` (the score's, −1 dark … +1 bright) moves the presence target to −14 + 6·tone dB
    (the bell lifts toward it and, for a dark tone, may cut down to 12·|tone| dB to reach it),
    and a dark tone closes the top low-pass (12 dB/oct) from 16 kHz toward 5 kHz (lofi's −0.8:
    6 kHz). Tone 0 is the neutral balance above, unchanged.
    ``[engine]``
    """

    def __init__(self, sr: int, tone: float = 0.0):
        try:                                      # lazy: only when a performance is made
            # the Cython kernel ``scipy.signal.sosfilt`` runs after its argument checks and
            # copies (most of its cost on a 4096-frame block); called on our own buffers
            from scipy.signal._sosfilt import _sosfilt
        except ImportError:                       # pragma: no cover - another SciPy layout
            _sosfilt = None
        from scipy.signal import sosfilt
        self._sosfilt = sosfilt
        self._kernel = _sosfilt
        self.sr = sr
        f = np.fft.rfftfreq(BLOCK, 1.0 / sr)
        self.m_low, self.m_pres = f < 60, (f >= 2000) & (f < 8000)
        # both bands are runs of bins: summed as slices (the same values in the same order)
        lo, pr = np.flatnonzero(self.m_low), np.flatnonzero(self.m_pres)
        self._s_low = slice(int(lo[0]), int(lo[-1]) + 1)
        self._s_pres = slice(int(pr[0]), int(pr[-1]) + 1)
        assert lo.size == self._s_low.stop - self._s_low.start and pr.size == self._s_pres.stop - self._s_pres.start
        self.low_db = 0.0
        self.pres_db = 0.0
        self.tilt_db = 0.0
        self.auto_presence = True
        self.share_low = None
        self.share_pres = None
        self._p = None
        self.blocks = 0
        # 4th-order Butterworth at 64 Hz: about the energy below 60 Hz
        tone = float(tone)
        self.tone = max(-1.0, min(1.0, tone)) if math.isfinite(tone) else 0.0
        self.target_db = -14.0 + 6.0 * self.tone          # the presence share the bell aims at
        self.floor_db = min(0.0, 12.0 * self.tone)         # how far a dark tone's bell may cut
        #: how far the bell may lift: a dark style is not brightened back (lofi's −0.8: +3.6 dB)
        self.lift_max = 18.0 if self.tone >= 0.0 else max(3.0, 18.0 * (1.0 + self.tone))
        self.hp = _highpass(25.0, sr)
        self.lp = _lowpass(self.top_hz(self.tone, sr), sr)
        self.zi = np.zeros((2, 5, 2))            # filter state: (channel, section, state), the kernel's layout
        self._sos = self._make()

    @staticmethod
    def top_hz(tone: float, sr: int) -> float:
        """The top low-pass's corner: 16 kHz, closing geometrically for a dark tone (−0.8: 6 kHz, ≥ 5 kHz)."""
        top = min(16000.0, 0.4 * sr)
        if tone >= 0.0:
            return top
        return max(5000.0, top * (6000.0 / 16000.0) ** (-tone / 0.8))

    def _make(self) -> np.ndarray:
        return np.stack([self.hp, _shelf("low", 90.0, self.low_db, self.sr),
                         _shelf("low", 350.0, self.tilt_db, self.sr),
                         _peak(4000.0, self.pres_db, 0.7, self.sr), self.lp])

    def observe(self, power: np.ndarray) -> None:
        """Update from a block's power spectrum *after* the shelves (a slow feedback loop; the
        4096-point spectrum's 11.7 Hz bins resolve the sub-60 Hz band)."""
        tot = float(power.sum())
        if tot <= 1e-12:
            return
        lo = float(power[self._s_low].sum())
        pr = float(power[self._s_pres].sum())
        a = math.exp(-BLOCK / (3.0 * self.sr))
        if self._p is None:
            self._p = [tot, lo, pr]
        else:                               # running band powers (loud passages weigh more)
            for i, v in enumerate((tot, lo, pr)):
                self._p[i] = a * self._p[i] + (1 - a) * v
        self.share_low, self.share_pres = self._p[1] / self._p[0], self._p[2] / self._p[0]
        self.blocks += 1
        early = self.blocks * BLOCK < 3 * self.sr                      # settle fast, then drift slowly
        nl, npr, nt = self.low_db, self.pres_db, self.tilt_db
        pres = 10 * math.log10(max(self.share_pres, 1e-12))
        fast, slow = 9.0 * BLOCK / self.sr, 2.3 * BLOCK / self.sr       # dB per block (9 / 2.3 dB/s)
        step = fast if early or self.share_low > 0.25 else slow            # far off: move fast
        if self.share_low > 0.12:
            nl = max(-12.0, nl - step)
        elif self.share_low < 0.08:
            nl = min(0.0, nl + step)
        t = self.target_db
        step = fast if early or pres < t - 5.0 or (self.tone < 0.0 and pres > t + 7.0) else slow
        if not self.auto_presence:          # the user chose a tone (brightness): step aside
            npr = min(0.0, npr + step) if npr < 0.0 else max(0.0, npr - step)
            nt = min(0.0, nt + step)
        elif pres < t:
            npr = min(self.lift_max, npr + step)
            if npr >= 9.0:                  # a dark mix the bell alone cannot lift: tilt the low mids down
                nt = max(-8.0, nt - step)
        elif pres > t + 2.0:
            if nt < 0.0:
                nt = min(0.0, nt + step)
            else:
                npr = max(self.floor_db, npr - step)
        if nl != self.low_db or npr != self.pres_db or nt != self.tilt_db:
            sos = self._sos                 # the sections that moved, as _make would make them
            if nl != self.low_db:
                sos[1] = _shelf("low", 90.0, nl, self.sr)
            if nt != self.tilt_db:
                sos[2] = _shelf("low", 350.0, nt, self.sr)
            if npr != self.pres_db:
                sos[3] = _peak(4000.0, npr, 0.7, self.sr)
            self.low_db, self.pres_db, self.tilt_db = nl, npr, nt

    def process(self, x: np.ndarray, xt: np.ndarray | None = None) -> None:
        """Filter the ``(n, 2)`` float32 block ``x`` in place. ``xt``: a ``(2, n)`` float64
        C-contiguous scratch to filter in (what ``sosfilt`` would copy the block to)."""
        if xt is None:
            xt = np.empty((2, x.shape[0]), dtype=np.float64)
        xt[...] = x.T
        if self._kernel is not None:
            self._kernel(self._sos, xt, self.zi)   # in place, float64, state carried in zi
        else:                                      # pragma: no cover
            y, zi = self._sosfilt(self._sos, xt, axis=-1, zi=self.zi.transpose(1, 0, 2))
            xt[...] = y
            self.zi = np.ascontiguousarray(zi.transpose(1, 0, 2))
        x[...] = xt.T


class Mix:
    """The stream's master: tonal balance, a slow loudness follower to −14 LUFS and a look-ahead
    peak limiter.

    Works on whole :data:`BLOCK`-frame blocks (so it is chunk-size independent). The follower
    measures each block's K-weighted power, keeps a gated running mean (quiet breaks below the
    running level − 15 LU and silence do not count, so a breakdown is not pumped up), and moves
    the gain toward ``TARGET_LUFS − level`` by at most ``slew_db`` per block, ramped inside the
    block. ``initial_db`` is the renderer's calibrated guess for the score, so a stream starts near
    its level and a prompt change keeps it. The limiter delays by 64 frames and ramps its gain
    down over the 64 frames before a peak, so neither samples nor the 4×-interpolated waveform
    between them exceed :data:`CEILING`.
    """

    SUB = 64

    def __init__(self, sr: int, initial_db: float | None = None, target_lufs: float = TARGET_LUFS,
                 balance: bool = True, tone: float = 0.0):
        self.sr = sr
        self.target = target_lufs
        self.kw = k_weighting_power(BLOCK, sr)
        self.g0_db = None if initial_db is None else float(initial_db)
        self.gain_db = 0.0 if initial_db is None else float(initial_db)
        self.level_ms = None             # running K-weighted mean square (pre-gain)
        self.blocks = 0
        self.slew_db = 2.8 * BLOCK / sr  # per block: 2.8 dB/s
        self._delay = np.zeros((self.SUB, 2), dtype=np.float32)
        self._r_last = 1.0
        self._g_last = 1.0
        self._buf = np.zeros((BLOCK + self.SUB, 2), dtype=np.float32)
        self._ramp = (np.arange(BLOCK, dtype=np.float32) / BLOCK)[:, None]
        self._gains = np.ones(BLOCK // self.SUB + 1)
        # scratch, made once (nothing is allocated per block): channels as rows, float64
        self._x64 = np.empty((2, BLOCK), dtype=np.float64)          # the block, for filter and FFT
        self._spec = np.empty((2, BLOCK // 2 + 1), dtype=np.complex128)
        self._pow = np.empty((2, BLOCK // 2 + 1), dtype=np.float64)
        self._psum = np.empty(BLOCK // 2 + 1, dtype=np.float64)
        self._gramp = np.empty((BLOCK, 1), dtype=np.float32)
        n = BLOCK + self.SUB
        self._tp_chunks = (n + 3) // self.SUB + 1
        # [3 frames before buf, buf], then zeros (read only by the bound, never interpolated)
        self._tp_ext = np.zeros((2, self._tp_chunks * self.SUB), dtype=np.float64)
        self._tp_hist = np.zeros((2, 3), dtype=np.float64)
        self._tp_abs = np.zeros(self._tp_chunks * self.SUB, dtype=np.float64)
        self._tp_u = np.empty((2, self._tp_chunks * self.SUB), dtype=np.float64)
        self._tp_win = np.arange(self.SUB + 3)
        self._knots = np.arange(BLOCK // self.SUB + 1, dtype=np.float64) * self.SUB
        self._t = np.arange(BLOCK, dtype=np.float64)
        self.user_gain = 1.0
        self.balance = Balance(sr, tone) if balance else None
        # the level the follower keeps, split in two (see _follow): the music's own, before the
        # balance (slow), and what the balance's filters add to it now (fast); and the limiter's loss
        self.raw_ms = None               # running K-weighted mean square before the balance (pre-gain)
        self.bal_p = self.bal_r = None   # short running K powers after / before the balance
        self.lim_in = self.lim_out = 0.0  # running K powers into / out of the limiter
        self.loss_db = 0.0               # the limiter's running loudness loss (what the follower adds back)
        self.trim_ms = 0.0               # the master's gated running K power out (the user's gain left out)
        self.trim_all = 0.0              # the same, every block (what the gate is relative to)
        self.trim_n = 0                  # blocks the trim has counted
        self.trim_db = 0.0               # the follower's slow correction toward the target (see _trim)
        self._ms = 0.0                   # this block's K mean square after the balance (pre-gain)
        self.bal_db = 0.0                # what the balance's filters add to the level now (dB; see _follow)
        # the last ≈ 400 ms of block powers before the balance (the gate's window, see _follow)
        self._gate_win = np.zeros(max(1, round(0.4 * sr / BLOCK)), dtype=np.float64)
        self._trim_win = np.zeros_like(self._gate_win)     # the same after the master (see _trim)

    def continue_from(self, other: "Mix") -> None:
        """Carry on where ``other`` (the same music's mix, rendered elsewhere) stands: its
        loudness follower, gain, user gain and tonal balance — not its audio history (the
        limiter's delay line and the filters start from silence, as the new instrument does).
        A re-timed restart then plays at the level and tone it replaces."""
        self.g0_db, self.gain_db, self.level_ms = other.g0_db, other.gain_db, other.level_ms
        self.blocks, self.user_gain = other.blocks, other.user_gain
        self.raw_ms, self.bal_p, self.bal_r = other.raw_ms, other.bal_p, other.bal_r
        self.lim_in, self.lim_out, self.loss_db = other.lim_in, other.lim_out, other.loss_db
        self.trim_ms, self.trim_all, self.trim_db = other.trim_ms, other.trim_all, other.trim_db
        self.trim_n = other.trim_n
        self.bal_db = other.bal_db
        self._gate_win[:] = other._gate_win
        self._trim_win[:] = other._trim_win
        a, b = self.balance, other.balance
        if a is not None and b is not None:
            a.low_db, a.pres_db, a.tilt_db = b.low_db, b.pres_db, b.tilt_db
            a.auto_presence, a.blocks = b.auto_presence, b.blocks
            a.share_low, a.share_pres = b.share_low, b.share_pres
            a._p = None if b._p is None else list(b._p)
            a._sos = a._make()

    def set_initial(self, db: float) -> None:
        """Start from ``db`` of gain (the renderer's estimate for the score), before any audio."""
        self.g0_db = self.gain_db = float(min(30.0, db))
        self.level_ms = self.raw_ms = None

    def _kms(self, xt: np.ndarray) -> float:
        """K-weighted mean square (summed over channels) of the ``(2, BLOCK)`` float64 block ``xt``;
        its power spectrum is left in ``_psum``."""
        spec = np.fft.rfft(xt, axis=1, out=self._spec)
        power, psum = self._pow, self._psum
        np.multiply(spec.real, spec.real, out=power)
        np.multiply(spec.imag, spec.imag, out=self._tp_u[:, :power.shape[1]])
        np.add(power, self._tp_u[:, :power.shape[1]], out=power)
        np.add(power[0], power[1], out=psum)
        return 2.0 * float(np.dot(self.kw, psum)) / (BLOCK * BLOCK)   # Parseval, one-sided spectrum

    #: the follower's memory of the balance's effect (s): its filters move within a second or two
    BALANCE_TAU = 0.5
    #: the follower's gate: ≈ 400 ms of music this far under its running level does not count
    GATE_LU = 15.0
    #: the limiter's running loss (s; slow: the follower's gain must not ride the limiter's
    #: moves, which would pump), and the most of it the follower adds back (dB)
    LOSS_TAU, LOSS_MAX_DB = 10.0, 3.0
    #: the trim (see :meth:`_trim`): its integration time and level average (s; τ ≥ 4× the
    #: average's: critically damped), its largest correction (dB), and when it starts (s: after
    #: the follower's first memory, whose start from the renderer's estimate it must not count)
    TRIM_TAU, TRIM_LEVEL_TAU, TRIM_MAX_DB, TRIM_START_S = 12.0, 3.0, 2.0, 6.0

    def _follow(self, x: np.ndarray) -> float:
        """The gain for this block (dB). The level it follows is the music's running K-weighted
        level *before* the balance (gated, τ 2 s for 6 s, then 6 s: slow, so sections are not
        pumped) times what the balance's filters add to it now (τ 0.5 s): when the balance lifts
        a dark intro's presence and the band then enters bright, the lift relaxes within
        seconds and the gain follows it at once, instead of the loud entry holding the gain
        down for the 6 s memory of the music's level (−2 … −4 LU on a take of a style with a
        sparse intro). The limiter's running loudness loss (≤ :attr:`LOSS_MAX_DB`) is added
        back, so bass-heavy mixes whose peaks the limiter holds still measure at the target."""
        xt = self._x64
        xt[...] = x.T
        raw = self._kms(xt)
        if self.balance is not None:
            self.balance.process(x, xt)
            xt[...] = x.T                # the block as float32 values, in float64 (as the filter left it)
            ms = self._kms(xt)
            self.balance.observe(self._psum)
        else:
            ms = raw
        self._ms = ms
        lufs = -0.691 + 10 * math.log10(ms + 1e-20)
        self.blocks += 1
        moved = 0.0                      # what the balance's filters added to the level since the last block
        if lufs > -70.0 and raw > 1e-20:
            ab = math.exp(-BLOCK / (self.BALANCE_TAU * self.sr))
            first = self.bal_p is None
            if first:
                self.bal_p, self.bal_r = ms, raw
            else:
                self.bal_p = ab * self.bal_p + (1 - ab) * ms
                self.bal_r = ab * self.bal_r + (1 - ab) * raw
            ratio = self.bal_p / self.bal_r
            bal_db, self.bal_db = self.bal_db, 10 * math.log10(ratio)
            # the balance's own lift or cut is met at once, as its filters move (slowly and smoothly:
            # no music pumps it); only the music's level is slewed. Slewed as one, a bright band's
            # first seconds — the balance lifting a dark start by 3 dB within a second — played 2–3
            # LU over the target while the follower caught up (a polka, klezmer, bebop, a forró)
            moved = 0.0 if first else self.bal_db - bal_db
            if self.raw_ms is None:
                if self.g0_db is None:           # no estimate: the first sound sets the level
                    self.raw_ms = raw
                    self.g0_db = self.gain_db = min(30.0, self.target - lufs)
                else:
                    self.raw_ms = 10 ** ((self.target - self.g0_db + 0.691) / 10) / ratio
            run = -0.691 + 10 * math.log10(self.raw_ms)
            # gate on BS.1770's 400 ms, not on this block's 85 ms: an 808's or a piano's decay
            # between hits is music (BS.1770 counts it: its blocks hold the hit and the tail);
            # gated block by block, the tails of a sparse beat fell out and the level read the
            # hits alone, ≈ 1 LU loud (a drill beat measured −15.1 LUFS)
            gw = self._gate_win
            gw[self.blocks % gw.size] = raw
            if -0.691 + 10 * math.log10(max(float(gw.mean()), 1e-20)) > run - self.GATE_LU:
                t = self.blocks * BLOCK / self.sr
                tau = 2.0 if t < 6.0 else 6.0
                a = math.exp(-BLOCK / (tau * self.sr))
                self.raw_ms = a * self.raw_ms + (1 - a) * raw
            self.level_ms = self.raw_ms * ratio
        if self.level_ms is None:
            return self.gain_db
        base = self.gain_db - moved
        want = self.target - (-0.691 + 10 * math.log10(self.level_ms)) + self.loss_db + self.trim_db
        want = min(max(want, self.g0_db - 12.0), self.g0_db + 12.0, 30.0)
        step = min(max(want - base, -self.slew_db), self.slew_db)
        return min(max(base + step, self.g0_db - 12.0), self.g0_db + 12.0, 30.0)

    def _count_loss(self, into: float, x: np.ndarray | None) -> None:
        """Update the limiter's running loss from one block: ``into`` its K power in (after the
        gain), ``x`` the block it made (``None``: passed through untouched)."""
        if into <= 1e-20:
            return
        out = into
        if x is not None:
            xt = self._x64
            xt[...] = x.T
            out = self._kms(xt)
        a = math.exp(-BLOCK / (self.LOSS_TAU * self.sr))
        if self.lim_in <= 0.0:                  # what came before counts as lossless (no jump on a first peak)
            self.lim_in = self.lim_out = into
        self._trim(out)
        into = min(into, 4.0 * out)              # one hot block (a harsh entry) counts at most 6 dB
        self.lim_in = a * self.lim_in + (1 - a) * into
        self.lim_out = a * self.lim_out + (1 - a) * out
        if self.lim_out > 0.0:
            self.loss_db = min(self.LOSS_MAX_DB, max(0.0, 10 * math.log10(self.lim_in / self.lim_out)))

    def _trim(self, out: float) -> None:
        """Integrate the gap between the target and what the master made: the gated running K
        level of the limiter's output (the user's gain left out), counted from
        :attr:`TRIM_START_S` on. The limiter's running loss (τ 10 s, from a lossless start) lags
        the loss it really takes, most where the gain keeps rising as sparse passages follow
        full ones: a drill beat's 808 drops came out ≈ 1 LU under the target (the limiter took
        2.1 dB, the follower added back 1.1). The trim adds what is missing slowly — the level
        averaged over :attr:`TRIM_LEVEL_TAU`, integrated over :attr:`TRIM_TAU` (a critically
        damped loop), at most ±:attr:`TRIM_MAX_DB` — so it neither pumps nor moves a mix that
        is already on target. Music 10 LU under the running level of all of it does not count
        (BS.1770's relative gate, on ≈ 400 ms: a breakdown is not lifted)."""
        if self.blocks * BLOCK < self.TRIM_START_S * self.sr or self.user_gain <= 0.0:
            return
        out = out / (self.user_gain * self.user_gain)
        if out <= 1e-20:
            return
        self.trim_n += 1
        # a running mean: the plain mean of the blocks so far until it is τ long
        a = min(math.exp(-BLOCK / (self.TRIM_LEVEL_TAU * self.sr)), 1.0 - 1.0 / self.trim_n)
        self.trim_all = a * self.trim_all + (1 - a) * out
        gw = self._trim_win                      # gated on ≈ 400 ms, as the follower (see _follow)
        gw[self.trim_n % gw.size] = out
        if float(gw.mean()) > 0.1 * self.trim_all:
            self.trim_ms = a * self.trim_ms + (1 - a) * out if self.trim_ms > 0.0 else out
        if self.trim_ms <= 0.0:
            return
        err = self.target - (-0.691 + 10 * math.log10(self.trim_ms))
        t = self.trim_db + err * BLOCK / (self.TRIM_TAU * self.sr)
        self.trim_db = min(self.TRIM_MAX_DB, max(-self.TRIM_MAX_DB, t))

    # cubic Lagrange weights for x(n + t), t = 1/4, 1/2, 3/4, from x[n-1], x[n], x[n+1], x[n+2]
    _TP = np.array([[-(t * (t - 1) * (t - 2)) / 6, (t + 1) * (t - 1) * (t - 2) / 2,
                     -(t + 1) * t * (t - 2) / 2, (t + 1) * t * (t - 1) / 6] for t in (0.25, 0.5, 0.75)])

    #: max |interpolated| / max |samples| it is interpolated from (the largest row sum of |_TP|)
    _TP_GAIN = float(np.abs(_TP).sum(axis=1).max())

    def _true_peaks(self, buf: np.ndarray, n_sub: int) -> np.ndarray:
        """Per sub-block peak of the signal between samples too (4× cubic interpolation), so the
        ceiling holds for the reconstructed waveform, not only the samples (≤ −1 dBTP).

        Interpolates only the sub-blocks whose samples could reach the ceiling between them
        (their sample peak × :attr:`_TP_GAIN` above :data:`CEILING`; a few % of a loud mix); any
        other sub-block's peak is its sample peak: both are below the ceiling, where the limiter
        only asks "below?", so its gains are those of the exact peaks."""
        SUB = self.SUB
        n = buf.shape[0]
        ext = self._tp_ext
        ext[:, :3] = self._tp_hist
        ext[:, 3:n + 3] = buf.T
        self._tp_hist[:] = ext[:, n - SUB:n + 3 - SUB]       # what precedes the next call's buf
        aa = self._tp_abs                                   # max |sample| over the channels
        u = self._tp_u
        np.maximum(np.abs(ext[0], out=u[0]), np.abs(ext[1], out=u[1]), out=aa)
        peaks = aa[3:n + 3].reshape(n_sub + 1, SUB).max(axis=1)
        # the samples each sub-block's estimates are made from lie in its chunk of ext and the next
        ch = aa.reshape(self._tp_chunks, SUB).max(axis=1)
        bound = np.maximum(ch[:n_sub + 1], ch[1:n_sub + 2])
        hot = np.flatnonzero(bound * (self._TP_GAIN * (1.0 + 1e-6)) > CEILING)
        if hot.size:
            # y[i] = w0·ext[i] + w1·ext[i+1] + w2·ext[i+2] + w3·ext[i+3] (in that order) estimates
            # between buf[i-3] and buf[i-2]; sub-block j takes i = 64j+2 … 64j+65, and the last
            # pair of buf is checked next call (it is in its delay)
            g = ext[:, (hot * SUB + 2)[:, None] + self._tp_win]          # (2, hot, SUB + 3)
            e0, e1, e2, e3 = g[..., :SUB], g[..., 1:SUB + 1], g[..., 2:SUB + 2], g[..., 3:]
            w = self._TP
            m = None
            for r in range(3):
                y = w[r, 0] * e0
                y += w[r, 1] * e1
                y += w[r, 2] * e2
                y += w[r, 3] * e3
                np.abs(y, out=y)
                m = y if m is None else np.maximum(m, y, out=m)
            m = np.maximum(m[0], m[1], out=m[0])                          # (hot, SUB)
            if hot[-1] == n_sub:
                m[-1, n - 2 - n_sub * SUB:] = 0.0
            peaks[hot] = np.maximum(peaks[hot], m.max(axis=1))
        # float32 peaks (rounding is monotonic: the float32 of the max is the max of the float32s)
        return peaks.astype(np.float32)

    def process(self, x: np.ndarray) -> np.ndarray:
        """Mix one raw ``(BLOCK, 2)`` block in place; returns it. ``[engine]``"""
        new_db = self._follow(x)
        g_a = 10 ** (self.gain_db / 20) * self.user_gain
        g_b = 10 ** (new_db / 20) * self.user_gain
        self.gain_db = new_db
        ramp = self._gramp                           # float32: g_a + (g_b − g_a)·ramp
        np.multiply(self._ramp, g_b - g_a, out=ramp)
        np.add(ramp, g_a, out=ramp)
        x *= ramp
        # look-ahead limiter: sub-block j of buf = [delay, x] gets gains ramping G_j → G_{j+1}
        buf = self._buf
        buf[:self.SUB] = self._delay
        buf[self.SUB:] = x
        self._delay[:] = x[-self.SUB:]
        n_sub = BLOCK // self.SUB
        peaks = self._true_peaks(buf, n_sub)
        into = self._ms * 0.5 * (g_a * g_a + g_b * g_b)     # the block's K power after the gain
        if self._g_last >= 1.0 and float(peaks.max()) <= CEILING:
            x[:] = buf[:BLOCK]                       # nothing to limit: a plain delay
            self._r_last = 1.0
            self._count_loss(into, None)
            return x
        need = np.minimum(1.0, CEILING / np.maximum(peaks, 1e-12))
        rel = 1.0 - math.exp(-self.SUB / (0.08 * self.sr))    # 80 ms release
        g = self._g_last
        r_prev = self._r_last
        gains = self._gains
        gl = []
        for r in need.tolist():                      # (Python floats: a scalar loop on arrays is slow)
            g = min(r_prev, r, g + (1.0 - g) * rel)
            gl.append(g)
            r_prev = r
        gains[:] = gl
        # gains[j] is the gain at the start of sub-block j; the last one starts the next block
        g_s = np.interp(self._t, self._knots, gains).astype(np.float32)
        np.multiply(buf[:BLOCK], g_s[:, None], out=x)
        self._g_last = float(gains[n_sub])
        self._r_last = float(need[n_sub])
        np.clip(x, -CEILING, CEILING, out=x)
        self._count_loss(into, x)
        return x


class Performance:
    """One stream: score + tempo map + instrument + mix + FIFO. ``[engine]``"""

    def __init__(self, score: Score, instrument, sr: int, *, bpm: float | None = None,
                 initial_db: float | None = None, brightness: float | None = None):
        self.score = score
        self.inst = instrument
        self.sr = int(sr)
        self.tempo = TempoMap(bpm or score.bpm, self.sr)
        self.q = int(getattr(instrument, "quantum", 1))
        self.mix = Mix(self.sr, initial_db, tone=float(getattr(score, "tone", 0.0) or 0.0))
        self.frame = 0                    # production frontier (frames produced)
        self._events: list = []
        self._seq = 0
        self._next_bar = 0
        self._latest: dict = {}           # (part, key) → id of the note that owns the key
        self._block = np.zeros((BLOCK, 2), dtype=np.float32)
        self._fifo = np.zeros((BLOCK, 2), dtype=np.float32)
        self._fifo_n = 0
        self._fifo_at = 0
        self._preroll = 0                 # frames before 0 still to perform and drop (seek)
        instrument.setup(score.parts)
        if brightness is not None:
            self.set_brightness(brightness)

    # --- events
    def _push(self, beat: float, kind: int, part: int, a, b=None) -> None:
        self._seq += 1
        heapq.heappush(self._events, (beat, kind, self._seq, part, a, b))

    def _load_until(self, beat: float) -> None:
        bpb = self.score.beats_per_bar
        while self._next_bar * bpb <= beat + bpb:
            notes, controls = self.score.bar(self._next_bar)
            for n in notes:
                if n.start < 0 or n.dur <= 0:
                    continue
                self._push(n.start, _ON, n.part, n, None)
            for c in controls:
                if c.beat >= 0:
                    self._push(c.beat, _CTL, c.part, c, None)
            self._next_bar += 1

    #: a note ringing across a seek point is struck again there if at least this much (beats) is left
    SEEK_MIN_LEFT = 0.25
    #: bars looked back for notes ringing across a seek point
    SEEK_LOOKBACK = 4

    def seek(self, beat: float, bpm: float | None = None, preroll: int = 0) -> None:
        """Play from score beat ``beat`` instead of 0: frame 0 is ``beat`` (at ``bpm``, default the
        current tempo). Only before anything was produced. Used for a re-timed restart: the daemon
        splices such a stream in at the read head, so that a new host tempo is heard from the next
        beat instead of after the buffer.

        ``preroll`` frames (rounded up to whole blocks) before frame 0 are performed too — every
        note and control of the score there, at ``bpm`` — and thrown away by the first read: so at
        frame 0 a held pad is past its attack, a piano chord has decayed as it had, and the reverb
        carries what was played, as in the stream this one replaces; a crossfade between the two
        is then between nearly the same sound. Notes that start before the preroll and ring on
        across it (not drum hits) are struck at its start for the rest of their length; each
        control's latest value before it is applied there. ``[engine]``"""
        if self.frame or self._fifo_n or self._events or self._next_bar:
            raise RuntimeError("seek only before the performance has produced or loaded anything")
        beat = max(0.0, float(beat))
        self.tempo = TempoMap(bpm or self.tempo.bpm, self.sr, beat0=beat)
        pre = -(-max(0, int(preroll)) // BLOCK) * BLOCK
        b0 = self.tempo.beat_at(-pre)
        if b0 < 0.0:                               # no further back than the score's start
            pre = int(-self.tempo.frame_at(0.0)) // BLOCK * BLOCK
            b0 = self.tempo.beat_at(-pre)
        # a note that starts within a frame of the start is that start's note (not a held one)
        b0 -= self.tempo.bpm / (60.0 * self.sr)
        bpb = self.score.beats_per_bar
        first = int(max(0.0, b0) // bpb)
        latest: dict = {}
        for i in range(max(0, first - self.SEEK_LOOKBACK), int(beat // bpb) + 1):
            notes, controls = self.score.bar(i)
            for n in notes:
                if n.dur <= 0 or n.start < 0:
                    continue
                if n.start >= b0:
                    self._push(n.start, _ON, n.part, n, None)
                elif n.start + n.dur - b0 >= self.SEEK_MIN_LEFT and not self.score.parts[n.part].is_drums:
                    self._push(b0, _ON, n.part, dataclasses.replace(n, start=b0, dur=n.start + n.dur - b0), None)
            for c in controls:
                if c.beat >= b0:
                    self._push(c.beat, _CTL, c.part, c, None)
                elif c.beat >= 0:
                    key = (c.part, c.kind, c.number)
                    if key not in latest or latest[key].beat <= c.beat:
                        latest[key] = c
        for c in latest.values():
            self._push(b0, _CTL, c.part, dataclasses.replace(c, beat=b0), None)
        self._next_bar = int(beat // bpb) + 1
        self.frame = -pre
        self._preroll = pre

    def _discard_preroll(self) -> None:
        while self.frame < 0:
            self._produce()
        self._preroll = 0

    def _event_frame(self, beat: float) -> int:
        f = self.tempo.frame_at(beat)
        q = self.q
        return int(math.floor(f / q + 0.5)) * q

    def _dispatch(self, kind: int, part: int, a, b) -> None:
        inst = self.inst
        if kind == _ON:
            n = a
            key = (part, n.pitch)
            self._seq += 1
            nid = self._seq
            self._latest[key] = nid
            inst.note_on(part, n.pitch, n.vel)
            self._push(n.start + n.dur, _OFF, part, n.pitch, nid)
        elif kind == _OFF:
            key = (part, a)
            if self._latest.get(key) == b:           # a re-struck key is ended by its last note only
                del self._latest[key]
                inst.note_off(part, a)
        else:
            inst.control(part, a)

    def _produce(self) -> None:
        F = self.frame
        self._load_until(self.tempo.beat_at(F + BLOCK))
        blk = self._block
        pos = 0
        ev = self._events
        while pos < BLOCK:
            while ev:
                ef = self._event_frame(ev[0][0]) - F
                if ef > pos:
                    break
                beat, kind, _, part, a, b = heapq.heappop(ev)
                self._dispatch(kind, part, a, b)
            end = BLOCK
            if ev:
                end = min(BLOCK, self._event_frame(ev[0][0]) - F)
            self.inst.render(blk[pos:end])
            pos = end
        finish = getattr(self.inst, "finish", None)     # an instrument's whole-block stage (amps)
        if finish is not None:
            finish(blk)
        self.frame = F + BLOCK
        self.mix.process(blk)

    # --- reading
    def read(self, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """The next ``n`` frames as ``(n, 2)`` float32. ``[engine]``"""
        if out is None:
            out = np.empty((n, 2), dtype=np.float32)
        if self._preroll:
            self._discard_preroll()
        got = 0
        while got < n:
            if self._fifo_n == 0:
                self._produce()
                self._fifo, self._block = self._block, self._fifo    # the block is the FIFO now
                self._fifo_at, self._fifo_n = 0, BLOCK
            k = min(n - got, self._fifo_n)
            out[got:got + k] = self._fifo[self._fifo_at:self._fifo_at + k]
            self._fifo_at += k
            self._fifo_n -= k
            got += k
        return out

    @property
    def frames_read(self) -> int:
        return self.frame - self._fifo_n

    def set_bpm(self, bpm: float) -> None:
        """Tempo from the production frontier on (frames already produced keep theirs). ``[engine]``"""
        self.tempo.set_bpm(bpm, self.frame)

    def set_brightness(self, b: float) -> None:
        """The user's tone: the instrument's brightness; the mix's presence lift steps aside. ``[engine]``"""
        self.inst.set_brightness(b)
        if self.mix.balance is not None:
            self.mix.balance.auto_presence = False

    def set_gain(self, gain: float) -> None:
        self.mix.user_gain = float(gain)

    def close(self) -> None:
        close = getattr(self.inst, "close", None)
        if close:
            close()
