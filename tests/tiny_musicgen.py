"""Random MusicGen models built from configs and saved like a real checkpoint (no network).

``build_tiny_musicgen(path)`` writes a tiny model (a few hundred kB, loads in well under a
second) that the musicgen backend loads through exactly the path a real directory takes:
``config.json``, ``generation_config.json``, ``model.safetensors`` and a T5 tokenizer
(``tokenizer.json``). ``build_random_musicgen(path, shape="small")`` writes random weights in
facebook/musicgen-small's shape for the GPU check; ``shape="tiny_stereo"`` a tiny stereo one
(8 interleaved codebooks). The tokenizer is a small Unigram vocabulary
made in memory (letters, digits and a few music words), so any prompt tokenizes.

Also importable by the daemon's end-to-end tests and by ``scripts/gpu_check_musicgen.py``.
"""
from __future__ import annotations

import string
from pathlib import Path

WORDS = ["lofi", "jazz", "piano", "drums", "house", "techno", "ambient", "beat", "bass", "pad",
         "chill", "dark", "warm", "slow", "fast", "guitar", "synth", "groove", "with", "and", "a", "the"]


def tiny_t5_tokenizer():
    """A T5 tokenizer over a tiny Unigram vocabulary, built in memory."""
    from transformers import T5Tokenizer

    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    for c in string.ascii_lowercase + string.digits + "-',.!?":
        vocab.append(("▁" + c, -3.0))
        vocab.append((c, -3.5))
    for w in WORDS:
        vocab.append(("▁" + w, -1.0))
    return T5Tokenizer(vocab=vocab, extra_ids=0)


def _configs(shape: str, text_vocab: int):
    from transformers import EncodecConfig, MusicgenConfig, MusicgenDecoderConfig, T5Config

    if shape in ("tiny", "tiny_stereo"):
        stereo = shape == "tiny_stereo"
        t5 = T5Config(vocab_size=text_vocab, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                      relative_attention_num_buckets=8, relative_attention_max_distance=16,
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
        codec = EncodecConfig(sampling_rate=32000, audio_channels=1, num_filters=4, hidden_size=16,
                              codebook_size=64, codebook_dim=16, upsampling_ratios=[8, 5, 4],
                              target_bandwidths=[4.8], num_lstm_layers=1, num_residual_layers=1,
                              use_causal_conv=False, normalize=False, chunk_length_s=None, overlap=None,
                              pad_mode="reflect", use_conv_shortcut=False)
        dec = MusicgenDecoderConfig(vocab_size=64, max_position_embeddings=512, num_hidden_layers=2,
                                    ffn_dim=64, num_attention_heads=4, hidden_size=32,
                                    num_codebooks=8 if stereo else 4, audio_channels=2 if stereo else 1,
                                    pad_token_id=64, bos_token_id=64, dropout=0.0)
    elif shape == "small":  # facebook/musicgen-small: T5-base, EnCodec 32 kHz, 24 × 1024 decoder
        t5 = T5Config(vocab_size=32128, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12,
                      relative_attention_num_buckets=32, feed_forward_proj="relu",
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
        codec = EncodecConfig(sampling_rate=32000, audio_channels=1, num_filters=64, hidden_size=128,
                              codebook_size=2048, upsampling_ratios=[8, 5, 4, 4], target_bandwidths=[2.2],
                              num_lstm_layers=2, num_residual_layers=1, use_causal_conv=False,
                              normalize=False, chunk_length_s=None, overlap=None, pad_mode="reflect",
                              use_conv_shortcut=False)
        dec = MusicgenDecoderConfig(vocab_size=2048, max_position_embeddings=2048, num_hidden_layers=24,
                                    ffn_dim=4096, num_attention_heads=16, hidden_size=1024, num_codebooks=4,
                                    pad_token_id=2048, bos_token_id=2048, dropout=0.1)
    else:
        raise ValueError(f"unknown shape {shape!r} (tiny, tiny_stereo, small)")
    # a stereo decoder interleaves (left, right) codebooks; EnCodec decodes each channel
    assert codec.num_quantizers * dec.audio_channels == dec.num_codebooks
    return MusicgenConfig(text_encoder=t5, audio_encoder=codec, decoder=dec)


def build_random_musicgen(path, shape: str = "tiny", seed: int = 0, device: str | None = None,
                          dtype=None) -> str:
    """Build a random MusicGen of ``shape`` and save it (weights, configs, tokenizer) to ``path``."""
    import torch
    from transformers import MusicgenForConditionalGeneration
    from transformers.utils import logging as hf_logging

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = tiny_t5_tokenizer()
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        cfg = _configs(shape, len(tok))
        torch.manual_seed(seed)
        with torch.device(device or "cpu"):
            model = MusicgenForConditionalGeneration(cfg)
            # EnCodec initialises its codebooks to zero (they are learned); random ones make
            # the decoded audio depend on the codes, as a trained model's does.
            for layer in model.audio_encoder.quantizer.layers:
                layer.codebook.embed.normal_()
            if shape != "small":
                # at init (std 0.02) a tiny decoder barely listens to its prompt; louder
                # cross-attention makes prompts and guidance visibly change the tokens
                for layer in model.decoder.model.decoder.layers:
                    layer.encoder_attn.v_proj.weight.data.mul_(10.0)
                    layer.encoder_attn.out_proj.weight.data.mul_(10.0)
        if dtype is not None:
            model = model.to(dtype)
        v = cfg.decoder.vocab_size
        gc = model.generation_config
        gc.decoder_start_token_id = v
        gc.pad_token_id = v
        gc.bos_token_id = v
        gc.do_sample = True
        gc.guidance_scale = 3.0
        gc.top_k = 250 if shape == "small" else 16
        gc.max_length = 1500 if shape == "small" else 256
        model.save_pretrained(str(path))
        tok.save_pretrained(str(path))
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()
    return str(path)


def build_tiny_musicgen(path) -> str:
    """A tiny random MusicGen saved to ``path`` (created); returns the path as a string."""
    return build_random_musicgen(path, "tiny")
