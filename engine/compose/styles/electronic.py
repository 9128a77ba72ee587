"""styles.electronic: electronic dance music, hip hop and downtempo, ambient — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.
"""
from __future__ import annotations

from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

_g(name="house", aliases=("house", "deep house", "tech house", "garage", "club", "uk garage", "2-step", "2 step", "edm",
                         "big room", "electro house", "afro house", "club music", "dance music"), bpm=(120, 126),
   kit=24, fill="snare", bass="offbeat", chords="stab", form="edm", humanize_ms=2, vel_var=6,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("piano", C, 0), _p("pad", PD, 89), _p("lead", L, 81)),
   progressions=EDM, modes=("minor", "dorian", "major"), intro_drums="kick",
   grooves=({"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x.",
             "chat+": "x.o.x.o.x.o.x.o.", "shaker": "oxoooxoooxoooxoo"},
            {"kick": "X...X...X...X...", "clap": "....X.......X...", "chat": "..x...x...x...x.",
             "ohat+": "..x...x...x...x.", "tamb": "....x.......x..o", "shaker+": "oooooooooooooooo"}))
_g(name="techno", aliases=("techno", "industrial techno", "minimal", "acid", "industrial", "hardstyle", "hard techno",
                          "gabber", "rave", "ebm"), bpm=(126, 136),
   kit=24, fill="snare", bass="rolling", chords="stab", form="edm", humanize_ms=1, vel_var=5,
   parts=(_p("drums", D, 24), _p("bass", B, 39), _p("arp", A, 87), _p("pad", PD, 95)),
   progressions={"minor": ("i i i i", "i i VI i", "i bII i i", "i i iv i"),
                 "phrygian": ("i i bII i", "i i i bII")}, modes=("minor", "phrygian"),
   arp="acid16", intro_drums="kick", reverb=0.2,
   grooves=({"kick": "X...X...X...X...", "chat": "..x...x...x...x.", "rim": "...x..x....x..x.",
             "ride+": "x.x.x.x.x.x.x.x.", "clap+": "....x.......x..."},
            {"kick": "X...X...X...X...", "ohat": "..X...X...X...X.", "chat": "oxoooxoooxoooxoo",
             "clap": "............x...", "rim+": "..x..x..x..x..x."}))
_g(name="trance", aliases=("trance", "uplifting trance", "psytrance", "progressive", "goa", "eurodance", "hands up"), bpm=(134, 140),
   kit=24, fill="snare", bass="gallop", chords="pad", form="edm", humanize_ms=1, vel_var=5,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("arp", A, 81), _p("pad", PD, 50), _p("lead", L, 81)),
   progressions=EDM, modes=("minor",), arp="trance16", intro_drums="kick", reverb=0.35, lead_density=0.6,
   grooves=({"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x.",
             "chat": "x.xxx.xxx.xxx.xx", "crash+": "X..............."},
            {"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..X...X...X...X.",
             "ride+": "x.x.x.x.x.x.x.x."}))
_g(name="synthwave", aliases=("synthwave", "retrowave", "outrun", "80s", "darksynth", "vaporwave", "chiptune", "8-bit",
                             "8 bit", "video game", "chillwave", "new wave"),
   bpm=(84, 112), kit=24, fill="toms", bass="drive8", chords="pad", form="song", humanize_ms=2,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("arp", A, 81), _p("pad", PD, 90), _p("lead", L, 80)),
   progressions=EDM, modes=("minor",), arp="arp16", reverb=0.4,
   grooves=({"kick": "X.......X.......", "snare": "....X.......X...", "clap": "....x.......x...",
             "chat": "x.x.x.x.x.x.x.x.", "ohat+": "......x.......x."},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "chat": "xoxoxoxoxoxoxoxo",
             "tom_lo+": "..............x."}))
_g(name="drum and bass", aliases=("drum and bass", "drum & bass", "drum n bass", "drum'n'bass", "dnb", "d&b",
                                  "jungle", "liquid", "neurofunk"),
   bpm=(168, 176), kit=0, fill="break", bass="reese", chords="pad", form="edm", humanize_ms=3, vel_var=10,
   parts=(_p("drums", D, 0), _p("bass", B, 39), _p("pad", PD, 89), _p("rhodes", C, 4, "stab"),
          _p("lead", L, 88, "sparse")),
   progressions=EDM, modes=("minor", "dorian"), lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "X.X.......XX....", "snare": "....X..o.o..X..o", "ride": "x.x.x.x.x.x.x.x.",
             "ohat+": "......x.......x."},
            {"kick": "X.........x.....", "snare": "....X.......X...", "chat": "x.xxx.xxx.xxx.xx",
             "shaker+": "oooooooooooooooo"},
            {"kick": "X.........X..x..", "snare": "....X..o.o..X.o.", "chat": "xoxoxoxoxoxoxoxo"}))
_g(name="dubstep", aliases=("dubstep", "brostep", "riddim", "future bass"), bpm=(138, 142), kit=24,
   fill="snare", bass="wobble", chords="pad", form="edm", humanize_ms=1,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("pad", PD, 95), _p("lead", L, 81, "sparse")),
   progressions={"minor": ("i i VI VII", "i VI iv V", "i i iv VI"), "phrygian": ("i bII i i",)},
   modes=("minor", "phrygian"), lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "X...............", "snare": "........X.......", "chat": "x.x.x.x.x.x.x.x.",
             "kick2+": "..........X....."},
            {"kick": "X.........X.....", "snare": "........X.......", "chat": "x..x..x..x..x.x.",
             "ohat+": "......x.......x."}))
_g(name="ambient", aliases=("ambient", "drone", "meditation", "new age", "soundscape", "atmospheric",
                            "sleep", "spa", "relaxing", "gamelan", "healing", "zen"),
   bpm=(60, 80), kit=24, fill="none", bass="drone", chords="pad", form="calm", humanize_ms=12, vel_var=8,
   parts=(_p("pad", PD, 89), _p("pad 2", PD, 94, "swell", pan=-0.5), _p("bass", B, 89, "drone"),
          _p("bells", L, 98, "sparse"), _p("arp", A, 88, "arp8")),
   progressions=AMBIENT, modes=("major", "lydian", "minor", "dorian"), lead_density=0.15, reverb=0.7,
   grooves=(), intro_drums="none")
_g(name="lofi", aliases=("lofi", "lo-fi", "lo fi", "chillhop", "hip hop", "hip-hop", "hiphop", "boom bap",
                         "boombap", "rap", "beats to study", "trip hop", "trip-hop", "downtempo", "chillout",
                         "chill out", "jazzhop", "jazz hop", "study beats"),
   bpm=(70, 92), kit=8, fill="snare", bass="lofi", chords="lofi", form="song", swing=0.16,
   swing_unit=0.25, humanize_ms=10, vel_var=12, laid_back_ms=14,
   parts=(_p("drums", D, 8), _p("bass", B, 33), _p("rhodes", C, 4), _p("lead", L, 11)),
   progressions=SOUL, modes=("minor", "dorian", "major"), lead_density=0.3, intro_drums="none",
   grooves=({"kick": "X.........X.....", "snare": "....X.......X...", "chat": "x.x.x.x.x.x.x.x.",
             "rim": "..........?...o.", "kick2": ".......?........"},
            {"kick": "X..x......X..x..", "snare": "....X.......X..o", "chat": "x.xox.xox.xox.xo",
             "ohat+": "..............x."},
            {"kick": "X......x.xX.....", "snare": "....X.......X...", "chat": "xoxoxoxoxoxoxoxo",
             "shaker": "..o...o...o...o."}))
_g(name="trap", aliases=("trap", "drill", "phonk", "grime", "rage", "plugg"), bpm=(130, 150), kit=25, fill="roll",
   bass="808", chords="pad", form="edm", humanize_ms=1, vel_var=10,
   parts=(_p("drums", D, 25), _p("808", B, 38), _p("bells", L, 14, "sparse"), _p("pad", PD, 91)),
   progressions={"minor": ("i i VI VI", "i VI iv V", "i iv i VI", "i VII VI V"),
                 "phrygian": ("i bII i i", "i bII bVI V")}, modes=("minor", "phrygian"),
   lead_density=0.35, intro_drums="hats",
   grooves=({"kick": "X.....X...x.....", "clap": "........X.......", "chat": "x.x.x.x.x.rrx.x.",
             "ohat+": "..............x."},
            {"kick": "X..X......X..X..", "clap": "........X.......", "chat": "xxxxxxtxxxxxrrxx",
             "snare+": "...............o"},
            {"kick": "X.........X.x...", "clap": "........X.......", "chat": "x.xtx.x.x.xtx.rr"}))
