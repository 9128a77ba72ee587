"""genres: the composer's data tables — genres, drum grooves, progressions, instrument words.

Pure data, read by the composer's modules (:mod:`~engine.compose.prompt` reads the words,
:mod:`~engine.compose.band` the genres and mix, :mod:`~engine.compose.form` the forms,
:mod:`~engine.compose.drums` the drum map). Nothing here runs on a hot path; the tables are built
at import.

Drum grooves are written as one string per *lane* on a 16th-note grid (``len == steps per bar``,
or a multiple of it for grooves that span two bars, like the bossa clave). Characters:

    ``.`` rest   ``o`` ghost   ``x`` normal   ``X`` accent   ``?`` ghost played on some bars only
    ``r`` a 32nd-note roll (two hits in the step)   ``t`` a 16th-triplet roll (three hits)

A lane name ending in ``+`` only plays when the section is at full intensity (chorus, drop).
Lanes map to the GM drum map through :data:`LANES`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# --- GM drum map -------------------------------------------------------------------------------
LANES = {
    "kick": 36, "kick2": 35, "snare": 38, "rim": 37, "clap": 39, "esnare": 40, "swirl": 40,
    "chat": 42, "phat": 44, "ohat": 46, "ride": 51, "bell": 53, "crash": 49, "china": 52,
    "splash": 55, "tamb": 54, "shaker": 70, "cowbell": 56, "clave": 75, "conga": 63,
    "conga_lo": 64, "conga_mute": 62, "bongo": 60, "bongo_lo": 61, "cabasa": 69,
    "woodblock": 76, "triangle": 81, "tom_hi": 50, "tom_mid": 47, "tom_lo": 45, "floor": 41,
    "timbale": 65, "agogo": 67, "guiro": 73,
}
CRASH, SNARE, KICK, CHAT = 49, 38, 36, 42
TOMS = (50, 48, 47, 45, 43, 41)          # high → low

# --- scales and modes ----------------------------------------------------------------------------
MODES = {
    "major": (0, 2, 4, 5, 7, 9, 11),
    "minor": (0, 2, 3, 5, 7, 8, 10),
    "dorian": (0, 2, 3, 5, 7, 9, 10),
    "phrygian": (0, 1, 3, 5, 7, 8, 10),
    "lydian": (0, 2, 4, 6, 7, 9, 11),
    "mixolydian": (0, 2, 4, 5, 7, 9, 10),
    "locrian": (0, 1, 3, 5, 6, 8, 10),
}
MODE_ALIASES = {"maj": "major", "ionian": "major", "min": "minor", "aeolian": "minor", "m": "minor",
                "harmonic minor": "minor", "natural minor": "minor"}
#: which progression family a mode reads its chords from
MODE_FAMILY = {"major": "major", "lydian": "lydian", "mixolydian": "mixolydian", "minor": "minor",
               "dorian": "dorian", "phrygian": "phrygian", "locrian": "phrygian"}

# --- progressions --------------------------------------------------------------------------------
# Roman numerals are degrees of the family's own scale (in minor, VI is the flat sixth); the case
# gives the triad (upper major, lower minor), an accidental moves the root, the suffix adds colour
# (7, maj7, 9, 6, sus4, sus2, add9, o, o7, h7, 13). One token per bar; "a-b" splits a bar in two.
PROGRESSIONS = {
    "major": ("I V vi IV", "I vi IV V", "vi IV I V", "I IV vi V", "I iii IV V", "IV I V vi",
              "I V IV IV", "I bVII IV I", "I vi ii V", "I IV I V"),
    "minor": ("i VI III VII i VI VII V", "i iv VII III", "i VI VII V", "i iv v V", "i VII VI V", "i III VII iv",
              "VI VII i i", "i iv VI V", "i VI iv V", "i i VII VI"),
    "dorian": ("i7 IV7 i7 IV7", "i7 ii7 i7 IV", "i7 VII IV i7", "i7 IV III VII"),
    "mixolydian": ("I bVII IV I", "I I bVII IV", "I v bVII IV", "I bVII I IV"),
    "phrygian": ("i bII i bII", "i bII bIII bII", "i i bII VII", "i bVI bII i"),
    "lydian": ("I II I II", "I II vii iii", "Imaj7 II7 Imaj7 vi", "I II V I"),
}
JAZZ = {
    "major": ("ii7-V7 Imaj7 ii7-V7 Imaj7", "Imaj7 vi7 ii7 V7", "iii7 vi7 ii7 V7", "Imaj7 IV7 iii7-vi7 ii7-V7",
              "ii7 V9 Imaj7 VI7", "Imaj7-vi7 ii7-V7 iii7-VI7 ii7-V7"),
    "minor": ("ih7-V7 i7 ih7-V7 i7", "i7 iv7 ih7-V7 i7", "i7 VImaj7 ih7 V7", "i7 i7 iv7 V7",
              "iv7 VII7 IIImaj7 VI7"),
}
BOSSA = {
    "major": ("Imaj7 II7 ii7 V7", "Imaj7 vi7 ii7 V7", "Imaj7 Imaj7 iv7 bVII7", "ii7 V7 Imaj7 VI7"),
    "minor": ("i7 iv7 ih7 V7", "i7 i7 iv7 V7", "i7 VImaj7 ih7 V7"),
}
BLUES = {   # rock, funk, soul: dominant colour, the IV and bVII
    "major": ("I IV7 I V7", "I I IV I", "I bVII IV I", "I IV bVII IV", "I IV V IV", "I V IV I"),
    "minor": ("i7 iv7 i7 V7", "i7 VII VI V", "i iv VII i", "i7 i7 iv7 v7", "i VI VII V"),
    "mixolydian": ("I7 bVII7 IV7 I7", "I7 I7 bVII IV"),
    "dorian": ("i7 IV7 i7 IV7", "i7 i7 IV7 IV7"),
}
SOUL = {
    "major": ("Imaj7 iii7 vi7 IVmaj7", "IVmaj7 iii7 ii7 Imaj7", "Imaj9 vi7 ii7 V9", "ii7 iii7 IVmaj7 V7"),
    "minor": ("i9 iv9 VII7 IIImaj7", "i7 VImaj7 iv7 V7", "VImaj7 V7 i7 i7", "i9 iv7 i9 V7"),
}
CLASSICAL = {
    "major": ("I IV V I", "I vi IV V", "I ii V I", "I V vi iii IV I IV V", "I IV ii V"),
    "minor": ("i iv V i", "i VI iv V", "i iio V i", "i VII III VII i iv V i", "i iv VII III VI iv V i"),
}
AMBIENT = {
    "major": ("Imaj7 Imaj7 IVmaj7 IVmaj7", "I iii vi IV", "Iadd9 vi7 IVmaj7 Iadd9"),
    "minor": ("i9 i9 VImaj7 VImaj7", "i VI i VII", "i7 iv7 VI III"),
}
EDM = {
    "minor": ("i VI i VII i VI VII V", "i VI VII V i VI VII i", "i i VI VII i i iv V", "i iv i VI i iv VII V",
              "i VII i VI i VII VI V", "i VI III VII i i VII V", "VI VII i i VI VII i V", "i iv VI V i i VI V"),
    "major": ("I V vi IV I V IV I", "I IV vi V I IV V I", "vi IV I V vi IV V I", "I V IV IV I V IV V"),
}

# --- section templates (a block of four 8-bar sections after the intro) ------------------------
FORMS = {
    "song": (("A", "B", "A", "B"), ("A", "A", "B", "B"), ("A", "B", "break", "B"),
             ("A", "B", "A", "outro"), ("A", "B", "B", "break")),
    "edm": (("A", "B", "break", "drop"), ("A", "A", "break", "drop"), ("B", "A", "break", "drop"),
            ("A", "drop", "break", "drop"), ("A", "B", "drop", "outro")),
    "jazz": (("A", "A", "B", "A"), ("A", "B", "A", "solo"), ("solo", "solo", "B", "A"),
             ("A", "A", "B", "outro")),
    "calm": (("A", "B", "A", "break"), ("A", "A", "B", "break"), ("B", "A", "break", "A"),
             ("A", "B", "B", "outro")),
}


@dataclass(frozen=True)
class PartSpec:
    """A part a genre brings by default (or an instrument word adds)."""

    name: str
    role: str          # drums | bass | chords | pad | lead | arp | perc
    program: int
    style: str = ""    # the role's playing style; "" → the genre's default for the role
    level: float = 0.0  # 0 → role default
    pan: float | None = None
    octave: int = 0     # register shift for this part


@dataclass(frozen=True)
class Genre:
    name: str
    aliases: tuple[str, ...]
    bpm: tuple[int, int]
    parts: tuple[PartSpec, ...]
    grooves: tuple[dict, ...] = ()
    meter: tuple[int, int] = (4, 4)
    modes: tuple[str, ...] = ("minor", "major")
    progressions: dict = field(default_factory=lambda: PROGRESSIONS)
    swing: float = 0.0
    swing_unit: float = 0.5          # 0.5: swung 8ths, 0.25: swung 16ths
    kit: int = 0
    fill: str = "toms"               # toms | snare | roll | jazz | break | none
    bass: str = "root8"
    chords: str = "block"            # the default style of the chords role
    lead: str = "melody"
    pad: str = "pad"
    arp: str = "arp16"
    perc: str = "perc"
    humanize_ms: float = 6.0
    vel_var: int = 8
    form: str = "song"
    reverb: float = 0.25
    lead_density: float = 0.5        # notes per 8th, roughly
    cadence_v: bool = True           # minor keys end phrases on the major V
    laid_back_ms: float = 0.0        # snare/chords drag (lofi, soul)
    intro_drums: str = "hats"        # what the drums keep in the intro: hats | kick | none | all


D, B, C, PD, L, A, P = "drums", "bass", "chords", "pad", "lead", "arp", "perc"


def _p(name, role, program, style="", **kw):
    return PartSpec(name, role, program, style, **kw)


GENRES: dict[str, Genre] = {}


def _g(**kw):
    g = Genre(**kw)
    GENRES[g.name] = g
    return g


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
_g(name="synthwave", aliases=("synthwave", "retrowave", "outrun", "80s", "darksynth", "vaporwave", "chiptune", "8-bit",
                             "8 bit", "video game", "chillwave", "new wave"),
   bpm=(84, 112), kit=24, fill="toms", bass="drive8", chords="pad", form="song", humanize_ms=2,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("arp", A, 81), _p("pad", PD, 90), _p("lead", L, 80)),
   progressions=EDM, modes=("minor",), arp="arp16", reverb=0.4,
   grooves=({"kick": "X.......X.......", "snare": "....X.......X...", "clap": "....x.......x...",
             "chat": "x.x.x.x.x.x.x.x.", "ohat+": "......x.......x."},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "chat": "xoxoxoxoxoxoxoxo",
             "tom_lo+": "..............x."}))
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
_g(name="ambient", aliases=("ambient", "drone", "meditation", "new age", "soundscape", "atmospheric",
                            "sleep", "spa", "relaxing", "gamelan", "healing", "zen"),
   bpm=(60, 80), kit=24, fill="none", bass="drone", chords="pad", form="calm", humanize_ms=12, vel_var=8,
   parts=(_p("pad", PD, 89), _p("pad 2", PD, 94, "swell", pan=-0.5), _p("bass", B, 89, "drone"),
          _p("bells", L, 98, "sparse"), _p("arp", A, 88, "arp8")),
   progressions=AMBIENT, modes=("major", "lydian", "minor", "dorian"), lead_density=0.15, reverb=0.7,
   grooves=(), intro_drums="none")
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

#: generic grooves for meters a genre doesn't write out, by feel (acoustic or electronic)
METER_GROOVES = {
    (3, 4): {"kick": "X...........", "snare": "....o...o...", "chat": "X.o.x.o.x.o.", "kick2+": "..........o."},
    (6, 8): {"kick": "X...........", "snare": "......X.....", "chat": "X.x.x.x.x.x.", "kick2+": "..........o."},
}

#: genre guessed from moods and instrument words when the prompt names none
MOOD_GENRES = {
    "calm": ("ambient", "lofi", "classical"), "chill": ("lofi", "soul", "bossa nova"),
    "relaxed": ("lofi", "bossa nova", "ambient"), "energetic": ("house", "rock", "drum and bass", "pop"),
    "dark": ("techno", "cinematic", "trap"), "epic": ("cinematic",), "happy": ("pop", "disco", "funk"),
    "sad": ("lofi", "cinematic", "classical"), "dreamy": ("ambient", "synthwave"),
    "aggressive": ("metal", "dubstep", "techno"), "romantic": ("soul", "bossa nova", "classical"),
    "groovy": ("funk", "disco", "house"), "peaceful": ("ambient", "classical"),
}
DEFAULT_GENRES = ("pop", "lofi", "house", "soul", "synthwave", "funk", "ambient", "rock", "jazz", "cinematic")

MOODS = {  # word → (mode or None, tempo factor, intensity delta)
    "dark": ("minor", 0.97, 0.0), "sad": ("minor", 0.88, -0.2), "melancholic": ("minor", 0.9, -0.1),
    "melancholy": ("minor", 0.9, -0.1), "moody": ("dorian", 0.97, 0.0), "happy": ("major", 1.06, 0.1),
    "bright": ("major", 1.0, 0.1), "uplifting": ("major", 1.04, 0.2), "sunny": ("major", 1.03, 0.1),
    "dreamy": ("lydian", 0.92, -0.1), "mysterious": ("phrygian", 0.94, 0.0), "epic": ("minor", 1.0, 0.3),
    "calm": (None, 0.9, -0.3), "chill": (None, 0.94, -0.2), "relaxed": (None, 0.92, -0.2),
    "energetic": (None, 1.08, 0.3), "aggressive": ("phrygian", 1.06, 0.4), "peaceful": ("major", 0.88, -0.3),
    "warm": (None, 1.0, -0.1), "tense": ("phrygian", 1.0, 0.1), "romantic": ("major", 0.94, -0.1),
    "groovy": ("mixolydian", 1.0, 0.1), "angry": ("phrygian", 1.08, 0.4), "hopeful": ("major", 1.0, 0.1),
    "nostalgic": (None, 0.95, -0.1), "ballad": (None, 0.72, -0.2), "gentle": (None, 0.9, -0.3),
    "soft": (None, 0.95, -0.3), "intense": (None, 1.05, 0.3), "heavy": (None, 1.0, 0.3), "gloomy": ("minor", 0.9, -0.1), "triumphant": ("major", 1.02, 0.3),
}

# --- instrument words → GM programs ----------------------------------------------------------------
# word → (GM program, role, style or ""). Multi-word names match before their last word.
INSTRUMENTS: dict[str, tuple[int, str, str]] = {
    # keys
    "piano": (0, C, ""), "grand piano": (0, C, ""), "acoustic piano": (0, C, ""), "keys": (0, C, ""),
    "bright piano": (1, C, ""), "electric grand": (2, C, ""), "honky tonk": (3, C, ""),
    "honky-tonk": (3, C, ""), "rhodes": (4, C, ""), "electric piano": (4, C, ""), "e-piano": (4, C, ""),
    "epiano": (4, C, ""), "wurlitzer": (5, C, ""), "wurli": (5, C, ""), "dx7": (5, C, ""),
    "harpsichord": (6, C, ""), "clavinet": (7, C, "funk16"), "clav": (7, C, "funk16"),
    "celesta": (8, L, "sparse"), "glockenspiel": (9, L, "sparse"), "music box": (10, A, "arp8"),
    "vibraphone": (11, L, ""), "vibes": (11, L, ""), "marimba": (12, A, "arp8"), "xylophone": (13, L, ""),
    "bells": (14, L, "sparse"), "tubular bells": (14, L, "sparse"), "chimes": (14, L, "sparse"),
    "dulcimer": (15, A, "arp8"),
    "organ": (16, C, ""), "hammond": (16, C, ""), "b3": (16, C, ""), "rock organ": (18, C, ""),
    "church organ": (19, PD, ""), "pipe organ": (19, PD, ""), "accordion": (21, C, ""),
    "harmonica": (22, L, ""), "bandoneon": (23, C, ""),
    # guitars
    "nylon guitar": (24, C, ""), "classical guitar": (24, C, ""), "spanish guitar": (24, C, ""),
    "acoustic guitar": (25, C, ""), "steel guitar": (25, C, ""), "guitar": (25, C, ""),
    "guitars": (25, C, ""), "jazz guitar": (26, C, ""), "electric guitar": (27, C, ""),
    "clean guitar": (27, C, ""), "muted guitar": (28, C, "funk16"), "overdrive guitar": (29, C, "power"),
    "overdriven guitar": (29, C, "power"), "distorted guitar": (30, C, "power"),
    "distortion guitar": (30, C, "power"), "guitar harmonics": (31, L, "sparse"),
    # basses
    "upright bass": (32, B, ""), "acoustic bass": (32, B, ""), "double bass": (32, B, ""),
    "electric bass": (33, B, ""), "finger bass": (33, B, ""), "bass guitar": (33, B, ""),
    "pick bass": (34, B, ""), "fretless bass": (35, B, ""), "fretless": (35, B, ""),
    "slap bass": (36, B, "funk"), "synth bass": (38, B, ""), "808 bass": (38, B, "808"),
    "808": (38, B, "808"), "sub bass": (38, B, ""), "reese": (39, B, "reese"), "reese bass": (39, B, "reese"),
    "acid bass": (38, B, "rolling"),
    # strings
    "violin": (40, L, ""), "violins": (40, L, ""), "fiddle": (110, L, ""), "viola": (41, C, ""),
    "cello": (42, B, ""), "cellos": (42, B, ""), "contrabass": (43, B, ""),
    "tremolo strings": (44, PD, ""), "pizzicato": (45, A, "arp8"), "pizz": (45, A, "arp8"),
    "harp": (46, A, "harp"), "timpani": (47, P, ""), "strings": (48, PD, ""),
    "string ensemble": (48, PD, ""), "orchestra": (48, PD, ""), "slow strings": (49, PD, ""),
    "synth strings": (50, PD, ""),
    # voices
    "choir": (52, PD, ""), "voices": (52, PD, ""), "aahs": (52, PD, ""), "vocals": (53, L, ""),
    "vocal": (53, L, ""), "oohs": (53, PD, ""), "synth voice": (54, PD, ""), "orchestra hit": (55, C, "stab"),
    # brass
    "trumpet": (56, L, ""), "trombone": (57, L, ""), "tuba": (58, B, ""), "muted trumpet": (59, L, ""),
    "french horn": (60, PD, "swell"), "horn": (60, PD, "swell"), "horns": (61, C, "stab"),
    "brass": (61, C, "stab"), "brass section": (61, C, "stab"), "synth brass": (62, C, "stab"),
    # reeds and pipes
    "soprano sax": (64, L, ""), "sax": (65, L, ""), "saxophone": (65, L, ""), "alto sax": (65, L, ""),
    "tenor sax": (66, L, ""), "baritone sax": (67, L, ""), "oboe": (68, L, ""),
    "english horn": (69, L, ""), "bassoon": (70, B, ""), "clarinet": (71, L, ""), "piccolo": (72, L, ""),
    "flute": (73, L, ""), "flutes": (73, L, ""), "recorder": (74, L, ""), "pan flute": (75, L, ""),
    "panflute": (75, L, ""), "shakuhachi": (77, L, "sparse"), "whistle": (78, L, ""), "ocarina": (79, L, ""),
    # synths
    "chiptune": (80, L, ""), "square lead": (80, L, ""), "8-bit": (80, L, ""), "lead": (81, L, ""),
    "synth lead": (81, L, ""), "saw lead": (81, L, ""), "synth": (81, L, ""), "pluck": (84, A, "arp8"),
    "plucks": (84, A, "arp8"), "arp": (81, A, ""), "arpeggio": (81, A, ""), "arpeggios": (81, A, ""),
    "pad": (89, PD, ""), "pads": (89, PD, ""), "warm pad": (89, PD, ""), "synth pad": (89, PD, ""),
    "polysynth": (90, C, "stab"), "space pad": (91, PD, ""), "choir pad": (91, PD, ""),
    "bowed pad": (92, PD, ""), "metallic pad": (93, PD, ""), "halo pad": (94, PD, ""),
    "sweep pad": (95, PD, ""), "drone": (89, PD, "swell"), "atmosphere": (99, PD, ""),
    "crystal": (98, L, "sparse"),
    # world
    "sitar": (104, L, ""), "banjo": (105, C, ""), "shamisen": (106, L, ""), "koto": (107, A, "harp"),
    "kalimba": (108, A, "arp8"), "bagpipe": (109, L, ""), "bagpipes": (109, L, ""),
    "shanai": (111, L, ""), "steel drums": (114, L, ""), "steel pan": (114, L, ""),
    "taiko": (116, P, ""), "melodic tom": (117, P, ""), "synth drum": (118, P, ""),
    "agogo": (113, P, ""), "woodblock": (115, P, ""),
}

#: styles played as their nearest genre (an alias above) that bring their own instruments,
#: for the roles the prompt does not name
STYLE_INSTRUMENTS: dict[str, tuple[str, ...]] = {
    "folk": ("acoustic guitar",), "folk rock": ("acoustic guitar",), "americana": ("steel guitar",),
    "country": ("steel guitar", "fiddle"), "bluegrass": ("banjo", "fiddle"),
    "celtic": ("acoustic guitar", "fiddle"), "sea shanty": ("accordion",),
    "flamenco": ("nylon guitar",), "tango": ("bandoneon",), "mariachi": ("nylon guitar", "trumpet"),
    "chiptune": ("square lead",), "8-bit": ("square lead",), "8 bit": ("square lead",),
    "gamelan": ("bells",), "military march": ("trumpet",),
}

#: drum words: word → (kit or None, extra lanes {lane: pattern}, groove or None)
DRUM_WORDS: dict[str, tuple[int | None, dict, str | None]] = {
    "brushes": (40, {}, "brush"), "brush": (40, {}, "brush"), "brushed": (40, {}, "brush"),
    "808s": (25, {}, None), "tr-808": (25, {}, None), "909": (24, {}, None), "electronic drums": (24, {}, None),
    "drum machine": (24, {}, None), "jazz kit": (32, {}, None), "power kit": (16, {}, None),
    "room kit": (8, {}, None),
    "hats": (None, {"chat": "xoxoxoxoxoxoxoxo"}, None), "hi-hats": (None, {"chat": "xoxoxoxoxoxoxoxo"}, None),
    "hihats": (None, {"chat": "xoxoxoxoxoxoxoxo"}, None), "hi hats": (None, {"chat": "xoxoxoxoxoxoxoxo"}, None),
    "breakbeat": (None, {}, "break"), "breakbeats": (None, {}, "break"), "breaks": (None, {}, "break"),
    "amen": (None, {}, "break"), "four on the floor": (None, {}, "four"),
    "four-on-the-floor": (None, {}, "four"),
    "claps": (None, {"clap": "....X.......X..."}, None), "shaker": (None, {"shaker": "oxoxoxoxoxoxoxox"}, None),
    "tambourine": (None, {"tamb": "....x.......x..."}, None),
    "congas": (None, {"conga": "..x..x.x..x..x.x", "conga_lo": "x.......x......."}, None),
    "conga": (None, {"conga": "..x..x.x..x..x.x", "conga_lo": "x.......x......."}, None),
    "bongos": (None, {"bongo": "x.x.x..xx.x.x..x", "bongo_lo": "...x.......x...."}, None),
    "cowbell": (None, {"cowbell": "x...x...x...x..."}, None), "clave": (None, {"clave": "x..x..x...x.x..."}, None),
    "rimshot": (None, {"rim": "....x.......x..."}, None), "ride": (None, {"ride": "x.x.x.x.x.x.x.x."}, None),
}

#: named grooves drum words ask for (replace the genre's)
SPECIAL_GROOVES = {
    "brush": {"swirl": "x...x...x...x...", "snare": "....X.......X...", "phat": "....x.......x...",
              "kick": "o.......o......."},
    "break": {"kick": "X.X.......XX....", "snare": "....X..o.o..X..o", "chat": "x.x.x.x.x.x.x.x.",
              "ohat+": "......x.......x."},
    "four": {"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x."},
}

ROLE_MIX = {  # role → (level, pan, reverb scale, chorus)
    "drums": (0.9, 0.0, 0.6, 0.0), "bass": (0.85, 0.0, 0.15, 0.0), "chords": (0.6, -0.35, 1.0, 0.15),
    "pad": (0.45, 0.3, 1.4, 0.35), "lead": (0.62, 0.2, 1.0, 0.1), "arp": (0.45, -0.45, 1.2, 0.2),
    "perc": (0.6, 0.35, 1.0, 0.0),
}

ROLE_STYLE = {"bass": "root8", "chords": "block", "pad": "pad", "lead": "melody", "arp": "arp16", "perc": "perc"}
