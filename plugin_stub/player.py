"""Players: read a slot like a host does — into a WAV file, or onto a sound card.

:class:`PacedRecorder` calls the reader's ``[audio]`` path once per block on a fixed real-time
schedule (block/rate seconds apart, absolute deadlines so it does not drift), the way a host's
audio callback would, and keeps per-block statistics (short blocks while playing = underruns).
The sound-card player uses PortAudio's callback mode through pyaudio: on Debian's PortAudio
19.6, closing a blocking-mode stream on JACK aborts the process.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from plugin_stub.protocol import RingError

from plugin_stub.reader import RingReader


def attach_when_ready(slot, timeout: float = 10.0, **kw) -> RingReader:
    """Attach to a slot's ring, waiting up to ``timeout`` s for the daemon to create it. Not ``[audio]``."""
    end = time.monotonic() + timeout
    while True:
        try:
            return RingReader(slot, **kw).attach()
        except RingError as e:
            if e.code not in ("ring_missing", "ring_magic") or time.monotonic() > end:
                raise
            time.sleep(0.05)


def write_wav(path: str, audio: np.ndarray, rate: int, fmt: str = "pcm16") -> None:
    """Write ``(frames, channels)`` float audio as 16-bit PCM or 32-bit float WAV (soundfile)."""
    import soundfile

    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim == 1:
        audio = audio[:, None]
    if fmt != "float":
        audio = np.clip(audio, -1.0, 1.0)
    soundfile.write(path, audio, int(rate), subtype="FLOAT" if fmt == "float" else "PCM_16", format="WAV")


def read_wav(path: str) -> tuple[np.ndarray, int]:
    """Read a WAV (any subtype libsndfile reads) → ``((frames, channels)`` float32, rate) (soundfile)."""
    import soundfile

    try:
        audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as e:
        raise ValueError(f"{path} is not a readable WAV file: {e}") from None
    return audio, int(rate)


def host_ticks(period: float, stop: threading.Event, count: int | None = None, late_after: int = 4):
    """Yield ``(k, late)`` on a fixed real-time grid ``period`` seconds apart, like a host's
    audio callback: absolute deadlines (no drift); ``late`` when a tick comes over ``late_after``
    periods behind its deadline."""
    t0 = time.monotonic()
    k = 0
    while not stop.is_set() and (count is None or k < count):
        due = t0 + k * period
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        yield k, now - due > late_after * period
        k += 1


class PacedRecorder:
    """Read ``seconds`` of a slot at ``block`` frames per call, in real time, into memory."""

    def __init__(self, reader: RingReader, seconds: float, block: int = 128):
        self.reader = reader
        self.block = int(block)
        self.rate = reader.sample_rate
        self.total = int(seconds * self.rate)
        nblocks = -(-self.total // self.block)
        self.audio = np.zeros((nblocks * self.block, reader.channels), dtype=np.float32)
        self.real = np.zeros(nblocks, dtype=np.int32)      # real frames per block
        self.playing = np.zeros(nblocks, dtype=bool)       # writer's playing flag at the block
        self.read_index = np.zeros(nblocks, dtype=np.int64)  # read_index before the block
        self.times = np.zeros(nblocks, dtype=np.float64)     # monotonic time of the block
        self.late_blocks = 0
        self.blocks_done = 0
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def run(self, on_block=None) -> "PacedRecorder":
        """The host loop. ``on_block(k, recorder)`` runs after each block (keep it cheap)."""
        r = self.reader
        for k, late in host_ticks(self.block / self.rate, self._stop, len(self.real)):
            self.late_blocks += late
            out = self.audio[k * self.block:(k + 1) * self.block]
            self.read_index[k] = r.read_index
            self.playing[k] = r.playing
            self.times[k] = time.monotonic()
            self.real[k] = r.read_into(out)
            self.blocks_done = k + 1
            if on_block is not None:
                on_block(k, self)
        return self

    @property
    def captured(self) -> np.ndarray:
        return self.audio[:min(self.total, self.blocks_done * self.block)]

    def short_blocks_while_playing(self) -> int:
        n = self.blocks_done
        return int(np.sum((self.real[:n] < self.block) & self.playing[:n]))


def play_soundcard(reader: RingReader, seconds: float = 0.0, block: int = 256, device=None,
                   stop: threading.Event | None = None) -> dict:
    """Play a slot on the default (or given) output through PortAudio callback mode.

    The stream runs at the ring's rate; the device's default rate is published as the reader's
    host rate so the daemon resamples the slot's next job to it. Returns counters.
    """
    try:
        import pyaudio
    except ImportError as e:  # the `audio` extra
        raise RuntimeError("pyaudio is not installed (pip install 'wavebridge[audio]')") from e
    pa = pyaudio.PyAudio()
    ch = reader.channels
    buf = np.zeros((max(block, 8192), ch), dtype=np.float32)
    stats = {"callbacks": 0, "frames": 0, "real": 0}
    try:
        info = pa.get_device_info_by_index(device) if device is not None else pa.get_default_output_device_info()
    except (IOError, OSError) as e:
        pa.terminate()
        raise RuntimeError(f"no audio output device: {e}") from None
    host_rate = int(info.get("defaultSampleRate") or reader.sample_rate)
    reader.set_host_rate(host_rate)           # the daemon makes this slot's next job at this rate
    if reader.sample_rate != host_rate:
        import logging

        logging.getLogger("wavebridge.player").warning(
            "slot holds %d Hz audio, the device runs at %d Hz: the current job plays off-speed, the "
            "next one is made at the device's rate", reader.sample_rate, host_rate)

    def callback(_in, frames, _info, _status):
        # [audio]: PortAudio's callback thread — copy, zero-fill, never wait
        out = buf[:frames]
        stats["real"] += reader.read_into(out)
        stats["callbacks"] += 1
        stats["frames"] += frames
        return out.tobytes(), pyaudio.paContinue

    stream = None
    try:
        stream = pa.open(format=pyaudio.paFloat32, channels=ch, rate=host_rate, output=True,
                         frames_per_buffer=block, stream_callback=callback, output_device_index=info["index"])
        stream.start_stream()
        end = time.monotonic() + seconds if seconds > 0 else None
        while stream.is_active() and (end is None or time.monotonic() < end):
            if stop is not None and stop.is_set():
                break
            if not reader.check():             # the segment shrank: silence, not a SIGBUS
                raise RuntimeError(f"slot {reader.slot}: {reader.broken}")
            time.sleep(0.02)
    finally:
        if stream is not None:
            stream.stop_stream()
            stream.close()
        pa.terminate()
    return stats
