"""styles.more: fado, bhangra, huayno, chacarera, bolero, ragtime, polska, soul jazz, big beat,
electro, biguine, parang, zydeco, drum and chant, enka, slack key and mande — the style library's
entries for these idioms (folk, latin, jazz, electronic, caribbean, pop and african families).

Pure data: a few instrument words the shared table lacks (``setdefault``: an entry another module
made wins), and each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.

What each one is built on (the idiom a player of it would name first):

- **fado** (Lisbon, 60–84): no drums — the Portuguese guitar's busy, ornamented tune (GM's
  steel-string guitar, the nearest bright plucked sound; a second one arpeggiating in steady
  eighths blurred the bar), the classical guitar ("viola") in the fado's bass-and-chord in eighths
  (the 2/4 feel under a slow four, its downbeat a full struck chord), the acoustic bass on one
  and three; minor, i–iv–V7.
- **bhangra** (Punjab, 90–110): the dhol's chaal — eight strokes a bar, "Dha Na Na Na Na Dha Dha
  Na" (the bass stick's dhugg on one, the and of three and four; the tilli's crack on every
  eighth), lightly shuffled — the tumbi's repeating high riff, an algoza (flute) tune, a bass on
  the dhuggs and a harmonium drone; claps on the backbeat in the chorus.
- **huayno** (the Andes, 2/4, 100–128): charango strums in the huayno's long–short–short and
  its short–long snap (a sixteenth and a dotted eighth), the quena's tune, a zampoña answering,
  the bombo and the chajchas (goat-hoof rattle); minor and its relative major.
- **chacarera** (Santiago del Estero, 6/8 felt against 3/4): the bombo legüero — the rim (aro)
  on the two dotted-quarter beats, the head (parche) on the 3/4's second and third quarters —
  the guitarra criolla's rasguido with the chasquido (a slapped, muted stroke) on the second
  beat, a violin tune; the bass says 6/8, then 3/4, across two bars.
- **bolero** (trío Los Panchos, 66–90): nylon guitars — the bass on one and three, strums
  between — the requinto's tune and a guitar's arpeggios, an upright bass, the bongó's martillo
  with its open tone, maracas in eighths, the güiro and the clave; romantic, minor or major.
- **drum and chant** (Martinique's bèlè, Guadeloupe's gwoka, Puerto Rico's bomba, a drum circle;
  96–126): no band — the low hand drum keeping the pulse, the high drum playing against it, sticks
  on the drum's side (the tibwa) and a shaker; a singer's call and the chorus holding the answer.
- **ragtime** (Joplin's 2/4, 88–124; stride): solo piano — the left hand's oom-pah (a low bass
  note on each beat, the root then the fifth below, a chord on each off-beat eighth, the bar's
  first leaned on) under a syncopated right-hand tune; straight, never swung.
- **polska** (Sweden, 3/4, 100–126): fiddle tune and a nyckelharpa's harmony, a second fiddle
  and a guitar comping with the heavy, long second beat, a light bass; a stamping foot, no kit.
- **soul jazz** (the organ trio: Jimmy Smith, 84–128): swung, the ride's "ding, ding-a" over a
  hard backbeat, the Hammond organ on the tune and comping in short left-hand stabs, its pedals'
  walking bass, the guitar chopping two and four; blues changes.
- **big beat** (Fatboy Slim, the Chemical Brothers, 122–138): a huge, syncopated breakbeat
  (ghosted snares, open hats), an acid line, synth-brass stabs and an overdriven guitar riff,
  a sparse voice; the EDM form — a breakdown and its snare roll into the drop.
- **electro** (Planet Rock, Cybotron, Drexciya; Miami bass, 112–132): the TR-808 — the kick
  syncopated off the beat, snare and clap on two and four, closed hats in 16ths, the cowbell's
  answer — a synth bass in 16ths tied to the kick, a cold saw arpeggio, orchestra-hit stabs and a
  vocoder's few words; minor or phrygian, one chord for bars.
- **biguine** (Martinique, Stellio's clarinet, 104–140): the clarinet's tune with a trombone
  answering, the banjo chunking off the beat, a piano, the tuba's habanera-like bass (one, the and
  of two, three), the tibwa's sticks (the woodblock) in long–short–short over a light kit.
- **parang** (Trinidad's Christmas music from Venezuela, the paseo, 104–128): no kit — maracas in
  eighths, the scratcher (güiro) and claves; the cuatro's rasgueo, a guitar, the box bass on one and
  three and the mandolin's tune.
- **zydeco** (Clifton Chenier's Louisiana, and the cajun two-step, 112–148): the piano accordion's
  tune with a fiddle answering, the frottoir (rubboard: the güiro's scrape) in 16ths or the
  "chanka-chank", the kick on every beat with its double-clutch pickup, an electric guitar's chop
  off the beat and the bass on the beats; the cajun two-step's ti-fer (triangle) in eighths.
- **enka** (Japan, 64–96): a slow ballad's soft kit with the shuffled "mood kayō" shaker, strings,
  the koto's and a guitar's arpeggios, the shakuhachi's tune; minor.
- **slack key** (kī hōʻalu, Hawaii, 72–96): open-tuned steel-string guitars — one carrying the
  tune, one fingerpicked with the thumb on every beat — a ukulele, a light bass, a lap steel's
  swells; no drums; major, the "Hawaiian vamp" (II7–V7–I) closing its phrases.
- **mande** (the griots of Mali, Guinea, Senegal and the Gambia, 6/8, 76–100 a dotted quarter):
  the kora's interlocking ostinato (GM's harp) under a ngoni's tune (GM's banjo, the lute it
  grew into), a balafon's patterns, a soft bass; the djembe's accompaniment over the dundun's two
  low strokes and the bell's 12/8 figure; major or lydian (the sauta tuning), I–IV–V and I–bVII.

Where GM has no drum of the idiom's own, the nearest keys stand in: the bombo's head is the low
bass drum (``kick_lo``, GM 35), the stick on its wooden rim the side stick (``rim``, GM 37), the
dhol's tilli the muted high conga, the polska's stamping foot the high floor tom (``tom_lo2``, GM 43,
no kit lane: no crash cymbal joins a fiddlers' dance). The hand-drummed styles humanise under 5 ms,
so the drummer's stray snare ghost stays out of them.
"""
from __future__ import annotations

from engine.compose import genres as G
from engine.compose.genres import A, B, C, D, L, PD, _g, _p

# --- fado ----------------------------------------------------------------------------------------------
_g(name="fado", family="folk",
   aliases=("fado", "fado de lisboa", "fado lisboeta", "fado de coimbra", "fadista",
            "portuguese guitar music", "portuguese fado", "amalia rodrigues"),
   bpm=(60, 84), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=10, vel_var=12,
   tone=-0.05, reverb=0.38, lead_density=0.7, intro_drums="none",
   parts=(_p("portuguese guitar", L, 25, "melody"), _p("classical guitar", C, 24),
          _p("acoustic bass", B, 32, level=0.7)),
   progressions={"minor": ("i iv V7 i", "i i V7 V7", "i iv i V7", "i VII III V7", "iv i V7 i", "i V7 V7 i"),
                 "major": ("I I V7 V7", "I IV V7 I", "I vi ii V7")},
   modes=("minor", "minor", "major"),
   # the baixo: root and fifth on one and three (the viola's thumb has every beat), a walk into the next chord
   bass_pats=("R.......5.......", "R.......5.....A.", "R.......8...5..."),
   # the viola: a full chord struck on the downbeat, then the thumb's bass on each beat and the chord
   # on each off-beat eighth (the 2/4 feel); the struck downbeat keeps the bar heard in four
   comp_pats=("X.x.b.x.b.x.b.x.", "X.x.b.x.X.x.b.x.", "X.xxb.x.b.xxb.x."),
   grooves=())

# --- bhangra ------------------------------------------------------------------------------------------
# the chaal in eighths: dhugg (bass stick: kick, a floor-tom boom) on 1, the and of 3 and 4; the
# tilli (the cane on the high side: a muted high conga's crack) on every eighth, accented with the dhugg
_g(name="bhangra", family="folk",
   aliases=("bhangra", "garba", "dandiya", "dandiya raas", "navratri", "dangdut", "dangdut koplo", "punjabi", "punjabi folk", "dhol beat", "dhol music", "bollywood", "filmi", "item song",
            "bhangra beat", "desi beat"),
   bpm=(90, 110), kit=0, fill="toms", bass="pats", form="song", swing=0.16, swing_unit=0.5, humanize_ms=4,
   vel_var=10, tone=0.35, reverb=0.2, lead_density=0.6, intro_drums="all",
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("tumbi", A, 106, "acid16"),
          _p("algoza", L, 73, "melody"), _p("harmonium", PD, 20, level=0.32)),
   progressions={"major": ("I I I I", "I I bVII I", "I IV I I", "I I V I"),
                 "mixolydian": ("I I bVII I", "I bVII I bVII", "I bVII IV I"),
                 "minor": ("i i i i", "i i VII i", "i iv i VII", "i VI VII i")},
   modes=("major", "mixolydian", "minor"), cadence_v=False,
   bass_pats=("R.........8.R...", "R.....R...R.5...", "R.........R.R.8."),
   grooves=({"kick": "X.........X.X...", "tom_lo": "X.........x.x...", "conga_mute": "X.x.x.x.x.X.X.x.",
             "tamb": "..x...x...x...x.", "clap+": "....X.......X..."},
            {"kick": "X.........X.X...", "conga_mute": "X.xrx.x.x.X.X.xr", "conga_lo": "......x.......x.",
             "rim+": "....X.......X..."},
            {"kick": "X..x..X.X..x..X.", "tom_lo": "...x.......x....", "conga_mute": "x.x.X.x.x.x.X.x.",
             "tamb": "x.x.x.x.x.x.x.x.", "clap+": "....X.......X..."}))

# --- the Andes ------------------------------------------------------------------------------------------
_g(name="huayno", family="latin",
   aliases=("huayno", "huaino", "wayno", "andean", "andino", "musica andina", "peruvian folk",
            "carnavalito", "andean folk", "andean music"),
   bpm=(100, 128), meter=(2, 4), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4,
   vel_var=10, tone=0.2, reverb=0.25, lead_density=0.7, intro_drums="all",
   parts=(_p("drums", D, 0, level=0.7), _p("bass", B, 32, level=0.75), _p("charango", C, 24, octave=1),
          _p("guitar", C, 24, pan=0.45), _p("quena", L, 73, "melody"), _p("zampona", L, 75, "sparse", pan=-0.4)),
   # pentatonic minor and its relative major, two bars a chord
   progressions={"minor": ("i i III III VII VII III III", "i i VII VII III III i i", "i i iv iv i i V7 V7",
                           "III III VII VII i i V7 i"),
                 "major": ("I I V V I I IV V", "I I IV IV V V I I")},
   modes=("minor", "minor", "major"),
   bass_pats=("R...5.5.", "R5--R.5.", "R...l.R."),
   # the strum: long–short–short on each beat, or the snap (a sixteenth and a dotted eighth) on one
   comp_pats=("S.suS.su", "Ss--S.su", "Ss--Ss--"),
   # the bombo: its beater (the low bass drum), the stick on its wooden rim; the chajchas in eighths and 16ths
   grooves=({"kick_lo": "X...X.x.", "rim": "..x...x.", "shaker": "x.xxx.xx"},
            {"kick_lo": "Xx..X...", "rim": "..xx..x.", "shaker": "xxxxxxxx"},
            {"kick_lo": "X..xX...", "rim": "....x.x.", "shaker": "x.x.x.x.", "conga_lo+": "..x...x."}))

# --- Argentina ----------------------------------------------------------------------------------------
# chacarera: 6/8 against 3/4. The bombo's rim (aro) on the dotted-quarter beats, its head (parche)
# on the 3/4's second and third quarters (the bar's one left open); the rasguido's chasquido (a
# short, accented stroke) on the second beat; the bass a 6/8 bar, then a 3/4
_g(name="chacarera", family="latin",
   aliases=("chacarera", "festejo", "afroperuano", "afro-peruvian", "lando", "bambuco", "cueca", "zamacueca", "cueca chilena", "marinera", "chacarera santiaguena", "chacarera doble", "zamba argentina", "argentine folk",
            "folklore argentino", "argentinian folk", "chamame", "chamame correntino", "chamamecero"),
   bpm=(84, 108), meter=(6, 8), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4,
   vel_var=10, tone=0.15, reverb=0.22, lead_density=0.6, intro_drums="all",
   parts=(_p("drums", D, 0, level=0.8), _p("bass", B, 32, level=0.65), _p("guitarra criolla", C, 24),
          _p("guitar", C, 24, pan=0.45), _p("violin", L, 40, "melody")),
   progressions={"minor": ("i V7 V7 i", "i iv V7 i", "i VII III V7", "iv i V7 i", "i i V7 i"),
                 "major": ("I V7 V7 I", "I IV V7 I")},
   modes=("minor", "minor", "major"),
   bass_pats=("R-----5-----R---5---8---", "R-----5-----", "R-----l-----R---l---R---"),
   comp_pats=("S.u.s.X.u.s.", "S.u.s.X.u.s.S...s...X.u.", "S.uSu.X.u.s."),
   grooves=({"rim": "X.....X.....", "kick_lo": "....X...x..."},
            {"rim": "X.....X.....X.....X.x...", "kick_lo": "....X...x.......X...x.r."},
            {"rim": "X.x...X.x...", "kick_lo": "....X...X..x", "floor+": "X..........."}))

# --- the Latin-American bolero (not Ravel's) ---------------------------------------------------------------
_g(name="bolero", family="latin",
   aliases=("bolero", "morna", "mornas", "morna cabo-verdiana", "morna caboverdiana", "cape verdean morna", "danzon", "danzonete", "danzon cubano",
            "bolero romantico", "trio romantico", "bolero cubano", "bolero ranchero",
            "los panchos", "trio los panchos", "bolero trio", "latin bolero", "pasillo", "pasillo ecuatoriano", "pasillo colombiano", "pasillos"),
   bpm=(66, 90), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4, vel_var=10,
   tone=-0.05, reverb=0.32, lead_density=0.5, intro_drums="all", chromatic_approach=True,
   parts=(_p("drums", D, 0, level=0.6), _p("upright bass", B, 32), _p("nylon guitar", C, 24),
          _p("guitar arpeggios", A, 24, "arp8", pan=0.45, level=0.4), _p("requinto", L, 25, "melody")),
   # the tonic a plain minor triad where a phrase rests on it (its minor seventh, held a bar, is the
   # subdominant's key: a bolero in A minor was heard in D minor)
   progressions={"minor": ("i iv V7 i", "i iv7 iih7 V7", "i VI7 iih7 V7", "iv7 V7 i VI7", "i i7 iv V7"),
                 "major": ("Imaj7 vi7 ii7 V7", "I I7 IV iv6", "Imaj7 #io7 ii7 V7", "ii7 V7 Imaj7 VI7")},
   modes=("minor", "major", "major"),
   bass_pats=("R.......5.......", "R.....5.R.......", "R.......5.....A."),
   # the rhythm guitar: its bass (the thumb) on one and three, strums on two, its and, and four
   comp_pats=("b...s.u.b...s...", "b...s.u.b...s.u.", "b.s.s.u.b.s.s.u."),
   # the bongó's martillo (the open tone on four), maracas, güiro; the drummer's cross-stick on the
   # son clave (3-2 or 2-3: the bar's own shape, heard over the beat-long figures); congas in the chorus
   grooves=({"bongo": "x.x.x.x.x.x.X.x.", "bongo_lo": "............x...", "maracas": "x.x.x.x.x.x.x.x.",
             "side": "x..x..x...x.x...", "guiro_long+": "x.......x......."},
            {"bongo": "x.xxx.x.x.xxx.x.", "bongo_lo": "......x.......x.", "maracas": "xxxxxxxxxxxxxxxx",
             "side": "..x.x...x..x..x.", "conga+": "......xx......xx"},
            {"bongo": "x.x.x.x.x.x.X.X.", "conga_lo": "x.......x.......", "conga": "......x.......x.",
             "maracas": "x.x.x.x.x.x.x.x.", "guiro": "x...x.x.x...x.x.", "side": "x..x..x.....x..."}))

# --- ragtime and stride -------------------------------------------------------------------------------
# 2/4: the left hand's bass note on each quarter (root, then the fifth below or the octave), its
# chord on each off-beat eighth — the first leaned on, the second often light and short, so the
# two-beat bar is heard and not an even run of oom-pahs; the right hand's syncopated tune; straight
_g(name="ragtime", family="jazz",
   aliases=("ragtime", "ragtime piano", "stride piano", "harlem stride", "joplin", "scott joplin",
            "piano rag", "maple leaf rag", "fats waller", "james p johnson"),
   bpm=(88, 124), meter=(2, 4), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4,
   vel_var=8, tone=0.15, reverb=0.2, lead_density=0.82, intro_drums="none",
   parts=(_p("piano", L, 0, "melody"), _p("left hand", C, 0, octave=-1), _p("piano bass", B, 0)),
   progressions={"major": ("I I V7 V7 I I7 IV iv", "I VI7 II7 V7", "I I II7 V7", "I I7 IV #ivo7 I V7 I I",
                           "IV IV I I II7 II7 V7 V7"),
                 "minor": ("i i V7 V7", "i iv V7 i", "i VI7 iih7 V7")},
   modes=("major", "major", "major", "minor"),
   bass_pats=("R...l...", "R...8...", "R...5..."),
   comp_pats=("..X...o.", "..X...x.", "..X...o."),
   grooves=())

# --- Sweden -------------------------------------------------------------------------------------------------
# the polska's lopsided three: the first beat short, the second heavy and long, the third light —
# in the bass and the comping; a stamping foot on one (the high floor tom), no kit
_g(name="polska", family="folk",
   aliases=("polska", "muzyka goralska", "goralska", "goral music", "podhale", "highlander music", "swedish polska", "polskas", "slangpolska", "scandinavian folk", "nordic folk",
            "swedish folk", "spelmanslag", "hambo", "hambopolka", "gammaldans", "logdans", "gammeldans"),
   bpm=(100, 126), meter=(3, 4), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=6,
   vel_var=10, tone=0.0, reverb=0.3, lead_density=0.75, intro_drums="none",
   parts=(_p("drums", D, 0, level=0.45), _p("upright bass", B, 32, level=0.6), _p("second fiddle", C, 40),
          _p("guitar", C, 24, "pats", pan=0.45), _p("fiddle", L, 110, "melody"),
          _p("nyckelharpa", L, 110, "sparse", pan=-0.4)),
   progressions={"minor": ("i i V7 V7 i iv V7 i", "i iv V7 i", "i VII III V7", "i i iv V7"),
                 "dorian": ("i IV i VII", "i i IV i"),
                 "major": ("I I V7 V7 I IV V7 I", "I IV V7 I")},
   modes=("minor", "minor", "dorian", "major"),
   bass_pats=("R...5-------", "R...R-----5.", "R...8-----5."),
   comp_pats=("x...X---x...", "....X---x.x.", "x...X-..x..."),
   grooves=({"tom_lo2": "x...........", "woodblock_lo": "....o......."},
            {"tom_lo2": "x.......o..."},
            {"tom_lo2": "x...o.......", "woodblock_lo": "....o...o..."}))

# --- soul jazz ------------------------------------------------------------------------------------------------
_g(name="soul jazz", chromatic_approach=True, family="jazz",
   aliases=("soul jazz", "soul-jazz", "organ trio", "jazz organ", "hammond jazz", "boogaloo jazz", "organ jazz",
            "jimmy smith", "organ combo", "hammond trio"),
   bpm=(84, 128), kit=32, fill="jazz", bass="walking", chords="comp", form="jazz", swing=0.3, swing_unit=0.5,
   humanize_ms=7, vel_var=10, tone=-0.1, reverb=0.22, lead_density=0.55, intro_drums="all",
   parts=(_p("drums", D, 32), _p("organ bass", B, 33, "walking"), _p("organ", C, 16), _p("guitar", C, 26, "skank"),
          _p("hammond organ", L, 16, "melody")),
   progressions={"major": ("I7 IV7 I7 V7", "I7 I7 IV7 IV7", "I7 IV7 I7 I7 IV7 IV7 I7 V7", "I7 VI7 ii7 V7"),
                 "minor": ("i7 iv7 i7 V7", "i7 i7 iv7 iv7", "i7 iv7 i7 i7 iv7 iv7 i7 V7"),
                 "dorian": ("i7 IV7 i7 i7", "i7 i7 IV7 i7")},
   modes=("major", "minor", "dorian"),
   # the organ's left hand: short stabs off the beat, a push into the next bar
   comp_pats=("..x.....x.....x.", "......x...x.....", "..x...x.......x."),
   # a backbeat under the ride's "ding, ding-a": the shuffle with a cross-stick, the boogaloo with
   # a conga (the organ records' guest), a slow one with the snare's pickups and the hat on every beat
   grooves=({"ride": "x...x.x.x...x.x.", "phat": "....x.......x...", "snare": "....X.......X.o.",
             "kick": "X.....x...x....."},
            {"ride": "x.x.x.x.x.x.x.x.", "rim": "....X.......X...", "kick": "X.....x...x.....",
             "conga": "..x..x.x..x..x.x", "conga_lo+": "x.......x......."},
            {"ride": "x...x.x.x...x.x.", "snare": "..o.X...o...X..o", "phat": "x...x...x...x...",
             "kick": "X..x......X....."}))

# --- big beat ---------------------------------------------------------------------------------------------------
_g(name="big beat", family="electronic",
   aliases=("big beat", "nu skool breaks", "nu-skool breaks", "nu school breaks", "nuskool breaks", "florida breaks", "breakbeat music", "bigbeat", "big-beat", "block rockin beats", "block rockin' beats", "fatboy slim",
            "chemical brothers", "the chemical brothers"),
   riffs=True, bpm=(122, 138), kit=16, fill="snare", bass="pats", chords="pats", form="edm", humanize_ms=3,
   vel_var=10, tone=0.45, reverb=0.2, lead_density=0.3, intro_drums="all", cadence_v=False,
   parts=(_p("drums", D, 16), _p("bass", B, 38), _p("acid", A, 87, "acid16"), _p("stabs", C, 62),
          _p("guitar", C, 29, "power", pan=0.5), _p("vocal", L, 85, "sparse")),
   progressions={"minor": ("i i i i", "i i VII VII", "i i iv i", "i VII i VI"),
                 "dorian": ("i7 i7 IV7 i7", "i7 IV7 i7 i7"),
                 "mixolydian": ("I I bVII IV", "I bVII I bVII")},
   modes=("minor", "dorian", "mixolydian"),
   bass_pats=("R.......R.R..8..", "R..R..R...R.8.5.", "R-..R-.8..R-..8."),
   comp_pats=("X.....X...X.....", "X..X......X..X..", "......X.......X."),
   # breaks: the kick pushing the and of three, ghosted snares, open hats on the off-beats; a
   # busier kick under ghost-note snare doubles; one with the floor tom answering the snare
   grooves=({"kick": "X.....X.X.X.....", "snare": "....X..o.o..X.o.", "ohat": "..x...x...x...x.",
             "chat": "x...x...x...x...", "crash+": "X..............."},
            {"kick": "X.X...X..X.X....", "snare": "....X.o.o...X.oo", "ohat": "..x...x...x...x.",
             "chat": "x.x.x.x.x.x.x.x.", "tamb+": "....x.......x..."},
            {"kick": "X.X.......XX....", "snare": "....X..o.o..X...", "chat": "x.x.x.x.x.x.x.x.",
             "floor": "......x.......x.", "tom_mid": "...........x..x.", "clap+": "....X.......X..."}))

# --- electro ------------------------------------------------------------------------------------------------
_g(name="electro", family="electronic",
   aliases=("electro", "electroclash", "electro-clash", "ghettotech", "ghetto tech", "ghetto-tech", "ghetto house", "booty house", "detroit electro", "electro funk", "electro-funk", "electrofunk", "old school electro",
            "miami bass", "booty bass", "planet rock", "drexciya", "cybotron", "electro breaks",
            # IDM and glitch grew out of electro's broken machine beats (Autechre, Aphex Twin)
            "idm", "intelligent dance music", "braindance", "glitch", "glitchy idm", "autechre", "aphex twin"),
   bpm=(112, 132), kit=25, fill="roll", bass="pats", chords="pats", form="edm", humanize_ms=1, vel_var=8,
   tone=0.25, reverb=0.18, lead_density=0.35, intro_drums="all", cadence_v=False,
   parts=(_p("drums", D, 25), _p("synth bass", B, 38), _p("arp", A, 81, "arp16", level=0.5),
          _p("stabs", C, 55, "stab"), _p("vocoder", L, 85, "sparse")),
   progressions={"minor": ("i i i i", "i i VI VII", "i iv i i", "i i VII VII"),
                 "phrygian": ("i i bII i", "i bII i i")},
   modes=("minor", "minor", "phrygian"),
   # the synth bass in 16ths, tied to the kick's syncopation and its octave jumps
   bass_pats=("R..R..R...R.R...", "R.8.R..R..8.R.R.", "R..R..8...R..8.5"),
   comp_pats=("X.....X.........", "X.........X.....", "X.....X...X....."),
   # the 808's electro beat (Planet Rock): the kick on one, the and of two and three's "e", the
   # clap and snare on two and four, 16th closed hats with accents, the cowbell's two-note answer
   grooves=({"kick": "X.....X...X..X..", "snare": "....X.......X...", "clap": "....X.......X...",
             "chat": "x.xxx.xxx.xxx.xx", "cowbell": "..x.......x.x...", "ohat+": "......x........."},
            {"kick": "X..X..X...X.X...", "snare": "....X.......X...", "clap": "....X.......X..x",
             "chat": "xxx.xxx.xxx.xxx.", "cowbell": "......x.......x."},
            {"kick": "X.....X.X.....X.", "snare": "....X.......X...", "rim": "..x.......x..x..",
             "chat": "x.xxx.xxx.xxx.xx", "cowbell": "x.....x...x.....", "ohat+": "..............x."}))

# --- biguine --------------------------------------------------------------------------------------------------
_g(name="biguine", family="caribbean",
   aliases=("biguine", "beguine", "old-time biguine", "old time biguine",
            "biguine martiniquaise", "biguine from martinique", "martinique",
            "guadeloupe", "stellio", "biguine jazz", "mazurka creole", "creole mazurka", "mazouk", "mazouk creole", "mazurka antillaise"),
   bpm=(104, 140), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=5, vel_var=10,
   tone=0.15, reverb=0.22, lead_density=0.8, intro_drums="all", chromatic_approach=True,
   parts=(_p("drums", D, 0, level=0.7), _p("tuba", B, 58), _p("banjo", C, 105), _p("piano", C, 0, pan=0.35),
          _p("clarinet", L, 71, "melody"), _p("trombone", L, 57, "sparse", pan=-0.4)),
   progressions={"major": ("I I V7 V7", "I I7 IV iv", "I VI7 II7 V7", "I V7 V7 I"),
                 "minor": ("i iv V7 i", "i i V7 V7", "i VI7 II7 V7")},
   modes=("major", "major", "minor"),
   # the bass's habanera-like "boom … ba-boom": one, the and of two, three
   bass_pats=("R.....5.R.......", "R.....5.R.....5.", "R.....l.R...5..."),
   # the banjo's chunk off the beat, the piano pushing the bar's second half
   comp_pats=("..x...x...x...x.", "..x..xx...x..xx.", "x.x...x.x.x...x."),
   # the tibwa's sticks (the woodblock) in the biguine's long-short-short over the drum's
   # bass on one and the and of two, the snare's press on four
   grooves=({"woodblock": "x..x..x.x..x..x.", "kick": "X.....x.X.......", "snare": "............x...",
             "chat": "x.x.x.x.x.x.x.x."},
            {"woodblock": "x.xx.xx.x.xx.xx.", "kick": "X.....x.X.......", "rim": "..x..x....x..x..",
             "snare": "............x...", "maracas": "x.x.x.x.x.x.x.x."},
            {"woodblock": "x..x..x.x..x..x.", "kick": "X.....x.X.......", "rim": "..x...x...x...x.",
             "ride": "x.x.x.x.x.x.x.x.", "crash+": "X..............."}))

# --- parang ---------------------------------------------------------------------------------------------------
_g(name="parang", family="caribbean",
   aliases=("parang", "trini parang", "trinidad parang", "parang music", "paseo", "aguinaldo",
            "parranda", "parang navideno", "soca parang"),
   bpm=(104, 128), kit=0, fill="none", bass="pats", chords="pats", form="song", humanize_ms=4, vel_var=10,
   tone=0.1, reverb=0.2, lead_density=0.75, intro_drums="all", intro_bars=2,
   parts=(_p("drums", D, 0, level=0.6), _p("box bass", B, 32), _p("cuatro", C, 24),
          _p("guitar", C, 25, pan=-0.4, level=0.6),
          _p("mandolin", L, 25, "melody", octave=1, pan=0.35)),
   progressions={"major": ("I I V7 V7", "I IV V7 I", "I I7 IV V7", "IV V7 I I"),
                 "minor": ("i iv V7 i", "i i V7 V7")},
   modes=("major", "major", "minor"),
   # the box bass on one and three, a pickup into the next chord
   bass_pats=("R.......5.......", "R.......5.....A.", "R.....5.R.......", "R...5...R...5..."),
   # the cuatro's rasgueo: down strums with the "chas" off the beat, up strums between
   comp_pats=("s.usX.u.s.usX.u.", "S.u.s.usS.u.s.us", "s.usS.usS.usS.u."),
   # no kit: maracas in eighths with the off-beat's lift, the scratcher, claves on the paseo's accents
   grooves=({"maracas": "x.X.x.X.x.X.x.X.", "guiro": "x...x.x.x...x.x.", "clave": "x.....x...x....."},
            {"maracas": "xxXxxxXxxxXxxxXx", "guiro": "x.x.x.x.x.x.x.x.", "clave": "x..x..x...x.x..."},
            {"maracas": "x.X.x.X.x.X.x.X.", "guiro_long": "x.......x.......", "clave": "..x...x...x...x.",
             "tamb+": "....x.......x..."}))

# --- zydeco and cajun -----------------------------------------------------------------------------------------
_g(name="zydeco", family="folk",
   aliases=("zydeco", "cajun", "louisiana", "cajun two-step", "zydeco two-step", "cajun dance hall",
            "creole la la", "la la", "bayou", "fais do-do", "zarico", "clifton chenier"),
   bpm=(112, 148), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=5, vel_var=9,
   tone=0.2, reverb=0.16, lead_density=0.85, intro_drums="all",
   parts=(_p("drums", D, 0, level=0.7), _p("bass", B, 33), _p("accordion", L, 21, "melody"),
          _p("guitar", C, 27, "chop8", pan=0.4), _p("fiddle", L, 110, "sparse", pan=-0.4)),
   progressions={"major": ("I I IV I", "I IV I V7", "I I V7 I", "I IV V7 I"),
                 "mixolydian": ("I bVII I I", "I I IV I")},
   modes=("major", "major", "mixolydian"),
   # the two-step's bass: root and fifth on the beats, a walk into the next chord
   bass_pats=("R...5...R...5...", "R...5...R...5.A.", "R.......5.......", "R...R...5...5..."),
   # the guitar's chop on the off-beats, a push into three
   comp_pats=("..x...x...x...x.", "..x...x.x.x...x.", "x.x...x.x.x...x."),
   # the frottoir (rubboard, the güiro's scrape) on every 16th or in the "chanka-chank", the
   # kick on every beat with its double-clutch pickup, the snare on two and four; the cajun
   # two-step's ti-fer (triangle) in eighths over a kick on one and three
   grooves=({"kick": "X...X...X...X...", "snare": "....X.......X..x", "guiro": "xxxxxxxxxxxxxxxx",
             "chat": "x.x.x.x.x.x.x.x.", "crash+": "X..............."},
            {"kick": "X..xX...X...X...", "snare": "....X.......X.x.", "guiro": "x.xxx.xxx.xxx.xx",
             "ride": "x.x.x.x.x.x.x.x."},
            {"kick": "X.......X.......", "rim": "....X.......X...", "triangle": "x.x.x.x.x.x.x.x.",
             "triangle_mute": ".x.x.x.x.x.x.x.x", "guiro_long": "x.......x......."}))

# --- the Levant: dabke, baladi, belly dance ------------------------------------------------------------
_g(name="arabic", family="arabic",
   aliases=("arabic", "rai algerien", "algerian", "algerian rai", "pop rai", "rai music", "persian music", "persian pop", "persian folk", "persian classical", "reng", "dastgah", "iranian music", "tasnif", "chaabi", "gnawa", "taarab", "arab", "arabic music", "middle eastern", "middle-eastern", "levantine", "dabke", "dabkeh",
            "debka", "dabka", "belly dance", "bellydance", "belly dancing", "raqs sharqi", "raks sharki",
            "baladi", "shaabi", "sha'bi", "maqsum", "saidi", "khaleeji", "egyptian", "lebanese", "syrian",
            "palestinian", "maqam", "arabic pop", "tarab", "oriental dance"),
   bpm=(96, 132), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=4, vel_var=9,
   tone=0.15, reverb=0.26, lead_density=0.85, intro_drums="all",
   parts=(_p("drums", D, 0), _p("bass", B, 33, level=0.8), _p("oud", C, 24), _p("qanun", A, 107, "harp", pan=0.4),
          _p("violin", L, 40, "melody"), _p("strings", PD, 48, pan=-0.3, level=0.7)),
   progressions={"freygish": ("I I II I", "I II I I", "I iv II I", "I I vii I"),
                 "minor": ("i i VII i", "i iv i V", "i VII VI V"), "major": ("I I V I", "I IV I V")},
   modes=("freygish", "freygish", "minor"),
   # the bass on the doums: one, its echo on the and, three
   bass_pats=("R.R.....R.......", "R.....R.R.......", "R...-...5...R..."),
   # the oud's strokes between the doums, on the teks
   comp_pats=("x.x...x.x...x.x.", "x.....x.....x.x.", "X...x.x.X...x.x."),
   # the darbuka's rhythms — doum (the low conga) and tek (the high bongo) — over the tabl (the low
   # bass drum) and the riq's jingles: the baladi (doum doum – tek doum – tek –), the dabke's stamp;
   # the maqsum (doum tek – tek doum – tek –); the saidi (doum tek – doum doum – tek –)
   grooves=({"conga_lo": "X.X.....X.......", "bongo": "......x.....x.x.", "kick_lo": "X.X.....X.......",
             "tamb": "x.x.x.x.x.x.x.x.", "clap+": "....x.......x..."},
            {"conga_lo": "X.......X.......", "bongo": "..x...x.....x...", "kick_lo": "X.......X.......",
             "tamb": "x.xxx.xxx.xxx.xx"},
            {"conga_lo": "X.....X.X.......", "bongo": "..x.........x...", "kick_lo": "X.....X.X.......",
             "tamb": "x...x...x...x...", "bongo_lo": "....x.........x."}))

# --- drum and chant -------------------------------------------------------------------------------------
# the Afro-Caribbean drum-and-voice traditions (Martinique's bèlè, Guadeloupe's gwoka, Puerto Rico's
# bomba) and the drum circle: no band, the hand drums and a singer's calls with the chorus holding
# the answer. The low drum keeps the pulse (the boula, the buleador), the high drum plays against it
# (the makè, the subidor), the sticks on the drum's side (the tibwa, the cuá) and a shaker
_g(name="drum and chant", family="caribbean",
   aliases=("drum and chant", "bele", "sware bele", "bele martiniquais", "bele drum", "gwoka", "gwo ka",
            "lewoz", "leewoz", "bomba", "bomba puertorriquena", "bomba sica", "drum circle", "djembe ensemble", "djembe circle", "sabar", "kumina"),
   bpm=(96, 126), kit=0, fill="none", bass="long", chords="block", form="calm", humanize_ms=9, vel_var=14,
   tone=0.0, reverb=0.3, lead_density=0.4, intro_drums="all",
   parts=(_p("drums", D, 0, level=0.75), _p("voice", L, 53, level=0.8), _p("chorus", PD, 52, level=0.7)),
   bass_pats=("R.......R.......", "R.....R.R......."),     # a bass only when one is named
   progressions={"major": ("I I V V", "I I IV V", "I V I V"), "minor": ("i i VII VII", "i VII i VII", "i i iv V")},
   modes=("minor", "major"),
   grooves=({"conga_lo": "X..x..X.X..x..X.", "conga": "..x.x.....x.x..x", "woodblock": "x.x.xx.x.x.xx.x.",
             "shaker": "x.xxx.xxx.xxx.xx"},
            {"conga_lo": "X.....X...X.....", "conga_mute": "..x.x...x...x.x.", "bongo": "......x.......xx",
             "woodblock": "x..x..x...x..x..", "shaker": "x.x.x.x.x.x.x.x."},
            {"conga_lo": "X..X....X..X....", "conga": ".x...x.x.x...x.x", "bongo_lo": "X.......X.......",
             "woodblock_lo": "x.xx.x.xx.xx.x.x"}))

# --- candombe --------------------------------------------------------------------------------------------
_g(name="candombe", family="latin",
   aliases=("candombe", "candombe beat", "comparsa", "llamadas", "uruguayan", "montevideo",
            "afro-uruguayan", "ruben rada", "murga"),
   bpm=(100, 132), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=4, vel_var=10,
   tone=0.1, reverb=0.2, lead_density=0.7, intro_drums="all",
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("piano", C, 0), _p("guitar", C, 27, pan=0.4),
          _p("lead", L, 26, "melody")),
   progressions={"minor": ("i iv VII III", "i i iv V", "i VI iv V"), "major": ("I vi ii V", "I IV ii V", "I I IV IV")},
   modes=("minor", "major"),
   # the bass locks to the piano drum: one, the a of two, three
   bass_pats=("R.....5.R.......", "R.....R.5...R...", "R.....5.R...5.A."),
   comp_pats=("..x..x....x..x..", "x..x..x...x.x...", "..x.x..x..x.x..x"),
   # the three drums of a comparsa and the madera (the stick on the drum's shell, the side stick):
   # the chico's steady ostinato between the beats (the high conga), the piano's low open strokes
   # (the low conga), the repique's calls (the bongo), the madera's clave
   grooves=({"rim": "x.x..x.x..x.x...", "conga": ".xx..xx..xx..xx.", "conga_lo": "X.....x.x.......",
             "bongo": "....x..x..x...x."},
            {"rim": "x.x..x.x..x.x...", "conga": ".xx..xx..xx..xx.", "conga_lo": "x.....X.x...x...",
             "conga_mute": "..x.......x.....", "kick_lo": "X.......X......."},
            {"rim": "x..x..x...x.x...", "conga": ".xx..xx..xx..xx.", "conga_lo": "X.....x.X.....x.",
             "bongo": "..x.x......x.x..", "chat": "x.x.x.x.x.x.x.x."}))

# --- enka ------------------------------------------------------------------------------------------------
_g(name="enka", family="pop",
   aliases=("enka", "kayokyoku", "kayou kyoku", "showa kayo", "showa enka", "mood kayo", "japanese ballad",
            "misora hibari", "japanese enka"),
   bpm=(64, 96), kit=0, fill="toms", bass="pats", chords="pats", form="song", humanize_ms=7, vel_var=9,
   tone=-0.1, reverb=0.45, lead_density=0.45, intro_drums="none", swing=0.12,
   parts=(_p("drums", D, 0, level=0.6), _p("bass", B, 33), _p("strings", PD, 48),
          _p("guitar", A, 27, "arp16", pan=0.4), _p("koto", A, 107, "harp", pan=-0.4),
          _p("shakuhachi", L, 77, "melody")),
   progressions={"minor": ("i iv V7 i", "i VI iv V7", "iv i V7 i", "i i iv V7"), "major": ("I vi IV V7", "I IV V7 I")},
   modes=("minor", "minor", "major"),
   bass_pats=("R.......5.......", "R.....5.R...5...", "R...5...R...5.A."),
   comp_pats=("x-------x-------", "x---x---x---x---"),
   # a slow ballad's soft kit, the drummer's lilt: the kick's push into three, the rim on two and four,
   # a shaker's long–short (the shuffled sixteenths of the "mood kayō"); the floor tom's pickup
   grooves=({"kick": "X.....x.X.......", "rim": "....x.......x...", "shaker": "x.xxx.xxx.xxx.xx",
             "tamb": "............x..."},
            {"kick": "X..x....X..x....", "snare": "....x.......x...", "ride": "x..xx..xx..xx..x"},
            {"kick": "X.......X.x.....", "rim": "....x..x....x...", "chat": "x..xx..xx..xx..x",
             "floor": "..............x."}))

# --- Hawaiian slack key ------------------------------------------------------------------------------------
for _w, _v in {"lap steel": (26, PD, "swell"), "lap steel guitar": (26, PD, "swell"),
               "slack key guitar": (25, L, "melody"), "slack-key guitar": (25, L, "melody")}.items():
    G.INSTRUMENTS.setdefault(_w, _v)
# kī hōʻalu (slack key): led by an open-tuned steel-string guitar — the tune on its high strings, a
# second guitar fingerpicking, a ukulele strumming, a lap steel's swells; no drums; major,
# unhurried, the "Hawaiian vamp" (II7–V7–I) closing its phrases
_g(name="slack key", family="folk",
   aliases=("slack key", "slack-key", "slack key guitar", "slack-key guitar", "ki hoalu", "kiho'alu", "ki ho'alu",
            "hawaiian", "hawaiian guitar", "hawaiian music", "hapa haole", "hula", "mele hula"),
   bpm=(72, 96), kit=40, fill="none", bass="pats", chords="pats", form="calm", humanize_ms=9, vel_var=9,
   tone=-0.15, reverb=0.3, lead_density=0.45, intro_drums="none", intro_bars=1,
   parts=(_p("fingerpicked guitar", C, 25, pan=-0.2), _p("ukulele", C, 24, pan=0.35, level=0.5),
          _p("upright bass", B, 32, level=0.45), _p("lap steel", PD, 26, "swell", level=0.4),
          _p("slack key guitar", L, 25, "melody")),
   progressions={"major": ("I IV I V7", "I I IV I", "I IV II7 V7", "I vi II7 V7", "IV I II7 V7"),
                 "mixolydian": ("I bVII IV I",)},
   modes=("major", "major", "major", "mixolydian"),
   bass_pats=("R.......5.......", "R.......R...5..."),
   # the thumb on every beat, the fingers on the ands; the ukulele's down-up strum
   comp_pats=("b.t.b.t.b.t.b.t.", "b..tb.t.b..tb.t.", "s...s.u..us.s.u."),
   grooves=())

# --- Mande: kora, balafon and ngoni ---------------------------------------------------------------------------
for _w, _v in {"ngoni": (105, L, "melody"), "n'goni": (105, L, "melody"), "koni": (105, L, "melody"),
               "kamale ngoni": (105, L, "melody")}.items():
    G.INSTRUMENTS.setdefault(_w, _v)
for _w in ("dunun", "dundun", "doundoun", "dunun drums", "sangban", "kenkeni", "dununba"):
    G.DRUM_WORDS.setdefault(_w, (None, {"kick_lo": "X.......X.......", "conga_lo": "....x.......x..."}, None))
# the griot's music: the kora's ostinato and the ngoni's tune over the djembe and the dunun, in a
# lilting six; major or lydian, the tonic and the chord a tone below it
_g(name="mande", family="african",
   aliases=("mande", "kuku rhythm", "kuku dance", "dununba", "west african dance", "djembe class", "manding", "mandingue", "mandinka", "mandinga", "malinke", "griot", "griots", "jeli", "djeli",
            "kora music", "musique mandingue", "wassoulou", "toumani diabate", "sona jobarteh", "ballake sissoko",
            "mory kante", "salif keita", "malian music", "musique malienne", "west african folk"),
   bpm=(76, 100), meter=(6, 8), kit=0, fill="none", bass="pats", chords="pats", form="calm", humanize_ms=6,
   vel_var=10, tone=0.05, reverb=0.25, lead_density=0.6, intro_drums="all", intro_bars=2,
   parts=(_p("drums", D, 0, level=0.6), _p("kora", A, 46, "harp", pan=-0.25),
          _p("balafon", A, 12, "arp8", pan=0.4, level=0.55), _p("bass", B, 32, level=0.45),
          _p("ngoni", L, 105, "melody", pan=0.15)),
   progressions={"major": ("I I IV I", "I IV I V", "I IV V IV", "I I bVII I"),
                 "lydian": ("I II I I", "I II I IV"), "minor": ("i i VII i", "i iv VII i")},
   modes=("major", "major", "lydian", "minor"),
   bass_pats=("R.....5.....", "R.....R...5.", "R...5.R....."),
   # the dundun's two low strokes, the djembe's tones and slaps, the bell's 12/8 figure
   grooves=({"kick_lo": "X.....x..x..", "conga": "..xx.x..xx.x", "conga_lo": "x.....x.....", "cowbell": "x.x.xx.x.x.x"},
            {"kick_lo": "X.......x.x.", "conga": "x.xx..x.xx..", "conga_mute": "...x.....x..", "shaker": "x.xx.xx.xx.x"},
            {"kick_lo": "X.....X...x.", "conga": ".xx.xx.xx.x.", "conga_lo": "x.....x.....", "agogo": "x.x.xx.x.x.x"}))


# --- gamelan ----------------------------------------------------------------------------------------
# Bali's and Java's bronze orchestra: the sarons' core melody (the balungan) a note a beat, the
# bonangs' interlocking sixteenths over it (kotekan), the pekings doubling high, the gong and
# kempul marking the cycle's ends, the kendang's drum patterns leading the tempo; pelog's five
# notes by their nearest mode (phrygian's), slendro's (the major's), a drone of one chord
_g(name="gamelan", family="asian",
   aliases=("gamelan", "gamelan kebyar", "kebyar", "gong kebyar", "balinese gamelan", "javanese gamelan",
            "gamelan orchestra", "gamelan ensemble", "gamelan music", "gamelan style", "gamelan-style", "gamelan degung", "degung", "gamelan gong", "pelog", "slendro", "kotekan", "jegog"),
   bpm=(72, 100), kit=0, fill="none", bass="pats", chords="pats", form="calm", humanize_ms=3, vel_var=8,
   tone=0.25, reverb=0.36, lead_density=0.5, intro_drums="all",
   parts=(_p("drums", D, 0, level=0.55), _p("gong", B, 14, octave=-1, level=0.85),
          _p("bonang", A, 12, "kotekan8", pan=-0.35, level=0.55), _p("peking", A, 9, "kotekan8", pan=0.4, octave=1, level=0.3),
          _p("saron", L, 11, "melody")),
   progressions={"phrygian": ("i i i i", "i i II i", "i i i VII"), "major": ("I I I I", "I I V I", "I I IV I"),
                 "minor": ("i i i i", "i i VII i")},
   modes=("phrygian", "phrygian", "major", "minor"),
   # the gong on the cycle's last beat held over, the kempul's stroke between
   bass_pats=("R---------------", "R-----------5---", "R---------------"),
   # the kendang: the low "dhe" (conga_lo) and the slapped "tak" (bongo), a ceng-ceng's clash in kebyar
   # (in even eighths and quarters: the kendang's dotted figures were heard as a beat of their own)
   grooves=({"conga_lo": "X.......X.......", "bongo": "..x...x...x...x.", "conga": "....x.......x..."},
            {"conga_lo": "X...x...X...x...", "bongo": "..x.x.x...x.x.x.", "chinese+": "X..............."},
            {"conga_lo": "X.......X...x...", "bongo": "....x...x.x.x...", "conga": "..x.......x....."}))
for _w, _v in {"saron": (11, L, ""), "sarons": (11, L, ""), "bonang": (12, A, "kotekan"), "bonangs": (12, A, "kotekan"),
               "gender wayang": (11, A, "kotekan"), "peking": (9, A, "kotekan8"), "kempul": (14, B, ""), "kenong": (14, B, ""),
               "rebab": (110, L, ""), "gangsa": (11, A, "kotekan"), "reyong": (12, A, "kotekan")}.items():
    G.INSTRUMENTS.setdefault(_w, _v)
