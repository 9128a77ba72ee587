"""Web audio encoders (PyAV): a growing file per stream, or bare Opus packets.

:class:`Encoder` turns float32 frames into the bytes of one growing file — Ogg/Opus, MP3, WAV
(streaming header: unknown length) or raw s16le PCM — with PyAV's muxers writing into memory;
each :meth:`Encoder.push` returns what the muxer flushed so far, so the pieces concatenated are
one valid file. The Ogg muxer's page duration is set to 20 ms (its default holds ~1 s back).
One stream uses its encoder from one task at a time, on a worker thread (``[control]`` worker:
never the engine thread, never inference); each encoder holds a lock around its codec, because a
cancelled task's ``close`` runs on the loop while its last ``push`` may still be encoding on the
worker (freeing FFmpeg's context under it crashed the daemon at SIGTERM mid-stream).
"""
from __future__ import annotations

import threading
import time

import av
import numpy as np

#: format → (muxer, codec, content type, file extension)
FORMATS = {
    "opus": ("ogg", "libopus", "audio/ogg", "opus"),
    "mp3": ("mp3", "libmp3lame", "audio/mpeg", "mp3"),
    "wav": ("wav", "pcm_s16le", "audio/wav", "wav"),
    "pcm_s16le": ("s16le", "pcm_s16le", "audio/L16", "pcm"),
}
OGG_PAGE_US = 20000           # Ogg page duration: flush a page every 20 ms of audio


class _Sink:
    """A write-only file object the muxer writes into (non-seekable: streaming headers)."""

    def __init__(self):
        self.buf = bytearray()

    def write(self, b) -> int:
        self.buf += b
        return len(b)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        out = bytes(self.buf)
        self.buf.clear()
        return out


class Encoder:
    """One stream's encoder: ``push(frames) -> bytes``, ``finish() -> bytes``. ``[control]`` worker."""

    def __init__(self, fmt: str, sample_rate: int = 48000, channels: int = 2, bitrate: int | None = None):
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
        self.format = fmt
        muxer, codec, self.content_type, self.ext = FORMATS[fmt]
        self.rate, self.channels = int(sample_rate), int(channels)
        self._sink = _Sink()
        opts = {"page_duration": str(OGG_PAGE_US)} if muxer == "ogg" else {}
        self._c = av.open(self._sink, mode="w", format=muxer, options=opts)
        layout = "stereo" if self.channels == 2 else "mono"
        self._st = self._c.add_stream(codec, rate=self.rate, layout=layout)
        if bitrate:
            self._st.bit_rate = int(bitrate)
        elif fmt == "opus":
            self._st.bit_rate = 128000
        elif fmt == "mp3":
            self._st.bit_rate = 192000
        self.frames_in = 0
        self.bytes_out = 0
        self.encode_s = 0.0
        self._done = False
        self._lock = threading.Lock()

    def push(self, frames: np.ndarray) -> bytes:
        """Encode ``frames`` (n × channels float32); returns the bytes the muxer wrote meanwhile. ``[control]`` worker"""
        with self._lock:
            if self._done or frames.shape[0] == 0:
                return b""
            return self._push(frames)

    def _push(self, frames: np.ndarray) -> bytes:
        t0 = time.perf_counter()
        fr = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(frames, dtype=np.float32).reshape(1, -1), format="flt",
            layout="stereo" if self.channels == 2 else "mono")
        fr.sample_rate = self.rate
        fr.pts = self.frames_in
        self.frames_in += frames.shape[0]
        for pkt in self._st.encode(fr):
            self._c.mux(pkt)
        out = self._sink.take()
        self.bytes_out += len(out)
        self.encode_s += time.perf_counter() - t0
        return out

    def finish(self) -> bytes:
        """Flush the encoder and close the container; returns the last bytes (trailer). ``[control]`` worker"""
        with self._lock:
            if self._done:
                return b""
            self._done = True
            return self._finish()

    def _finish(self) -> bytes:
        t0 = time.perf_counter()
        for pkt in self._st.encode(None):
            self._c.mux(pkt)
        self._c.close()
        out = self._sink.take()
        self.bytes_out += len(out)
        self.encode_s += time.perf_counter() - t0
        return out

    def close(self) -> None:
        """Drop the encoder without its trailer (a stream that was cut off); waits for a push in
        progress on a worker. ``[control]``"""
        with self._lock:
            if not self._done:
                self._done = True
                try:
                    self._c.close()
                except Exception:  # noqa: BLE001 — nothing left to deliver
                    pass


class PacketEncoder:
    """Opus packets without a container, 20 ms each: what WebCodecs' ``AudioDecoder`` takes as one
    ``EncodedAudioChunk``. ``push`` and ``finish`` return a list of packets. ``[control]`` worker"""

    format = "opus_packets"
    content_type = "audio/opus"

    def __init__(self, sample_rate: int = 48000, channels: int = 2, bitrate: int = 128000):
        self.rate, self.channels = int(sample_rate), int(channels)
        self._layout = "stereo" if self.channels == 2 else "mono"
        cc = av.CodecContext.create("libopus", "w")
        cc.sample_rate = self.rate
        cc.layout = self._layout
        cc.format = "flt"
        cc.bit_rate = int(bitrate)
        self._cc = cc
        self.frames_in = 0
        self.bytes_out = 0
        self.encode_s = 0.0
        self._done = False
        self._lock = threading.Lock()

    def push(self, frames: np.ndarray) -> list[bytes]:
        """Encode ``frames``; returns the whole packets ready so far. ``[control]`` worker"""
        with self._lock:
            if self._done or frames.shape[0] == 0:
                return []
            return self._push(frames)

    def _push(self, frames: np.ndarray) -> list[bytes]:
        t0 = time.perf_counter()
        fr = av.AudioFrame.from_ndarray(np.ascontiguousarray(frames, dtype=np.float32).reshape(1, -1),
                                              format="flt", layout=self._layout)
        fr.sample_rate = self.rate
        fr.pts = self.frames_in
        self.frames_in += frames.shape[0]
        out = [bytes(p) for p in self._cc.encode(fr)]
        self.bytes_out += sum(map(len, out))
        self.encode_s += time.perf_counter() - t0
        return out

    def finish(self) -> list[bytes]:
        """The last packets (the final one padded to 20 ms). ``[control]`` worker"""
        with self._lock:
            if self._done:
                return []
            self._done = True
            out = [bytes(p) for p in self._cc.encode(None)]
        self.bytes_out += sum(map(len, out))
        return out

    def close(self) -> None:
        """Nothing to release beyond the codec context; waits for a push in progress. ``[control]``"""
        with self._lock:
            self._done = True
