"""The embedded ``synth`` backend: the composer's score performed by FluidSynth or oscillators.

``backend`` is the :class:`~engine.backend.Backend`; ``perform`` turns a score into timed events
and mixes; ``fluid`` plays them with a SoundFont; ``oscillators`` is the weight-free fallback.
"""
