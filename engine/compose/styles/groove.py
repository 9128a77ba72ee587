"""styles.groove: pop, disco, funk, soul, r&b, gospel and jazz — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.
"""
from __future__ import annotations

from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

_g(name="disco", aliases=("disco", "nu disco", "nu-disco", "boogie"), bpm=(112, 122),
   kit=0, fill="toms", bass="octave", chords="chop8", form="song", humanize_ms=5, vel_var=8,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 28), _p("strings", PD, 48),
          _p("piano", C, 0, "stab", pan=0.4)),
   progressions={"major": ("Imaj7 ii7 iii7 ii7", "vi7 ii7 V7 Imaj7", "IVmaj7 V7 iii7 vi7", "Imaj7 vi7 ii7 V7"),
                 "dorian": ("i7 IV7 i7 IV7", "ii7 V7 ii7 V7"),
                 "minor": ("i7 iv7 i7 iv7", "i7 VII7 VI7 V7", "i7 iv7 VII7 IIImaj7")},
   modes=("major", "minor", "dorian"), intro_drums="kick",
   grooves=({"kick": "X...X...X...X...", "snare": "....X.......X...", "chat": "x.o.x.o.x.o.x.o.",
             "ohat": "..x...x...x...x.", "tamb+": "..x...x...x...x."},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "ohat": "..X...X...X...X.",
             "chat": "xoo.xoo.xoo.xoo.", "conga+": "..x..x.x..x..x.x"}))
_g(name="pop", aliases=("pop", "indie pop", "dance pop", "electropop", "k-pop", "kpop", "hyperpop", "synthpop",
                       "synth pop", "synth-pop", "j-pop", "jpop", "city pop", "bubblegum"),
   bpm=(96, 122), kit=0, fill="toms", bass="pop8", chords="piano8", form="song",
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("piano", C, 0), _p("pad", PD, 89), _p("lead", L, 80)),
   modes=("major", "minor", "major"),
   grooves=({"kick": "X.....x.X.......", "snare": "....X.......X...", "chat": "x.x.x.x.x.x.x.x.",
             "tamb+": "....x.......x...", "clap+": "....x.......x..."},
            {"kick": "X..x..x.X.......", "snare": "....X.......X...", "chat": "x.xxx.xxx.xxx.xx",
             "ohat+": "..............x."}))
_g(name="funk", aliases=("funk", "funky", "afrobeat", "afrobeats", "afro", "go-go", "p-funk", "boogaloo"), bpm=(96, 112), kit=0, fill="snare",
   bass="funk", chords="funk16", form="song", swing=0.06, swing_unit=0.25, humanize_ms=6, vel_var=14,
   parts=(_p("drums", D, 0), _p("bass", B, 36), _p("guitar", C, 28), _p("clavinet", C, 7, "funk16", pan=0.45),
          _p("brass", L, 61, "riff")),
   progressions=BLUES, modes=("mixolydian", "dorian", "minor"),
   grooves=({"kick": "X.X.......X..X..", "snare": "....X..o.o..X..o", "chat": "XoxoXoxoXoxoXoxo",
             "ohat+": "..............x."},
            {"kick": "X..X..X...X.....", "snare": "....X.o.....X.o.", "chat": "xxxxxxxxxxxxxxxx",
             "cowbell+": "x...x...x...x..."}))
_g(name="soul", aliases=("soul", "r&b", "rnb", "r and b", "neo soul", "neo-soul", "motown", "gospel",
                         "slow jam", "quiet storm"),
   bpm=(66, 96), kit=0, fill="toms", bass="soul", chords="soul", form="song", swing=0.1, swing_unit=0.25,
   humanize_ms=8, vel_var=10, laid_back_ms=8,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("rhodes", C, 4), _p("organ", PD, 16),
          _p("lead", L, 65, "melody")),
   progressions=SOUL, modes=("major", "minor", "dorian"), lead_density=0.35,
   grooves=({"kick": "X......xX.......", "snare": "....X.......X...", "chat": "x.x.x.x.x.x.x.x.",
             "rim": "..o.......o....."},
            {"kick": "X.........x..x..", "snare": "....X.......X...", "chat": "xoxoxoxoxoxoxoxo",
             "tamb+": "....x.......x..."}))
_g(name="jazz", aliases=("jazz", "swing", "bebop", "bop", "jazzy", "big band", "jazz trio", "cool jazz"),
   bpm=(110, 170), kit=32, fill="jazz", bass="walking", chords="comp", form="jazz", swing=0.33,
   swing_unit=0.5, humanize_ms=9, vel_var=12,
   parts=(_p("drums", D, 32), _p("upright bass", B, 32), _p("piano", C, 0), _p("sax", L, 65, "bebop")),
   progressions=JAZZ, modes=("major", "minor", "dorian"), lead_density=0.6, intro_drums="all",
   cadence_v=True, reverb=0.25,
   grooves=({"ride": "x...X.x.x...X.x.", "phat": "....x.......x...", "kick": "o...o...o...o...",
             "snare": "..?...?..?....?."},
            {"ride": "x...X.x.x...X.xo", "phat": "....x.......x...", "kick": "o.......o.......",
             "rim": "......?.......x."},
            # jazz waltz: the ride's accent and the kick on one, the hat on two
            {"ride": "X...x.x.x.x.", "phat": "....x.......", "kick": "x...........", "snare": "......?...?."}))
