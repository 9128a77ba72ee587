"""styles.groove: pop, synthpop, k-pop, disco, funk, soul, r&b, gospel, Motown and jazz (combo, big band
swing, bebop, cool, the jazz waltz, lounge) — the style library's entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.

What makes each one itself (a player's view; the grooves are 16th steps, a 3/4 bar 12, a 12/8 bar 24):

- **pop**: the kick on one with 16th pushes, a backbeat doubled by a clap pickup, tambourine in
  the chorus, piano eighths and a 3+3+2 push, the four-chord loops. **synthpop** (synth-pop,
  electropop): the same songs on a drum machine and synthesizers — snare and clap together on the
  backbeat, machine 16th hats, a pulsing eighth-note synth bass, off-beat saw stabs, a square lead.
  **k-pop**: punchy power-kit drums that
  switch from a trap-hatted verse to a four-on-the-floor chorus, a square-wave hook (arp) in from
  the first bar, a bright saw lead, octave synth bass, polysynth stabs.
- **disco**: four on the floor, open hats on every off-beat, congas, octave bass, chopped 16th
  guitar, strings. **funk**: the one, 16th ghost notes on the snare, slap bass with dead notes, chicken-scratch
  guitar and clavinet, cowbell, horn riffs; dorian and dominant vamps.
- **soul** (Stax, neo soul): laid back, swung 16ths, rhodes and organ. **r&b** (contemporary):
  60–80 bpm with the backbeat on 2 and 4 of that slow bar (the half-time of a 120–160 groove)
  under 16th hats with 32nd and triplet rolls, sub-ish synth bass held across the bar, rhodes.
  **gospel**: handclaps on 2 and 4, organ and piano, choir, a walking-ish bass; **gospel ballad**:
  the 12/8 kind (a dotted-quarter beat, triplet piano, never swung). **motown**: tambourine and snare on
  all four beats (the Motown beat), melodic eighth-note bass with chromatic approaches, guitar
  chops on 2 and 4, strings.
- **jazz** (small combo): the ride's "ding, ding-a ding" with the hat on 2 and 4, walking bass,
  comping piano, sax. **swing** (big band): the bass drum feathering all four, brass-section
  hits, a sax section behind, lead trumpet, a Krupa tom groove. **bebop**: 180–260, bombs and
  snare chatter, the alto sax on bebop lines with the trumpet's answering tones over a fast
  walk. **cool jazz**: brushes (swirl and taps), muted trumpet, lighter swing. **jazz waltz**:
  3/4 swung, the ride "ding, ding-a, ding-a".
  **lounge**: easy ride or a cross-stick, two-beat bass, vibes and organ.
"""
from __future__ import annotations

from engine.compose import genres as G
from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

# --- words this family brings (never overriding an existing entry) ------------------------------------
for _w, _v in {"flugelhorn": (56, L, ""), "cornet": (56, L, ""), "walking bass": (32, B, "walking"),
               "wah guitar": (28, C, "funk16"), "wah-wah guitar": (28, C, "funk16"),
               "alto saxophone": (65, L, ""), "tenor saxophone": (66, L, ""), "soprano saxophone": (64, L, ""),
               "baritone saxophone": (67, L, ""), "bari sax": (67, L, ""), "horn section": (61, C, "stab"),
               "sax section": (66, C, "pad"), "hammond organ": (16, C, "")}.items():
    G.INSTRUMENTS.setdefault(_w, _v)
for _w, _v in {"cross-stick": (None, {"rim": "............x..."}, None),
               "cross stick": (None, {"rim": "............x..."}, None)}.items():
    G.DRUM_WORDS.setdefault(_w, _v)

#: soul's and jazz's shared tables, each progression touching home (a verse never loops off the tonic)
_SOUL = {"major": ("Imaj7 iii7 vi7 IVmaj7", "IVmaj7 iii7 ii7 Imaj7", "Imaj9 vi7 ii7 V9",
                   "ii7 iii7 IVmaj7 V7 Imaj7 vi7 ii7 V7"),
         "minor": SOUL["minor"]}
_JAZZ = {"major": ("ii7-V7 Imaj7 ii7-V7 Imaj7", "Imaj7 vi7 ii7 V7", "iii7 vi7 ii7 V7 Imaj7 VI7 ii7 V7",
                   "Imaj7 IV7 iii7-vi7 ii7-V7", "ii7 V9 Imaj7 VI7", "Imaj7-vi7 ii7-V7 iii7-VI7 ii7-V7"),
         "minor": ("iih7-V7 i7 iih7-V7 i7", "i7 iv7 iih7-V7 i7", "i7 VImaj7 iih7 V7", "i7 i7 iv7 V7",
                   "iv7 VII7 IIImaj7 VI7 iih7 V7 i7 i7")}
_POP = {"major": ("I V vi IV", "vi IV I V", "I vi IV V", "IV I V vi", "I V vi iii IV I IV V", "I iii IV V"),
        "minor": ("i VI III VII", "i VII VI VII", "VI VII i i", "i iv VI V", "i VI VII V")}

# --- pop ------------------------------------------------------------------------------------------------
_g(name="pop", family="pop",
   aliases=("pop", "sing-along", "singalong", "dream pop", "dreampop", "beach house", "baroque pop", "chamber pop", "emotional ballad", "love ballad", "opm", "original pilipino music", "pinoy pop", "v-pop", "vpop", "ye-ye", "yeye", "ye ye",
            "mandopop", "cantopop", "indie pop",
            "city pop", "bubblegum", "bubblegum pop", "top 40", "chart pop", "radio pop",
            "mainstream pop", "teen pop", "pop song", "pop music", "pop ballad", "k-ballad", "korean ballad", "balladeu", "hanguk ballad", "k-pop ballad", "kpop ballad"),
   bpm=(96, 122), kit=0, fill="toms", bass="pop8", chords="piano8", form="song", tone=0.3, reverb=0.25,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("piano", C, 0), _p("acoustic guitar", C, 25),
          _p("pad", PD, 89), _p("lead", L, 85)),
   progressions=_POP, modes=("major", "minor", "major"), intro_drums="hats",
   bass_pats=("R-R-R-R-R-R-5-A-", "R--R--R-R--R--8-", "R-----R-5---R-A-"),
   comp_pats=("x-x-x-x-x-x-x-x-", "X--x--x-X--x--x-", "x---x-x---x-x---"),
   grooves=({"kick": "X..x....X..x....", "snare": "....X.......X...", "clap": "....X.......X.x.",
             "chat": "xx.xxx.xxx.xxx.x", "tamb+": "....x.......x..."},
            {"kick": "X.....x.X..x....", "snare": "....X.......X...", "clap": "....X.......X.x.",
             "chat": "x.xxx.x.x.xxx.x.", "ohat+": "..............x."},
            {"kick": "X.....x...x..x..", "snare": "....X.......X...", "chat": "x...x...x...x...",
             "shaker": ".xx..xx..xx..xx.", "clap+": "....x.......x..."}))

# synth-pop and electropop: the pop song on synthesizers and a drum machine — a pulsing eighth-note
# synth bass, offbeat synth stabs, a pad and a square lead; the snare and clap together on the
# backbeat (a gated snare's crack), the machine's straight sixteenth hats
_g(name="synthpop", family="pop",
   aliases=("synthpop", "kraftwerk", "linndrum", "linn drum", "darkwave", "dark wave", "coldwave", "cold wave", "minimal wave", "synth pop", "synth-pop", "electropop", "electro pop", "electro-pop", "80s synthpop",
            "80s synth pop", "80s synth-pop", "depeche mode", "pet shop boys",
            "futurepop", "indietronica", "dance pop", "dance-pop", "hyperpop", "hyper pop"),
   bpm=(100, 128), kit=24, fill="toms", bass="drive8", chords="stab", form="song", humanize_ms=2, vel_var=4,
   tone=0.35, reverb=0.35,
   parts=(_p("drums", D, 24), _p("synth bass", B, 38), _p("synth", C, 81), _p("pad", PD, 89),
          _p("lead", L, 80)),
   progressions=_POP, modes=("minor", "major", "minor"), intro_drums="kick",
   bass_pats=("R.R.R.R.R.R.R.R.", "RRR.R.R.RRR.R.5.", "R.R.R.R.8.R.R.R."),
   comp_pats=("..x...x...x...x.", "x..x..x...x..x..", "..x.x...x.x...x."),
   grooves=({"kick": "X...X...X...X..x", "snare": "....X.......X...", "clap": "....X.......X...",
             "chat": "xxx.xxx.xxx.xxx.", "tom_mid": "..........x.x...", "tom_lo": "..............x."},
            {"kick": "X.......X.X...x.", "snare": "....X.......X...", "clap": "....X.......X...",
             "chat": "x.xxx.xxx.xxx.xx", "ohat+": "......x.......x."},
            {"kick": "X..X..X.X.......", "snare": "....X.......X..x", "clap": "....X.......X...",
             "chat": "xxxxxxxxxxxxxxxx", "cowbell": "x.....x.....x..."}))

_g(name="k-pop", family="pop",
   aliases=("k-pop", "kpop", "k pop", "korean pop", "idol pop", "kpop idol", "j-pop", "jpop", "j pop",
            "japanese pop", "anime opening", "anisong", "c-pop"),
   bpm=(100, 130), kit=16, fill="snare", bass="octave", chords="stab", form="edm", tone=0.6, reverb=0.2,
   humanize_ms=2, vel_var=6, lead_density=0.65, intro_drums="all", intro_bars=2,
   parts=(_p("drums", D, 16), _p("synth bass", B, 38), _p("polysynth", C, 90), _p("square hook", A, 80, "arp16"),
          _p("saw lead", L, 81), _p("pad", PD, 89)),
   progressions={"minor": ("i VI VII V", "VI VII i i", "i iv VII III", "i VI III VII", "iv V i i"),
                 "major": ("IV V iii vi IV V I I", "I V vi IV", "vi IV I V", "IV V vi I")},
   modes=("minor", "major", "minor"),
   bass_pats=("R--R--R-R-8-R-5-", "R.8.R.8.R.8.R.8A", "R-------R--R--8-"),
   comp_pats=("X..x..x...x.x...", "..x...x...x..xx.", "x-..x-..x-.x..x."),
   grooves=({"kick": "X..x..x...x.X...", "clap": "....X.......X...", "chat": "x.x.xxx.x.x.xxxr",
             "tom_hi": "..............x.", "snare+": "....X.......X...", "ohat+": "..............x."},
            {"kick": "X...X...X...X.x.", "clap": "....X.......X...", "snare": "....X.......X..x",
             "chat": "xxx.xxx.xxx.xxxr", "ohat+": "..x...x...x...x."},
            {"kick": "X...X...X...X.x.", "snare": "........X.......", "clap": "........X.......",
             "chat": "xxx.x.xxx.x.xtx.", "tom_hi": "..............x.", "hclap+": "....x.......x..."}))

_g(name="disco", family="pop",
   aliases=("disco", "eurobeat", "euro beat", "euro-beat", "para para", "parapara", "dance-punk", "dance punk", "disco punk", "disco-punk", "punk-funk", "punk funk", "schlager", "deutscher schlager", "schlagermusik", "discofox schlager", "disco polo", "nu disco", "nu-disco", "boogie", "italo disco", "italo", "hi-nrg", "hi nrg", "70s disco",
            "roller disco", "disco funk", "eurodisco", "euro disco"),
   bpm=(112, 124), kit=0, fill="toms", bass="octave", chords="chop8", form="song", humanize_ms=5, vel_var=8,
   tone=0.35, reverb=0.3,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 28), _p("strings", PD, 48),
          _p("piano", C, 0, "stab", pan=0.4), _p("brass", L, 61, "riff")),
   progressions={"major": ("Imaj7 ii7 iii7 ii7", "vi7 ii7 V7 Imaj7", "IVmaj7 V7 iii7 vi7 ii7 V7 Imaj7 Imaj7",
                           "Imaj7 vi7 ii7 V7"),
                 "dorian": ("i7 IV7 i7 i7", "i7 ii7 i7 IV7"),
                 "minor": ("i7 iv7 i7 iv7", "i7 VII7 VI7 V7", "i7 iv7 VII7 IIImaj7")},
   modes=("major", "minor", "dorian"), intro_drums="kick",
   bass_pats=("R-8-R-8-R-8-R-8-", "R.8.R.8.5.8.R.8A", "R-8-R-8-3-8-5-8-"),
   grooves=({"kick": "X...X...X...X...", "snare": "....X.......X...", "chat": "xx..xx..xx..xx..",
             "ohat": "..X...X...X...X.", "conga": "x..x..x.x..x..x.", "tamb+": "..x...x...x...x."},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "chat": "x..xx..xx..xx..x",
             "ohat": "..x...x...x...x.", "conga": "x..x..x.x..x..x.", "clap+": "....x.......x..."},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "chat": "xx.xxx.xxx.xxx.x",
             "ohat": "..x...x...x...x.", "conga": "x..x..x.x..x..x.", "cowbell+": "..x...x...x...x."}))

# --- funk, soul, r&b, gospel, motown --------------------------------------------------------------------
_g(name="funk", chromatic_approach=True, family="soul",
   aliases=("funk", "earth wind and fire", "earth wind & fire", "earth, wind & fire", "earth, wind and fire", "ewf", "headhunters", "herbie hancock", "blaxploitation",
            "psychedelic soul", "psych soul", "minneapolis sound", "funky", "go-go", "p-funk", "boogaloo", "jazz funk", "jazz-funk", "70s funk", "slap funk",
            "funk groove", "minneapolis funk", "new orleans funk",
            "jazz fusion", "jazz rock", "jazz-rock", "fusion jazz", "80s synth funk",
            # acid jazz (Jamiroquai, Brand New Heavies): a funk band with a jazz horn ("incognito",
            # the band's name, is an English word first)
            "acid jazz", "acid-jazz", "jamiroquai"),
   bpm=(94, 112), kit=0, fill="snare", bass="funk", chords="funk16", form="song", swing=0.06, swing_unit=0.25,
   humanize_ms=6, vel_var=14, tone=0.3, reverb=0.15,
   # the fingered electric bass of James Brown's, the Meters' and Motown's players; slap (36) when asked
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("guitar", C, 28), _p("clavinet", C, 7, "funk16", pan=0.45),
          _p("brass", L, 61, "riff")),
   progressions={**BLUES, "dorian": ("i7 IV7 i7 i7", "i7 i7 IV7 i7", "i9 i9 IV9 i9", "i7 i7 VII7 IV7")},
   modes=("mixolydian", "dorian", "minor", "dorian"),
   bass_pats=("R..R.g8.R..7.g5A", "R-.g.R8..R.g7-.5", "R.g8.R..g.R.8.7."),
   comp_pats=("o.xo.ox.o.xo.oxo", ".xX..x.x.xX..x.x", "X.ooX.o.o.ooX.o."),
   grooves=({"kick": "X..X...X..X.....", "snare": ".o..X..o.o..X.o.", "chat": "x.x.x.xxx.x.x.xx",
             "cowbell": "x.x.x.x.x.x.x.x.", "ohat+": "..............x."},
            {"kick": "X..X...X..X.....", "snare": ".o..X..o.o..X.o.", "chat": "x.xxx.xxx.xxx.x.",
             "ohat": "......x.........", "cowbell": "x.x.x.x.x.x.x.x."},
            {"kick": "X.X.......X..X..", "snare": ".o..X..o.o..X.o.", "chat": "XoxoXoxoXoxoXoxo",
             "cowbell": "x...x...x...x...", "tamb+": "....x.......x..."}))

_g(name="soul", chromatic_approach=True, family="soul",
   aliases=("soul", "neo soul", "neo-soul", "southern soul", "memphis soul", "stax", "philly soul", "deep soul",
            "classic soul", "retro soul", "blue-eyed soul", "soul music", "60s soul", "70s soul", "soul ballad"),
   bpm=(66, 96), kit=0, fill="toms", bass="soul", chords="soul", form="song", swing=0.1, swing_unit=0.25,
   humanize_ms=8, vel_var=10, laid_back_ms=8, tone=-0.2, reverb=0.25,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("rhodes", C, 4), _p("organ", PD, 16),
          _p("guitar", C, 27, "skank"), _p("lead", L, 65, "melody")),
   progressions=_SOUL, modes=("major", "minor", "dorian"), lead_density=0.35,
   grooves=({"kick": "X......xX.......", "snare": "....X.......X...", "rim": "..o.......o.....",
             "chat": "x..xx..xx..xx..x", "tamb+": "....x.......x..."},
            {"kick": "X......xX.......", "snare": "....X.......X...", "rim": "..o.......o.....",
             "ride": "x...x.x.x...x.x."},
            {"kick": "X..x......x.....", "snare": "....X.......X...", "rim": "..o.......o.....",
             "chat": "x.x.x.xxx.x.x.xx", "tamb+": "..x...x...x...x."}))

_g(name="r&b", chromatic_approach=True, family="soul",
   aliases=("r&b", "west coast swing", "trap soul", "trap-soul", "rnb", "r and b", "r'n'b", "r n b", "r & b", "rhythm and blues", "contemporary r&b",
            "90s r&b", "alt r&b", "alternative r&b", "slow jam", "quiet storm", "trapsoul", "bedroom r&b"),
   bpm=(60, 80), kit=25, fill="roll", bass="long", chords="soul", form="song", swing=0.08, swing_unit=0.25,
   humanize_ms=6, vel_var=10, laid_back_ms=10, tone=-0.3, reverb=0.32, lead_density=0.4, intro_drums="hats",
   intro_bars=1,
   parts=(_p("drums", D, 25), _p("synth bass", B, 38), _p("electric piano", C, 4), _p("pad", PD, 89),
          _p("lead", L, 54, "melody")),
   progressions={"major": ("Imaj9 vi9 ii9 V9", "IVmaj7 iii7 vi7 Imaj7", "Imaj7 iii7 IVmaj7 iv7", "ii9 V9 Imaj9 vi9"),
                 "minor": ("i9 iv9 VImaj7 V7", "i7 VImaj7 iv7 V7", "i9 i9 iv9 VII7", "VImaj7 VII7 i9 i9")},
   modes=("minor", "major", "minor"),
   bass_pats=("R-------...R--A-", "R-----.R--5-----", "R---------.R-8-A"),
   comp_pats=("x-------x-----..", "x-----x---x-----", "..x-----..x-----"),
   grooves=({"kick": "X......x..X.....", "clap": "....X.......X...", "rim": "...x......x.....",
             "chat": "x.x.xrx.x.x.xtxx", "snare+": "....x.......x..."},
            {"kick": "X.........X..x..", "clap": "....X.......X...", "rim": "...x......x.....",
             "chat": "xrx.x.xrx.x.xtx.", "ohat+": "..............x."},
            {"kick": "X..x......x..x..", "clap": "....X.......X...", "rim": "...x......x.....",
             "chat": "xxxxxxrxxxxxxxtx", "ohat+": "..............x."}))

# new jack swing (Teddy Riley, 1987–93): a drum machine swung in 16ths at 100–115, a hard snare and
# clap on two and four, the kick pushed onto the "a" of two and the "and" of three, syncopated synth
# bass, synth-brass stabs and gospel-minor ninths on an electric piano
_g(name="new jack swing", chromatic_approach=True, family="soul",
   aliases=("new jack swing", "new jack", "njs", "swingbeat", "teddy riley"),
   bpm=(98, 114), kit=25, fill="snare", bass="pats", chords="pats", form="song", swing=0.2, swing_unit=0.25,
   humanize_ms=2, vel_var=8, tone=0.2, reverb=0.18, lead_density=0.45, intro_drums="all",
   parts=(_p("drums", D, 25), _p("synth bass", B, 38), _p("stabs", C, 62, "pats", level=0.8),
          _p("electric piano", PD, 4, "pad"), _p("lead", L, 80, "melody")),
   progressions={"minor": ("i9 iv9 i9 iv9", "i7 VI7 VII7 i7", "i9 i9 VII9 VI7", "iv9 V7 i9 i9"),
                 "dorian": ("i9 IV9 i9 i9", "i7 IV7 VII7 i7"),
                 "major": ("Imaj9 IV9 Imaj9 IV9", "ii9 V9 Imaj9 vi9")},
   modes=("minor", "dorian", "major"),
   bass_pats=("R..R..5.R.....A.", "R.....R...8.5.R.", "R..R....R..5..R.", "R-.R..g.R-..5.A."),
   comp_pats=("..X...x...X..x..", "X..x..x.....X...", "......X.X.....x."),
   grooves=({"kick": "X.....X...X..X..", "snare": "....X.......X...", "clap": "....X.......X...",
             "chat": "xxxxxxxxxxxxxxxx", "ohat+": "..............x."},
            {"kick": "X..X......X.X...", "snare": "....X..o....X...", "clap": "....X.......X...",
             "chat": "x.xxx.xxx.xxx.xx", "tamb+": "....x.......x..."},
            {"kick": "X..X....X.X..X..", "snare": "....X......oX..o", "clap": "....X.......X...",
             "chat": "x.x.x.x.x.x.x.x.", "tamb": "..x...x...x...x."}))

_g(name="gospel", chromatic_approach=True, family="soul",
   aliases=("gospel", "black gospel", "gospel choir", "praise break", "sunday service", "gospel music",
            "church gospel", "praise and worship", "gospel shout", "shout music"),
   bpm=(84, 116), kit=0, fill="toms", bass="soul", chords="piano8", form="song", swing=0.1, swing_unit=0.25,
   humanize_ms=6, vel_var=12, laid_back_ms=4, tone=0.1, reverb=0.4, lead_density=0.4, intro_drums="hats",
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("organ", C, 16), _p("piano", C, 0), _p("choir", PD, 52),
          _p("lead", L, 53, "melody")),
   progressions={"major": ("I I7 IV #ivo7", "I vi7 ii7 V7", "IV V7 iii7 vi7 ii7 V7 I I", "I IV I V7",
                           "Imaj7 I7 IVmaj7 iv6"),
                 "minor": ("i iv7 VII7 IIImaj7", "i7 iv7 v7 i7", "i VI iv V7", "i7 iv7 VI V7")},
   modes=("major", "major", "minor"),
   bass_pats=("R-..R-3-5-..6-A-", "R---8-5-3-R-2-A-", "R-gRR-8-5-gR5-A-"),
   comp_pats=("X-----x-..x-x---", "x---x-x-----x-x-", "X-..x-..X-..x-x-"),
   grooves=({"kick": "X.x...x.X.x...x.", "snare": "....X..o.o..X.oo", "clap": "....X.......X...",
             "ride": "x..xx..xx..xx..x", "tamb+": "x...x...x...x..."},
            {"kick": "X..x..x.X.....x.", "snare": "....X..o.o..X.oo", "clap": "....X.......X...",
             "ride": "x.xxx.xxx.xxx.xx", "ohat+": "..............x."},
            {"kick": "X.x.....X.x.x...", "snare": "....X..o.o..X.oo", "clap": "....X.......X...",
             "chat": "xxxxxxxxxxxxxxxx", "tamb+": "x...x...x...x..."}))

# 12/8: four dotted-quarter beats of three eighths (6 steps each); the backbeat on 2 and 4. The range
# is in dotted quarters and sits high on purpose: the word "ballad" (a mood) slows it by 0.72, so
# "gospel ballad" lands at about 46–60 a dotted quarter, the tempo of a 12/8 church ballad
_g(name="gospel ballad", family="soul", meter=(12, 8),
   aliases=("gospel ballad", "slow gospel", "gospel hymn", "church ballad"),
   bpm=(64, 84), kit=0, fill="toms", bass="soul", chords="soul", form="calm", swing=0.0, humanize_ms=7, vel_var=10,
   laid_back_ms=6, tone=-0.05, reverb=0.45, lead_density=0.3, intro_drums="hats", intro_bars=1,
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("piano", C, 0), _p("organ", PD, 16), _p("choir", PD, 52),
          _p("lead", L, 53, "melody")),
   progressions={"major": ("I IV I V7", "I iii7 IV V7", "I I7 IV iv6", "IV V7 I vi7"),
                 "minor": ("i iv7 VII7 i", "i VI iv V7", "i7 iv7 i7 V7")},
   modes=("major", "major", "minor"),
   bass_pats=("R-----5-----R---8-5---A-", "R---R-3-----5-----6-A---"),
   comp_pats=("X.x.x.x.x.x.X.x.x.x.x.x.", "x-----x---x-x-----x-x-x-"),
   grooves=({"kick": "X.........x.X.........x.", "snare": "......X...........X.....",
             "clap": "......X...........X.....", "chat": "x...x.x...x.x...x.x...x."},
            {"kick": "X...x.......X...x.......", "snare": "......X.........o.X.....",
             "ride": "x.....x.....x.....x.....", "tamb": "......x...........x....."}))

_g(name="motown", chromatic_approach=True, family="soul",
   aliases=("motown", "carolina beach music", "shag music", "motown soul", "detroit soul", "hitsville", "60s motown", "northern soul", "girl group",
            "motown sound"),
   bpm=(104, 132), kit=0, fill="snare", bass="octave", chords="piano8", form="song", humanize_ms=6, vel_var=10,
   tone=0.15, reverb=0.3, lead_density=0.45, intro_drums="all",
   parts=(_p("drums", D, 0), _p("bass", B, 33), _p("piano", C, 0), _p("guitar", C, 27, "skank"),
          _p("strings", PD, 48), _p("tenor sax", L, 66, "melody")),
   progressions={"major": ("I vi IV V", "I IV I V7", "I iii IV V7", "I vi ii7 V7", "IV V I vi"),
                 "minor": ("i iv VII III", "i VI VII V7", "i7 iv7 VII7 V7")},
   modes=("major", "major", "minor"),
   bass_pats=("R-R-5-6-8-6-5-A-", "R-.R3-5-8-.85-A-", "R--R5-3-R--R5-A-"),
   comp_pats=("x-..x-..x-..x-..", "x-.xx-..x-.xx-.."),
   grooves=({"kick": "X..x..x.X..x....", "snare": "x...X...x...X..x", "tamb": "x...x...x...x...",
             "chat+": "..x...x...x...x."},
            {"kick": "X...X...X...X...", "snare": "x...X...x...X...", "tamb": "x...x...x...x...",
             "clap+": "....x.......x..."},
            {"kick": "X.x...x.X.x...x.", "snare": "x...X...x...X..x", "tamb": "x...x...x...x...",
             "chat": "..xx..xx..xx..xx"}))

# doo-wop (1950s vocal-group ballad): 12/8, the pianist's repeated triplet chords (they carry the
# eighths: the drummer keeps light time, the beat on the hat with a cross-stick and hand claps on 2
# and 4, or the ride's triplets only into the backbeat), "I vi IV V" (the fifties progression), a group's "ooh" behind a
# tenor sax. The range is in dotted quarters and sits high: "ballad" (×0.72) lands at 50–62.
_g(name="doo-wop", family="pop", meter=(12, 8),
   aliases=("doo-wop", "swamp pop", "doo wop", "doowop", "do-wop", "du-wop", "doo-whop", "doo wap", "street corner harmony",
            "vocal group harmony", "50s ballad", "fifties ballad", "1950s ballad", "oldies ballad", "oldies"),
   bpm=(72, 88), kit=0, fill="snare", bass="pats", chords="pats", form="song", humanize_ms=6, vel_var=10,
   tone=0.0, reverb=0.4, lead_density=0.35, intro_drums="all", intro_bars=1,
   parts=(_p("drums", D, 0, level=0.6), _p("upright bass", B, 32), _p("piano", C, 0), _p("oohs", PD, 53),
          _p("tenor sax", L, 66, "melody")),
   progressions={"major": ("I vi IV V7", "I vi ii7 V7", "I vi IV V7 I vi IV I", "IV V7 I vi"),
                 "minor": ("i VI iv V7", "i iv VII III", "i VI iv V7")},
   modes=("major", "major", "major", "minor"),
   bass_pats=("R-----3-----5-----6-----", "R-----5-----R-----A-----", "R-----3-----5---6-5-A---"),
   comp_pats=("X.x.x.X.x.x.X.x.x.X.x.x.", "X.x.x.x.x.x.X.x.x.x.x.x."),
   grooves=({"kick": "X...........X...........", "rim": "......X...........X.....",
             "chat": "x.....x.....x.....x.....", "clap": "......x...........x....."},
            {"kick": "X...........X...........", "snare": "......X...........X.....",
             "ride": "x.....x.x.x.x.....x.x.x.", "tamb": "......x...........x....."}))

# --- jazz ------------------------------------------------------------------------------------------------
_BEBOP = {"major": ("Imaj7-vi7 ii7-V7 iii7-VI7 ii7-V7", "ii7-V7 Imaj7 ii7-V7 Imaj7",
                    "I7 IV7 I7 v7-I7 IV7 #ivo7 iii7-VI7 ii7-V7", "Imaj7 vi7 ii7 V7", "iii7-VI7 ii7-V7 Imaj7 VI7"),
          "minor": ("i7 iih7-V7 i7 iih7-V7", "i7 iv7 iih7-V7 i7", "i7 VImaj7 iih7 V7",
                    "i7-iv7 VII7-IIImaj7 iih7-V7 i7")}

_g(name="jazz", chromatic_approach=True, family="jazz",
   aliases=("jazz", "jaz", "jaaz", "jazzz", "ii-v-i", "ii–v–i", "ii v i", "ii-v-i drill", "ii–v–i drill", "two-five-one", "two five one", "m-base", "mbase", "indo-jazz", "indo jazz", "dark jazz", "doom jazz", "third stream", "third-stream", "jazzy", "jazz trio", "jazz quartet", "jazz combo", "hard bop", "jazz club", "jazz standard",
            "straight ahead jazz", "straight-ahead jazz", "modal jazz", "post-bop", "post bop", "jazz ballad"),
   bpm=(110, 170), kit=32, fill="jazz", bass="walking", chords="comp", form="jazz", swing=0.33,
   swing_unit=0.5, humanize_ms=9, vel_var=12, tone=-0.3, reverb=0.25,
   parts=(_p("drums", D, 32), _p("upright bass", B, 32), _p("piano", C, 0), _p("sax", L, 65, "bebop")),
   progressions=_JAZZ, modes=("major", "minor", "dorian"), lead_density=0.6, intro_drums="all", cadence_v=True,
   grooves=({"ride": "x...X.x.x...X.x.", "phat": "....x.......x...", "kick": "o.........o.....",
             "snare": "..?...?..?....?."},
            {"ride": "x...X.x.x...X.xo", "phat": "....x.......x...", "kick": "o.......o.......",
             "rim": "......?.......x."},
            {"ride": "x...X.x.x...X.x.", "phat": "....x.......x...", "kick": "?...?.....o.....",
             "snare": "...........x..?."},
            # in three (a jazz prompt in 3/4 that is no jazz waltz): the ride in three, the hat on two and three,
            {"ride": "x...x...x...", "phat": "....x...x...", "kick": "o...........", "rim": "........x..."}))

# New Orleans: a two-beat tuba, the banjo's chunk on every beat, the front line's three voices at once
# (trumpet lead, clarinet above, trombone below), press rolls and woodblock on the kit
_g(name="dixieland", chromatic_approach=True, family="jazz",
   aliases=("dixieland", "charleston", "20s charleston", "the charleston", "flapper", "flapper jazz", "speakeasy", "dixie", "dixieland jazz", "new orleans jazz", "new orleans", "trad jazz",
            "traditional jazz", "hot jazz", "early jazz", "1920s jazz", "20s jazz", "roaring twenties",
            "second line", "preservation hall", "storyville", "jazz funeral", "chicago jazz"),
   bpm=(150, 210), kit=32, fill="jazz", bass="pats", chords="pats", form="jazz", swing=0.28, swing_unit=0.5,
   humanize_ms=7, vel_var=10, tone=0.2, reverb=0.2, lead_density=0.7, intro_drums="all",
   parts=(_p("drums", D, 32), _p("tuba", B, 58), _p("banjo", C, 105), _p("trumpet", L, 56, "melody"),
          _p("clarinet", L, 71, "melody", pan=0.4), _p("trombone", L, 57, "melody", pan=-0.4)),
   progressions={"major": ("I I V7 V7", "I I7 IV iv", "I VI7 II7 V7", "I V7 V7 I", "IV IV I I"),
                 "minor": ("i i V7 V7", "i iv V7 i")},
   modes=("major", "major", "minor"),
   bass_pats=("R.......5.......", "R.......5.....A.", "R.......l......."),
   comp_pats=("x...X...x...X...", "x...X...x...X.x."),
   # the parade drummer: press rolls leading into two and four over a two-beat kick, woodblock on the
   # beats; the snare's marching eighths over four on the floor
   grooves=({"kick": "X.......X.......", "snare": "..r.X.o...r.X.o.", "woodblock": "x...x...x...x..."},
            {"kick": "X...X...X...X...", "snare": "x.x.x.x.x.x.x.x.", "phat": "....x.......x..."}))

_g(name="swing", chromatic_approach=True, family="jazz",
   aliases=("swing", "quickstep", "foxtrot", "fox trot", "fox-trot", "slow foxtrot", "slowfox", "electro swing", "electroswing",
            "big band", "big-band", "big band jazz", "swing era", "swing band", "swing jazz", "lindy hop",
            "lindy", "jitterbug", "jive", "dance band", "jump swing"),
   bpm=(132, 196), kit=32, fill="jazz", bass="walking", chords="stab", form="jazz", swing=0.3, swing_unit=0.5,
   humanize_ms=7, vel_var=10, tone=0.1, reverb=0.3, lead_density=0.55, intro_drums="all",
   parts=(_p("drums", D, 32), _p("upright bass", B, 32), _p("brass section", C, 61), _p("saxes", C, 66, "pad"),
          _p("piano", C, 0, "comp", pan=-0.5), _p("trumpet", L, 56, "melody")),
   progressions={"major": ("Imaj7 vi7 ii7 V7", "I6 I6 ii7 V7", "I7 IV7 I7 V7", "ii7-V7 I6 ii7-V7 I6", "I6 VI7 II7 V7"),
                 "minor": ("i6 iv7 i6 V7", "i7 iv7 iih7 V7", "i6 VI7 iih7 V7")},
   modes=("major", "major", "minor"),
   comp_pats=("..X.....X.....x.", "X-----..x-....X-", "......X-..X-..x.", "x.....x.x.....X-"),
   grooves=({"ride": "x...x.x.x...x.x.", "phat": "....x.......x...", "kick": "x...x...x...x...",
             "snare": "..........o.....", "crash+": "X..............."},
            {"chat": "x...X.x.x...X.x.", "kick": "x...x...x...x...", "rim": "....x.......x...",
             "ride+": "x.x.x.x.x.x.x.x."},
            {"floor": "X..xX..xX..xX..x", "kick": "x...x...x...x...", "phat": "....x.......x...",
             "snare+": "....X.......X..."}))

_g(name="bebop", chromatic_approach=True, family="jazz",
   aliases=("bebop", "be-bop", "be bop", "bop jazz", "fast jazz", "bebop jazz", "uptempo jazz", "up-tempo jazz"),
   bpm=(184, 256), kit=32, fill="jazz", bass="walking", chords="comp", form="jazz", swing=0.25, swing_unit=0.5,
   humanize_ms=5, vel_var=12, tone=0.0, reverb=0.2, lead_density=0.75, intro_drums="all",
   parts=(_p("drums", D, 32), _p("upright bass", B, 32), _p("piano", C, 0), _p("alto sax", L, 65, "bebop"),
          _p("trumpet", L, 56, "sparse", pan=-0.3)),
   progressions=_BEBOP, modes=("major", "major", "minor"),
   grooves=({"ride": "x...x.x.x...x.x.", "phat": "....x.......x...", "snare": "......o...x...o.",
             "kick": "o..........x...."},
            {"ride": "x.x.x.x.x.x.x.x.", "phat": "....x.......x...", "snare": "..o...o...x...o.",
             "kick": "...........X...."},
            {"ride": "x...x...x...x...", "phat": "....x.......x...", "snare": "..x...o.....o.x.",
             "kick": "......x........."}))

_g(name="cool jazz", chromatic_approach=True, family="jazz",
   aliases=("cool jazz", "west coast jazz", "west-coast jazz", "birth of the cool", "chamber jazz", "cool school",
            "brush jazz", "like take five", "like take 5", "take five style", "take five vibe", "take five feel",
            "brubeck", "dave brubeck", "paul desmond"),
   bpm=(110, 140), kit=40, fill="jazz", bass="walking", chords="comp", form="jazz", swing=0.26, swing_unit=0.5,
   humanize_ms=8, vel_var=9, tone=-0.5, reverb=0.3, lead_density=0.4, intro_drums="all",
   parts=(_p("drums", D, 40), _p("upright bass", B, 32), _p("piano", C, 0), _p("muted trumpet", L, 59, "melody")),
   progressions={"major": ("Imaj7 vi7 ii7 V7", "Imaj7 IVmaj7 iii7 VI7", "ii7 V7 Imaj7 IVmaj7", "Imaj7 bVII7 Imaj7 V7"),
                 "minor": ("i7 iv7 i7 V7", "i7 VImaj7 iih7 V7", "i7 ii7 i7 iv7"),
                 "dorian": ("i7 IV7 i7 i7", "i7 i7 bIII7 ii7")},
   modes=("major", "minor", "dorian"),
   grooves=({"swirl": "x.......x.......", "snare": "....x.x.....x.x.", "phat": "....x.......x...",
             "kick": "o.......o......."},
            {"swirl": "x.......x.......", "snare": "x...x.x.x...x.x.", "phat": "....x.......x..."},
            {"swirl": "x...x...x...x...", "snare": "......o.....x...", "kick": "o..............."}))

_g(name="jazz waltz", chromatic_approach=True, family="jazz", meter=(3, 4),
   aliases=("jazz waltz", "waltz for debby", "waltz for debbie", "waltz jazz", "jazz in three", "jazz-waltz", "modal waltz"),
   bpm=(126, 176), kit=32, fill="jazz", bass="walking", chords="comp", form="jazz", swing=0.3, swing_unit=0.5,
   humanize_ms=8, vel_var=10, tone=-0.25, reverb=0.3, lead_density=0.45, intro_drums="all",
   parts=(_p("drums", D, 32), _p("upright bass", B, 32), _p("piano", C, 0), _p("soprano sax", L, 64, "melody")),
   progressions={"major": ("Imaj7 vi7 ii7 V7", "ii7 V7 Imaj7 VI7", "Imaj7 IVmaj7 iii7-VI7 ii7-V7",
                           "iii7 VI7 ii7 V7 Imaj7 vi7 ii7 V7"),
                 "minor": ("i7 iv7 iih7 V7", "i7 VImaj7 iih7 V7", "i7 i7 iv7 V7"),
                 "dorian": ("i7 IV7 i7 i7",)},
   modes=("major", "minor", "dorian"),
   comp_pats=("x---..x-....", "....x-..x-..", "x-..x-......"),
   grooves=({"ride": "X...x.x.x.x.", "phat": "....x.......", "kick": "x...........", "snare": "......?...?."},
            {"ride": "X...x.x.x...", "phat": "....x...x...", "kick": "x.......o...", "rim": "..........?."},
            {"ride": "X...x...x.x.", "phat": "....x...x...", "kick": "x...........", "snare": "..o.......o."}))

_g(name="lounge", chromatic_approach=True, family="jazz",
   aliases=("lounge", "shibuya-kei", "shibuya kei", "lounge music", "cocktail lounge", "cocktail jazz", "easy listening", "exotica",
            "elevator music", "muzak", "hotel lobby", "smooth jazz", "piano bar", "supper club"),
   bpm=(92, 116), kit=32, fill="none", bass="walking", chords="comp", form="calm", swing=0.2, swing_unit=0.5,
   humanize_ms=7, vel_var=8, tone=-0.4, reverb=0.35, lead_density=0.35, intro_drums="all",
   parts=(_p("drums", D, 32), _p("upright bass", B, 32), _p("electric piano", C, 4), _p("organ", PD, 16),
          _p("vibes", L, 11, "melody")),
   progressions={"major": ("Imaj7 vi7 ii7 V7", "Imaj7 IVmaj7 Imaj7 IVmaj7", "Imaj7 iii7 vi7 ii7-V7",
                           "IVmaj7 iii7 ii7 Imaj7"),
                 "minor": ("i7 iv7 VII7 IIImaj7", "i7 VImaj7 iih7 V7", "i7 i7 iv7 iv7")},
   modes=("major", "major", "minor"),
   bass_pats=("R-------5-------", "R-----A-5-----A-", "R-------3---5-A-"),
   comp_pats=("x-----..x-----..", "..x-......x-....", "x---..x-..x-...."),
   grooves=({"ride": "x...x...x...x...", "rim": "............x...", "phat": "....x.......x...",
             "kick": "x.......x......."},
            {"shaker": "x.x.x.x.x.x.x.x.", "rim": "....x......x....", "kick": "x.....x.x.......",
             "conga": "..x...x...x..xx."},
            {"ride": "x...x.x...x.x.x.", "rim": "....x.......x...", "kick": "x.........x....."}))
