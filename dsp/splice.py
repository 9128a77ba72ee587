"""Where a splice or a fade may start in a ring: ring protocol v1's "Splice" rule, in numbers.

The writer may rewrite not-yet-read audio only from a frame ``s ≥ read_index + guard``, with the
guard at least twice the reader's largest block and at least ``min_ms`` (10 ms by default).
Everything that rewrites buffered audio — a prompt change's crossfade, a stop's fade, a rate
switch's fade — starts at :func:`splice_start`; :func:`guard_frames` is the guard. Pure
arithmetic on frame counts (no ring, no arrays): the daemon's ring writer, its write pipeline and
the slot state machine all call these two, so they agree to the frame. No threads; any caller.
"""
from __future__ import annotations

import math

#: the reader's block size assumed while it has not said (``reader_block_frames == 0``)
UNKNOWN_BLOCK = 1024


def guard_frames(sample_rate: int, reader_block_frames: int, min_ms: float = 10.0, store_s: float = 0.0) -> int:
    """The splice guard in frames: ``≥ 2 ×`` the reader's largest block (``0``: unknown, taken as
    1024) and ``≥ min_ms``; plus twice ``store_s`` (the writer's slowest recent
    read-index-to-publish time, in seconds), which a reader may advance meanwhile."""
    blk = reader_block_frames or UNKNOWN_BLOCK
    guard = max(2 * blk, int(sample_rate * min_ms / 1000.0))
    return guard + int(math.ceil(2.0 * store_s * sample_rate))


def splice_start(read: int, write: int, guard: int) -> int:
    """The first frame a splice or fade may rewrite: ``read + guard``, or ``write`` when less is
    buffered (never before ``read``)."""
    return max(read, min(write, read + guard))
