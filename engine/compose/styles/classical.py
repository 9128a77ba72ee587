"""styles.classical: classical, cinematic, waltz, lullaby and marching band — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.
"""
from __future__ import annotations

from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

_g(name="cinematic", aliases=("cinematic", "epic", "orchestral", "film score", "soundtrack", "trailer",
                              "heroic", "horror", "boss battle", "battle", "adventure", "fantasy", "military march",
                              "marching"),
   bpm=(70, 100), kit=0, fill="toms", bass="long", chords="ostinato", form="calm", humanize_ms=8,
   parts=(_p("drums", D, 0), _p("strings", C, 48), _p("cello", B, 42), _p("brass", PD, 60, "swell"),
          _p("lead", L, 40, "melody"), _p("taiko", P, 116)),
   progressions=CLASSICAL, modes=("minor", "minor", "major"), reverb=0.55, lead_density=0.3,
   grooves=({"floor": "X.....x.X.....x.", "tom_lo": "........x.x.....", "crash+": "X..............."},
            {"floor": "X.......X.x.x...", "kick": "X.......X.......", "tom_mid": "...o.......o...."}),
   intro_drums="none")
_g(name="classical", aliases=("classical", "string quartet", "quartet", "baroque", "chamber", "romantic era",
                              "sonata", "minuet", "nocturne", "symphony", "concerto", "etude", "prelude", "fugue",
                              "requiem", "opera"),
   bpm=(72, 112), kit=0, fill="none", bass="cello", chords="quartet", form="calm", humanize_ms=10,
   vel_var=10, parts=(_p("violin", L, 40), _p("violin 2", C, 40, pan=-0.45, octave=1),
                      _p("viola", C, 41, pan=0.3), _p("cello", B, 42)),
   progressions=CLASSICAL, modes=("major", "minor"), lead_density=0.5, reverb=0.4, grooves=(),
   intro_drums="none")
_g(name="waltz", aliases=("waltz", "valse", "vals", "mazurka"), bpm=(132, 180), meter=(3, 4), kit=40, fill="none",
   bass="waltz", chords="waltz", form="calm", humanize_ms=8, vel_var=8,
   parts=(_p("drums", D, 40), _p("bass", B, 32), _p("piano", C, 0), _p("strings", PD, 48), _p("lead", L, 40)),
   progressions=CLASSICAL, modes=("major", "minor"), lead_density=0.35, intro_drums="all",
   grooves=({"kick": "X...........", "snare": "....o...o...", "phat": "....o...o..."},
            {"kick": "X...........", "swirl": "x...o...o...", "rim": "........?..."}))

