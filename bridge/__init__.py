"""wavebridge daemon side: OSC/MIDI control, slot and ring management, CLI.

Imports follow one rule: ``bridge`` may import ``engine`` and ``dsp``; ``bridge.protocol``
imports nothing of ours so that ``plugin_stub`` can use it alone.
"""
__version__ = "0.1.0"
