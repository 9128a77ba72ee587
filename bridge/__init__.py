"""wavebridge daemon side, in four rooms.

``bridge.core``: the daemon, its slots, rings, command inbox, event bus and the one engine thread.
``bridge.control``: OSC and MIDI, the surfaces that turn input into commands.
``bridge.web``: HTTP and WebSocket for apps and browsers (keys, tiers, tracks, encoding).
``bridge.ops``: the CLI, configuration, systemd, metrics, demo, render and benchmarks.

Imports follow one rule (``docs/ARCHITECTURE.md``; ``tests/test_architecture.py`` holds it):
``bridge`` may import ``engine``, ``dsp`` and ``plugin_stub``; nothing imports ``bridge``.
"""
__version__ = "0.1.0"
