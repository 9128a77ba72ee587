"""The daemon's core: slots, rings, commands, the slot state machine and the ``[engine]`` thread.

Knows no transport: OSC, MIDI and HTTP hand it :class:`~bridge.core.commands.Command` objects
through the daemon's inbox and hear back through its event bus.
"""
