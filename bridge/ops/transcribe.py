"""transcribe: a hummed or sung take → the notes of its tune, for ``wavebridge theme --from-audio``.

Spotify's basic-pitch finds the notes: its ONNX model, shipped inside the ``basic-pitch`` wheel
(``basic_pitch/saved_models/icassp_2022/nmp.onnx``), run by onnxruntime on the CPU — no
TensorFlow, nothing downloaded (``make setup`` installs basic-pitch with ``--no-deps`` beside the
``transcribe`` extra, what it imports). The take is mixed to mono, resampled to the model's
22.05 kHz with soxr and cut into the model's 2 s windows (~13 ms each on two cores; a 2 s take
~30 ms in all).

basic-pitch hears polyphony and splits a note held with vibrato into pieces; a voice sings one
note at a time, so :func:`clean_sung_line` keeps one: where notes overlap the strongest
(confidence × length) holds the time; pieces of one pitch less than :data:`MERGE_GAP_S` apart
are one note again — unless the level dips between them (the pitch sung twice, with a breath
or a consonant between); notes shorter than :data:`MIN_NOTE_S` (glide and breath blips) or less
sure than :data:`MIN_CONFIDENCE` (what noise gives) go. Then each note ends where the voice
stops (:func:`trim_to_voice`) and gets a velocity from how loud it was sung. Times are seconds
from the start of the take, pitches MIDI, unquantised: ``engine.compose.theme`` puts them on a
slot's grid and key.

Bad input is a :class:`TranscribeError` (a ``WavebridgeError``) with a message for the user —
``not_audio`` (a file soundfile cannot read, no samples, NaNs), ``no_notes`` (silence, noise),
``too_long`` (over :data:`MAX_SECONDS`), ``not_installed`` (basic-pitch or onnxruntime missing).

Threading: plain CPU work, for the CLI or a worker thread of its own — not ``[control]`` (a
minute of take is ~1 s of work) nor ``[engine]``. basic-pitch is imported on the first call and
the model loaded once per process (under a lock); a transcription holds no other state.
"""
from __future__ import annotations

import logging
import math
import threading
from typing import NamedTuple

import numpy as np

from plugin_stub.protocol import WavebridgeError

MODEL_SR = 22050                  # basic-pitch's sample rate
MIN_NOTE_S = 0.060                # shorter notes are glide or breath blips
MERGE_GAP_S = 0.040               # same-pitch pieces closer than this are one sung note …
REARTICULATION_DB = 9.0           # … unless the level dips this much between them
MIN_CONFIDENCE = 0.5              # basic-pitch's mean frame activation of a sung note (noise: ≤ 0.47)
LEVEL_HOP = 220                   # level frames: 10 ms at MODEL_SR
MAX_SECONDS = 600.0               # a take longer than this is refused (10 minutes)
VOICE_HZ = (55.0, 1400.0)         # A1 .. F6: a hummed or sung line lives in here
ONSET_THRESHOLD = 0.5             # basic-pitch's defaults for onsets and frames
FRAME_THRESHOLD = 0.3
MODEL_MIN_NOTE_FRAMES = 3         # basic-pitch's own minimum (35 ms); ours (MIN_NOTE_S) comes after merging
SILENT_PEAK = 10 ** (-70 / 20)    # a take whose peak is under −70 dBFS holds nothing to hear


class TNote(NamedTuple):
    """One transcribed note: seconds from the start of the take, MIDI pitch, velocity 1..127."""

    start: float
    end: float
    pitch: int
    velocity: int


class TranscribeError(WavebridgeError):
    """A take that gives no tune. Codes: ``not_audio``, ``no_notes``, ``too_long``, ``not_installed``."""

    code = "transcribe"


_model = None
_model_lock = threading.Lock()


def _basic_pitch():
    """(the ONNX model, basic-pitch's inference and note modules), loaded once.

    basic-pitch's ``__init__`` logs a warning for each backend it does not find (TensorFlow,
    CoreML, TFLite) through the root logger — expected here, so those records are dropped; and
    if nothing configured logging yet, a NullHandler keeps ``logging.warning`` from installing a
    stderr handler on the root logger as a side effect.
    """
    global _model
    with _model_lock:
        if _model is None:
            root = logging.getLogger()
            quiet = _DropBasicPitchImportWarnings()
            root.addFilter(quiet)
            null = logging.NullHandler() if not root.handlers else None
            if null is not None:
                root.addHandler(null)
            try:
                import onnxruntime  # noqa: F401 — without it basic_pitch's __init__ fails on a NameError
                import basic_pitch
                from basic_pitch import inference, note_creation
            except ImportError as e:
                raise TranscribeError("not_installed", f"basic-pitch or onnxruntime is not installed ({e}); "
                                      "`make setup` installs them") from None
            finally:
                root.removeFilter(quiet)
                if null is not None:
                    root.removeHandler(null)
            path = basic_pitch.build_icassp_2022_model_path(basic_pitch.FilenameSuffix.onnx)
            _model = (inference.Model(path), inference, note_creation)
        return _model


class _DropBasicPitchImportWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "basic_pitch" not in record.pathname


def to_model_rate(audio: np.ndarray, sr: int) -> np.ndarray:
    """Mono float32 at :data:`MODEL_SR`: channels averaged, resampled with soxr (HQ)."""
    x = np.asarray(audio, dtype=np.float32)
    if x.ndim == 2:
        x = x.mean(axis=1)
    elif x.ndim != 1:
        raise TranscribeError("not_audio", f"audio must be (frames,) or (frames, channels), not {x.shape}")
    if not np.all(np.isfinite(x)):
        raise TranscribeError("not_audio", "the audio holds NaN or infinite samples")
    if sr != MODEL_SR and len(x):
        import soxr

        x = soxr.resample(x, sr, MODEL_SR, quality="HQ").astype(np.float32, copy=False)
    return x


def model_output(x: np.ndarray) -> dict[str, np.ndarray]:
    """basic-pitch's frame, onset and contour activations for mono audio at :data:`MODEL_SR`,
    window by window exactly as ``basic_pitch.inference.run_inference`` does for a file."""
    model, inference, _ = _basic_pitch()
    from basic_pitch.constants import AUDIO_N_SAMPLES, FFT_HOP

    n_overlap = 30
    overlap = n_overlap * FFT_HOP
    padded = np.concatenate([np.zeros(overlap // 2, np.float32), x])
    out: dict[str, list] = {"note": [], "onset": [], "contour": []}
    for window, _ in inference.window_audio_file(padded, AUDIO_N_SAMPLES - overlap):
        for k, v in model.predict(window[np.newaxis].astype(np.float32)).items():
            out[k].append(v)
    return {k: inference.unwrap_output(np.concatenate(v), len(x), n_overlap) for k, v in out.items()}


def raw_notes(x: np.ndarray) -> list[TNote]:
    """basic-pitch's notes (polyphonic, uncleaned) in the voice's range, for mono audio at
    :data:`MODEL_SR`."""
    _, _, nc = _basic_pitch()
    out = model_output(x)
    events = nc.output_to_notes_polyphonic(
        out["note"], out["onset"], onset_thresh=ONSET_THRESHOLD, frame_thresh=FRAME_THRESHOLD,
        min_note_len=MODEL_MIN_NOTE_FRAMES, infer_onsets=True, max_freq=VOICE_HZ[1],
        min_freq=VOICE_HZ[0], melodia_trick=True)
    times = nc.model_frames_to_time(out["contour"].shape[0])
    notes = [TNote(float(times[s]), float(times[min(e, len(times) - 1)]), int(p),
                   max(1, min(127, int(round(127 * float(a))))))
             for s, e, p, a in events]
    return sorted(notes)


def level_db(x: np.ndarray) -> np.ndarray:
    """The take's level, dBFS RMS per :data:`LEVEL_HOP` samples (10 ms at :data:`MODEL_SR`)."""
    n = len(x) // LEVEL_HOP
    if n == 0:
        return np.full(1, -120.0)
    frames = x[:n * LEVEL_HOP].astype(np.float64).reshape(n, LEVEL_HOP)
    return 10.0 * np.log10(np.mean(frames * frames, axis=1) + 1e-12)


def clean_sung_line(notes: list[TNote], level: np.ndarray | None = None) -> list[TNote]:
    """One note at a time, as a voice sings. Overlaps go to the strongest note (confidence ×
    length); a pitch broken into pieces less than :data:`MERGE_GAP_S` apart is one note again,
    unless the level dips :data:`REARTICULATION_DB` between them (the same pitch sung twice);
    notes shorter than :data:`MIN_NOTE_S` or less sure than :data:`MIN_CONFIDENCE` go (then the
    neighbours they parted may join). ``level``: :func:`level_db` of the take, or None to join by
    the gap alone. Velocities stay basic-pitch's confidence; :func:`with_sung_velocity` turns
    them into loudness."""
    line = _merge(_monophonic(notes), level)
    floor = MIN_CONFIDENCE * 127
    kept, dropped = [], []
    for n in line:
        (kept if n.end - n.start >= MIN_NOTE_S - 1e-9 and n.velocity >= floor else dropped).append(n)
    return _merge(kept, level, dropped)


def _monophonic(notes: list[TNote]) -> list[TNote]:
    """Cut the timeline at every note boundary; each piece goes to the strongest note sounding
    in it; a note's consecutive pieces are one note again. One sweep: O(notes × overlap)."""
    notes = sorted(n for n in notes if n.end > n.start)
    edges = sorted({t for n in notes for t in (n.start, n.end)})
    out: list[TNote] = []
    live: list[int] = []
    nxt, owner = 0, None
    for a, b in zip(edges, edges[1:]):
        while nxt < len(notes) and notes[nxt].start <= a:
            live.append(nxt)
            nxt += 1
        live = [i for i in live if notes[i].end > a]
        best = max(live, key=lambda i: (notes[i].velocity * (notes[i].end - notes[i].start), -i), default=None)
        if best is not None and best == owner and out[-1].end == a:
            out[-1] = out[-1]._replace(end=b)
        elif best is not None:
            out.append(TNote(a, b, notes[best].pitch, notes[best].velocity))
        owner = best
    return out


def _span_db(level: np.ndarray, t0: float, t1: float) -> np.ndarray:
    hop_s = LEVEL_HOP / MODEL_SR
    a = max(0, min(len(level) - 1, int(t0 / hop_s)))
    b = max(a + 1, min(len(level), int(math.ceil(t1 / hop_s))))
    return level[a:b]


def _rearticulated(a: TNote, b: TNote, level: np.ndarray | None) -> bool:
    """Whether ``b`` is its pitch sung again after ``a``: the level dips between them (a breath, a
    consonant) by :data:`REARTICULATION_DB` under the quieter of the two notes. basic-pitch runs
    a note on across a short gap (its onsets then mark the new one), and vibrato splits one note
    into touching pieces with no dip: the dip tells them apart."""
    if level is None:
        return False
    ref = min(float(np.median(_span_db(level, a.start, a.end))),
              float(np.median(_span_db(level, b.start, b.end))))
    around = _span_db(level, max(a.start, b.start - 0.15), min(b.end, b.start + 0.03))
    return ref - float(np.min(around)) >= REARTICULATION_DB


def _merge(line: list[TNote], level: np.ndarray | None, dropped: list[TNote] = ()) -> list[TNote]:
    """Join same-pitch neighbours of a monophonic line whose gap, less the time ``dropped``
    notes (blips) held in it, is under :data:`MERGE_GAP_S` — unless :func:`_rearticulated`."""
    out: list[TNote] = []
    for n in line:
        p = out[-1] if out else None
        if p is None or p.pitch != n.pitch:
            out.append(n)
            continue
        blips = sum(max(0.0, min(d.end, n.start) - max(d.start, p.end)) for d in dropped)
        if n.start - p.end - blips < MERGE_GAP_S and not _rearticulated(p, n, level):
            out[-1] = TNote(p.start, max(p.end, n.end), p.pitch, max(p.velocity, n.velocity))
        else:
            out.append(n)
    return out


def trim_to_voice(notes: list[TNote], level: np.ndarray) -> list[TNote]:
    """End each note where the voice stops: basic-pitch holds a note ~0.1 s into the breath
    after it; the note now ends after its last 10 ms whose level is within
    :data:`REARTICULATION_DB` of the note's median (never shorter than :data:`MIN_NOTE_S`)."""
    hop_s = LEVEL_HOP / MODEL_SR
    out = []
    for n in notes:
        db = _span_db(level, n.start, n.end)
        loud = np.nonzero(db >= float(np.median(db)) - REARTICULATION_DB)[0]
        first = max(0, min(len(level) - 1, int(n.start / hop_s)))
        end = (first + int(loud[-1]) + 1) * hop_s if len(loud) else n.end
        out.append(n._replace(end=min(n.end, max(end, n.start + MIN_NOTE_S))))
    return out


def with_sung_velocity(notes: list[TNote], level: np.ndarray) -> list[TNote]:
    """Velocities from how loud each note was sung: its median level against the loudest note's,
    0 dB → 112, each 3 dB softer 9 less (−24 dB → 40)."""
    if not notes:
        return []
    db = [float(np.median(_span_db(level, n.start, n.end))) for n in notes]
    top = max(db)
    return [n._replace(velocity=int(np.clip(round(112 + 3.0 * (d - top)), 1, 127))) for n, d in zip(notes, db)]


def transcribe(audio: np.ndarray, sr: int, name: str = "the take") -> list[TNote]:
    """The sung line in ``audio`` ((frames,) or (frames, channels) at ``sr`` Hz) as notes, one at a
    time. Raises :class:`TranscribeError` for audio that holds no tune. CLI or a worker thread."""
    if not isinstance(sr, (int, np.integer)) or sr <= 0:
        raise TranscribeError("not_audio", f"bad sample rate {sr!r}")
    x = to_model_rate(audio, int(sr))
    if len(x) == 0:
        raise TranscribeError("not_audio", f"{name} holds no audio (0 samples)")
    if len(x) > MAX_SECONDS * MODEL_SR:
        raise TranscribeError("too_long", f"{name} is {len(x) / MODEL_SR:.0f} s long; "
                                          f"a take may be {MAX_SECONDS:.0f} s at most")
    peak = float(np.max(np.abs(x)))
    level = level_db(x)
    notes = clean_sung_line(raw_notes(x), level) if peak >= SILENT_PEAK else []
    if not notes:
        raise TranscribeError("no_notes", f"no notes heard in {name}: is it silent or noise?")
    return with_sung_velocity(trim_to_voice(notes, level), level)


def read_audio(path) -> tuple[np.ndarray, int]:
    """(float32 samples (frames, channels), rate) of an audio file soundfile reads (WAV, FLAC,
    OGG/Vorbis/Opus, MP3, AIFF …); anything else is a ``not_audio`` :class:`TranscribeError`."""
    import os

    import soundfile as sf

    if not os.path.exists(path):
        raise TranscribeError("not_audio", f"{path}: no such file")
    if os.path.isdir(path):
        raise TranscribeError("not_audio", f"{path} is a directory, not an audio file")
    try:
        info = sf.info(str(path))
        if info.frames > MAX_SECONDS * info.samplerate:
            raise TranscribeError("too_long", f"{path} is {info.frames / info.samplerate:.0f} s long; "
                                              f"a take may be {MAX_SECONDS:.0f} s at most")
        audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, OSError) as e:
        why = getattr(e, "error_string", None) or str(e)
        raise TranscribeError("not_audio", f"{path} is not an audio file this can read "
                                           f"(WAV, FLAC, OGG, MP3, AIFF): {why}") from None
    return audio, int(sr)


def transcribe_file(path) -> list[TNote]:
    """:func:`transcribe` of an audio file. CLI or a worker thread."""
    audio, sr = read_audio(path)
    return transcribe(audio, sr, name=str(path))


def note_name(pitch: int) -> str:
    """``60`` → ``"C4"``."""
    return ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"][pitch % 12] + str(pitch // 12 - 1)


def write_theme_midi(notes: list[TNote], path, bpm: float = 120.0) -> None:
    """The notes as a one-track Standard MIDI File (times kept in seconds at ``bpm``)."""
    import mido

    from engine.midifile import TICKS_PER_BEAT

    mid = mido.MidiFile(type=0, ticks_per_beat=TICKS_PER_BEAT)
    track = mido.MidiTrack()
    mid.tracks.append(track)
    track.append(mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(bpm), time=0))
    ticks = TICKS_PER_BEAT * bpm / 60.0
    events = []
    for n in notes:
        t0 = int(round(n.start * ticks))
        t1 = max(t0 + 1, int(round(n.end * ticks)))
        events.append((t0, 1, mido.Message("note_on", note=n.pitch, velocity=n.velocity)))
        events.append((t1, 0, mido.Message("note_off", note=n.pitch, velocity=0)))
    now = 0
    for t, _, msg in sorted(events, key=lambda e: (e[0], e[1])):
        track.append(msg.copy(time=t - now))
        now = t
    track.append(mido.MetaMessage("end_of_track", time=0))
    mid.save(str(path))


def record_input(seconds: float, sample_rate: int = 22050, device: int | None = None) -> np.ndarray:
    """``seconds`` of mono audio from the sound card's input (PortAudio through pyaudio; with
    JACK, PortAudio's JACK host API), as float32. Raises :class:`TranscribeError` (``no_input``)
    with one line when there is no input to record from. CLI."""
    try:
        import pyaudio
    except ImportError:
        raise TranscribeError("no_input", "pyaudio is not installed (pip install 'wavebridge[audio]')") from None
    pa = pyaudio.PyAudio()
    try:
        frames = int(round(seconds * sample_rate))
        stream = pa.open(format=pyaudio.paFloat32, channels=1, rate=sample_rate, input=True,
                         input_device_index=device, frames_per_buffer=1024)
        chunks, got = [], 0
        while got < frames:
            n = min(1024, frames - got)
            chunks.append(np.frombuffer(stream.read(n, exception_on_overflow=False), dtype=np.float32))
            got += n
        stream.stop_stream()
        stream.close()
    except OSError as e:
        raise TranscribeError("no_input", f"no audio input to record from ({e})") from None
    finally:
        pa.terminate()
    return np.concatenate(chunks) if chunks else np.zeros(0, np.float32)


def theme_file_bytes(notes: list[TNote], bpm: float) -> bytes:
    """The notes as a Standard MIDI File in memory, a beat being ``60 / bpm`` s of the take (what
    ``/wb/theme SLOT <blob>`` takes)."""
    import io
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".mid")
    os.close(fd)
    try:
        write_theme_midi(notes, path, bpm=bpm)
        with open(path, "rb") as f:
            return io.BytesIO(f.read()).getvalue()
    finally:
        os.unlink(path)


def main_theme_from_audio(args) -> int:
    """``wavebridge theme --from-audio TAKE | --from-input SECONDS [--out theme.mid] [--send SLOT]``:
    print the sung line's notes, write them as MIDI, and give them to a running daemon's slot
    as its tune. Exit 0, 2 with one line on stderr for a take that gives no tune, 1 when the
    file cannot be written or the daemon is not there."""
    import sys

    try:
        if getattr(args, "from_input", None):
            print(f"wavebridge theme: recording {args.from_input:g} s from the audio input — sing …", file=sys.stderr)
            notes = transcribe(record_input(float(args.from_input), device=getattr(args, "device", None)), 22050,
                               name="the input")
        else:
            notes = transcribe_file(args.from_audio)
    except TranscribeError as e:
        print(f"wavebridge theme: {e.message}", file=sys.stderr)
        return 2
    for n in notes:
        print(f"{n.start:7.3f} {n.end:7.3f}  {note_name(n.pitch):<4} {n.pitch:3d}  vel {n.velocity}")
    out = getattr(args, "out", None)
    if out:
        try:
            write_theme_midi(notes, out)
        except OSError as e:
            print(f"wavebridge theme: cannot write {out}: {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"{len(notes)} notes → {out}")
    slot = getattr(args, "send", None)
    if slot is not None:
        from bridge.control.osc import OscClient

        bpm = float(getattr(args, "bpm", None) or 120.0)
        c = OscClient(getattr(args, "host", "127.0.0.1"), int(getattr(args, "port", 9137)), timeout=1.0)
        try:
            c.send("/wb/theme", int(slot), theme_file_bytes(notes, bpm))
            err = c.wait_for("/wb/error", 0.5)
        finally:
            c.close()
        if err is not None:
            print(f"wavebridge theme: the daemon refused the tune: {err[2]}", file=sys.stderr)
            return 1
        print(f"sent to slot {slot} at {bpm:g} bpm")
    return 0
