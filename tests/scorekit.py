"""Hand-built scores for the renderer tests (independent of the composer).

:func:`make_score` builds a small arrangement — drums, bass, chords, pad, lead — with a chosen
meter, swing, tempo and GM programs, deterministic per ``seed``; notes come bar by bar like the
composer's.
"""
from __future__ import annotations

import random

from engine.score import DRUM_CHANNEL, Control, Note, Part, Score

PROG = {"drums": 0, "bass": 33, "chords": 4, "pad": 48, "lead": 73}


def make_score(*, bpm: float = 110.0, meter=(4, 4), swing: float = 0.0, seed: int = 0,
               roles=("drums", "bass", "chords", "pad", "lead"), programs: dict | None = None,
               lead_long: bool = False, bend: bool = False, key_root: int = 9) -> Score:
    progs = dict(PROG, **(programs or {}))
    parts = []
    for r in roles:
        if r == "drums":
            parts.append(Part("drums", "drums", progs["drums"], DRUM_CHANNEL, level=0.9, reverb=0.15))
        else:
            ch = len([p for p in parts if not p.is_drums])
            ch = ch + 1 if ch >= DRUM_CHANNEL else ch
            pan = {"bass": 0.0, "chords": -0.3, "pad": 0.25, "lead": 0.15}[r]
            parts.append(Part(r, r, progs[r], ch, level={"bass": 0.85, "chords": 0.6, "pad": 0.45,
                                                          "lead": 0.7}[r], pan=pan, reverb=0.3,
                              chorus=0.3 if r == "pad" else 0.0))
    idx = {p.role: i for i, p in enumerate(parts)}
    bpb = meter[0] * 4.0 / meter[1]
    beats = meter[0] if meter[1] == 4 else meter[0] // 2 * 1   # pulses per bar
    pulse = bpb / max(1, beats)
    root = 45 + key_root % 12 - 9
    degrees = [0, 5, 3, 7] if seed % 2 == 0 else [0, 8, 5, 7]
    rng0 = random.Random(seed)
    rng0.shuffle(degrees)

    def sw(beat: float) -> float:
        """Swing: eighth-note off-beats pushed late by ``swing`` of an eighth."""
        frac = beat % 1.0
        return beat + (swing * 0.5 if abs(frac - 0.5) < 1e-9 else 0.0)

    def make_bar(i: int):
        rng = random.Random(hash((seed, i)) & 0xFFFFFFFF)
        o = i * bpb
        notes, ctl = [], []
        chord_root = root + degrees[i % 4]
        triad = [chord_root + 12, chord_root + 16 - (1 if i % 2 else 0), chord_root + 19]
        if "drums" in idx:
            d = idx["drums"]
            for k in range(beats):
                b = o + k * pulse
                notes.append(Note(d, b, 0.1, 36 if k == 0 or (beats == 4 and k == 2) else 38, 110 if k == 0 else 95))
            t = 0.0
            while t < bpb - 1e-9:
                notes.append(Note(d, sw(o + t), 0.1, 42, 70 + rng.randrange(20)))
                t += 0.5
        if "bass" in idx:
            b = idx["bass"]
            for k in range(beats):
                notes.append(Note(b, sw(o + k * pulse), pulse * 0.9, chord_root - 12 + (7 if k % 2 else 0), 100))
            if swing:
                notes.append(Note(b, sw(o + 0.5), 0.4, chord_root - 12, 80))
        if "chords" in idx:
            c = idx["chords"]
            for start in (0.0, 1.5 if bpb >= 3 else 1.0):
                for pch in triad:
                    notes.append(Note(c, sw(o + start), 1.0, pch, 85))
        if "pad" in idx:
            p = idx["pad"]
            for pch in triad:
                notes.append(Note(p, o, bpb, pch, 80))
        if "lead" in idx:
            ld = idx["lead"]
            if lead_long:
                if i % 2 == 0:
                    notes.append(Note(ld, o, 2 * bpb, chord_root + 24, 90))
            else:
                t = 0.0
                while t < bpb - 1e-9:
                    step = rng.choice([0.5, 1.0, 1.0, 1.5])
                    notes.append(Note(ld, sw(o + t), min(step, bpb - t) * 0.9,
                                      chord_root + 24 + rng.choice([0, 2, 3, 5, 7]), 90))
                    t += step
            if bend and i % 2 == 0:
                ctl.append(Control(ld, o + 1.0, "bend", 1.0))
                ctl.append(Control(ld, o + 2.0, "bend", 0.0))
        return notes, ctl

    return Score(prompt=f"scorekit {seed}", seed=seed, bpm=bpm, meter=tuple(meter), key_root=key_root,
                 mode="minor", genre="test", parts=parts, swing=swing, make_bar=make_bar,
                 section_of=lambda i: "A", chord_of=lambda i: (root + degrees[i % 4],))
