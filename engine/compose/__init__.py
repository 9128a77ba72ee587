"""The synth's composer: prompt words → a :class:`~engine.score.Score` of bars made on demand.

``composer`` reads the prompt and writes the score; ``genres`` is the style library it draws on.
"""
