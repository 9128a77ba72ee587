"""engine: generation backends, warm-up, the scheduler and batching.

Knows no transport and no ring: the scheduler is told each slot's buffered frames as numbers
and hands back audio. Imports ``dsp`` only. Backends load lazily by name (``get_backend``).
"""
from engine.backend import Backend, BackendError, OutOfMemory, Stream, get_backend, available_backends

__all__ = ["Backend", "BackendError", "OutOfMemory", "Stream", "get_backend", "available_backends"]
