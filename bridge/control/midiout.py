"""MIDI out: the synth's notes as they reach the read head, on one virtual MIDI output.

``wavebridge serve --midi-out`` opens one virtual output port (``wavebridge out``) with mido +
python-rtmidi (the same backends as :mod:`bridge.control.midi`: ``MIDO_BACKEND``, or ALSA then JACK).
Slot *n* plays on MIDI channel *n* (1–16, as musicians count; slots above 16 are not sent). The
DAW can record the notes or play its own instruments with them.

Two halves:

- :meth:`MidiOutput.collect` runs on the ``[engine]`` thread, once per engine loop: for every
  slot with a job whose audio the reader is playing, it asks the backend for the notes starting
  between what it already scheduled and ``LOOKAHEAD_S`` past the read head
  (:meth:`engine.backend.Backend.notes_between`, stream frames from the stream's score and
  tempo map, so host tempo and bar lock apply), turns each note's frame into the monotonic time
  the reader will play it (ring frame − ``read_index``, at the ring's rate), and queues note-on
  and note-off. A job replaced or stopped gets "all notes off" on its channel.
- a sender thread sends each queued message at its time (no I/O on the engine thread).

Timing follows the ring's read head, not the host's output latency: a host that delays its
output by its buffer hears the audio that much after the note.
"""
from __future__ import annotations

import heapq
import logging
import os
import threading
import time

log = logging.getLogger("wavebridge.midiout")

DEFAULT_PORT_NAME = "wavebridge out"
JACK_BACKEND = "mido.backends.rtmidi/UNIX_JACK"
LOOKAHEAD_S = 0.15             # notes are queued this far ahead of the read head
MAX_QUEUE = 65536


class MidiOutput:
    """One virtual MIDI output carrying every slot's notes. ``[engine]`` + its sender thread."""

    def __init__(self, daemon, port_name: str = DEFAULT_PORT_NAME, backend: str | None = None):
        self.d = daemon
        self.port_name = port_name
        self.backend_name = backend or os.environ.get("MIDO_BACKEND") or None
        self.port = None
        self.api = ""
        self._heap: list = []
        self._seq = 0
        self._cv = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._done: dict[int, tuple[int, float]] = {}    # slot → (job, stream frame scheduled up to)
        self.sent = 0
        self.dropped = 0

    # ------------------------------------------------------------------ lifecycle [control]
    def open(self) -> "MidiOutput":
        """Open the virtual output; raises ``RuntimeError`` with every backend's reason."""
        import mido

        backends = ([mido.Backend(self.backend_name, load=True)] if self.backend_name else
                    [mido.Backend("mido.backends.rtmidi", load=True), mido.Backend(JACK_BACKEND, load=True)])
        errors = []
        for be in backends:
            try:
                try:
                    self.port = be.open_output(self.port_name, virtual=True, client_name=self.port_name)
                except TypeError:
                    self.port = be.open_output(self.port_name, virtual=True)
                self.api = f"{be.name}/{be.api or 'default'}"
                break
            except Exception as e:  # noqa: BLE001 — rtmidi raises its own SystemError family
                errors.append(f"{be.name}/{be.api or 'default'}: {str(e).splitlines()[0] if str(e) else e!r}")
        if self.port is None:
            raise RuntimeError("cannot open a virtual MIDI output (" + "; ".join(errors) + ")")
        self._thread = threading.Thread(target=self._send_loop, name="wavebridge-midi-out", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.port is not None:
            try:
                for ch in range(16):
                    self.port.send(_msg("control_change", channel=ch, control=123, value=0))
                self.port.close()
            except Exception:  # noqa: BLE001
                pass
            self.port = None

    # ------------------------------------------------------------------ scheduling [engine]
    def collect(self, hostlink) -> None:
        """Queue the notes that reach the read head in the next ``LOOKAHEAD_S``. ``[engine]``"""
        d = self.d
        backend = d.backend
        now = time.monotonic_ns()
        for number, slot in d.slots.items():
            if not isinstance(number, int) or not 1 <= number <= 16:
                continue
            channel = number - 1
            job = slot.job
            prev = self._done.get(number)
            origin = hostlink.start_at.get(number)
            if job is None or origin is None or origin[0] != job.job:
                if prev is not None and (job is None or prev[0] != job.job):
                    self._all_off(channel, now)
                    del self._done[number]
                continue
            if prev is not None and prev[0] != job.job:
                self._all_off(channel, now)
                prev = None
            ring = slot.ring
            ratio = backend.sample_rate / ring.sample_rate
            read = ring.read_index
            f_read = (read - origin[1]) * ratio               # stream frame at the read head
            f0 = max(0.0, f_read)
            if prev is not None:                              # where the last look-ahead ended, on
                f0 = prev[1] - (origin[1] - prev[2]) * ratio  # this origin (a re-timed job moves it)
            f1 = min(f_read + LOOKAHEAD_S * backend.sample_rate, backend.render_head(job.stream))
            if f1 <= f0:
                continue
            try:
                notes = backend.notes_between(job.stream, f0, f1)
            except Exception:  # noqa: BLE001 — MIDI never hurts the audio
                log.exception("slot %s: notes_between failed", number)
                notes = []
            self._done[number] = (job.job, f1, origin[1])
            for on, off, pitch, vel in notes:
                t_on = now + int(((origin[1] + on / ratio) - read) / ring.sample_rate * 1e9)
                t_off = now + int(((origin[1] + off / ratio) - read) / ring.sample_rate * 1e9)
                self._queue(t_on, _msg("note_on", channel=channel, note=int(pitch), velocity=int(vel)))
                self._queue(max(t_off, t_on + 1), _msg("note_off", channel=channel, note=int(pitch), velocity=0))

    def _all_off(self, channel: int, t_ns: int) -> None:
        with self._cv:
            self._heap = [e for e in self._heap if e[2].channel != channel]
            heapq.heapify(self._heap)
        self._queue(t_ns, _msg("control_change", channel=channel, control=123, value=0))

    def _queue(self, t_ns: int, msg) -> None:
        with self._cv:
            if len(self._heap) >= MAX_QUEUE:
                self.dropped += 1
                return
            self._seq += 1
            heapq.heappush(self._heap, (t_ns, self._seq, msg))
            self._cv.notify()

    # ------------------------------------------------------------------ sending (own thread)
    def _send_loop(self) -> None:
        while True:
            with self._cv:
                while not self._closed and (not self._heap or self._heap[0][0] > time.monotonic_ns()):
                    wait = None if not self._heap else (self._heap[0][0] - time.monotonic_ns()) / 1e9
                    self._cv.wait(timeout=wait if wait is None else max(0.0, min(wait, 0.05)))
                if self._closed:
                    return
                _, _, msg = heapq.heappop(self._heap)
            try:
                self.port.send(msg)
                self.sent += 1
            except Exception:  # noqa: BLE001 — a port gone away: count and carry on
                self.dropped += 1


def _msg(kind: str, **kw):
    import mido

    return mido.Message(kind, **kw)
