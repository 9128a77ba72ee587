"""The synth's composer: prompt words → a :class:`~engine.score.Score` of bars made on demand.

``compose(prompt, seed, bpm)`` is the entry point (:mod:`.composer`, which ties the rest together):

- ``prompt`` reads the words (tempo, key, meter, genre, moods, instruments) into a ``PromptSpec``;
- ``band`` decides what the words leave open, once: genre, tempo, key, the parts and their mix, the groove;
- ``form`` plans the 8-bar sections (kind, chords, voicings, motif, resting parts);
- ``harmony`` is the chord and voicing arithmetic they share;
- ``drums``, ``bass``, ``comping`` (chords, pads, arpeggios) and ``melody`` write one bar of a part;
- ``genres`` is the style library they all draw on (pure data).

Imports only :mod:`engine.score` and the standard library. ``[engine]``
"""
from engine.compose.composer import compose, composer_of
from engine.compose.prompt import read_prompt

__all__ = ["compose", "composer_of", "read_prompt"]
