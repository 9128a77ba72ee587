"""The write pipeline: a chunk of a job's audio on its way into the slot's ring. ``[engine]``

Per chunk (:meth:`WritePipeline.write`): device → resample → shape (fade-in, end fade) →
[gain → crossfade → limit → envelope → store] → publish. The bracket is one
:func:`dsp.stitch_and_publish` call: NumPy on the host path, one CuPy kernel writing into the
registered ring on the device path (chunks that live on the GPU stay there: the resampler and
the shaping run as CuPy too). The chunk is either appended at ``write_index`` or spliced over
not-yet-read audio (:func:`splice_into`); a stop's fade rescales what the ring holds
(:func:`fade_ring`). Both rewrite only from :func:`dsp.splice.splice_start` on — the read
head plus the guard.

:func:`splice_into` and :func:`fade_ring` work on a bare :class:`~bridge.core.ring.RingWriter`
(numbers and arrays in, no slot, no daemon); :class:`WritePipeline` is the engine's use of them,
with the slot's gain, envelope, resampler, crossfade material and CUDA registration.
Only the engine thread calls any of it.
"""
from __future__ import annotations

import logging
import math
from typing import NamedTuple

import numpy as np

from dsp import Resampler, array_module, fade, gpu, scale_ring, soft_limit, stitch_and_publish
from dsp.splice import guard_frames, splice_start
from engine.scheduler import Job

from bridge.core.slot import Slot
from bridge.core.slotstate import Envelope, FadeRing, Write

log = logging.getLogger("wavebridge")

#: run the write pipeline on the device when chunks are CuPy arrays and the ring is registered
DEVICE_PIPELINE = True


class Spliced(NamedTuple):
    """What :func:`splice_into` did."""

    start: int                # the splice frame: the crossfade starts here
    skip: int                 # frames of the new audio skipped (a re-timed continuation that landed late)
    store_s: float            # seconds from reading read_index to the publish (0.0 without a clock)


def splice_into(ring, new, xfade: int, guard: int, gain0: float = 1.0, gain1: float = 1.0, *, at=None,
                retimed: bool = False, material=None, prepare=None, clock_ns=None) -> Spliced:
    """Replace not-yet-read audio from ``read_index + guard`` on with ``new``, crossfading. ``[engine]``

    ``new`` is ``(n, channels)`` float32 (NumPy or CuPy). Its first ``xfade`` frames crossfade
    (equal power, then limited: one :func:`dsp.stitch_and_publish`) from what the reader would
    have heard there: the ring's frames, continued past ``write_index`` by ``material`` (the old
    stream's next frames, from ring frame ``write_index`` on) or silence. ``at``: a quantized
    change's exact frame, used when it lies in ``(start, write]``; ``retimed``: ``new`` is the
    same music from ``at`` on, so when the splice lands later it starts that much into ``new``.
    ``prepare(new, prev) -> (new, prev)`` runs just before the store (the daemon probes the
    mapping and picks host or device there). ``write_index`` is set to the new end, which may be
    lower than before; a splice the reader overtook meanwhile is counted in
    ``ring.splices_overtaken``.
    """
    xf = min(int(xfade), int(new.shape[0]))
    t0 = clock_ns() if clock_ns is not None else 0
    r = ring.read_index
    w = ring.write_index
    s = splice_start(r, w, guard)
    if at is not None and s < at <= w:
        s = int(at)
    skip = 0
    if at is not None and retimed and at < s and s - at < int(new.shape[0]) - xf:
        # a re-timed continuation is the same music from ``at`` on: when it lands late, it
        # starts that much into its audio, so its beats stay where the host expects them
        skip = s - at
        new = new[skip:]
    have = max(0, min(xf, w - s))
    prev = np.zeros((xf, ring.channels), dtype=np.float32)
    if have:
        prev[:have] = ring.load(s, have)
    if material is not None and have < xf:
        m0 = s + have - w
        part = material[m0:m0 + xf - have]
        prev[have:have + part.shape[0]] = part
    n = min(int(new.shape[0]), ring.capacity - (s - r))
    k = min(xf, n)
    pv = np.ascontiguousarray(prev[:k].T)
    if prepare is not None:
        new, pv = prepare(new, pv)
    stitch_and_publish(new[:n].T, ring.data, s, gain0, gain1, prev=pv, publish=ring.publish)
    store_s = (clock_ns() - t0) / 1e9 if clock_ns is not None else 0.0
    if ring.read_index > s:
        ring.splices_overtaken += 1
    return Spliced(s, skip, store_s)


def fade_ring(ring, old: Envelope | None, new: Envelope, at: int, device: bool = False) -> None:
    """Rescale ring frames ``[at, write_index)`` from envelope ``old`` (None: unfaded) to ``new``
    and end the stream at ``new``'s end. ``at`` is a splice start (:func:`dsp.splice.splice_start`):
    frames nearer the read head than the guard are never touched. ``device``: scale through the
    ring's CUDA registration (a kernel). A fade the reader overtook is counted. ``[engine]``"""
    w = ring.write_index
    end = min(w, new.end)
    if end > at:
        n = end - at
        g = old.rescale(new, at, n) if old is not None else new.gains(at, n)
        if device:                                  # a kernel through the mapped ring
            g = gpu.cupy().asarray(g)
        scale_ring(ring.data, at, g)
    if new.end < w:
        ring.publish(max(new.end, at))
    if ring.read_index > at:
        ring.splices_overtaken += 1


class WritePipeline:
    """The engine's writes into its slots' rings: chunks (append or splice), fades, tails and
    the job metadata in the ring header. ``[engine]``

    Reads the daemon's config, backend and scheduler; tells the host link where a job's first
    frame landed. Owns :attr:`store_s`, which widens every slot's guard.
    """

    def __init__(self, daemon, hostlink):
        self.daemon = daemon                     # bridge.core.daemon.Daemon
        self.hostlink = hostlink                 # bridge.core.hostlink.HostLink
        self.clock_ns = daemon.clock_ns
        self.store_s = 0.0                       # slowest read-index-to-publish of a splice (decaying)

    # ------------------------------------------------------------------ rules
    def guard(self, slot: Slot) -> int:
        """Splice/fade distance ahead of the read head: the ring's guard (≥ 2 host blocks, ≥ guard_ms)
        plus twice the slowest recent read-index-to-publish time of this writer, in frames."""
        ring = slot.ring
        return guard_frames(ring.sample_rate, ring.reader_block_frames, self.daemon.config.guard_ms, self.store_s)

    def xfade_frames(self, slot: Slot) -> int:
        """The slot's prompt-change crossfade in ring frames (its ``xfade_ms`` param, else the config's)."""
        ms = slot.xfade_ms if slot.xfade_ms is not None else self.daemon.config.xfade_ms
        return max(1, int(slot.ring.sample_rate * ms / 1000.0))

    def meta(self, slot: Slot, job: Job, **extra) -> None:
        """Publish the job's metadata in the ring header (``start_at``/``splice_at``: frame positions)."""
        meta = {"slot": slot.name, "job": job.job, "prompt": job.prompt, "backend": self.daemon.backend.name,
                "seed": job.seed, "seconds": job.seconds, "sample_rate": slot.ring.sample_rate,
                "started_unix": slot.job_started}
        meta.update(extra)
        slot.ring.set_meta(meta)
        if "start_at" in extra:
            self.hostlink.published(slot, job, extra["start_at"])

    def mapped(self, slot: Slot) -> None:
        """Before the pipeline stores into ``ring.data`` directly: ``fstat`` the segment (one that
        shrank is retired to private memory before anything touches it, and its CUDA registration
        is dropped). ``[engine]``"""
        ring = slot.ring
        ring.probe()
        if ring.fault is not None and slot.gpu_reg is not None:
            slot.unregister_gpu()

    # ------------------------------------------------------------------ chunks
    def write(self, slot: Slot, w: Write) -> None:
        """device → resample → shape → [gain → crossfade → limit → envelope → store] → publish. ``[engine]``"""
        ch = w.chunk
        self.mapped(slot)
        if slot.reanchor is not None:
            self._reanchor(slot, w)
        audio = self._frames(slot, ch.audio)
        audio = self._resample(slot, ch.job, audio, ch.last)
        audio = self._shape(slot, audio, w.fade_in, ch.last)
        g0, g1 = slot.gain, slot.gain_target
        slot.gain = g1
        if w.splice and self.daemon.config.splice:
            self._splice(slot, ch.job, audio, g0, g1, w.old, w.env)
        else:
            self._append(slot, ch.job, audio, g0, g1, w.env, ch.first)

    def _reanchor(self, slot: Slot, w: Write) -> None:
        """A playing job carries on at the ring's new rate (after a rate switch): tell the host link
        which ring frame its stream frame 0 now maps to, from where this chunk lands (its first
        frame is the stream's ``frames_out - len``), so the transport lock and MIDI out keep
        counting the job's own frames. ``[engine]``"""
        ch, job_id = w.chunk, slot.reanchor
        slot.reanchor = None
        job = ch.job
        if job.job != job_id or ch.first or (w.splice and self.daemon.config.splice):
            return
        ring = slot.ring
        at = max(ring.write_index, ring.read_index)
        f0 = job.frames_out - int(ch.audio.shape[0])
        self.hostlink.published(slot, job, at - int(round(f0 * ring.sample_rate / self.daemon.backend.sample_rate)))

    def _on_device(self, slot: Slot, audio) -> bool:
        return slot.gpu_reg is not None and array_module(audio) is not np

    def _frames(self, slot: Slot, audio):
        """``(n, channels)`` float32 of the ring's channel count; stays on the device on the CuPy path."""
        xp = array_module(audio)
        if xp is not np and (slot.gpu_reg is None or not DEVICE_PIPELINE):
            audio, xp = xp.asnumpy(audio), np
        if audio.ndim == 1:
            audio = audio[:, None]
        c = slot.ring.channels
        if audio.shape[1] != c:
            audio = xp.repeat(audio[:, :1], c, axis=1) if audio.shape[1] == 1 else audio[:, :c]
        return xp.ascontiguousarray(audio, dtype=np.float32)

    def _resample(self, slot: Slot, job: Job, audio, last: bool = False):
        """Backend rate → the ring's rate, with the job's own streaming resampler (CuPy kernel on the device)."""
        rate = slot.ring.sample_rate
        backend_rate = self.daemon.backend.sample_rate
        if rate == backend_rate:
            return audio
        rs = slot.resamplers.get(id(job))
        if rs is None or rs.out_rate != rate:
            rs = slot.resamplers[id(job)] = Resampler(backend_rate, rate, slot.ring.channels)
        return rs.push(audio, last=last)

    def _shape(self, slot: Slot, audio, fade_in: bool, last: bool):
        """A short fade-in when the stream starts from silence; a short fade-out at a job's end."""
        n = min(int(audio.shape[0]), int(slot.ring.sample_rate * self.daemon.config.end_fade_ms / 1000.0))
        if not n or not (fade_in or last):
            return audio
        audio = audio.copy()
        if fade_in:
            audio[:n] = fade(audio[:n], "in")
        if last:
            audio[-n:] = fade(audio[-n:], "out")
        return audio

    def _gains(self, slot: Slot, env: Envelope | None, at: int, n: int):
        """The envelope's gains for ring frames ``at…at+n`` where the writes happen (device or host)."""
        if env is None:
            return None
        g = env.gains(at, n)
        if slot.gpu_reg is not None and DEVICE_PIPELINE:
            return gpu.cupy().asarray(g)
        return g

    def _append(self, slot: Slot, job: Job, audio, g0: float, g1: float, env: Envelope | None, first: bool) -> None:
        ring = slot.ring
        r = ring.read_index
        w = max(ring.write_index, r)           # where append puts it (the reader may be ahead)
        n = int(audio.shape[0])
        if env is not None and env.end < w + n:
            n = max(0, env.end - w)            # nothing after the fade's end
        n = min(n, ring.capacity - (w - r))
        stitch_and_publish(audio[:n].T, ring.data, w, g0, g1, env=self._gains(slot, env, w, n), publish=ring.publish)
        if first:
            self.meta(slot, job, start_at=w)

    def _splice(self, slot: Slot, job: Job, new, g0: float, g1: float, old: Job | None,
                env: Envelope | None) -> None:
        """Replace not-yet-read audio from the read head on with ``new``, crossfading.

        The crossfade material — what the ring holds past the splice point, continued by the old
        job's next frames (generated first, through the old job's resampler, the gain, the limiter
        and the stop envelope when it was fading) — exists before the splice point is chosen;
        ``read_index`` is read just before the store (:func:`splice_into`), and the guard covers
        this writer's slowest recent store. ``[engine]``
        """
        ring = slot.ring
        xf = min(self.xfade_frames(slot), int(new.shape[0]))
        at = self.hostlink.splice_frame(job)   # a quantized change: its crossfade starts exactly there
        # 1. the old stream's continuation beyond the ring's end, as it would have been heard
        w = ring.write_index
        s0 = splice_start(ring.read_index, w, self.guard(slot))
        if at is not None and s0 < at <= w:
            s0 = at
        margin = int(ring.sample_rate * max(0.05, 3 * (self.daemon.scheduler.call_s or 0.0)))
        need = s0 + xf - w + margin
        material = None
        if need > margin and old is not None and not old.done:
            material = self._material(slot, old, env, w, need)
        # 2. place it: read_index re-read now

        def prepare(new, pv):
            self.mapped(slot)
            if array_module(new) is not np and slot.gpu_reg is None:   # the mapping was retired just now
                new = array_module(new).asnumpy(new)
            if self._on_device(slot, new):
                pv = array_module(new).asarray(pv)
            return new, pv

        done = splice_into(ring, new, xf, self.guard(slot), g0, g1, at=at, retimed=job.retimed,
                           material=material, prepare=prepare, clock_ns=self.clock_ns)
        self.store_s = max(0.98 * self.store_s, done.store_s)
        self.meta(slot, job, start_at=done.start - done.skip, splice_at=done.start)

    def _material(self, slot: Slot, old: Job, env: Envelope | None, at: int, frames: int):
        """``frames`` ring frames of ``old``'s continuation from ring frame ``at``, on the host,
        through the pipeline (resample, gain, limiter — a kernel on the device path —, envelope);
        None if the backend fails."""
        ring = slot.ring
        backend_rate = self.daemon.backend.sample_rate
        nb = int(math.ceil(frames * backend_rate / ring.sample_rate))
        if ring.sample_rate != backend_rate:
            nb += 512                                  # the resampler's look-ahead
        try:
            a = self.daemon.scheduler.extra(old, nb)
        except Exception:  # noqa: BLE001 — then the crossfade fades from what the ring holds
            log.exception("crossfade material for job %s failed", old.job)
            return None
        if a is None:
            return None
        a = self._resample(slot, old, self._frames(slot, a))
        if slot.gain != 1.0:
            a = a * np.float32(slot.gain)
        xp = array_module(a)
        if xp is not np:
            a = xp.asnumpy(gpu.soft_limit(xp.ascontiguousarray(a, dtype=np.float32)))
        else:
            a = soft_limit(np.ascontiguousarray(a, dtype=np.float32))
        if env is not None:
            a = a * env.gains(at, int(a.shape[0]))[:, None]
        return a

    # ------------------------------------------------------------------ fades
    def fade(self, slot: Slot, a: FadeRing) -> None:
        """A stop's (or a rate switch's) fade over what the ring holds (:func:`fade_ring`), then
        the ``stop_at``/``end_at`` metadata. ``[engine]``"""
        self.mapped(slot)
        fade_ring(slot.ring, a.old, a.new, a.at, device=slot.gpu_reg is not None and DEVICE_PIPELINE)
        if a.job is not None:
            self.meta(slot, a.job, stop_at=a.new.segments[-1][0], end_at=a.new.end)

    def tail(self, slot: Slot, frames: int) -> None:
        """The stream stops short: append its last ``frames`` (at most a quarter ring) mirrored in
        time and faded out, so it ends without a step. ``[engine]``"""
        ring = slot.ring
        w = max(ring.write_index, ring.read_index)
        k = min(frames, ring.capacity // 4)
        tail = ring.load(w - k, k)[::-1] * Envelope.fade_out(0, k).gains(0, k)[:, None]
        ring.append(np.ascontiguousarray(tail, dtype=np.float32))
