"""The web side: HTTP and WebSocket for apps and browsers, keys and tiers, tracks, encoding.

Everything here runs on the ``[control]`` asyncio loop (encoders on worker threads) and reaches
the engine only through private daemon slots, scheduled after the DAW's ring slots.
"""
