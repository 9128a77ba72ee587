"""``wavebridge render``: a prompt to an audio file (and its score to a MIDI file), offline.

Uses exactly what the daemon plays: the ``synth`` backend's composer and renderer (FluidSynth
with the GM SoundFont, or the oscillator fallback), read in the daemon's chunk size, then written
by soundfile — WAV (32-bit float) or FLAC (24-bit), chosen by the file's extension. ``--midi``
writes the same score as a Standard MIDI File (``engine.midifile``). Runs in the caller's thread
(it plays the ``[engine]`` role itself); no daemon, no ring.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import soundfile as sf

from dsp import soft_limit
from engine.backend import BackendError
from engine.midifile import write_midi
from engine.synth.backend import SynthBackend

FORMATS = {".wav": ("WAV", "FLOAT"), ".flac": ("FLAC", "PCM_24")}


def render_take(prompt: str, seconds: float, *, seed: int = 0, bpm: float | None = None,
                soundfont: str | None = None, renderer: str | None = None, sample_rate: int = 48000,
                chunk: int = 8192, theme=None):
    """(audio ``(n, 2)`` float32, score, backend description) for ``prompt``; ``theme`` (an
    :class:`engine.compose.theme.Theme`) is the lead's motif. ``[engine]``"""
    composer = None
    if theme is not None:
        from engine.compose import compose

        composer = lambda p, seed=0, bpm=None: compose(p, seed, bpm, theme)  # noqa: E731
    b = SynthBackend(sample_rate=sample_rate, soundfont=soundfont, renderer=renderer, pool_size=1, workers=1,
                     composer=composer)
    b.warmup()
    try:
        if bpm:
            b.set_tempo(bpm)
        s = b.start(1, prompt, seed)
        total = int(round(seconds * sample_rate))
        out = np.empty((total, 2), dtype=np.float32)
        pos = 0
        while pos < total:
            n = min(chunk, total - pos)
            out[pos:pos + n] = b.generate([s], n)[0]
            pos += n
        score = s.state.score
        b.end(s)
        return soft_limit(out), score, b.describe()      # the daemon's last safety stage, too
    finally:
        b.close()


def run_render(args) -> int:
    """The ``render`` command (its flags: ``bridge.ops.cli``). ``[control]``"""
    ext = os.path.splitext(args.out)[1].lower()
    if ext not in FORMATS:
        print(f"wavebridge render: --out must end in {' or '.join(FORMATS)} (got {args.out!r})", file=sys.stderr)
        return 2
    if not args.seconds > 0 or args.seconds > 3600:
        print("wavebridge render: --seconds must be in (0, 3600]", file=sys.stderr)
        return 2
    if not args.prompt.strip():
        print("wavebridge render: the prompt is empty", file=sys.stderr)
        return 2
    theme = None
    if getattr(args, "theme", None):
        try:
            theme = load_theme(args.theme)
        except (OSError, ValueError) as e:
            print(f"wavebridge render: --theme {args.theme}: {e}", file=sys.stderr)
            return 2
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        audio, score, what = render_take(args.prompt, args.seconds, seed=args.seed, bpm=args.bpm,
                                         soundfont=args.soundfont, renderer=args.renderer,
                                         sample_rate=args.sample_rate, theme=theme)
    except BackendError as e:
        print(f"wavebridge render: {e}", file=sys.stderr)
        return 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    fmt, subtype = FORMATS[ext]
    try:
        sf.write(args.out, audio, args.sample_rate, format=fmt, subtype=subtype)
        if args.midi:
            write_midi(score, args.midi, seconds=args.seconds)
    except (OSError, RuntimeError) as e:          # soundfile raises RuntimeError-derived errors
        print(f"wavebridge render: could not write: {e}", file=sys.stderr)
        return 1
    d = score.describe()
    peak = float(np.abs(audio).max()) if audio.size else 0.0
    print(f"wavebridge render: {args.out} ({args.seconds:g} s, {what}) in {wall:.2f} s "
          f"({cpu:.2f} s CPU) = {args.seconds / max(wall, 1e-9):.0f}x real time; {d['genre']}, {d['bpm']} bpm, {d['meter']}, "
          f"{d['key']}; peak {20 * np.log10(max(peak, 1e-9)):.1f} dBFS"
          + (f"; score → {args.midi}" if args.midi else ""))
    if getattr(args, "explain", False):
        print(explain_text(score))
    return 0


def load_theme(path: str, meter: tuple[int, int] = (4, 4)):
    """A tune from a MIDI file (its top line) as a cleaned :class:`engine.compose.theme.Theme`;
    ``ValueError`` with one line for a file that is not one (``OSError`` if unreadable)."""
    from engine.compose.theme import clean
    from engine.midifile import read_tune

    with open(path, "rb") as f:
        data = f.read(1 << 20)
    return clean(read_tune(data), meter)


def explain_text(score) -> str:
    """What the composer understood of a composed score's prompt, as lines for a person. ``[control]``"""
    from engine.compose import composer_of

    x = composer_of(score).explain()
    lines = [f"style:       {x['style']} ({x['family'] or 'no family'}) — from {x['why']}",
             f"tempo:       {x['tempo']}",
             f"meter:       {x['meter']}" + (f", swing {x['swing']}" if x["swing"] else ", straight"),
             f"key:         {x['key']}",
             f"intro:       {x['intro_bars']} bar{'s' if x['intro_bars'] != 1 else ''}"]
    for d in x["instruments"]:
        prog = d["program"]
        lines.append(f"instrument:  {d['name']:<18s} {d['role']:<6s} "
                     f"{prog if isinstance(prog, str) else 'GM ' + str(prog + 1) + ' (program ' + str(prog) + ')'}"
                     + ("  ← named" if d["named"] else ""))
    if x["percussion"]:
        lines.append("percussion:  " + ", ".join(x["percussion"]))
    if x["spelled"]:
        lines.append("spelling:    " + "; ".join(x["spelled"]))
    return "\n".join(lines)
