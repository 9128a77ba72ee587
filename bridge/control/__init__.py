"""Control surfaces: OSC (server, decoder, network guard) and MIDI (in and out).

Each is a thin ``[control]`` adapter: it turns what arrives into core commands and answers from
core events; none holds slot state of its own.
"""
