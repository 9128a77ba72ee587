"""styles.world: Latin America, the Caribbean and Africa — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.

Sixteen idioms, each with its own grooves, bass and comping: bossa nova, samba (surdo on two),
salsa (son clave, tumbao, montuno — written a clave to the bar, so its ``bpm`` is the half-note
pulse), cumbia (güiro, accordion, root–fifth bass on one and three), tango (marcato in four,
bandoneón), reggaeton (dembow 3+3+2), flamenco (rumba flamenca: rasgueado, palmas, the
Andalusian cadence), mariachi (son in 6/8 against 3/4, guitarrón, vihuela, trumpets and violins),
bachata (requinto, güira, bongó), merengue (tambora, güira, accordion), reggae (one drop), ska,
dancehall (digital riddim), afrobeat (Fela: interlocking guitars, horns, shekere), calypso and
soca. Import-time additions to the shared tables (never overwriting an entry): the instrument
words cavaquinho, vihuela, guitarrón and requinto; the drum lanes and words güira, shekere,
palmas and tambora.
"""
from __future__ import annotations

from engine.compose import genres as G
from engine.compose.genres import BOSSA, A, B, C, D, L, PD, _g, _p

# --- words the shared tables lack (setdefault: an entry another module made wins) ------------------
for _w, _v in (("cavaquinho", (25, C, "")), ("vihuela", (24, C, "")), ("guitarron", (32, B, "")),
               ("requinto", (25, A, "arp16"))):
    G.INSTRUMENTS.setdefault(_w, _v)
_TALKING_DRUM = {"tom_hi": "..x.....x.x.....", "tom_mid": "...x.......x..x."}
G.LANES.setdefault("guira", 69)          # the güira (a metal scraper): the cabasa is its GM neighbour
G.LANES.setdefault("shekere", 69)        # the shekere (a beaded gourd): the cabasa too
G.LANES.setdefault("tambora", 47)        # the merengue tambora's drum head: a mid tom
for _w, _v in (("guira", {"guira": "x.oox.oox.oox.oo"}),
               ("shekere", {"shekere": "x.oox.oox.oox.oo"}), ("palmas", {"clap": "..x...x...x...x."}),
               ("tambora", {"tambora": "x..x.xx.x..x.xx."}),
               # West Africa's bell pattern (highlife, afrobeat): the agogo's timeline
               ("bell pattern", {"agogo": "x.x.xx.x.x.x.x..", "agogo_lo": "......x.......x."}),
               # the talking drum (dùndún): its pitch bends up and down between two toms
               ("talking drum", _TALKING_DRUM), ("talking drums", _TALKING_DRUM),
               # Senegal's tama (mbalax): a talking drum under the arm
               ("tama", _TALKING_DRUM)):
    G.DRUM_WORDS.setdefault(_w, (None, _v, None))

# --- Brazil --------------------------------------------------------------------------------------
_g(name="bossa nova", chromatic_approach=True, family="latin",
   aliases=("bossa nova", "boss nova", "bosa nova", "bossa-nova", "bosanova", "bossanova", "bossa", "brazilian jazz", "jobim", "ipanema", "mpb", "brazilian lounge"),
   bpm=(124, 144), kit=32, fill="jazz", bass="bossa", chords="bossa", form="jazz", humanize_ms=7, vel_var=8,
   parts=(_p("drums", D, 32), _p("bass", B, 32), _p("nylon guitar", C, 24), _p("flute", L, 73),
          _p("strings", PD, 49)),
   progressions=BOSSA, modes=("major", "minor"), lead_density=0.4, intro_drums="all", tone=-0.25, reverb=0.3,
   bass_pats=("R-----5.l-----R.", "R-----5.5-----A.", "R-----l.R-----5."),
   grooves=({"kick": "X.....x.X.....x.", "rim": "x.....x.....x.......x.....x.....",
             "chat": "x.o.x.o.x.o.x.o.", "shaker": "oxoxoxoxoxoxoxox"},
            {"kick": "X.....x.X.....x.", "rim": "......x.....x...x.....x....x....",
             "shaker": "xoxoxoxoxoxoxoxo", "conga+": "..x..x.x..x..x.x"},
            {"kick": "X..x..x.X..x..x.", "rim": "x.....x.....x.......x.....x.....",
             "ride": "x.xxx.xxx.xxx.xx", "phat": "....x.......x..."}))

# samba: a 4/4 bar is two bars of the 2/4 samba — the surdo's open, low stroke on 2 (and 4), the
# muted one on 1; tamborim, agogô, ganzá (shaker), cuíca in the chorus; cavaquinho over a nylon guitar
_g(name="samba", family="latin",
   aliases=("samba", "axe baiano", "axe music", "musica axe", "axe bahia", "axe da bahia", "pagode baiano", "samba-reggae", "maracatu", "baque virado", "frevo", "frevo de rua", "marchinha", "choro", "chorinho", "choro carioca",
            "brazilian", "brazil", "batucada", "brazilian carnival", "rio carnival", "carnaval",
            "pagode", "samba enredo", "partido alto", "samba de roda", "bateria", "samba reggae"),
   bpm=(96, 106), kit=0, fill="snare", form="song", swing=0.06, swing_unit=0.25, humanize_ms=5, vel_var=10,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("cavaquinho", C, 25, octave=1),
          _p("nylon guitar", C, 24, "bossa", pan=0.45), _p("trumpet", L, 56), _p("brass", C, 61, "stab", pan=-0.5)),
   progressions={"major": ("I VI7 ii7 V7", "I I7 IV iv", "ii7 V7 I VI7", "I vi7 ii7 V7", "I-VI7 ii7-V7 I-VI7 ii7-V7"),
                 "minor": ("i7 iv7 V7 i7", "i7 VI7 iih7 V7", "i7 i7 iv7 V7", "iv7 V7 i7 VI7")},
   modes=("major", "minor"), lead_density=0.5, intro_drums="all", tone=0.3, reverb=0.22,
   bass_pats=("R..5l--AR..5l--A", "R..Rl..5R..Rl..A", "R.R5l-.5R.R5l--8"),
   comp_pats=("x.xx.xx.x.xx.xx.", "X.xo.x.oX.xo.x.o", "x.x.x.xxx.x.x.xx"),
   grooves=({"surdo_mute": "x.......x.......", "surdo": "....X.......X...", "kick": "X..xX..xX..xX..x",
             "side": "x.xx.x.xx.xx.x.x", "shaker": "XxxxXxxxXxxxXxxx", "agogo": "x.x..x.x..x.x...",
             "agogo_lo": "...x.....x....x.", "cuica+": "..x...x...x.x..."},
            {"surdo_mute": "x.......x.......", "surdo": "....X.......X...", "kick": "X...X..xX...X..x",
             "snare": "o.oxo.oxo.oxo.ox", "side": "x.x..x.x.xx..x.x", "shaker": "XxxxXxxxXxxxXxxx",
             "cuica_open+": "......x.......x."},
            {"surdo_mute": "x...............", "surdo": "....X...x...X...", "kick": "X..xX...X..xX...",
             "snare": "..xo..xo..xo..xx", "agogo": "x.x.x..x.x.x.x..", "agogo_lo": ".....x.......x..",
             "chat": "xxxxxxxxxxxxxxxx", "cuica+": "..x.......x....."}))

# the Brazilian northeast: the baião's zabumba (the beater's dotted figure, the stick's off-beats),
# the triangle's sixteenths open on the and, the sanfona (accordion) on the tune, in two
_g(name="forro", family="latin",
   aliases=("forro", "piseiro", "pisadinha", "forro eletronico", "forro de teclado", "baiao", "xote", "xaxado", "pe de serra", "forro pe de serra",
            "forro universitario", "nordestino", "luiz gonzaga", "arrasta-pe", "arrasta pe"),
   bpm=(100, 130), meter=(2, 4), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=5,
   vel_var=10, tone=0.25, reverb=0.15, intro_drums="all", lead_density=0.7,
   parts=(_p("drums", D, 0), _p("bass", B, 32), _p("guitar", C, 24), _p("accordion", L, 21, "melody")),
   progressions={"major": ("I I V V", "I IV V I", "I V I I", "I I IV V"),
                 "mixolydian": ("I I bVII I", "I bVII IV I"), "minor": ("i i iv V", "i VII i V")},
   modes=("major", "mixolydian", "major", "minor"),
   bass_pats=("R..5R...", "R..RA..5"),
   comp_pats=("..x...x.", "x.x..xx."),
   grooves=({"kick_lo": "X..X....", "tom_lo": "....x...", "side": "..x...x.", "triangle": "..x...x.",
             "triangle_mute": "xx.xxx.x"},
            {"kick_lo": "X..X..x.", "side": "..x...x.", "triangle": "..x...x.", "triangle_mute": "xx.xxx.x",
             "shaker+": "xxxxxxxx"},
            {"kick_lo": "X......x", "tom_lo": "...x....", "side": "..x...x.", "triangle": "..x...x.",
             "triangle_mute": "xx.xxx.x"}))

# --- the Spanish Caribbean -----------------------------------------------------------------------
# salsa: one bar holds the whole two-bar clave (its 16ths are the music's eighths), so ``bpm`` is
# the half-note pulse: 90–104 here is salsa's 180–208
_g(name="salsa", family="latin",
   aliases=("salsa", "buena vista social club", "buena vista", "chachacha", "latin boogaloo", "bugalu", "boogaloo latino", "latin soul", "shing-a-ling", "big band mambo", "mambo big band", "bembe",
            "charanga", "latin", "cuban", "cuba", "havana", "afro-cuban", "afro cuban", "mambo", "cha cha",
            "cha-cha", "cha cha cha", "cha-cha-cha", "rumba", "son cubano", "son montuno", "timba",
            "puerto rican", "salsa dura", "salsa romantica", "latin jazz", "latin dance", "guaguanco"),
   bpm=(90, 104), kit=0, fill="toms", form="song", humanize_ms=5, vel_var=10,
   parts=(_p("drums", D, 0), _p("bass", B, 32), _p("piano", C, 0), _p("trumpet", L, 56),
          _p("trombone", L, 57, pan=-0.4), _p("brass", C, 61, "stab", pan=0.5)),
   progressions={"major": ("I-IV V-IV I-IV V-IV", "I-V7 V7-I I-V7 V7-I", "ii7-V7 ii7-V7 I-IV V7-I",
                           "I-IV I-V7 IV-V7 I-vi"),
                 "minor": ("i-iv V7-i i-iv V7-i", "i-iv VII-III i-iv V7-i", "iih7-V7 i-i iih7-V7 i-i",
                           "i-VI iih7-V7 iv-V7 i-i")},
   modes=("minor", "major"), lead_density=0.45, intro_drums="all", tone=0.4, reverb=0.2,
   bass_pats=("......5.....R---", "......R.....5---", "......5...A.R---"),
   comp_pats=("X.x..x.x.x..x.x.", ".x.x..x.x.xx.x.x", "x..x.xx..x.x.xx."),
   grooves=({"clave": "x..x..x...x.x...", "cowbell": "X.x.X.x.X.x.X.x.", "conga": "......xx......xx",
             "conga_mute": "..x.......x.....", "conga_lo": "x.......x.......", "kick": "......x.......x.",
             "bongo+": "x.xxx.xxx.xxx.xx"},
            {"clave": "..x.x...x..x..x.", "timbale": "x.xx.x.xx.x.x.xx", "conga": "......xx......xx",
             "conga_lo": "x...x...x...x...", "kick": "...x.......x....", "cowbell+": "X...X...X...X..."},
            {"clave": "x..x..x...x.x...", "timbale": "x.x.xx.xx.x.xx.x", "timbale_lo": "......X.......X.",
             "conga": "..x...xx..x...xx", "kick": "......x.....x...", "ohat+": "..x...x...x...x."}))

# bachata: requinto arpeggios over the rhythm guitar, güira 16ths, the bongó's martillo; the
# chorus ("mambo") adds congas
_g(name="bachata", family="latin", aliases=("bachata", "dominican", "bachata sensual", "bachata romantica"),
   bpm=(124, 140), kit=0, fill="snare", form="song", humanize_ms=6, vel_var=10,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 24), _p("requinto", A, 25, "arp16"),
          _p("lead", L, 25, "sparse", octave=1)),
   progressions={"minor": ("i iv V7 i", "i iv VII III", "i VI VII i", "i iv i V7"),
                 "major": ("I IV V7 IV", "I vi IV V7", "I IV V7 I")},
   modes=("minor", "major"), lead_density=0.35, intro_drums="all", tone=0.2, reverb=0.3,
   bass_pats=("R...5.5.R...8.5.", "R.....5-R.....R-", "R...5..AR...5..A"),
   comp_pats=("X.xox.xoX.xox.xo", "x.x.x..xx.x.x..x"),
   grooves=({"bongo": "x.x.x..xx.x.x..x", "bongo_lo": "...x.......x....", "guira": "x.oox.oox.oox.oo",
             "kick": "X.......X.....x.", "conga+": "..x..x.x..x..x.x", "conga_lo+": "x.......x......."},
            {"bongo": "x.xxx..xx.xxx..x", "guira": "x.o.x.oox.o.x.oo", "kick": "X......xX.......",
             "rim": "....x.......x...", "conga+": "..x...xx..x...xx"}))

# merengue: a 4/4 bar is two of its quick 2/4 — tambora (its head and its rim), güira, accordion
_g(name="merengue", family="latin",
   aliases=("merengue", "dominican merengue", "merengue tipico", "perico ripiao"),
   bpm=(124, 148), kit=0, fill="snare", form="song", humanize_ms=4, vel_var=10,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("piano", C, 0), _p("accordion", L, 21),
          _p("sax", C, 65, "stab", pan=0.5)),
   progressions={"major": ("I V7 V7 I", "I IV V7 I", "I I V7 V7", "I IV I V7")},
   modes=("major", "major", "minor"), lead_density=0.55, intro_drums="all", tone=0.4, reverb=0.18,
   bass_pats=("R..R5...R..R5...", "..R...5...R...5.", "R..R5..AR..R5..A"),
   comp_pats=("..x...x...x...x.", "x.xx.x.xx.xx.x.x"),
   grooves=({"kick": "X...X...X...X...", "tambora": "x..x.xx.x..x.xx.", "rim": "...x...x...x...x",
             "guira": "x.oox.oox.oox.oo", "cowbell+": "x.x.x.x.x.x.x.x."},
            {"kick": "X.......X.......", "tambora": "x.xx.xx.x.xx.xx.", "rim": ".......x.......x",
             "guira": "xoooxoooxoooxooo", "conga+": "..x...x...x...x."}))

# --- Colombia, Mexico, Argentina, Spain ---------------------------------------------------------
# cumbia: the bass on one and three (root, fifth), güiro long–short–short, the llamador on the
# off-beats, the guitar's "chucu" on the and, the tune on accordion
_g(name="cumbia", family="latin",
   aliases=("cumbia", "carimbo", "lambada", "psychedelic cumbia", "psych cumbia", "cumbia psicodelica", "colombian", "colombia", "vallenato", "cumbia villera", "cumbia sonidera", "chicha",
            "peruvian cumbia", "cumbia colombiana"),
   bpm=(86, 100), kit=0, fill="toms", form="song", humanize_ms=5, vel_var=8,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 27), _p("accordion", L, 21),
          _p("organ", PD, 16)),
   progressions={"major": ("I V7 V7 I", "I IV V7 I", "I I V7 V7", "I IV V7 IV"),
                 "minor": ("i iv V7 i", "i VII VI V7", "i i V7 V7", "i iv VII III")},
   modes=("minor", "major"), lead_density=0.55, intro_drums="all", tone=0.1, reverb=0.2,
   bass_pats=("R---..R.5---..5.", "R---....5---....", "R---..5.5---..A."),
   comp_pats=("..x...x...x...x.", "..xo..xo..xo..xo"),
   grooves=({"kick": "X.......X.......", "guiro_long": "x...x...x...x...", "guiro": "..xx..xx..xx..xx",
             "conga": "..x...x...x...x.", "conga_lo": "x..x....x..x....", "rim+": "....x.......x.x."},
            {"kick": "X.......X.......", "guiro_long": "x...x...x...x...", "guiro": "..xx..xx..xx..xx",
             "snare": "....x..x....x..x", "conga_mute": "..x...x...x...x.", "timbale+": "......x.......x."},
            {"kick": "X..x....X..x....", "guiro_long": "x.......x.......", "guiro": "..x.xxx...x.xxx.",
             "conga": "..x...x...x...x.", "rim": "......x.......x.", "cowbell+": "x...x...x...x..."}))

# tango: marcato in four (bass and bandoneón on every beat), the habanera and the 3-3-2 síncopa
# as variants, staccato violins; only a whisper of percussion
_g(name="tango", family="latin",
   aliases=("tango", "argentine tango", "argentinian", "argentine", "argentina", "buenos aires", "milonga",
            "nuevo tango", "tango nuevo", "piazzolla", "electrotango"),
   bpm=(108, 124), kit=40, fill="none", form="song", humanize_ms=7, vel_var=12,
   parts=(_p("drums", D, 40, level=0.5), _p("double bass", B, 32), _p("bandoneon", C, 23), _p("violins", L, 40),
          _p("piano", C, 0, "block", pan=0.4)),
   progressions={"minor": ("i iv V7 i", "i i V7 V7", "i iv VII III", "i VI iio V7", "iv i V7 i"),
                 "major": ("I IV V7 I", "I vi ii V7")},
   modes=("minor", "minor", "major"), lead_density=0.45, intro_drums="none", tone=0.0, reverb=0.3,
   bass_pats=("R...R...5...R...", "R..5R.5.R..5R.5.", "R..R..R.R...5..."),
   comp_pats=("X...x...X...x...", "X..x..x.X...x...", "X...x...X.....xx"),
   grooves=({"kick": "o...o...o...o...", "rim": "....x.........x."},
            {"kick": "o..o..o.o.......", "rim": "........x.......", "woodblock_lo": "..............x."}))

# flamenco (rumba flamenca): rasgueado strums with the golpe, palmas, castanets in the chorus,
# the cajón as kick and snare, a nylon guitar picking the tune; the Andalusian cadence
_g(name="flamenco", family="latin",
   aliases=("flamenco", "rumba flamenca", "flamenco rumba", "gipsy kings", "gypsy rumba", "andalusian",
            "sevillanas", "nuevo flamenco", "flamenco guitar", "spain"),
   bpm=(100, 124), kit=0, fill="snare", form="song", humanize_ms=6, vel_var=12,
   parts=(_p("drums", D, 0, level=0.75), _p("bass", B, 32), _p("nylon guitar", C, 24), _p("guitar", L, 24),
          _p("strings", PD, 48, level=0.3)),
   progressions={"minor": ("i VII VI V", "i VII VI V", "iv i V i", "i iv VII III VI iv V V"),
                 "phrygian": ("iv III II I", "I II I II", "I II III II")},
   modes=("minor", "phrygian"), lead_density=0.6, intro_drums="all", tone=0.15, reverb=0.25,
   bass_pats=("R..R..5.R..R..5.", "R-----R-5-----5-", "R..5..R.l..5..A."),
   comp_pats=("S..uo.u.S..uo.u.", "S.uSo.usS.uSo.us", "S.S.o.uuS.S.o.uu"),
   grooves=({"kick": "X......xX.......", "snare": "....X.......X...", "clap": "x.xx.xx.x.xx.xx.",
             "castanets+": "x.xxx.x.x.xxx.x."},
            {"kick": "X..x....X..x....", "snare": "....X..x....X..x", "clap": "..x...x...x...x.",
             "castanets+": "....x.xx....x.xx"}))

# mariachi (son jalisciense): 6/8 against 3/4 — the pattern's first bar in two dotted quarters,
# its second in three quarters — in the guitarrón, the vihuela's strums and the zapateado
_g(name="mariachi", family="latin",
   aliases=("mariachi", "son jarocho", "jarocho", "fandango jarocho",
            "mexican", "mexico", "joropo", "son jalisciense", "ranchera", "jarabe", "huapango",
            "mexican folk", "mariachis"),
   bpm=(84, 100), meter=(6, 8), kit=0, fill="none", form="song", humanize_ms=6, vel_var=10,
   parts=(_p("drums", D, 0, level=0.55), _p("guitarron", B, 32), _p("vihuela", C, 24, octave=1),
          _p("guitar", C, 24, "block", pan=0.45), _p("trumpet", L, 56), _p("violins", L, 40, pan=-0.4)),
   progressions={"major": ("I IV V7 I", "I V7 V7 I", "I I IV V7", "I IV I V7"),
                 "minor": ("i iv V7 i", "i V7 V7 i", "i iv V7 V7")},
   modes=("major", "major", "minor"), lead_density=0.5, intro_drums="all", tone=0.3, reverb=0.25,
   bass_pats=("R-----5-----R---5---R---", "R-....5-....R-..5-..8-..", "R-----l-----R---5---l---"),
   comp_pats=("S.u.u.S.u.u.S.u.S.u.S.u.", "S...u.S...u.S...S...S...", "S.uSu.S.uSu.S.u.S.u.S.uu"),
   grooves=({"kick": "X.....x.....X.....x.....", "clap": "....x.....x...x...x...x."},
            {"kick": "X.....x.....", "clap": "....x.....x.", "shaker": "x.x.x.x.x.x."}))

# reggaeton: the dembow — the kick on every beat, the snare 3+3+2 (the "a" of one, the "and" of
# two, and again in the bar's second half) — an 808 on the kick
_g(name="reggaeton", family="latin",
   aliases=("reggaeton", "regueton", "dembow", "perreo", "neoperreo", "urbano",
            "latin urban", "moombahton",
            "funk carioca", "baile funk", "funk brasileiro", "brazilian funk", "tamborzao", "mandelao", "rio funk"),
   bpm=(90, 100), kit=25, fill="snare", bass="808", form="song", humanize_ms=2, vel_var=6,
   parts=(_p("drums", D, 25), _p("808", B, 38, "808"), _p("keys", C, 5), _p("pad", PD, 89),
          _p("lead", L, 81, "sparse")),
   progressions={"minor": ("i VI III VII", "i iv VI V", "i VII VI VII", "VI VII i i", "i VI iv V")},
   modes=("minor",), lead_density=0.35, intro_drums="kick", tone=0.05, reverb=0.15,
   comp_pats=("x..x..x.x..x..x.", "...x..x....x..x."),
   grooves=({"kick": "X...X...X...X...", "snare": "...x..x....x..x.", "chat": "x.x.x.x.x.x.x.x.",
             "clap+": "...x..x....x..x."},
            {"kick": "X...X...X...X...", "snare": "...x..x....x.xx.", "chat": "x.xxx.xxx.xxx.xx",
             "tamb+": "..x...x...x...x."},
            {"kick": "X...X...X...X...", "rim": "...x..x....x..x.", "snare+": "......x.......x.",
             "ohat": "..x...x...x...x."}))

# --- Jamaica -------------------------------------------------------------------------------------
_g(name="reggae", family="caribbean",
   aliases=("reggae", "roots reggae", "roots", "dub", "dub reggae", "one drop", "one-drop", "rocksteady",
            "lovers rock", "jamaican", "jamaica", "rasta", "rastafarian", "nyabinghi"),
   bpm=(68, 84), kit=0, fill="toms", bass="dub", chords="skank", form="song", swing=0.18, swing_unit=0.5,
   humanize_ms=8, vel_var=10, tone=-0.2, reverb=0.3,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 27), _p("organ", C, 16, "bubble", pan=0.45),
          _p("lead", L, 22, "sparse")),
   progressions={"major": ("I IV I V", "I IV V IV", "I vi IV V", "I I IV IV"),
                 "minor": ("i iv i iv", "i VII i VII", "i iv VII III", "i VI VII i")},
   modes=("minor", "major"), lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "........X.......", "rim": "........X.......", "chat": "x.x.x.x.x.x.x.x.",
             "ohat+": "..............x."},
            {"kick": "........X.......", "snare": "........X.......", "chat": "x.xxx.xxx.xxx.xx",
             "rim": "......o.......o."},
            {"kick": "........X.......", "rim": "....?...X.......", "chat": "..x...x...x...x.",
             "phat": "x...x...x...x...", "kick2": "..............?."}))

# ska: walking bass, the guitar and piano upstrokes on every off-beat, a horn section on the tune
_g(name="ska", chromatic_approach=True, family="caribbean",
   aliases=("ska", "ska punk", "two tone", "2 tone", "2-tone", "third wave ska", "jamaican ska", "bluebeat",
            "blue beat"),
   bpm=(140, 172), kit=0, fill="snare", bass="walking", form="song", swing=0.1, swing_unit=0.5,
   humanize_ms=5, vel_var=10, tone=0.35, reverb=0.2,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 27), _p("piano", C, 0, "skank", pan=0.45),
          _p("trumpet", L, 56), _p("tenor sax", L, 66, pan=-0.4), _p("trombone", C, 57, "stab", pan=0.3)),
   progressions={"major": ("I vi IV V", "I IV V IV", "I I IV V", "ii V I vi"),
                 "minor": ("i iv V i", "i VII VI V", "i iv i V")},
   modes=("major", "minor"), lead_density=0.5, intro_drums="all",
   comp_pats=("..t...t...t...t.", "..u...u...u...u.", "..t...t...t..tt."),
   grooves=({"kick": "X.......X.......", "snare": "....X.......X...", "chat": "..x...x...x...x."},
            {"kick": "X...X...X...X...", "rim": "....x.......x..x", "chat": "..x...x...x.x.x.",
             "crash+": "X..............."},
            {"kick": "X.....x.X.......", "snare": "....X.......X..o", "ride": "..X...X...X...X.", "rim": "x.......x......."}))

# dancehall: the digital riddim — drum machine, synth bass figure, stabs on the off-beats
_g(name="dancehall", family="caribbean",
   aliases=("dancehall", "kizomba", "tarraxinha", "tarraxo", "urban kiz", "ragga", "raggamuffin", "zouk", "zouk love", "digital riddim", "dancehall riddim", "bashment",
            "sleng teng"),
   bpm=(90, 108), kit=25, fill="snare", form="song", humanize_ms=2, vel_var=6, tone=0.1, reverb=0.15,
   parts=(_p("drums", D, 25), _p("bass", B, 38), _p("keys", C, 90), _p("pad", PD, 89),
          _p("lead", L, 80, "sparse")),
   progressions={"minor": ("i i VI VII", "i VII i VII", "i iv i iv", "i VI VII i")},
   modes=("minor", "dorian"), lead_density=0.3, intro_drums="hats",
   bass_pats=("R--R--R-..R-.R..", "R-..R-5-..R-5-A.", "R--R--8-..R-..5."),
   comp_pats=("..t...t...t...t.", "....x.......x..x"),
   grooves=({"kick": "X.....x...X.....", "snare": "....X..x....X...", "chat": "x.xxx.xxx.xxx.xx"},
            {"kick": "X.......X.......", "clap": "....x.....x.x...", "chat": "xxx.xxx.xxx.xxx.",
             "tom_hi+": "..............x."},
            {"kick": "X..x..x...x.....", "rim": "....x.......x..x", "chat": "x.x.x.x.x.x.x.x.",
             "clap+": "....x.......x..."}))

# --- Trinidad --------------------------------------------------------------------------------------
_g(name="calypso", family="caribbean",
   aliases=("calypso", "quelbe", "scratch band", "fungi music", "rake and scrape", "rake n scrape", "rake 'n' scrape", "rake-and-scrape", "bahamian", "junkanoo", "goombay", "twoubadou", "troubadour haitien", "haitian troubadour", "trinidad", "trinidadian", "kompa", "konpa", "haitian", "steelband", "steel band",
            "caribbean", "kaiso",
            "mento", "jamaican mento", "spouge", "cadence-lypso", "cadence lypso", "cadencelypso", "cadence-lypso music"),
   bpm=(100, 120), kit=0, fill="toms", form="song", humanize_ms=5, vel_var=8, tone=0.4, reverb=0.2,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 25), _p("steel pan", L, 114),
          _p("brass", C, 61, "stab", pan=0.5)),
   progressions={"major": ("I IV V7 I", "I V7 V7 I", "I IV I V7", "I vi ii V7")},
   modes=("major",), lead_density=0.55, intro_drums="all",
   bass_pats=("R..5R...R..5R...", "R..3-.5.R..3-.5.", "R..5R..AR..5R..A"),
   comp_pats=("S.Su.uSuS.Su.uSu", "S..uS.u.S..uS.u."),
   grooves=({"kick": "X..xX...X..xX...", "snare": "......x.......x.", "chat": "x.x.x.x.x.x.x.x.",
             "cowbell": "..x...x...x...x."},
            {"kick": "X...X..xX...X..x", "rim": "..x...x...x...x.", "chat": "xxxxxxxxxxxxxxxx",
             "cowbell+": "x.x.x.x.x.x.x.x."}))

# soca: four on the floor, the bells on every off-beat, a pumping bass — carnival road music
_g(name="soca", family="caribbean",
   aliases=("soca", "kaseko", "punta rock", "garifuna", "paranda", "power soca", "trinidad soca", "carnival", "trinidad carnival", "bouyon",
            "road march"),
   bpm=(132, 158), kit=24, fill="snare", form="song", humanize_ms=2, vel_var=6, tone=0.5, reverb=0.18,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("brass", C, 61), _p("steel pan", L, 114),
          _p("pad", PD, 90)),
   progressions={"major": ("I V vi IV", "I IV V IV", "I I IV V", "vi IV I V")},
   modes=("major", "major", "minor"), lead_density=0.5, intro_drums="kick",
   bass_pats=("R.R.5..RR.R.5..R", "..R...R...R...R.", "R..R..5.R..R..5."),
   comp_pats=("..x...x...x...x.", "x..x..x.x..x..x."),
   grooves=({"kick": "X...X...X...X...", "snare": "....X..x....X..x", "cowbell": "..x...x...x...x.",
             "chat": "xxxxxxxxxxxxxxxx"},
            {"kick": "X...X...X...X...", "clap": "....x.......x...", "snare": "......x.......x.",
             "cowbell": "..X...X...X...X.", "tamb": "x.x.x.x.x.x.x.x."}))

# --- West Africa -----------------------------------------------------------------------------------
# afrobeat (Fela, Tony Allen): the busy kit, shekere and clave, two guitars interlocking, organ, a
# horn section in unison riffs and a tenor sax
_g(name="afrobeat", family="african",
   aliases=("afrobeat", "mbalax", "kenyan benga", "benga music", "luo benga", "kwela", "mbaqanga", "marabi", "township jive", "pennywhistle jive", "sungura", "chimurenga", "afroswing", "afro swing", "afro-swing", "afrobashment", "soukous", "congolese rumba", "ndombolo", "sebene", "rumba congolaise", "highlife", "afrobeats", "afro-beat", "afro beat", "fela", "fela kuti", "nigerian", "nigeria",
            "lagos", "afrofunk", "afro funk", "west african"),
   bpm=(100, 120), kit=0, fill="snare", form="song", swing=0.04, swing_unit=0.25, humanize_ms=6, vel_var=12,
   tone=0.2, reverb=0.2,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 28), _p("guitar 2", C, 27, "funk16", pan=0.5),
          _p("organ", PD, 16), _p("horns", L, 61, "riff"), _p("tenor sax", L, 66)),
   progressions={"dorian": ("i7 i7 IV7 i7", "i7 IV7 i7 i7", "i7 i7 i7 IV7"),
                 "minor": ("i7 i7 iv7 iv7", "i7 VII7 i7 VII7", "i7 i7 VII7 VII7")},
   modes=("dorian", "dorian", "minor"), lead_density=0.45, intro_drums="all",
   bass_pats=("R..R..5.R.7.8...", "R-.8..R.5..7R...", "R..R.5..7.8.5..A"),
   comp_pats=("t.tt.t.tt.tt.t.t", ".t.t.tt..t.t.tt."),
   grooves=({"kick": "X.....x...x.....", "snare": "....X..o.o..X...", "chat": "x.xxx.x.x.xxx.x.",
             "ohat": ".......x.......x", "shekere": "x.oox.oox.oox.oo", "clave": "x..x..x...x.x..."},
            {"kick": "X..x......x..x..", "snare": "....X......oX...", "ohat": "..x...x...x...x.",
             "chat": "x...x...x...x...", "conga": "..x..x.x..x..x.x", "shekere": "xoooxoooxoooxooo",
             "cowbell+": "x.x.xx.x.x.xx.x."}))


# --- India --------------------------------------------------------------------------------------------
# a raga: the tanpura's drone of tonic and fifth re-plucked (never a chord change), the sitar's line over it, the
# tabla's theka, the harmonium of a qawwali or a bhajan; the mode is the scale nearest the raga's
# (yaman lydian, bilawal major, khamaj mixolydian, kafi dorian, bhairavi phrygian, asavari minor)
_g(name="raga", family="indian",
   aliases=("raga", "nusrat fateh ali khan", "nusrat", "raag", "ragas", "hindustani", "hindustani classical", "indian classical", "carnatic",
            "qawwali", "sufi", "ghazal", "bhajan", "kirtan", "sitar music", "ravi shankar", "indian raga",
            "raga rock", "tabla and sitar"),
   bpm=(60, 96), kit=0, fill="none", chords="pad", form="song", humanize_ms=8, vel_var=10,
   tone=0.05, reverb=0.35, lead_density=0.6, intro_drums="none", cadence_v=False,
   parts=(_p("tabla", D, 0), _p("tanpura", A, 104, "tanpura", level=0.3), _p("harmonium", PD, 20),
          _p("sitar", L, 104, "melody")),
   progressions={m: ("I5 I5 I5 I5",) for m in ("major", "lydian", "mixolydian")}
   | {m: ("i5 i5 i5 i5",) for m in ("minor", "dorian", "phrygian")},
   modes=("lydian", "major", "mixolydian", "dorian", "phrygian", "minor"),
   grooves=({"bongo": "x.xxx.x.x.xxx.x.", "conga_lo": "X...x...X.......", "bongo_lo": "...x.......x...."},
            {"bongo": "xx.xx.x.xx.xx.x.", "conga_lo": "X.......X...x...", "bongo_lo": "......x.......x."}))

