"""The ``musicgen`` backend: MusicGen from a local directory, streamed step by step.

``backend`` is the :class:`~engine.backend.Backend` (loading, batching, EnCodec windows);
``decode`` is its own decoder loop (static KV cache, CUDA graphs where there is a GPU).
"""
