"""styles.rock_folk: rock, metal, blues, country, folk, Celtic and Balkan music — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.

Besides the styles this module adds, with ``setdefault`` (never replacing an entry): the
instrument words ``mellotron``, ``moog``, ``pedal steel``, ``telecaster``, ``mandolin``,
``tin whistle``, ``penny whistle``, ``concertina``, ``bouzouki``; the drum words ``tapan`` and
``davul``; and the mode ``freygish`` (phrygian dominant, klezmer's and surf's "Misirlou" scale)
with its own chord family.
"""
from __future__ import annotations

from engine.compose import genres as G
from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

# --- words, drums and a mode these styles bring ---------------------------------------------------
for _w, _v in {"mellotron": (49, PD, ""), "moog": (81, L, ""), "moog bass": (39, B, ""), "pedal steel": (26, PD, "swell"),
               "telecaster": (27, C, ""), "mandolin": (25, C, ""), "tin whistle": (78, L, ""),
               "penny whistle": (78, L, ""), "concertina": (21, C, ""), "bouzouki": (25, C, "")}.items():
    G.INSTRUMENTS.setdefault(_w, _v)
for _w in ("tapan", "davul"):           # the Balkan bass drum: the big beater and the thin switch
    G.DRUM_WORDS.setdefault(_w, (None, {"kick": "X...x...X...x...", "rim": "..x...x...x...x."}, None))
G.MODES.setdefault("freygish", (0, 1, 4, 5, 7, 8, 10))       # phrygian dominant
G.MODE_FAMILY.setdefault("freygish", "freygish")
G.MODE_ALIASES.setdefault("phrygian dominant", "freygish")

#: freygish chords: the major I, the bII a semitone above, the minor iv and the minor vii
FREYGISH = ("I II I I", "I iv I II", "I vii I I", "I I iv II", "I II vii I")
#: … and any style's, when a prompt asks for the mode (a "hijaz riff" in metal, a "hicaz makam" in
#: trap): the minor progressions a style without freygish ones fell back to played no freygish at all
G.PROGRESSIONS.setdefault("freygish", FREYGISH)

# --- rock -------------------------------------------------------------------------------------------
_g(name="rock", aliases=("rock", "slowcore", "sadcore", "madchester", "baggy", "zamrock", "zam rock", "zambian rock", "psych rock", "heartland rock", "heartland", "glam rock", "glam rok", "glitter rock", "glam",
                         "indie rock", "alternative", "alternative rock", "alt rock", "classic rock",
                         "hard rock", "arena rock", "stadium rock", "shoegaze", "post rock", "post-rock", "emo",
                         "britpop", "psychedelic", "psychedelic rock", "southern rock", "rock and roll",
                         "rock n roll", "rock'n'roll", "pub rock", "power pop", "space rock", "spacerock"),
   bpm=(100, 150), kit=8, fill="toms", bass="rock8", chords="power", form="song", humanize_ms=6, vel_var=10,
   family="rock", tone=0.35, reverb=0.18, intro_drums="all",
   parts=(_p("drums", D, 8), _p("bass", B, 34), _p("overdriven guitar", C, 29, "power"),
          _p("electric guitar", C, 27, "pats", pan=0.5), _p("organ", PD, 18), _p("lead", L, 29, "melody")),
   progressions=dict(BLUES, major=BLUES["major"] + ("I V vi IV", "I IV I V")), modes=("minor", "major", "mixolydian"),
   bass_pats=("R.R.R.R.R.R.R.R.", "R.R.R.R.R.R.5.A.", "R..RR.R.R.R.8.5."),
   comp_pats=("S..uS.u.S..uS.u.", "x.x.x.x.x.x.x.x.", "S...S...S.u.S..."),
   grooves=({"kick": "X.......X.x.....", "snare": "....X.......X..o", "chat": "x.x.x.x.x.x.x.x.",
             "crash+": "X..............."},
            {"kick": "X..x....X.x.....", "snare": "....X.......X..?", "ride": "x.x.x.x.x.x.x.x.",
             "bell+": "x...x...x...x..."},
            {"kick": "X.x.....X.x..x..", "snare": "....X.......X...", "chat": "x.xxx.x.x.xxx.x.",
             "ohat+": "......x.......x."}))
_g(name="punk", aliases=("punk", "punk rock", "pop punk", "pop-punk", "hardcore punk", "hardcore", "skate punk",
                         "garage rock", "garage punk", "d-beat", "crust punk"),
   bpm=(160, 200), kit=8, fill="snare", bass="drive8", chords="power", form="song", humanize_ms=4, vel_var=6,
   family="rock", tone=0.6, reverb=0.1, intro_drums="all", lead_density=0.45,
   parts=(_p("drums", D, 8), _p("bass", B, 34), _p("distorted guitar", C, 30, "power"),
          _p("guitar 2", C, 29, "power", pan=0.6), _p("lead", L, 30, "melody")),
   progressions={"major": ("I IV V IV", "I V vi IV", "I bVII IV I", "I IV I V", "I I IV V"),
                 "minor": ("i VI III VII", "i VII VI VII", "i iv VI V")}, modes=("major", "major", "minor"),
   grooves=({"kick": "X.....x.X.....x.", "snare": "....X.......X...", "ohat": "x.x.x.x.x.x.x.x."},   # d-beat
            {"kick": "X...X...X...X...", "snare": "..X...X...X...X.", "ride": "X...X...X...X..."},   # polka beat
            {"kick": "X.x.....X.x...x.", "snare": "....X.......X...", "chat": "X.X.X.X.X.X.X.X.",
             "crash+": "X.......X......."}))
_g(name="grunge", aliases=("grunge", "seattle", "seattle sound", "sludge", "noise rock", "post-grunge", "post grunge",
                           "nineties rock", "90s rock"),
   riffs=True, bpm=(88, 126), kit=8, fill="toms", bass="rock8", chords="power", form="song", humanize_ms=7, vel_var=12,
   family="rock", tone=0.1, reverb=0.22, intro_drums="all",
   parts=(_p("drums", D, 8), _p("bass", B, 34), _p("distorted guitar", C, 30, "power"),
          _p("clean guitar", A, 27, "arp8"), _p("lead", L, 29, "melody")),
   progressions={"major": ("I IV bIII bVI", "I bIII IV IV", "I bVII bIII IV"),
                 "minor": ("i III iv VI", "i VI III VII", "i i III IV", "i bII III iv")}, modes=("minor", "major"),
   bass_pats=("R-R.R-R.R-R.8-7.", "R---R.R.5---R.A.", "R.RRR.R.R.RRR.5."),
   grooves=({"kick": "X.......X.x.....", "snare": "....X.......X...", "floor": "x.x.x.x.x.x.x.x.",
             "crash+": "X..............."},
            {"kick": "X.xx....X.xx....", "snare": "....X.......X.o.", "ride": "X...X...X...X...", "ohat+": "..x...x...x...x."},
            {"kick": "X.......X.....x.", "snare": "........X.......", "floor": "....x.......x...",
             "ride": "X...x...X...x..."}))
_g(name="progressive rock", aliases=("progressive rock", "zeuhl", "kobaian", "prog rock", "prog-rock", "prog", "art rock", "symphonic rock",
                                     "progressive metal", "prog metal", "math rock", "canterbury", "krautrock"),
   bpm=(104, 132), meter=(7, 8), groups={(7, 8): (2, 2, 3)}, kit=0, fill="toms", bass="rock8", chords="pats",
   form="song", humanize_ms=4, vel_var=10, family="rock", tone=0.1, reverb=0.32, lead_density=0.6,
   intro_drums="all",
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("rock organ", C, 18), _p("mellotron", PD, 49),
          _p("guitar", C, 29, "power", pan=0.55), _p("synth lead", L, 81, "melody")),
   progressions={"minor": ("i VI III VII", "i iv VII III", "i VII VI VII", "i bII VII i"),
                 "dorian": ("i IV i i", "i ii III IV", "i VII IV i"),
                 "lydian": ("I II/I I II/I", "I II/I vii I", "I II/I V I"),
                 "mixolydian": ("I bVII IV I", "I v bVII I")},
   modes=("dorian", "minor", "lydian", "mixolydian"),
   bass_pats=("R--.5--.R---A.", "R.R.R.5.8-.5.A", "R-.RR-.R5--5.A"),
   comp_pats=("X--.x--.X----.", "x.x.x.x.X.x.x.", "X---X---X-.x.."),
   grooves=({"kick": "X.......X.....", "snare": "....X.......X.", "chat": "X.x.X.x.X.x.x.",
             "ride+": "x.x.x.x.x.x.x."},
            {"kick": "X.x.....X.x...", "snare": "....X.......o.", "ride": "X.x.X.x.X.x.x.",
             "bell+": "X...X...X....."},
            {"kick": "X...x...X...x.", "snare": "..o.X.....X...", "chat": "xxx.xxx.xxxxx.",
             "tom_lo+": "............x."}))
_g(name="surf rock", aliases=("surf rock", "surf", "surf music", "surf guitar", "hot rod", "beach rock",
                              "instrumental surf", "psychobilly", "psycho billy", "psycho-billy", "neo-rockabilly", "neorockabilly"),
   bpm=(150, 180), kit=0, fill="toms", bass="rock8", chords="pats", form="song", humanize_ms=5, vel_var=8,
   family="rock", tone=0.4, reverb=0.55, intro_drums="all", lead_density=0.7,
   parts=(_p("drums", D, 0), _p("bass", B, 34), _p("electric guitar", C, 27), _p("organ", PD, 17),
          _p("surf guitar", L, 27, "melody")),
   progressions={"major": ("I IV I V", "I vi IV V", "I I IV IV", "I IV V IV"),
                 "minor": ("i iv i V", "i VII VI V"), "freygish": ("I II I I", "I II I II", "I iv II I")},
   modes=("major", "freygish", "minor"),
   bass_pats=("R.R.R.R.R.R.R.R.", "R.RRR.R.5.558.A."),
   comp_pats=("tttttttttttttttt", "x.xxx.xxx.xxx.xx", "tttttttt....x.x."),      # tremolo-picked double stops
   grooves=({"kick": "X.....x.X.....x.", "snare": "....X.......X...", "chat": "xxxxxxxxxxxxxxxx"},
            {"kick": "X.......X.......", "snare": "....X.......X...", "tom_mid": "xxxxXxxxxxxxXxxx"},
            {"kick": "X..x..x.X..x..x.", "snare": "....X.......X...", "tom_hi": "..x...x...x...x.",
             "ride": "x...x...x...x...", "tamb+": "....x.......x..."}))

# the power ballad: electric piano and strings over a slow kit that hits hard in the chorus,
# the guitar holding power chords there and taking the solo
_g(name="power ballad", family="rock",
   aliases=("power ballad", "power ballads", "rock ballad", "80s ballad", "80s power ballad", "hair metal ballad",
            "arena ballad", "stadium ballad", "hard rock ballad", "glam ballad", "soft rock ballad",
            "arena rock ballad", "stadium rock ballad", "hair metal power ballad"),
   bpm=(62, 80), kit=8, fill="toms", bass="pats", chords="piano8", form="song", humanize_ms=6, vel_var=10,
   tone=0.2, reverb=0.42, lead_density=0.4, intro_drums="none",
   parts=(_p("drums", D, 8), _p("bass", B, 34), _p("electric piano", C, 5), _p("overdriven guitar", C, 29, "power"),
          _p("strings", PD, 48), _p("guitar solo", L, 29, "melody")),
   progressions={"major": ("I V vi IV", "vi IV I V", "I iii IV V", "IV V I vi", "I V/vii vi IV"),
                 "minor": ("i VI III VII", "i VII VI VII", "VI VII i i")},
   modes=("major", "major", "minor"),
   bass_pats=("R-------R---5---", "R-------R-----A-", "R-----R-R---5-A-"),
   # slow and wide: 16th hats, a kick that pushes into three; quarter open hats; a rim-click verse
   grooves=({"kick": "X......xX.......", "snare": "....X.......X...", "chat": "xxxxxxxxxxxxxxxx",
             "crash+": "X..............."},
            {"kick": "X.......X.....x.", "snare": "....X.......X...", "ohat": "x...x...x...x...",
             "tom_lo+": "..............xx"},
            {"kick": "X..x....X.......", "rim": "....x.......x...", "chat": "x.xxx.xxx.xxx.xx",
             "snare+": "....X.......X..."}))

# --- blues ------------------------------------------------------------------------------------------
#: eight-bar blues (the form's sections are eight bars): "Key to the Highway", "Trouble in Mind" …
_EIGHT_BAR = {"major": ("I7 V7 IV7 IV7 I7 V7 I7 V7", "I7 I7 IV7 IV7 I7 V7 I7 V7", "I7 IV7 I7 I7 IV7 IV7 I7 V7"),
              "minor": ("i7 i7 iv7 iv7 i7 V7 i7 V7", "i7 iv7 i7 i7 VI7 V7 i7 V7")}
_g(name="blues", chromatic_approach=True, aliases=("blues", "slow blues", "delta blues", "electric blues", "blues ballad", "minor blues",
                          "juke joint", "mississippi blues", "country blues", "soul blues", "swamp blues"),
   bpm=(50, 72), meter=(12, 8), kit=8, fill="toms", bass="pats", chords="pats", form="song", humanize_ms=8,
   vel_var=12, family="blues", tone=-0.1, reverb=0.3, lead_density=0.4, intro_drums="all",
   parts=(_p("drums", D, 8), _p("bass", B, 33), _p("piano", C, 0), _p("organ", PD, 16),
          _p("lead guitar", L, 29, "melody")),
   progressions=_EIGHT_BAR, modes=("major", "major", "minor"),
   bass_pats=("R---5.6---5.8---6.5---A.", "R-----5-----8-----5---A."),
   comp_pats=("X.o.o.x.o.o.X.o.o.x.o.o.", "x---x-x---x-x---x-x---x-"),                 # piano triplets
   grooves=({"ride": "X.x.x.X.x.x.X.x.x.X.x.x.", "kick": "X...........X.......x...",
             "snare": "......X...........X....."},
            {"chat": "X.x.x.X.x.x.X.x.x.X.x.x.", "kick": "X.......x...X.......x...",
             "snare": "......X.....?.....X....o"}))
_g(name="blues shuffle", chromatic_approach=True, aliases=("blues shuffle", "shuffle", "chicago blues", "texas blues", "blues rock",
                                  "boogie woogie", "boogie-woogie", "jump blues", "rhythm and blues shuffle",
                                  "rockabilly"),
   bpm=(100, 140), kit=8, fill="toms", bass="pats", chords="pats", form="song", humanize_ms=6, vel_var=10,
   swing=0.33, family="blues", tone=0.05, reverb=0.22, lead_density=0.45, intro_drums="all",
   parts=(_p("drums", D, 8), _p("bass", B, 33), _p("electric guitar", C, 27), _p("piano", C, 0, "piano8", pan=0.5),
          _p("harmonica", L, 22, "melody")),
   progressions=_EIGHT_BAR, modes=("major",),
   bass_pats=("R.3.5.6.7.6.5.3.", "R.R.3.5.6.5.3.A."),                              # the boogie walk
   comp_pats=("x.x.x.x.x.x.x.x.", "X.x.X.x.X.x.X.x."),
   grooves=({"kick": "X.......X.....x.", "snare": "....X.......X...", "ride": "x.x.x.x.x.x.x.x."},
            {"kick": "X.....x.X.....x.", "snare": "....X...o...X...", "chat": "X.x.X.x.X.x.X.x."}))

# --- metal ------------------------------------------------------------------------------------------
_g(name="metal", aliases=("metal", "orchestral metal", "symphonic metal", "folk metal", "pagan metal", "neoclassical metal", "neo-classical metal", "neue deutsche harte", "ndh", "rammstein", "tanzmetall", "deathcore", "death core", "kawaii metal", "avant-garde metal", "glam metal", "hair metal", "pop metal", "sleaze metal", "viking metal", "post-metal", "post metal", "mathcore", "math metal", "math-core",
                          "industrial metal", "groove metal", "heavy metal", "nwobhm", "power metal", "speed metal", "classic metal",
                          "traditional metal", "metalcore", "djent", "nu metal", "nu-metal", "melodeath", "melodic death metal", "melodic death", "gothenburg metal", "gothenburg sound", "gothenburg melodeath"),
   riffs=True, bpm=(120, 160), kit=16, fill="toms", bass="pats", chords="chug", form="song", humanize_ms=3, vel_var=6,
   family="metal", tone=0.75, reverb=0.15, intro_drums="all",
   parts=(_p("drums", D, 16), _p("bass", B, 34), _p("distorted guitar", C, 30, "chug"),
          _p("guitar 2", C, 29, "power", pan=0.5), _p("lead", L, 30, "melody")),
   progressions={"minor": ("i VI VII i", "i i VI VII", "i iv VI V", "i VII VI VII"),
                 "phrygian": ("i bII i i", "i bII VII i")}, modes=("minor", "phrygian"),
   bass_pats=("R.RRR.RRR.RRR.RR", "R.RRR.RR8.88R.RR"),                              # the gallop
   grooves=({"kick": "X.xxX.xxX.xxX.xx", "snare": "....X.......X...", "ride": "x.x.x.x.x.x.x.x."},
            {"kick": "XxxxXxxxXxxxXxxx", "snare": "....X.......X...", "china": "x...x...x...x...",
             "ride+": "x.x.x.x.x.x.x.x."},
            {"kick": "X.xxX.xxXxxxXxxx", "snare": "....X.......X...", "chat": "x.x.x.x.x.x.x.x.",
             "crash+": "X.......X......."}))
_g(name="thrash", aliases=("thrash", "thrash metal", "speed thrash", "death metal", "extreme metal",
                           "bay area thrash", "grindcore", "tech death", "tech-death", "technical death metal",
                           "technical death", "brutal death metal", "brutal death"),
   riffs=True, bpm=(170, 210), kit=16, fill="toms", bass="metal", chords="chug", form="song", humanize_ms=2, vel_var=5,
   family="metal", tone=0.8, reverb=0.12, intro_drums="all", lead_density=0.6,
   # the second guitar tremolo-picks the chord's minor triad over the first's palm-muted power
   # chords: power chords alone, distorted, were heard in the parallel major (5 of 10 takes)
   parts=(_p("drums", D, 16), _p("bass", B, 34), _p("distorted guitar", C, 30, "chug"),
          _p("guitar 2", C, 30, "tremolo", pan=0.6), _p("lead", L, 30, "melody")),
   progressions={"minor": ("i i bII i", "i VI i VII", "i i iv bII"), "phrygian": ("i bII i i", "i bII VII bII"),
                 "locrian": ("i bII i i", "i i bII bII")}, modes=("minor", "phrygian"),
   grooves=({"kick": "XxxxXxxxXxxxXxxx", "snare": "..X...X...X...X.", "china": "X...X...X...X..."},  # thrash beat
            {"kick": "XxxxXxxxXxxxXxxx", "snare": "X.X.X.X.X.X.X.X.", "ride": "x.x.x.x.x.x.x.x."},  # blast
            {"kick": "XxxxXxxxXxxxXxxx", "snare": "....X..x....X...", "bell": "x.x.x.x.x.x.x.x."}))
# black metal: tremolo-picked minor triads (the third on top: a power chord's distortion would make
# its key sound major), traditional blasts with the cymbal on the beat, a d-beat; cold and reverberant
_g(name="black metal", aliases=("black metal", "raw black metal", "atmospheric black metal", "symphonic black metal",
                                "depressive black metal", "dsbm", "blackgaze", "post-black metal", "post black metal",
                                "norwegian black metal", "second wave black metal", "trve kvlt"),
   bpm=(160, 200), kit=16, fill="toms", bass="pats", chords="tremolo", form="song", humanize_ms=3, vel_var=6,
   family="metal", tone=0.35, reverb=0.42, intro_drums="all", lead_density=0.3, cadence_v=False,
   parts=(_p("drums", D, 16), _p("bass", B, 34), _p("distorted guitar", C, 30, "tremolo"),
          _p("guitar 2", C, 30, "tremolo", pan=0.6, octave=1), _p("strings", PD, 49)),
   progressions={"minor": ("i VI VII i", "i iv VI v", "i VI iv VII", "i i VI VI", "i v VI VII"),
                 "phrygian": ("i bII i VII", "i bII VI i")}, modes=("minor", "minor", "phrygian"),
   bass_pats=("R.R.R.R.R.R.R.R.", "R.R.R.R.R.R.5.5."),
   grooves=({"kick": "XxXxXxXxXxXxXxXx", "snare": ".X.X.X.X.X.X.X.X", "crash": "X...x...X...x..."},  # blast
            {"kick": "X.x...X.X.x...X.", "snare": "....X.......X...", "ride": "X.x.X.x.X.x.X.x."},   # d-beat
            {"kick": "X.X.X.X.X.X.X.X.", "snare": "X.X.X.X.X.X.X.X.", "china": "X...X...X...X...",  # hammer blast
             "crash+": "X.......X......."}))
_g(name="doom", aliases=("doom", "black sabbath", "sabbath riff", "drone-metal", "drone doom", "doom metal", "stoner", "stoner rock", "stoner metal", "sludge metal",
                         "funeral doom", "drone metal"),
   riffs=True, bpm=(60, 75), kit=16, fill="toms", bass="pats", chords="power", form="song", humanize_ms=8, vel_var=8,
   family="metal", tone=-0.15, reverb=0.38, intro_drums="all", lead_density=0.3,
   parts=(_p("drums", D, 16), _p("bass", B, 34), _p("distorted guitar", C, 30, "power"),
          _p("guitar 2", C, 29, "power", pan=0.6), _p("organ", PD, 19), _p("lead", L, 30, "melody")),
   progressions={"minor": ("i i VI VII", "i VI i bII", "i iv i VI"), "phrygian": ("i bII i i", "i i bII VII"),
                 "locrian": ("i bII i i",)}, modes=("minor", "phrygian", "locrian"),
   bass_pats=("R---------------", "R-------5---R-A."),
   grooves=({"kick": "X.......X.x.....", "snare": "........X.......", "ride": "X...X...X...X..."},
            {"kick": "X.....x.X.......", "snare": "........X.......", "chat": "x.x.x.x.x.x.x.x.",
             "crash+": "X.......X......."},
            {"kick": "X...............", "snare": "........X.......", "floor": "X...x...X...x...",
             "china+": "X...X...X...X..."}))

# --- country, bluegrass, folk -------------------------------------------------------------------------
_g(name="country", aliases=("country", "bakersfield", "bakersfield sound", "sertanejo", "sertanejo universitario", "musica sertaneja", "modao", "country and western", "honky tonk country", "nashville", "outlaw country",
                            "western", "cowboy", "two-step", "two step", "train beat", "americana", "alt country",
                            "alt-country", "country rock", "texas country", "honky tonk", "honky-tonk", "honkytonk", "honky tonk two-step"),
   bpm=(96, 132), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=5, vel_var=8,
   family="country", tone=0.15, reverb=0.18, intro_drums="all", lead_density=0.55,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("acoustic guitar", C, 25), _p("pedal steel", PD, 26, "swell"),
          _p("telecaster", C, 27, "chop8", pan=0.55), _p("fiddle", L, 110, "melody")),
   progressions={"major": ("I IV I V", "I I IV IV I I V V", "I IV V I", "I V IV I", "I vi IV V"),
                 "mixolydian": ("I bVII IV I", "I I bVII IV")}, modes=("major", "major", "mixolydian"),
   bass_pats=("R.......5.......", "R.......5.....A.", "R.....R.5......."),             # two-beat: root, fifth
   comp_pats=("....S.u.....S.u.", "..u.S.u...u.S.u.", "S...S.u.S...S.u."),             # boom-chick
   grooves=({"kick": "X.......X.......", "rim": "....X.......X...", "chat": "x.xxx.xxx.xxx.xx"},    # two-step
            {"kick": "X.......X.......", "snare": "ooxoXoxoooxoXoxo", "chat": "..x...x...x...x."},  # train beat
            {"kick": "X...X...X...X...", "rim": "....X.......X...", "ride": "x..xx..xx..xx..x",     # shuffle two-beat
             "tamb+": "..x...x...x...x."}))
# western swing (Bob Wills, Milton Brown, Spade Cooley): a country dance band playing swing — twin
# fiddles on the head, a steel guitar taking a chorus, the piano and an archtop comping on two and
# four over a two-beat upright bass, brushes; swung eighths, a ragtime's dominant chain
_g(name="western swing", aliases=("western swing", "texas swing", "bob wills", "texas playboys", "spade cooley",
                                  "milton brown", "hot string band", "country swing", "western swing band"),
   bpm=(150, 200), kit=40, fill="jazz", bass="pats", chords="pats", form="jazz", swing=0.28, swing_unit=0.5,
   family="country", tone=0.1, reverb=0.18, humanize_ms=6, vel_var=9, intro_drums="all", lead_density=0.7,
   chromatic_approach=True,
   parts=(_p("drums", D, 40), _p("upright bass", B, 32), _p("piano", C, 0), _p("jazz guitar", C, 26, pan=0.45),
          _p("steel guitar", PD, 26, "swell", pan=-0.35), _p("fiddle", L, 110, "melody"),
          _p("fiddle 2", L, 110, "sparse", pan=0.3, level=0.4)),
   progressions={"major": ("I VI7 II7 V7", "I I7 IV iv", "I I IV IV I I V7 V7", "I VI7 ii V7", "IV IV I VI7 II7 V7 I I")},
   modes=("major",),
   bass_pats=("R.......5.......", "R.......5.....A.", "R...5...R...A..."),      # the two-beat, walking into the change
   comp_pats=("....X.......X...", "..o.X.....o.X...", "....X...o...X.o."),      # the piano's and guitar's afterbeat
   # the dance-hall drummer: the bass drum feathered on all four under the brushes' swirl, the hi-hat
   # foot and the snare on two and four; the brushes' shuffle on the snare, its accents on two and four
   grooves=({"kick": "o...o...o...o...", "phat": "....x.......x...", "swirl": "x.x.x.x.x.x.x.x.",
             "snare": "....X.......X..."},
            {"kick": "o.......o.......", "snare": "x..xX..xx..xX..x", "phat": "....x.......x..."}))
_g(name="bluegrass", aliases=("bluegrass", "bluegras", "blue grass", "bluegrss", "newgrass", "hillbilly", "appalachian", "old time", "old-time",
                              "mountain music", "jug band", "hoedown", "banjo picking"),
   bpm=(124, 160), kit=40, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=5, vel_var=8,
   family="country", tone=0.25, reverb=0.14, lead_density=0.75,
   parts=(_p("mandolin", C, 25), _p("banjo", A, 105, "arp16"), _p("upright bass", B, 32),
          _p("guitar", C, 25, "pats", pan=-0.5, octave=-1), _p("fiddle", L, 110, "melody")),
   progressions={"major": ("I I IV I I I V I", "I IV I V", "I I V V", "I IV V I"),
                 "mixolydian": ("I bVII I I", "I I bVII IV")}, modes=("major", "major", "mixolydian"),
   bass_pats=("R.......5.......", "R.......5.....A."),                                 # upright on 1 and 3
   comp_pats=("....X.......X...", "....X.......X..o"),                                # the mandolin chop
   grooves=({"swirl": "x.x.x.x.x.x.x.x.", "snare": "....x.......x...", "kick": "o.......o......."},
            {"snare": "..o.x...o.o.x...", "swirl": "x...x...x...x...", "kick": "x.......x......."}))
_g(name="folk", aliases=("folk", "canzone napoletana", "neapolitan song", "neapolitan", "mor lam", "molam", "luk thung", "folk song", "folk rock", "singer songwriter", "singer-songwriter", "campfire",
                         "fingerstyle", "fingerpicking", "indie folk", "contemporary folk", "protest song",
                         "troubadour", "coffeehouse"),
   bpm=(80, 110), kit=40, fill="none", bass="pats", chords="pats", form="calm", humanize_ms=8, vel_var=10,
   family="folk", tone=-0.2, reverb=0.3, intro_drums="none", lead_density=0.4,
   parts=(_p("drums", D, 40), _p("acoustic guitar", C, 25), _p("upright bass", B, 32, level=0.6),
          _p("harmonica", L, 22, "melody")),
   progressions={"major": ("I V vi IV", "I IV I V", "vi IV I V", "I iii IV I", "I IV vi V"),
                 "minor": ("i VII VI VII", "i III VII i", "i iv VII III"), "dorian": ("i IV i i",),
                 "mixolydian": ("I bVII IV I",)}, modes=("major", "minor", "dorian", "mixolydian"),
   bass_pats=("R.......5.......", "R...........5..."),
   comp_pats=("b.t.b.t.b.t.b.t.", "b..tb.t.b..tb.t.", "s...s.u..us.s.u."),          # Travis picking, a strum
   grooves=({"kick": "X.......X.......", "tamb": "....x.......x...", "shaker": "x.o.x.o.x.o.x.o."},
            {"kick": "X.....x.........", "rim": "........x.......", "shaker": "oxoxoxoxoxoxoxox"}))

# --- Celtic, shanty, polka, klezmer, Balkan -----------------------------------------------------------
_CELTIC_PROG = {"major": ("I I IV V", "I IV I V", "I V IV V", "I I V I"),
                "mixolydian": ("I bVII I bVII", "I I bVII bVII", "I bVII IV I"),
                "dorian": ("i VII i VII", "i i VII VII", "i IV i VII"), "minor": ("i VII i VII", "i VII VI VII")}
_g(name="celtic", aliases=("celtic", "an dro", "fest-noz", "fest noz",
                           "jig", "irish jig", "double jig", "irish",
                           "irish folk", "irish pub",
                           "irish trad", "trad session", "scottish", "scottish folk", "celtic folk", "gaelic",
                           "ceili", "highland", "breton", "galician"),
   bpm=(100, 120), meter=(6, 8), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4,
   vel_var=8, family="celtic", tone=0.2, reverb=0.25, intro_drums="all", lead_density=0.95,
   parts=(_p("drums", D, 0), _p("acoustic guitar", C, 25), _p("upright bass", B, 32, level=0.7),
          _p("fiddle", L, 110, "melody"), _p("tin whistle", L, 78, "melody", octave=1)),
   progressions=_CELTIC_PROG, modes=("major", "dorian", "mixolydian", "minor"),
   bass_pats=("R-----5-----", "R---5.8---5."),
   comp_pats=("S...u.S...u.", "S.u.s.S.u.s.", "X.....x....."),
   grooves=({"tom_lo": "X.x.x.X.x.x.", "kick": "x.....x....."},                     # bodhrán: every eighth
            {"tom_lo": "X.x.x.X.xrx.", "floor": "X.....x....."},
            {"kick": "X.....X.....", "snare": "......x.....", "tom_lo": "x.x.x.x.x.x.", "tamb+": "..x.x...x.x."}))
# a highland pipe band: the pipes in unison over their own drones (a held bass on the bagpipe's
# program), the snare line's rolls and flourishes, the bass drum on the downbeats and the tenor
# drums on the beats; a 2/4 march in the chanter's mixolydian, loud and outdoors
_g(name="pipe band", aliases=("pipe band", "pipe bands", "highland pipe band", "highland pipes", "pipes and drums",
                              "pipe and drum band", "pipe and drum corps", "scottish pipe band", "bagpipe band",
                              "bagpipe march", "pipe major", "massed pipes", "massed bands"),
   bpm=(84, 104), meter=(2, 4), kit=48, fill="snare", bass="drone", chords="block", form="song", humanize_ms=3,
   vel_var=6, family="celtic", tone=0.35, reverb=0.3, intro_drums="all", lead_density=0.9,
   parts=(_p("drums", D, 48), _p("drones", B, 109, "drone", octave=1, level=0.55), _p("bagpipes", L, 109, "melody", pan=-0.2),
          _p("pipes 2", L, 109, "sparse", pan=0.4, level=0.35)),
   progressions={"mixolydian": ("I I bVII I", "I bVII I I", "I I IV I", "I bVII IV I"),
                 "major": ("I I V I", "I IV I V", "I I IV V")},
   modes=("mixolydian", "mixolydian", "major"),
   # 2/4 bars written two at a time: the bass drum on the downbeats, the snare line's rolls into
   # the beat, the tenors on the beats; then the rolled street beat with the tenors on one
   grooves=({"kick": "X.......X.......", "snare": "X.rrx.x.X.rrx.xx", "tom_mid": "x...x...x...x..."},
            {"kick": "X...x...X...x...", "snare": "xrrrX.x.xrrrX.xr", "tom_lo": "x.......x......."}))
_g(name="reel", aliases=("reel", "highland schottische", "scottish schottische", "irish reel", "scottish reel", "celtic reel", "hornpipe", "strathspey",
                         "fiddle tune", "fiddle tunes", "reels", "celtic reels", "irish reels"),
   bpm=(152, 188), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4, vel_var=8,
   family="celtic", tone=0.25, reverb=0.22, intro_drums="all", lead_density=0.95,
   parts=(_p("drums", D, 0), _p("acoustic guitar", C, 25), _p("upright bass", B, 32, level=0.7),
          _p("fiddle", L, 110, "melody"), _p("tin whistle", L, 78, "melody", octave=1)),
   progressions=_CELTIC_PROG, modes=("major", "dorian", "mixolydian"),
   bass_pats=("R.......5.......", "R...8...5...A..."),
   comp_pats=("S.u.S.u.S.u.S.u.", "X..xX.x.X..xX.x."),
   grooves=({"tom_lo": "X.x.x.x.X.x.x.x.", "kick": "X.......X......."},
            {"tom_lo": "X.xrx.x.X.x.xrx.", "floor": "x.......x......."},
            {"kick": "X...X...X...X...", "snare": "....x.......x...", "tom_lo": "x.x.x.x.x.x.x.x."}))
_g(name="sea shanty", aliases=("sea shanty", "chanty", "chanties", "sea chanty", "sea chanties", "shanty", "sea shanties", "shanties", "sea song", "sailor song",
                               "pirate", "pirates", "sailors", "tavern", "drinking song", "maritime"),
   bpm=(90, 116), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=8, vel_var=10,
   family="folk", tone=0.0, reverb=0.3, intro_drums="all", lead_density=0.55,
   parts=(_p("drums", D, 0), _p("accordion", C, 21), _p("upright bass", B, 32, level=0.7),
          _p("vocals", L, 53, "melody"), _p("choir", PD, 52), _p("fiddle", L, 110, "sparse", pan=-0.5)),
   progressions={"dorian": ("i i VII VII i i VII i", "i VII i VII"), "minor": ("i VII i V", "i iv i V", "i VI VII i"),
                 "major": ("I IV I V", "I I V I")}, modes=("dorian", "minor", "major"),
   bass_pats=("R.......5.......", "R...5...R...5..."),
   comp_pats=("b...x...b...x...", "b.x.b.x.b.x.b.x."),                                   # oom-pah squeezebox
   grooves=({"kick": "X.......X.......", "clap": "....X.......X...", "floor": "X.......X......."},  # stomp, clap
            {"kick": "X.......X.....x.", "clap": "....X..x....X...", "tamb": "..x...x...x...x."},
            {"kick": "X.....x.....", "clap": "......X.....", "tamb": "x.x.x.x.x.x."}))         # a 6/8 shanty
_g(name="polka", aliases=("polka", "polska polka", "polka polska", "schottische", "rheinlander", "humppa", "humpa", "korean trot", "trot music", "ppongjjak", "bbongjjak", "teuroteu", "zortziko", "trikitixa", "trikiti", "sardana", "sardanes", "cobla", "banda sinaloense", "banda", "levenslied", "smartlap", "volksmusik", "volkstumlich", "bierkeller", "beer hall", "oktoberfest",
                          "bavarian", "tyrolean", "polish polka", "czech polka",
                          "norteno", "musica nortena", "conjunto", "tejano", "tex-mex", "tex mex", "landler", "laendler", "alpine folk", "alpenlandische volksmusik", "oberkrainer", "corrido tumbado", "corridos tumbados", "corrido", "corridos", "sierreno", "musica sierrena", "regional mexicano", "musica regional mexicana"),
   bpm=(112, 140), meter=(2, 4), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=4,
   vel_var=8, family="folk", tone=0.3, reverb=0.12, intro_drums="all", lead_density=0.7,
   parts=(_p("drums", D, 0), _p("tuba", B, 58), _p("accordion", C, 21), _p("clarinet", L, 71, "melody"),
          _p("trumpet", L, 56, "melody", pan=-0.4)),
   # the strain's eight bars out to the dominant and home again (a loop of "I I V V" sat on V for
   # half the time: the bass's fifths on I made the dominant the heard key, sets G, H and I)
   progressions={"major": ("I I V V V V I I", "I I V I", "I I IV I V V I I", "I IV V I")}, modes=("major",),
   bass_pats=("R...5...", "R...l..."),                                                  # the oom
   comp_pats=("..x...x.", "..x.o.x.", "b.x.b.x."),                                      # the pah
   grooves=({"kick": "X...X...", "snare": "..X...X.", "chat": "..x...x."},
            {"kick": "X...x...", "snare": "..X..xX.", "ride": "x.x.x.x."},
            {"kick": "X...X...", "snare": "..x.o.X.", "ohat": "..x...x."}))
_g(name="klezmer", aliases=("klezmer", "csardas", "czardas", "verbunkos", "hungarian gypsy",
                            "bulgar", "freylekhs", "freilach", "hora", "jewish wedding", "yiddish",
                            "klezmorim"),
   bpm=(104, 132), meter=(2, 4), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=5,
   vel_var=10, family="folk", tone=0.2, reverb=0.22, intro_drums="all", lead_density=0.75, cadence_v=True,
   parts=(_p("drums", D, 0), _p("tuba", B, 58), _p("accordion", C, 21), _p("clarinet", L, 71, "melody"),
          _p("violin", L, 40, "melody", pan=-0.45)),
   progressions={"freygish": FREYGISH, "minor": ("i iv V i", "i iv i V")},
   modes=("freygish", "freygish", "minor"),
   bass_pats=("R..5..R.", "R..8..5."),                                                  # 3+3+2
   comp_pats=("X..x..x.", "x..x..xo"),
   grooves=({"kick": "X.....x.", "snare": "...X..X.", "chat": "x.xxx.x."},
            {"kick": "X..x....", "snare": "...x..X.", "ohat": "X..X..X."}))
_BALKAN_PARTS = (_p("drums", D, 0), _p("tuba", B, 58), _p("accordion", C, 21), _p("clarinet", L, 71, "melody"),
                 _p("trumpet", L, 56, "melody", pan=-0.45))
_BALKAN_PROG = {"minor": ("i iv V i", "i VII III V", "i iv i V"), "freygish": ("I II I I", "I iv II I"),
                "major": ("I V I V", "I IV V I")}
_g(name="balkan", aliases=("balkan", "greek folk", "greek dance", "zeybek", "zeybegi", "aydin zeybegi", "sevdah", "sevdalinka", "sevdalinke", "bosnian",
                           "balkan brass", "rachenitsa", "ruchenitsa", "kalamatiano", "kalamatianos",
                           "bulgarian", "bulgarian folk",
                           "macedonian", "serbian brass", "gypsy brass", "romani brass", "balkan folk", "lesnoto", "lesno oro", "macedonian oro"),
   bpm=(150, 190), meter=(7, 8), groups={(7, 8): (2, 2, 3), (9, 8): (2, 2, 2, 3), (11, 8): (2, 2, 3, 2, 2)}, kit=0,
   fill="snare", bass="pats", chords="pats", form="song", humanize_ms=4, vel_var=8, family="balkan", tone=0.3,
   reverb=0.2, intro_drums="all",
   lead_density=0.8, parts=_BALKAN_PARTS, progressions=_BALKAN_PROG, modes=("minor", "freygish", "major"),
   bass_pats=("R...5...R-----", "R...5...8...5.", "R.R.5.5.R.R.A."),
   comp_pats=("X...x...X.....", "..x...x...x.x.", "X.x.x.x.X.x.x."),
   grooves=({"kick": "X...X...X.....", "rim": "..x...x...x.x."},                       # tapan: beater, switch
            {"kick": "X.......X.....", "rim": "x.x.X.x.x.x.x.", "floor": "........x.x..."},
            {"kick": "X...x...X...x.", "snare": "..o...o...o...", "chat": "x.x.x.x.x.x.x."}))
# rebetiko and laïko (Tsitsanis, Vamvakaris; Kazantzidis, Zambetas): the bouzouki's tune and its
# runs over a guitar's afterbeat strum, the baglamas' tremolo an octave up and a double bass on the
# beat; hasapiko's walking two, tsifteteli's belly-dance four, and the zeibekiko's slow nine (2+2+2+3,
# its meter read from the word); the dromoi — hijaz (freygish), ousak (phrygian), the minor — and
# rast's major
_g(name="rebetiko", aliases=("rebetiko", "rebetico", "rembetiko", "rebetika", "laiko", "laika", "greek laiko",
                             "zeibekiko", "zeybekiko", "hasapiko", "hasaposerviko", "sirtaki", "syrtaki", "tsifteteli",
                             "bouzouki music", "greek taverna", "taverna music", "entechno", "tsitsanis",
                             "theodorakis", "zorba"),
   bpm=(84, 118), groups={(9, 8): (2, 2, 2, 3)}, kit=0, fill="none", bass="pats", chords="pats", form="song",
   humanize_ms=6, vel_var=10, family="balkan", tone=0.15, reverb=0.22, intro_drums="all", lead_density=0.8,
   parts=(_p("drums", D, 0, level=0.7), _p("double bass", B, 32), _p("guitar", C, 24, pan=-0.3),
          _p("baglamas", A, 105, "arp8", pan=0.4, level=0.45, octave=1), _p("bouzouki", L, 25, "melody")),
   progressions={"freygish": ("I iv I I", "I II I I", "I I iv I", "I vii I I"),
                 "minor": ("i iv V i", "i VII III V", "i iv i V", "i VI iv V"),
                 "phrygian": ("i II i i", "i iv II i"), "major": ("I IV V I", "I V I I", "I I IV V")},
   modes=("freygish", "minor", "minor", "phrygian", "major"),
   bass_pats=("R.......5.......", "R...5...R...5...", "R.......R...5..."),
   comp_pats=("..X...X...X...X.", "..x.X.x...x.X.x.", "X.x.x.x.X.x.x.x."),        # the guitar's afterbeat
   grooves=({"kick": "X.......X.......", "rim": "..x...x...x...x.", "shaker": "x.x.x.x.x.x.x.x."},   # hasapiko's two
            {"kick": "X..x..x.X.......", "rim": "....x.......x.x."},                  # tsifteteli
            {"kick": "X..x....X..x....", "rim": "....x..x....x.x.", "tamb": "..x...x...x...x."}))    # its doum-tek
_g(name="daychovo", aliases=("daychovo", "daichovo", "cocek"),
   bpm=(150, 190), meter=(9, 8), groups={(9, 8): (2, 2, 2, 3)}, kit=0, fill="snare", bass="pats", chords="pats",
   form="song", humanize_ms=4, vel_var=8, family="balkan", tone=0.3, reverb=0.2, intro_drums="all",
   lead_density=0.8, parts=_BALKAN_PARTS, progressions=_BALKAN_PROG, modes=("minor", "freygish"),
   bass_pats=("R...5...R...5-----", "R...R...5...8...A."),
   comp_pats=("X...x...x...X.....", "..x...x...x...x.x."),
   grooves=({"kick": "X...x...X...X.....", "rim": "..x...x...x...x.x."},
            {"kick": "X.......X...X.....", "rim": "x.x.x.X.x.x.x.x.x.", "floor": "............x.x..."}))
# the Thracian Roma's karşılama (Turkey's "face to face" dance, 9/8 as 2+2+2+3): the clarinet's
# tune and a violin answering, the kanun's runs, the ud strumming, a light bass; the darbuka's düm
# (low) and tek (high) with the def's jingles; hicaz (freygish), nihavend (minor) or kürdi (phrygian)
_g(name="karsilama", aliases=("karsilama", "karsilamas", "karsilamasi", "roman havasi", "roman havasi dance",
                              "turkish roman", "turkish romani", "turkish gypsy", "trakya", "thracian", "fasil",
                              "turkish wedding", "dugun havasi"),
   bpm=(140, 180), meter=(9, 8), groups={(9, 8): (2, 2, 2, 3)}, kit=0, fill="none", bass="pats", chords="pats",
   form="song", humanize_ms=5, vel_var=10, family="balkan", tone=0.2, reverb=0.22, intro_drums="all",
   lead_density=0.8,
   parts=(_p("drums", D, 0), _p("bass", B, 32, level=0.5), _p("ud", C, 24, pan=0.3),
          _p("kanun", A, 107, "harp", pan=-0.35, level=0.6), _p("clarinet", L, 71, "melody"),
          _p("violin", L, 40, "sparse", pan=0.45)),
   progressions={"freygish": ("I II I I", "I iv II I", "I I vii I"), "minor": ("i iv V i", "i VII i V"),
                 "phrygian": ("i II i i", "i iv II i")},
   modes=("freygish", "freygish", "minor", "phrygian"),
   bass_pats=("R.......5...R.....", "R...R...5...5.R..."),
   comp_pats=("X...x...X...x.x...", "X.x.x.x.X.x.x.x.x."),
   # the darbuka's düm on the first and third steps, tek between and on the long group's end
   grooves=({"conga_lo": "X.......X.........", "conga": "....x.......x...x.", "tamb": "x...x...x...x.x.x."},
            {"conga_lo": "X...o...X.....o...", "conga": "..x.x.x...x.x.x.x.", "kick_lo": "X.......x........."}))
# the türkü: Anatolia's folk song — the bağlama (saz) playing the tune and its runs, a second
# bağlama's strummed drone-chords, the kaval answering, the darbuka's düm-tek and the def's jingles;
# a bass only as the modern arrangements have it, low and light. Hüseyni and uşşak (dorian,
# phrygian), hicaz (freygish) and the minor; a halay's or a türkü's four, the aksak 9/8 (2+2+2+3)
# and 7/8 when the meter is asked
_g(name="turkish folk", aliases=("turkish folk", "turkish", "turku", "turkuler", "halk muzigi", "turk halk muzigi",
                                 "anatolian folk", "baglama music", "saz music", "halay", "bozlak",
                                 "turkish folk song", "turkish saz"),
   bpm=(88, 120), groups={(9, 8): (2, 2, 2, 3), (7, 8): (2, 2, 3), (5, 8): (2, 3)}, kit=0, fill="none",
   bass="pats", chords="pats", form="song", humanize_ms=6, vel_var=10, family="arabic", tone=0.1, reverb=0.24,
   intro_drums="all", lead_density=0.85,
   parts=(_p("drums", D, 0, level=0.8), _p("bass", B, 32, level=0.45), _p("baglama 2", C, 105, pan=-0.35),
          _p("kaval", L, 73, "sparse", pan=0.4, level=0.6), _p("saz", L, 105, "melody")),
   progressions={"dorian": ("i i VII i", "i IV i i", "i VII i IV"), "phrygian": ("i II i i", "i iv II i"),
                 "freygish": ("I II I I", "I iv II I"), "minor": ("i i VII i", "i iv i V", "i VII VI VII")},
   modes=("dorian", "phrygian", "freygish", "minor"),
   # the bass's düm with the drum, the root held through the tek
   bass_pats=("R.......R...5...", "R.....R.R.......", "R-------5-------"),
   # the second bağlama's strokes: down on the düm, the tremolo strums between
   comp_pats=("X.x.x.xxX.x.x.xx", "X...x.x.X...x.x.", "X.xxX.xxX.xxX.xx"),
   # the darbuka (düm: the low conga, tek: the high bongo) and the def's jingles: the türkü's
   # düm-tek-tek, the halay's stamp on one and three, a sofyan's slow four
   grooves=({"conga_lo": "X.......X.......", "bongo": "....x.x.....x.x.", "tamb": "x...x...x...x..."},
            {"conga_lo": "X..X....X..X....", "bongo": "......x.......x.", "tamb": "..x...x...x...x.",
             "kick_lo": "X.......X......."},
            {"conga_lo": "X.....X.........", "bongo": "....x...x...x.x.", "tamb": "x.x.x.x.x.x.x.x."}))
_g(name="kopanitsa", aliases=("kopanitsa", "kopanica", "gankino", "gankino horo"),
   bpm=(150, 190), meter=(11, 8), groups={(11, 8): (2, 2, 3, 2, 2)}, kit=0, fill="snare", bass="pats",
   chords="pats", form="song", humanize_ms=4, vel_var=8, family="balkan", tone=0.3, reverb=0.2,
   intro_drums="all", lead_density=0.8, parts=_BALKAN_PARTS, progressions=_BALKAN_PROG, modes=("minor", "freygish"),
   bass_pats=("R...5...R-----5...8...", "R...R...5.....R...A..."),
   comp_pats=("X...x...X.....x...x...", "..x...x...x.x...x...x."),
   grooves=({"kick": "X...x...X.....X...x...", "rim": "..x...x...x.x...x...x."},
            {"kick": "X.......X.....X.......", "rim": "x.x.x.x.X.x.x.x.x.x.x.", "floor": "..........x.x........."}))


# --- the Paris dance hall and the Italian south ---------------------------------------------------------
# the valse musette (the bal musette of the 1930s, Gus Viseur, Yvette Horner): a fast three, the
# accordion's tune with its bellows' swell and runs, the manouche guitar's pompe on two and three,
# the double bass on one, brushes; major, with the secondary dominants' colour and a minor strain
_g(name="musette", family="folk",
   aliases=("musette", "valse musette", "bal musette", "french musette", "musette waltz", "musette style",
            "accordion waltz", "paris cafe", "parisian cafe", "french cafe", "cafe parisien", "cafe de paris",
            "chanson musette", "valse parisienne", "guinguette", "paris accordion"),
   bpm=(150, 200), meter=(3, 4), kit=40, fill="none", bass="waltz", chords="waltz", form="song", humanize_ms=5,
   vel_var=9, tone=0.15, reverb=0.26, lead_density=0.8, intro_drums="all",
   parts=(_p("drums", D, 40, level=0.5), _p("double bass", B, 32), _p("guitar", C, 25, pan=0.35),
          _p("accordion", L, 21, "melody", pan=-0.2)),
   progressions={"major": ("I I V7 V7 V7 V7 I I", "I VI7 ii V7", "I I7 IV iv", "I III7 vi V7"),
                 "minor": ("i i V7 V7 V7 V7 i i", "i iv V7 i", "i VI ii V7")},
   modes=("major", "major", "minor"),
   bass_pats=("R-..........5-..........", "R-..........l-..........", "R-......5-..R-......l-.."),
   # the pompe: the guitar's short chops on two and three
   comp_pats=("....x...x...", "....x.x.x...", "....x-..x..."),
   grooves=({"kick": "x...........", "snare": "....o...o...", "ride": "X...x...x..."},
            {"kick": "x...........", "snare": "....x...x...", "chat": "x.o.x.o.x.o."},
            {"kick": "x.......o...", "snare": "....o...x...", "ride": "X...x.x.x..."}))

# the tarantella (Naples, Calabria, Puglia's pizzica): a whirling 6/8, the tamburello's jingles
# driving every eighth and its thump on the beats, the mandolin's tremolo tune, the accordion's
# after-beats, a guitar and a bass on the two beats; minor, with the major's turn
_g(name="tarantella", family="folk",
   aliases=("tarantella", "tarantela", "tarantelle", "tarantella napoletana", "pizzica", "pizzica taranta",
            "taranta", "tarantella calabrese", "italian folk dance", "italian wedding dance", "southern italian folk",
            "italian folk", "musica popolare", "tammurriata"),
   bpm=(112, 138), meter=(6, 8), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4,
   vel_var=8, tone=0.25, reverb=0.22, lead_density=0.95, intro_drums="all",
   parts=(_p("drums", D, 0, level=0.7), _p("bass", B, 32, level=0.6), _p("accordion", C, 21, pan=-0.3),
          _p("guitar", C, 24, pan=0.35, level=0.6), _p("mandolin", L, 25, "melody")),
   progressions={"minor": ("i i V7 V7", "i iv V7 i", "i V7 i V7", "i i iv V7"),
                 "major": ("I I V7 V7", "I IV V7 I")},
   modes=("minor", "minor", "major"),
   bass_pats=("R.....5.....", "R.....R.....", "R...5.R...5."),
   # the accordion's after-beats: the two eighths after each beat
   comp_pats=("..x.x...x.x.", "..xx.x..xx.x"),
   # the tamburello: jingles on every eighth, the thumb's thump on the dotted quarters
   grooves=({"tamb": "x.x.x.x.x.x.", "conga_lo": "x.....o.....", "castanets": "..x.x...x.x."},
            {"tamb": "x.xxx.x.xxx.", "conga_lo": "x.....o.....", "castanets": "..x.....x..."},
            {"tamb": "x.x.x.x.x.x.", "conga_lo": "x...o.x...o."}))
