"""prompt: the words of a prompt → a :class:`PromptSpec` (what they say; the rest is left open).

:func:`read_prompt` reads tempo, key and mode, meter, negations ("no drums"), the genre, drum and
instrument words, moods and "solo"/"only". Each reading *claims* the characters it used, so one
phrase is read once ("808" in "808 bass" is an instrument, not a tempo). Pure; regexes are
compiled at import. ``[engine]``
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.compose import genres as G
from engine.compose.genres import fold
from engine.compose import styles  # noqa: F401  (registers the style library in G.GENRES)

_NOTE_NAMES = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}


@dataclass
class PromptSpec:
    """What the words of a prompt say (``None``: the words leave it open)."""

    text: str
    bpm: float | None = None
    key_root: int | None = None
    mode: str | None = None
    mode_is_mood: bool = False                                # the mode came from a mood word ("dreamy")
    meter: tuple[int, int] | None = None
    genre: str | None = None
    moods: list[str] = field(default_factory=list)
    instruments: list[str] = field(default_factory=list)     # INSTRUMENTS keys, in prompt order
    drum_words: list[str] = field(default_factory=list)      # DRUM_WORDS keys
    no_roles: set[str] = field(default_factory=set)          # "no drums", "without bass" …
    solo: bool = False                                        # "solo piano", "piano only"
    only_roles: set[str] = field(default_factory=set)        # "drums only", "just bass and drums"
    swing: float | None = None
    tempo_factor: float = 1.0
    dance: str = ""                                           # a dance with its own pace in its styles (a scherzo's fast three)
    genre_why: str = ""                                       # how the style was read (explain)
    groups: tuple[int, ...] = ()                              # an asked grouping ("7/8 as 2+2+3")
    intro_bars: int | None = None                             # "long intro", "slow build", "straight in"
    pace: int = 0                                             # −1 "slow", +1 "fast": where in the style's range
    as_lead: set[str] = field(default_factory=set)           # instruments asked to carry the tune ("piano melody")
    as_counter: set[str] = field(default_factory=set)        # … or a line beside it ("bassoon countermelody")
    spelled: list[str] = field(default_factory=list)         # words read as a table's word ("'accordian' as 'accordion'")
    a_cappella: bool = False                                  # voices alone ("a cappella", "no instruments")
    no_programs: set[int] = field(default_factory=set)       # "no piano", "no synths", "no acoustic instruments"
    no_lanes: set[str] = field(default_factory=set)          # "no hi-hats", "no kick": kit lanes left out
    refused: str | None = None                               # the style said no to ("not jazz, just a beat")
    pairs: set[str] = field(default_factory=set)             # "two guitars (one clean, one overdriven)": "guitar"
    no_percussion: bool = False                               # "no drums at all", "no percussion": no taiko either
    bars_per_minute: float | None = None                      # a dance teacher's tempo ("50 bars per minute", "32 MPM")
    chamber: bool = False                                     # concert instruments named alone ("clarinet and piano")
    marking: str = ""                                         # an Italian tempo marking ("andante"), when no number is
    marking_bpm: float | None = None                          # … and its quarter notes a minute
    eighth_bpm: float | None = None                           # a tempo given in eighths ("eighth note = 264")
    no_solo: bool = False                                     # "no guitar solo", "no solos": no guitar lead
    scene: tuple[str, str] | None = None                      # (style, word): a scene that names one ("chase scene")
    key_flats: bool | None = None                             # the key spelled with a flat (Db) or a sharp (C#)


_ACC = r"(#|♯|b(?![a-z])|♭|-sharp|-flat|\s+sharp|\s+flat)?"
_MODE_WORDS = r"(major|minor|maj|min|dorian|phrygian dominant|phrygian|lydian|mixolydian|aeolian|ionian|locrian|harmonic minor|freygish|majeur|mineur|maina|mainaa|meja|mejaa)"
_KEY_RES = (
    re.compile(r"\b(?:in|key of|key)(?:\s*[:=]\s*|\s+)([a-g])" + _ACC + r"(?:\s*" + _MODE_WORDS + r"|(m)(?![a-z]))?(?![a-z#♯♭])"),
    re.compile(r"\b([a-g])" + _ACC + r"\s*" + _MODE_WORDS + r"\b"),
    # a flat or sharp key letter standing alone in a list ("walking bass, Bb, 190"): no word is spelt so
    re.compile(r"(?<![\w/'-])([a-g])(#|♯|b|♭)()(?=\s*(?:[,;!)]|\.(?!\d)|$))"),
    # a minor key as a chord name ("F#m", "Ebm"; a plain "Gm", "Am" only beside the tempo: "Gm 95bpm",
    # "128 bpm, Am" — "am", "em" and "fm" are words too)
    re.compile(r"(?<![\w/'#♯-])([a-g])(#|♯|b|♭)?(m)(?![\w#♯♭'-])"),
    # a note before a makam's name ("E hicaz", "D hijaz"); not a bare "a" ("a hijaz riff")
    re.compile(r"\b([b-g]|a(?=\s*(?:#|♯|♭|b\b|sharp|flat)))" + _ACC + r"\s*("
               + "|".join(sorted(G.MAQAM_MODES, key=len, reverse=True)) + r")\b"),
    # a key written as a chord's symbol run together: "Ebmaj", "F#min", "Bbmaj 96"
    re.compile(r"(?<![\w/'#♯-])([a-g])(#|♯|b|♭)?(maj|min)(?![a-z])"),
)
#: a note name and its accidental as a word of its own (for :func:`_note_after`)
_NOTE = r"(?P<note>[a-g])(?P<acc>" + _ACC[1:] + r"(?![\w#♯♭'-])"
#: a mode and then its tonic ("hijaz on D", "dorian from E", "maqam bayati on Eb")
_MODE_ON_RE = re.compile(r"\b(?P<mode>" + "|".join(sorted((*G.MAQAM_MODES, "phrygian dominant", "harmonic minor",
                                                            "freygish", "dorian", "phrygian", "lydian", "mixolydian",
                                                            "locrian", "aeolian"), key=len, reverse=True))
                         + r")\s+(?:on|from)\s+(?:the\s+note\s+)?" + _NOTE)
#: a drone's or a tuning's note: "drone on A", "tanpura tuned to C#", "a pedal on D", "Sa on D"
_DRONE_ON_RE = re.compile(r"\b(?:drones?|pedal|tuned|tonic|sa|root)\s+(?:on|to|in|at)\s+(?:the\s+note\s+)?" + _NOTE)
_TEMPO_NEXT = r"\s*[,;]?\s*~?\d{2,3}(?:\.\d+)?\s*bpm\b"          # ", 95bpm" right after a word
_BESIDE_TEMPO_BEFORE = re.compile(r"\d{2,3}(?:\.\d+)?\s*bpm\s*[,;]?\s*$")
_BESIDE_TEMPO_AFTER = re.compile(_TEMPO_NEXT + r"|\s*(?:[,;.!)]|$)")
#: a key's mode in the Dutch and French ("G majeur", "A mineur") and the Japanese loanwords ("A mainā")
_FOREIGN_MODES = {"majeur": "major", "mineur": "minor", "maina": "minor", "mainaa": "minor", "meja": "major",
                  "mejaa": "major"}
_BPM_RE = re.compile(r"\b(\d{2,3}(?:\.\d+)?)(?:-?ish)?\s*(?:bpm|beats per minute|beats a minute)\b")
#: the felt beat named with its note value: "dotted quarter about 46", "dotted quarter = 60", "negra con
#: puntillo a unos 54" (a baroque siciliana's 46 is below the bare-number range)
_BEAT_NOTE_RE = re.compile(r"\b(?:dotted[- ]quarters?(?:[- ]notes?)?|negra con puntillo|seminima puntata|noire pointee|"
                           r"(?<!dotted )(?<!dotted-)quarter[- ]notes?|crotchets?)"
                           r"\s*(?:=|:|at|about|around|of|is|a unos|a|de|circa|~)?\s*(?:about|around|unos|~|c\.)?\s*"
                           r"(\d{2,3}(?:\.\d+)?)\b(?!\s*(?:bars?|beats?|measures?|notes?|times?|seconds?|%))")
#: a tempo in eighth notes: "eighth note = 264", "quavers at 180", "♪ = 240" (halved to quarters, or
#: thirded to a compound meter's dotted quarters, once the meter is read)
_EIGHTH_NOTE_RE = re.compile(r"(?:\b(?:eighth[- ]notes?|eighths?|8th[- ]notes?|8ths|quavers?|corcheas?|croches?|crome|achtel)"
                             r"|♪)\s*(?:=|:|at|about|around|of|is|~)?\s*(?:about|around|~|c\.)?\s*(\d{2,3})\b"
                             r"(?!\s*(?:bars?|beats?|measures?|notes?|times?|seconds?|%))")
#: a dance teacher's tempo in bars a minute: "50 bars per minute", "44 bars/min", "32 MPM"
_BARS_PER_MIN_RE = re.compile(r"\b(\d{2})\s*(?:bars?|measures?)\s*(?:(?:per|/)\s*min(?:ute)?\b|a\s+minute\b)|\b(\d{2})\s*mpm\b")
#: a dance beside "MPM" (measures a minute; alone it is a runner's minutes per mile)
_DANCE_CONTEXT_RE = re.compile(r"\b(?:waltz|tango|fox\s*trot|foxtrot|quickstep|samba|cha|rumba|jive|paso|salsa|swing|"
                               r"ballroom|dance|dancing|dancers?|polka|mambo|bachata|merengue|viennese|march|jig|reel|"
                               r"hornpipe|strathspey|mazurka|polonaise|minuet|hora|kolo|schottische|ceili|ceilidh)\w*")
#: a runner's pace: "12 MPM" is minutes per mile beside these, whatever dance word is there
_RUNNING_RE = re.compile(r"\b(?:pace|run|runs|running|runner|jog|jogging|walk|walking|mile|miles|treadmill|km|sprint)\b")
#: the beats a dance teacher counts in a bar of these styles where it is not the style's written bar:
#: a samba's bar is 2/4 (two of them in the style's 4/4), salsa's beat a half note
_MPM_BEATS = {"samba": 2, "salsa": 2, "merengue": 2}
#: the words that say a number is about so much
_ABOUT = r"about|around|roughly|approximately|approx\.?|circa|c\."
#: a number said to be about so much before a colon ("lively, around 132: santur …"; a bare number
#: before a colon is a name's: "psalm 121:", "route 66:")
_ABOUT_BPM_RE = re.compile(r"\b(?:" + _ABOUT + r")\s+(\d{2,3})(?=:(?!\d))")
#: a unit after a number: no tempo ("at about 30 secs", "at around 60% volume", "at 15 years old")
_UNIT_AFTER_RE = re.compile(r"\s*(?:%|seconds?|secs?|s\b|minutes?\b(?!\s*(?:a|per)\b)|mins?\b|ms\b|bars?|measures?|hz|"
                            r"khz|db\b|percent|years?|yrs|times?|x\b|notes?|people|players?|voices?|pm\b|am\b|mpm\b|"
                            r"o'?clock|degrees?|hours?|h\b)")
_ABOUT_RE = re.compile(r"\b(?:" + _ABOUT + r")|~")
#: "~170." at a sentence's end (a bare number before a full stop is no tempo: "Route 66.", "Studio 54.")
_TILDE_BPM_RE = re.compile(r"~\s*(\d{2,3})(?:\.(?!\d)|\b)")
_TEMPO_RE = re.compile(r"\b(?:tempo|at)\s+(?:(?:" + _ABOUT + r"|~)\s*)?(\d{2,3}(?:\.\d+)?)\b(?!\s*(?:/|hz|seconds|s\b))")
#: a bare number that reads as a tempo ("dubstep 140", "house at 124, deep"): 50–220, a word of
#: its own — not "808", "80s", "4/4", "12 bar", "30 seconds", "no. 5"
_BARE_BPM_RE = re.compile(r"(?<![\w./'#-])(\d{2,3}(?:\.\d+)?)(?:-?ish\b)?(?![\w./'%:-])"
                          r"(?!\s*(?:seconds?|secs?|minutes?|mins?|ms|bars?|beats?|measures?|hz|khz|db|"
                          r"percent|steps?|notes?|voices?|strings?|keys?|pieces?|parts?|members?|players?|"
                          r"musicians?|times?|x|de ani|years?|yrs|ans|jahre|anni|anos|lat|th)\b)")
#: meters in words: "twelve-eight", "nine eight", "five-four"; the theory names ("compound duple"
#: is 6/8, "simple triple" 3/4)
_WORD_METERS = {**{f"{a} {b}": (n, d) for a, n in (("two", 2), ("three", 3), ("five", 5), ("six", 6), ("seven", 7),
                                                    ("nine", 9), ("ten", 10), ("eleven", 11), ("twelve", 12),
                                                    ("thirteen", 13), ("fifteen", 15))
                   for b, d in (("four", 4), ("eight", 8)) if (n, d) not in ((2, 8), (6, 4), (9, 4), (10, 4), (11, 4),
                                                                             (12, 4), (13, 4), (15, 4), (3, 8))},
                "compound duple": (6, 8), "compound triple": (9, 8), "compound quadruple": (12, 8),
                "simple duple": (2, 4), "simple triple": (3, 4), "simple quadruple": (4, 4),
                # the meter in other languages: German "Dreivierteltakt", Dutch "driekwartsmaat",
                # Spanish "tres por cuatro" (no Venezuelan cuatro), Italian "tre quarti", Polish
                # "trzy czwarte", French "à trois temps" (a waltz's), Portuguese "três por quatro"
                **{f"{a}{b}": (n, d) for a, n, d in (("zweiviertel", 2, 4), ("dreiviertel", 3, 4), ("vierviertel", 4, 4),
                                                      ("sechsachtel", 6, 8), ("neunachtel", 9, 8), ("siebenachtel", 7, 8),
                                                      ("fuenfviertel", 5, 4), ("funfviertel", 5, 4))
                   for b in ("takt", "takts")},
                **{f"{a} {b}": (n, d) for a, n, d in (("twee", 2, 4), ("drie", 3, 4), ("vier", 4, 4))
                   for b in ("kwartsmaat", "kwart")},
                **{f"{a}kwartsmaat": (n, 4) for a, n in (("twee", 2), ("drie", 3), ("vier", 4))},
                **{f"{a} por {b}": (n, d) for a, n in (("dos", 2), ("tres", 3), ("cuatro", 4), ("cinco", 5),
                                                       ("seis", 6), ("siete", 7), ("nueve", 9), ("doce", 12),
                                                       ("quatro", 4))
                   for b, d in (("cuatro", 4), ("ocho", 8), ("quatro", 4), ("oito", 8))
                   if (n, d) in ((2, 4), (3, 4), (4, 4), (5, 4), (6, 8), (7, 8), (9, 8), (12, 8))},
                "tres cuartos": (3, 4), "dos cuartos": (2, 4), "tre quarti": (3, 4), "due quarti": (2, 4),
                "quattro quarti": (4, 4), "sei ottavi": (6, 8), "dodici ottavi": (12, 8), "nove ottavi": (9, 8),
                "sette ottavi": (7, 8), "trois quatre": (3, 4), "six huit": (6, 8), "trzy czwarte": (3, 4), "trzech czwartych": (3, 4),
                "dwie czwarte": (2, 4), "cztery czwarte": (4, 4), "szesc osmych": (6, 8)}
_WORD_METER_RE = re.compile(r"\b(" + "|".join(re.escape(k).replace(r"\ ", r"[\s-]+") for k in
                                              sorted(_WORD_METERS, key=len, reverse=True))
                            + r")(?:\s+(?:time|meter|metre))?\b(?!-|\s*(?:bars?|measures?|beats?|minutes?|mins?|hours?|seconds?|pieces?|"
                            r"parts?|tracks?|songs?|people|players?|years?|days?|del|della|dello|di|de|du|des|of|d'|"
                            r"metros?|metres?|meters?|cm|mm|pulgadas|inches|pies|feet|utworu|piosenki|czasu|nagrania)\b)")
_METER_RE = re.compile(r"(?<![\d/])(\d{1,2})\s*/\s*(\d{1,2})(?![\d/])")
_NEG_RE = re.compile(r"\b(?:no|without|minus|w/o|zero|avoid|avoiding)\s+(?:the\s+|any\s+)?([a-z0-9\- ]+?)(?=$|[,.;/]|\s+(?:and|with|in|at|but|no|just|only|except|then)\b)")
#: one more drum of a list said no to: "… and snare", "…/snare", ", cymbals"
_LANE_MORE_RE = re.compile(r"\s*(?:,|and|or|&|/|\+)\s*(?:the\s+|any\s+)?([a-z][a-z -]*?)(?=$|[,.;/]|\s+(?:and|or|with|in|at|"
                           r"but|no|just|only|except|then)\b)")
#: "percussion" in French, Spanish, Italian and Portuguese (a prompt is read without its accents)
_PERCUSSION_WORDS = ("percussion", "percussions", "percusion", "percusiones", "percussione", "percussioni",
                     "percussao", "percussoes")
#: "without" in other languages, read only right before a role word ("sin bateria", "ohne Schlagzeug",
#: "bez perkusji"): "sin city", "sans serif" are no negations
_FOREIGN_ROLES = {"bateria": "drums", "batterie": "drums", "schlagzeug": "drums", "perkusji": "drums",
                  "perkusja": "drums", "percusion": "drums", "percussao": "drums", "percussion": "drums",
                  "trommer": "drums", "trummor": "drums", "slagwerk": "drums", "batteria": "drums",
                  "drums": "drums", "bajo": "bass", "bass": "bass", "basso": "bass", "baixo": "bass",
                  "basse": "bass", "bas": "bass", "tobe": "drums", "tobelor": "drums", "drum": "drums",
                  "drumuri": "drums", "rummut": "drums", "bateri": "drums", "ngoma": "drums", "davul": "drums",
                  **dict.fromkeys(_PERCUSSION_WORDS, "drums")}
#: "without" in other languages: German, French, Spanish, Italian, Portuguese, Dutch, Polish and
#: Czech, the Scandinavian languages, Catalan ("sense", not "a sense of", "makes sense"), Dutch and
#: German "no" ("geen", "kein"), Indonesian ("tanpa"), Greek ("oute", "xoris"), Finnish ("ilman") —
#: not Romanian "fără" (Italian "farà", "will do") nor Swahili "bila" (Malay "when")
_WITHOUT = (r"(?:ohne|sans|sin|senza|niente|sem|zonder|bez|utan|uden|uten|pas\s+de|pas\s+d'|(?<!makes )(?<!make )(?<!sixth )(?<!common )"
            r"(?<!a )(?<!the )sense(?!\s+of\b)|geen|kein|keine|keinen|ingen|inga|tanpa|oute|xoris|ilman)")
_NEG_FOREIGN_RE = re.compile(r"\b" + _WITHOUT + r"\s+"
                             r"(?:(?:la|el|le|il|a|o|de|die|das|den)\s+)?(" + "|".join(_FOREIGN_ROLES) + r")\b")
_ROLE_WORDS = {"drums": "drums", "drum": "drums", "beat": "drums", "beats": "drums", "percussion": "drums",
               "bass": "bass", "bassline": "bass", "melody": "lead", "lead": "lead", "leads": "lead",
               "pad": "pad", "pads": "pad", "chords": "chords", "keys": "chords", "arp": "arp",
               "arps": "arp", "arpeggio": "arp"}


def _phrase_re(phrase: str) -> re.Pattern:
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])")


_GENRE_PHRASES = sorted(((a, g.name) for g in G.GENRES.values() for a in g.aliases),
                        key=lambda t: len(t[0]), reverse=True)
_GENRE_OF = dict(_GENRE_PHRASES)


def _alternation(phrases, not_before: dict[str, str] | None = None) -> re.Pattern:
    """One regex for many phrases: longest first, so "electric guitar" wins over "guitar";
    ``not_before``: phrase → what may not follow it for the phrase to count."""
    nb = not_before or {}
    alts = "|".join(re.escape(w) + (f"(?!{nb[w]})" if w in nb else "")
                    for w in sorted(phrases, key=len, reverse=True))
    return re.compile(r"(?<![a-z0-9])(?:" + alts + r")(?![a-z0-9])")


#: style words that are something else before these words: "orchestral metal hits" are sound design, the
#: NATO alphabet's "foxtrot alpha" and "delta foxtrot" no dance
_GENRE_NOT_BEFORE = {**dict.fromkeys(("orchestral metal", "symphonic metal"),
                                     r"\s+(?:hits?|impacts?|percussion|clangs?|whooshes|braams?|sound|sfx)"),
                     "foxtrot": r"\s+(?:alpha|bravo|charlie|delta|echo|golf|hotel|india|kilo|lima|mike|oscar|papa|"
                                r"romeo|sierra|tango|uniform|victor|whiskey|yankee|zulu|company|squad|team|unit)\b"}
_GENRE_RX = _alternation(_GENRE_OF, _GENRE_NOT_BEFORE)


def _plurals(table: dict) -> dict:
    """The table with each word's plural too ("trumpets", "fiddles", "marimbas"), where free."""
    out = dict(table)
    for w, v in table.items():
        pl = w + ("es" if w.endswith(("s", "x", "ch", "sh")) else "s")
        out.setdefault(pl, v)
    return out


INSTRUMENT_WORDS = _plurals(G.INSTRUMENTS)
#: the words a duo's or trio's list of players may start with (:func:`_group_list`)
_GROUP_HEAD_RE = re.compile(r"(?:an?\s+|the\s+|two\s+|three\s+)?(?:" + "|".join(re.escape(w) for w in sorted(
    {*G.INSTRUMENTS, *G.DRUM_WORDS, "drums", "bass", "piano", "guitar", "vocals", "voice"}, key=len, reverse=True))
    + r")s?\b")
#: "clean lead vocals" sing; "the piano leads the head", "a sax leads off": verbs, not a synth lead
_INSTR_RX = _alternation(INSTRUMENT_WORDS, {"clean lead": r"\s+vocal", "clean leads": r"\s+vocal",
                                            # "lead by trumpet", "a bouncing lead electric bass": a verb, the bass's role
                                            "lead": r"\s+(?:the|a|an|into|us|off|by|from)\b|"
                                                    r"\s+(?:electric\s+|fretless\s+|upright\s+|synth\s+)?bass\b",
                                            "leads": r"\s+(?:the|a|an|into|us|off|by|from)\b"})
#: candombe's "piano drum" is no drum in a "piano drum and bass" (a piano over drum and bass)
_DRUM_RX = _alternation(G.DRUM_WORDS, {"piano drum": r"s?\s*(?:and|n|&|'n')\s*bass",
                                       # "the cello kicks in", "kick back", "kick-ass": verbs, not a drum
                                       "kick": r"\s+(?:in|off|back|it|out|up)\b|-ass",
                                       "kicks": r"\s+(?:in|off|back|it|out|up)\b|-ass",
                                       # a chip's triangle wave is its bass, no triangle
                                       "triangle": r"[\s-]*(?:waves?|bass|bassline|channel)\b"})
#: every word the tables know (a known word is never read as a misspelt style)
_KNOWN = frozenset(w for table in (_GENRE_OF, INSTRUMENT_WORDS, G.DRUM_WORDS, G.MOODS, _NOTE_NAMES)
                   for phrase in table for w in re.findall(r"[a-z0-9&']+", phrase)) | frozenset(
    "music song songs track tune tunes beat beats style vibe vibes groove grooves band with without and the for "
    "some into like over feel feeling sound sounds played playing play minor major slow fast very tempo bpm "
    "intro outro long short build solo only just drums bass chords melody lead key".split()) | frozenset(
    # everyday words one edit from a style word ("horse" is no house, "match" no march)
    "horse mouse trace discs medal tangy match tramp sting grudge marsh louse rocky drily droll chart clash "
    "metals traces matches stings hoses houses minute minutes".split()) | frozenset(
    # words one or two edits from an instrument word ("harmonies" is no harmonica, "charanga" the
    # Cuban flute-and-violins band, not a charango; "guitarra" is Spanish for the guitar)
    "harmony harmonies harmonic harmonics harmonized harmonised harmonizing charanga charangas".split()) | frozenset(
    # a "triple guitar solo" is three guitars, no tiple; a Turkish "düğün" (wedding) no dunun drum,
    # "shangaan" electro no sangban
    "triple triples tripled dugun dugunu shangaan".split()) | frozenset(
    # the drum kit in French, German, Turkish and Italian ("batterie", "bateri", "batteria" are no samba
    # "bateria"), a Spanish class ("clase" is no clave), an artist ("Breakbot" is no breakbeat)
    "batterie schlagzeug bateri batteria clase clases breakbot".split()) | frozenset(
    # "melody" in Spanish, Portuguese, Italian, French and German is no melodica
    "melodia melodias melodie melodies".split()) | frozenset(
    # "voices" as in parts ("acordeón a dos voces") and the Swedish "kompar" (comps) are no voices, no kompa
    "voces vozes voix kompar komp".split()) | frozenset(
    # words of set H one or two edits from a style or instrument word ("concertino" is the baroque
    # concerto's solo group, no concertina; a turntablist's "scratches" no güiro scratcher)
    "concertino concrete electrico electrica electrique elektrisch scratches scratching scratch".split()) | frozenset(
    # set K's: the Portuguese "baixo" (the bass; "por baixo", underneath) is no baião
    "baixo baixos".split()) | frozenset(
    # set L's: everyday words one or two edits from a drum, instrument or style word ("it just
    # stops dead" is no stomp; Romanian "repetare", Finnish "melodista", Tagalog "kasal")
    "stop stops stopped stopping repetare repetarea melodista melodinen kasal tenore tenores tenori".split()) | frozenset(
    # the seventh session's review: a sing-along is no shingaling, the Algerian gasba (a reed flute) no garba
    "sing-along singalong singalongs sing-alongs gasba sharon quarter quarters".split())
#: style words by their spelling with the spaces taken out ("bossanova", "drumandbass")
_SQUEEZED = {a.replace(" ", "").replace("-", ""): g for a, g in _GENRE_OF.items()}
#: the same words by their first letter (a misspelling keeps it): the edit distances are only
#: taken against these, so a prompt of unknown words costs a few ms, not tens
_BY_INITIAL: dict[str, tuple[str, ...]] = {}
for _k in _SQUEEZED:
    _BY_INITIAL[_k[0]] = _BY_INITIAL.get(_k[0], ()) + (_k,)
#: the words a compound may be made of, longest first (the first one that fits is the longest)
_PARTS = tuple(sorted((k for k in _SQUEEZED if len(k) >= 4), key=len, reverse=True))


#: slips in the words that qualify an instrument ("electirc piano", "acustic guitar"): read as meant
_MODIFIER_SLIPS = re.compile(r"\b(?:electirc|eletric|electic|elecric|eletcric|elctric|electrc|electrik)\b|"
                             r"\b(?:acustic|accoustic|acoustc|acousitc|acoutsic|accustic)\b")


#: "two guitars (one clean and arpeggiated, one overdriven)": a pair named by what tells them apart,
#: read as the two instruments ("clean and arpeggiated guitar, overdriven guitar")
_PAIR_RE = re.compile(r"\b(?:two|2|twin|dual|(?:a\s+)?pair\s+of)\s+(guitars|synths|keyboards|saxes|saxophones|pianos|"
                      r"violins|basses|trumpets|flutes)\s*[(:,\u2014\u2013-]?\s*one\s+([a-z][a-z -]*?)\s*(?:,|;|\band\b|&|/)"
                      r"\s*(?:and\s+)?(?:one|the other)\s+([a-z][a-z -]*?)\s*(?=\)|$|[,.;])\)?")
_PAIR_SINGULAR = {"guitars": "guitar", "synths": "synth", "keyboards": "keyboard", "saxes": "sax", "saxophones": "saxophone",
                  "pianos": "piano", "violins": "violin", "basses": "bass", "trumpets": "trumpet", "flutes": "flute"}


#: Japanese music words in katakana and kanji, as a DAW user in Japan types them (folding would strip
#: their voicing marks: ポップ to ホッフ), and the words that say "without" after what they leave
#: out (ボーカルなし, サックスソロも不要, ドラム抜き); the pattern tries the longest first
_KANA = {"木琴": "xylophone", "鉄琴": "glockenspiel", "小太鼓": "snare drum", "大太鼓": "bass drum",
         "ライブハウス": "live venue", "ドラムンベース": "drum and bass", "キーボード": "keyboard", "ボサノヴァ": "bossa nova",
         "アンビエント": "ambient", "ディスコ": "disco", "マーチ": "march", "篠笛": "shinobue flute", "シティポップ": "city pop", "シティ・ポップ": "city pop", "エレクトリックピアノ": "electric piano",
         "エレピ": "electric piano", "チョッパーベース": "slap bass", "スラップベース": "slap bass",
         "カッティングギター": "funk guitar", "アコースティックギター": "acoustic guitar", "アコギ": "acoustic guitar",
         "エレキギター": "electric guitar", "ギター": "guitar", "シンセストリングス": "synth strings",
         "シンセベース": "synth bass", "シンセパッド": "synth pad", "ウッドベース": "upright bass", "ベース": "bass",
         "ストリングス": "strings", "シンセ": "synth", "ブラス": "brass", "ホーン": "horns", "サックス": "sax",
         "トランペット": "trumpet", "ピアノ": "piano", "ドラム": "drums", "ボーカル": "vocals", "ヴォーカル": "vocals",
         "コーラス": "choir", "オルガン": "organ", "ヴァイオリン": "violin", "バイオリン": "violin", "チェロ": "cello",
         "フルート": "flute", "ハープ": "harp", "和太鼓": "taiko", "太鼓": "taiko", "三味線": "shamisen",
         "尺八": "shakuhachi", "琴": "koto", "メジャー": "major", "マイナー": "minor", "キーは": "key", "キー": "key",
         "テンポ": "tempo",
         "ソロ": "solo", "ジャズ": "jazz", "ロック": "rock", "ポップス": "pop", "ポップ": "pop", "ファンク": "funk",
         "ボサノバ": "bossa nova", "ローファイ": "lofi", "ヒップホップ": "hip hop", "ハウス": "house", "テクノ": "techno",
         "アニソン": "anisong", "演歌": "enka", "バラード": "ballad", "ワルツ": "waltz", "年代": "s",
         "ユーロビート": "eurobeat", "パラパラ": "para para", "シンセリード": "synth lead",
         "キック": "kick", "スネア": "snare", "ハイハット": "hi-hat", "四つ打ち": "four on the floor",
         "メロディー": "melody", "メロディ": "melody",
         # keys in the Japanese names: ハ ニ ホ ヘ ト イ ロ are C D E F G A B, 嬰 sharp, 変 flat,
         # 長調 major, 短調 minor ("嬰ハ短調" is C# minor)
         **{f"{acc}{kana}{mode}": f"in {letter}{sign} {word}"
            for kana, letter in zip("ハニホヘトイロ", "cdefgab") for acc, sign in (("", ""), ("嬰", "#"), ("変", "b"))
            for mode, word in (("長調", "major"), ("短調", "minor"))}}
_KANA_RE = re.compile("|".join(sorted(map(re.escape, _KANA), key=len, reverse=True)))
_KANA_WITHOUT_RE = re.compile(r"([a-z]+(?: +[a-z]+)?)\s*(?:は|も|を)?\s*(?:なし|無し|不要|抜き)")


_KANA_CHARS_RE = re.compile(r"[\u3040-\u30ff]")
_HANGUL_CHARS_RE = re.compile(r"[\uac00-\ud7a3]")
#: "BPM 124", "bpm: 124" — not after a tempo ("140 bpm 808 bass")
_BPM_FIRST_RE = re.compile(r"(?<!\d)(?<!\d )\bbpm\s*[:=]?\s*(\d{2,3})\b")
_EIGHTIES_RE = re.compile(r"(\d)\s+s\b")


def _japanese(prompt: str) -> str:
    """A prompt's katakana and kanji music words in English, and "Xなし" as "no X"."""
    text = _KANA_RE.sub(lambda m: f" {_KANA[m.group(0)]} ", prompt)
    text = _EIGHTIES_RE.sub(r"\1s", text)                               # 80年代: "80s"
    return _KANA_WITHOUT_RE.sub(lambda m: f" no {m.group(1).strip()}, ", text.lower())


#: a voice the track leaves room for is no part of it: "under the voice-over", "leave space for the
#: vocal", "vocals get added in the mix later"
_VOICE_OVER_RE = re.compile(r"\bvoice-?overs?\b|\bvoice overs?(?=\s*(?:$|[,.;:!?)]|\s+(?:track|script|artist|narration)\b))")
#: no pitched instrument at all: "no melody instruments", "no melodic instruments" (a drum solo)
_NO_PITCHED_RE = re.compile(r"\b(?:no|without)\s+(?:any\s+)?(?:melody|melodic|pitched|tonal)\s+instruments?\b")
#: the voices a bed sits under are people talking, no choir ("fighting the voices", "two people
#: talking about personal finance")
_TALK_RE = re.compile(r"\b(?:fighting|under|beneath|behind|around|against|over)\s+(?:the\s+|their\s+|our\s+)?"
                      r"(?:voices?|speech|speakers?|dialogue|talking)\b(?!\s+drums?)|\b(?:people|hosts?|speakers?|guests?)\s+talking\b")
_VOCAL_LATER_RE = re.compile(r"\b(?:leave|leaving|keep|keeping|with)\s+(?:some\s+|enough\s+|plenty\s+of\s+)?(?:space|room)"
                             r"\s+for\s+(?:the\s+|a\s+)?(?:vocals?|singers?|voice|vox|lyrics)\b|"
                             r"\b(?:the\s+)?(?:vocals?|vox)\s+(?:will\s+be|will\s+get|get|gets|are|is|to\s+be)\s+"
                             r"(?:added|recorded|laid|dubbed|done)\s+(?:[a-z]+\s+){0,4}?(?:later|afterwards|separately|in post)\b")


#: Korean music words in Hangul (folding would break the syllables apart), and the words that ask
#: to leave something out after it (일렉기타는 빼주세요, 드럼 없이); the pattern tries the longest first
_HANGUL = {"케이팝": "k-pop", "발라드": "ballad", "피아노": "piano", "스트링스": "strings", "스트링": "strings",
           "현악": "strings", "드럼": "drums", "일렉기타": "electric guitar", "일렉 기타": "electric guitar",
           "어쿠스틱 기타": "acoustic guitar", "통기타": "acoustic guitar", "베이스": "bass",
           "신스": "synth", "신디": "synth", "패드": "pad", "브라스": "brass", "색소폰": "sax", "보컬": "vocals",
           "키는": "key", "메이저": "major", "마이너": "minor", "장조": "major", "단조": "minor", "감성": "emotional",
           "힙합": "hip hop", "재즈힙합": "jazz hip hop", "재즈": "jazz", "록음악": "rock", "록 음악": "rock",
           "록밴드": "rock band", "록 밴드": "rock band", "록발라드": "rock ballad", "하드록": "hard rock",
           "오케스트라": "orchestral", "첼로": "cello", "바이올린": "violin", "플루트": "flute", "가야금": "gayageum",
           "해금": "haegeum", "키보드": "keyboard", "어쿠스틱기타": "acoustic guitar", "아이패드": "ipad",
           "신스팝": "synthpop", "신스웨이브": "synthwave", "드럼 앤 베이스": "drum and bass", "드럼앤베이스": "drum and bass",
           "로파이": "lofi", "시티팝": "city pop", "트로트": "enka", "킥": "kick", "클랩": "clap", "스네어": "snare",
           "하이햇": "hi-hat"}
#: 기타 is also "other" / "etc." (기타 등, 기타 악기, 기타 요청사항): a guitar only where it is none of those
_HANGUL_RE = re.compile("|".join(sorted(map(re.escape, _HANGUL), key=len, reverse=True))
                        + r"|기타(?!\s*(?:등|악기|요청|사항|의견|문의|작업|참고))")
#: a list (X, Y / X와 Y / X랑 Y / X이나 Y) and the Korean words that leave it out after it
_HANGUL_AND = r"\s*(?:,|와|과|랑|이랑|이나|나|및|and)\s*"
_HANGUL_AND_RE = re.compile(_HANGUL_AND)
_HANGUL_WITHOUT_RE = re.compile(r"((?:[a-z]+(?: [a-z]+)?)(?:" + _HANGUL_AND + r"[a-z]+(?: [a-z]+)?)*)"
                                r"\s*(?:은|는|을|를|이|가|도)?\s*(?:없음|없이|없는|빼\s?주세요|빼줘|빼고|제외|말고|"
                                r"넣지\s?말아\s?주세요|넣지\s?마세요)")
#: a key in Korean note names: 다 라 마 바 사 가 나 (C D E F G A B), 장조 major, 단조 minor
_HANGUL_KEY_RE = re.compile(r"([다라마바사가나])\s?(올림|내림)?\s?(장조|단조)")
_HANGUL_NOTES = {"다": "c", "라": "d", "마": "e", "바": "f", "사": "g", "가": "a", "나": "b"}


def _korean(prompt: str) -> str:
    """A prompt's Hangul music words in English, and "X와 Y는 빼주세요" as "no X, no Y"."""
    text = _HANGUL_KEY_RE.sub(lambda m: f" in {_HANGUL_NOTES[m.group(1)]}{'#' if m.group(2) == '올림' else 'b' if m.group(2) else ''}"
                              f" {'major' if m.group(3) == '장조' else 'minor'} ", prompt)
    text = _HANGUL_RE.sub(lambda m: f" {_HANGUL.get(m.group(0), 'guitar')} ", text)
    return _HANGUL_WITHOUT_RE.sub(
        lambda m: " " + ", ".join("no " + i.strip() for i in _HANGUL_AND_RE.split(m.group(1))
                                  if i.strip()) + ", ", text.lower())


def _plain(prompt: str) -> str:
    """The prompt in plain lower-case letters, one space between words."""
    return " ".join(fold(prompt).replace("’", "'").split())


#: Hindi music words in Devanagari (a garba class's "ढोल, शहनाई और हारमोनियम")
_DEVANAGARI = {"गरबा": "garba", "डांडिया": "dandiya", "ढोलक": "dholak", "ढोल": "dhol", "शहनाई": "shehnai",
               "हारमोनियम": "harmonium", "तबला": "tabla", "सितार": "sitar", "बांसुरी": "bansuri", "भांगड़ा": "bhangra",
               "बॉलीवुड": "bollywood", "गिटार": "guitar", "पियानो": "piano", "वायलिन": "violin", "ताल": "rhythm",
               "और": " and ", "धुन": "melody", "तेज़": "fast", "धीमा": "slow", "धीरे": "slow", "लगभग": "about",
               "बिना": "without", "ड्रम": "drums", "ड्रम्स": "drums", "अकूस्टिक": "acoustic", "फ़ोक": "folk", "फोक": "folk",
               "रॉक": "rock", "जैज़": "jazz", "जैज": "jazz", "ग़ज़ल": "ghazal", "गजल": "ghazal", "सिर्फ़": "only",
               "सिर्फ": "only", "केवल": "only", "बांसुरी": "bansuri", "सारंगी": "sarangi"}
_DEVANAGARI_RE = re.compile("|".join(sorted(map(re.escape, _DEVANAGARI), key=len, reverse=True)))
_DEVANAGARI_CHARS_RE = re.compile(r"[\u0900-\u097f]")


#: Russian music words (folded: ё is е), as stems (its nouns and adjectives decline: гитара,
#: гитару, гитарой; ударных, ударные) — read in English before anything else; a key's solfège
#: ("ля минор") and a meter in words ("три четверти") too
_CYRILLIC = ((r"без", "without"), (r"только", "only"), (r"и", "and"), (r"ударн\w*|барабан\w*", "drums"),
             (r"акустическ\w*\s+гитар\w*", "acoustic guitar"), (r"электрогитар\w*|электрическ\w*\s+гитар\w*",
                                                                   "electric guitar"),
             (r"бас-гитар\w*", "bass guitar"), (r"гитар\w*", "guitar"), (r"пианино|фортепиано|роял\w*", "piano"),
             (r"скрипк\w*", "violin"), (r"виолончел\w*", "cello"), (r"контрабас\w*", "double bass"), (r"бас\w*", "bass"),
             (r"струнн\w*", "strings"), (r"оркестр\w*", "orchestral"), (r"хор\w*", "choir"), (r"синтезатор\w*", "synth"),
             (r"аккордеон\w*|баян\w*", "accordion"), (r"балалайк\w*", "balalaika"), (r"флейт\w*", "flute"),
             (r"саксофон\w*", "sax"), (r"труб[аыуе]\b", "trumpet"), (r"орган\w*", "organ"), (r"арф\w*", "harp"),
             (r"фолк\w*|народн\w*", "folk"), (r"рок\w*", "rock"), (r"джаз\w*", "jazz"), (r"поп\b", "pop"),
             (r"электронн\w*", "electronic"), (r"музык\w*", "music"), (r"хип-?хоп\w*", "hip hop"), (r"рэп\w*", "rap"),
             (r"вальс\w*", "waltz"), (r"танго", "tango"), (r"блюз\w*", "blues"), (r"метал\w*", "metal"),
             (r"панк\w*", "punk"), (r"техно", "techno"), (r"хаус\w*", "house"), (r"эмбиент\w*", "ambient"),
             (r"классическ\w*", "classical"), (r"быстр\w*", "fast"), (r"медленн\w*|медленно", "slow"),
             (r"грустн\w*|печальн\w*", "sad"), (r"весел\w*|радостн\w*", "happy"), (r"спокойн\w*", "calm"),
             (r"ударов\s+в\s+минуту|уд\.?/мин", "bpm"), (r"три\s+четверти", "3/4"), (r"две\s+четверти", "2/4"),
             (r"четыре\s+четверти", "4/4"), (r"шесть\s+восьмых", "6/8"), (r"семь\s+восьмых", "7/8"),
             (r"(до|ре|ми|фа|соль|ля|си)(?:\s+(диез|бемоль))?\s+(мажор|минор)\w*", None), (r"соло", "solo"))
_CYR_NOTES = {"до": "c", "ре": "d", "ми": "e", "фа": "f", "соль": "g", "ля": "a", "си": "b"}
_CYRILLIC_RE = re.compile("|".join(rf"(?P<c{i}>(?<![\w-]){rx}(?![\w-]))" for i, (rx, _) in enumerate(_CYRILLIC)))
_CYRILLIC_CHARS_RE = re.compile(r"[\u0400-\u04ff]")


def _cyrillic(m: re.Match) -> str:
    i = int(m.lastgroup[1:])
    if _CYRILLIC[i][1] is not None:
        return f" {_CYRILLIC[i][1]} "
    note, acc, mode = re.match(r"(до|ре|ми|фа|соль|ля|си)(?:\s+(диез|бемоль))?\s+(мажор|минор)", m.group(0)).groups()
    return f" in {_CYR_NOTES[note]}{'#' if acc == 'диез' else 'b' if acc else ''} {'major' if mode == 'мажор' else 'minor'} "


#: Greek music words (folded: no accents): the bouzouki's styles, "without", "only"
_GREEK = {"χωρις": "without", "μονο": "only", "και": "and", "ντραμς": "drums", "τυμπανα": "drums", "κρουστα": "percussion",
          "ακουστικη κιθαρα": "acoustic guitar", "ηλεκτρικη κιθαρα": "electric guitar", "κιθαρα": "guitar",
          "κιθαρες": "guitars", "πιανο": "piano", "μπουζουκι": "bouzouki", "μπαγλαμας": "baglama", "βιολι": "violin",
          "κλαρινο": "clarinet", "μπασο": "bass", "φολκ": "folk", "ροκ": "rock", "τζαζ": "jazz", "ποπ": "pop",
          "ρεμπετικο": "rebetiko", "ρεμπετικα": "rebetiko", "λαικο": "laiko", "λαικα": "laiko", "ζειμπεκικο": "zeibekiko",
          "χασαπικο": "hasapiko", "συρτακι": "sirtaki", "αργο": "slow", "γρηγορο": "fast", "λυπημενο": "sad"}
_GREEK_RE = re.compile(r"(?<!\w)(?:" + "|".join(sorted(map(re.escape, _GREEK), key=len, reverse=True)) + r")(?!\w)")
_GREEK_CHARS_RE = re.compile(r"[\u0370-\u03ff]")
#: Turkish "without" is a suffix: davulsuz (no drums), vokalsiz, gitarsiz
_TURKISH_WITHOUT_RE = re.compile(r"\b(davul|bateri|gitar|piyano|vokal|synth|bas|yayli)(?:suz|siz|suz|sız|süz)\b")
_TURKISH_NOUNS = {"davul": "drums", "bateri": "drums", "gitar": "guitar", "piyano": "piano", "vokal": "vocals",
                  "synth": "synths", "bas": "bass", "yayli": "strings"}


_BALADA_RE = re.compile(r"\b(?:balada|baladas|ballata|ballate)\b")
#: the string section in Spanish, French, Portuguese ("nappes de cordes", "piano y cuerdas") — not a
#: guitar's or a bass's strings ("guitare 12 cordes", "bajo de cinco cuerdas") nor the vocal cords
_CUERDAS_RE = re.compile(r"(?<!\d )(?<!\d)(?<!\bdos )(?<!\btres )(?<!\bcuatro )(?<!\bcinco )(?<!\bseis )(?<!\bsiete )"
                         r"(?<!\bdoce )(?<!\bdeux )(?<!\btrois )(?<!\bquatre )(?<!\bcinq )(?<!\bsix )(?<!\bsept )"
                         r"(?<!\bdouze )(?<!\bquatro )(?<!\bsete )(?<!\bdoze )(?<!\bduas )(?<!\bmes )(?<!\bses )"
                         r"(?<!\bcuarteto de )(?<!\bquarteto de )(?<!\bquatuor a )(?<!\bquatuor de )(?<!\borquesta de )"
                         r"(?<!\borchestre a )(?<!\borquestra de )(?<!\binstrumentos de )(?<!\binstruments a )"
                         r"\b(?:cuerdas|cordes|cordas)\b(?!\s+(?:vocales|vocais|de\s+(?:la\s+)?guitarra|de\s+guitare|"
                         r"d'acier|de\s+nylon|de\s+nailon|metalicas|metallicas|a\s+vide|a\s+son\s+arc|pulsadas|pulsees|"
                         r"pinceadas|dedilhadas))")
#: the chamber ensembles by their players: a brass quintet is its four kinds of brass and no one else
#: the string quartet in English, German, French, Spanish, Italian and Portuguese
STRING_QUARTETS = ("string quartet", "streichquartett", "quatuor a cordes", "cuarteto de cuerdas", "quartetto d'archi",
                   "quartetto d archi", "quarteto de cordas")
_ENSEMBLES = {"brass quintet": "trumpet, french horn, trombone and tuba", "brass quartet": "trumpet, french horn, trombone and tuba",
              "saxophone quartet": "soprano sax, alto sax, tenor sax and baritone sax",
              "sax quartet": "soprano sax, alto sax, tenor sax and baritone sax",
              "woodwind quintet": "flute, oboe, clarinet, bassoon and french horn",
              "wind quintet": "flute, oboe, clarinet, bassoon and french horn",
              "piano trio": "piano, violin and cello", "string trio": "violin, viola and cello",
              "barbershop quartet": "a cappella male voices",
              # beside a concert style (a waltz, a baroque piece): its players; alone, the classical
              # style's own word; beside a band, the band's strings (:func:`_ensemble`)
              **dict.fromkeys(STRING_QUARTETS, "violins, viola and cello")}
_JAZZ_TRIO_RE = re.compile(r"\b(?:jazz\w*|swing\w*|bebop|bop|brush(?:es)?|evans|jarrett|oscar peterson|standards?|walking|drums?|"
                           r"upright\s+bass|double\s+bass|drum\s+kit|"
                           r"late[- ]night|lounge|bar|cocktail|smoky|ballad)\b")
_ENSEMBLE_RE = re.compile(r"\b(" + "|".join(map(re.escape, _ENSEMBLES)) + r")s?\b")


#: "steel drum and bass, calypso": a steel pan and a bass guitar
_STEEL_DRUM_BASS_RE = re.compile(r"\b(steel[\s-]?(?:drums?|pans?))\s+(?:and|&|n|'n')\s+bass\b")
#: "guitar instead of piano", "rhodes in place of the piano", "cello rather than violin": the
#: second is said no to (the words are checked against the instrument table in :func:`_instead`)
_INSTEAD_RE = re.compile(r"\b(?:instead\s+of|in\s+place\s+of|rather\s+than|replacing|in\s+lieu\s+of)\s+"
                         r"(?:the\s+|a\s+|an\s+|any\s+)?([a-z][a-z' -]*?[a-z])(?=\s*(?:$|[,.;:!)]|\s+(?:and|but|with|in|on|for)\b))")


def _instead(m: re.Match) -> str:
    """"instead of the piano" → "and no piano" (only for an instrument word; a drummer instead of a
    drum machine is the kit's change, not the drums left out)."""
    w = m.group(1)
    if (w in G.INSTRUMENTS or w.rstrip("s") in G.INSTRUMENTS) and w not in G.DRUM_WORDS:
        return f"and no {w}"
    return m.group(0)


#: "a quartet of saxophones", "a quintet of brass": the ensemble by its usual name
_OF_PLAYERS = {"saxophones": "saxophone", "saxes": "saxophone", "brass": "brass", "strings": "string",
               "woodwinds": "woodwind", "winds": "wind"}
_OF_ENSEMBLE_RE = re.compile(r"\b(trio|quartet|quintet)\s+of\s+(saxophones|saxes|brass|strings|woodwinds|winds)\b")
#: a band named by its size and then its players: "blues trio: guitar, bass, drums", "acoustic duo:
#: guitar and cajon", "celtic trio with fiddle, guitar and bodhran", "trio of flutes" — those are
#: all that play (read as "just …" by the rules for a list of parts)
_GROUP_LIST_RE = re.compile(r"\b(duo|duet|trio|quartet|quintet|sextet)\s*(?::|\(|with|of|featuring|feat\.?|-|—)\s*")
_GROUP_SIZES = {"duo": 2, "duet": 2, "trio": 3, "quartet": 4, "quintet": 5, "sextet": 6}


def _group_list(m: re.Match) -> str:
    """":" after a duo or trio → ", just " when an instrument or role word follows (the list's
    players); after "with" or "featuring" only when the list holds as many as the group ("a jazz
    quartet with vibraphone" is the vibraphone and its rhythm section)."""
    rest = m.string[m.end():]
    if not _GROUP_HEAD_RE.match(rest):
        return m.group(0)
    if not re.search(r"[:(—-]|\bof\b", m.group(0)):
        lst = re.match(_ONLY_LIST, rest)
        if lst is None or len(re.findall(_ONLY_ITEM, lst.group(0))) != _GROUP_SIZES[m.group(1)]:
            return m.group(0)
    return f"{m.group(1)}, just "


def _ensemble(m: re.Match) -> str:
    """A chamber ensemble's players, and no one else (a jazz piano trio is the jazz band's own)."""
    name = m.group(1)
    styles = {_GENRE_OF[g.group(0)] for g in _GENRE_RX.finditer(m.string) if g.start() >= m.end() or g.end() <= m.start()}
    if name in STRING_QUARTETS:
        styles -= {"classical"}
        if re.match(r"s?\s+(?:playing|plays|covering|covers|version|cover|arrangement|rendition|takes?\s+on)\b",
                    m.string[m.end(1):]):
            return f"{_ENSEMBLES[name]}, nothing else"    # "string quartet playing a pop song": the quartet's cover
        if not styles or any(G.GENRES[g].family != "classical" for g in styles):
            return m.group(0)                     # the classical style's own quartet; a band's strings beside it
        return _ENSEMBLES[name]                   # "waltz for string quartet": its players, in the waltz
    if name == "piano trio" and (_JAZZ_TRIO_RE.search(m.string) or any(G.GENRES[g].family != "classical" for g in styles)):
        return m.group(0)                         # a jazz or a bossa piano trio: the style's piano, bass and drums
    if any(G.GENRES[g].family != "classical" for g in styles):
        return _ENSEMBLES[name]                   # a jazz sax quartet: its players in the style's band
    if name == "barbershop quartet" or styles:
        return f"{_ENSEMBLES[name]}, nothing else"   # a brass quintet's march or fanfare: the march, on its players
    return f"chamber music for {_ENSEMBLES[name]}, nothing else"


def _normalise(prompt: str) -> str:
    if _DEVANAGARI_CHARS_RE.search(prompt):
        prompt = _DEVANAGARI_RE.sub(lambda m: f" {_DEVANAGARI[m.group(0)]} ", prompt)
    if _KANA_CHARS_RE.search(prompt):
        prompt = _japanese(prompt)
    if _HANGUL_CHARS_RE.search(prompt):
        prompt = _korean(prompt)
    if _CYRILLIC_CHARS_RE.search(prompt):
        prompt = _CYRILLIC_RE.sub(_cyrillic, fold(prompt))
    if _GREEK_CHARS_RE.search(prompt):
        prompt = _GREEK_RE.sub(lambda m: f" {_GREEK[m.group(0)]} ", fold(prompt))
    text = _plain(prompt)
    text = _BALADA_RE.sub("ballad", text)                              # Spanish, Portuguese, Italian ballads
    text = _CUERDAS_RE.sub("strings", text)
    text = _OF_ENSEMBLE_RE.sub(lambda m: f"{_OF_PLAYERS[m.group(2)]} {m.group(1)}", text)
    text = _ENSEMBLE_RE.sub(_ensemble, text)
    text = _GROUP_LIST_RE.sub(_group_list, text)
    text = _STEEL_DRUM_BASS_RE.sub(r"\1, bass", text)                  # a steel drum and a bass, not drum and bass
    text = _INSTEAD_RE.sub(_instead, text)
    text = _TURKISH_WITHOUT_RE.sub(lambda m: f"without {_TURKISH_NOUNS[m.group(1)]},", text)
    text = _VOCAL_LATER_RE.sub("no vocals,", _VOICE_OVER_RE.sub("narration", _TALK_RE.sub("narration", text)))
    text = _BPM_FIRST_RE.sub(r"\1 bpm", text)                          # "BPM112", "bpm: 124"
    text = _PAIR_RE.sub(lambda m: f"{m.group(2)} {_PAIR_SINGULAR[m.group(1)]}, {m.group(3)} {_PAIR_SINGULAR[m.group(1)]}",
                        text)
    return _MODIFIER_SLIPS.sub(lambda m: "electric" if m.group(0)[1] in "lr" else "acoustic", text)


#: a drum word that only says what something sounds like ("a shaker-like texture")
_SOUNDS_LIKE_RE = re.compile(r"\b([a-z]+)-(?:like|ish|esque|sounding)\b")


class _Claims:
    """Which characters of the prompt a reading has used: a phrase is read once."""

    def __init__(self, text: str):
        self.taken = [False] * len(text)

    def __call__(self, m: re.Match) -> bool:
        """Claim ``m``'s span; ``False`` (and nothing claimed) when part of it is taken already."""
        return self.span(m.start(), m.end())

    def span(self, start: int, end: int) -> bool:
        """Claim ``[start, end)``; ``False`` (and nothing claimed) when part of it is taken already."""
        if any(self.taken[start:end]):
            return False
        self.taken[start:end] = [True] * (end - start)
        return True


_MOMENT_WORDS_RE = re.compile(r"\b(?:chorus|choruses|refrao|refrain|estribillo|ritornello|verse|verses|intro|outro|"
                               r"bridge|break|breakdown|drop|final|finale|end|ending|last|first|until|till|then|later|"
                               r"start|starts|beginning|middle|solo|section|part|anfang|schluss|principio|inicio|"
                               r"comienzo|debut|fin|fine|inizio|fim|comeco)\b")


def _said_no_to(text: str, w: str) -> bool:
    """Whether the prompt says no to the instrument word ``w`` itself for the whole piece."""
    for m in re.finditer(r"\b(?:no|without|sans|sin|ohne|senza|sem|zonder)\s+(?:the\s+|any\s+|le\s+|la\s+|el\s+|"
                         r"de\s+)?" + re.escape(w) + r"s?\b", text):
        clause = re.split(r"[,.;:!?]", text[:m.start()])[-1] + re.split(r"[,.;:!?]", text[m.end():], 1)[0]
        if not _MOMENT_WORDS_RE.search(clause):
            return True
    return False


def read_prompt(prompt: str) -> PromptSpec:
    """What ``prompt`` says about tempo, key, mode, meter, genre, moods and instruments. ``[engine]``"""
    text = _normalise(prompt)
    spec = PromptSpec(text=text)
    spec.pairs = {_PAIR_SINGULAR[m.group(1)] for m in _PAIR_RE.finditer(_plain(prompt))}
    claim = _Claims(text)
    _read_tempo(spec, claim)
    _read_key(spec, claim)
    _read_meter(spec, claim)
    _read_negations(spec, claim)
    phrase = _read_genre(spec, claim)
    misspelt = _read_misspelt_instruments(spec, claim)
    if spec.genre is None:
        _read_genre_nearest(spec, claim)
    for m in _SOUNDS_LIKE_RE.finditer(text):
        if m.group(1) in G.DRUM_WORDS:            # "a shaker-like texture from the synth": no shaker (a
            claim(m)                              # "theremin-like lead" is a theremin's sound)
    _read_instruments(spec, claim, phrase, misspelt)
    # an instrument said no to is out, whatever else its name describes ("for my jazz piano students …
    # no piano on the track", "l'examen de violon … sans violon")
    # ("no synths, but a synth bass" keeps the synth bass: only the word itself said no to, and not
    # at a moment: "last chorus without the piano", "sem cavaquinho no refrão", "sin piano al final")
    spec.instruments = [w for w in spec.instruments if INSTRUMENT_WORDS.get(w, (None,))[0] not in spec.no_programs
                        or not _said_no_to(text, w)]
    if _ACOUSTIC_SET_RE.search(text):
        # "acoustic pop", "an unplugged version": no synthesizer plays but one named
        spec.no_programs |= set(range(80, 104)) - {INSTRUMENT_WORDS[w][0] for w in spec.instruments}
    if "cuatro" in spec.instruments and re.search(r"\b(?:las|los|unas|unos|sus|mis|tus|estas|estos|esas|esos)\s+cuatro\b",
                                                  text) and len(re.findall(r"\bcuatro\b", text)) == 1:
        spec.instruments.remove("cuatro")         # Spanish "las cuatro coplas": four, no Venezuelan cuatro
    words = set(re.findall(r"[a-z]+", text))
    name = G.GENRES[spec.genre].name if spec.genre in G.GENRES else ""
    style_words = set(name.split()) if phrase and " " in name and name in phrase else set()
    _read_moods(spec, words | {_MOOD_WORDS[w] for w in words if w in _MOOD_WORDS}, style_words)
    _read_scene(spec)
    _read_solo(spec, words, phrase)
    spec.a_cappella = bool(_A_CAPPELLA_RE.search(text))
    _read_intro(spec)
    if spec.bpm is None and spec.eighth_bpm:
        # eighths a minute → the felt beat: a compound meter's dotted quarter (three eighths), else the quarter
        num, den = spec.meter or (G.GENRES[spec.genre].meter if spec.genre in G.GENRES else (4, 4))
        compound = den == 8 and num % 3 == 0 and num > 3 and not spec.groups
        spec.bpm = round(spec.eighth_bpm / (3 if compound else 2), 1)
    if spec.bpm is None and spec.bars_per_minute:
        # bars a minute × the bar's beats (felt beats: a 6/8 bar has two), in the meter asked or the style's
        num, den = spec.meter or (G.GENRES[spec.genre].meter if spec.genre in G.GENRES else (4, 4))
        beats = num // 3 if den == 8 and num % 3 == 0 else num if den in (2, 4) else num / 2
        if spec.meter is None and spec.genre in _MPM_BEATS:
            beats = _MPM_BEATS[spec.genre]
        spec.bpm = round(spec.bars_per_minute * beats, 1)
    return spec


#: an acoustic set: "acoustic pop", "acoustic version", "unplugged"
_ACOUSTIC_SET_RE = re.compile(r"\bacoustic\s+(?:pop|rock|version|set|cover|session|soul|r&b|arrangement|ballad|folk|"
                              r"country|indie|punk|love\s+song)\b|\bunplugged\b")


def _read_tempo(spec: PromptSpec, claim: _Claims) -> None:
    text = spec.text
    if (mb := _BARS_PER_MIN_RE.search(text)) and (mb.group(1) or _DANCE_CONTEXT_RE.search(text)
                                                  and not _RUNNING_RE.search(text)) \
            and 10 <= float(mb.group(1) or mb.group(2)) <= 80:
        spec.bars_per_minute = float(mb.group(1) or mb.group(2))
        claim(mb)
    m = _BPM_RE.search(text) or next((b for b in _BEAT_NOTE_RE.finditer(text) if 30.0 <= float(b.group(1)) <= 220.0),
                                      None) or next((b for b in _TEMPO_RE.finditer(text) if not _UNIT_AFTER_RE.match(
                                          text, b.end()) and (not _ABOUT_RE.search(b.group(0))
                                                              or 50.0 <= float(b.group(1)) <= 220.0)), None)
    if m is None:
        m = next((b for b in _BARE_BPM_RE.finditer(text) if 50.0 <= float(b.group(1)) <= 220.0
                  and not (spec.bars_per_minute and mb.start() <= b.start() < mb.end())), None) or next(
            (b for b in _TILDE_BPM_RE.finditer(text) if 50.0 <= float(b.group(1)) <= 220.0), None) or next(
            (b for b in _ABOUT_BPM_RE.finditer(text) if 50.0 <= float(b.group(1)) <= 220.0), None)
    e = _EIGHTH_NOTE_RE.search(text)
    if e and 80 <= float(e.group(1)) <= 480 and not (m and m.start() < e.start() and _BPM_RE.match(text, m.start())):
        spec.eighth_bpm = float(e.group(1))       # (resolved to the beat when the meter is read)
        claim(e)
    elif m:
        spec.bpm = float(m.group(1))
        claim(m)
    elif spec.bars_per_minute is None and (w := _WORDS_BPM_RE.search(text)) and (n := _number_in_words(w.group(1))) \
            and 30 <= n <= 300:
        spec.bpm = float(n)                       # "at ninety bpm", "one hundred and twenty beats per minute"
        claim(w)
    mk = next((k for k in _MARKING_RE.finditer(text) if _as_marking(text, k)), None)
    if spec.bpm is None and spec.bars_per_minute is None and mk:
        spec.marking = re.sub(r"\s+", " ", mk.group(1))
        # "allegro vivace", "allegro con brio" … are an allegro's fast end; any other one word
        spec.marking_bpm = _MARKINGS["allegro molto" if spec.marking.startswith("allegro ") else spec.marking]


#: the Italian tempo markings, by the quarter notes a minute a player takes them at (the middle of
#: a metronome's band for each; in 6/8 or 12/8 they count the eighths' pulse in quarters, so an
#: andante's dotted quarter is 53): "Adagio for strings", "presto piano etude", "moderato waltz"
_MARKINGS = {"prestissimo": 208.0, "presto": 184.0, "vivacissimo": 176.0, "allegro molto": 160.0, "vivace": 160.0,
             "allegro": 132.0, "allegretto": 112.0, "moderato": 108.0, "andantino": 92.0, "andante": 80.0,
             "adagietto": 70.0, "adagio": 62.0, "larghetto": 60.0, "largo": 50.0}
#: a marking as a word of its own ("allegro vivace", "Allegro con brio"), not said no to ("not
#: presto") nor repeated as a title's ("Andante, Andante"); where it stands decides the rest
#: (:func:`_as_marking`)
_MARKING_RE = re.compile(r"(?<![\w-])(?<!\bnot )(?<!\bno )"
                         r"(prestissimo|presto|vivacissimo|allegro(?:\s+(?:molto|vivace|assai|con\s+brio))?|vivace|"
                         r"allegretto|moderato|andantino|andante|adagietto|adagio|larghetto|largo)(?![\w-])"
                         r"(?!,?\s+\1\b)")


def _as_marking(text: str, m: re.Match) -> bool:
    """Whether a marking word is used as one: at a phrase's edge or beside a music word ("adagio
    for strings", "a presto etude", "string quartet, allegro vivace", "bossa nova andante") — not
    Spanish "un viaje largo por", "largo plazo", "Largo Winch", "Austin Allegro car", "a presto,
    amici", "torno presto"."""
    before = text[:m.start()].rstrip()
    after = text[m.end():].lstrip()
    if re.search(r"(?:\ba|\btorno|\barrivo|\bun|\buna|\bmuy|\bel|\bmas|\bsuper)$", before):
        return False
    edge_before = not before or before[-1] in ",.;:(-—–/" or re.search(
        r"\b(?:in|an|the|tempo|marked|molto|poco|piu|più|non\s+troppo|ma|con|and|e|then|movement|mvt)$", before)
    edge_after = not after or after[0] in ",.;:)-—–/!" or re.match(
        r"(?:for|in|movement|mvt|tempo|ma|non|molto|assai|con|e|and|then|piece|section|feel|pace|etude|study|"
        r"sonata|string|strings|piano|cantabile|espressivo|at|from|per|with|waltz|ballad|theme|variation)\b", after)
    music_before = re.search(r"\b(?:" + "|".join(("nova", "waltz", "quartet", "sonata", "piece", "etude", "nocturne",
                                                   "symphony", "concerto", "jazz", "pop", "rock", "ballad", "piano",
                                                   "guitar", "strings", "polka", "maqam", "score", "theme", "music"))
                             + r")$", before)
    return bool(edge_before and edge_after or music_before and (edge_after or not after))


_NUMBER_WORDS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
                 "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
                 "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}
#: a tempo in English words: "ninety bpm", "a hundred and ten beats per minute", "one-forty bpm"
_WORDS_BPM_RE = re.compile(r"\b((?:(?:a|one|two)[\s-]+hundred(?:[\s-]+and)?[\s-]+)?(?:(?:thirty|forty|fifty|sixty|"
                           r"seventy|eighty|ninety|twenty)(?:[\s-]+(?:one|two|three|four|five|six|seven|eight|nine))?|"
                           r"ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|one|two|"
                           r"three|four|five|six|seven|eight|nine)?|(?:a|one|two)[\s-]+hundred|one[\s-]+(?:twenty|thirty|"
                           r"forty|fifty|sixty|seventy|eighty|ninety|ten|fifteen)(?:[\s-]+(?:one|two|three|four|five|six|"
                           r"seven|eight|nine))?)\s*(?:bpm|beats\s+(?:per|a)\s+minute)\b")


def _number_in_words(phrase: str) -> int | None:
    """The number an English phrase says (30–300 as tempos are said): "ninety", "a hundred and
    twenty", "one-forty" (a hundred and forty); ``None`` for none."""
    words = [w for w in re.split(r"[\s-]+", phrase.strip()) if w and w != "and"]
    if not words:
        return None
    total = 0
    if len(words) >= 2 and words[0] in ("a", "one", "two") and words[1] == "hundred":
        total = 100 * (2 if words[0] == "two" else 1)
        words = words[2:]
    elif words[0] == "one" and len(words) >= 2 and words[1] in _NUMBER_WORDS:
        total = 100                                 # "one-forty", "one twenty five"
        words = words[1:]
    for w in words:
        if w not in _NUMBER_WORDS:
            return None
        total += _NUMBER_WORDS[w]
    return total or None


#: keys as musicians outside English name them: solfège with a mode word ("la menor", "ré majeur",
#: "si bemol maggiore", "fa# menor") and the German letters with Dur/Moll ("a-moll", "Es-Dur",
#: "fis-moll", "h-moll" = B minor, "b-moll" = Bb minor); a solfège syllable alone is no key ("do it")
_SOLFEGE = {"do": 0, "re": 2, "mi": 4, "fa": 5, "sol": 7, "la": 9, "si": 11}
_SOLFEGE_RE = re.compile(r"\b(do|re|mi|fa|sol|la|si)(#|b)?(?:\s+(sostenido|sustenido|diese|diesis|bemol|bemolle))?"
                         r"\s+(mayor|maior|majeur|maggiore|menor|mineur|minore|mixolidio|misolidio|mixolydien|"
                         r"dorico|dorio|dorien|lidio|lydien|frigio|phrygien|eolio|eolien)\b")
#: the church modes' names in Portuguese, Spanish, Italian and French, by the mode they name
_SOLFEGE_MODES = {"mixolidio": "mixolydian", "misolidio": "mixolydian", "mixolydien": "mixolydian",
                  "dorico": "dorian", "dorio": "dorian", "dorien": "dorian", "lidio": "lydian", "lydien": "lydian",
                  "frigio": "phrygian", "phrygien": "phrygian", "eolio": "minor", "eolien": "minor"}
#: solfège with the English mode word, as Turkish writes it ("Mi minör", "La majör"): only where the
#: phrase ends, so "do major chords" stays English
_SOLFEGE_PLAIN_RE = re.compile(r"\b(do|re|mi|fa|sol|la|si)(#|b|\s+bemol|\s+diyez)?\s+(minor|major)(?:'?(?:de|da|te|ta))?"
                               r"(?=\s*(?:$|[,.;:!)]|\s))(?!\s+(?:chords?|keys?|scales?|changes|progressions?|stuff|things)\b)")
_GERMAN_KEY_RE = re.compile(r"\b([a-h])(is|es|s)?[- ](dur|moll)(?:i|issa|issä|ista|in)?\b")
_GERMAN = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "h": 11, "b": 10}


def _read_foreign_key(spec: PromptSpec, claim: _Claims) -> bool:
    """A key named in solfège or in German (:data:`_SOLFEGE_RE`, :data:`_GERMAN_KEY_RE`)."""
    text = spec.text
    m = _SOLFEGE_RE.search(text)
    if m:
        acc = m.group(2) or m.group(3) or ""
        shift = 1 if acc in ("#", "sostenido", "sustenido", "diese", "diesis") else -1 if acc else 0
        spec.key_root = (_SOLFEGE[m.group(1)] + shift) % 12
        spec.mode = _SOLFEGE_MODES.get(m.group(4)) or (
            "major" if m.group(4) in ("mayor", "maior", "majeur", "maggiore") else "minor")
        claim(m)
        return True
    m = _GERMAN_KEY_RE.search(text)
    if m:
        letter, acc = m.group(1), m.group(2) or ""
        if letter == "b" and acc:
            return False                          # no "bes": B flat is b
        spec.key_root = (_GERMAN[letter] + (1 if acc == "is" else -1 if acc else 0)) % 12
        spec.mode = "major" if m.group(3) == "dur" else "minor"
        claim(m)
        return True
    return False


_CHORD_SYMBOL_RE = re.compile(r"^[a-g](?:#|♯|b|♭)?(?:m|maj7|maj|m7|7|9|6|dim|aug|sus[24]?|add9|5)?$")


#: a bare tempo right before a chord-name key ("122 Am,"): a number a tempo could be, no decibels
_BARE_TEMPO_BEFORE = re.compile(r"(?<!\bbar )(?<!\bbars )(?<![\d.+-])(?:[5-9]\d|1\d\d|2[0-2]\d)\s+$")


def _key_match_counts(rx: re.Pattern, m: re.Match, text: str) -> bool:
    """Whether a key pattern's match is a key here: "in a lofi style" is no key of A; a flat
    letter in a list of chords ("chords: Cm, Ab, Eb, Bb") or after a number ("-1 db") is none; a
    chord-name minor ("F#m") counts when it has its sharp or flat, a plain one ("Gm", "Am") only
    beside the tempo or after "in" — and a style word ("ebm", black metal's "bm") only after "in"."""
    before, after = text[:m.start()], text[m.end():]
    if rx is _KEY_RES[0]:
        return not (m.group(1) == "a" and not (m.group(2) or m.group(3) or m.group(4))
                    and not re.match(r"\s*($|[,.;!]|and\b|with\b|at\b|for\b|over\b)", after))
    if rx is _KEY_RES[2] or rx is _KEY_RES[3]:
        prev = re.findall(r"[a-z0-9#♯♭+-]+", before)[-1:]
        nxt = re.findall(r"[a-z0-9#♯♭+-]+", after)[:1]
        # (not "98 FM": a radio station, no F minor)
        bare_tempo = rx is _KEY_RES[3] and bool(_BARE_TEMPO_BEFORE.search(before)) and m.group(0) != "fm" \
            and bool(re.match(r"\s*(?:[,;.!)]|$)", after))      # "afro house 122 Am, congas …"
        if any(_CHORD_SYMBOL_RE.match(t) for t in prev + nxt) or (re.search(r"\d\s*$", before) and not bare_tempo) \
                or re.search(r"\b(?:chords?|progression|changes)\b[^.;]*$", before):
            return False                          # one of a list of chords, or decibels
    if rx is _KEY_RES[3]:
        after_in = bool(re.search(r"\b(?:in|key of|key)\s+$", before))
        # an item of its own in the prompt's list ("…, Ebm, ~170.", "…, Bm, stays in 7/4"), where
        # another word names the style
        listed = bool(re.search(r"[,;:.]\s*$", before) and re.match(r"\s*(?:[,;.!)]|$)", after)) and any(
            g.group(0) != m.group(0) for g in _GENRE_RX.finditer(text)) and m.group(0) not in ("am", "em") \
            and not re.search(r"\b(?:metal|black|tremolo|blast|kvlt|dsbm)", text)
        if m.group(0) in _GENRE_OF:               # "ebm" is electronic body music, "bm" black metal: a key
            return after_in or listed and bool(re.match(r"\s*,\s*(?:~\s*\d{2,3}|\d{2,3}\s*bpm)\b", after))  # before a tempo
        beside = (_BESIDE_TEMPO_BEFORE.search(before) and _BESIDE_TEMPO_AFTER.match(after)) \
            or re.match(_TEMPO_NEXT, after)
        return bool(m.group(2) or beside or after_in or listed or bare_tempo)
    return True


def _pitch(letter: str, acc: str | None) -> int:
    """The pitch class of a note letter and its accidental ("#", "sharp", "b", "-flat" …)."""
    acc = (acc or "").strip(" -")
    return (_NOTE_NAMES[letter] + (1 if acc in ("#", "♯", "sharp") else -1 if acc else 0)) % 12


def _note_after(rx: re.Pattern, text: str) -> re.Match | None:
    """The first match of ``rx`` (a ``note`` and its ``acc``) that is a note: a bare "a" only where
    its phrase ends ("hijaz on A, oud" — "hijaz on a kanun" is no A)."""
    return next((m for m in rx.finditer(text) if m["note"] != "a" or m["acc"]
                 or re.match(r"\s*(?:$|[,;.!)])", text[m.end():])), None)


#: a guitar tuned down: "drop D", "drop-C#", "in drop C" — its open low string is the riffs' tonic
_DROP_TUNING_RE = re.compile(r"\bdrop[\s-](?:([b-g])(#|b(?![a-z])|♭|♯)?|(a)(#|b(?![a-z])|♭|♯)?(?=\s+tun|\s*$|\s*[,.;]))"
                             r"(?![\w'])")


def _read_key(spec: PromptSpec, claim: _Claims) -> None:
    """The tonic and mode ("in A minor", "F# dorian", "key of Eb"; "la menor", "fis-moll"), else a
    bare mode word."""
    text = spec.text
    if _read_foreign_key(spec, claim):
        return
    for rx in _KEY_RES:
        m = next((m for m in rx.finditer(text) if _key_match_counts(rx, m, text)), None)
        if m:
            mword = m.group(3) or ""
            if rx is _KEY_RES[0] and len(m.groups()) >= 4 and m.group(4) or rx is _KEY_RES[3]:
                mword = "minor"
            spec.key_root = _pitch(m.group(1), m.group(2))
            if m.group(2):
                spec.key_flats = not re.search(r"#|♯|sharp", m.group(2))
            if mword:
                spec.mode = _FOREIGN_MODES.get(mword) or G.MODE_ALIASES.get(mword, mword)
            claim(m)
            break
    if spec.key_root is None and (m := _DROP_TUNING_RE.search(text)):
        # "in drop D": the riffs' open low string, the key's tonic ("drop A tuning", not "drop a beat")
        spec.key_root = _pitch(m.group(1) or m.group(3), m.group(2) or m.group(4))
        claim(m)
    if spec.key_root is None and (m := _note_after(_MODE_ON_RE, text)) and claim(m):
        spec.key_root = _pitch(m["note"], m["acc"])
        spec.mode = G.MODE_ALIASES.get(m["mode"], m["mode"])
    if spec.key_root is None and (m := _note_after(_DRONE_ON_RE, text)) \
            and claim.span(m.start("note"), m.end()):    # (the note only: "drone" may still name the style)
        spec.key_root = _pitch(m["note"], m["acc"])
    if spec.key_root is None and (m := _SOLFEGE_PLAIN_RE.search(text)) and claim(m):
        acc = (m.group(2) or "").strip()
        spec.key_root = (_SOLFEGE[m.group(1)] + (1 if acc in ("#", "diyez") else -1 if acc else 0)) % 12
        spec.mode = m.group(3)
    if spec.mode is None:
        for w in ("harmonic minor", "phrygian dominant", "freygish", "dorian", "phrygian", "lydian", "mixolydian",
                  "locrian", "aeolian", "ionian", "minor", "major", *G.RAGA_MODES, *G.MAQAM_MODES):
            if _phrase_re(w).search(text):
                spec.mode = G.MODE_ALIASES.get(w, w)
                break


_GROUPING_RE = re.compile(r"(?<![\d/-])([1-9](?:\s*\+\s*[1-9]){1,7}|[1-9](?:-[1-9]){1,7})(?![\d/-])")
#: "in seven", "counted in 11", "a riff in 7": an odd count is that many eighths (five is 5/4, as
#: "Take Five" and most tunes said to be "in five" are); a digit only where it ends the phrase, so
#: "in 7 string guitars" or "in 5 minutes" is not a meter
_IN_COUNT_RE = re.compile(r"\bin\s+(five|seven|nine|eleven|thirteen|fifteen)\b(?!-|\s+(?:string|strings|piece|pieces|"
                          r"days?|weeks?|years?|hours?|minutes?|seconds?|bars?|beats?|notes?|parts?|ways?|of)\b)"
                          r"|\bin\s+(5|7|9|11|13|15)(?=\s*(?:$|[,.;)]|\s(?:time|meter|feel)\b))")
#: "in 4" beside a count ("verse in 4, chorus in 3"): a change of meter, which a take does not play
_IN_OTHER_RE = re.compile(r"\bin\s+(?:4|four)(?=\s*(?:$|[,.;)]))")
#: where a count of beats ends its phrase ("in 3 parts", "in 2 minutes", "in 2:30" go on)
_COUNT_END = r"(?=\s*(?:$|[,.;)]|:(?!\d))|\s(?:time|meter|feel)\b)"
#: "in 3", "in a fast 2", "in two time" where the phrase ends, not after "count-"
_IN_THREE_RE = re.compile(r"(?<!count-)(?<!count )\bin\s+(?:a\s+)?(?:fast\s+|quick\s+|slow\s+|lilting\s+)?3" + _COUNT_END)
_IN_TWO_RE = re.compile(r"(?<!count-)(?<!count )(?<!walks )(?<!walk )(?<!walking )(?<!bass )(?<!bass plays )"
                        r"\bin\s+(?:a\s+)?(?:(?:fast|quick|brisk|slow)\s+(?:2|two)|2)" + _COUNT_END +
                        r"|\bin\s+two\s+(?:time|feel)\b|\b(?:a|à) deux temps\b")
_COUNT = {"five": 5, "seven": 7, "nine": 9, "eleven": 11, "thirteen": 13, "fifteen": 15}


def _read_meter(spec: PromptSpec, claim: _Claims) -> None:
    text = spec.text
    sarabande, siciliana, lesnoto = (bool(rx.search(text)) for rx in (_SARABANDE, _SICILIANA, _LESNOTO))
    for m in _METER_RE.finditer(text):
        num, den = int(m.group(1)), int(m.group(2))
        if 1 <= num <= 15 and den in (2, 4, 8, 16):
            spec.meter = (num, den)
            claim(m)
            break
    for m in _GROUPING_RE.finditer(text):             # "7/8 (2+2+3)", "in 9/8, 2+2+2+3"
        groups = tuple(int(x) for x in re.findall(r"\d", m.group(1)))
        if "-" in m.group(1) and spec.meter is None:
            continue                                     # "counted 3-2-2" only with its meter: "claves on 2-3" is a clave
        if spec.meter is None and all(x in (2, 3) for x in groups):
            spec.meter = (sum(groups), 8)                # "a 3+3+2 groove" is 8/8
        if spec.meter and sum(groups) == spec.meter[0]:
            spec.groups = groups
            claim(m)
            break
    if spec.meter is None and (m := next((m for m in _WORD_METER_RE.finditer(text) if not re.search(
            r"\b(?:on|beats?|and|&|snare|the)\s+$", text[:m.start()])), None)):
        spec.meter = _WORD_METERS[re.sub(r"[\s-]+", " ", m.group(1))]   # "in twelve-eight", "compound duple"
        claim(m)
    if spec.meter is None and re.search(r"\b(?:krautrock|motorik)\b", text):
        spec.meter = (4, 4)                              # krautrock's motorik: a steady four, no prog odd meter
    if spec.meter is None and re.search(r"\bgymnopedies?\b", text):
        spec.meter = (3, 4)                              # Satie's gymnopédies: a slow three
    if spec.meter is None:
        if re.search(r"\b(waltz|valse|vals|valzer|walzer|three four|three-four|triple meter|triple time|in three|"
                     r"(?:a|à) trois temps)\b", text) and not _NO_WALTZ_RE.search(text) \
                or _IN_THREE_RE.search(text) and not _IN_OTHER_RE.search(text):
            spec.meter = (3, 4)
        elif _IN_TWO_RE.search(text) and not _IN_OTHER_RE.search(text):
            spec.meter = (2, 4)                          # "a breakdown in a fast 2": two beats to the bar
        elif re.search(r"\b(compound time|barcaroll?es?|barcarolas?|barkarolen?|gondolier)\b", text):
            spec.meter = (6, 8)
        elif re.search(r"\b(slip|hop)[ -]?jigs?\b", text):
            spec.meter = (9, 8)                          # the slip jig's three dotted quarters
        elif re.search(r"\b(polonaises?|polacca|pasillos?|mazurkas?|mazouks?|landler|laendler|minuets?|menuets?|"
                       r"minuetto|chaconnes?|ciaccona|passacaglias?|courantes?)\b", text):
            spec.meter = (3, 4)                          # dances in three: the polonaise, pasillo, mazurka, Ländler,
                                                         # and the baroque suite's minuet, chaconne, passacaglia, courante
        elif re.search(r"\blike take (?:5|five)\b|\btake (?:5|five) (?:style|vibe|feel)\b|\bbrubeck\b", text):
            spec.meter = (5, 4)                          # "something like Take Five": Brubeck's five (not
                                                         # "take five minutes", "a beat to take five to")
        elif re.search(r"\b(?:bulerias?|soleares|solea|soleas|siguiriyas?|seguiriyas?)\b"
                       r"|\bcompas de (?:12|doce)\b", text):
            spec.meter = (12, 8)                         # flamenco's twelve-beat compás
        elif re.search(r"\bgigues?\b", text):
            spec.meter = (6, 8)                          # the suite's gigue: a jig's lilting six
        elif re.search(r"\b(sirtaki|syrtaki|hasapiko|hasaposerviko)\b", text):
            spec.meter = (2, 4)                          # the Greek dances in two (the sirtaki's slow start, its quick end)
        elif re.search(r"\b(sardanas?|sardanes)\b", text):
            spec.meter = (6, 8)                          # the sardana's lilting six
        elif sarabande:
            spec.meter = (3, 4)                          # the sarabande: slow, stately three
        elif siciliana:
            spec.meter = (12, 8)                         # the siciliana's lilting twelve
        elif re.search(r"\b(zeybek|zeybegi|zeibekiko|zeybekiko)\b", text):
            spec.meter, spec.groups = (9, 8), spec.groups or (2, 2, 2, 3)   # the zeybek's heavy, slow nine
            spec.pace = spec.pace or -1
        elif lesnoto:
            spec.meter = (7, 8)                          # the "easy" dance: 3+2+2, its long beat first
        elif re.search(r"\b(sevdah|sevdalinka|sevdalinke)\b", text):
            spec.meter = (7, 8)                          # the sevdah lament: the Balkans' seven, slow
            spec.pace = spec.pace or -1
        elif m := _IN_COUNT_RE.search(text):
            n = _COUNT.get(m.group(1)) or int(m.group(2))
            spec.meter = (5, 4) if n == 5 else (n, 8)
            claim(m)
    if lesnoto and spec.meter == (7, 8) and not spec.groups:
        spec.groups = (3, 2, 2)
        spec.pace = spec.pace or -1
    # dances whose pace is part of the name, whatever meter is stated
    if sarabande or siciliana:
        spec.pace = spec.pace or -1                      # slow and stately: a sarabande at 60–70, not 112
        spec.tempo_factor *= 0.72
    elif re.search(r"\bpasillos?\b", text):
        spec.tempo_factor *= 1.35                        # a pasillo's three runs on where a bolero's four sways
    elif re.search(r"\bstrathspeys?\b", text) and not re.search(r"\breels?\b", text):
        spec.dance = "strathspey"                        # the strathspey: a reel's four at two-thirds the pace
    if re.search(r"\b(?:happy|uk|freeform)\s+hardcore\b", text):
        spec.dance = "hardcore"
    elif (re.search(r"\bballads?\b", text) and spec.meter is None or re.search(r"\bjazz ballads?\b|\bslow\s+jazz\b", text)) \
            and not _NO_BALLAD_RE.search(text):
        spec.dance = "ballad"
    elif re.search(r"\b(?:waltz|waltzes|valse|vals|valzer|walzer)\b", text) and not re.search(
            r"\b(?:nocturnes?|lento|lent|slow|adagio|largo|ballads?)\b", text) and not _NO_WALTZ_RE.search(text):
        spec.dance = "waltz"
    if re.search(r"\bscherz(?:o|i|os)\b", text):
        spec.meter = spec.meter or (3, 4)                # the scherzo: a fast three, one beat to the bar
        spec.dance = "scherzo"
    elif re.search(r"(?<!\bnot a )(?<!\bnot )\b(?:slow|english|ballroom|international|langsamer)\s+(?:waltz(?:es)?|walzer)\b|"
                   r"\b(?:valse|vals|valzer)\s+(?:lente|lenta|lento)\b|\bwalzer\s+langsam\b", text):
        spec.dance = "slow waltz"                        # the ballroom's slow waltz: 28–30 bars a minute
    elif re.search(r"\b(?:slow\s+)?fox[\s-]?trots?\b(?!\s+(?:alpha|bravo|charlie|delta|company|uniform|team|unit))|"
                   r"\bslowfox\b", text) and spec.genre in (None, "swing"):
        spec.dance = "foxtrot"                           # the foxtrot: a swing band at a walk (28–30 bars)


_NO_WALTZ_RE = re.compile(r"\b(?:not|no|never|without)\s+(?:an?\s+|the\s+)?(?:waltz|waltzes|valse|vals)\b")
_NO_BALLAD_RE = re.compile(r"\b(?:not|no|never)\s+(?:an?\s+)?ballads?\b")
_SARABANDE = re.compile(r"\b(sarabandes?|sarabandas?|zarabandas?)\b")
#: the siciliana as the dance ("a siciliana", "a baroque siciliano", "sicilienne"), not the adjective
#: ("tarantella siciliana", "canzone siciliana")
_SICILIANA = re.compile(r"\bsicilienne\b|^sicilian[ao]s?\b|\b(?:a|the|baroque|pastoral|bach|handel|slow|lilting|"
                        r"sad)\s+sicilian[ao]s?\b|\bsicilian[ao]s?\s+(?:in|for|from|movement)\b")
_LESNOTO = re.compile(r"\b(lesnoto|lesno oro)\b")


#: a prompt in Japanese romaji, by its grammar words (where "X no Y" is "Y of X")
_ROMAJI_RE = re.compile(r"\b(?:kudasai|onegai\w*|mitai|desu|tsukutte|shite|kyoku|ongaku|yoona|youna|fuu)\b")


def _read_negations_after(spec: PromptSpec, claim: _Claims) -> None:
    """Turkish and Hindi say "without" after the list: "synth ve bateri yok", "synth bilkul nahi"."""
    for m in _NEG_AFTER_RE.finditer(spec.text):
        items = [_NEG_AFTER_FILLER.sub("", i).strip() for i in _NEG_AFTER_SPLIT.split(m.group(1).strip())]
        items = [i for i in items if i]
        roles = {_FOREIGN_ROLES[i] for i in items if i in _FOREIGN_ROLES}
        left = set().union(*(_negated_programs(i, foreign=True) for i in items if i not in _FOREIGN_ROLES))
        if roles or left:
            spec.no_roles |= roles
            spec.no_programs |= left
            claim(m)


#: a guitar solo said no to: "no guitar solo", "metal with no lead guitar solo", "no solos", "without shredding"
_NO_SOLO_RE = re.compile(r"\b(?:no|without|zero|skip\s+the|lose\s+the|drop\s+the|minus\s+the)\s+(?:any\s+|the\s+)?"
                         r"(?:(?:lead|guitar|guitars|shred|shredding|wanky)\s+)*(?:solos?|soloing|shred(?:ding)?|lead\s+guitars?|"
                         r"guitar\s+leads?)\b(?!\s+(?:in|at|during|until|till|for\s+the)\b)")


def _read_negations(spec: PromptSpec, claim: _Claims) -> None:
    """"no drums", "without bass": the roles left out, and a style word after "no" is not the style
    ("no swing", "no trap") — except in a prompt in romaji, where "no" is the possessive ("showa no
    kayokyoku" is Showa-era kayokyoku)."""
    if (ns := _NO_SOLO_RE.search(spec.text)) and not re.search(r"\b(?:sax|saxophone|trumpet|piano|keys|drum|bass|organ|"
                                                             r"violin|fiddle|flute)\w*\s+solos?\b", ns.group(0)):
        spec.no_solo = True
        claim(ns)
    for m in _NEG_RE.finditer(spec.text):
        said = _NEG_STOP_RE.split(m.group(1), 1)[0]      # "no drums just piano": the piano plays
        end = m.start(1) + len(said)
        if like := _LIKE_RE.fullmatch(said):
            said = like.group(1)                          # "avoid vocal-like leads": no voices, a lead
        if m.group(0).startswith("avoid") and not all(
                _bare(i) in INSTRUMENT_WORDS or _bare(i) in _ROLE_WORDS or _bare(i) in _NEG_KINDS or _lane_item(i)
                for i in _NEG_ITEM_SPLIT.split(said.strip()) if i):
            claim.span(m.start(), end)                    # "avoid muddy bass", "avoid busy drums": a wish, no leaving
            continue                                      # out — and "avoid cheesy supersaw leads" adds none
        if said == m.group(1):
            # a list of drums said no to goes on past "and" and "/" ("no kick and snare", "no kick/snare")
            while (c := _LANE_MORE_RE.match(spec.text, end)) and _lane_item(c.group(1)):
                end = c.end()
            said = spec.text[m.start(1):end]
        # "no drums in the intro", "a guitar interlude in the middle with no drums": a moment, not the piece
        clause = re.split(r"[,.;:!?\u2014\u2013]", spec.text[:m.start()])[-1]
        moment = bool(_NEG_WHEN_RE.match(spec.text, end) or _CLAUSE_MOMENT_RE.search(clause))
        # the roles named — not the "drum" of a "kick drum" or a "snare drum"
        # ("no synth pads", "no synth bass" name instruments: the pads of a string section, a bass
        # guitar stay)
        roles = set() if moment else {_ROLE_WORDS[w] for i in _NEG_ITEM_SPLIT.split(said.strip()) if not _lane_item(i)
                                      and not (" " in _bare(i) and _bare(i) in INSTRUMENT_WORDS)
                                      and not (_GROOVE_KIND_RE.search(_bare(i)) and not _SOLO_AFTER_RE.match(spec.text, end))
                                      for w in i.split() if w in _ROLE_WORDS}
        left = set() if moment else _negated_programs(said)
        lanes = set() if moment else _negated_lanes(said)
        spec.no_lanes |= lanes
        spec.no_roles |= roles
        spec.no_programs |= left
        # the words said no to are not read again (a "no trap" is no trap, "no heavy guitars" adds
        # none) — unless the "no" says no to nothing the composer plays: a title's or romaji's
        # "no" before other words ("kimi no na wa piano cover", "a tune without words for flute")
        first = re.match(r"(?:\S+\s+)?", said).end()
        if not (roles or left or lanes) and not any(rx.match(said, 0) or rx.match(said, first)
                                           for rx in (_GENRE_RX, _INSTR_RX, _DRUM_RX)):
            continue
        if claim.span(m.start(), end) and _ROMAJI_RE.search(spec.text) and re.search(r"[a-z]\s+$", spec.text[:m.start()]):
            for g in _GENRE_RX.finditer(spec.text, m.start(), end):
                claim.taken[g.start():g.end()] = [False] * (g.end() - g.start())
    for m in _NEG_FOREIGN_RE.finditer(spec.text):
        spec.no_roles.add(_FOREIGN_ROLES[m.group(1)])
        claim(m)
    for m in _NEG_FOREIGN_WORDS_RE.finditer(spec.text):
        said = m.group(1)
        left = _negated_programs(said, foreign=True)
        if not left:                                      # "oute drums oute synth": up to the next "without"
            said = _WITHOUT_RE.split(said, 1)[0]
            left = _negated_programs(said, foreign=True)
        lanes = _negated_lanes(said)                      # "ohne Hi-Hats", "sin hi-hats"
        spec.no_lanes |= lanes
        if lanes and not left:
            claim.span(m.start(), m.start(1) + len(said))
        if left:
            spec.no_programs |= left
            # ("keine Vocals und keine Gitarre": the second "keine" is the first list's already)
            claim.span(m.start(), m.start(1) + len(said)) or claim.span(m.start(1), m.start(1) + len(said))
    _read_negations_after(spec, claim)
    if _NO_PITCHED_RE.search(spec.text) and re.search(r"\b(?:drum|percussion)\s+solos?\b", spec.text):
        spec.no_roles |= {"lead", "chords", "pad", "arp", "bass"}   # a drum solo: "no melody instruments"
    for m in _LEAVE_OUT_RE.finditer(spec.text):
        said = next(g for g in m.groups() if g)
        if _NEG_WHEN_RE.match(spec.text, m.end()) or _NEG_MOMENT_RE.search(spec.text, m.end(), m.end() + 30):
            continue                                      # "keep the drums out until the chorus"
        if re.match(r"(?:drop|mute|lose|kill)", m.group(0)) and _DROP_MOMENT_RE.search(spec.text, m.start(), m.end() + 60):
            continue                                      # "drop the drums at 1:30", "…, then slam back in"
        left = _negated_programs(said)
        roles = {_ROLE_WORDS[i] for i in _NEG_ITEM_SPLIT.split(said.strip()) if i in _ROLE_WORDS}
        if left or roles:
            spec.no_programs |= left
            spec.no_roles |= roles
            claim(m)
    for m in _LESS_RE.finditer(spec.text):
        claim(m)                                          # "less organ-y": no organ asked for
    spec.no_percussion = bool(_NO_PERCUSSION_RE.search(spec.text))
    if _PIANOLESS_RE.search(spec.text):
        spec.no_programs |= set(range(0, 6))             # a pianoless trio: no piano of any kind


_ACOUSTIC = frozenset((*range(0, 4), 6, *range(8, 16), *range(21, 26), 32, *range(40, 50), *range(56, 62),
                       *range(64, 80), *range(104, 116)))
_SYNTHS = frozenset((38, 39, 50, 51, 62, 63, *range(80, 104)))
_SUNG = frozenset((52, 53, 54, 85))
#: what a negated word leaves out, as a musician means it: "no piano" is no acoustic piano (the
#: Rhodes stays), "no synths" no synthesizer of any role, "no acoustic instruments at all" every
#: acoustic one (voices are no instruments); other instrument words their own program
_NEG_KINDS = {
    **dict.fromkeys(("acoustic instruments", "acoustic instrumentation", "acoustic sounds", "real instruments",
                     "live instruments"), _ACOUSTIC),
    **dict.fromkeys(("synths", "synth", "synthesizers", "synthesizer", "synthesisers", "synthesiser",
                     "electronics", "electronic sounds", "electronic instruments", "synth sounds", "electronic",
                     "electronic elements"), _SYNTHS),
    **dict.fromkeys(("vocals", "vocal", "voices", "voice", "singing", "singer", "singers", "vox", "choir",
                     "vocais", "voix", "gesang", "voz", "voces", "vokal", "vokaller", "vokalis"), _SUNG),
    **dict.fromkeys(("guitar", "guitars", "gitarren", "gitarre", "guitarras", "guitarra", "guitares", "guitare",
                     "chitarre", "chitarra", "gitar", "gitary", "gitarr", "gitarrer"), frozenset(range(24, 32))),
    **dict.fromkeys(("pianoforte", "klavier"), frozenset(range(0, 4))),
    **dict.fromkeys(("lead guitar", "guitar solo", "guitar solos"), frozenset()),   # the solo, not the guitars
    # "no electric anything": the electric pianos, organs, guitars and basses, and the synthesizers
    **dict.fromkeys(("electric anything", "anything electric", "electric instruments"),
                    frozenset((4, 5, 16, 17, 18, *range(26, 32), *range(33, 40), *_SYNTHS))),
    **dict.fromkeys(("keyboards", "keyboard"), frozenset((*range(0, 8), *range(16, 21), *range(80, 96)))),
    **dict.fromkeys(("acoustic guitar", "acoustic guitars"), frozenset((24, 25))),
    **dict.fromkeys(("electric guitar", "electric guitars"), frozenset(range(26, 32))),
    **dict.fromkeys(("piano", "pianos", "acoustic piano", "grand piano"), frozenset(range(0, 4))),
    **dict.fromkeys(("electric piano", "rhodes", "wurlitzer", "wurli"), frozenset((4, 5))),
    **dict.fromkeys(("strings", "string section", "orchestral strings"), frozenset((*range(40, 46), 48, 49))),
    **dict.fromkeys(("brass", "horns", "horn section", "brass section"), frozenset(range(56, 64))),
    **dict.fromkeys(("sax", "saxes", "saxophone", "saxophones"), frozenset(range(64, 68))),
    **dict.fromkeys(("synth pad", "synth pads", "synthpads", "synth-pads"), frozenset(range(88, 96))),
    # brass in Portuguese, Spanish, French and Italian ("sem metais")
    **dict.fromkeys(("metais", "metales", "cuivres", "ottoni"), frozenset(range(56, 64))),
    **dict.fromkeys(("organ", "organs"), frozenset(range(16, 21))),
    # "no orchestra", "no orchestral instruments": its strings, harp, timpani, brass and winds
    **dict.fromkeys(("orchestra", "orchestral instruments", "orchestral", "real orchestra", "live orchestra"),
                    frozenset((*range(40, 50), *range(56, 62), *range(68, 76)))),
}
_NEG_KINDS.update(dict.fromkeys(("sintetizadores", "sintetizador", "sintetizzatori", "sintetizzatore", "synthes",
                                  "synthetiseurs", "synthesizern", "synthies", "syntezatorow", "sintetizatoare",
                                  "sintetizatori", "syntetisaattorit", "syntikat", "syntikka"),
                                 _SYNTHS))
#: "without" in other languages before an instrument ("sans synthés", "ohne Gitarren", "sin piano")
_NEG_FOREIGN_WORDS_RE = re.compile(r"\b" + _WITHOUT + r"\s+(?=((?:[a-z'-]+\s+){0,2}[a-z'-]+))")
_WITHOUT_RE = re.compile(r"\s+(?:" + _WITHOUT + r"|[a-z]{1,2})\b")  # "oute drums oute synth", "fara tobe si fara …"
#: "vocal-like leads", "organ-ish pads": what a part must not sound like, not the part
_LIKE_RE = re.compile(r"([a-z]+)-(?:like|ish|y)\s+[a-z]+")
#: a kind of beat said no to is that groove, not the drums ("no blast beats", "no four on the floor")
_GROOVE_KIND_RE = re.compile(r"\b(?:(?:blast|half[- ]?time|double[- ]?time|double[- ]kick|d-beat|one[- ]drop|trap|boom[- ]bap|"
                             r"dembow|big|808)\s*(?:beats?|drums?|grooves?|kit)|(?:four|4)[- ](?:on|to)[- ]the[- ]floor"
                             r"(?:\s*(?:beats?|kick|drums?|grooves?))?|breakbeats?)$")
#: "no trap drums, just piano": the drums go after all (a piece for what follows "just")
_SOLO_AFTER_RE = re.compile(r"\s*[,;]?\s*(?:just|only)\b")
#: a list said no to by a word after it (Turkish "yok", Hindi "nahi"), within its clause
_NEG_AFTER_RE = re.compile(r"(?:^|(?<=[.,;:!?]))\s*([a-z' -]{2,60}?)\s+(?:bilkul\s+)?"
                           r"(?:yok|olmasin|istemiyorum|istemiyoruz|nahi|nahin)\b")
#: the words around such a list ("mujhe vocals nahi chahiye", "koi bhi drums nahi", "hiç vokal yok")
_NEG_AFTER_FILLER = re.compile(r"\b(?:mujhe|hume|humein|koi|bhi|lekin|par|magar|ab|hic|hicbir|ama|fakat|ancak)\b")
_NEG_AFTER_SPLIT = re.compile(r"\s*(?:,|\bve\b|\bveya\b|\bya da\b|\bile\b|\baur\b|\bya\b)\s*")
#: a negated instrument at one moment or in one role is no instrument left out: "no guitar solo",
#: "no piano until the bridge", "no vocals in the intro", "no vocals at the start"
_NEG_MOMENT_RE = re.compile(r"\b(?:solos?|intro|outro|fills?|breaks?|breakdown|until|till|before|after|"
                            r"during|first|verses?|chorus|bridge)\b")
_CLAUSE_MOMENT_RE = re.compile(r"\b(?:interlude|breakdown|build-?up|second half|first half|first \d+ bars)\b|"
                               r"\b(?:the|its|an?)\s+(?:intro|outro|bridge|verses?|drop|break|middle section|"
                               r"quiet (?:part|section))\b")
_NEG_WHEN_RE = re.compile(r"\s+(?:in|at|on|for|during|until|till|before|after)\s+(?:the\s+|a\s+|its\s+)?"
                          r"(?:intro|outro|verses?|chorus|choruses|bridge|start|beginning|end|first|breakdown|"
                          r"drop|break|opening|top)\b")
#: where what is left out ends: "no drums just piano", "no synths except the bass", "no vocals, only …"
_NEG_STOP_RE = re.compile(r"\s+(?:just|only|except|but|instead|then|rather|apart|save|no|not|nor|without)\b")
#: the words around an instrument that keep it what the prompt says no to ("no real piano", "no
#: synths at all") — any other word makes it one kind or one use of it ("no heavy guitars", "no
#: lead synth", "no reverb on the piano"), which leaves the instrument in
_NEG_BARE_RE = re.compile(r"(?:(?:the|any|a|an|more|other|of|extra|additional|obvious)\s+)*(.+?)"
                          r"(?:\s+(?:at\s+all|whatsoever|please|of\s+any\s+kind|anywhere|here|either|needed|parts?))*"
                          # where it is left out of: "no piano on the track", "sans violon dans l'enregistrement"
                          r"(?:\s+(?:on|in|from|dans|sur|en|im|auf|nel|sul|na|no|en\s+el)\s+(?:the|this|l'|le|la|el|der|dem|"
                          r"das|il|o|a)?\s*(?:track|tracks|mix|recording|record|song|beat|enregistrement|morceau|"
                          r"titre|mezcla|grabacion|aufnahme|mix|stuck|brano|registrazione|faixa|gravacao))?")
_NEG_ITEM_SPLIT = re.compile(r"\s*(?:,|/|&|\+|\bor\b|\band\b|\bnor\b|\bni\b|\bo\b|\bou\b|\boder\b|"
                             r"\bund\b|\bi\b|\by\b|\be\b)\s*")
_PIANOLESS_RE = re.compile(r"\bpiano-?less\b")
#: "no drums at all", "no percussion", "without any percussion": not the orchestra's drums either
#: (a "no drums, big percussion hits" keeps its taiko)
_NO_PERCUSSION_RE = re.compile(r"\b(?:no|without)\s+(?:any\s+)?(?:drums?|percussion)\s+(?:at\s+all|whatsoever)\b|"
                               r"\b(?:no|without)\s+(?:any\s+)?percussion\b|"
                               # "senza percussioni", "sin percusión", "sans percussions", "sem percussão"
                               r"\b(?:senza|sin|sans|sem|ohne|pas\s+de)\s+(?:la\s+|le\s+|les\s+|a\s+)?"
                               r"(?:" + "|".join((*_PERCUSSION_WORDS, "perkussion")) + r")\b")
#: "keep the piano out of it", "leave out the strings", "leave the synths out", "skip the sax",
#: "drop the guitars", "synth-free"
_LEAVE_OUT_RE = re.compile(
    # "keep the piano out of it", "leave the synths out", "take the drums out" — not "keep the bass
    # out front", "keep the guitars out of the low end", "out of the way of the kick"
    r"\b(?:keep|leave|take)\s+(?:the\s+|any\s+|all\s+(?:the\s+)?)?([a-z][a-z &-]*?)\s+out"
    r"(?=\s*(?:$|[,.;!]|of\s+(?:it|this|that|here|there|the\s+(?:song|track|mix|piece|tune|arrangement))\b|"
    r"entirely|completely|altogether|please|pls|plz))|"
    # "leave out the strings", "skip drums", "get rid of the sax", "omit the piano and guitar" —
    # not "drop the bass" or "cut the drums" (the drop)
    r"\b(?:leave\s+out|leave\s+off|take\s+out|skip|ditch|remove|get\s+rid\s+of|omit|exclude|"
    r"(?:(?<![\w-])(?:mute|lose|kill|strip\s+out)|(?<!one )(?<!one-)drop)(?=\s+(?:the\s+|all\s+(?:the\s+)?)?(?:drums|percussion|kick|"
    r"hats|hi-hats|vocals)\b(?!\s+in\b))|(?:everything|all)\s+(?:but|except)(?=\s+(?:the\s+)?(?:drums|percussion)\b)|"
    r"don'?t\s+(?:use|want|need|add)(?:\s+any)?|do\s+not\s+(?:use|want|need|add)(?:\s+any)?)\s+"
    r"(?:the\s+|any\s+|all\s+(?:the\s+)?)?([a-z][a-z &-]*?)(?=\s*(?:$|[,.;!]|\b(?:please|pls|plz|entirely|"
    r"completely|but|then|so|because|for|in|until|till|during|on|at|from|after|before|with)\b))|"
    # "synth-free", "drumless"
    r"\b([a-z]+)-free\b|\b(drum)-?less\b")
_LESS_RE = re.compile(r"\bless\s+[a-z]+(?:-?y)?\b")
#: what makes dropping or muting the drums a moment, not the piece: a time, a bar, their return
_DROP_MOMENT_RE = re.compile(r"\b(?:at|from|after|for|until|till|in|on)\s+(?:\d|bar\b|bars\b|the\s+(?:break|bridge|drop|chorus|"
                             r"verse|middle|end|outro|intro|last|second|third))|\b(?:back|then|return|returns|again|build\w*|"
                             r"bring\w*|breakdown|tension|slam\w*|comes?\s+in)\b")


#: the kit's lanes a negated drum word leaves out ("no hi-hats, no kick", "no cymbals")
_NEG_LANES = {
    **dict.fromkeys(("hi-hats", "hi-hat", "hi hats", "hi hat", "hihats", "hihat", "hats"), {"chat", "ohat", "phat"}),
    **dict.fromkeys(("open hats", "open hi-hats", "open hi-hat", "open hihats"), {"ohat"}),
    **dict.fromkeys(("kick", "kicks", "kick drum", "kick drums", "bass drum"), {"kick", "kick2", "kick_lo"}),
    **dict.fromkeys(("snare", "snares", "snare drum"), {"snare", "snare2", "esnare"}),
    **dict.fromkeys(("clap", "claps", "handclaps", "hand claps"), {"clap", "hclap"}),
    **dict.fromkeys(("cymbals", "cymbal"), {"crash", "ride", "ride2", "china", "splash", "splash2", "cymbal", "chinese"}),
    **dict.fromkeys(("crashes", "crash", "crash cymbals", "crash cymbal"), {"crash", "china", "splash", "splash2", "chinese"}),
    **dict.fromkeys(("shaker", "shakers"), {"shaker", "maracas"}),
    **dict.fromkeys(("cowbell", "cowbells"), {"cowbell"}),
    **dict.fromkeys(("tambourine", "tambourines"), {"tamb"}),
}


def _bare(item: str) -> str:
    """One item of a list said no to without the words around it that keep it what it is ("the
    kick drum" → "kick drum", "synths at all" → "synths")."""
    item = item.strip()
    m = _NEG_BARE_RE.fullmatch(item)
    return m.group(1) if m else item


def _lane_item(item: str) -> bool:
    """Whether one item of a list said no to is a drum of :data:`_NEG_LANES` ("the kick drum")."""
    return _bare(item) in _NEG_LANES


def _negated_lanes(phrase: str) -> set[str]:
    """The kit lanes a negated phrase leaves out: each item of its list that is a drum word of
    :data:`_NEG_LANES` and nothing more ("no hi-hats", "no kick or snare", not "no kick in the intro")."""
    if _NEG_MOMENT_RE.search(phrase):
        return set()
    out: set[str] = set()
    for item in _NEG_ITEM_SPLIT.split(phrase.strip()):
        out |= _NEG_LANES.get(_bare(item), set())
    return out


def _negated_programs(phrase: str, foreign: bool = False) -> set[int]:
    """The GM programs a negated phrase leaves out ("no acoustic instruments at all", "no synths",
    "without piano or strings"): each item of its list that is an instrument word and nothing
    more; a word that qualifies it ("no heavy guitars", "lieder ohne worte for piano") or a moment
    ("no guitar solo") leaves it in. ``foreign``: the words after "sans", "ohne" … — only its first
    items, up to the first that is not an instrument."""
    if _NEG_MOMENT_RE.search(phrase):
        return set()
    out: set[int] = set()
    for item in _NEG_ITEM_SPLIT.split(phrase.strip()):
        w = _bare(item)
        if w in _ROLE_WORDS:
            continue                                      # "no arps", "no pads": the role, not a program
        if w in _NEG_KINDS:
            out |= _NEG_KINDS[w]
        elif w in INSTRUMENT_WORDS:
            out.add(INSTRUMENT_WORDS[w][0])
        elif re.fullmatch(r"[a-z]{5,}", w) and (near := _nearest_spelling(w, _SPELL_BY_INITIAL)) \
                and _SPELL_KIND[near[1]] == "instrument":
            out.add(INSTRUMENT_WORDS[near[1]][0])         # misspelt, or another language's ("sin acordeón")
        elif foreign:
            break
    return out


#: style words that name a place or a people rather than a style: a later style word wins over them
_REGIONAL = frozenset(("western", "irish", "irish folk", "irish trad", "trad session", "irish trad session", "scottish", "scottish folk", "yiddish", "bulgarian",
                       "bulgarian folk", "macedonian", "balkan folk", "brazilian", "brazil", "latin", "cuban", "cuba",
                       "dominican", "colombian", "argentinian", "argentine", "mexican", "mexico", "mexican folk",
                       "jamaican", "jamaica", "trinidad", "haitian", "caribbean", "nigerian", "nigeria", "punjabi",
                       "andean", "andino", "swedish", "scandinavian folk", "nordic folk", "peruvian folk",
                       "argentine folk", "congolese rumba", "martinique", "guadeloupe", "louisiana",
                       "arab", "arabic", "middle eastern", "middle-eastern", "levantine", "egyptian", "lebanese",
                       "syrian", "palestinian", "uruguayan", "montevideo", "bahamian", "bosnian", "garifuna",
                       "turkish", "banda", "hawaiian", "hawaiian music", "hula"))


#: dances that several styles play (country's and zydeco's two-step): a style word elsewhere wins
_SHARED_DANCES = frozenset(("two-step", "two step", "honky tonk", "honky-tonk", "honkytonk", "bomba",
                            # "bateria" is the drum kit in Portuguese and Spanish ("bateria batidão",
                            # "sense bateria"), "parang" "like" in Tagalog ("parang Moira")
                            "bateria", "parang",
                            # a ballad's kind, not its style: "emotional ballad, lofi beat" is lofi
                            "emotional ballad", "love ballad"))
#: style words that name a feel as well as a style ("shuffle"): after a dance of its own, its feel
#: ("a honky tonk shuffle"; after "love ballad", not said no to, a "texas shuffle" is still the blues)
_FEELS = frozenset(("shuffle",))
_FEEL_HOSTS = frozenset(("two-step", "two step", "honky tonk", "honky-tonk", "honkytonk"))
#: words for a sound, not a style, where a style is named too: "glitch effects on a lofi beat",
#: "aphex twin ambient", "trailer music with glitch hits" (alone they are IDM: electro)
_TEXTURES = frozenset(("glitch", "glitchy", "glitchy idm", "idm", "braindance", "aphex twin", "autechre",
                       "intelligent dance music",
                       # a progression, a dance or a use many styles share: "ii-v-i in bossa nova" is bossa
                       # nova, "foxtrot, dixieland band" dixieland, "quickstep march for pipe band" a pipe
                       # band, "a gavotte from a classical symphony" classical, "sound bath style pads under
                       # a house beat" house — alone, jazz, swing, baroque, ambient
                       "ii-v-i", "ii–v–i", "ii v i", "ii-v-i drill", "ii–v–i drill", "two-five-one", "two five one",
                       "quickstep", "foxtrot", "fox trot", "fox-trot", "slow foxtrot", "slowfox", "gavotte", "gavottes",
                       "bourree", "bourrees", "sound bath", "sound healing", "west african dance", "djembe class",
                       "paso doble", "pasodoble", "paso-doble"))
#: style words that are adjectives first ("a heroic polonaise" is a polonaise)
_ADJECTIVES = frozenset(("heroic",))
#: a scene or a use, the brief a media composer is given ("tavern scene … celtic jig", "horror game
#: … doom metal", "football club … UK drill", "trailer … djent"): the style it names wins
_SCENES = frozenset(("trailer", "trailer music", "tavern", "horror", "club", "pirate", "meditation", "carnival",
                     "adventure", "battle", "boss battle", "epic", "fantasy", "sleep", "yoga", "video game",
                     "retro game", "cowboy", "oom-pah"))
#: words for a region's colour or a brief's medium that name a style only alone: "chinese traditional
#: instruments over a lofi beat" is lofi, "banda sonora de tango" a tango, "griot storytelling over a
#: hip hop beat" boom bap — alone, a film score and the griots' mande
_FLAVOURS = frozenset(("gamelan", "pelog", "slendro", "kotekan",   # "gamelan-inspired ambient" is ambient
                       # a dirge beside another style is its mood ("a dirge, metal"); Turku a Finnish city too
                       "dirge", "dirges", "funeral", "funeral music", "turku",
                       "wuxia", "xianxia", "guofeng", "chinese traditional", "traditional chinese", "chinese folk",
                       "guoyue", "musique de film", "filmmusik", "musica de pelicula", "musica de cine",
                       "colonna sonora", "trilha sonora", "banda sonora", "griot", "griots", "jeli", "djeli",
                       "malian music", "musique malienne", "west african folk", "mande", "manding", "mandingue",
                       "mandinka", "mandinga", "malinke", "musique mandingue", "wassoulou",
                       # an era's or a genre film's colour: "late romantic orchestral" is a film
                       # score, "70s poliziottesco funk" funk — alone, classical and a film score
                       "late romantic", "late-romantic", "mahler", "poliziottesco", "giallo score",
                       "spaghetti western", "morricone", "ennio morricone", "western showdown"))
#: a composer's or an artist's name (and an era's: renaissance, early music) gives way to a style
#: or form named beside it ("Mozart piano sonata" is the piano's, "Einaudi meets hip hop" hip hop)
_NAMES_OF_ARTISTS = frozenset(("mozart", "haydn", "beethoven", "schubert", "ravel", "faure", "daft punk", "kraftwerk", "earth wind and fire", "earth wind & fire", "earth, wind & fire",
                        "earth, wind and fire", "ewf", "herbie hancock", "headhunters", "ludovico einaudi", "einaudi",
                        "yiruma", "black sabbath", "j dilla", "dilla", "nusrat fateh ali khan", "nusrat",
                        "buena vista social club", "buena vista", "linndrum", "linn drum", "tsitsanis", "theodorakis",
                        "zorba", "renaissance", "early music", "canzone napoletana"))
#: the style words that yield to another style word in the prompt
_YIELDING = _REGIONAL | _SHARED_DANCES | _ADJECTIVES | _SCENES | _TEXTURES | _FLAVOURS | _NAMES_OF_ARTISTS


#: the words before a style that say no to it ("not metal", "rather than trap"), "avoid" among them or not
_SAID_NO_RE = re.compile(r"\b(?:not|no|nor|never|without|instead of|rather than|except|but not|less|minus)\s+"
                         r"(?:\w+\s+)?$")
_SAID_NO_OR_AVOID_RE = re.compile(r"\b(?:not|no|nor|never|without|instead of|rather than|except|but not|less|minus|"
                                  r"avoid)\s+(?:\w+\s+)?$")


def _said_no(text: str, m: re.Match, avoid: bool = True) -> bool:
    """Whether the phrase ``m`` follows a "not", "no", "rather than" (and, with ``avoid``, "avoid") …"""
    return bool((_SAID_NO_OR_AVOID_RE if avoid else _SAID_NO_RE).search(text[:m.start()]))


#: the nouns a style word can colour ("rock drums", "gospel choir", "funky bassline")
_PART_NOUN_RE = re.compile(r"(?:drums?|percussion|bass(?:lines?)?|vocals?|choirs?|strings|horns|brass|guitars?|keys|"
                           r"synths?|pads?|leads?|riffs?|flutes?|trumpets?)\b")
_SPACES_RE = re.compile(r"\s+")


def _describes(text: str, m: re.Match) -> bool:
    """Whether the style phrase ``m`` colours the instrument right after it ("gospel choir", "jazz
    trumpet", "rock drums", "industrial percussion", "funky bassline", "soul-soothing") — a "trap
    beat" is still trap."""
    if text.startswith("-", m.end()) or _PART_NOUN_RE.fullmatch(m.group(0).rsplit(" ", 1)[-1]):
        return True                       # "soul-soothing"; a style word that is a band's part ("gospel choir")
    gap = _SPACES_RE.match(text, m.end())
    if gap is None:
        return False
    at = gap.end()
    return bool(_INSTR_RX.match(text, at) or _DRUM_RX.match(text, at) or _PART_NOUN_RE.match(text, at))



#: an instrument's drone is that instrument's ("a tanpura drone", "bagpipe drones"), no ambient drone
_DRONE_OF_RE = re.compile(r"\b(?:tanpura|tambura|tamboura|shruti|sruti|shruti box|sitar)\s+$")


_NATO_BEFORE_RE = re.compile(r"\b(?:alpha|bravo|charlie|delta|echo|golf|hotel|india|kilo|lima|mike|oscar|papa|romeo|"
                             r"sierra|tango|uniform|victor|whiskey|yankee|zulu)\s+$")
_DRONE_INSTRUMENT_RE = re.compile(r"\b(?:tanpura|tamboura|shruti|sruti)\b")


#: the words right before the only style a prompt names that refuse it ("not jazz, just a chill beat",
#: "anything but rock, energetic")
_REFUSED_RE = re.compile(r"\b(?:not|never|anything\s+but|nothing\s+like|instead\s+of|rather\s+than)\s+(?:an?\s+)?$")


def _read_genre(spec: PromptSpec, claim: _Claims) -> str | None:
    """The earliest genre phrase in the prompt ("jazz waltz" is jazz, in 3/4); returns the phrase."""
    longer = [(i.start(), i.end()) for i in _INSTR_RX.finditer(spec.text)]
    found = [m for m in _GENRE_RX.finditer(spec.text)
             if not any(a <= m.start() and m.end() <= b and b - a > m.end() - m.start() for a, b in longer)
             and not any(claim.taken[m.start():m.end()])     # "rock organ", "jazz guitar" name an instrument
             and not (m.group(0) in ("drone", "drones") and (_DRONE_OF_RE.search(spec.text, 0, m.start())
                                                              or _DRONE_INSTRUMENT_RE.search(spec.text)))
             and not (m.group(0) in ("foxtrot", "fox trot") and _NATO_BEFORE_RE.search(spec.text, 0, m.start()))]
    if len(found) == 1 and _REFUSED_RE.search(spec.text, 0, found[0].start()):
        claim(found[0])                                   # "not jazz, just a chill beat": any style but that one
        spec.refused = _GENRE_OF[found[0].group(0)]
        return None
    if len(found) > 1 and (_said_no(spec.text, found[0]) or spec.text.startswith("-free", found[0].end())):
        # a style said no to gives way to the one asked for ("not idm, a warm deep house groove",
        # "glitch-free pop")
        asked = [m for m in found[1:] if not _said_no(spec.text, m)]
        if asked:
            found = asked + [m for m in found if m not in asked]
    if len(found) > 1 and found[0].group(0) in _SCENES:
        # a scene gives way only to a style the brief asks for: not one it says no to ("epic boss
        # battle, not metal") nor one that colours an instrument ("a trailer with a gospel choir",
        # "rock drums", "soul-soothing flute")
        asked = [m for m in found[1:] if m.group(0) not in _YIELDING and not _said_no(spec.text, m)
                 and not _describes(spec.text, m)]
        if asked:
            found = asked + [m for m in found if m not in asked]
    elif len(found) > 1 and found[0].group(0) in _YIELDING:
        # a place (or a dance many styles share) names the style only when no style word
        # follows: "bulgarian kopanitsa" is a kopanitsa, "cuban son" a son, "irish reel" a reel,
        # a "two-step like clifton chenier" zydeco
        # — a feel after a dance is that dance's ("a honky tonk shuffle" is honky tonk)
        dance = found[0].group(0) in _FEEL_HOSTS and not _said_no(spec.text, found[0])
        found = [m for m in found if m.group(0) not in _YIELDING and not (dance and m.group(0) in _FEELS)] + \
            [m for m in found if m.group(0) in _YIELDING or (dance and m.group(0) in _FEELS)]
    if len(found) > 1:
        # a later phrase that holds the first ("Waltz for Debby … a jazz waltz in 3/4", "rock …
        # indie rock") says it more exactly
        wider = next((m for m in found[1:] if len(m.group(0)) > len(found[0].group(0))
                      and _phrase_re(found[0].group(0)).search(m.group(0))
                      and not _said_no(spec.text, m, avoid=False)), None)
        if wider is not None:
            found = [wider] + [m for m in found if m is not wider]
    for m in found:
        if claim(m):
            phrase = m.group(0)
            spec.genre = _GENRE_OF[phrase]
            spec.genre_why = f"the style word {phrase!r}"
            if spec.genre == "waltz" and spec.meter is None:
                spec.meter = (3, 4)
            return phrase
    return None


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions, swaps of neighbours.
    With ``limit``: anything over it is reported as ``limit + 1``, found as soon as a row shows it."""
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if limit is not None and min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1] if limit is None else min(prev[-1], limit + 1)


_MAX_TRIED = 16
#: what makes a style word another English word, not a compound of it ("operatic", "carolina")
_WORD_ENDINGS = frozenset("tic atic ic ical al ial ina ous".split())   # (-ish, -ed, -y still say "in its style")


def _read_genre_nearest(spec: PromptSpec, claim: _Claims) -> None:
    """A style for words the library does not have, by a fixed rule (docs/COMPOSER.md), tried on
    each unknown word in prompt order, first rule first:

    1. **run together**: the word (or it and the next one) is a style's name without its spaces or
       hyphens ("bossanova", "hip hop" as "hiphop", "drumandbass");
    2. **misspelt**: within one edit (two for words of 8 letters or more) of a style word, with
       the same first letter ("raggae", "reggeaton", "tecno", "dupstep");
    3. **a compound of a style word**: the longest style word of 4 letters or more the word ends
       with, else starts with ("afrohouse" → house, "synthpunk" → punk, "discofox" → disco,
       "folkish" → folk) — not when the rest is an ending that makes another English word
       (:data:`_WORD_ENDINGS`: "operatic" is no opera, "carolina" no carol).

    Words the tables know (instruments, moods, note names, everyday music words) are never read
    this way, and only the first :data:`_MAX_TRIED` unknown words are tried (a prompt of random
    words costs the engine thread a few ms at most). No match: the style is left to the
    instruments, meter and moods (``band``)."""
    text = spec.text
    toks = [m for m in re.finditer(r"[a-z][a-z&'-]*", text)]
    named = [(i.start(), i.end()) for i in _INSTR_RX.finditer(text)]     # "honky-tonk piano" is a piano
    tried = 0
    for q, m in enumerate(toks):
        w = m.group(0).strip("'-")
        if w in _KNOWN or len(w) < 4 or any(claim.taken[m.start():m.end()]) \
                or any(a <= m.start() and m.end() <= b for a, b in named):
            continue
        tried += 1
        if tried > _MAX_TRIED:
            return
        sq = w.replace("-", "")
        nxt = toks[q + 1].group(0).replace("-", "") if q + 1 < len(toks) else ""
        hit = None
        if sq in _SQUEEZED:
            hit = (_SQUEEZED[sq], f"{w!r} read as {sq!r}")
        elif nxt and sq + nxt in _SQUEEZED:
            hit = (_SQUEEZED[sq + nxt], f"{w} {nxt!r} read run together")
        if hit is None and len(sq) >= 5:
            near = _nearest_spelling(sq, _BY_INITIAL)
            if near:
                hit = (_SQUEEZED[near[1]], f"{w!r} read as the style word {near[1]!r} (a spelling within {near[0]})")
        if hit is None and len(sq) >= 6:
            n = len(sq)
            pick = next((k for k in _PARTS if len(k) < n and sq.endswith(k)), None) or \
                next((k for k in _PARTS if len(k) < n and sq.startswith(k)
                      and sq[len(k):] not in _WORD_ENDINGS), None)   # "discofox", "folkish"; not "operatic"
            if pick:
                hit = (_SQUEEZED[pick], f"{w!r} read as a kind of {pick!r}")
        if hit:
            spec.genre, spec.genre_why = hit[0], hit[1]
            claim(m)
            if spec.genre == "waltz" and spec.meter is None:
                spec.meter = (3, 4)
            return


_KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEY_AT = {ch: (r, c) for r, row in enumerate(_KEYS) for c, ch in enumerate(row)}


def _typo(a: str, b: str) -> bool:
    """Whether one letter of ``a`` in place of ``b``'s is a slip of the finger: a neighbouring key,
    or ``z`` for a plural's ``s`` ("clapz")."""
    if {a, b} == {"s", "z"}:
        return True
    (ra, ca), (rb, cb) = _KEY_AT.get(a, (9, 0)), _KEY_AT.get(b, (-9, 0))
    return abs(ra - rb) <= 1 and abs(ca - cb) <= 1 + (ra != rb)


_VOWELS = frozenset("aeiouy")
#: endings two words may share while their stems differ: "slapping" and "snapping" are two verbs
_SHARED_ENDINGS = ("ing", "ers", "er", "ed", "ian", "ies", "es")


def _short_slip(w: str, k: str) -> bool:
    """Whether ``w`` may be read as ``k``, a word of its length with letters changed in place. A
    short word (5 letters or fewer) one letter from ``k``: only for a slip of the finger — another
    letter in its place is as often another word or a name ("clams" is no "claps", "vives" no
    "vibes"). A word of any length two letters from ``k``: only when the two are swapped or each
    is a slip or a vowel for a vowel ("clanging" is no "clapping", "glockenspeal" a glockenspiel).
    Two words with one ending (-ing, -er, -ed …) compare their stems ("slapping" is no
    "snapping"); an -ing word is no word without it ("chopping" is no "chopin"). A letter more,
    one less or two swapped stay typos."""
    if len(w) >= 6 and w.endswith("ing") and not k.endswith("ing"):
        return False          # a verb's -ing form is that verb, not a misspelling ("chopping" no "chopin")
    if len(w) != len(k):
        return True
    end = next((e for e in _SHARED_ENDINGS if w.endswith(e) and k.endswith(e) and len(w) > len(e) + 2), None)
    if end and len(w) - len(end) <= 5:
        return _short_slip(w[:-len(end)], k[:-len(end)])   # the stems, as short words
    diff = [(a, b) for a, b in zip(w, k) if a != b]
    if len(diff) == 2 and not (diff[0] == diff[1][::-1] or all(_typo(*d) or set(d) <= _VOWELS for d in diff)):
        return False          # two letters changed in place, neither a swap nor slips: another word
                              # ("clacking", "clanging" no "clapping"; "bahamian" no "bavarian")
    return len(w) > 5 or len(diff) != 1 or _typo(*diff[0])


def _nearest_spelling(w: str, by_initial: dict[str, tuple[str, ...]]) -> tuple[int, str] | None:
    """``(edits, word)``: the word of ``by_initial`` (words by their first letter) nearest ``w``,
    within one edit (two for words of 8 letters or more; a short word's changed letter a slip of the
    finger, :func:`_short_slip`) and with its first letter; a tie goes to the word ``w`` is with
    one letter doubled by a slip ("guitarrs" are guitars, not a guitarra), then to the word of
    ``w``'s length. ``None`` when there is none that near."""
    limit = 2 if len(w) >= 8 else 1
    best = min(((edit_distance(w, k, limit), not _doubled(w, k), abs(len(k) - len(w)), k)
                for k in by_initial.get(w[0], ()) if abs(len(k) - len(w)) <= limit and _short_slip(w, k)),
               default=None)
    return (best[0], best[3]) if best and best[0] <= limit else None


def _doubled(w: str, k: str) -> bool:
    """Whether ``w`` is ``k`` with one of its letters typed twice ("guitarrs", "basss")."""
    return len(w) == len(k) + 1 and any(w[i] == w[i - 1] and w[:i] + w[i + 1:] == k for i in range(1, len(w)))


#: single-word instrument and drum words ("instrument" | "drum": a word of both tables is a drum
#: word; not "vibes", slang before it is a vibraphone), and the same words by their first letter,
#: for :func:`_read_misspelt_instruments`
_SPELL_KIND = {w: kind for table, kind in ((G.INSTRUMENTS, "instrument"), (G.DRUM_WORDS, "drum"))
               for w in table if re.fullmatch(r"[a-z]{5,}", w) and w != "vibes"}   # "vibes" is slang first
_SPELL_BY_INITIAL: dict[str, tuple[str, ...]] = {}
for _w in _SPELL_KIND:
    _SPELL_BY_INITIAL[_w[0]] = _SPELL_BY_INITIAL.get(_w[0], ()) + (_w,)


def _read_misspelt_instruments(spec: PromptSpec, claim: _Claims) -> list[tuple[int, str, str]]:
    """Instrument and drum words as people misspell them ("accordian", "vibrafone", "tympani",
    "tamborine"): a word the tables do not know, of 5 letters or more, within one edit of a
    single-word instrument or drum word (two for words of 8 letters or more) with the same first
    letter — the rule the style words follow (:func:`_read_genre_nearest`), read before it, so
    a misspelt instrument is never taken for a misspelt style. Returns ``(position, word,
    "instrument" | "drum")`` for each, and notes it in ``spec.spelled``."""
    out = []
    tried = 0
    for m in re.finditer(r"[a-z]+", spec.text):
        w = m.group(0)
        if len(w) < 5 or w in _KNOWN or any(claim.taken[m.start():m.end()]):
            continue
        tried += 1
        if tried > _MAX_TRIED:
            break
        near = _nearest_spelling(w, _SPELL_BY_INITIAL)
        if near is None or _adjective_of(w, near[1]):
            continue                              # "plucky", "brassy", "stringed": a word's own adjective
        if claim(m):
            out.append((m.start(), near[1], _SPELL_KIND[near[1]]))
            spec.spelled.append(f"{w!r} read as {near[1]!r}")
    return out


def _adjective_of(w: str, k: str) -> bool:
    """Whether ``w`` is an English word made of ``k`` (or its stem) and a suffix, not a misspelling
    of it: "plucky" (pluck-s), "brassy", "stringed", "drumming", "fluteish"."""
    for suf in ("ish", "ing", "ed", "ly", "er", "y"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            stem = w[:-len(suf)]
            if k.startswith(stem) or stem.startswith(k) or edit_distance(stem, k, 1) <= 1:
                return True
    return False


def _read_instruments(spec: PromptSpec, claim: _Claims, phrase: str | None,
                      misspelt: list[tuple[int, str, str]] = ()) -> None:
    text = spec.text
    drums = [(m.start(), m.group(0)) for m in _DRUM_RX.finditer(text) if claim(m)]
    named = [(m.start(), m.group(0)) for m in _INSTR_RX.finditer(text) if claim(m)]
    # "vibes" is the vibraphone after "with", "and", a comma … or before "solo"; "teddy riley vibes",
    # "sunset vibes" are a mood
    named = [(i, w) for i, w in named if w != "vibes" or re.search(
        r"(?:^|\b(?:with|and|on|plus|the|some|of|a)|[,&+:])\s*$", text[:i]) or re.match(
        r"vibes\s+(?:solo|solos|melody|lead|chords|comping|part|line|and|,)", text[i:])]
    # "upright bass plucks", "guitar plucks": the named instrument plucked, not a synth pluck
    named = [(i, w) for i, w in named if w not in ("pluck", "plucks") or not any(
        j + len(v) <= i and not text[j + len(v):i].strip() for j, v in named if v not in ("pluck", "plucks"))]
    # "right hand arpeggios", "harp arpeggios", "arpeggiated piano": the instrument's own figure, not a synth arp
    # — and in a piece for the piano ("solo piano scherzo … cascading arpeggios") the pianist's
    piano_piece = spec.genre == "romantic piano" or re.search(r"\b(?:solo piano|piano solo|for (?:solo )?piano)\b", text)
    named = [(i, w) for i, w in named if w not in ("arpeggio", "arpeggios") or not piano_piece and not re.search(
        r"\b(?:piano|harp|guitar|hands?|harpsichord|keyboard|celesta|marimba|vibes|vibraphone|strings?)"
        r"(?:\s+(?!and\b|with\b|or\b|plus\b|over\b|under\b)[a-z'-]+)?\s+$", text[:i])]
    drums += [(i, w) for i, w, kind in misspelt if kind == "drum"]
    named += [(i, w) for i, w, kind in misspelt if kind == "instrument"]
    tin = r"(?:tin|penny|irish|low)\s+$"
    if spec.genre in _PERCUSSION_WHISTLE:
        # in a samba school the whistle is the mestre's apito, not a tin whistle's tune (gqom's too)
        _as_percussion(named, drums, text, ("whistle", "whistles"), "samba whistle", tin)
    elif spec.genre in G.GENRES and G.GENRES[spec.genre].family in _DRUM_MACHINE_FAMILIES:
        # a whistle listed among the drums ("hard 808s, handclaps and a whistle") is the drum
        # machine's, not a tune
        drum_at = {i for i, _ in drums}
        listed = sorted({i for i, _ in named} | drum_at)
        _as_percussion(named, drums, text, ("whistle", "whistles"), "samba whistle", tin,
                       only=lambda i: max((j for j in listed if j < i), default=None) in drum_at)
    # a woodblock is a percussionist's block (GM drum keys 76/77: "woodblock hits", "tom rolls and
    # woodblock"); GM's melodic Woodblock (program 115) only when it carries a tune or is the
    # piece's instrument ("a woodblock melody", "a piece for woodblock")
    _as_percussion(named, drums, text, ("woodblock",), "woodblocks", r"\bfor\s+(?:an?\s+|the\s+|solo\s+)?$")
    if not (spec.genre in ("afrobeat", "mande") or re.search(r"\b(?:sabar|mbalax|senegal|senegalese|wolof|talking)", text)):
        drums = [(i, w) for i, w in drums if w != "tama"]       # Tama makes drum kits: Senegal's tama only there
    spec.drum_words = [w for _, w in sorted(drums)]
    spec.instruments = [w if w in G.INSTRUMENTS else _singular(w) for _, w in sorted(named)]
    for w in spec.instruments:                    # "accordion melody", "a guitar solo", "piano lead"
        if G.INSTRUMENTS[w][1] in ("bass", "arp") and re.search(                 # a "303 line" is a bassline
                r"(?<![a-z])" + re.escape(w) + r"s?\s+line\b", text):
            continue
        if re.search(r"(?<![a-z])" + re.escape(w) + r"s?\s+" + _TUNE_WORDS + r"\b", text) or re.search(
                r"\b(?:melody|lead|tune|theme)\s+(?:on|from|by|played on)\s+(?:an?\s+|the\s+)?"
                + re.escape(w), text):
            spec.as_lead.add(w)
        elif re.search(r"(?<![a-z])" + re.escape(w) + r"s?\s+(?:counter-?melod(?:y|ies)|counter-?lines?|counterpoint|"
                       r"obbligato|descant)\b", text):
            spec.as_counter.add(w)
    if "lead" in spec.instruments and spec.as_lead and all(
            any(re.search(r"(?<![a-z])" + re.escape(w) + r"s?\s+$", text[:m.start()]) for w in spec.as_lead)
            for m in re.finditer(r"\bleads?\b", text)):
        spec.instruments.remove("lead")           # "clarinet lead": the clarinet's tune, no synth lead
    # a style played as its nearest genre brings its own instruments, for the roles the prompt
    # leaves open ("folk" is rock's groove on an acoustic guitar, not a distorted one)
    roles = {G.INSTRUMENTS[w][1] for w in spec.instruments}
    for w in G.STYLE_INSTRUMENTS.get(phrase, ()):
        if G.INSTRUMENTS[w][1] not in roles:
            spec.instruments.append(w)
            roles.add(G.INSTRUMENTS[w][1])


#: the words after an instrument that give it the tune ("accordion melody", "a whistle solo")
_TUNE_WORDS = r"(?:melody|melodies|lead|solo|solos|line|tune|theme)"


def _as_percussion(named: list, drums: list, text: str, words: tuple[str, ...], drum: str, tuned_before: str,
                   only=lambda i: True) -> None:
    """Read each of ``words`` among the ``named`` instruments (at a text position ``only`` accepts)
    as the drum word ``drum`` instead, unless a tune word follows it or the text before it matches
    ``tuned_before`` ("tin whistle", "a piece for woodblock")."""
    for i, w in list(named):
        if w in words and only(i) and not re.search(tuned_before, text[:i]) \
                and not re.match(re.escape(w) + r"s?\s+" + _TUNE_WORDS + r"\b", text[i:]):
            named.remove((i, w))
            drums.append((i, drum))


#: styles whose whistle is a percussionist's call (the samba school's apito, gqom's and carnival's
#: whistles), unless the prompt gives it a tune ("a whistle melody")
_PERCUSSION_WHISTLE = frozenset({"samba", "house", "soca", "reggaeton"})
#: style families where a whistle named right after a drum word is a drum machine's or a carnival
#: percussionist's (set F's NOLA bounce: "hard 808s, handclaps and a whistle"); a folk or celtic
#: whistle is a tune whatever comes before it ("bodhran and whistle")
_DRUM_MACHINE_FAMILIES = frozenset({"electronic", "hiphop", "latin", "caribbean", "soul"})


def _singular(w: str) -> str:
    """The table's word for a plural the prompt used ("trumpets" → "trumpet")."""
    for cut in (2, 1):
        if w[:-cut] in G.INSTRUMENTS and INSTRUMENT_WORDS[w] == G.INSTRUMENTS[w[:-cut]]:
            return w[:-cut]
    return w


#: mood words of other languages, as the English ones they mean ("música triste", "ein fröhlicher
#: Walzer", "une valse mélancolique")
_MOOD_WORDS = {**dict.fromkeys(("triste", "tristes", "traurig", "traurige", "trauriger", "trauriges",
                                "smutny", "smutna", "smutne", "huzunlu", "dukhi", "udaas"), "sad"),
               **dict.fromkeys(("frohlich", "frohliche", "frohlicher", "frohliches", "alegre", "alegres", "feliz",
                                "felices", "heureux", "heureuse", "joyeux", "joyeuse", "felice", "allegri",
                                "wesoly", "wesola", "wesole", "neseli"), "happy"),
               **dict.fromkeys(("malinconico", "malinconica", "melancolico", "melancolica", "melancolique",
                                "melancholisch", "melancholische", "melancolia", "nostalgique", "nostalgico",
                                "nostalgica", "nostalgisch"), "melancholic"),
               **dict.fromkeys(("oscuro", "oscura", "dunkel", "dunkle", "dunkler", "sombre", "cupo", "karanlik"), "dark"),
               **dict.fromkeys(("romantico", "romantica", "romantique", "romantisch", "romantische"), "romantic"),
               **dict.fromkeys(("epico", "epica", "epique", "episch", "epische"), "epic")}

#: scenes and uses that name a style when the prompt names none — (pattern, style, pace, mode):
#: a chase is a film cue's and fast, a market in Marrakech the Arab world's, a rainy café a lo-fi
#: beat's, an underwater cave ambient; a mood named beside it still colours it
_SCENE_STYLES = tuple((re.compile(rx), style, pace, mode) for rx, style, pace, mode in (
    (r"\b(?:car\s+)?chase\s+(?:scene|sequence|cue|music|theme|level)\b|\b(?:car|police|high[\s-]speed|rooftop|foot)\s+chase\b|"
     r"\b(?:a|the)\s+chase\b(?!\s+(?:bank|atlantic|the|a|an|it|my|your|that|after)\b)"
     r"|\bpursuit\b|\bgetaway\b|\baction\s+(?:scene|sequence|cue)\b|\bescape\s+scene\b",
     "cinematic", 1, "minor"),
    (r"(?<!rap )(?<!dance )\bbattles?\b(?!\s+(?:hymn|rap|of\s+the\s+bands|to|for)\b)|\bboss\s+(?:fight|battle)\b|"
     r"\bfinal\s+boss\b|\bcombat\b|\bfight\s+scene\b|\bwar\s+scene\b",
     "cinematic", 1, "minor"),
    (r"\b(?:majestic|triumphant|heroic|victorious|victory)\b|\b(?:end(?:ing)?|closing)\s+credits\b|\bmain\s+theme\b",
     "cinematic", 0, "major"),
    (r"\b(?:suspense\w*|thriller|horror|halloween|haunted\s+house|ticking\s+clock|stalker)\b", "cinematic", 0, "minor"),
    (r"\b(?:gym|workout|work\s+out|fitness|cardio|spin\s+class|hiit|training\s+montage)\b", "house", 1, None),
    (r"\b(?:bazaar|souk|souq|marrakech|marrakesh|casablanca|cairo|sahara|oasis|arabian|bedouin)\b|"
     r"\b(?:desert|camel)\s+(?:caravan|dunes?|night|sands?|city|town|wind|at\s+dusk)\b|\bcaravan\s+at\s+dusk\b|"
     r"\b(?:arab|arabic|moroccan|egyptian|middle\s+eastern|persian|spice)\s+market\b|\bmarket\s+in\s+(?:marrakech|"
     r"marrakesh|cairo|casablanca|istanbul|fez|tunis|damascus|baghdad)\b", "arabic", 0, None),
    (r"\b(?:ballroom|grand\s+ball|masquerade\s+ball|ball\s+gown)\b", "waltz", 0, None),
    (r"\b(?:wedding\s+processional|church\s+wedding|bridal\s+(?:march|entrance)|processional|recessional|cathedral)\b",
     "hymn", 0, "major"),
    (r"\b(?:carnival\s+in\s+rio|rio\s+carnival|carnaval|batucada)\b", "samba", 0, None),
    (r"\b(?:western|old|wild\s+west|cowboy)\s+saloon\b|\bsaloon\s+(?:piano|door|doors|brawl|bar)\b|\bwild\s+west\b|"
     r"\bold\s+west\b", "ragtime", 0, None),
    (r"\b(?:cowboy|cowboys|frontier|ranch|prairie|rodeo)\b", "country", 0, None),
    (r"\b(?:medieval|tavern|renaissance\s+fair|ren\s+faire|bard|minstrel)\b", "celtic", 0, None),
    (r"\b(?:detective|film\s+noir|noir|private\s+eye|spy|espionage|heist|sneaky)\b", "cool jazz", 0, "minor"),
    (r"\b(?:stadium|arena\s+anthem|sports\s+anthem|stomp[\s-]+clap)\b", "rock", 1, "major"),
    (r"\b(?:heartbreak|broken\s+heart|heartbroken)\b", "pop", -1, "minor"),
    (r"\b(?:prom|slow\s+dance)\b", "pop", -1, None),
    (r"\b(?:cafe|coffee\s*shop|coffeehouse|rainy\s+day|rain\s+on|fireplace|cozy|sunday\s+morning|study\s+session|"
     r"studying)\b", "lofi", 0, None),
    (r"\b(?:underwater|(?<!man\s)caves?|deep\s+space|outer\s+space|space\s+exploration|cosmos|galaxy|nebula|starfield|"
     r"calm\s+lake|lake\s+at\s+dawn|misty)\b", "ambient", -1, None)))


#: scenes that set pace and mode beside a style too ("chiptune boss battle", "synthwave car chase")
_STRONG_SCENE_RE = re.compile(r"boss|chase|battle|fight\s+scene|final|combat|pursuit|heartbreak|horror|halloween")


def _read_scene(spec: PromptSpec) -> None:
    """A scene (:data:`_SCENE_STYLES`): its pace and mode where the prompt says none, and its style
    where it names none (a chase's pace a film cue's fast end and beyond it; "boss fight" in a
    chiptune is fast and minor)."""
    for rx, style, pace, mode in _SCENE_STYLES:
        if (m := rx.search(spec.text)) and style in G.GENRES and style != spec.refused:
            if spec.genre is None:
                spec.scene = (style, m.group(0))
            elif not _STRONG_SCENE_RE.search(m.group(0)):
                return                                 # beside a style only a scene of its own sets pace and mode
            if spec.pace == 0 and pace:
                spec.pace = pace
                if pace > 0 and style == "cinematic" and not _NOT_FAST_RE.search(spec.text):
                    spec.tempo_factor *= 1.25          # a chase or a battle runs past a cue's usual pace
            if spec.mode is None and mode:
                spec.mode = mode
                spec.mode_is_mood = True
            return


def _read_moods(spec: PromptSpec, words: set[str], style_words: frozenset[str] | set[str] = frozenset()) -> None:
    """Mood words (mode when none is named, tempo factor), tempo and swing words. A mood word in
    the style's own name is the style's, not a mood: a power ballad is not slowed again as a ballad
    (a mood word in another of its names still colours it: "dark ambient", "uplifting trance")."""
    for w, (mmode, tf, _) in G.MOODS.items():
        if w in words and w not in style_words and not (w == "ballad" and ("ballad" in (spec.genre or "")
                                                                       or _NO_BALLAD_RE.search(spec.text))):
            spec.moods.append(w)
            spec.tempo_factor *= tf
            if mmode and spec.mode is None:
                spec.mode = mmode
                spec.mode_is_mood = True
    if not spec.dance and set(spec.moods) & {"sad", "lonely", "melancholic", "melancholy", "tragic", "mournful"}:
        spec.dance = "ballad"                     # a sad jazz tune is a ballad's pace (only jazz's styles have one)
    if words & {"slow", "slower", "slowly", "lazy", "downtempo", "lento", "lenta", "langsam", "adagio",
                "largo", "langzaam", "hidas", "hidasta", "pelan", "lente", "lentement", "lentamente", "despacio",
                "langsamer", "langsame", "langsames", "langsamen", "powolny", "powolna", "powolne", "powoli",
                "wolno", "wolny", "yavas", "agir", "lenti"} and not _NOT_SLOW_RE.search(spec.text):
        spec.tempo_factor *= 0.92
        spec.pace = -1
    if words & {"fast", "uptempo", "up-tempo", "faster", "driving", "frantic", "quick", "rapido", "rapida",
                "schnell", "vite", "presto", "allegro", "rapide", "snel", "nopea", "cepat", "breakneck",
                "schneller", "schnelle", "schnelles", "szybko", "szybki", "szybka", "szybkie", "hizli", "veloce",
                "vivace", "rapidamente", "rapidos", "rapidas", "extremely fast", "speedy"} and not _NOT_FAST_RE.search(spec.text):
        spec.tempo_factor *= 1.06
        spec.pace = 1
    if words & {"swing", "swung", "shuffle", "swingy"} and not _NO_SWING_RE.search(spec.text):
        spec.swing = 0.28
    if "straight" in words or _NO_SWING_RE.search(spec.text):
        spec.swing = 0.0


#: "not too fast", "not so slow": the pace a musician leaves in the middle of the style's range
_NOT_FAST_RE = re.compile(r"\bnot\s+(?:too|so|that|very|overly|super|really)?\s*(?:fast|quick)\b")
_NOT_SLOW_RE = re.compile(r"\bnot\s+(?:too|so|that|very|overly|super|really)?\s*slow\b")
#: "no swing", "w/ no swing", "without any swing", "zero swing", "unswung": straight eighths
_NO_SWING_RE = re.compile(r"\b(?:no|without(?:\s+any)?|zero|not)\s+(?:the\s+)?swing(?:ing)?\b|\bunswung\b")


_A_CAPPELLA_RE = re.compile(r"\b(a ?cc?app?ella|madrigals?|madrigale|madrigali|unaccompanied (?:choir|chorus|voices|vocals|singing|singers)|"
                            r"voices only|voices alone|no (?:instruments|instrumentation)(?: at all)?|"
                            r"without (?:any )?instruments)\b")


#: no band behind the named instruments: "no band just raw", "without a backing band"
_NO_BAND_RE = re.compile(r"\b(?:no|without(?:\s+a|\s+any)?)\s+(?:backing\s+)?band\b(?!\s*(?:name|names|logo|merch))")
#: a duo of the two instruments named: "a duo for cello and piano", "guzheng and erhu duet"
_DUO_RE = re.compile(r"\b(?:duo|duos|duet|duets|dueto|duetto|duett)\b")
#: what ends a phrase saying who plays ("…, Db, slow", "… only." "… alone — ")
_PHRASE_END = r"\s*(?=$|[,.;!:)\u2014\u2013]|\s-\s)"


def _alone(text: str, w: str) -> bool:
    """Whether ``w`` is said to play alone for the whole piece (:func:`_alone_match`)."""
    return _alone_match(text, w) is not None


def _alone_match(text: str, w: str) -> re.Match | None:
    """The phrase that says ``w`` plays alone for the whole piece: "solo piano only", "grand piano
    alone", "just tenor sax and piano", "nothing else just the piano" — not at one moment ("piano
    alone for the intro", "starts with piano alone, then the choir", "strings only in the
    chorus", "the guitar only comes in at the chorus"), nor "not only strings but …"."""
    iw = re.escape(w) + "s?"
    for m in re.finditer(rf"\b(?:solo\s+)?{iw}\s+(?:only|alone)" + _PHRASE_END + "|"
                         rf"(?<!\bnot )(?<!\bno )(?<!\bnon )(?<!\bnao )(?<!\bpas )(?<!\bnicht )"
                         rf"\b(?:only|just|juste|seulement|uniquement|nur|solamente|soltanto|apenas|tylko|alleen)\s+"
                         rf"(?:an?\s+|the\s+|le\s+|la\s+|les\s+|l'|el\s+|das\s+|die\s+|den\s+|il\s+|lo\s+|o\s+)?{iw}"
                         rf"(?:\s+(?:and|&|\+)\s+(?:an?\s+|the\s+)?[a-z][a-z' -]*?)?" + _PHRASE_END
                         + ("" if w in _SECTION_WORDS or w + "s" in _SECTION_WORDS else "|"
                            rf"(?<![\w-]){iw}(?:\s+(?:and|&|\+)\s+(?:an?\s+|the\s+)?[a-z][a-z' -]*?)?\s*[,.;:]?\s*"
                            rf"nothing\s+(?:else|more)\b"), text):
        if re.search(r"\b(?:starts?|begins?|opens?|opening|intro|first)\b[^,.;]*$", text[:m.start()]) \
                or re.match(r"\s*[,;]?\s*(?:then|before|until|till|and then)\b", text[m.end():]):
            continue
        return m
    return None


#: "nothing else", "no other instruments": the one said to play alone is all there is
_NOTHING_ELSE_RE = re.compile(r"\bnothing\s+(?:else|more)\b|\bno\s+other\s+(?:instruments?|players?|parts?)\b")
#: what says a band plays beside a "solo piano": the band, its rhythm section, a backing
_BAND_BESIDE_RE = re.compile(r"\b(?:band|rhythm section|backing|backed|accompanied|accompaniment|trio|quartet|"
                             r"quintet|sextet|orchestra|ensemble|combo|drums?|beat|groove|bass|bassline)\b")


#: "solo X" is a piece for X alone beside a style only for an instrument that plays its own chords
#: (piano, electric piano, harpsichord, the acoustic and jazz guitars, harp) in a style where a
#: player alone is a form of its own — in rock, metal, the blues or a beat style a "solo guitar"
#: or "solo piano" is a solo in the band, as a "solo trumpet" or "solo violin" is in any style
_SOLO_PIECE_PROGRAMS = frozenset((*range(0, 8), 24, 25, 26, 46))
_SOLO_PIECE_FAMILIES = frozenset(("jazz", "classical", "folk", "latin", "celtic"))


def _solo_before(spec: PromptSpec, w: str) -> bool:
    """Whether ``w`` is "solo ``w``" as a piece's forces ("solo piano, jazz ballad", "a jazz ballad
    for solo guitar", "solo rhodes piece") and nothing else plays: the one instrument named, no
    drum word, no band — not "solo sax over the band" nor "a solo piano intro, then the band"."""
    if len(set(spec.instruments) - {w}) or spec.drum_words or _BAND_BESIDE_RE.search(spec.text) \
            or INSTRUMENT_WORDS.get(w, (None,))[0] not in _SOLO_PIECE_PROGRAMS \
            or spec.genre in G.GENRES and (G.GENRES[spec.genre].family not in _SOLO_PIECE_FAMILIES
                                           or spec.genre in ("cinematic", "marching band", "military march")):
        return False
    iw = re.escape(w) + "s?"
    m = re.search(rf"(?<!\bwith )(?<!\bwith a )(?<!\bwith an )\bsolo\s+{iw}(?:\s+(?:piece|pieces|version|arrangement|performance|rendition|tune|"
                  rf"number|ballad))?" + _PHRASE_END, spec.text)
    # not "a solo piano intro, then …": the phrase it stands in (to the next comma or stop) tells
    return m is not None and not re.search(r"\b(?:intro|outro|then|until|break|bridge|starts?|opens?|featuring)\b",
                                           re.split(r"[,.;:!?]", spec.text[m.end():], 1)[0] + " "
                                           + re.split(r"[,.;:!?]", spec.text[:m.start()])[-1])


def _style_instrument(phrase: str) -> str | None:
    """The instrument a style's phrase ends with ("flamenco guitar": guitar, "ragtime piano": piano)."""
    words = phrase.split()
    return next((t for t in (" ".join(words[-2:]), words[-1]) if len(words) > 1 and t in G.INSTRUMENTS
                 and t != phrase), None)


#: one item of a list of parts said to be all that plays: a role ("drums", "bass"), a drum or a kit
#: lane ("kick", "hats", "congas"), an instrument
_ONLY_ITEM = "(?:" + "|".join(re.escape(w) for w in sorted(
    {*_ROLE_WORDS, *_FOREIGN_ROLES, *G.DRUM_WORDS, *_NEG_LANES, *INSTRUMENT_WORDS, "hats", "kick", "kicks", "snare", "snares"},
    key=len, reverse=True)) + ")"
_ONLY_LIST = (_ONLY_ITEM + r"(?:\s*(?:,|and|&|\+|und|y|e|et|i|n)?\s*(?:the\s+|a\s+|an\s+|some\s+)?" + _ONLY_ITEM + ")*")
_ONLY_WORDS = r"(?:just|only|nur|tylko|solamente|seulement|juste|apenas|soltanto|purely)"
#: "drums only", "bass and drums only", "just kick, hats and bass", "kick, snare, hats. nothing else",
#: "nur Schlagzeug und Bass" — with a style named or not: the parts listed are all that plays
_ONLY_ROLES_RE = re.compile(r"(?<![\w-])(?P<a>" + _ONLY_LIST + r")\s+(?:only|alone)" + _PHRASE_END + "|"
                            r"(?<!\bnot )(?<!\bno )\b" + _ONLY_WORDS + r"\s+(?:the\s+|a\s+|some\s+)?(?P<b>" + _ONLY_LIST + ")"
                            + _PHRASE_END + r"|(?<![\w-])(?P<c>" + _ONLY_LIST + r")\s*[.,;:]?\s*(?:~?\d{2,3}\s*(?:bpm)?\s*[.,;:]\s*)?"
                            r"(?:and\s+)?nothing\s+(?:else|more)\b")


#: words for a section or a family of instruments: a list with one of them is the style's own parts
#: of that kind ("horns and drums only, brass band", "synths and drums only, synthwave")
_SECTION_WORDS = frozenset(("horns", "horn section", "brass", "brass section", "strings", "string section", "synths",
                            "synth", "synthesizers", "keys", "keyboards", "winds", "woodwinds", "guitars", "drum machine",
                            "analog synths", "analogue synths", "voices", "vocals", "choir"))
#: a kit's own words (not a hand drum's): "kick, snare, hats only" is the kit's
_KIT_PIECE_RE = re.compile(r"kick|snare|hat|toms?\b|cymbal|crash|ride|rim|kit|808|909|break|brush|drum")


def _only_roles(spec: PromptSpec) -> tuple[set[str], bool] | None:
    """The roles of the parts a prompt says are all that plays ("drums only, 170 bpm jungle",
    "techno … no melody, just kick hats and bass"), when one of them is a role or a drum word
    (an instrument alone is :func:`_alone_match`'s) and not at one moment ("drums only in the
    intro", "starts with just bass and drums"), and whether its drums are hand percussion alone
    ("shakers and congas only": a percussionist, no kit); ``None`` when it says none."""
    for m in _ONLY_ROLES_RE.finditer(spec.text):
        said = next(g for g in m.group("a", "b", "c") if g)
        items = re.findall(_ONLY_ITEM, said)
        if set(items) & _SECTION_WORDS or set(items) & {"beat", "beats"} \
                or spec.genre == "drum and bass" and re.fullmatch(r"drums?\s*(?:and|&|n|'n')\s*bass", said):
            continue                                      # "horns and drums only": the style's own brass; "beat
                                                          # only" a whole beat; "drum & bass only" the style
        roles, hand = set(), True
        for w in items:
            if w in ("808", "808s", "808 bass"):
                roles |= {"drums", "bass"}                # a trap beat's 808s: its kit and its bass
                hand = False
                continue
            if w in _ROLE_WORDS or w in _FOREIGN_ROLES:
                roles.add(_ROLE_WORDS.get(w) or _FOREIGN_ROLES[w])
            elif w in G.DRUM_WORDS or w in _NEG_LANES or w in ("hats", "kick", "kicks", "snare", "snares"):
                roles.add("drums")
                hand = hand and not _KIT_PIECE_RE.search(w)
                continue
            hand = hand and w not in _ROLE_WORDS and w not in _FOREIGN_ROLES
        if not roles or re.search(r"\b(?:starts?|begins?|opens?|opening|intro|first)\b[^,.;]*$", spec.text[:m.start()]) \
                or m.group("b") and (neg := re.search(r"\b(?:no|without)\s+([^,.;]*?)[,;]?\s*$", spec.text[:m.start()])) \
                and _lane_item(neg.group(1)) \
                or re.match(r"\s*[,;]?\s*(?:then|before|until|till|and then)\b|\s+(?:in|at|for|during|until)\s+(?:the\s+)?"
                            r"(?:intro|outro|break|breakdown|bridge|verses?|start|beginning|first)\b", spec.text[m.end():]):
            continue
        return roles, hand and roles == {"drums"}
    return None


#: instruments whose "X solo" beside a style is a piece for X alone (a keyboard's, a guitar's, a
#: harp's, a bellows' both hands: "harpsichord solo, baroque", "tango, bandoneón solo"); a "sax solo"
#: in jazz or a "guitar solo" in rock is the band's
_BOTH_HANDS_SOLO = frozenset((*range(0, 9), *range(16, 24), 24, 25, 46))
#: where any instrument's "solo" beside a style is the piece: an alap, a handpan's meditation (a
#: recital's keyboard or harp, a tango's bandoneón, a taqsim and a celtic harp too: _solo_after)
_ANY_SOLO_FAMILIES = frozenset(("indian", "ambient"))


def _solo_after(spec: PromptSpec) -> bool:
    """Whether the one instrument or hand drum named is said to play solo ("djembe solo", "bass
    clarinet solo", "oud taqsim, solo", "harpsichord solo, baroque"): nothing else named, no band;
    beside a style only an instrument of :data:`_BOTH_HANDS_SOLO`."""
    named = set(spec.instruments) | set(spec.drum_words)
    if len(named) != 1 or (spec.instruments and spec.drum_words) or _BAND_BESIDE_RE.search(
            _INSTR_RX.sub(" ", _DRUM_RX.sub(" ", spec.text))):
        return False
    w = next(iter(named))
    if w in spec.drum_words and _KIT_PIECE_RE.search(w):
        return False                              # a drum solo on the kit is the kit's (its own rules)
    fam = G.GENRES[spec.genre].family if spec.genre in G.GENRES else None
    prog = INSTRUMENT_WORDS[w][0] if w in spec.instruments else None
    if fam is not None and not (fam in _ANY_SOLO_FAMILIES
                                or fam == "classical" and (prog is None or prog in _BOTH_HANDS_SOLO)
                                or spec.genre in ("tango", "flamenco") and prog in _BOTH_HANDS_SOLO
                                or fam == "arabic" and re.search(r"\b(?:taqsim|taksim|taqasim|taksims)\b", spec.text)
                                or fam == "celtic" and prog == 46):
        return False
    if re.search(rf"(?<![\w-]){re.escape(w)}s?\s+(?:sola|seule?|allein|alleine|da\s+sola?)\b", spec.text):
        return True                               # "guitarra sola", "Gitarre allein": alone, in so many words
    if w in spec.instruments and spec.genre is not None and re.search(r"guit|gitar|chitarr", w):
        return False                              # a guitar solo beside a style is the band's (reggaeton, folk rock)
    return bool(re.search(rf"(?<![\w-]){re.escape(w)}s?\s+solo\b"
                          rf"(?!\s+(?:over|with|on|in|section|spot|break))",
                          spec.text) or re.search(r"(?:^|[,.;:])\s*solo\s*(?:$|[,.;:])", spec.text))


#: the concert hall's instruments (GM programs): the bowed strings, the harp, the orchestra's
#: woodwinds and horn, the piano, harpsichord, celesta and church organ
_CONCERT = frozenset((0, 1, 6, 8, 16, 19, 40, 41, 42, 43, 46, 60, 68, 69, 70, 71, 72, 73, 74))
#: … of which these sing a chamber piece's line (a piano and a harp together name no chamber music)
_CHAMBER_VOICES = frozenset((40, 41, 42, 43, 60, 68, 69, 70, 71, 72, 73, 74))
#: what a chamber piece is not: a beat, a band, a screen's cue or a style's word for its players
_NOT_CHAMBER_RE = re.compile(r"\b(?:beats?|loops?|drums?|percussion|bass|bassline|synths?|band|groove|rap|edm|808s?|"
                             r"orchestra\w*|orchestral|trailer|game|vlog|podcast|jazz\w*|folk|celtic|irish|fiddle\w*|"
                             r"epic|tense|scary|horror|suspense\w*|ominous|aggressive|hype|energetic|driving|dance|club)\b")


def _chamber(spec: PromptSpec) -> bool:
    """Whether a prompt names two to four concert instruments and no style, drum, beat or band
    ("clarinet and piano", "something sad and slow for cello and piano", "flute and harp",
    "oboe, bassoon and harpsichord"): a chamber piece for them alone, as a recital would play it."""
    named = list(dict.fromkeys(spec.instruments))
    if spec.genre is not None or spec.drum_words or not 2 <= len(named) <= 4:
        return False
    progs = [INSTRUMENT_WORDS[w][0] for w in named]
    if not all(p in _CONCERT or w == "classical guitar" or p in (24, 25) and len(named) == 2 and set(progs) & _CHAMBER_VOICES
               for w, p in zip(named, progs)) \
            or not set(progs) & _CHAMBER_VOICES:
        return False
    rest = _INSTR_RX.sub(" ", spec.text)
    return not _NOT_CHAMBER_RE.search(rest)


#: the concert styles where "for X" names the players ("a gigue for harpsichord", "a mazurka for
#: piano", "fugue in G minor for church organ", "largo for cello and organ"); not a film score's,
#: a parade's or a cortège's band, whose "for" is rarely the whole of it
_FOR_PLAYERS_STYLES = frozenset(("classical", "baroque", "minuet", "romantic piano", "waltz", "lullaby"))
_FOR_PLAYERS_RE = re.compile(r"\b(?:for|fur|pour|para|per)\s+(?:(?:an?|the|solo|unaccompanied|two|2)\s+)*(?P<m>" + _ONLY_LIST
                             + r")\s+(?:in|at|with\s+no|without)\b|\b(?:for|fur|pour|para|per)\s+(?:(?:an?|the|solo|unaccompanied|two|2)\s+)*(?P<l>"
                             + _ONLY_LIST + ")" + _PHRASE_END)


def _concert_forces(spec: PromptSpec) -> bool:
    """Whether a concert style's prompt names its players and no one else: "solo violin partita",
    "a sarabande for solo cello", "solo trumpet fanfare", "unaccompanied flute", or "for" and the
    instruments ("a gigue for harpsichord", "largo for cello and organ") — with no band,
    orchestra or accompaniment beside them."""
    g = G.GENRES.get(spec.genre or "")
    named = list(dict.fromkeys(spec.instruments))
    if g is None or g.family != "classical" or g.name == "cinematic" or spec.drum_words or not 1 <= len(named) <= 4 \
            or re.search(r"\b(?:orchestra\w*|ensemble|band|strings|string\s+section|choir|chorus)\b", spec.text) \
            or any(INSTRUMENT_WORDS[w][0] in (52, 53, 54) for w in named) \
            or _BAND_BESIDE_RE.search(_INSTR_RX.sub(" ", spec.text)) or re.search(r"\bconcert[oi]\b", spec.text):
        return False
    if len(named) == 1:
        iw = re.escape(named[0]) + "s?"
        if re.search(rf"(?<!\bwith )(?<!\bwith a )(?<!\bwith an )\b(?:solo|unaccompanied)\s+{iw}\b|"
                     rf"(?<!\bwith )(?<!\bwith a )(?<!\bwith an )(?<!\ba )(?<!\ban )\b{iw}\s+solo\b"
                     rf"(?!\s+(?:over|with|in|at|section|break|spot|part|passage|halfway|near|towards?)\b)",
                     spec.text):
            return True
    if spec.genre not in _FOR_PLAYERS_STYLES:
        return False
    for m in _FOR_PLAYERS_RE.finditer(spec.text):
        items = set(re.findall(_ONLY_ITEM, m.group("l") or m.group("m")))
        if set(named) <= items | {w[:-1] for w in items if w.endswith("s")}:
            return True
    return False


def _read_solo(spec: PromptSpec, words: set[str], phrase: str | None = None) -> None:
    """"solo piano", "drums only", "just bass and drums" (only when no genre is named)."""
    # a role word inside an instrument's name is no role asked for ("bass clarinet", "lead guitar")
    words = set(re.findall(r"[a-z]+", _INSTR_RX.sub(lambda m: " " if " " in m.group(0) else m.group(0), spec.text))) \
        if re.search(r"\b(solo|only|alone|just)\b", spec.text) else words
    solo_after = _solo_after(spec)
    if solo_after and spec.drum_words:
        spec.only_roles.add("drums")
        spec.no_roles.add("drums")                # a hand drum alone: the percussionist, no kit
    if (only := _only_roles(spec)) is not None:
        spec.only_roles |= only[0] - spec.no_roles
        if only[1]:
            spec.no_roles.add("drums")           # hand percussion alone: the percussionist, no kit
    solo = bool(re.search(r"\b(solo|only|alone|just)\b", spec.text)) and spec.genre is None
    # with a style named, only an instrument said to play alone: "solo piano only", "piano only",
    # "just the piano" (a boogie-woogie for piano alone) — not a "flute solo" in a band
    if phrase and (last := _style_instrument(phrase)) and last not in spec.instruments \
            and (_alone(spec.text, phrase) or _solo_before(spec, phrase)):
        spec.instruments.append(last)            # "flamenco guitar alone": the style's guitar, alone
    spans = [m for w in spec.instruments if (m := _alone_match(spec.text, w))]
    alone = bool(spans)
    if alone and _NOTHING_ELSE_RE.search(spec.text):
        # "… bolts on the strings so it sounds half gamelan, half drum … just the prepared piano,
        # nothing else": what the words before it name is how it sounds, not who else plays — the
        # "just …" phrase's instruments play, and whatever is named after it ("just piano, with a
        # cello joining later, nothing else")
        start = min(m.start() for m in spans)
        # the whole list before "nothing else" ("flute, oboe, clarinet … nothing else"), not its last items
        start = min([start] + [m.start("c") for m in _ONLY_ROLES_RE.finditer(spec.text)
                               if m.group("c") and m.start("c") < start <= m.end("c")])

        def kept(w: str) -> bool:
            ats = [at.start() for at in re.finditer(rf"(?<![\w-]){re.escape(w)}(?:s|es)?(?![\w-])", spec.text)]
            return bool(ats) and max(ats) >= start     # (a word read from another: "gamelan" is bells)
        spec.instruments = [w for w in spec.instruments if kept(w)]
        spec.drum_words = [w for w in spec.drum_words if kept(w)]
        words = set(re.findall(r"[a-z]+", spec.text[start:]))
    spec.chamber = _chamber(spec)
    solo = solo or _concert_forces(spec) or bool(alone) or solo_after or any(_solo_before(spec, w) for w in spec.instruments) \
        or bool(_NO_BAND_RE.search(spec.text)) or (len(set(spec.instruments)) == 2 and bool(_DUO_RE.search(spec.text))) \
        or spec.chamber
    spec.solo = solo and bool(spec.instruments)
    if solo:
        # (not "no drums … just piano"; "just a chill beat" is a whole beat, not its drums alone)
        spec.only_roles |= {r for w, r in _ROLE_WORDS.items() if w in words and w not in ("beat", "beats")} - spec.no_roles


_LONG_INTRO_RE = re.compile(r"\b(long|slow|extended|big|gradual)\s+(intro|build|build-up|buildup|opening)\b|\bbuilds?\s+up\s+slowly\b")
_NO_INTRO_RE = re.compile(r"\b(no intro|straight in|straight into it|from the first bar|right away|immediately)\b")


def _read_intro(spec: PromptSpec) -> None:
    """How long the intro is when the prompt says: a long build is a whole 8-bar section, no
    intro none (otherwise the style's, two bars for most)."""
    if _LONG_INTRO_RE.search(spec.text):
        spec.intro_bars = 8
    elif _NO_INTRO_RE.search(spec.text):
        spec.intro_bars = 0
