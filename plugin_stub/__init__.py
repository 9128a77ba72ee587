"""plugin_stub: the DAW side of a slot's ring.

``reader`` is the reference reader (``[audio]`` read path, Python); ``player`` paces it like a
host into a WAV file or a sound card; ``lv2/`` is the C plugin. Imports only ``plugin_stub.protocol``.
"""
