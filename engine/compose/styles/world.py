"""styles.world: Latin America, the Caribbean and Africa — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.
"""
from __future__ import annotations

from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

_g(name="reggae", aliases=("reggae", "dub", "roots", "ska", "one drop", "one-drop", "rocksteady", "dancehall",
                           "reggaeton", "dembow", "lovers rock"),
   bpm=(68, 84), kit=0, fill="toms", bass="dub", chords="skank", form="song", swing=0.18, swing_unit=0.5,
   humanize_ms=8, vel_var=10,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 27), _p("organ", C, 16, "bubble", pan=0.45),
          _p("lead", L, 22, "sparse")),
   progressions={"major": ("I IV I V", "I IV V IV", "I vi IV V", "I I IV IV"),
                 "minor": ("i iv i iv", "i VII i VII", "i iv VII III", "i VI VII i")},
   modes=("minor", "major"), lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "........X.......", "rim": "........X.......", "chat": "x.x.x.x.x.x.x.x.",
             "ohat+": "..............x."},
            {"kick": "........X.......", "snare": "........X.......", "chat": "x.xxx.xxx.xxx.xx",
             "rim": "......o.......o."}))
_g(name="bossa nova", aliases=("bossa nova", "bossa", "latin", "samba", "brazilian", "salsa", "cuban",
                               "tropical", "tango", "bolero", "mambo", "cha cha", "cha-cha", "rumba", "cumbia",
                               "flamenco", "mariachi", "afro-cuban", "bachata", "merengue"),
   bpm=(124, 144), kit=32, fill="jazz", bass="bossa", chords="bossa", form="jazz", humanize_ms=7, vel_var=8,
   parts=(_p("drums", D, 32), _p("bass", B, 32), _p("nylon guitar", C, 24), _p("flute", L, 73),
          _p("strings", PD, 49)),
   progressions=BOSSA, modes=("major", "minor"), lead_density=0.4, intro_drums="all",
   grooves=({"kick": "X.....x.X.....x.", "rim": "x.....x.....x.......x.....x.....",
             "chat": "x.o.x.o.x.o.x.o.", "shaker": "oxoxoxoxoxoxoxox"},
            {"kick": "X.....x.X.....x.", "rim": "......x.....x...x.....x....x....",
             "shaker": "xoxoxoxoxoxoxoxo", "conga+": "..x..x.x..x..x.x"}))
