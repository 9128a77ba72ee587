"""engine.musicgen.decode: MusicGen's decoder as one fixed-shape, batched step over a static KV cache.

Owns the decoder's weights (in the step's layout: QKV fused, LM heads stacked), the static caches of
``slots`` streams and the per-slot state a step reads and writes (input tokens, position, RNG
counter, live sampling parameters). Nothing here knows about text, audio or the Backend
contract; :mod:`engine.musicgen.backend` drives it.

Layout. Slot ``s`` owns two batch rows, ``2s`` (conditional) and ``2s + 1`` (unconditional,
classifier-free guidance as batch). Self-attention K/V live in ``(layers, slots + 1, 2, heads,
context + 1, head_dim)``; column ``context`` is a scratch column (see below) and slot ``slots``
is swap space. Cross-attention K/V are computed once per job (:meth:`DecodeLoop.reset_slot`)
into ``(layers, slots + 1, 2, heads, text_len, head_dim)``; the unconditional row holds zeros,
which is what transformers' MusicGen feeds the unconditional branch (a zero encoder state,
masked), so its cross-attention adds exactly 0.

One step (:meth:`DecodeLoop._step`) runs the first ``B`` slots and attends over the first
``Tb`` cache columns; both are Python constants, so on CUDA each ``(B, Tb)`` bucket is captured
once as a CUDA graph in :meth:`DecodeLoop.capture` and replayed. Every slot in the bucket is
computed; only slots flagged in ``active`` commit (token, position, counter advance). An inactive
slot's K/V write lands on its own next position (or the scratch column when its cache is full),
which its next real step overwrites, so running it is harmless.

Sampling uses no torch RNG: a counter-based hash of (stream key, absolute step, codebook) gives
each draw's uniform, so a stream's tokens do not depend on its batch, on how steps are chunked,
or on graph replay, and the whole step stays capturable. Top-k / temperature sampling is done by
inverse CDF over the sorted distribution; temperature 0 is greedy (arg-max, first index on ties).

Threading: everything runs on the ``[engine]`` thread, except :meth:`DecodeLoop.capture`
(``[control]``, during warm-up).
"""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import torch
import torch.nn.functional as F

_M32 = 0xFFFFFFFF


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """Low 32 bits of ``x * c`` for int64 ``0 <= x < 2**32`` without int64 overflow."""
    return (x * (c & 0xFFFF) + (((x * (c >> 16)) & 0xFFFF) << 16)) & _M32


def _fmix32(x: torch.Tensor) -> torch.Tensor:
    """MurmurHash3's 32-bit finaliser on int64 tensors holding 32-bit values."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x85EBCA6B)
    x = x ^ (x >> 13)
    x = _mul32(x, 0xC2B2AE35)
    return x ^ (x >> 16)


def counter_uniforms(key_lo: torch.Tensor, key_hi: torch.Tensor, counter: torch.Tensor, n: int) -> torch.Tensor:
    """``(B, n)`` float32 uniforms in [0, 1), a pure function of (key, counter, column)."""
    col = torch.arange(1, n + 1, device=counter.device, dtype=torch.int64)
    h = _fmix32((counter[:, None] & _M32) ^ _mul32(col[None, :], 0x9E3779B9))
    h = _fmix32(h ^ key_lo[:, None])
    h = _fmix32(h ^ key_hi[:, None])
    return (h >> 8).to(torch.float32) * (1.0 / 16777216.0)


def stream_key(seed: int) -> tuple[int, int]:
    """A stream's 64-bit sampling key from its seed (SplitMix64), as (low, high) 32-bit halves."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return z & _M32, z >> 32


def sample_tokens(logits: torch.Tensor, temperature: torch.Tensor, top_k: torch.Tensor,
                  u: torch.Tensor) -> torch.Tensor:
    """Top-k / temperature sampling by inverse CDF; ``logits`` (B, K, V) float32, ``u`` (B, K).

    ``temperature <= 0`` is greedy; ``top_k <= 0`` keeps the whole vocabulary. Fixed shapes and
    no host synchronisation, so it can live inside a CUDA graph.
    """
    V = logits.shape[-1]
    vals, idx = torch.sort(logits, dim=-1, descending=True, stable=True)
    greedy = temperature <= 0
    t = torch.where(greedy, torch.ones_like(temperature), temperature)
    k = torch.where(top_k <= 0, torch.full_like(top_k, V), top_k).clamp(1, V)
    rank = torch.arange(V, device=logits.device)
    z = (vals / t[:, None, None]).masked_fill(rank >= k[:, None, None], float("-inf"))
    cdf = torch.softmax(z, dim=-1).cumsum(-1)
    j = (cdf < u[..., None] * cdf[..., -1:]).sum(-1)
    j = torch.minimum(j, (k - 1)[:, None])
    j = torch.where(greedy[:, None], torch.zeros_like(j), j)
    return idx.gather(-1, j[..., None])[..., 0]


class DecoderWeights:
    """The MusicGen decoder's parameters in the layout the step wants (a copy on ``device``)."""

    def __init__(self, causal_lm, device: torch.device, dtype: torch.dtype):
        from transformers.activations import ACT2FN

        cfg = causal_lm.config
        dec = causal_lm.model.decoder

        def to(t):
            return t.detach().to(device=device, dtype=dtype).contiguous()

        self.K = int(cfg.num_codebooks)
        self.V = int(cfg.vocab_size)
        self.D = int(cfg.hidden_size)
        self.H = int(cfg.num_attention_heads)
        self.Dh = self.D // self.H
        self.L = int(cfg.num_hidden_layers)
        self.audio_channels = int(getattr(cfg, "audio_channels", 1))
        self.act = ACT2FN[cfg.activation_function]
        # MusicgenDecoder.forward sums the codebook embeddings without ``embed_scale``.
        self.emb = [to(e.weight) for e in dec.embed_tokens]                 # K × (V + 1, D)
        self.pos = to(dec.embed_positions.weights)                          # (max_pos, D)
        self.layers = []
        for layer in dec.layers:
            sa, ca = layer.self_attn, layer.encoder_attn
            self.layers.append({
                "ln1": (to(layer.self_attn_layer_norm.weight), to(layer.self_attn_layer_norm.bias),
                        layer.self_attn_layer_norm.eps),
                "qkv": to(torch.cat([sa.q_proj.weight, sa.k_proj.weight, sa.v_proj.weight], 0)),
                "o": to(sa.out_proj.weight),
                "ln2": (to(layer.encoder_attn_layer_norm.weight), to(layer.encoder_attn_layer_norm.bias),
                        layer.encoder_attn_layer_norm.eps),
                "cq": to(ca.q_proj.weight),
                "ckv": to(torch.cat([ca.k_proj.weight, ca.v_proj.weight], 0)),
                "co": to(ca.out_proj.weight),
                "ln3": (to(layer.final_layer_norm.weight), to(layer.final_layer_norm.bias),
                        layer.final_layer_norm.eps),
                "fc1": to(layer.fc1.weight),
                "fc2": to(layer.fc2.weight),
            })
            for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
                if getattr(sa, name).bias is not None or getattr(ca, name).bias is not None:
                    raise ValueError("MusicGen attention projections are expected to have no bias")
        self.ln_f = (to(dec.layer_norm.weight), to(dec.layer_norm.bias), dec.layer_norm.eps)
        self.heads = to(torch.cat([h.weight for h in causal_lm.lm_heads], 0))  # (K·V, D)
        self.device = device
        self.dtype = dtype

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Sum of the codebook embeddings of ``tokens`` (..., K) in codebook order, as HF does."""
        x = self.emb[0][tokens[..., 0]]
        for k in range(1, self.K):
            x = x + self.emb[k][tokens[..., k]]
        return x

    def kv_bytes_per_position(self) -> int:
        """Bytes of self-attention K+V one slot (two rows) needs per cache position."""
        return self.L * 2 * 2 * self.D * torch.finfo(self.dtype).bits // 8


def _ln(x, p):
    return F.layer_norm(x, (x.shape[-1],), p[0], p[1], p[2])


def _attention_kernels(device: torch.device):
    """On CUDA, pin attention to the memory-efficient kernel (masks, one-token queries, graph
    capture) with the plain math kernel as fallback; elsewhere leave PyTorch's choice."""
    if device.type != "cuda":
        return nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def _doublings(start: int, stop: int) -> list[int]:
    """``start, 2·start, 4·start, …`` below ``stop``, then ``stop`` itself (the bucket sizes)."""
    out = []
    while start < stop:
        out.append(start)
        start *= 2
    return out + [stop]


class DecodeLoop:
    """Static-cache, batched, bucketed MusicGen decode steps over ``slots`` streams. ``[engine]``"""

    def __init__(self, weights: DecoderWeights, *, slots: int, context: int, text_len: int, pad_id: int,
                 delays: list[int], round_steps: int = 64, bucketed: bool | None = None,
                 use_graphs: bool | None = None):
        w = self.w = weights
        dev, dt = w.device, w.dtype
        if context + 1 > w.pos.shape[0]:
            raise ValueError(f"context {context} exceeds the model's {w.pos.shape[0] - 1} positions")
        self.S = int(slots)
        self.T = int(context)
        self.E = int(text_len)
        self.pad = int(pad_id)
        self.round_steps = int(round_steps)
        cuda = dev.type == "cuda"
        self.use_graphs = cuda if use_graphs is None else (bool(use_graphs) and cuda)
        self.bucketed = (cuda if bucketed is None else bool(bucketed)) or self.use_graphs
        S, T1, E = self.S, self.T + 1, self.E
        # one extra slot (index S) is swap space for :meth:`swap_slots`; steps never run it
        shape = (w.L, S + 1, 2, w.H, T1, w.Dh)
        self.k_cache = torch.zeros(shape, device=dev, dtype=dt)
        self.v_cache = torch.zeros(shape, device=dev, dtype=dt)
        self.ck = torch.zeros((w.L, S + 1, 2, w.H, E, w.Dh), device=dev, dtype=dt)
        self.cv = torch.zeros_like(self.ck)
        self.cmask = torch.zeros((S, 2, E), device=dev, dtype=dt)
        self.tok = torch.full((S, w.K), self.pad, device=dev, dtype=torch.long)
        self.out = torch.full((S, w.K), self.pad, device=dev, dtype=torch.long)
        self.pos = torch.zeros(S, device=dev, dtype=torch.long)
        self.ctr = torch.zeros(S, device=dev, dtype=torch.long)
        self.key_lo = torch.zeros(S, device=dev, dtype=torch.long)
        self.key_hi = torch.zeros(S, device=dev, dtype=torch.long)
        self.temp = torch.ones(S, device=dev, dtype=torch.float32)
        self.topk = torch.zeros(S, device=dev, dtype=torch.long)
        self.guid = torch.ones(S, device=dev, dtype=torch.float32)
        self.active = torch.zeros(S, device=dev, dtype=torch.bool)
        self.delays = torch.tensor(delays, device=dev, dtype=torch.long)
        self.log = torch.full((self.round_steps, S, w.K), self.pad, device=dev, dtype=torch.long)
        self.h_pos = np.zeros(S, dtype=np.int64)       # host mirror of ``pos``
        self.graphs: dict[tuple[int, int], torch.cuda.CUDAGraph] = {}

    # ------------------------------------------------------------------ buckets
    def batch_buckets(self) -> list[int]:
        return _doublings(1, self.S)

    def context_buckets(self) -> list[int]:
        return _doublings(64, self.T)

    def bucket(self, n_slots: int, t_needed: int) -> tuple[int, int]:
        """The (batch, context) shape a step over slots ``[0, n_slots)`` reaching ``t_needed`` uses."""
        if not self.bucketed:
            return n_slots, min(self.T, t_needed)
        b = next(x for x in self.batch_buckets() if x >= n_slots)
        t = next(x for x in self.context_buckets() if x >= t_needed)
        return b, t

    # ------------------------------------------------------------------ per-slot state
    @torch.no_grad()
    def reset_slot(self, slot: int, enc: torch.Tensor, key: tuple[int, int], temperature: float,
                   top_k: int, guidance: float) -> None:
        """Start a job in ``slot``: cross K/V from ``enc`` (n, D) (already masked and projected),
        BOS input at position 0, counter 0. ``[engine]``"""
        w = self.w
        n = min(int(enc.shape[0]), self.E)
        enc = enc[:n].to(device=w.device, dtype=w.dtype)
        self.ck[:, slot].zero_()
        self.cv[:, slot].zero_()
        for l, lw in enumerate(w.layers):
            kv = F.linear(enc, lw["ckv"]).view(n, 2, w.H, w.Dh).permute(1, 2, 0, 3)  # (2, H, n, Dh)
            self.ck[l, slot, 0, :, :n] = kv[0]
            self.cv[l, slot, 0, :, :n] = kv[1]
        self.cmask[slot].zero_()
        self.cmask[slot, 0, n:] = float("-inf")
        self.tok[slot] = self.pad
        self.pos[slot] = 0
        self.ctr[slot] = 0
        self.key_lo[slot] = int(key[0])
        self.key_hi[slot] = int(key[1])
        self.h_pos[slot] = 0
        self.set_params(slot, temperature, top_k, guidance)

    def set_params(self, slot: int, temperature: float | None = None, top_k: int | None = None,
                   guidance: float | None = None) -> None:
        """Live sampling parameters; the next step reads them. ``[engine]``"""
        if temperature is not None:
            self.temp[slot] = float(temperature)
        if top_k is not None:
            self.topk[slot] = int(top_k)
        if guidance is not None:
            self.guid[slot] = float(guidance)

    @torch.no_grad()
    def move_slot(self, src: int, dst: int) -> None:
        """Copy everything of slot ``src`` into ``dst`` (compaction after a stream leaves). ``[engine]``"""
        if src == dst:
            return
        for t in (self.k_cache, self.v_cache, self.ck, self.cv):
            t[:, dst].copy_(t[:, src])
        for t in (self.cmask, self.tok, self.pos, self.ctr, self.key_lo, self.key_hi, self.temp,
                  self.topk, self.guid):
            t[dst].copy_(t[src])
        self.h_pos[dst] = self.h_pos[src]

    @torch.no_grad()
    def swap_slots(self, i: int, j: int) -> None:
        """Exchange two slots (to gather a call's streams into a small prefix bucket). ``[engine]``"""
        if i == j:
            return
        tmp = self.S
        for t in (self.k_cache, self.v_cache, self.ck, self.cv):
            t[:, tmp].copy_(t[:, i])
            t[:, i].copy_(t[:, j])
            t[:, j].copy_(t[:, tmp])
        for t in (self.cmask, self.tok, self.pos, self.ctr, self.key_lo, self.key_hi, self.temp,
                  self.topk, self.guid):
            a = t[i].clone()
            t[i].copy_(t[j])
            t[j].copy_(a)
        self.h_pos[[i, j]] = self.h_pos[[j, i]]

    @torch.no_grad()
    def prime(self, slot: int, tokens: torch.Tensor) -> None:
        """Restart ``slot`` on a delayed token window ``tokens`` (K, Q + 1), position 0 first.

        Positions ``0 … Q − 1`` are prefilled into the cache; column ``Q`` becomes the next input,
        at position ``Q``. The RNG counter is kept. ``[engine]``
        """
        w = self.w
        tokens = tokens.to(device=w.device, dtype=torch.long)
        Q = tokens.shape[1] - 1
        if not 0 <= Q < self.T:
            raise ValueError(f"prime window of {Q} positions does not fit the {self.T}-position cache")
        if Q > 0:
            self._prefill(slot, tokens[:, :Q])
        self.tok[slot] = tokens[:, Q]
        self.pos[slot] = Q
        self.h_pos[slot] = Q

    def _prefill(self, slot: int, tokens: torch.Tensor) -> None:
        """Write K/V of positions ``0 … Q−1`` (tokens (K, Q)) into both rows of ``slot``."""
        w = self.w
        Q = tokens.shape[1]
        with _attention_kernels(w.device):
            x = w.embed(tokens.T) + w.pos[:Q]                                           # (Q, D)
            x = x[None].expand(2, Q, w.D)
            cm = self.cmask[slot].view(2, 1, 1, self.E)
            for l, lw in enumerate(w.layers):
                h = _ln(x, lw["ln1"])
                q, k, v = F.linear(h, lw["qkv"]).view(2, Q, 3, w.H, w.Dh).permute(2, 0, 3, 1, 4)
                self.k_cache[l, slot, :, :, :Q] = k
                self.v_cache[l, slot, :, :, :Q] = v
                if l == w.L - 1:
                    break                      # the last layer's output is not needed, only its K/V
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)          # (2, H, Q, Dh)
                x = x + F.linear(a.transpose(1, 2).reshape(2, Q, w.D), lw["o"])
                h = _ln(x, lw["ln2"])
                q = F.linear(h, lw["cq"]).view(2, Q, w.H, w.Dh).transpose(1, 2)
                a = F.scaled_dot_product_attention(q, self.ck[l, slot], self.cv[l, slot], attn_mask=cm)
                x = x + F.linear(a.transpose(1, 2).reshape(2, Q, w.D), lw["co"])
                h = _ln(x, lw["ln3"])
                x = x + F.linear(w.act(F.linear(h, lw["fc1"])), lw["fc2"])

    # ------------------------------------------------------------------ the step
    def _step(self, B: int, Tb: int) -> None:
        """One decode step of slots ``[0, B)`` attending over ``Tb`` columns (graph-capturable)."""
        w = self.w
        R = 2 * B
        tok = self.tok[:B]
        pos = self.pos[:B]
        x = w.embed(tok) + w.pos[pos]                                                  # (B, D)
        x = x[:, None].expand(B, 2, w.D).reshape(R, w.D)
        posr = pos[:, None].expand(B, 2).reshape(R)
        rows = torch.arange(R, device=x.device)
        keep = torch.arange(Tb, device=x.device)[None, :] <= posr[:, None]
        mask = torch.zeros((R, 1, 1, Tb), device=x.device, dtype=x.dtype)
        mask = mask.masked_fill(~keep.view(R, 1, 1, Tb), float("-inf"))
        cmask = self.cmask[:B].reshape(R, 1, 1, self.E)
        T1 = self.T + 1
        for l, lw in enumerate(w.layers):
            h = _ln(x, lw["ln1"])
            q, k, v = F.linear(h, lw["qkv"]).view(R, 3, w.H, w.Dh).unbind(1)
            kc = self.k_cache[l, :B].view(R, w.H, T1, w.Dh)
            vc = self.v_cache[l, :B].view(R, w.H, T1, w.Dh)
            kc[rows, :, posr] = k
            vc[rows, :, posr] = v
            a = F.scaled_dot_product_attention(q[:, :, None], kc[:, :, :Tb], vc[:, :, :Tb], attn_mask=mask)
            x = x + F.linear(a.reshape(R, w.D), lw["o"])
            h = _ln(x, lw["ln2"])
            q = F.linear(h, lw["cq"]).view(R, w.H, 1, w.Dh)
            a = F.scaled_dot_product_attention(q, self.ck[l, :B].view(R, w.H, self.E, w.Dh),
                                               self.cv[l, :B].view(R, w.H, self.E, w.Dh), attn_mask=cmask)
            x = x + F.linear(a.reshape(R, w.D), lw["co"])
            h = _ln(x, lw["ln3"])
            x = x + F.linear(w.act(F.linear(h, lw["fc1"])), lw["fc2"])
        h = _ln(x, w.ln_f)
        logits = F.linear(h, w.heads).view(B, 2, w.K, w.V).float()
        cond, uncond = logits[:, 0], logits[:, 1]
        g = self.guid[:B, None, None]
        # transformers' CFG: uncond + g · (cond − uncond); g = 1 is exactly the conditional logits
        logits = torch.where(g == 1.0, cond, uncond + g * (cond - uncond))
        u = counter_uniforms(self.key_lo[:B], self.key_hi[:B], self.ctr[:B], w.K)
        new = sample_tokens(logits, self.temp[:B], self.topk[:B], u)
        # delay pattern: codebook k at position p + 1 holds frame p − delay[k]; before frame 0 it is BOS
        new = torch.where(pos[:, None] < self.delays[None, :], torch.full_like(new, self.pad), new)
        act = self.active[:B]
        self.out[:B].copy_(new)
        self.tok[:B].copy_(torch.where(act[:, None], new, tok))
        self.pos[:B].add_(act.long())
        self.ctr[:B].add_(act.long())

    @torch.no_grad()
    def capture(self) -> int:
        """Capture one CUDA graph per (batch, context) bucket; returns how many. ``[control]``"""
        if not self.use_graphs:
            return 0
        keys = [(b, t) for b in self.batch_buckets() for t in self.context_buckets()]
        saved = (self.tok.clone(), self.pos.clone(), self.ctr.clone(), self.out.clone())
        self.active.zero_()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with _attention_kernels(self.w.device):
            with torch.cuda.stream(side):
                for key in keys:                      # eager once: kernels chosen, workspaces made
                    self._step(*key)
            torch.cuda.current_stream().wait_stream(side)
            pool = torch.cuda.graph_pool_handle()     # shared: graphs run one at a time
            for key in keys:
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, pool=pool):
                    self._step(*key)
                self.graphs[key] = g
        torch.cuda.synchronize()
        for t, s in zip((self.tok, self.pos, self.ctr, self.out), saved):
            t.copy_(s)
        return len(keys)

    @torch.no_grad()
    def run(self, schedule: np.ndarray) -> np.ndarray:
        """Run ``len(schedule)`` steps; ``schedule[i, s]`` says whether slot ``s`` steps at step ``i``.

        Returns the tokens predicted, ``(steps, n, K)`` int64 for slots ``[0, n)`` (rows of slots
        that did not step are meaningless). Transactional: on an exception the slots' tokens,
        positions and counters are restored. ``[engine]``
        """
        steps, n = schedule.shape
        if steps > self.round_steps:
            raise ValueError(f"{steps} steps exceed round_steps={self.round_steps}")
        counts = schedule.sum(0).astype(np.int64)
        moving = counts > 0
        t_need = int((self.h_pos[:n] + counts)[moving].max()) if moving.any() else 1
        if t_need > self.T:
            raise ValueError("a slot would run past its cache; re-prime it first")
        # Each step attends over the columns its own furthest active slot needs, not the round's
        # last: a reduction over more (masked) columns rounds differently, by ~1e-7 in the logits,
        # and one draw near a boundary of the inverse CDF then flips the stream's tokens, so a
        # stream's tokens would depend on how its steps were chunked into rounds.
        before = np.cumsum(schedule, axis=0) - schedule            # steps taken before step i
        reach = np.where(schedule, self.h_pos[None, :n] + before + 1, 1).max(axis=1) if n else np.ones(steps)
        shapes = [self.bucket(n, int(t)) for t in reach]
        sched = np.zeros((steps, self.S), dtype=bool)
        sched[:, :n] = schedule
        sched_dev = torch.from_numpy(sched).to(self.w.device)
        saved = (self.tok.clone(), self.pos.clone(), self.ctr.clone())
        try:
            with _attention_kernels(self.w.device):
                for i in range(steps):
                    self.active.copy_(sched_dev[i])
                    graph = self.graphs.get(shapes[i]) if self.use_graphs else None
                    if graph is not None:
                        graph.replay()
                    else:
                        self._step(*shapes[i])
                    self.log[i, :n].copy_(self.out[:n])
            toks = self.log[:steps, :n].cpu().numpy()
        except BaseException:
            self.tok.copy_(saved[0])
            self.pos.copy_(saved[1])
            self.ctr.copy_(saved[2])
            raise
        self.h_pos[:n] += counts
        return toks


def plan_context(*, want: int, slots: int, bytes_per_position: int, budget_bytes: int,
                 min_context: int) -> tuple[int, int]:
    """(context, slots) whose self-attention cache fits ``budget_bytes``.

    Shrinks the context first, down to ``min_context``, then the number of slots (0 = nothing
    fits). A context of 128 or more is rounded down to a multiple of 64 (aligned attention tiles).
    """
    def rounded(t: int) -> int:
        return (t // 64) * 64 if t >= 128 else t

    def fits(t: int, s: int) -> bool:
        return s * (t + 1) * bytes_per_position <= budget_bytes  # + the scratch column

    ctx = rounded(int(want))
    if fits(ctx, slots):
        return ctx, slots
    floor = min(int(min_context), ctx)
    t = rounded(budget_bytes // max(1, slots * bytes_per_position) - 1)
    if t >= floor:
        return t, slots
    return floor, int(budget_bytes // ((floor + 1) * bytes_per_position))


def ceil_div(a: int, b: int) -> int:
    return -(-int(a) // int(b))


__all__ = ["DecoderWeights", "DecodeLoop", "sample_tokens", "counter_uniforms", "stream_key",
           "plan_context", "ceil_div"]
