"""styles.rock_folk: rock, metal, blues, country, folk, Celtic and Balkan music — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.
"""
from __future__ import annotations

from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

_g(name="rock", aliases=("rock", "indie rock", "punk", "grunge", "alternative", "classic rock", "blues rock",
                         "garage rock", "blues", "country", "folk", "folk rock", "bluegrass", "americana",
                         "surf", "shoegaze", "post rock", "post-rock", "emo", "pop punk", "britpop", "hard rock",
                         "psychedelic", "celtic", "sea shanty"),
   bpm=(100, 150), kit=8, fill="toms", bass="rock8", chords="power", form="song", humanize_ms=6, vel_var=10,
   parts=(_p("drums", D, 8), _p("bass", B, 34), _p("distorted guitar", C, 30), _p("organ", PD, 18),
          _p("lead", L, 29, "melody")),
   progressions=BLUES, modes=("minor", "major", "mixolydian"), reverb=0.18, intro_drums="all",
   grooves=({"kick": "X.......X.x.....", "snare": "....X.......X...", "chat": "x.x.x.x.x.x.x.x.",
             "crash+": "X..............."},
            {"kick": "X..x....X.x.....", "snare": "....X.......X...", "ride": "x.x.x.x.x.x.x.x.",
             "bell+": "x...x...x...x..."}))
_g(name="metal", aliases=("metal", "heavy metal", "thrash", "metalcore", "djent", "doom"), bpm=(140, 180),
   kit=16, fill="toms", bass="metal", chords="chug", form="song", humanize_ms=3, vel_var=6,
   parts=(_p("drums", D, 16), _p("bass", B, 34), _p("distorted guitar", C, 30),
          _p("guitar 2", C, 29, "power", pan=0.5), _p("lead", L, 30, "melody")),
   progressions={"minor": ("i VI VII i", "i i VI VII", "i bII i VII", "i iv VI V"),
                 "phrygian": ("i bII i i", "i bII VII i")}, modes=("minor", "phrygian"), reverb=0.15,
   intro_drums="all",
   grooves=({"kick": "XxXxXxXxXxXxXxXx", "snare": "....X.......X...", "china": "x.x.x.x.x.x.x.x."},
            {"kick": "X.X.X.X.X.X.X.X.", "snare": "....X.......X...", "ride": "x.x.x.x.x.x.x.x.",
             "crash+": "X.......X......."}))
