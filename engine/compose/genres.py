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

Bass patterns (``Genre.bass_pats``) are one character per 16th step, too — a tone, held by ``-``:

    ``R`` root  ``5`` fifth  ``l`` fifth below  ``8`` octave  ``3`` third  ``7`` seventh (the chord's, else b7)
    ``6`` major sixth  ``2`` ninth  ``A`` a chromatic approach to the next chord's root  ``g`` a dead (ghost) note
    ``-`` hold the note before  ``.`` rest

and comping patterns (``Genre.comp_pats``) the chord part's strokes:

    ``x`` the voicing  ``X`` accented  ``o`` soft and short (a muted chop)  ``s``/``S`` strummed down (accented)
    ``u`` strummed up  ``t`` the top notes only (a skank, a high stab)  ``b`` the lowest note only (the "oom")
    ``-`` hold the stroke before  ``.`` rest

A pattern spans one bar of the meter (or a whole number of bars: bar ``n`` plays segment ``n``);
patterns of another length are left out in a meter they do not fit, where the meter's own figures play.
Compound meters (6/8, 9/8, 12/8) count their tempo in dotted quarters: a compound style's ``bpm`` is
in that beat.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

# --- GM drum map -------------------------------------------------------------------------------
LANES = {
    "kick": 36, "kick2": 35, "snare": 38, "rim": 37, "clap": 39, "esnare": 40, "swirl": 40,
    "chat": 42, "phat": 44, "ohat": 46, "ride": 51, "bell": 53, "crash": 49, "china": 52,
    "splash": 55, "tamb": 54, "shaker": 70, "cowbell": 56, "clave": 75, "conga": 63,
    "conga_lo": 64, "conga_mute": 62, "bongo": 60, "bongo_lo": 61, "cabasa": 69,
    "woodblock": 76, "triangle": 81, "tom_hi": 50, "tom_mid": 47, "tom_lo": 45, "floor": 41,
    "timbale": 65, "agogo": 67, "guiro": 73,
    "timbale_lo": 66, "agogo_lo": 68, "guiro_long": 74, "cuica": 78, "cuica_open": 79, "triangle_mute": 80,
    "maracas": 70, "woodblock_lo": 77, "vibraslap": 58, "whistle": 71, "bongo_hi": 60, "conga_hi": 62,
    "tom_hi2": 48, "tom_lo2": 43, "side": 37, "cymbal": 57, "chinese": 52, "splash2": 55, "ride2": 59,
    "jingle": 83, "castanets": 85, "surdo_mute": 86, "surdo": 87, "hclap": 39, "snare2": 40, "kick_lo": 35,
    "belltree": 84,
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
#: Turkish makams and Arabic maqams by the mode nearest their scale in twelve notes (a makam named
#: in a prompt is its mode): hicaz/hijaz is the phrygian dominant (freygish), nihavend/nahawand the
#: minor, kürdi the phrygian, bayati the phrygian too (its neutral second, rounded down)
MAQAM_MODES = {"hicaz": "freygish", "hijaz": "freygish", "hicazkar": "freygish", "hijaz kar": "freygish",
               "nihavend": "minor", "nahawand": "minor", "kurdi": "phrygian", "bayati": "phrygian"}
#: ragas by the mode nearest their thaat's scale (a raga's name in a prompt is its mode)
RAGA_MODES = {"yaman": "lydian", "yaman kalyan": "lydian", "kalyan": "lydian", "bilawal": "major",
              "khamaj": "mixolydian", "kafi": "dorian", "bhairavi": "phrygian", "asavari": "minor", "todi": "phrygian",
              # the Carnatic melakartas and pentatonic ragas by the church mode their notes sit in
              "mohanam": "major", "bhupali": "major", "bhoopali": "major", "hamsadhwani": "major",
              "shankarabharanam": "major", "kalyani": "lydian", "harikambhoji": "mixolydian",
              "kharaharapriya": "dorian", "abhogi": "dorian", "bhimpalasi": "dorian", "natabhairavi": "minor",
              "hindolam": "minor", "malkauns": "minor", "hanumatodi": "phrygian"}
MODE_ALIASES.update(RAGA_MODES)
MODE_ALIASES.update(MAQAM_MODES)
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
    # the modes vamp on their tonic, the colour chord a visit: "i7 IV7 i7 IV7" gave the dorian's IV7
    # (the parent major's V7) half the time and a funk in D dorian was heard in C (sets A, D, I); D–C–G–D
    # sits in G as much as in D mixolydian
    "dorian": ("i7 IV7 i7 i7", "i7 ii7 i7 IV7", "i7 VII IV i7", "i7 i7 IV7 i7"),
    "mixolydian": ("I bVII IV I", "I I bVII I", "I v bVII I", "I bVII I I"),
    "phrygian": ("i bII i bII", "i bII bIII bII", "i i bII VII", "i bVI bII i"),
    # lydian's II sounds over the tonic in the bass (II/I): without the pedal, I–II is heard as IV–V
    # of the key a fifth above (a shoegaze in F lydian heard C major)
    "lydian": ("I II/I I II/I", "I II/I vii I", "Imaj7 II/I Imaj7 vi", "I II/I V I"),
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
    "mixolydian": ("I7 bVII7 IV7 I7", "I7 I7 bVII I7"),
    "dorian": ("i7 IV7 i7 i7", "i7 i7 IV7 i7"),
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
    # a drone on the tonic: "i7 iv7 VI III" gave i one bar in four, and a hauntology piece in D
    # minor (no E in any chord) was heard in G minor, both seeds (set G)
    "minor": ("i9 i9 VImaj7 VImaj7", "i VI i VII", "i7 iv7 i7 VI"),
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
    family: str = ""                 # the style's family ("latin", "rock", "electronic" …): explain, tests
    tone: float = 0.0                # its colour in the mix: −1 dark (lofi) … +1 bright (metal)
    bass_pats: tuple = ()            # bass patterns (see the module doc); () → the ``bass`` style's figures
    comp_pats: tuple = ()            # the chords role's strokes (see the module doc); () → the ``chords`` style
    intro_bars: int = 2              # bars before the band is in (a long build asks for more)
    groups: dict = field(default_factory=dict)   # meter → grouping in eighths, e.g. {(9, 8): (2, 2, 2, 3)}
    chromatic_approach: bool = False # the bass leans into the next root by a semitone (jazz, blues, soul …)
    riffs: bool = False              # the power-chord guitars play riffs on the mode's degrees (doom, grunge, metal)


D, B, C, PD, L, A, P = "drums", "bass", "chords", "pad", "lead", "arp", "perc"


def _p(name, role, program, style="", **kw):
    return PartSpec(name, role, program, style, **kw)


GENRES: dict[str, Genre] = {}


def _g(**kw):
    g = Genre(**kw)
    GENRES[g.name] = g
    return g


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
    "groovy": ("funk", "disco", "house"), "peaceful": ("ambient", "classical"), "ballad": ("pop", "folk"),
    "angry": ("punk", "metal", "rock"), "hype": ("trap", "house"), "tragic": ("cinematic", "classical"),
    "mournful": ("classical", "cinematic"), "heroic": ("cinematic",), "majestic": ("cinematic",),
    "spooky": ("cinematic",), "haunted": ("cinematic",), "eerie": ("ambient", "cinematic"),
    "mellow": ("lofi", "soul", "bossa nova"), "cozy": ("lofi", "jazz"), "playful": ("pop", "classical"),
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
    "soft": (None, 0.95, -0.3), "whimsical": (None, 1.0, -0.2), "tender": (None, 0.9, -0.3), "delicate": (None, 0.95, -0.3), "intense": (None, 1.05, 0.3), "heavy": (None, 1.0, 0.3), "gloomy": ("minor", 0.9, -0.1), "triumphant": ("major", 1.02, 0.3),
    "tragic": ("minor", 0.86, -0.1), "mournful": ("minor", 0.82, -0.2), "lonely": ("minor", 0.88, -0.2),
    "heroic": ("major", 1.04, 0.3), "victorious": ("major", 1.04, 0.3), "majestic": ("major", 0.96, 0.2),
    "haunted": ("minor", 0.92, 0.0), "haunting": ("minor", 0.92, -0.1), "eerie": ("phrygian", 0.9, 0.0),
    "spooky": ("minor", 0.96, 0.0), "creepy": ("phrygian", 0.92, 0.0), "playful": ("major", 1.04, 0.0),
    "cheerful": ("major", 1.05, 0.1), "joyful": ("major", 1.05, 0.1), "mellow": (None, 0.92, -0.2),
    "cozy": (None, 0.92, -0.2), "somber": ("minor", 0.88, -0.1), "hype": (None, 1.06, 0.4),
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
    "organ": (16, C, ""), "hammond": (16, C, ""), "b3": (16, C, ""),
    "hammond b3": (16, C, ""), "hammond b3 organ": (16, C, ""), "hammond b-3": (16, C, ""), "b3 organ": (16, C, ""),
    "b-3 organ": (16, C, ""), "rock organ": (18, C, ""),
    "church organ": (19, PD, ""), "pipe organ": (19, PD, ""), "accordion": (21, C, ""),
    "harmonica": (22, L, ""), "bandoneon": (23, C, ""),
    # guitars
    "nylon guitar": (24, C, ""), "classical guitar": (24, C, ""), "spanish guitar": (24, C, ""),
    "acoustic guitar": (25, C, ""), "steel guitar": (25, C, ""), "guitar": (25, C, ""),
    "guitars": (25, C, ""), "jazz guitar": (26, C, ""), "electric guitar": (27, C, ""),
    "clean guitar": (27, C, ""), "muted guitar": (28, C, "funk16"), "overdrive guitar": (29, C, "power"),
    "overdriven guitar": (29, C, "power"), "distorted guitar": (30, C, "power"),
    "distortion guitar": (30, C, "power"), "guitar harmonics": (31, L, "sparse"),
    # a shred is a lead (fast runs on a distorted guitar); tapping is a clean guitar's arpeggios
    "shredding guitar": (30, L, "melody"), "shred guitar": (30, L, "melody"),
    "shredding guitars": (30, L, "melody"), "guitar shred": (30, L, "melody"),
    "tapped guitar": (27, A, "arp8"), "tapping guitar": (27, A, "arp8"), "clean tapped guitar": (27, A, "arp8"),
    "tapped guitar lines": (27, A, "arp8"), "twinkly guitar": (27, A, "arp8"), "twinkly guitars": (27, A, "arp8"),
    # basses
    "upright bass": (32, B, ""), "acoustic bass": (32, B, ""), "double bass": (32, B, ""),
    "electric bass": (33, B, ""), "finger bass": (33, B, ""), "bass guitar": (33, B, ""),
    "pick bass": (34, B, ""), "fretless bass": (35, B, ""), "fretless": (35, B, ""),
    "slap bass": (36, B, "funk"), "synth bass": (38, B, ""), "808 bass": (38, B, "808"),
    "808": (38, B, "808"), "sub bass": (38, B, ""), "reese": (39, B, "reese"), "reese bass": (39, B, "reese"),
    "acid bass": (38, B, "rolling"), "303 acid bass": (38, B, "rolling"), "303 bass": (38, B, "rolling"),
    "acid 303 bass": (38, B, "rolling"), "tb-303 bass": (38, B, "rolling"),
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
    "uilleann pipes": (109, L, ""), "ukulele": (24, C, ""), "lute": (24, C, ""),
    # folk instruments GM has no program of their own for, by the program that sounds nearest
    "harmonium": (20, PD, ""), "pump organ": (20, PD, ""),
    "cimbalom": (15, A, "arp8"), "cymbalom": (15, A, "arp8"), "hammered dulcimer": (15, A, "arp8"),
    "santur": (15, A, "arp8"), "santoor": (15, A, "arp8"),
    "arpa": (46, A, "harp"), "arpa llanera": (46, A, "harp"), "celtic harp": (46, A, "harp"),
    "cuatro": (24, C, ""), "tres guitar": (25, C, ""), "tres cubano": (25, C, ""),
    "laouto": (25, C, ""), "laout": (25, C, ""), "bouzouki": (25, C, ""), "oud": (24, L, ""),
    "lyra": (110, L, ""), "cretan lyra": (110, L, ""), "gusle": (110, L, ""),
    "toy piano": (8, L, "sparse"),
    "marimbula": (32, B, ""), "rumba box": (32, B, ""),
    "square wave bass": (80, B, ""), "square bass": (80, B, ""),
    # tremolo picking: unbroken 16ths on a distorted guitar (black metal's comping)
    "tremolo picked guitar": (30, C, "tremolo"), "tremolo-picked guitar": (30, C, "tremolo"),
    "tremolo picking": (30, C, "tremolo"), "tremolo picked": (30, C, "tremolo"),
    "shanai": (111, L, ""), "steel drums": (114, L, ""), "steel pan": (114, L, ""), "steel drum": (114, L, ""), "steelpan": (114, L, ""),
    "steel-drum": (114, L, ""), "steel-drums": (114, L, ""), "steeldrum": (114, L, ""), "steeldrums": (114, L, ""),
    "taiko": (116, P, ""), "melodic tom": (117, P, ""), "synth drum": (118, P, ""),
    "agogo": (113, P, ""), "woodblock": (115, P, ""),
    # more of the world's instruments, by the nearest program
    "erhu": (110, L, ""), "er hu": (110, L, ""), "morin khuur": (110, L, ""), "sarangi": (110, L, ""),
    "tanpura": (104, A, "tanpura"), "tambura": (104, A, "tanpura"), "sarod": (104, L, ""), "veena": (104, L, ""),
    "bansuri": (73, L, ""), "shakuhachi": (77, L, ""), "duduk": (68, L, ""), "ney": (77, L, ""),
    "hang drum": (114, L, ""), "handpan": (114, L, ""), "tenor pan": (114, L, ""),
    "tenor pans": (114, L, ""), "steelpan": (114, L, ""), "steel pans": (114, L, ""), "bass pans": (114, B, ""),
    "guzheng": (107, A, "harp"), "kora": (46, A, "harp"), "mbira": (108, A, "arp8"), "balalaika": (105, C, ""),
    "charango": (24, C, ""), "bandura": (46, A, "harp"), "bajo sexto": (25, C, ""), "bajo quinto": (25, C, ""),
    "twelve string guitar": (25, C, ""), "12 string guitar": (25, C, ""), "12-string guitar": (25, C, ""),
    "tololoche": (32, B, ""), "sanfona": (21, L, ""), "squeezebox": (21, C, ""),
    "bandoneon": (23, C, ""), "melodica": (22, L, ""), "bamboo sax": (71, L, ""),
    "theremin": (85, L, ""), "talk box": (85, L, ""), "talkbox": (85, L, ""), "vocoder": (85, L, ""),
    "dx7 electric piano": (5, C, ""), "dx7 piano": (5, C, ""), "fm piano": (5, C, ""),
    "fm electric piano": (5, C, ""), "minimoog": (81, L, ""), "303": (87, A, "acid16"), "tb-303": (87, A, "acid16"), "tb303": (87, A, "acid16"),
    "mellotron choir": (52, PD, ""), "mellotron flute": (73, L, ""), "fuzz bass": (34, B, ""),
    "distorted bass": (34, B, ""), "bell melody": (14, L, "sparse"), "bell": (14, L, "sparse"),
    "didgeridoo": (70, B, "drone"),
    # set E's words: the Andes, the Balkans, Punjab, Anatolia, Sweden, Portugal, Argentina
    "minimoog bass": (38, B, ""), "log drum": (38, B, ""), "log drums": (38, B, ""),
    "guitarra": (24, C, ""), "guitarra criolla": (24, C, ""), "flauta": (73, L, ""), "quena": (73, L, ""),
    "zampona": (75, L, ""), "siku": (75, L, ""), "gaida": (109, L, ""), "kaval": (73, L, ""),
    "gadulka": (110, L, ""), "nyckelharpa": (110, L, ""), "baglama": (105, L, ""), "saz": (105, L, ""),
    "tumbi": (106, L, ""), "algoza": (73, L, ""), "shehnai": (111, L, ""), "portuguese guitar": (25, L, ""),
    "voice": (53, L, ""), "mezzo voice": (53, L, ""), "soprano voice": (53, L, ""), "tenor voice": (53, L, ""),
    "arpeggiated guitar": (27, A, "arp8"), "clean arpeggiated guitar": (27, A, "arp8"),
    "funk guitar": (28, C, "funk16"), "choppy guitar": (28, C, "funk16"), "disco guitar": (28, C, "funk16"), "downtuned guitar": (30, C, "power"), "downtuned guitars": (30, C, "power"),
    # set F's words: the German, French and Portuguese names, Brittany's pipes, a Trinidad box bass
    "klarinette": (71, L, ""), "trompete": (56, L, ""),
    "trompette": (56, L, ""), "trompeta": (56, L, ""), "posaune": (57, L, ""), "geige": (40, L, ""),
    "violon": (40, L, ""), "violao": (24, C, ""), "violao de 7 cordas": (24, C, ""),
    "violao de sete cordas": (24, C, ""),
    "orgue": (16, C, ""), "orgue farfisa": (16, C, ""), "farfisa organ": (16, C, ""),
    "vox continental": (16, C, ""), "bombarde": (68, L, ""), "biniou": (109, L, ""), "biniou pipes": (109, L, ""),
    "supersaw": (81, L, ""), "supersaw lead": (81, L, ""), "supersaw chords": (81, C, ""),
    "saw chords": (81, C, ""),
    "boogie guitar": (29, C, "power"), "string stabs": (48, C, "stab"), "string stab": (48, C, "stab"),
    "box bass": (32, B, ""), "soprano": (53, L, ""), "female soprano": (53, L, ""), "female vocals": (53, L, ""),
    "female vocal": (53, L, ""),
    "keyboard bass": (38, B, ""), "key bass": (38, B, ""), "synth stab": (81, C, "stab"), "synth stabs": (81, C, "stab"),
    "bird calls": (123, L, "sparse"), "bird call": (123, L, "sparse"), "birdsong": (123, L, "sparse"),
    "bird song": (123, L, "sparse"), "bird tweet": (123, L, "sparse"),
    "12-string acoustic": (25, C, ""), "12 string acoustic": (25, C, ""), "twelve-string acoustic": (25, C, ""),
    "twelve string acoustic": (25, C, ""),
    # set H's words: Japan's court orchestra, Isan, the Andes of Colombia, Poland, Turkey, Mexico,
    # the Virgin Islands, Indonesia; Spanish names; the 80s' Syndrum
    "hichiriki": (68, L, ""), "ryuteki": (73, L, ""), "gakuso": (107, A, "harp"), "khaen": (22, C, ""),
    "phin": (25, L, ""), "bandola": (25, L, ""), "tiple": (25, C, ""), "klarnet": (71, L, ""),
    "skrzypce": (40, L, ""), "skrzypcach": (40, L, ""), "wiolonczela": (42, B, ""), "suling": (73, L, ""),
    "wooden flute": (73, L, ""), "ass pipe": (58, B, ""), "bajo electrico": (33, B, ""),
    "guitarra electrica": (27, C, ""), "syndrum": (118, P, ""), "syndrums": (118, P, ""),
    "gtr": (25, C, ""), "acoustic gtr": (25, C, ""), "electric gtr": (27, C, ""), "clean electric gtr": (27, C, ""),
    "clean gtr": (27, C, ""), "nylon string gtr": (24, C, ""), "nylon string guitar": (24, C, ""),
    "nylon-string guitar": (24, C, ""), "keyboard": (81, C, ""), "keyboard riff": (81, L, ""),
    "keyboard lead": (81, L, ""), "synth keyboard": (81, L, ""), "synth blip": (80, L, "sparse"),
    "low strings": (42, PD, ""), "keman": (40, L, ""),
    "string ostinato": (48, C, "ostinato"), "strings ostinato": (48, C, "ostinato"), "ostinato strings": (48, C, "ostinato"),
    "gayageum": (107, C, ""), "haegeum": (110, L, ""),
    # an ensemble named beside another style ("baroque pop … harpsichord, string quartet") plays in it
    "string quartet": (48, PD, ""), "string quartets": (48, PD, ""),
    # a cheap home keyboard (disco polo's "tani keyboard", a Casio) is its synth voices, not a piano
    **dict.fromkeys(("cheap keyboard", "tani keyboard", "casio keyboard", "home keyboard", "arranger keyboard",
                     "toy keyboard", "budget keyboard"), (81, L, "")),
    "synth blips": (80, L, "sparse"), "horn stab": (61, C, "stab"), "horn stabs": (61, C, "stab"),
    "brass stab": (61, C, "stab"), "brass stabs": (61, C, "stab"), "sho mouth organ": (20, PD, ""), "casio synth": (80, L, ""),
    "casio synthie": (80, L, ""), "casio-synthie": (80, L, ""),
    # set G's words: the Levant's reed and zither, Italian, Dutch and Portuguese names, a string machine
    "mijwiz": (111, L, ""), "mizmar": (111, L, ""), "zurna": (111, L, ""), "arghul": (111, L, ""),
    "qanun": (107, A, "harp"), "kanun": (107, A, "harp"), "nay": (77, L, ""), "buzuq": (105, L, ""),
    "string machine": (50, PD, ""), "string ensemble": (48, PD, ""), "solina": (50, PD, ""),
    "bowed glass": (92, PD, ""), "glass harmonica": (92, PD, ""), "war horns": (60, L, ""),
    "war horn": (60, L, ""), "fisarmonica": (21, C, ""), "accordeon": (21, C, ""), "acordeao": (21, C, ""),
    "hammondorgel": (16, C, ""), "strijkers": (48, PD, ""), "contrabas": (43, B, ""),
    "trompetes": (56, L, ""), "saxofones": (65, L, ""), "saxofone": (65, L, ""),
    "trombone section": (57, C, "stab"), "sutoringusu": (48, PD, ""), "eregi": (27, C, ""),
}

#: the General MIDI 1 program names, program 0 … 127 (the words every SoundFont labels its presets with)
GM_NAMES = (
    "acoustic grand piano", "bright acoustic piano", "electric grand piano", "honky-tonk piano", "electric piano 1",
    "electric piano 2", "harpsichord", "clavi", "celesta", "glockenspiel", "music box", "vibraphone", "marimba",
    "xylophone", "tubular bells", "dulcimer", "drawbar organ", "percussive organ", "rock organ", "church organ",
    "reed organ", "accordion", "harmonica", "tango accordion", "acoustic guitar (nylon)", "acoustic guitar (steel)",
    "electric guitar (jazz)", "electric guitar (clean)", "electric guitar (muted)", "overdriven guitar",
    "distortion guitar", "guitar harmonics", "acoustic bass", "electric bass (finger)", "electric bass (pick)",
    "fretless bass", "slap bass 1", "slap bass 2", "synth bass 1", "synth bass 2", "violin", "viola", "cello",
    "contrabass", "tremolo strings", "pizzicato strings", "orchestral harp", "timpani", "string ensemble 1",
    "string ensemble 2", "synth strings 1", "synth strings 2", "choir aahs", "voice oohs", "synth voice",
    "orchestra hit", "trumpet", "trombone", "tuba", "muted trumpet", "french horn", "brass section", "synth brass 1",
    "synth brass 2", "soprano sax", "alto sax", "tenor sax", "baritone sax", "oboe", "english horn", "bassoon",
    "clarinet", "piccolo", "flute", "recorder", "pan flute", "blown bottle", "shakuhachi", "whistle", "ocarina",
    "lead 1 (square)", "lead 2 (sawtooth)", "lead 3 (calliope)", "lead 4 (chiff)", "lead 5 (charang)",
    "lead 6 (voice)", "lead 7 (fifths)", "lead 8 (bass + lead)", "pad 1 (new age)", "pad 2 (warm)",
    "pad 3 (polysynth)", "pad 4 (choir)", "pad 5 (bowed)", "pad 6 (metallic)", "pad 7 (halo)", "pad 8 (sweep)",
    "fx 1 (rain)", "fx 2 (soundtrack)", "fx 3 (crystal)", "fx 4 (atmosphere)", "fx 5 (brightness)", "fx 6 (goblins)",
    "fx 7 (echoes)", "fx 8 (sci-fi)", "sitar", "banjo", "shamisen", "koto", "kalimba", "bag pipe", "fiddle", "shanai",
    "tinkle bell", "agogo", "steel drums", "woodblock", "taiko drum", "melodic tom", "synth drum",
    "reverse cymbal", "guitar fret noise", "breath noise", "seashore", "bird tweet", "telephone ring", "helicopter",
    "applause", "gunshot",
)
assert len(GM_NAMES) == 128


def _gm_role(program: int) -> tuple[str, str]:
    """The role (and playing style) a GM program plays when the prompt names it by its GM name."""
    fam = program // 8
    if fam in (0, 2, 3):
        return (L, "sparse") if program == 31 else (C, "")
    if fam == 1:
        return (A, "arp8") if program in (10, 12, 15) else (L, "sparse" if program in (8, 9, 14) else "")
    if fam == 4:
        return B, ""
    if fam == 5:
        return {40: (L, ""), 41: (C, ""), 42: (B, ""), 43: (B, ""), 44: (PD, ""), 45: (A, "arp8"), 46: (A, "harp"),
                47: (P, "")}[program]
    if fam == 6:
        return (C, "stab") if program == 55 else (PD, "")
    if fam == 7:
        return (B, "") if program == 58 else (PD, "swell") if program == 60 else (C, "stab") if program in (61, 62, 63) \
            else (L, "")
    if fam in (8, 9, 10, 13):
        return (B, "") if program == 70 else (L, "")
    if fam in (11, 12):
        return PD, ""
    if fam == 14:
        return (L, "") if program == 114 else (P, "")
    return PD, "swell"


def _gm_words() -> dict[str, tuple[int, str, str]]:
    """Each GM name as a prompt word, and its short forms: "acoustic guitar (nylon)" is also
    "nylon acoustic guitar"; "lead 1 (square)" also "square lead"; "synth bass 1" also "synth bass"."""
    out: dict[str, tuple[int, str, str]] = {}
    for prog, name in enumerate(GM_NAMES):
        role, style = _gm_role(prog)
        forms = [name]
        if "(" in name:
            head, _, inner = name.partition(" (")
            inner = inner.rstrip(")")
            base = head.rstrip(" 0123456789")
            forms += [head, f"{inner} {base}", f"{base} {inner}"]
        elif name[-1].isdigit():
            forms.append(name.rstrip(" 0123456789"))
        for f in forms:
            out.setdefault(f.strip(), (prog, role, style))
    return out


for _w, _v in _gm_words().items():
    INSTRUMENTS.setdefault(_w, _v)

#: the lanes of a drum kit: a groove with none of them is hand percussion, and a kit said no to
#: ("no drum kit, darbuka and riq") leaves the other lanes playing (the high floor tom, ``tom_lo2``,
#: is a polska's stamping foot, and ``tom_hi2`` a hand drum's: no kit lanes)
KIT_LANES = frozenset(("kick", "kick2", "kick_lo", "snare", "snare2", "esnare", "side", "rim", "clap", "chat", "ohat",
                       "phat", "ride", "ride2", "bell", "crash", "china", "chinese", "splash", "splash2", "cymbal",
                       "floor", "tom_hi", "tom_mid", "tom_lo", "swirl"))

#: styles played as their nearest genre (an alias above) that bring their own instruments,
#: for the roles the prompt does not name
STYLE_INSTRUMENTS: dict[str, tuple[str, ...]] = {
    "orchestral dubstep": ("strings", "brass"),
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
    "handclaps": (None, {"clap": "....X.......X..."}, None), "hand claps": (None, {"clap": "....X.......X..."}, None),
    "clapping": (None, {"clap": "....X.......X..."}, None), "clap": (None, {"clap": "....X.......X..."}, None),
    "shakers": (None, {"shaker": "oxoxoxoxoxoxoxox"}, None), "maracas": (None, {"maracas": "xoxoxoxoxoxoxoxo"}, None),
    "tambourines": (None, {"tamb": "..x...x...x...x."}, None), "cabasa": (None, {"cabasa": "x.xox.xox.xox.xo"}, None),
    "timbales": (None, {"timbale": "x..x..x...x.x...", "timbale_lo": "......X.......x."}, None),
    "timbale": (None, {"timbale": "x..x..x...x.x...", "timbale_lo": "......X.......x."}, None),
    "cuica": (None, {"cuica": "..x...x...x.x...", "cuica_open": "......x.......x."}, None),
    "guiro": (None, {"guiro": "x.x.x.x.x.x.x.x.", "guiro_long": "x.......x......."}, None),
    "triangle": (None, {"triangle": "x...x...x...x...", "triangle_mute": "..x...x...x...x."}, None),
    "castanets": (None, {"castanets": "x.xxx.x.x.xxx.x."}, None),
    "claves": (None, {"clave": "x..x..x...x.x..."}, None),
    "bongo": (None, {"bongo": "x.x.x..xx.x.x..x", "bongo_lo": "...x.......x...."}, None),
    "djembe": (None, {"conga": "x.xx..x.x.xx..x.", "conga_lo": "X.......X......."}, None),
    "tabla": (None, {"bongo": "x.xxx.x.x.xxx.x.", "conga_lo": "X.....x.X......."}, None),
    "bodhran": (None, {"tom_lo": "X.xxX.xxX.xxX.xx"}, None),
    # hand drums by no name: a low and a high conga's tones
    "hand drums": (None, {"conga_lo": "X.......x.......", "conga": "....x.......x.x."}, None),
    "hand drum": (None, {"conga_lo": "X.......x.......", "conga": "....x.......x.x."}, None),
    "surdo": (None, {"surdo_mute": "x.......", "surdo": "....X..."}, None),
    "tamborim": (None, {"side": "x.xx.x.xx.xx.x.x"}, None),
    "jingle bells": (None, {"jingle": "x.x.x.x.x.x.x.x."}, None), "sleigh bells": (None, {"jingle": "x.x.x.x.x.x.x.x."}, None),
    "wood block": (None, {"woodblock": "x...x...x...x...", "woodblock_lo": "..x...x...x...x."}, None),
    "woodblocks": (None, {"woodblock": "x...x...x...x...", "woodblock_lo": "..x...x...x...x."}, None),
    "agogo bells": (None, {"agogo": "x.x..x.x..x.x...", "agogo_lo": "...x.....x....x."}, None),
    "vibraslap": (None, {"vibraslap": "............x..."}, None),
    "toms": (None, {"tom_hi": "..x.......x.....", "tom_lo": "......x.......x."}, None),
    "tom toms": (None, {"tom_hi": "..x.......x.....", "tom_lo": "......x.......x."}, None),
    "cymbals": (None, {"crash": "X..............."}, None),
}
DRUM_WORDS["agogo bell"] = DRUM_WORDS["agogo bells"]
# the tambourine by its other names (Italian for the tarantella, Brazilian, Arabic): in 16ths
DRUM_WORDS.update({w: (None, {"tamb": "x.xxx.xxx.xxx.xx"}, None)
                   for w in ("tamburello", "tamburelli", "pandeiro", "riq")})
# the samba school's whistle (apito): the mestre's calls, on the bar's last beat
DRUM_WORDS.update({w: (None, {"whistle": "............x.x."}, None) for w in ("samba whistle", "apito")})
# more drums by their names: the cajón (its bass tone and slap), Brazil's zabumba, India's dholak and
# dhol, the vallenato caja, Trinidad's engine room, claps by snapping, stomps, roto-toms, a gong
DRUM_WORDS.update({
    "cajon": (None, {"kick_lo": "X.....x...x.....", "side": "....X.......X..."}, None),
    "zabumba": (None, {"kick_lo": "X..X....X..X....", "tom_lo": "......x.......x."}, None),
    "dholak": (None, {"bongo": "x.xxx.x.x.xxx.x.", "conga_lo": "X..X....X..X...."}, None),
    "dhol": (None, {"floor": "X..x..X.X..x..X.", "tom_hi": "..x...x...x...x."}, None),
    # the darbuka's maqsum (doum, tek tek, doum, tek), the Tuareg calabash's thump, the bombo's beater and rim
    "darbuka": (None, {"conga_lo": "X.......X.......", "bongo": "..x...x.....x..."}, None),
    "bombo": (None, {"kick_lo": "X.....X...X.....", "rim": "...x.......x...."}, None),
    "calabash": (None, {"kick_lo": "X.....x.X.......", "conga_lo": "....x.......x..."}, None),
    "caja": (None, {"bongo": "x.xx.xx.x.xx.xx.", "bongo_lo": "...x.......x...."}, None),
    "engine room": (None, {"cowbell": "x.xxx.xxx.xxx.xx"}, None),
    "finger snaps": (None, {"hclap": "....x.......x..."}, None),
    "stomps": (None, {"kick_lo": "X.......X......."}, None),
    "roto toms": (None, {"tom_hi": "..x.x.....x.x...", "tom_mid": "......x.......x."}, None),
    "tom rolls": (None, {"tom_hi": "..........xx....", "tom_mid": "............xx..", "floor": "..............xx"}, None),
    "gong": (None, {"chinese": "X" + "." * 31}, None), "china cymbal": (None, {"china": "X.......X......."}, None),
    # a snare named: the backbeat where the groove has none (trap's clap gets a snare under it)
    "snare": (None, {"snare": "....X.......X..."}, None),
    # candombe's three drums: the chico's ostinato between the beats, the repique's calls, the
    # piano's low open strokes; the Garifuna drums (the primero and segunda), turtle shells struck
    "chico drum": (None, {"conga": ".xx..xx..xx..xx."}, None),
    "repique": (None, {"bongo": "....x..x..x...x."}, None),
    "piano drum": (None, {"conga_lo": "X.....x.x......."}, None),
    "garifuna drums": (None, {"conga": "x.xx.xx.x.xx.xx.", "conga_lo": "X.......X.......",
                              "conga_mute": "...x.......x...."}, None),
    "turtle shells": (None, {"clave": "x..x..x...x.x...", "woodblock": "..x...x...x...x."}, None),
    # kaseko's skratji: a big bass drum with a cymbal on top, struck together
    "skratji": (None, {"kick": "X...X...X...X...", "crash": "x.......x......."}, None),
    # set H's drums: gwoka's boula (the low conga holding the pulse), nyabinghi's funde and
    # repeater, maracatu's alfaia (the low bass drum) and gonguê (the agogô), the Turkish davul
    # (beater and switch), the banda's tambora (bass drum and cymbal) and tarola (snare), the
    # Indonesian kendang (the tabla's high and low strokes), the festejo's quijada (the jawbone:
    # the vibraslap), gagaku's kakko (a small drum's rolls), the Thai ching (finger cymbals)
    "boula": (None, {"conga_lo": "X..x..x.X..x..x.", "conga": "..x...x...x...x."}, None),
    "funde": (None, {"conga_lo": "X.....x.X.....x."}, None),
    "repeater": (None, {"bongo": "..x.xx....x.x.x.", "bongo_lo": "x.......x......."}, None),
    "alfaia": (None, {"kick_lo": "X..X..X.X..X..X.", "floor": "....x.......x..."}, None),
    "gongue": (None, {"agogo_lo": "x..x..x...x.x...", "agogo": ".x...x...x...x.."}, None),
    "davul": (None, {"kick_lo": "X.......X...X...", "rim": "..x.x.x...x...x."}, None),
    "tambora sinaloense": (None, {"kick": "X...x...X...x...", "crash": "....x.......x..."}, None),
    "banda tambora": (None, {"kick": "X...x...X...x...", "crash": "....x.......x..."}, None),
    "tarola": (None, {"snare": "..x.x.x...x.x.x."}, None),
    # (its low strokes on the beats: on 3+3+2 they were heard as a beat of dotted quarters)
    "kendang": (None, {"bongo": "x.xx.x.xx.xx.x.x", "conga_lo": "X.......X...x..."}, None),
    "quijada": (None, {"vibraslap": "....X.......X..."}, None),
    "kakko": (None, {"side": "x.......r.r.r.r."}, None),
    "ching": (None, {"bell": "..x...x...x...x."}, None),
    "klong": (None, {"floor": "X.....x.X.......", "tom_lo2": "..x.......x..x.."}, None),
})
# … and by their other names: the same entry
DRUM_WORDS.update({w: DRUM_WORDS[same] for w, same in {
    "caja vallenata": "caja", "guacharaca": "guiro", "scratcher": "guiro", "ti-fer": "triangle",
    "fingersnaps": "finger snaps", "snaps": "finger snaps", "snapping": "finger snaps", "stomp": "stomps",
    "foot stomps": "stomps", "rototoms": "roto toms", "darbouka": "darbuka", "doumbek": "darbuka",
    "tarabuka": "darbuka", "bombo leguero": "bombo", "water drum": "calabash",
    "rubboard": "guiro", "rub board": "guiro", "frottoir": "guiro", "washboard": "guiro", "tibwa": "wood block",
    "tom-heavy": "toms", "tom heavy": "toms", "timbal": "timbales", "timbal criollo": "timbales",
    "snare drum": "snare", "snares": "snare", "caixa": "snare", "caixa de guerra": "snare", "tamboril": "snare",
    "garifuna drum": "garifuna drums", "turtle shell": "turtle shells", "tanbou": "congas", "tambou": "congas",
    "goatskin drum": "congas", "goatskin drums": "congas", "carpenters saw": "guiro", "carpenter's saw": "guiro",
    "carpenter saw": "guiro", "pandeireta": "tambourine", "pandereta": "tambourine", "pandero": "tambourine",
    "gourd scraper": "guiro", "chacha": "shaker", "ti-bwa": "wood block", "ti bwa": "wood block",
    "repeater drum": "repeater", "funde drum": "funde", "alfaias": "alfaia", "gongue bell": "gongue",
    "quijada de burro": "quijada", "jawbone": "quijada", "ching cymbals": "ching", "klong drum": "klong", "boula drums": "boula", "make drum": "bongos", "graj scraper": "guiro",
    "barriles": "congas", "barril": "congas", "barriles de bomba": "congas"}.items()})
# sets I and J's drum words (2026-12-07). A kick named in a style without drums ("a gentle kick at
# 90" under ambient pads) plays on its own, on the half bar; where the kit plays its kick already,
# the style's pattern stays (a lane is merged only where it is denser than the groove's). An "808
# kick" stays the word "808": the hip-hop kick with its sub bass. The open hi-hat on the off-beats
# (house, disco); a rim click on the backbeat (a bossa's own rim figure stays); the Carnatic
# mridangam as the tabla's strokes; the French kit's brushes and snare; Curaçao's wiri scraper; one
# hi-hat named: eighths where the style plays none (swung where it swings), or the pedal hat on the
# backbeat when the prompt says so
DRUM_WORDS.update({w: v for w, v in {
    **{w: (None, {"kick": "X.......X......."}, None) for w in ("kick", "kick drum", "bass drum", "soft kick",
                                                                "gentle kick")},
    "four on the floor kick": (None, {"kick": "X...X...X...X..."}, None),
    **{w: (None, {"ohat": "..x...x...x...x."}, None) for w in ("open hat", "open hi-hat", "open hihat")},
    **{w: DRUM_WORDS["rimshot"] for w in ("rim click", "rim-click", "rimclick")},
    **{w: DRUM_WORDS["tabla"] for w in ("mridangam", "mridanga", "mrdangam")},
    "balais": DRUM_WORDS["brushes"], "caisse claire": (None, {"snare": "....x.......x..."}, None),
    "wiri": DRUM_WORDS["guiro"], "floor tom": (None, {"floor": "x...x...x...x..."}, None),
    **{w: (None, {"chat": "x.x.x.x.x.x.x.x."}, None) for w in ("hi-hat", "hi hat", "hihat")},
}.items() if w not in DRUM_WORDS})
# set K's drum words: the frame drum (its low stroke and the open tone), the 80s drum machines by
# name, the Polish "drum machine"
DRUM_WORDS.update({w: v for w, v in {
    **{w: (None, {"tom_lo": "X.....x.X.....x.", "conga_lo": "....x.......x..."}, None)
       for w in ("frame drum", "bendir", "tar drum")},   # not "daf": the band DAF
    **{w: (0, {}, None) for w in ("beatbox", "beatboxing", "beatboxer")},   # a voice's kit: the hip-hop beat
    "tambori": (None, {"snare": "x.x.x...x.x.x..."}, None),   # the cobla's small drum, under the flabiol
    "tuplabasari": (None, {"kick": "X.x.X.x.X.x.X.x."}, None), "tuplabasaria": (None, {"kick": "X.x.X.x.X.x.X.x."}, None),
    **{w: (24, {}, None) for w in ("linndrum", "linn drum", "linn drums", "oberheim dmx", "automat perkusyjny",
                                   "trummaskin", "boite a rythmes", "caja de ritmos", "bateria eletronica")},
}.items() if w not in DRUM_WORDS})
# set Q's: the Spanish cowbell; the ride's bell (GM 53), not a tubular bell
DRUM_WORDS.update({w: v for w, v in {
    "cencerro": DRUM_WORDS["cowbell"], "cencerros": DRUM_WORDS["cowbell"],
    **{w: (None, {"bell": "x...x...x...x..."}, None) for w in ("ride bell", "bell of the ride", "ride cymbal bell")},
}.items() if w not in DRUM_WORDS})
# plurals ("surdos", "rimshots", "agogo bells" …) where the table has only the singular
DRUM_WORDS.update({w + "s": v for w, v in list(DRUM_WORDS.items())
                   if not w.endswith(("s", "ed", "ing", "h", "i", "floor")) and w + "s" not in DRUM_WORDS
                   and w not in ("ride", "amen", "808", "909", "tr-808")})
DRUM_WORDS.update({f"{w} on {b}": (None, {"phat": "....x.......x..."}, None) for w in ("hi-hat", "hi hat", "hihat")
                   for b in ("2 and 4", "2 & 4", "two and four", "the backbeat", "2&4")})
# wind chimes: GM's bell tree (key 84), a slow shimmer on every other bar's downbeat
DRUM_WORDS.update({w: (None, {"belltree": "x" + "." * 31}, None)
                   for w in ("wind chimes", "windchimes", "mark tree", "bell tree", "belltree", "chime tree")})


#: letters that carry no accent to take off but are written plain in English prompts
_PLAIN = str.maketrans({"ı": "i", "ø": "o", "ß": "ss", "æ": "ae", "œ": "oe", "đ": "d", "ł": "l", "ð": "d",
                        "þ": "th"})


def fold(text: str) -> str:
    """Lower case without accents: "Forró", "norteño", "cajón", "tamborzão", "karşılama" read as
    the plain letters people type as often ("forro", "norteno" …); the sharp and flat signs are kept.
    The prompt reader folds what it reads, so the tables' words are written plain."""
    t = str(text).lower().replace("♯", "#").replace("♭", "b").translate(_PLAIN)
    return "".join(ch for ch in unicodedata.normalize("NFKD", t) if not unicodedata.combining(ch))


#: named grooves drum words ask for (replace the genre's)
SPECIAL_GROOVES = {
    "brush": {"swirl": "x...x...x...x...", "snare": "....X.......X...", "phat": "....x.......x...",
              "kick": "o.......o......."},
    "break": {"kick": "X.X.......XX....", "snare": "....X..o.o..X..o", "chat": "x.x.x.x.x.x.x.x.",
              "ohat+": "......x.......x."},
    "four": {"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x."},
}

#: GM's overdriven (29) and distortion (30) guitars through an amp (``Part.drive``, engine.synth.amp):
#: a rock crunch and a punk or grunge distortion; in metal, each a step further (its high gain)
AMP_DRIVE = {29: 0.45, 30: 0.7}
METAL_DRIVE = 0.3


def amp_drive(family: str, program: int, role: str) -> float:
    """How hard a part's guitar amp is driven: 0 (no amp) for every program but the overdriven
    and distortion guitars."""
    d = AMP_DRIVE.get(int(program), 0.0) if role != "drums" else 0.0
    return min(1.0, d + METAL_DRIVE) if d and family == "metal" else d


ROLE_MIX = {  # role → (level, pan, reverb scale, chorus)
    "drums": (0.9, 0.0, 0.6, 0.0), "bass": (0.85, 0.0, 0.15, 0.0), "chords": (0.6, -0.35, 1.0, 0.15),
    "pad": (0.45, 0.3, 1.4, 0.35), "lead": (0.62, 0.2, 1.0, 0.1), "arp": (0.45, -0.45, 1.2, 0.2),
    "perc": (0.6, 0.35, 1.0, 0.0),
}

ROLE_STYLE = {"bass": "root8", "chords": "block", "pad": "pad", "lead": "melody", "arp": "arp16", "perc": "perc"}


# sets I and J's words (2026-12-07): the Alpine band in German ("Steirische Harmonika" is the
# button accordion, "Mundharmonika" the mouth organ), romaji loanwords, an acid line, a dub bassline
INSTRUMENTS.update({w: v for w, v in {
    "steirische harmonika": (21, C, ""), "steirische": (21, C, ""), "harmonika": (22, L, ""),
    "ziehharmonika": (21, C, ""), "knopfharmonika": (21, C, ""), "mundharmonika": (22, L, ""),
    "hackbrett": (15, A, "arp8"), "gitarre": (25, C, ""), "kontrabass": (32, B, ""), "geige": (40, L, ""),
    "sakkusu": (65, L, ""), "sakusofon": (65, L, ""), "piano bakkingu": (0, C, ""),
    "honky-tonk piano": (3, C, ""), "honky tonk piano": (3, C, ""), "honkytonk piano": (3, C, ""),
    "acid line": (87, A, "acid16"), "acid lines": (87, A, "acid16"), "acid synth": (87, A, "acid16"),
    "dub bassline": (33, B, ""), "dub bass": (33, B, ""), "dub bass line": (33, B, ""),
    "string section": (48, PD, ""), "strings section": (48, PD, ""), "string orchestra": (48, PD, ""),
    "gretsch": (26, C, ""), "gretsch guitar": (26, C, ""),
    "basso elettrico": (33, B, ""), "contrabbasso": (32, B, ""), "contrabajo": (32, B, ""),
    "contrebasse": (32, B, ""), "basse electrique": (33, B, ""),
    # "base" for "bass", the commonest slip of all ("upright base", "synth base")
    "upright base": (32, B, ""), "acoustic base": (32, B, ""), "electric base": (33, B, ""),
    "base guitar": (33, B, ""), "synth base": (38, B, ""), "sub base": (38, B, ""), "slap base": (36, B, ""),
    "fretless base": (35, B, ""), "walking base": (32, B, "walking"),
    # set J's: a sound bath's bowls and shruti box, Swedish fiddles and accordion, and more
    "singing bowl": (14, L, "sparse"), "singing bowls": (14, L, "sparse"), "tibetan bowls": (14, L, "sparse"),
    "tibetan singing bowls": (14, L, "sparse"), "crystal bowls": (14, L, "sparse"),
    "shruti box": (20, PD, ""), "sruti box": (20, PD, ""), "shruti": (20, PD, ""),
    "fiol": (40, L, ""), "fioler": (40, L, ""), "dragspel": (21, C, ""), "durspel": (21, C, ""),
    "synth horn": (62, L, ""), "synth horns": (62, L, ""), "rhythm guitar": (25, C, ""), "rhythm guitars": (25, C, ""),
    "rythm guitar": (25, C, ""), "rythm guitars": (25, C, ""), "lead guitars": (29, L, ""),
    "chord stab": (81, C, "stab"), "chord stabs": (81, C, "stab"), "dub chord": (81, C, "stab"),
    "dub chords": (81, C, "stab"), "new wave guitar": (27, C, ""), "tamburica": (105, A, "arp8"),
}.items() if w not in INSTRUMENTS})
# set K's words: the Swedish dance band's (elorgel, steelgitarr, elbas), the Polish synth bass, the
# German plural of the guitar
INSTRUMENTS.update({w: v for w, v in {
    "elorgel": (16, C, ""), "steelgitarr": (26, C, ""), "elbas": (33, B, ""), "elgitarr": (27, C, ""),
    "syntezatorowy bas": (38, B, ""), "bas syntezatorowy": (38, B, ""), "syntezator": (81, L, ""),
    "gitarren": (25, C, ""), "e-gitarren": (27, C, ""), "verzerrte gitarren": (30, C, ""), "verzerrte gitarre": (30, C, ""),
    "verzerrte e-gitarren": (30, C, ""), "bowed metal": (92, PD, ""), "bowed metal textures": (92, PD, ""),
    "bowed vibes": (92, PD, ""),
    # set L's: the e-bow's endless swell, the Romanian piano and violin, the Catalan cobla's pipe and
    # shawms, a whistled hook, the Finnish guitars and keyboard
    "e-bow guitar": (29, PD, ""), "ebow guitar": (29, PD, ""), "e-bow": (29, PD, ""), "ebow": (29, PD, ""),
    "pian": (0, C, ""), "vioara": (40, L, ""), "viori": (40, L, ""), "flabiol": (72, L, ""),
    "tenora": (68, L, ""), "tible": (68, L, ""), "tibles": (68, L, ""),
    "whistling hook": (78, L, ""), "whistled hook": (78, L, ""), "whistling melody": (78, L, ""), "whistled melody": (78, L, ""),
    "kitara": (25, C, ""), "kitaraa": (25, C, ""), "kitarat": (25, C, ""), "kitaroita": (25, C, ""),
    "kosketinsoitin": (81, C, ""), "kosketinsoittimet": (81, C, ""),
    # set M's: "lead guitar" (singular: it was read as a synth "lead" and a "guitar"), an
    # instrument holding the pads ("Hammond organ pad", "string pad")
    "lead guitar": (29, L, ""), "guitar lead": (29, L, ""), "lead guitar solo": (29, L, ""),
    "pianoforte": (0, C, ""), "synth string pad": (50, PD, ""), "synth strings pad": (50, PD, ""), "organ pad": (16, PD, ""), "organ pads": (16, PD, ""), "hammond organ pad": (16, PD, ""), "hammond pad": (16, PD, ""),
    "string pad": (48, PD, ""), "strings pad": (48, PD, ""), "string pads": (48, PD, ""), 
    "juno": (90, PD, ""), "juno chords": (90, C, ""), "juno-106": (90, PD, ""), "juno pad": (90, PD, ""),
    "stacked harmonies": (52, PD, ""), "vocal harmonies": (52, PD, ""), "stacked vocals": (52, PD, ""),
    "chanteur": (53, L, ""), "chanteuse": (53, L, ""), "choeur": (52, PD, ""),
    # set P's: a piano accordion is one accordion (it was an accordion and a piano); a "clean
    # lead" is a lead (over djent's chugs a clean electric guitar: band's _IN_FAMILY)
    "piano accordion": (21, C, ""), "piano-accordion": (21, C, ""),
    # probes after set P: cellos and string quartets in French, Italian, German, Spanish, Portuguese
    "violoncelle": (42, B, ""), "violoncelles": (42, B, ""), "violoncello": (42, B, ""), "violoncelli": (42, B, ""),
    "streichquartett": (48, PD, ""), "streicher": (48, PD, ""), "quatuor a cordes": (48, PD, ""),
    "cuarteto de cuerdas": (48, PD, ""), "quarteto de cordas": (48, PD, ""),
    # a slide guitar is the bottleneck on a steel-string (a delta bluesman's); electric when said
    "slide guitar": (25, L, ""), "slide guitars": (25, L, ""), "bottleneck guitar": (25, L, ""),
    "electric slide guitar": (29, L, ""), "electric slide": (29, L, ""),
    "balafon": (12, A, "arp8"), "balafons": (12, A, "arp8"), "balaphon": (12, A, "arp8"),   # West Africa's marimba
    "metallophone": (11, L, ""), "metallophones": (11, L, ""),
    "lead vocals": (53, L, ""), "lead vocal": (53, L, ""),
    "clean lead": (81, L, ""), "clean leads": (81, L, ""), "clean guitar lead": (27, L, ""), "clean lead guitar": (27, L, ""),
    # set R's words: the twelve-string electric, a gut or nylon string; the Spanish, French
    # and Italian keyboards, guitars, harpsichord and voices; Brazil's brass section and Bahian
    # guitar; the Basque txistu, South Africa's pennywhistle, Persia's spike fiddle; the prepared piano
    "12-string electric": (27, C, ""), "12 string electric": (27, C, ""), "12-string": (25, C, ""),
    "12-string guitar": (25, C, ""), "12 string guitar": (25, C, ""), "nylon-string": (24, C, ""),
    "nylon string": (24, C, ""), "gut-string guitar": (24, C, ""), "gut string guitar": (24, C, ""),
    "gut-string": (24, C, ""), "teclado": (81, C, ""), "teclados": (81, C, ""),
    # the French keyboard: a piano unless it is said to sound like a synth
    "clavier": (0, C, ""), "clavier facon synthe": (81, C, ""), "clavier synthe": (81, C, ""),
    "guitare": (25, C, ""), "guitare electrique": (27, C, ""), "guitarra baiana": (27, L, ""),
    "naipe de metais": (61, C, "stab"), "metais": (61, C, "stab"), "clavicembalo": (6, C, ""),
    "clavecin": (6, C, ""), "cembalo": (6, C, ""), "voci femminili": (53, PD, ""),
    "acordeon": (21, C, ""), "txistu": (74, L, ""), "pennywhistle": (78, L, ""), "penny whistle": (78, L, ""),
    "kamancheh": (110, L, ""), "kamanche": (110, L, ""), "kemenche": (110, L, ""),
    "prepared piano": (0, C, ""), "prepared-piano": (0, C, ""),
    "bass synth": (38, B, ""), "bass synths": (38, B, ""),
    # set S's: the button box, a synth bass in Portuguese, a music-box, a chip's pulse and triangle waves
    "button box": (21, C, ""), "button accordion": (21, C, ""), "baixo sintetizado": (38, B, ""),
    "music-box": (10, A, "arp8"), "pulse-wave lead": (80, L, ""), "pulse wave lead": (80, L, ""),
    "pulse lead": (80, L, ""), "triangle-wave bassline": (38, B, ""), "triangle-wave bass": (38, B, ""),
    "triangle wave bass": (38, B, ""), "triangle wave bassline": (38, B, ""),
}.items() if w not in INSTRUMENTS})
# the review after set S: the piano, guitar and strings in German, Polish, Italian and Russian (the
# Cyrillic read as Latin first: _CYRILLIC in prompt.py), the cor anglais, the hurdy-gurdy (a
# fiddle's tune over its own drone: GM has none), the bass clarinet, the early consort's winds
INSTRUMENTS.update({w: v for w, v in {
    "klavier": (0, C, ""), "fortepian": (0, C, ""), "fortepiano": (0, C, ""), "pianino": (0, C, ""),
    "chitarra": (25, C, ""), "chitarre": (25, C, ""), "chitarra classica": (24, C, ""), "gitara": (25, C, ""),
    "gitary": (25, C, ""), "gitare": (25, C, ""), "archi": (48, PD, ""), "smyczki": (48, PD, ""),
    "yaylilar": (48, PD, ""), "strunnye": (48, PD, ""), "cor anglais": (69, L, ""), "corno inglese": (69, L, ""),
    "englischhorn": (69, L, ""), "hurdy-gurdy": (110, L, ""), "hurdy gurdy": (110, L, ""),
    "drehleier": (110, L, ""), "bass clarinet": (71, L, ""), "bass clarinets": (71, L, ""),
    "kontrabas": (32, B, ""), "akordeonem": (21, C, ""), "contrabassoon": (70, B, ""), "theorbo": (24, C, ""), "viola da gamba": (42, B, ""),
    "crumhorn": (68, L, ""), "crumhorns": (68, L, ""), "shawm": (68, L, ""), "shawms": (68, L, ""),
    "sackbut": (57, L, ""), "sackbuts": (57, L, ""), "cornett": (56, L, ""), "cornetto": (56, L, ""),
    "mandolino": (25, C, ""), "mandolini": (25, C, ""), "bouzoukia": (25, C, ""), "buzuki": (25, C, ""),
    "gesang": (53, L, ""), "woodwinds": (73, L, ""), "woodwind": (73, L, ""),
}.items() if w not in INSTRUMENTS})
# the Balkans' tapan and the Arab tabl: the big bass drum the style's own kick already is (its
# lanes written in 4/4 blurred a rachenitsa's 2+2+3 and a kopanitsa's eleven)
DRUM_WORDS.update({w: (None, {}, None) for w in ("tupan", "tapan", "tapans", "tabl") if w not in DRUM_WORDS})
# set R's drums: Senegal's sabar and tama (its talking drum), Bahia's timbau, Pará's curimbó, the
# Gulf's mirwas, Persia's tombak, South India's kanjira, a pipe band's tenor drums, German cymbals
DRUM_WORDS.update({w: DRUM_WORDS[same] for w, same in {
    "sabar": "djembe", "sabars": "djembe", "timbau": "congas", "timbaus": "congas", "curimbo": "congas",
    "curimbo drums": "congas", "mirwas": "darbuka", "mirwas drums": "darbuka", "tombak": "darbuka",
    "tonbak": "darbuka", "zarb": "darbuka", "kanjira": "tambourine", "tenor drums": "toms", "tenor drum": "toms",
    "becken": "cymbals", "standtom": "floor tom", "gongs": "gong",
    # set S's: Spanish, Italian and German castanets, a finger-snap, a German bass drum and open hi-hats
    "castanuelas": "castanets", "castanuela": "castanets", "castagnette": "castanets", "kastagnetten": "castanets",
    "finger-snap": "finger snaps", "finger snap": "finger snaps",
    "fingersnap": "finger snaps", "finger-snaps": "finger snaps", "bassdrum": "kick", "offene hi-hats": "open hat",
    "offene hihats": "open hat", "offene hi-hat": "open hat"}.items() if w not in DRUM_WORDS and same in DRUM_WORDS})
