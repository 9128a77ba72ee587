"""dsp: crossfades, chunk stitching, fades, gain ramps, a soft limiter, interleaving.

One API over NumPy and CuPy: every function takes its array module from its input
(``array_module(x)``), so the same call runs on host or device. NumPy is the complete
reference; CuPy is imported lazily and only when a CuPy array is passed in. This package
imports nothing else of wavebridge. No threads of its own; callers tag their class.
"""
from dsp.core import (array_module, crossfade, equal_power_curves, fade_curve, linear_curves, fade, gain_ramp,
                   soft_limit, stitch, Stitcher, planar_to_interleaved, seam_jump)

from dsp.fused import scale_ring, stitch_and_publish
from dsp.plan import Published
from dsp.resample import Resampler

__all__ = ["Published", "scale_ring", "stitch_and_publish", "Resampler", "array_module", "crossfade", "equal_power_curves",
           "fade_curve", "linear_curves", "fade", "gain_ramp", "soft_limit", "stitch", "Stitcher",
           "planar_to_interleaved", "seam_jump"]
