"""musicgen: MusicGen through transformers, streamed, batched over slots, from a local directory.

Owns the loaded model (text encoder, EnCodec, the decoder's weights inside a
:class:`~engine.musicgen.decode.DecodeLoop`) and every stream's host-side state: its generated
codes, its EnCodec window position, its seam stitcher and a FIFO of finished audio at the
output rate.

Pipeline of one stream::

    start(): prompt → T5 (once per job) → cross-attention K/V in the stream's slot
    generate(): decoder steps (delay pattern, CFG as batch, top-k / temperature, per-stream key)
                → codes of complete frames → EnCodec over a window [emitted − context, complete)
                → the window resampled to the output rate (on the device, batched)
                → its audio from ``emitted`` to ``lookahead`` frames before its end → Stitcher
                (linear crossfade of ``crossfade_frames`` with the previous window) → channels
                → FIFO → exactly the frames asked for

Endless streams re-prime when a slot's cache is full: the last ``reprime_s`` seconds of codes
become the new context (prefilled at positions 0…), and decoding continues. Re-priming happens at
a fixed position of each stream, so chunked output equals one-shot output.

Streams occupy slots ``0 … n−1``; when one ends, the last moves into its place, and a call for a
few streams in high slots first swaps them down, so a step runs a small prefix of the slots (one
CUDA graph per batch/context bucket on a GPU). A stream's tokens depend only on its prompt, seed,
parameters and step count — not on its slot, its batch or the chunk sizes asked for.

Threading: construction and :meth:`MusicgenBackend.warmup` run on ``[control]`` before the
daemon says it is ready; everything else on the ``[engine]`` thread. Nothing blocks on I/O after
construction (the weights and the tokenizer are read there).
"""
from __future__ import annotations

import json
import logging
import math
import os
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from dsp import Stitcher, array_module
from dsp.resample import design

from engine.backend import Backend, BackendError, OutOfMemory, Stream
from engine.musicgen.decode import DecodeLoop, DecoderWeights, ceil_div, plan_context, stream_key

log = logging.getLogger("wavebridge.musicgen")

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "spiece.model")
DTYPES = {"float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
          "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
          "float32": torch.float32, "fp32": torch.float32, "float": torch.float32}


# ---------------------------------------------------------------------------- small parts
class WindowResampler:
    """Rational resampling of whole decode windows on the model's device: ``dsp.resample``'s
    polyphase filter (the one its NumPy and CuPy engines run, within ``SOXR_TOLERANCE`` of soxr
    HQ) applied to a batch of windows at once. ``[engine]``

    A window of ``N`` input samples gives ``N · L / M`` output samples (``L/M`` = out/in in
    lowest terms), output ``m`` at input time ``m · M / L`` of the same window, with no delay (the
    filter looks ``ahead`` = ``J`` input samples ahead). A whole signal resampled as one window
    equals ``dsp.resample.resample(x, in, out, "numpy")``. Stateless: streams resample each
    EnCodec window and keep only its middle, so the edges, where the filter sees the window's
    zero padding, are never used except at a stream's true start.
    """

    CONV_MAX_M = 4              # conv1d computes M× the outputs needed: fine for 3/2, not for 441/320
    GATHER_BYTES = 64 << 20     # the gather path's working set per block

    def __init__(self, in_rate: int, out_rate: int, device: torch.device):
        self.L, self.M, J, H = design(int(in_rate), int(out_rate))
        self.J = J
        self.ahead = J
        self.device = device
        self._H = torch.tensor(H, dtype=torch.float64, device=device)      # (L, 2J), as designed
        self._Hc: torch.Tensor | None = None        # the conv1d weight, on the input's device
        self._H32: torch.Tensor | None = None       # the gather path's table, on the input's device
        self._plans: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def out_len(self, n: int) -> int:
        return n * self.L // self.M

    def _plan(self, n: int, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For a window of ``n`` inputs: each output's input frame ``k`` and phase ``p``, and the
        float32 phase table on ``device`` (taps are looked up per block, never stored per output)."""
        if self._H32 is None or self._H32.device != torch.device(device):
            self._H32 = self._H.to(device=device, dtype=torch.float32)
            self._plans.clear()
        plan = self._plans.get(n)
        if plan is None:
            if len(self._plans) >= 32:           # window lengths are few; never grow without bound
                self._plans.clear()
            t = torch.arange(self.out_len(n), dtype=torch.int64) * self.M
            plan = self._plans[n] = ((t // self.L).to(device), (t % self.L).to(device))
        return plan[0], plan[1], self._H32

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, C, N)`` → ``(B, C, N·L/M)`` float32 (``N·L`` must be a multiple of ``M``).

        Two ways to the same sums: with a small ``M`` (32 → 48 kHz: 3/2) one ``conv1d`` computes
        every phase at every input frame and keeps ``1/M`` of them; with a large one (32 →
        44.1 kHz: 441/320) only the outputs wanted are computed, by gathering each one's ``2J``
        inputs in blocks of bounded size.
        """
        B, C, N = x.shape
        if (N * self.L) % self.M:
            raise ValueError(f"{N} samples do not map to a whole number of output samples")
        xp = torch.nn.functional.pad(x.float().reshape(B * C, N), (self.J - 1, self.J))
        if self.M <= self.CONV_MAX_M:
            # conv1d correlates: z[p, i] = Σ_j H[p, j] · x[i − J + 1 + j], the polyphase sum as is.
            # On a GPU in float64: cuDNN runs float32 convolutions in TF32 by default (10-bit
            # mantissa), which would put the error near soxr's tolerance
            dt = torch.float64 if xp.is_cuda else torch.float32
            if self._Hc is None or self._Hc.device != xp.device or self._Hc.dtype != dt:
                self._Hc = self._H.to(device=xp.device, dtype=dt)[:, None, :]
            z = torch.nn.functional.conv1d(xp.to(dt)[:, None, :], self._Hc)                 # (B·C, L, N)
            t = torch.arange(self.out_len(N), dtype=torch.int64, device=xp.device) * self.M
            return z.reshape(B * C, self.L * N)[:, (t % self.L) * N + t // self.L].float().reshape(B, C, -1)
        k, p, H = self._plan(N, xp.device)
        windows = xp.unfold(1, 2 * self.J, 1)                  # (B·C, N, 2J): x[i − J + 1 + j], a view
        n_out = k.shape[0]
        step = max(1, self.GATHER_BYTES // (4 * 2 * self.J * (B * C + 1)))
        y = torch.empty((B * C, n_out), dtype=torch.float32, device=xp.device)
        for o in range(0, n_out, step):
            y[:, o:o + step] = torch.einsum("bnj,nj->bn", windows[:, k[o:o + step]], H[p[o:o + step]])
        return y.reshape(B, C, -1)


class _Fifo:
    """Finished audio at the output rate, taken in exact amounts."""

    def __init__(self, channels: int):
        self.channels = channels
        self.parts: deque[np.ndarray] = deque()
        self.size = 0

    def push(self, x: np.ndarray) -> None:
        if x.shape[0]:
            self.parts.append(x)
            self.size += x.shape[0]

    def take(self, n: int) -> np.ndarray:
        xp = array_module(self.parts[0]) if self.parts else np
        out = xp.empty((n, self.channels), dtype=np.float32)
        i = 0
        while i < n:
            p = self.parts.popleft()
            m = min(n - i, p.shape[0])
            out[i:i + m] = p[:m]
            if m < p.shape[0]:
                self.parts.appendleft(p[m:])
            i += m
        self.size -= n
        return out


class _CodeLog:
    """A stream's tokens by absolute sequence position (1, 2, …; position 0 is BOS).

    Codebook ``k`` at position ``p`` holds frame ``p − delay[k] − 1`` (the delay pattern); a
    frame is complete once every codebook has it. Old positions are trimmed from the left.
    """

    def __init__(self, delays: np.ndarray):
        self.delays = np.asarray(delays, dtype=np.int64)
        self.dmax = int(self.delays.max())
        self.buf = np.zeros((len(self.delays), 1024), dtype=np.int64)
        self.base = 1                      # absolute position of buf[:, 0]
        self.n = 0

    @property
    def steps(self) -> int:
        """Positions predicted so far (= steps taken; the last one is the next input)."""
        return self.base - 1 + self.n

    @property
    def frames(self) -> int:
        """Frames whose codes are complete."""
        return max(0, self.steps - self.dmax)

    def append(self, toks: np.ndarray) -> None:
        m = toks.shape[0]
        if self.n + m > self.buf.shape[1]:
            grown = np.zeros((self.buf.shape[0], max(2 * self.buf.shape[1], self.n + m)), dtype=np.int64)
            grown[:, :self.n] = self.buf[:, :self.n]
            self.buf = grown
        self.buf[:, self.n:self.n + m] = toks.T
        self.n += m

    def positions(self, a0: int, a1: int) -> np.ndarray:
        """Tokens at absolute positions ``[a0, a1)`` as (K, a1 − a0)."""
        assert self.base <= a0 <= a1 <= self.steps + 1, (a0, a1, self.base, self.steps)
        return self.buf[:, a0 - self.base:a1 - self.base]

    def codes(self, f0: int, f1: int) -> np.ndarray:
        """Codes of complete frames ``[f0, f1)`` as (K, f1 − f0)."""
        assert 0 <= f0 <= f1 <= self.frames, (f0, f1, self.frames)
        cols = np.arange(f0, f1)[None, :] + self.delays[:, None] + 1 - self.base
        assert cols.min(initial=0) >= 0, "codes were trimmed"
        return self.buf[np.arange(len(self.delays))[:, None], cols]

    def trim(self, keep_from: int) -> None:
        """Forget positions before ``keep_from`` (amortised: only when it frees a lot)."""
        d = min(keep_from - self.base, self.n)
        if d >= 4096 and d >= self.n // 2:
            self.buf[:, :self.n - d] = self.buf[:, d:self.n].copy()
            self.base += d
            self.n -= d


@dataclass
class _State:
    """One stream's host-side state (``Stream.state``)."""

    slot: int
    codes: _CodeLog
    stitcher: Stitcher
    fifo: _Fifo
    emitted: int = 0            # frames whose audio has left the stitcher
    shift: int = 0              # absolute position held at device position 0 (re-priming)
    reprimes: int = 0
    ended: bool = False


@contextmanager
def _as_backend_errors(what: str):
    """Map a failure inside the block to the backend contract: a CUDA OOM → ``OutOfMemory``,
    anything else → ``BackendError`` naming ``what``."""
    try:
        yield
    except torch.cuda.OutOfMemoryError as e:
        raise OutOfMemory(f"{what}: {e}") from None
    except BackendError:
        raise
    except Exception as e:  # noqa: BLE001 — the daemon must get one of the contract's errors
        raise BackendError(f"{what} failed: {type(e).__name__}: {e}") from e


@contextmanager
def _quiet_transformers():
    """Silence transformers' loading chatter (progress bars, config warnings) for one block."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()


def check_model_dir(model) -> Path:
    """The model directory, or ``BackendError`` naming what is missing or wrong. ``[control]``"""
    if not model:
        raise BackendError("musicgen needs model=DIR, a local MusicGen directory (config.json, weights, tokenizer)")
    p = Path(model).expanduser()
    if not p.exists():
        raise BackendError(f"musicgen model directory {str(p)!r} does not exist")
    if not p.is_dir():
        raise BackendError(f"musicgen model path {str(p)!r} is not a directory")
    cfg_path = p / "config.json"
    if not cfg_path.is_file():
        raise BackendError(f"musicgen model directory {str(p)!r} has no config.json")
    try:
        cfg = json.loads(cfg_path.read_text())
    except (OSError, ValueError) as e:
        raise BackendError(f"{cfg_path} is not valid JSON: {e}") from None
    mt = cfg.get("model_type") if isinstance(cfg, dict) else None
    if mt != "musicgen":
        raise BackendError(f"{cfg_path} describes model_type {mt!r}; this backend loads 'musicgen' "
                           "(text-conditioned MusicGen; musicgen_melody is not supported)")
    if not any((p / f).is_file() for f in WEIGHT_FILES):
        raise BackendError(f"musicgen model directory {str(p)!r} has no weights (expected one of "
                           f"{', '.join(WEIGHT_FILES)})")
    if not any((p / f).is_file() for f in TOKENIZER_FILES):
        raise BackendError(f"musicgen model directory {str(p)!r} has no tokenizer (expected "
                           f"{' or '.join(TOKENIZER_FILES)}, e.g. saved with the processor)")
    return p


def _device_audio_module(torch_device: torch.device, want: bool | None):
    """CuPy, when chunks should stay on the GPU (CUDA model, CuPy with a device); else None."""
    if torch_device.type != "cuda" or want is False:
        return None
    try:
        import cupy

        with cupy.cuda.Device(torch_device.index or 0):
            cupy.zeros(1, dtype=cupy.float32).sum()
        return cupy
    except Exception as e:  # noqa: BLE001 — CuPy missing or unusable: host audio
        if want:
            raise BackendError(f"device_audio needs CuPy with a working device: {e}") from None
        log.warning("CuPy unavailable (%s): musicgen hands audio back on the host", e)
        return None


def _resolve_device(device, dtype) -> tuple[torch.device, torch.dtype]:
    if device in (None, "", "auto"):
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError) as e:
            raise BackendError(f"unknown device {device!r}: {e}") from None
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise BackendError(f"device {device!r} asked for, but torch sees no CUDA device")
        if dev.type not in ("cuda", "cpu"):
            raise BackendError(f"device {device!r} is not supported (cpu or cuda)")
    if dtype in (None, "", "auto"):
        dt = torch.float16 if dev.type == "cuda" else torch.float32
    elif isinstance(dtype, torch.dtype):
        dt = dtype
    else:
        try:
            dt = DTYPES[str(dtype).lower().replace("torch.", "")]
        except KeyError:
            raise BackendError(f"unknown dtype {dtype!r}; choose one of {', '.join(sorted(DTYPES))}") from None
    if dev.type == "cpu" and dt == torch.float16:
        raise BackendError("float16 on the CPU is not supported; use float32 or bfloat16")
    return dev, dt


def _memory_budget(dev: torch.device, override_gb: float | None) -> int:
    """Bytes the self-attention cache may take."""
    if override_gb is not None:
        return int(override_gb * 2**30)
    if dev.type == "cuda":
        free, _total = torch.cuda.mem_get_info(dev)
        return int(max(0, free - 2 * 2**30) * 0.85)        # leave room for EnCodec, graphs, T5
    avail = 8 * 2**30
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    return int(min(avail * 0.25, 8 * 2**30))


# ---------------------------------------------------------------------------- the backend
def cpu_threads(requested: int | None = None, environ=None, cores: int | None = None) -> int:
    """Torch CPU threads for the model: ``requested`` if given, else ``OMP_NUM_THREADS`` if set,
    else every core this process may run on but one, which is left to the DAW's audio thread
    (a plugin reading the ring in real time) and the daemon's loop. On 2 cores a second intra-op
    thread only spins between the small ops of a streaming step and takes the reader's core
    (measured: ``scripts/measure_musicgen_underrun.py``, docs/BENCHMARKS.md). ``[control]`` at start"""
    if requested is not None:
        if int(requested) < 1:
            raise BackendError(f"threads must be at least 1, not {requested}")
        return int(requested)
    env = os.environ if environ is None else environ
    omp = str(env.get("OMP_NUM_THREADS", "")).strip()
    if omp.isdigit() and int(omp) > 0:
        return int(omp)
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
    return max(1, int(cores) - 1)


class MusicgenBackend(Backend):
    """MusicGen from a local directory, with its own streaming, batched decode loop."""

    name = "musicgen"
    channels = 2
    batches_streams = True      # one decoder step for the whole batch
    device = "cpu"              # where generate's output lives: "cuda" when it hands back CuPy arrays
    params = {
        "temperature": (0.0, 4.0, 1.0),     # 0 = greedy
        "guidance": (0.0, 15.0, 3.0),       # classifier-free guidance scale; 1 = none
        "top_k": (0.0, 2048.0, 250.0),      # 0 = whole vocabulary
    }

    def __init__(self, model: str | None = None, device: str | None = None, dtype: str | None = None,
                 max_batch: int = 64, sample_rate: int | None = None, *, channels: int = 2,
                 context_s: float = 20.0, reprime_s: float = 10.0, max_text_tokens: int = 64,
                 decode_context: int = 16, decode_lookahead: int = 4, crossfade_frames: int = 2,
                 round_steps: int = 64, cuda_graphs: bool | None = None, bucketed: bool | None = None,
                 kv_budget_gb: float | None = None, device_audio: bool | None = None, threads: int | None = None):
        """Load and allocate (reads the directory; the only I/O). ``[control]`` at start.

        ``model`` is a local MusicGen directory (``save_pretrained`` layout with a tokenizer);
        ``device``/``dtype`` default to CUDA + float16 when available, else CPU + float32;
        ``max_batch`` streams share the cache (fewer if the memory budget says so — read
        ``max_batch`` back); ``sample_rate`` is the output rate (default 48000). Tuning:
        ``context_s`` cache length (MusicGen trained on 30 s; shorter keeps big batches fast),
        ``reprime_s`` context kept when an endless stream's cache is full, ``max_text_tokens``,
        ``decode_context`` / ``decode_lookahead`` EnCodec frames decoded either side of new audio,
        ``crossfade_frames`` seam length, ``round_steps`` steps between host syncs,
        ``cuda_graphs`` / ``bucketed`` (default: on with CUDA), ``kv_budget_gb`` cache budget,
        ``device_audio``: hand chunks back as CuPy arrays that never leave the GPU (default: on
        with CUDA when CuPy works), so the daemon stitches them into the ring with its kernels.
        ``threads``: torch's CPU threads (default: :func:`cpu_threads` — one core is left to the
        DAW's audio and the daemon's loop).
        """
        path = check_model_dir(model)
        self.model_dir = str(path)
        self.torch_device, self.dtype = _resolve_device(device, dtype)
        self.threads = cpu_threads(threads) if self.torch_device.type == "cpu" else None
        if self.threads is not None:
            torch.set_num_threads(self.threads)
        self._cupy = _device_audio_module(self.torch_device, device_audio)
        self.device = "cuda" if self._cupy is not None else "cpu"   # where generate's output lives
        self.channels = int(channels)
        if self.channels not in (1, 2):
            raise BackendError(f"channels must be 1 or 2, not {channels}")
        with _as_backend_errors(f"setting up MusicGen from {self.model_dir}"):
            self._load(path)
            self._configure(max_batch, sample_rate, context_s, reprime_s, max_text_tokens, decode_context,
                            decode_lookahead, crossfade_frames, round_steps, cuda_graphs, bucketed,
                            kv_budget_gb)
        self._slots: list[Stream] = []

    # ---------------------------------------------------------------- loading
    def _load(self, path: Path) -> None:
        from transformers import AutoTokenizer, MusicgenForConditionalGeneration

        with _quiet_transformers():
            try:
                self._tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            except Exception as e:  # noqa: BLE001 — any failure here is "the tokenizer is bad"
                raise BackendError(f"could not load the tokenizer from {path}: {type(e).__name__}: {e}") from None
            try:
                # load straight in the compute dtype (half the host memory of float32 on a GPU)
                model, info = MusicgenForConditionalGeneration.from_pretrained(
                    str(path), local_files_only=True, dtype=self.dtype, output_loading_info=True)
            except torch.cuda.OutOfMemoryError:
                raise
            except Exception as e:  # noqa: BLE001
                raise BackendError(f"could not load MusicGen weights from {path}: {type(e).__name__}: {e}") from None
        missing = [k for k in info.get("missing_keys", []) if "embed_positions" not in k]
        if missing:
            raise BackendError(f"MusicGen weights in {path} lack {len(missing)} tensors "
                               f"(e.g. {', '.join(sorted(missing)[:3])})")
        model.eval()
        cfg = model.config
        dev, dt = self.torch_device, self.dtype
        # T5 computes in float32 (its activations overflow float16); once per job, so it is cheap
        self._text = model.text_encoder.to(device=dev, dtype=torch.float32).eval()
        needs_proj = (cfg.text_encoder.hidden_size != cfg.decoder.hidden_size
                      and cfg.decoder.cross_attention_hidden_size is None)
        self._proj = model.enc_to_dec_proj.to(device=dev, dtype=torch.float32).eval() if needs_proj else None
        self._codec = model.audio_encoder.to(device=dev, dtype=dt).eval()
        self._weights = DecoderWeights(model.decoder, dev, dt)
        gc = model.generation_config
        start = gc.decoder_start_token_id
        if start is None:
            start = cfg.decoder.bos_token_id if cfg.decoder.bos_token_id is not None else cfg.decoder.pad_token_id
        self.pad_id = int(start)
        self.audio_channels = int(cfg.decoder.audio_channels)
        K = self._weights.K
        if self.audio_channels == 2:   # stereo: (left, right) codebook pairs share one delay
            self.delays = np.repeat(np.arange(K // 2), 2)
        else:
            self.delays = np.arange(K)
        self.model_rate = int(cfg.audio_encoder.sampling_rate)
        self.hop = int(np.prod(cfg.audio_encoder.upsampling_ratios))
        self.max_positions = int(cfg.decoder.max_position_embeddings)
        v = self._weights.V
        self.params = {
            "temperature": (0.0, 4.0, float(gc.temperature if gc.temperature is not None else 1.0)),
            "guidance": (0.0, 15.0, float(gc.guidance_scale if gc.guidance_scale is not None else 3.0)),
            "top_k": (0.0, float(v), float(min(v, gc.top_k if gc.top_k is not None else 250))),
        }
        if not gc.do_sample:
            lo, hi, _ = self.params["temperature"]
            self.params["temperature"] = (lo, hi, 0.0)
        del model

    def _configure(self, max_batch, sample_rate, context_s, reprime_s, max_text_tokens, decode_context,
                   decode_lookahead, crossfade_frames, round_steps, cuda_graphs, bucketed, kv_budget_gb):
        self.sample_rate = int(sample_rate) if sample_rate else 48000
        if self.sample_rate <= 0 or (self.hop * self.sample_rate) % self.model_rate:
            raise BackendError(f"output rate {self.sample_rate} Hz is not a whole number of samples per "
                               f"MusicGen frame ({self.model_rate / self.hop:g} Hz); use e.g. 48000 or 44100")
        self.granularity = self.hop * self.sample_rate // self.model_rate   # output frames per code frame
        self.frame_rate = self.model_rate / self.hop
        self._resampler = (WindowResampler(self.model_rate, self.sample_rate, self.torch_device)
                           if self.sample_rate != self.model_rate else None)
        self.decode_context = int(decode_context)
        self.decode_lookahead = int(decode_lookahead)
        # the samples kept from a window must not see its zero padding: the EnCodec frames
        # decoded past the kept audio must cover the resampler's look-ahead
        # (and the frames decoded before it must cover what it looks back)
        if self._resampler is not None:
            need = -(-self._resampler.ahead // self.hop)
            if self.decode_lookahead < need:
                log.info("musicgen: decode_lookahead %d → %d frames (the resampler looks %d samples ahead)",
                         self.decode_lookahead, need, self._resampler.ahead)
                self.decode_lookahead = need
            need = -(-(self._resampler.J - 1) // self.hop)
            if self.decode_context < need:
                log.info("musicgen: decode_context %d → %d frames (the resampler looks %d samples back)",
                         self.decode_context, need, self._resampler.J - 1)
                self.decode_context = need
        self.crossfade_frames = max(1, int(crossfade_frames))
        self.text_len = int(max_text_tokens)
        dmax = int(self.delays.max())
        want = min(self.max_positions - 1, int(round(context_s * self.frame_rate)))
        reprime = max(dmax + 2, int(round(reprime_s * self.frame_rate)))
        min_ctx = 2 * reprime            # re-prime at most every ``reprime`` frames
        w = self._weights
        budget = _memory_budget(self.torch_device, kv_budget_gb)
        ctx, slots = plan_context(want=want, slots=int(max_batch), bytes_per_position=w.kv_bytes_per_position(),
                                  budget_bytes=budget, min_context=min_ctx)
        if slots < 1:
            raise OutOfMemory(f"no room for one stream's KV cache ({min_ctx} positions) in "
                              f"{budget / 2**30:.2f} GiB; lower context_s/reprime_s or free memory")
        if slots < max_batch or ctx < min(want, (want // 64) * 64 if want >= 128 else want):
            log.warning("musicgen: KV cache budget %.1f GiB → %d streams × %d positions (asked %d × %d)",
                        budget / 2**30, slots, ctx, max_batch, want)
        self.max_batch = slots
        self.context = ctx
        self.reprime = min(reprime, ctx // 2)
        self._loop = DecodeLoop(w, slots=slots, context=ctx, text_len=self.text_len, pad_id=self.pad_id,
                                delays=self.delays.tolist(), round_steps=round_steps, bucketed=bucketed,
                                use_graphs=cuda_graphs)

    # ---------------------------------------------------------------- contract
    def warmup(self) -> None:
        """Capture the CUDA graphs (on a GPU) and run one short generation. ``[control]`` at start."""
        try:
            with torch.no_grad():
                n = self._loop.capture()
                if n:
                    log.info("musicgen: captured %d CUDA graphs", n)
                s = self.start(-1, "warm up", 0)
                try:
                    self.generate([s], 8 * self.granularity)
                    self.generate([s], 16 * self.granularity)
                finally:
                    self.end(s)
        except torch.cuda.OutOfMemoryError as e:
            raise OutOfMemory(f"musicgen warm-up: {e}") from None

    def start(self, job: int, prompt: str, seed: int, params: dict[str, float] | None = None) -> Stream:
        """Encode the prompt once and claim a slot. ``[engine]``"""
        if len(self._slots) >= self.max_batch:
            raise BackendError(f"all {self.max_batch} musicgen streams are busy")
        p = {name: spec[2] for name, spec in self.params.items()}
        try:
            p.update({k: float(v) for k, v in (params or {}).items()})
        except (TypeError, ValueError) as e:
            raise BackendError(f"musicgen start: parameters must be numbers: {e}") from None
        with _as_backend_errors("musicgen start"), torch.no_grad():
            enc = self._encode_text(prompt)
            slot = len(self._slots)
            self._loop.reset_slot(slot, enc, stream_key(seed), *self._live(p))
        state = _State(slot=slot, codes=_CodeLog(self.delays),
                       stitcher=Stitcher(self.crossfade_frames * self.granularity, "linear"),
                       fifo=_Fifo(self.channels))
        stream = Stream(job=job, prompt=prompt, seed=seed, params=p, state=state)
        self._slots.append(stream)
        return stream

    def generate(self, streams: list[Stream], frames: int) -> list[np.ndarray]:
        """The next ``frames`` (rounded up to ``granularity``) of every stream, stepped as one batch.

        ``[engine]``; raises ``OutOfMemory`` or ``BackendError``. A failed call leaves every
        stream consistent (a retry continues where the last completed round left off).
        """
        g = self.granularity
        n = ceil_div(max(0, int(frames)), g) * g
        states = []
        for s in streams:
            st = s.state
            if not isinstance(st, _State) or st.ended or st.slot >= len(self._slots) \
                    or self._slots[st.slot] is not s:
                raise BackendError(f"job {s.job}: not a live musicgen stream")
            states.append(st)
        if len({id(st) for st in states}) != len(states):
            raise BackendError("a stream appears twice in one generate call")
        if n == 0 or not streams:
            return [np.zeros((0, self.channels), dtype=np.float32) for _ in streams]
        with _as_backend_errors(f"musicgen generate ({len(streams)} streams)"), torch.no_grad():
            self._gather(states)
            for _ in range(8):
                need = [(st, self._steps_needed(st, n)) for st in states]
                if not any(k for _, k in need):
                    break
                self._run_steps([(st, k) for st, k in need if k])
                self._decode(states)
            else:
                raise BackendError("musicgen could not fill the request (decode pipeline stalled)")
        out = []
        for s, st in zip(streams, states):
            out.append(st.fifo.take(n))
            s.frames_done += n
        return out

    def set_param(self, stream: Stream, name: str, value: float) -> None:
        """Apply ``temperature``, ``guidance`` or ``top_k`` from the next decoder step. ``[engine]``"""
        super().set_param(stream, name, value)
        st = stream.state
        if name in self.params and isinstance(st, _State) and not st.ended:
            self._loop.set_params(st.slot, *self._live(stream.params))

    def end(self, stream: Stream) -> None:
        """Free the stream's slot (the last slot moves into it). Idempotent. ``[engine]``"""
        st = stream.state
        if not isinstance(st, _State) or st.ended:
            return
        st.ended = True
        i = st.slot
        if i >= len(self._slots) or self._slots[i] is not stream:
            return
        last = len(self._slots) - 1
        if i != last:
            moved = self._slots[last]
            self._loop.move_slot(last, i)
            moved.state.slot = i
            self._slots[i] = moved
        self._slots.pop()

    def close(self) -> None:
        """Free the model and the caches. ``[control]`` at shutdown."""
        for s in list(self._slots):
            self.end(s)
        for name in ("_loop", "_weights", "_text", "_proj", "_codec", "_tokenizer"):
            if hasattr(self, name):
                delattr(self, name)
        if self.torch_device.type == "cuda":
            torch.cuda.empty_cache()

    # ---------------------------------------------------------------- internals
    def _live(self, p: dict[str, float]) -> tuple[float, int, float]:
        def clamp(name):
            lo, hi, default = self.params[name]
            v = float(p.get(name, default))
            return default if math.isnan(v) else min(hi, max(lo, v))

        return clamp("temperature"), int(round(clamp("top_k"))), clamp("guidance")

    def _encode_text(self, prompt: str) -> torch.Tensor:
        """T5 once per job: (tokens, decoder hidden) float32, masked like transformers does."""
        enc = self._tokenizer([str(prompt)], return_tensors="pt", truncation=True, max_length=self.text_len)
        ids = enc["input_ids"].to(self.torch_device)
        mask = enc["attention_mask"].to(self.torch_device)
        h = self._text(input_ids=ids, attention_mask=mask).last_hidden_state
        if self._proj is not None:
            h = self._proj(h)
        h = h * mask[..., None]
        return h[0]

    def _steps_needed(self, st: _State, n: int) -> int:
        deficit = n - st.fifo.size
        if deficit <= 0:
            return 0
        frames = st.emitted + ceil_div(deficit, self.granularity) + self.crossfade_frames + self.decode_lookahead
        return max(0, frames + st.codes.dmax - st.codes.steps)

    def _gather(self, states: list[_State]) -> None:
        """Move this call's streams into the lowest slots when that shrinks the step's batch bucket.

        A step runs every slot below the highest one it needs; one new stream sitting in slot 200
        would otherwise cost a 256-row step. A swap copies two slots' caches (a fraction of a
        millisecond on a GPU), so it is done only when the bucket at least halves.
        """
        n = len(states)
        top = max(st.slot for st in states) + 1
        if self._loop.bucket(top, 1)[0] < 2 * self._loop.bucket(n, 1)[0]:
            return
        mine = {st.slot for st in states}
        free_low = [i for i in range(n) if i not in mine]
        for st in sorted((st for st in states if st.slot >= n), key=lambda s: s.slot):
            j = free_low.pop(0)
            i = st.slot
            other = self._slots[j]
            self._loop.swap_slots(i, j)
            self._slots[i], self._slots[j] = other, self._slots[i]
            other.state.slot = i
            st.slot = j

    def _run_steps(self, need: list[tuple[_State, int]]) -> None:
        loop = self._loop
        remaining = {st.slot: k for st, k in need}
        by_slot = {st.slot: st for st, _ in need}
        while remaining:
            for slot in remaining:
                if loop.h_pos[slot] >= self.context:
                    self._reprime(by_slot[slot])
            room = min(self.context - int(loop.h_pos[s]) for s in remaining)
            steps = min(loop.round_steps, max(remaining.values()), room)
            n = max(remaining) + 1
            sched = np.zeros((steps, n), dtype=bool)
            for s, k in remaining.items():
                sched[:min(k, steps), s] = True
            toks = loop.run(sched)
            for s in list(remaining):
                m = min(remaining[s], steps)
                by_slot[s].codes.append(toks[:m, s])
                remaining[s] -= m
                if remaining[s] == 0:
                    del remaining[s]

    def _reprime(self, st: _State) -> None:
        """Restart the slot on the last ``reprime`` positions of its own tokens."""
        s = st.codes.steps
        R = self.reprime
        f0 = s - R                                       # absolute position that becomes position 0
        toks = np.full((len(self.delays), R + 1), self.pad_id, dtype=np.int64)
        toks[:, 1:] = st.codes.positions(f0 + 1, s + 1)
        q = np.arange(R + 1)[None, :]
        toks[q <= self.delays[:, None]] = self.pad_id   # frames before the window are gone: BOS
        self._loop.prime(st.slot, torch.from_numpy(toks))
        st.shift = f0
        st.reprimes += 1

    def _decode(self, states: list[_State]) -> None:
        """EnCodec over each stream's new window, resampled, stitched, into its FIFO."""
        lc, la, ov, q = self.decode_context, self.decode_lookahead, self.crossfade_frames, self.granularity
        groups: dict[int, list[tuple[_State, int, int, int]]] = {}
        for st in states:
            F = st.codes.frames
            G = F - la
            E = st.emitted
            if G - ov <= E:
                continue
            a = max(0, E - lc)
            groups.setdefault(F - a, []).append((st, a, G, F))
        for W, items in groups.items():
            codes = np.stack([st.codes.codes(a, F) for st, a, _, F in items])
            audio = self._codec_decode(codes)                              # (B, C, W·q) at the output rate
            # one transfer: each stream's part from its emitted frame to the lookahead
            parts = [audio[i, :, (st.emitted - a) * q:(G - a) * q] for i, (st, a, G, _F) in enumerate(items)]
            lens = [p.shape[1] for p in parts]
            flat = torch.cat(parts, dim=1).T.contiguous().float()         # (Σ n, C)
            if self._cupy is not None:
                flat = self._cupy.from_dlpack(flat)                        # stays on the GPU (zero copy)
            else:
                flat = flat.cpu().numpy()                                  # one transfer
            off = 0
            for (st, a, G, _F), m in zip(items, lens):
                chunk = flat[off:off + m]
                off += m
                done = st.stitcher.push(chunk)
                st.emitted = G - ov
                st.fifo.push(self._to_channels(done))
                st.codes.trim(min(st.emitted - lc, st.codes.steps - self.reprime) - 1)

    def _codec_decode(self, codes: np.ndarray) -> np.ndarray:
        c = torch.from_numpy(codes).to(self.torch_device)[None]            # (1, B, K, W)
        dec = self._codec.decode
        if self.audio_channels == 1:
            v = dec(c, [None], return_dict=True).audio_values
        else:
            left = dec(c[:, :, 0::2], [None], return_dict=True).audio_values
            right = dec(c[:, :, 1::2], [None], return_dict=True).audio_values
            v = torch.cat([left, right], dim=1)
        want = codes.shape[-1] * self.hop
        if v.shape[-1] < want:
            raise BackendError(f"EnCodec returned {v.shape[-1]} samples for {codes.shape[-1]} frames")
        v = v[..., :want].float()
        return self._resampler(v) if self._resampler is not None else v

    def _to_channels(self, x: np.ndarray) -> np.ndarray:
        c = x.shape[1]
        if c == self.channels:
            return x
        if c == 1:
            return array_module(x).repeat(x, self.channels, axis=1)
        return x.mean(axis=1, keepdims=True, dtype=np.float32)

    # ---------------------------------------------------------------- introspection (tests, bench)
    def stream_codes(self, stream: Stream, f0: int = 0, f1: int | None = None) -> np.ndarray:
        """The stream's complete codes ``[f0, f1)`` as (K, n) (tests and benchmarks). ``[engine]``"""
        c = stream.state.codes
        return c.codes(f0, c.frames if f1 is None else f1).copy()

    def stream_info(self, stream: Stream) -> dict:
        st = stream.state
        return {"slot": st.slot, "steps": st.codes.steps, "frames": st.codes.frames, "emitted": st.emitted,
                "reprimes": st.reprimes, "buffered": st.fifo.size, "position": int(self._loop.h_pos[st.slot])}


__all__ = ["MusicgenBackend", "WindowResampler", "check_model_dir"]
