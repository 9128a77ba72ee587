"""styles.classical: the concert hall, the church, the nursery and the parade ground — classical
(string quartet), baroque, minuet, romantic piano, hymn, cinematic, waltz, lullaby, marching band,
funeral march and military march: the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.

The idioms, as a player of each would name them:

- **classical**: a string quartet — violin tune, second violin and viola sharing the inner
  voices, the cello's roots and fifths; no drums.
- **baroque**: a continuo band — harpsichord realising the chords (the downbeat struck and held),
  the cello's walking basso continuo in even eighths, a second violin's broken chords, a ripieno of strings that drops out and
  comes back (terraced dynamics: the sections alternate loud and soft); circle-of-fifths harmony.
- **minuet**: the courtly dance in 3/4 (quarter 104–132) — the bass on one, the harpsichord's
  chords on two and three, a violin tune.
- **romantic piano**: a nocturne — solo piano, the left hand's low root and rising broken chords
  in eighths, a singing right-hand melody; chromatic colour (the Neapolitan, secondary dominants).
- **hymn**: four-part harmony — church organ and pedal, a choir holding the chords, a soprano tune.
- **cinematic**: a film score / trailer — string ostinato, horns, violins, taiko and timpani, a
  3-3-2 drum pattern; its form is a trailer's (a quiet break, a snare build, a drop).
- **waltz**: Strauss in 3/4 — the bass's "oom" on one, the strings' "pah-pah" on two and three,
  a light orchestral kit (bass drum on one, triangle and cymbal).
- **lullaby**: 6/8, slow (dotted quarter 58–70), music box, celesta tune, harp rocking root–fifth,
  soft strings; no drums.
- **marching band**: 2/4 — snare cadences with rolls, bass drum on the beats, crash cymbals,
  tuba oom-pah, trombones on the off-beats, trumpets with glockenspiel doubling the tune an
  octave up; drums from the first bar.
- **funeral march**: slow (quarter 50–66) and minor — bass drum on one and three, a muffled
  drum's ruff into two and four, the tuba's held roots, trombones and horns holding the chords,
  a trumpet's slow tune, timpani.
- **military march**: a 6/8 quick march — field drum with rolls, bass drum on the dotted
  quarters, trumpets and trombones over a tuba, a piccolo.

This module also adds (never overwriting) the instrument words ``sousaphone``, ``bugle``,
``cornet``, ``euphonium``, ``flugelhorn`` and the drum words ``snare drum``, ``snare drums``, ``bass drum``.
"""
from __future__ import annotations

from engine.compose import genres as G
from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

CL = "classical"

# words this family brings (setdefault: another file's entry wins)
for _w, _v in {"sousaphone": (58, B, ""), "bugle": (56, L, ""), "cornet": (56, L, ""), "euphonium": (57, L, ""),
               "flugelhorn": (56, L, "")}.items():
    G.INSTRUMENTS.setdefault(_w, _v)
for _w, _v in {"snare drum": (None, {"snare": "....x.......x..."}, None),
               "snare drums": (None, {"snare": "....x.......x..."}, None),
               "bass drum": (None, {"kick": "X...X...X...X..."}, None)}.items():
    G.DRUM_WORDS.setdefault(_w, _v)

# --- the concert hall -------------------------------------------------------------------------------
_g(name="classical", aliases=("classical", "quartetto d'archi", "quartetto d archi", "quartetto di archi", "adagietto", "late romantic", "late-romantic", "mahler", "neoclassico", "neoclassica", "modern classical", "post-classical", "postclassical", "neoclassical", "neo-classical", "neoclassicism", "scherzo", "scherzi", "string quartet", "quartet", "minimalism", "minimalist", "chamber",
                              "chamber music",
                              "classical music", "classical period", "viennese classical", "sonata", "symphony",
                              "concerto", "opera", "mozart", "haydn", "beethoven", "schubert", "string trio", "pavane", "pavan", "pavana", "ravel", "faure", "tone poem", "symphonic poem"),
   bpm=(72, 116), kit=0, fill="none", bass="cello", chords="quartet", form="calm", humanize_ms=10,
   vel_var=10, parts=(_p("violin", L, 40), _p("violin 2", C, 40, pan=-0.45, octave=1),
                      _p("viola", C, 41, pan=0.3), _p("cello", B, 42)),
   progressions=CLASSICAL, modes=("major", "major", "minor"), lead_density=0.5, reverb=0.4, grooves=(),
   intro_drums="none", family=CL, tone=-0.1)

_g(name="baroque", aliases=("baroque", "renaissance", "early music", "consort music", "renaissance consort", "pavane consort", "gavotte", "gavottes", "bourree", "bourrees", "gigue", "courante", "allemande",
                            "baroque music", "baroque period", "bach", "vivaldi", "handel",
                            "telemann", "corelli", "pachelbel", "fugue", "toccata", "partita", "passacaglia",
                            "chaconne", "concerto grosso", "brandenburg", "basso continuo", "continuo", "canon",
                            "harpsichord music", "four seasons", "barock", "barroco", "sarabande", "sarabanda", "zarabanda"),
   bpm=(96, 126), kit=0, fill="none", bass="walking", chords="block", form="song", humanize_ms=5, vel_var=6,
   parts=(_p("violin", L, 40), _p("harpsichord", C, 6, pan=-0.3), _p("violin 2", A, 40, "arp8", pan=0.45),
          _p("strings", PD, 48, level=0.32), _p("cello", B, 42)),
   # the basso continuo: even eighths, arpeggios and octave leaps, an approach into the next chord
   bass_pats=("R---3-5-8-R-3-A-", "R-8-5-8-3-8-5-A-", "R-l-R-3-R-8-5-A-",
              "R---5-8-5-A-", "R-8-5-3-R-A-"),
   # the harpsichord's realisation: the bar's downbeat struck hard and held, the afterbeats lighter
   comp_pats=("X-------x...x...", "X-..x.x.....x...", "X-------x-..x.x.",
              "X---o---o---", "X-..o---o-.."),      # in three a chord on every beat, the first leaned on
   progressions={"major": ("I IV viio iii vi ii V I", "I V vi iii IV I IV V", "I ii V I", "I vi ii V",
                           "I IV V I"),
                 "minor": ("i iv VII III VI iio V i", "i VII VI V", "i iv V i", "i VI iio V",
                           "i V i iv VII III iio V")},
   modes=("major", "minor"), lead_density=0.62, reverb=0.35, grooves=(), intro_drums="none", family=CL,
   tone=0.25)

_g(name="minuet", aliases=("minuet", "menuet", "minuetto", "courtly dance", "court dance"),
   bpm=(104, 132), meter=(3, 4), kit=0, fill="none", bass="cello", chords="block", form="calm", humanize_ms=6,
   vel_var=6, parts=(_p("violin", L, 40), _p("harpsichord", C, 6, pan=-0.3), _p("viola", PD, 41, "pad", level=0.3),
                     _p("cello", B, 42)),
   # the bass on one (and three), the harpsichord's chords on two and three: the dance's strong one
   bass_pats=("R-------8---", "R-------5---", "R-----------"),
   comp_pats=("....x...x...", "X-------x...", "....x-..x-.."),
   progressions=CLASSICAL, modes=("major", "major", "minor"), lead_density=0.45, reverb=0.35, grooves=(),
   intro_drums="none", family=CL, tone=0.15)

_g(name="romantic piano", aliases=("romantic piano", "klavierstuck", "klavierstucke", "piano piece", "pianostuck", "ludovico einaudi", "einaudi", "yiruma", "piano sonatas", "sonata for piano", "classical piano sonata", "piano sonata", "solo piano piece", "piano scherzo", "solo piano scherzo", "furniture music", "musique d'ameublement", "polonaise", "polacca", "barcarolle", "barcarola", "barcarole", "barkarole",
                                   "gondolier song", "nocturne", "chopin", "liszt", "schumann",
                                   "rachmaninoff", "romantic era", "romantic period", "impromptu",
                                   "etude", "debussy", "satie", "gymnopedie",
                                   "impressionist", "clair de lune", "piano nocturne", "piano etude"),
   bpm=(58, 80), kit=0, fill="none", bass="long", chords="block", arp="harp", form="calm", humanize_ms=14,
   vel_var=12, parts=(_p("piano", L, 0, "melody"), _p("left hand", A, 0, "harp", octave=-1),
                      _p("piano bass", B, 0)),
   bass_pats=("R-------------..", "R-------l-------", "R-------8-------"),
   progressions={"major": ("I vi ii V7", "I III7 vi IV", "I I7 IV iv", "I bVI IV V7", "I iii vi IV ii V I V"),
                 "minor": ("i iv V7 i", "i VI iio V7", "i iv bII V7", "i iv VII III VI iio V7 i")},
   modes=("minor", "major"), lead_density=0.42, reverb=0.45, grooves=(), intro_drums="none", family=CL,
   tone=-0.15)

_g(name="hymn", aliases=("hymn", "madrigal", "madrigals", "madrigale", "madrigali", "madrigal a cappella", "motet", "motets", "renaissance polyphony", "renaissance choir", "polyphonic choir", "sacred harp", "shape-note", "shape note", "fasola", "fuging tune", "choral", "chorale", "church music", "sacred music", "church choir",
                         "requiem", "gregorian", "gregorian chant", "psalm", "national anthem", "cathedral",
                         "choir music", "evensong", "christmas carol", "carol"),
   bpm=(60, 84), kit=0, fill="none", bass="long", chords="block", form="calm", humanize_ms=8, vel_var=6,
   parts=(_p("organ", C, 19, pan=-0.2), _p("choir", PD, 52), _p("soprano", L, 52), _p("pedal", B, 19)),
   bass_pats=("R-------R-------", "R-------5-------", "R---3---5---A---"),
   comp_pats=("x-------x-------", "x---x---x-------", "x---------------"),
   progressions={"major": ("I-IV I-V vi-IV I-V", "I IV-I ii-V I", "I-V vi-iii IV-I ii-V", "I vi IV-V I",
                           "IV I ii-V I"),
                 "minor": ("i iv-i VI-iio V", "i-iv i-V VI-iv V", "i VII-III iv-V i")},
   modes=("major", "major", "minor"), lead_density=0.35, reverb=0.75, grooves=(), intro_drums="none",
   family=CL, tone=-0.2)

# --- the screen --------------------------------------------------------------------------------------
_g(name="cinematic", aliases=("cinematic", "spaghetti western", "morricone", "ennio morricone", "western showdown", "giallo score", "giallo film", "giallo soundtrack", "poliziottesco", "epic", "orchestral", "film score", "film music", "movie score",
                              "movie soundtrack", "soundtrack", "trailer", "trailer music", "heroic", "horror",
                              "boss battle", "battle", "adventure", "fantasy", "hans zimmer", "zimmer",
                              "john williams", "epic orchestral", "score music",
                              # in French, German, Spanish, Italian, Portuguese
                              "musique de film", "filmmusik", "musica de pelicula", "musica de cine",
                              "colonna sonora", "trilha sonora", "banda sonora",
                              # a Chinese drama's score: an orchestra under the named erhu, guzheng, dizi
                              "wuxia", "xianxia", "guofeng", "chinese traditional", "traditional chinese",
                              "chinese folk", "guoyue"),
   bpm=(72, 104), kit=0, fill="toms", bass="long", chords="ostinato", form="edm", humanize_ms=6, vel_var=8,
   parts=(_p("drums", D, 0), _p("strings", C, 48, "ostinato"), _p("low strings", B, 42),
          _p("horns", PD, 60, "swell"), _p("violins", L, 48, "melody"), _p("taiko", P, 116),
          _p("timpani", P, 47)),
   # low strings: held with an approach, the 3-3-2 spiccato, driving eighths
   bass_pats=("R-------------A-", "R--R--R-R--R--R-", "R-R-R-R-R-R-R-8-"),
   progressions={"minor": ("i VI III VII", "i VI VII i", "i iv VI V", "i VII VI VII", "VI VII i i",
                           "i III VII iv", "i VI iv VII"),
                 "major": ("I V vi IV", "I iii IV iv", "I bVI bVII I", "vi IV I V", "I bVII IV I")},
   modes=("minor", "minor", "major"), reverb=0.55, lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "X.....X.X.......", "floor": "X..x..x.X..x..x.", "tom_lo": "..............xx",
             "crash+": "X..............."},
            {"kick": "X..x....X..x....", "floor": "....X.......X...", "tom_mid": "...o.......o....",
             "cymbal+": "X..............."},
            {"kick": "X...X...X...X...", "floor": "x.x.x.x.x.x.x.xx", "tom_lo": "X.......X.x.x...",
             "snare+": "....X.......X..."},
            # 5/8 (3+2) and 7/8 (2+2+3): the cue's odd meters, written for them
            {"kick": "X.....X...", "floor": "X.x.x.X.x.", "tom_lo": "......x..x"},
            {"kick": "X...X...X.....", "floor": "X.x.X.x.X.x.x.", "tom_lo": "............xx"}),
   family=CL, tone=0.05)

# --- the stage -----------------------------------------------------------------------------------
# a Broadway number: the pit's two-beat bass, brass stabs and fanfares, strings, the piano pumping
# quarters, a trumpet on the tune, timpani — bright and in major, driving
_g(name="show tune", family="pop",
   aliases=("show tune", "show tunes", "showtune", "showtunes", "broadway", "broadway musical", "musical theatre",
            "musical theater", "musical", "musicals", "pit orchestra", "west end", "cabaret", "vaudeville",
            "opening number", "showstopper", "show stopper", "sondheim", "west side story", "chorus line"),
   bpm=(112, 144), kit=0, fill="snare", bass="pats", chords="piano8", form="song", humanize_ms=5, vel_var=10,
   tone=0.3, reverb=0.32, lead_density=0.55, intro_drums="all",
   parts=(_p("drums", D, 0), _p("upright bass", B, 32), _p("piano", C, 0), _p("brass", C, 61, "stab", pan=0.4),
          _p("strings", PD, 48), _p("trumpet", L, 56, "melody"), _p("timpani", P, 47)),
   progressions={"major": ("I vi ii V7", "I IV I V7", "I I6 ii7 V7", "I III7 IV iv", "IV V7 I vi"),
                 "minor": ("i iv V7 i", "i VI iv V7", "i i7 iv V7")},
   modes=("major", "major", "minor"),
   bass_pats=("R.......5.......", "R...5...R...5...", "R.......5.....A."),
   # the pit drummer: a kick on one and three under a ride's skip and the snare's pickups; a
   # charleston kick with the tambourine; a vamp's woodblock eighths over a four-square kick
   grooves=({"kick": "X.......X.......", "snare": "....X..x....X.x.", "ride": "x...x.x.x...x.x.",
             "crash+": "X..............."},
            {"kick": "X.....X.X.......", "snare": "....X.......X..x", "tamb": "x...x...x...x.x.",
             "crash+": "X..............."},
            {"kick": "X...X...X...X...", "rim": "....x.......x...", "woodblock": "x.x.x.x.x.x.x.x."}))

# --- the ballroom and the nursery ------------------------------------------------------------------------
_g(name="waltz", aliases=("waltz", "walzer", "wiener walzer", "walz", "waltzz", "valtz", "wals", "valse", "vals", "mazurka", "viennese waltz", "strauss", "blue danube",
                          "ballroom waltz", "waltzes"),
   bpm=(138, 176), meter=(3, 4), kit=48, fill="none", bass="waltz", chords="waltz", form="calm", humanize_ms=8,
   vel_var=8, parts=(_p("drums", D, 48, level=0.55), _p("double bass", B, 32), _p("strings", C, 48),
                     _p("horns", PD, 60, "pad", level=0.3), _p("violins", L, 40)),
   # the oom on one (the root, the fifth below the next bar), a cello answer on three
   bass_pats=("R-..........l-..........", "R-..........5-..........", "R-......5-..R-......l-.."),
   # the pah-pah on two and three (short, or the third held into the next bar)
   comp_pats=("....x-..x-..", "....x...x...", "....x-..x---"),
   progressions={"major": ("I I V7 V7 V7 V7 I I", "I IV V7 I", "I vi ii V7", "I I ii V7"),
                 "minor": ("i i V7 V7 V7 V7 i i", "i iv V7 i", "i VI iio V7")},
   modes=("major", "minor"), lead_density=0.35, intro_drums="all", reverb=0.45,
   grooves=({"kick": "X...........", "triangle": "....x...x...", "cymbal+": "X......................."},
            {"kick": "X...........", "phat": "....o...o...", "triangle+": "........x..."},
            {"kick": "X.......o...", "triangle": "....x...x...", "tamb+": "....o...o..."}),
   family=CL, tone=0.1)

_g(name="lullaby", aliases=("lullaby", "lullabies", "berceuse", "cradle song", "nursery rhyme",
                            "nursery", "bedtime", "bedtime song", "wiegenlied", "rock-a-bye",
                            "music for babies", "baby sleep",
                            # Spanish, Portuguese, Italian
                            "cancion de cuna", "canciones de cuna", "cantiga de ninar", "ninna nanna", "ninnananna"),
   bpm=(58, 70), meter=(6, 8), kit=0, fill="none", bass="long", chords="block", form="calm", humanize_ms=10,
   vel_var=6, parts=(_p("music box", A, 10, "arp8", level=0.3), _p("celesta", L, 8, "melody"),
                     _p("harp", B, 46), _p("soft strings", PD, 49, "pad", level=0.32)),
   # the cradle's rock: root and octave (or fifth) a dotted quarter each, a held root; the root
   # weighs most (a bass on the fifth half the time is heard in the dominant's key)
   bass_pats=("R-----8-----", "R-----5-----", "R-----R-----"),
   progressions={"major": ("I IV I V", "I V I I", "I vi IV V", "I IV V I", "I I IV I"),
                 "minor": ("i iv i V", "i VI iv V", "i i iv V")},
   # a slow tune (long notes): a busier one falls on the quarters and is heard in 3/4, not in two
   modes=("major", "major", "minor"), lead_density=0.2, reverb=0.5, grooves=(), intro_drums="none",
   family=CL, tone=-0.45)

# --- the parade ground ------------------------------------------------------------------------------------
_g(name="marching band", aliases=("marching band", "paso doble", "pasodoble", "paso-doble", "marching", "march", "parade", "brass band", "sousa",
                                  "drum corps", "drum line", "college band", "fanfare", "band march",
                                  "marches", "oom-pah"),
   bpm=(112, 124), meter=(2, 4), kit=48, fill="snare", bass="root8", chords="block", form="song",
   humanize_ms=4, vel_var=6,
   parts=(_p("drums", D, 48), _p("tuba", B, 58), _p("trombones", C, 57), _p("trumpets", L, 56),
          _p("glockenspiel", L, 9, "melody", octave=1, level=0.42)),
   # the tuba's oom-pah: root on one, fifth or octave on two; written for 2/4 (two bars)
   # and so also one bar of 4/4
   bass_pats=("R---5---R---8---", "R---8---R---5---", "R-..5-..R-..8-.."),
   # the pah: trombones on the off-beats
   comp_pats=("..x...x...x...x.", "..x-..x-..x-..x-", "..x...x...x.x.x."),
   progressions={"major": ("I IV I V7", "I I IV I I V7 I I", "I IV V7 I", "I vi IV V7", "I I IV IV I V7 I I"),
                 "minor": ("i V7 i V7", "i iv V7 i", "i i iv V7")},
   modes=("major", "major", "minor"), lead_density=0.55, reverb=0.2, intro_drums="all",
   # 2/4 bars, written two at a time: the street beat, a roll-off, the tenors' cadence
   grooves=({"kick": "X...x...X...x...", "snare": "x.oxX.o.x.oxrrX.", "cymbal": "....x.......x..."},
            {"kick": "X...X...X.X.X...", "snare": "rrr.X.x.rrr.X.ox", "cymbal+": "X.......X......."},
            {"kick": "X...x...X...x...", "snare": "X..xX..xX.xxX...", "tom_hi": "..x...x...x...x.",
             "tom_mid": "...x.......x....", "cymbal": "....x.......x..."}),
   family=CL, tone=0.45)

# the cortège: Chopin's Marche funèbre, a New Orleans band's dirge before the second line, a
# state funeral's band — slow (quarter 50–66), minor, the bass drum on one and three, a muffled
# drum (snares off: a low tom) with its ruff before the stroke, the tuba's held roots, trombones
# and horns holding the chords, a trumpet's slow tune; timpani under the cadences
_g(name="funeral march", aliases=("funeral march", "funeral marches", "marche funebre", "marcia funebre",
                                  "trauermarsch", "marcha funebre", "dirge", "dirges", "death march",
                                  "funeral procession", "cortege", "funeral music", "funeral hymn",
                                  "requiem march", "funeral"),
   bpm=(50, 66), kit=48, fill="snare", bass="long", chords="block", form="calm", humanize_ms=6, vel_var=6,
   parts=(_p("drums", D, 48, level=0.8), _p("tuba", B, 58), _p("trombones", C, 57),
          _p("horns", PD, 60, "pad", level=0.45), _p("trumpet", L, 56), _p("timpani", P, 47, level=0.6)),
   # the bass: the root held through two beats, the fifth below it or the root again
   bass_pats=("R-------5-------", "R-------R-------", "R-----------5---"),
   # the chords: struck on one and held, again on three
   comp_pats=("x-------x-------", "x---------------", "x-------x---x---"),
   progressions={"minor": ("i i V7 i", "i iv i V7", "i VI iv V7", "i iv V7 i", "i i iv i"),
                 "major": ("I IV I V7", "I vi IV V7")},
   modes=("minor", "minor", "minor"), lead_density=0.25, reverb=0.4, intro_drums="all",
   # the muffled drum's ruff into its stroke on two and four, the bass drum on one and three, a
   # cymbal's stroke at the head of a phrase
   grooves=({"kick": "X.......X.......", "tom_lo": "..rrX.......rrX."},
            {"kick": "X.......X.......", "tom_lo": "....X.......X.x.", "cymbal+": "X..............."},
            {"kick": "X.......x.......", "tom_lo": "rrrrX...rrrrX..."}),
   family=CL, tone=-0.2)

_g(name="military march", aliases=("military march", "military", "army march", "quick march", "regimental march",
                                   "military band", "field drum", "field drums"),
   bpm=(108, 120), meter=(6, 8), kit=48, fill="snare", bass="root8", chords="block", form="song",
   humanize_ms=3, vel_var=5,
   parts=(_p("drums", D, 48), _p("tuba", B, 58), _p("trombones", C, 57), _p("trumpet", L, 56),
          _p("piccolo", L, 72, "sparse", octave=1, level=0.35)),
   # 6/8: the bass on the two dotted-quarter beats, the horns' after-beats between
   bass_pats=("R-----8-----R-----5-----", "R-----8-----", "R-----R-----R-----5---A-"),
   comp_pats=("..x.x...x.x.", "..x-x-..x-x-"),
   progressions={"major": ("I I V7 I", "I IV V7 I", "I V7 I V7", "I I IV V7"),
                 "minor": ("i i V7 i", "i iv V7 i", "i VI iv V7")},
   modes=("major", "minor"), lead_density=0.5, reverb=0.15, intro_drums="all",
   grooves=({"kick": "X.....X.....", "snare": "X.xrx.X.xrx.", "cymbal": "......x....."},
            {"kick": "X.....X.....", "snare": "rrrrX.x.x.X.", "cymbal+": "X.....X....."},
            {"kick": "X.....x.....", "snare": "x.x.x.X.x.x.", "tom_hi": "..x.....x..."}),
   family=CL, tone=0.3)
