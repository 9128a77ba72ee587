"""synth: the embedded, weight-free, prompt-conditioned procedural music generator.

A prompt becomes an :class:`Arrangement` (tempo, key, mode, mood, instruments, a chord
progression and an 8-bar cycle of bass, melody, arpeggio and drum patterns), chosen by reading
the words and, for whatever the words leave open, by a hash of (prompt, seed). Audio is a pure
function of the absolute frame index: every voice computes its note, its age since the onset
and its phase from the frame number, and noise comes from a counter-based hash. So a stream is
deterministic per (prompt, seed), phase-continuous across chunks, and chunked output equals
one-shot output exactly, whatever the chunk sizes.

``generate`` is vectorised over a batch: per-stream tables are stacked into ``(B, …)`` arrays
and every voice runs as ``(B, frames)`` NumPy operations. All of it runs on the ``[engine]``
thread.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from dsp import soft_limit

from .backend import Backend, Stream

STEPS_PER_BAR = 16
SECTION_BARS = 8
CYCLE_BARS = 32                      # a form of four 8-bar sections, then it comes round again
CYCLE = STEPS_PER_BAR * CYCLE_BARS   # 512 sixteenth-note steps
FORMS = [("A", "A2", "B", "A2"), ("A", "B", "A2", "D"), ("A", "A2", "D", "B"), ("A", "B", "D", "A2")]

NOTE_NAMES = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}
MODES = {
    "major": [0, 2, 4, 5, 7, 9, 11],
    "minor": [0, 2, 3, 5, 7, 8, 10],
    "dorian": [0, 2, 3, 5, 7, 9, 10],
    "phrygian": [0, 1, 3, 5, 7, 8, 10],
    "lydian": [0, 2, 4, 6, 7, 9, 11],
    "mixolydian": [0, 2, 4, 5, 7, 9, 10],
}
MODE_ALIASES = {"maj": "major", "ionian": "major", "min": "minor", "aeolian": "minor", "m": "minor"}
# progressions as scale degrees (0-based), 8 bars
PROGRESSIONS = {
    "major": [[0, 4, 5, 3, 0, 4, 5, 3], [0, 5, 3, 4, 0, 5, 3, 4], [0, 3, 4, 3, 0, 3, 4, 4],
              [5, 3, 0, 4, 5, 3, 0, 4], [0, 1, 3, 4, 0, 1, 3, 4]],
    "minor": [[0, 5, 2, 6, 0, 5, 2, 6], [0, 3, 4, 0, 0, 3, 6, 4], [0, 6, 5, 6, 0, 6, 5, 4],
              [0, 5, 3, 4, 0, 5, 3, 4], [0, 3, 0, 4, 5, 3, 6, 4]],
}
GENRES = {  # word → (bpm, mode family hint or None, instruments, swing)
    "house": (124, None, {"drums", "bass", "pad", "lead"}, 0.0),
    "techno": (130, "minor", {"drums", "bass", "arp"}, 0.0),
    "trance": (138, "minor", {"drums", "bass", "pad", "arp"}, 0.0),
    "hip hop": (90, "minor", {"drums", "bass", "piano"}, 0.12),
    "hiphop": (90, "minor", {"drums", "bass", "piano"}, 0.12),
    "lofi": (78, None, {"drums", "bass", "piano"}, 0.15),
    "lo-fi": (78, None, {"drums", "bass", "piano"}, 0.15),
    "jazz": (112, "dorian", {"drums", "bass", "piano"}, 0.18),
    "funk": (104, "mixolydian", {"drums", "bass", "lead", "piano"}, 0.08),
    "ambient": (70, None, {"pad", "lead"}, 0.0),
    "drum and bass": (172, "minor", {"drums", "bass", "pad"}, 0.0),
    "dnb": (172, "minor", {"drums", "bass", "pad"}, 0.0),
    "disco": (118, "major", {"drums", "bass", "piano", "lead"}, 0.0),
    "pop": (110, "major", {"drums", "bass", "piano", "lead"}, 0.0),
    "rock": (120, "minor", {"drums", "bass", "lead", "pad"}, 0.0),
    "cinematic": (80, "minor", {"pad", "piano", "lead"}, 0.0),
    "chill": (85, None, {"drums", "bass", "pad", "piano"}, 0.08),
    "synthwave": (100, "minor", {"drums", "bass", "pad", "arp"}, 0.0),
}
INSTRUMENT_WORDS = {
    "piano": "piano", "keys": "piano", "rhodes": "piano", "chords": "piano", "organ": "piano",
    "pad": "pad", "pads": "pad", "strings": "pad", "synth": "pad", "choir": "pad", "drone": "pad",
    "bass": "bass", "bassline": "bass", "808": "bass", "sub": "bass",
    "drums": "drums", "drum": "drums", "beat": "drums", "beats": "drums", "kick": "drums",
    "percussion": "drums", "groove": "drums", "breakbeat": "drums",
    "lead": "lead", "melody": "lead", "flute": "lead", "bell": "lead", "bells": "lead",
    "whistle": "lead", "guitar": "lead", "sax": "lead", "vocal": "lead",
    "arp": "arp", "arpeggio": "arp", "arpeggios": "arp", "pluck": "arp", "plucks": "arp",
    "sequence": "arp",
}
MOODS = {  # word → (mode, tempo factor, brightness delta)
    "dark": ("minor", 0.95, -0.25), "sad": ("minor", 0.85, -0.15), "melancholic": ("minor", 0.85, -0.1),
    "moody": ("dorian", 0.95, -0.1), "happy": ("major", 1.1, 0.2), "bright": ("major", 1.0, 0.3),
    "uplifting": ("major", 1.08, 0.2), "sunny": ("major", 1.05, 0.2), "dreamy": ("lydian", 0.9, 0.1),
    "mysterious": ("phrygian", 0.9, -0.15), "epic": ("minor", 1.0, 0.15), "calm": (None, 0.85, -0.1),
    "chill": (None, 0.9, -0.05), "relaxed": (None, 0.85, -0.1), "energetic": (None, 1.15, 0.2),
    "aggressive": ("phrygian", 1.15, 0.25), "peaceful": ("major", 0.8, -0.1), "warm": (None, 1.0, -0.1),
    "tense": ("phrygian", 1.0, 0.0), "romantic": ("major", 0.9, 0.0), "groovy": ("mixolydian", 1.0, 0.05),
}
ALL_INSTRUMENTS = ("drums", "bass", "pad", "piano", "lead", "arp")


@dataclass
class Arrangement:
    """Everything a prompt decides; built once per job by :func:`arrange`."""

    prompt: str
    seed: int
    bpm: float
    root: int                 # MIDI note of the tonic (around C3..B3)
    mode: str
    instruments: frozenset
    brightness: float         # 0..1: harmonic content
    swing: float              # 0..0.3 of a 16th
    key_name: str = ""
    #: pattern tables over the 512-step cycle, filled by ``_compose``: "<voice>_<what>" with
    #: what ∈ note (MIDI), age (steps since the onset), until (steps to the next onset), vel
    tables: dict = field(default_factory=dict, repr=False)
    chords: np.ndarray = field(default=None, repr=False)      # (32 bars, 4) MIDI notes
    form: tuple = ()                                           # section kinds, e.g. ("A", "A2", "B", "A2")

    def describe(self) -> dict:
        return {"bpm": round(self.bpm, 1), "key": self.key_name, "mode": self.mode,
                "instruments": sorted(self.instruments), "form": "".join(f"[{x}]" for x in self.form)}


def _prompt_rng(prompt: str, seed: int) -> np.random.Generator:
    h = hashlib.blake2b(f"{prompt.strip().lower()}\0{seed}".encode(), digest_size=16).digest()
    return np.random.default_rng(int.from_bytes(h, "little"))


_KEY_RE = re.compile(
    r"(?:\b(?:in|key of|key)\s+([a-g])(#|b|♯|♭|\s+sharp|\s+flat)?(?:\s*(major|minor|maj|min|m|dorian|phrygian|"
    r"lydian|mixolydian|aeolian|ionian))?\b)|(?:\b([a-g])(#|♯|♭)?\s*(major|minor|dorian|phrygian|lydian|"
    r"mixolydian|aeolian|ionian)\b)", re.I)
_BPM_RE = re.compile(r"\b(\d{2,3}(?:\.\d+)?)\s*(?:bpm|beats per minute)\b", re.I)


def arrange(prompt: str, seed: int = 0, tempo_override: float | None = None) -> Arrangement:
    """Read tempo, key, mode, mood and instruments from ``prompt``; fill gaps from a hash."""
    text = " ".join(prompt.lower().split())
    rng = _prompt_rng(text, seed)
    words = set(re.findall(r"[a-z0-9#\-]+", text))

    bpm = None
    mode = None
    instruments: set[str] = set()
    swing = 0.0
    tempo_factor = 1.0
    bright = 0.5
    for g, (g_bpm, g_mode, g_inst, g_swing) in GENRES.items():
        if (" " in g and g in text) or g in words:
            bpm = bpm or g_bpm
            mode = mode or g_mode
            instruments |= g_inst
            swing = max(swing, g_swing)
    for w, (m_mode, m_tf, m_b) in MOODS.items():
        if w in words:
            mode = mode if (mode and m_mode is None) else (m_mode or mode)
            tempo_factor *= m_tf
            bright += m_b
    for w, inst in INSTRUMENT_WORDS.items():
        if w in words:
            instruments.add(inst)
    if re.search(r"\b(no|without)\s+(drums|beat|percussion)\b", text):
        instruments.discard("drums")
    if re.search(r"\b(no|without)\s+bass\b", text):
        instruments.discard("bass")
    if "slow" in words:
        tempo_factor *= 0.8
    if "fast" in words or "uptempo" in words:
        tempo_factor *= 1.2

    root_pc = None
    m = _KEY_RE.search(text)
    if m:
        letter = (m.group(1) or m.group(4)).lower()
        acc = (m.group(2) or m.group(5) or "").strip()
        mword = (m.group(3) or m.group(6) or "").lower()
        root_pc = NOTE_NAMES[letter] + (1 if acc in ("#", "♯", "sharp") else -1 if acc in ("b", "♭", "flat") else 0)
        if mword:
            mode = MODE_ALIASES.get(mword, mword)
    for w in MODES:
        if w in words:
            mode = w
    bm = _BPM_RE.search(text)
    if bm:
        bpm = float(bm.group(1))
        tempo_factor = 1.0

    # gaps from the hash
    if bpm is None:
        bpm = float(rng.integers(84, 126))
    bpm = float(np.clip(bpm * tempo_factor, 40.0, 220.0))
    if tempo_override:
        bpm = float(np.clip(tempo_override, 40.0, 220.0))
    if mode is None:
        mode = ["minor", "major", "dorian", "major", "minor", "mixolydian"][int(rng.integers(0, 6))]
    if root_pc is None:
        root_pc = int(rng.integers(0, 12))
    if not instruments:
        instruments = {"bass", "lead", ["pad", "piano"][int(rng.integers(0, 2))]}
        if rng.random() < 0.6:
            instruments.add("drums")
    if not instruments & {"pad", "piano", "arp"}:
        instruments.add("pad")  # always some harmony
    bright = float(np.clip(bright + rng.normal(0, 0.05), 0.05, 1.0))

    root = 48 + (root_pc % 12)  # C3..B3
    names = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]
    arr = Arrangement(prompt=prompt, seed=seed, bpm=bpm, root=root, mode=mode,
                      instruments=frozenset(instruments), brightness=bright, swing=swing,
                      key_name=f"{names[root_pc % 12]} {mode}")
    _compose(arr, rng)
    return arr


def _compose(a: Arrangement, rng: np.random.Generator) -> None:
    """Fill the pattern tables of ``a``: a 32-bar form of 8-bar sections.

    ``A`` states the groove and the motif; ``A2`` varies it (busier hats, the motif moved and
    ornamented); ``B`` contrasts (another progression and motif, half-time drums, another bass
    figure); ``D`` is a breakdown (no kick or bass for four bars, then a snare build).
    """
    scale = np.array(MODES[a.mode])
    fam = "major" if scale[2] == 4 else "minor"
    progs = PROGRESSIONS[fam]
    pi = int(rng.integers(0, len(progs)))
    prog_a = progs[pi]
    prog_b = progs[(pi + 1 + int(rng.integers(0, len(progs) - 1))) % len(progs)]
    form = FORMS[int(rng.integers(0, len(FORMS)))]
    a.form = form
    section = [form[b // SECTION_BARS] for b in range(CYCLE_BARS)]      # per bar
    in_sec = [b % SECTION_BARS for b in range(CYCLE_BARS)]

    def degree_to_midi(deg, base):
        octave, idx = divmod(deg, 7)
        return base + 12 * octave + scale[idx]

    chords = np.zeros((CYCLE_BARS, 4), dtype=np.int64)
    sevenths = rng.random(SECTION_BARS) < 0.5
    for b in range(CYCLE_BARS):
        d = (prog_b if section[b] == "B" else prog_a)[in_sec[b]]
        tones = [degree_to_midi(d + k, a.root) for k in (0, 2, 4)]
        top = degree_to_midi(d + (6 if sevenths[in_sec[b]] else 7), a.root)
        chords[b] = [tones[0], tones[1], tones[2], top]
    chords = np.where(chords < 52, chords + 12, chords)     # voicing folded into 52..71
    chords = np.where(chords > 71, chords - 12, chords)
    a.chords = chords
    T = a.tables
    T["pad_vel"] = np.array([0.7 if section[b] == "D" and in_sec[b] < 4 else 1.0 for b in range(CYCLE_BARS)])

    def hold(voice, onset_note, onset_vel):
        """Per-step onsets (note ≥ 0, else none) → held note, steps since / until onsets, velocity."""
        idx = np.nonzero(onset_note >= 0)[0]
        if idx.size == 0:
            idx = np.array([0])
            onset_note = onset_note.copy()
            onset_note[0] = 0
            onset_vel = np.zeros_like(onset_vel)
        i = np.arange(CYCLE)
        pos = np.searchsorted(idx, i, side="right") - 1
        prev = np.where(pos >= 0, idx[np.maximum(pos, 0)], idx[-1] - CYCLE)
        nxt = np.where(pos + 1 < idx.size, idx[np.minimum(pos + 1, idx.size - 1)], idx[0] + CYCLE)
        pj = prev % CYCLE
        T[voice + "_note"] = onset_note[pj].astype(np.int64)
        T[voice + "_vel"] = onset_vel[pj].astype(np.float64)
        T[voice + "_age"] = (i - prev).astype(np.int64)
        T[voice + "_until"] = (nxt - i).astype(np.int64)

    # bass: a figure per section kind (root, fifth, octave), none in the breakdown's first half
    figures = [[0, 6, 8, 14], [0, 3, 8, 11], [0, 8], [0, 4, 8, 12], [0, 7, 10], [0, 2, 8, 10, 14]]
    fig_a = figures[int(rng.integers(0, len(figures)))]
    fig_b = figures[int(rng.integers(0, len(figures)))]
    bn = -np.ones(CYCLE, dtype=np.int64)
    bv = np.zeros(CYCLE)
    for b in range(CYCLE_BARS):
        if section[b] == "D" and in_sec[b] < 4:
            continue
        r = chords[b, 0] % 12 + 36
        for j, st in enumerate(fig_b if section[b] == "B" else fig_a):
            choice = r if j == 0 or rng.random() < 0.6 else (r + 7 if rng.random() < 0.6 else r + 12)
            bn[b * 16 + st] = choice
            bv[b * 16 + st] = 1.0 if j == 0 else 0.75 + 0.2 * rng.random()
    hold("bass", bn, bv)

    # melody: two-bar motifs on scale degrees, pulled to chord tones on strong steps
    rhythms = [[0, 3, 6, 8, 10, 14], [0, 4, 6, 10, 12], [0, 2, 4, 7, 8, 12, 14], [0, 6, 8, 12],
               [2, 4, 6, 10, 11, 14]]

    def motif():
        deg = int(rng.integers(7, 11))
        halves = []
        for _ in range(2):
            seq = []
            for st in rhythms[int(rng.integers(0, len(rhythms)))]:
                deg = int(np.clip(deg + int(rng.choice([-2, -1, -1, 1, 1, 2, 0, 3, -3])), 5, 14))
                seq.append((st, deg))
            halves.append(seq)
        return halves

    motifs = {"A": motif(), "B": motif()}
    ln = -np.ones(CYCLE, dtype=np.int64)
    lv = np.zeros(CYCLE)
    for b in range(CYCLE_BARS):
        kind, k = section[b], in_sec[b]
        if kind == "D" and k < 4:
            continue                                        # the breakdown leaves room
        halves = motifs["B" if kind == "B" else "A"]
        shift = 0 if k < 4 else int(rng.choice([0, 2, -1, 1]))
        if kind == "A2":
            shift += 2 if k % 4 < 2 else 0                  # the answer sits higher
        for st, d in halves[k % 2]:
            if k % 4 == 3 and st >= 8 and rng.random() < 0.5:
                continue                                    # breathe at phrase ends
            note = degree_to_midi(d + shift, a.root + 12)
            if st in (0, 8):
                ct = chords[b] % 12
                cands = [note + x for x in range(-2, 3) if (note + x) % 12 in ct]
                if cands:
                    note = min(cands, key=lambda x: abs(x - note))
            ln[b * 16 + st] = note
            lv[b * 16 + st] = 0.7 + 0.3 * rng.random()
        if kind == "A2" and k % 2 == 1 and rng.random() < 0.6:    # a passing note into the next bar
            ln[b * 16 + 15] = degree_to_midi(halves[0][0][1] + shift + 1, a.root + 12)
            lv[b * 16 + 15] = 0.6
    hold("lead", ln, lv)

    # arpeggio: chord tones every 16th; quieter in A, full in A2/B, silent in the breakdown's start
    order = [0, 1, 2, 3, 2, 1] if rng.random() < 0.5 else [0, 1, 2, 3]
    i = np.arange(CYCLE)
    bars = i // 16
    T["arp_note"] = chords[bars, np.array(order)[i % len(order)]] + 12
    sec_gain = np.array([{"A": 0.75, "A2": 1.0, "B": 0.9, "D": 1.0}[section[b]] * (0.0 if section[b] == "D" and
                         in_sec[b] < 4 else 1.0) for b in range(CYCLE_BARS)])
    T["arp_vel"] = np.where(i % 4 == 0, 0.9, 0.6) * sec_gain[bars]

    # piano comping: a pattern per section kind; whole-bar chords in the breakdown
    comps = [[0, 6, 10], [0, 8], [0, 3, 8, 11], [0, 4, 8, 12], [2, 6, 10, 14]]
    comp_a = comps[int(rng.integers(0, len(comps)))]
    comp_b = comps[int(rng.integers(0, len(comps)))]
    po = -np.ones(CYCLE, dtype=np.int64)
    pv = np.zeros(CYCLE)
    for b in range(CYCLE_BARS):
        hits = [0] if section[b] == "D" and in_sec[b] < 4 else (comp_b if section[b] == "B" else comp_a)
        for j, st in enumerate(hits):
            po[b * 16 + st] = b
            pv[b * 16 + st] = 0.9 if j == 0 else 0.65
    hold("piano", po, pv)

    # drums
    kick = np.zeros(CYCLE)
    snare = np.zeros(CYCLE)
    hat = np.zeros(CYCLE)
    four = a.bpm >= 115 and "hip" not in a.prompt.lower()
    ghost = rng.random(CYCLE_BARS) < 0.4
    for b in range(CYCLE_BARS):
        o = b * 16
        kind, k = section[b], in_sec[b]
        if kind == "D" and k < 4:
            hat[o + np.arange(2, 16, 4)] = 0.35              # only a quiet pulse
            continue
        if kind == "D" and k >= 6:                          # the build: 8ths, then 16ths
            snare[o + np.arange(0, 16, 2 if k == 6 else 1)] = np.linspace(0.35, 0.9, 8 if k == 6 else 16)
            kick[o + np.array([0, 4, 8, 12])] = 0.9
            continue
        if kind == "B" and not four:                        # half-time feel
            kick[o + np.array([0, 7, 10])] = [1.0, 0.6, 0.8]
            snare[o + 8] = 0.9
        elif four:
            kick[o + np.array([0, 4, 8, 12])] = 1.0
            snare[o + 4] = snare[o + 12] = 0.9
        else:
            kick[o + 0] = 1.0
            kick[o + 10] = 0.85
            if ghost[b]:
                kick[o + 7] = 0.6
            snare[o + 4] = snare[o + 12] = 0.9
        if four:
            hat[o + np.array([2, 6, 10, 14])] = 0.8
            hat[o + np.array([0, 4, 8, 12])] = 0.25
        else:
            hat[o + np.arange(0, 16, 2)] = 0.55
            hat[o + np.arange(1, 16, 2)] = 0.15 * (rng.random(8) < 0.5)
        if kind == "A2":
            hat[o + np.arange(1, 16, 2)] = np.maximum(hat[o + np.arange(1, 16, 2)], 0.3)   # busier
        if k % 4 == 3:                                      # a fill into the next phrase
            snare[o + 14] = 0.5
            snare[o + 15] = 0.35 if rng.random() < 0.6 else 0.0
    for name, v in (("kick", kick), ("snare", snare), ("hat", hat)):
        hold(name, np.where(v > 0, 0, -1), v)


# ---------------------------------------------------------------------------------------------
# rendering: pure functions of absolute frame index, vectorised over (B, N)


def _midi_hz(n):
    return 440.0 * np.power(2.0, (n - 69.0) / 12.0)


def _hash_noise(frames: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Counter-based white noise in [-1, 1): the same value for the same (frame, seed)."""
    x = frames.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + seed.astype(np.uint64)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(32)
    return ((x >> np.uint64(40)).astype(np.float32) * np.float32(2.0 / 16777216.0) - np.float32(1.0))


class _Batch:
    """Per-stream parameters stacked for one ``generate`` call."""

    def __init__(self, arrs: list[Arrangement], params: list[dict], sr: int):
        self.n = len(arrs)
        self.sr = sr
        col = lambda v: np.asarray(v, dtype=np.float64)[:, None]  # noqa: E731
        self.step_frames = col([sr * 60.0 / a.bpm / 4.0 for a in arrs])
        self.swing = col([a.swing for a in arrs])
        self.bright = col([a.brightness for a in arrs])
        self.seed = np.asarray([(a.seed * 0x2545F491 + hash_prompt(a.prompt)) & 0xFFFFFFFF for a in arrs],
                               dtype=np.uint64)[:, None]
        self.has = {k: col([1.0 if k in a.instruments else 0.0 for a in arrs]) for k in ALL_INSTRUMENTS}
        self.chords = np.stack([a.chords for a in arrs])
        self.t = {k: np.stack([a.tables[k] for a in arrs]) for k in arrs[0].tables}
        self.gain = col([p.get("gain", 1.0) for p in params])
        self.brightness_param = col([p.get("brightness", -1.0) for p in params])


def hash_prompt(prompt: str) -> int:
    return int.from_bytes(hashlib.blake2b(prompt.encode(), digest_size=4).digest(), "little")


def render(arrs: list[Arrangement], start: np.ndarray, n: int, sr: int = 48000,
           params: list[dict] | None = None) -> np.ndarray:
    """Render ``n`` frames of each arrangement from absolute frame ``start[b]``.

    Returns ``(B, n, 2)`` float32. A pure function: any split of a range renders the same.
    """
    f32 = np.float32
    TWO_PI = f32(2 * np.pi)
    bt = _Batch(arrs, params or [{} for _ in arrs], sr)
    f = np.asarray(start, dtype=np.int64)[:, None] + np.arange(n, dtype=np.int64)[None, :]  # (B, N)
    left = np.zeros((bt.n, n), dtype=np.float32)
    right = np.zeros((bt.n, n), dtype=np.float32)
    bright = np.where(bt.brightness_param >= 0, bt.brightness_param, bt.bright).astype(np.float32)
    take = lambda tab, idx: np.take_along_axis(tab, idx, axis=1)  # noqa: E731
    swing_frames = bt.swing * bt.step_frames

    def grid(fr):
        """Step index, frames since the grid line, and the (swung) event step sounding at ``fr``."""
        step = np.floor(fr / bt.step_frames).astype(np.int64)
        in_step = fr - step * bt.step_frames
        odd = (step & 1) == 1
        in_sw = in_step - np.where(odd, swing_frames, 0.0)
        pre = in_sw < 0                    # a late (swung) odd onset has not happened yet
        cyc_ev = np.where(pre, step - 1, step) % CYCLE
        since = np.where(pre, in_step + bt.step_frames, in_sw)
        return step, in_step, cyc_ev, since, fr

    step, in_step, cyc_ev, since, _ = grid(f)

    def voice(name, ev=None, release_s=0.006):
        """(seconds since the onset, release gain before the next onset, note, velocity)."""
        _, _, c, sn, fr = ev if ev is not None else (step, in_step, cyc_ev, since, f)
        back = take(bt.t[name + "_age"], c)
        until = take(bt.t[name + "_until"], c)
        age_frames = sn + back * bt.step_frames
        age = (age_frames / sr).astype(np.float32)
        # a note whose onset lies before the stream began is not heard (no click at the start)
        age = np.where(age_frames <= fr + 0.5, age, np.float32(1e4))
        left_s = ((until * bt.step_frames - sn - swing_frames) / sr).astype(np.float32)
        rel = np.clip(left_s / f32(release_s), f32(0.0), f32(1.0))
        vel = take(bt.t[name + "_vel"], c).astype(np.float32)
        note = take(bt.t[name + "_note"], c) if name + "_note" in bt.t else None
        return age, rel, note, vel

    def hz_of(note):
        return _midi_hz(note.astype(np.float64)).astype(np.float32)

    def osc3(phase, h2, h3):
        """Sine plus 2nd and 3rd harmonics from one sin/cos pair (double/triple-angle forms)."""
        sn = np.sin(phase)
        cs = np.cos(phase)
        return sn + h2 * (f32(2.0) * sn * cs) + h3 * (f32(3.0) * sn - f32(4.0) * sn * sn * sn)

    # --- pad: sustained chord per bar, attack/release at bar lines, detuned left/right
    if bt.has["pad"].any():
        bar_frames = bt.step_frames * STEPS_PER_BAR
        bar = np.floor(f / bar_frames).astype(np.int64)
        age = ((f - bar * bar_frames) / sr).astype(np.float32)
        left_in_bar = (bar_frames / sr).astype(np.float32) - age
        env = np.minimum(f32(1.0), age / f32(0.08)) * np.clip(left_in_bar / f32(0.06), f32(0.0), f32(1.0))
        chord_idx = bar % CYCLE_BARS
        pad = np.zeros_like(left)
        padr = np.zeros_like(left)
        h2, h3 = f32(0.25) * bright, f32(0.12) * bright
        for k in range(4):
            ph = TWO_PI * hz_of(take(bt.chords[:, :, k], chord_idx)) * age
            pad += osc3(ph * f32(1.0015), h2, h3)
            padr += osc3(ph * f32(0.9985), h2, h3)
        g = (0.055 * bt.has["pad"]).astype(np.float32) * env * take(bt.t["pad_vel"], chord_idx).astype(np.float32)
        left += g * pad
        right += g * padr

    # --- piano: the bar's chord struck on the comping pattern, decaying
    if bt.has["piano"].any():
        age, rel, _, vel = voice("piano")
        bar = cyc_ev // STEPS_PER_BAR
        env = np.minimum(f32(1.0), age / f32(0.004)) * np.exp(age * f32(-3.2)) * vel * rel
        pno = np.zeros_like(left)
        h2 = f32(0.35) * bright + f32(0.1)
        for k in range(4):
            pno += osc3(TWO_PI * hz_of(take(bt.chords[:, :, k], bar)) * age, h2, f32(0.15)) * f32(1.0 - 0.15 * k)
        g = (0.075 * bt.has["piano"]).astype(np.float32) * env
        left += g * pno * f32(1.1)
        right += g * pno * f32(0.9)

    # --- bass: sine with a little 2nd harmonic, plucky envelope
    if bt.has["bass"].any():
        age, rel, note, vel = voice("bass")
        env = (np.minimum(f32(1.0), age / f32(0.006)) * (f32(0.4) + f32(0.6) * np.exp(age * f32(-5.0)))
               * np.exp(age * f32(-0.8)) * rel * vel)
        b = osc3(TWO_PI * hz_of(note) * age, f32(0.3) + f32(0.2) * bright, f32(0.08)) * env
        g = (0.22 * bt.has["bass"]).astype(np.float32)
        left += g * b
        right += g * b

    # --- lead: soft tone with vibrato, and a dotted-eighth echo of itself on the other side
    if bt.has["lead"].any():
        def lead(ev):
            age, rel, note, vel = voice("lead", ev)
            vib = f32(1.0) + f32(0.004) * np.sin(TWO_PI * f32(5.2) * age) * np.minimum(f32(1.0), age / f32(0.3))
            env = np.minimum(f32(1.0), age / f32(0.012)) * np.exp(age * f32(-1.6)) * rel * vel
            return osc3(TWO_PI * hz_of(note) * age * vib, f32(0.1), f32(0.28) * bright + f32(0.05)) * env

        has = bt.has["lead"].astype(np.float32)
        ld = lead(None) * has
        echo = lead(grid(f - np.round(3 * bt.step_frames).astype(np.int64))) * has
        left += f32(0.085) * ld + f32(0.03) * echo
        right += f32(0.065) * ld + f32(0.05) * echo

    # --- arp: a pluck on every 16th, panned slowly across
    if bt.has["arp"].any():
        age = (in_step / sr).astype(np.float32)
        left_s = ((bt.step_frames - in_step) / sr).astype(np.float32)
        rel = np.clip(left_s / f32(0.004), f32(0.0), f32(1.0))
        c = step % CYCLE
        vel = take(bt.t["arp_vel"], c).astype(np.float32)
        env = np.minimum(f32(1.0), age / f32(0.003)) * np.exp(age * f32(-14.0)) * vel * rel
        a = osc3(TWO_PI * hz_of(take(bt.t["arp_note"], c)) * age, f32(0.45) * bright, f32(0.3) * bright)
        a *= env * bt.has["arp"].astype(np.float32)
        pan = (0.5 + 0.3 * np.sin(2 * np.pi * (step % 32) / 32.0)).astype(np.float32)
        left += f32(0.12) * a * (f32(1.0) - pan)
        right += f32(0.12) * a * pan

    # --- drums: kick (pitch sweep), snare (noise + body), hat (differenced noise)
    if bt.has["drums"].any():
        ka, krel, _, kv = voice("kick", release_s=0.003)
        kphase = TWO_PI * (f32(45.0) * ka + f32(75.0 * 0.03) * (f32(1.0) - np.exp(ka * f32(-1 / 0.03))))
        kick = np.sin(kphase) * np.exp(ka * f32(-7.0)) * np.minimum(f32(1.0), ka / f32(0.002)) * kv * krel
        noise = _hash_noise(f, bt.seed)
        prev = np.empty_like(noise)
        prev[:, 1:] = noise[:, :-1]
        prev[:, :1] = _hash_noise(f[:, :1] - 1, bt.seed)
        sa, srel, _, sv = voice("snare", release_s=0.003)
        snare = (f32(0.55) * noise * np.exp(sa * f32(-18.0))
                 + f32(0.5) * np.sin(TWO_PI * f32(185.0) * sa) * np.exp(sa * f32(-25.0))) * sv * srel
        ha, hrel, _, hv = voice("hat", release_s=0.002)
        hat = (noise - prev) * f32(0.5) * np.exp(ha * f32(-45.0)) * hv * hrel * (f32(0.6) + f32(0.4) * bright)
        g = bt.has["drums"].astype(np.float32)
        left += g * (f32(0.42) * kick + f32(0.2) * snare + f32(0.1) * hat)
        right += g * (f32(0.42) * kick + f32(0.18) * snare + f32(0.13) * hat)

    out = np.stack([left, right], axis=-1) * bt.gain[:, :, None].astype(np.float32)
    start_ramp = np.clip(f / (0.003 * sr), 0.0, 1.0).astype(np.float32)   # 3 ms fade-in at frame 0
    out *= start_ramp[:, :, None]
    return soft_limit(out)


class SynthBackend(Backend):
    """The embedded default backend. Weight-free; ``warmup`` renders once to fault in NumPy."""

    name = "synth"
    channels = 2
    max_batch = 256
    WORK_FRAMES = 8192      # frames per vectorised render (streams × chunk)
    params = {
        "gain": (0.0, 4.0, 1.0),
        "brightness": (0.0, 1.0, -1.0),
        "temperature": (0.0, 2.0, 1.0),   # accepted for a uniform surface; the synth is deterministic
        "guidance": (0.0, 10.0, 3.0),
        "top_k": (1.0, 2048.0, 250.0),
    }

    def __init__(self, sample_rate: int = 48000, **_ignored):
        self.sample_rate = int(sample_rate)
        self._tempo = None

    def warmup(self) -> None:
        """Render a short batch once. ``[control]`` at start."""
        arr = arrange("warm up", 0)
        render([arr, arr], np.array([0, 12345]), 2048, self.sample_rate)

    def start(self, job: int, prompt: str, seed: int, params=None) -> Stream:
        """Arrange the prompt (a few ms). ``[engine]``"""
        arr = arrange(prompt, seed, self._tempo)
        return Stream(job=job, prompt=prompt, seed=seed, params=dict(params or {}), state=arr)

    def generate(self, streams: list[Stream], frames: int) -> list[np.ndarray]:
        """One vectorised render of every stream's next ``frames`` frames. ``[engine]``"""
        if not streams:
            return []
        # vectorise over streams only up to ~8k frames per render: beyond that the (B, n)
        # temporaries leave the cache and a batch is slower than one stream at a time (measured)
        per = max(1, self.WORK_FRAMES // max(1, frames))
        res = []
        for k in range(0, len(streams), per):
            part = streams[k:k + per]
            start = np.array([s.frames_done for s in part], dtype=np.int64)
            out = render([s.state for s in part], start, frames, self.sample_rate, [s.params for s in part])
            res.extend(out[i] for i in range(len(part)))
        for s in streams:
            s.frames_done += frames
        return res

    def set_tempo(self, bpm: float) -> None:
        """Global tempo: applies to jobs started afterwards. ``[engine]``"""
        self._tempo = float(bpm)
