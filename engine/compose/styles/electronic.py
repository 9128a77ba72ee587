"""styles.electronic: electronic dance music, hip hop and downtempo, ambient — the style library's
entries for these families.

Pure data: each ``_g(...)`` registers a :class:`~engine.compose.genres.Genre` (its words, tempo
range, meter, parts, grooves, bass and comping patterns, harmony, form and mix colour) in
:data:`~engine.compose.genres.GENRES`. See :mod:`engine.compose.genres` for the pattern notation.

What each style is built on (the idiom a player of it would name first):

- **house** (120–126): four on the floor, claps on two and four, the open hat on every off-beat,
  the bass on the off-beats, syncopated piano stabs.
- **deep house** (118–124): the same floor, played softer and a little swung — rim and shaker,
  a ghosted 16th hat — under minor-seventh and ninth chords on rhodes and organ stabs, a round bass.
- **techno** (126–138): a tight floor with off-beat hats, a syncopated rim or a lone clap, the
  rumble of ghost kicks; a rolling 16th bass and an acid line; one-chord, modal loops.
- **trance** (136–142): the floor, the off-beat open hat, rolling 16th hats; the off-beat or
  galloping bass; supersaw lead, 16th arpeggio, long pads, big breakdowns.
- **drum and bass** (170–176): the two-step (kick on one and the "and" of three, snare on two and
  four) at 174, rolling hats; reese bass, liquid rhodes and pads.
- **jungle** (160–170): the chopped Amen break (ghosted snares, the double kick) over a deep sub
  bass, ragga stabs and dub pads.
- **dubstep** (138–142): half time — the snare on three only — with the wobble bass and a sparse,
  dark top.
- **uk garage** (128–136): 2-step — the kicks that skip the second and fourth beats, swung 16th
  hats, rimshot backbeat; organ stabs and a syncopated sub bass.
- **synthwave** (84–118): the 80s gated snare and clap on two and four, a pumping 8th-note
  synth bass, polysynth pads, arpeggios and a saw lead.
- **chiptune** (140–170): a game console's voices — square-wave lead and arpeggios, a pulse
  bass jumping octaves, noise-like 16th hats; fast.
- **ambient** (60–80): no drums; pads, drones and sparse bells, a long reverb.
- **lofi** (70–90): lazy, swung 16ths, soft kick and rim, dusty and dark, jazzy rhodes chords.
- **boom bap** (86–96): hard swung kick and snare, 8th hats, chopped piano chords, an upright
  bass on the kick.
- **trap** (130–150): half-time clap on three, 32nd and triplet hat rolls, the 808 on the kick.
- **drill** (138–145): half time with the off-beat snare in the second bar, hats in threes
  (3+3+2) with triplet rolls, sliding 808s, dark harmonic-minor piano and strings.
- **trip hop** (70–90): slow heavy breakbeats, dark rhodes and strings, a round bass, a long
  reverb.
"""
from __future__ import annotations

from engine.compose.genres import (AMBIENT, BLUES, BOSSA, CLASSICAL, EDM, JAZZ, PROGRESSIONS, SOUL,  # noqa: F401
                                   A, B, C, D, L, P, PD, _g, _p)

EL, HH, AM = "electronic", "hiphop", "ambient"

# --- the dance floor ------------------------------------------------------------------------------
_g(name="house", aliases=("house", "festival drop", "euphoric festival", "festival edm", "mainstage", "main stage edm", "euphoric drop", "daft punk", "filtered disco", "french touch", "kuduro", "chicago house", "tech house", "club", "edm", "big room", "electro house",
                         "afro house", "club music", "dance music", "progressive house", "piano house",
                         "french house", "filter house", "acid house", "ibiza",
                         "gqom", "amapiano", "kwaito", "afro tech", "afrotech", "durban house"),
   bpm=(120, 126), kit=24, fill="snare", bass="offbeat", chords="stab", form="edm", humanize_ms=2, vel_var=6,
   family=EL, tone=0.15, reverb=0.25,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("piano", C, 0), _p("pad", PD, 89), _p("lead", L, 81)),
   progressions=EDM, modes=("minor", "major"), intro_drums="kick",
   bass_pats=("..R...R...R...R.", "..R...R-..R...8.", "..R..R..-.R...5."),
   comp_pats=("...x..x....x..x.", "x..x..x...x..x..", "..X..x....X..x.."),
   grooves=({"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x.",
             "conga": "...x..x....x..x.", "chat+": "x...x...x...x..."},
            {"kick": "X...X...X...X...", "clap": "....X.......X...", "chat": "..x...x...x...x.",
             "tamb": "....x.......x..x", "conga_mute": "x..x..x...x..x..", "ohat+": "..x...x...x...x."},
            {"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x.",
             "conga": "x..x..x...x..x..", "conga_lo": "......x.......x.", "tamb+": "....x.......x..."}))
_g(name="deep house", aliases=("deep house", "soulful house", "lofi house", "lo-fi house", "jazzy house",
                              "deep tech", "garage house",
                              "ambient techno", "ambient house"),
   bpm=(118, 124), kit=24, fill="snare", bass="offbeat", chords="stab", form="edm", humanize_ms=4, vel_var=8,
   swing=0.08, swing_unit=0.25, laid_back_ms=4, family=EL, tone=-0.25, reverb=0.35, cadence_v=False,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("rhodes", C, 4), _p("organ", C, 17, "stab", pan=0.45),
          _p("pad", PD, 89)),
   progressions={"minor": ("i9 iv9 i9 iv9", "i7 VImaj7 iv7 v7", "i9 i9 VImaj7 VII", "i7 iv7 VII7 IIImaj7"),
                 "dorian": ("i9 IV9 i9 i9", "i7 ii7 i7 IV9", "i9 VIImaj7 IV9 i9", "i7 IV7 v7 i7"),
                 "major": ("IVmaj7 iii7 ii7 Imaj7", "Imaj9 vi9 ii9 V9", "ii9 V9 Imaj9 Imaj9")},
   modes=("dorian", "minor", "dorian", "major"), intro_drums="kick", lead_density=0.3,
   bass_pats=("R-....R...R-..5.", "..R-..R...R-.7..", "R-.R..8...R-..R."),
   comp_pats=("x-....x.....x...", "..x-....x-......", "x.....x-..x....."),
   grooves=({"kick": "X...X...X...X...", "clap": "....x.......x...", "chat": "..x..x....x..x..",
             "bongo": "x..x..x...x.x...", "bongo_lo": ".......x.......x"},
            {"kick": "X...X...X...X...", "rim": "....x.......x..x", "ohat": "..x...x...x...x.",
             "shaker": ".x...x...x...x..", "bongo": "...x.....x....x."}))
_g(name="techno", aliases=("techno", "drone techno", "speedcore", "terrorcore", "hardcore techno", "singeli", "industrial techno", "minimal techno", "dub techno", "acid techno", "industrial",
                          "hardstyle", "hard techno", "gabber", "rave", "ebm", "detroit techno", "berlin techno",
                          "berghain", "warehouse", "tekno", "peak time techno"),
   bpm=(126, 138), kit=24, fill="snare", bass="rolling", chords="stab", form="edm", humanize_ms=1, vel_var=5,
   family=EL, tone=0.05, reverb=0.3, cadence_v=False,
   parts=(_p("drums", D, 24), _p("bass", B, 39), _p("acid", A, 87, "acid16"), _p("pad", PD, 95)),
   progressions={"minor": ("i i i i", "i i VI i", "i bII i i", "i i iv i"),
                 "phrygian": ("i i bII i", "i i i bII")}, modes=("minor", "phrygian"),
   arp="acid16", intro_drums="kick",
   bass_pats=(".RRR.RRR.RRR.RRR", ".R8R.RR7.R8R.RR5"),
   grooves=({"kick": "X...X...X...X...", "chat": "..x...x...x...x.", "rim": "..x..x..x..x..x.",
             "clap+": "....x.......x..."},
            {"kick": "X...X...X...X...", "ohat": "..X...X...X...X.", "chat": ".x...x...x...x..",
             "clap": "............x...", "clave": "...x..x...x..x.."},
            {"kick": "X...X...X...X...", "kick2": "..x...x...x...x.", "ride": "..x...x...x...x.",
             "chat": "...x...x...x...x", "clap+": "....x.......x..."}))
_g(name="trance", aliases=("trance", "happy hardcore", "uk hardcore", "bouncy techno", "hardcore rave", "freeform hardcore", "uplifting trance", "psytrance", "psy trance", "progressive trance",
                          "vocal trance", "goa", "eurodance", "hands up", "euro trance"),
   bpm=(136, 142), kit=24, fill="snare", bass="gallop", chords="pad", form="edm", humanize_ms=1, vel_var=5,
   family=EL, tone=0.4, reverb=0.45,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("arp", A, 81), _p("pad", PD, 50), _p("lead", L, 81)),
   progressions=EDM, modes=("minor",), arp="trance16", intro_drums="kick", lead_density=0.6,
   bass_pats=("..R-..R-..R-..R-", ".RR..RR..RR..RR8", "..R8..R8..R8..R8"),
   grooves=({"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..x...x...x...x.",
             "chat": "...x...x...x...x", "snare2": "...............x"},
            {"kick": "X...X...X...X...", "clap": "....X.......X...", "ohat": "..X...X...X...X.",
             "chat": ".x...x...x...x..", "tom_mid": "...........x..x."},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "clap": "....x.......x...",
             "ride": "..x...x...x...x.", "phat": ".x.x.x.x.x.x.x.x", "tom_hi+": "..............xx"}))
_g(name="drum and bass", aliases=("drum and bass", "drum & bass", "drum n bass", "drum'n'bass", "drum 'n' bass",
                                  "drum and base", "drum n base", "dnb", "d&b", "d'n'b", "liquid", "liquid dnb",
                                  "liquid funk", "neurofunk", "jump up", "drumstep"),
   bpm=(170, 176), kit=16, fill="break", bass="reese", chords="pad", form="edm", humanize_ms=3, vel_var=10,
   family=EL, tone=0.2, reverb=0.3,
   parts=(_p("drums", D, 16), _p("bass", B, 39), _p("pad", PD, 89), _p("rhodes", C, 4, "stab"),
          _p("lead", L, 88, "sparse")),
   progressions=EDM, modes=("minor", "dorian"), lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "X.........X.....", "snare": "....X.......X...", "chat": "x..x..x..x..x.x.",
             "ride+": "x...x...x...x..."},
            {"kick": "X.X.......X.....", "snare": "....X..o....X..o", "chat": "x.xx..x.x.xx..x."},
            {"kick": "X.........x..x..", "snare": "....X.......X...", "shaker": "..x...x...x...x.",
             "ride": "x.......x......."}))
_g(name="jungle", aliases=("jungle", "ragga jungle", "old school jungle", "oldschool jungle", "junglist",
                          "amen break", "breakcore"),
   bpm=(160, 170), kit=0, fill="break", bass="drone", chords="stab", form="edm", humanize_ms=3, vel_var=12,
   family=EL, tone=0.0, reverb=0.35,
   parts=(_p("drums", D, 0), _p("sub bass", B, 38), _p("pad", PD, 91), _p("stab", C, 55),
          _p("lead", L, 53, "sparse")),
   progressions={"minor": ("i i VI VII", "i i iv iv", "i VI i VII"), "dorian": ("i7 i7 IV7 i7",)},
   modes=("minor", "dorian"), lead_density=0.25, intro_drums="hats",
   bass_pats=("R-------..R-----", "R-----..R-....5-", "R-------5-------R-----..8-----.."),
   comp_pats=("X...............", "......X.........", "X.........X....."),
   grooves=({"kick": "X.X.......XX....", "snare": "....X..X.X..X..X", "ride": "x.x.x.x.x.x.x.x.",
             "snare2": ".o....o.....o.o."},
            {"kick": "X.X.......X.....", "snare": "....X..o.X.XX..o", "ride": "x...x.x...x.x.x.",
             "ohat+": "......x.......x."},
            {"kick": "X..X......XX..X.", "snare": "....X.o.o..oX.o.", "ride": "xxx.x.xxx.x.xxx."}))
_g(name="dubstep", aliases=("dubstep", "orchestral dubstep", "brostep", "riddim", "future bass", "deep dubstep", "dub step"),
   bpm=(138, 142), kit=24, fill="snare", bass="wobble", chords="pad", form="edm", humanize_ms=1,
   family=EL, tone=0.2, reverb=0.3,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("pad", PD, 95), _p("lead", L, 81, "sparse")),
   progressions={"minor": ("i i VI VII", "i VI iv V", "i i iv VI"), "phrygian": ("i bII i i",)},
   modes=("minor", "phrygian"), lead_density=0.3, intro_drums="hats",
   grooves=({"kick": "X...............", "snare": "........X.......", "chat": "x...x.x.x...x.xx",
             "kick2+": "..........X....."},
            {"kick": "X.........X.....", "snare": "........X.......", "chat": "x.x..x.xx.x..x.x",
             "ohat+": "......x.......x."},
            {"kick": "X......X..X.....", "snare": "........X.......", "chat": "..x...x...x...x.",
             "tom_lo": "..............x.", "clap+": "........x......."}))
_g(name="uk garage", aliases=("uk garage", "garage", "ukg", "2-step", "2 step", "2step", "two step garage",
                             "speed garage", "future garage", "uk funky"),
   bpm=(128, 136), kit=24, fill="snare", bass="offbeat", chords="stab", form="edm", humanize_ms=3, vel_var=10,
   swing=0.24, swing_unit=0.25, family=EL, tone=0.1, reverb=0.25,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("organ", C, 17), _p("pad", PD, 89),
          _p("vocal chops", L, 54, "sparse")),
   progressions={"minor": ("i7 iv7 i7 iv7", "i9 VImaj7 iv7 v7", "i7 VII7 VImaj7 v7"),
                 "dorian": ("i7 IV9 i7 i7", "i9 ii7 i9 IV9"), "major": ("Imaj7 vi7 ii7 V9", "IVmaj7 iii7 ii7 Imaj7")},
   modes=("minor", "dorian", "major"), lead_density=0.35, intro_drums="hats",
   bass_pats=("R-....R...R-..5.", "R-.8....R-..7-5.", "..R-...R..R-...8"),
   comp_pats=("..x...x.....x...", ".x....x..x....x.", "...x..x...x..x.."),
   grooves=({"kick": "X.........X..x..", "rim": "....X.......X...", "chat": "..x..x.x..x..x.x",
             "ohat+": "......x.......x."},
            {"kick": "X......x..X.....", "clap": "....X.......X...", "chat": "..xx..x...xx..x.",
             "rim": "...o..o..o....o."},
            {"kick": "X.......X..x....", "rim": "....X.......X...", "chat": ".xx..xx..xx..xx.",
             "ohat": "..x...x...x...x.", "clave+": "...x..x...x..x.."}))
_g(name="synthwave", aliases=("synthwave", "cyberpunk", "cyber punk", "cyberpunk city", "blade runner", "neue deutsche welle", "ndw", "retrowave", "outrun", "darksynth", "vaporwave", "chillwave",
                             "new wave", "retro synth", "80s synth", "dreamwave"),
   bpm=(84, 118), kit=24, fill="toms", bass="drive8", chords="pad", form="song", humanize_ms=2,
   family=EL, tone=0.2, reverb=0.5,
   parts=(_p("drums", D, 24), _p("bass", B, 38), _p("arp", A, 81), _p("pad", PD, 90), _p("lead", L, 81)),
   progressions={"minor": ("i VI III VII", "i VI VII V", "VI VII i i", "i iv VI V", "i VII VI VII"),
                 "major": ("I V vi IV", "vi IV I V", "I iii IV V")},
   modes=("minor", "minor", "major"), arp="arp16",
   bass_pats=("R.R.R.R.R.R.R.R.", "R.R.R.R.R.R.8.R.", "RRR.RRR.RRR.R.R."),
   grooves=({"kick": "X.......X.....x.", "snare": "....X.......X...", "clap": "....x.......x...",
             "chat": "x.xxx.x.x.xxx.x.", "tom_hi": ".............x..", "tom_mid": "...............x"},
            {"kick": "X...X...X...X...", "snare": "....X.......X...", "clap": "....x.......x...",
             "chat": "..x...x...x...x.", "tom_mid": "..........x...x.", "tom_lo": "...........x...x"},
            {"kick": "X.....X.X.......", "snare": "....X.......X...", "clap": "....x.......x...",
             "tamb": "x...x...x...x...", "tom_lo": "..............xx"}))
_g(name="chiptune", aliases=("chiptune", "8-bit", "8 bit", "8bit", "16-bit", "16 bit", "bitpop",
                            "video game", "game boy", "nes", "retro game", "arcade"),
   bpm=(140, 170), kit=24, fill="snare", bass="octave", chords="stab", form="song", humanize_ms=0, vel_var=2,
   family=EL, tone=0.5, reverb=0.06,
   parts=(_p("drums", D, 24), _p("pulse bass", B, 80), _p("arp", A, 80), _p("lead", L, 80)),
   progressions={"major": ("I V vi IV", "I IV V I", "vi IV I V", "I bVII IV I", "I vi IV V"),
                 "minor": ("i VI VII i", "i iv VII III", "i VI III VII", "i VII VI V")},
   modes=("major", "minor", "major"), arp="arp16", lead_density=0.7, intro_drums="hats",
   bass_pats=("R.8.R.8.R.8.R.8.", "R.R8R.R8R.R85.8.", "R.8.5.8.R.8.5.A."),
   grooves=({"kick": "X.......X.X.....", "snare": "....X.......X...", "chat": "x.x.x.x.x.x.x.x.",
             "tom_hi": "...x..x....x..x.", "tom_mid": "......x.......x."},
            {"kick": "X..X..X.X..X..X.", "snare": "....X.......X..x", "chat": "x.x.x.x.x.x.x.x.",
             "tom_hi": "...x.......x....", "tom_mid": ".......x.......x"}))
_g(name="ambient", aliases=("ambient", "sound bath", "sound healing", "singing bowl meditation", "dungeon synth", "musique concrete", "tape music", "acousmatic", "electroacoustic", "gagaku", "court music", "lowercase", "microsound", "isolationism", "isolationist", "hauntology", "hauntological", "ghost box", "boards of canada", "kankyo ongaku", "environmental music", "drone", "meditation", "meditative", "new age", "soundscape", "sleep",
                            "sleep music", "spa music", "relaxing music", "healing music", "zen",
                            "space music", "yoga", "dark ambient", "ambient electronic",
                            "berlin school", "kosmische", "kosmische musik", "sequencer music", "psybient", "psychill", "psy chill", "psy-chill", "psy ambient", "psydub"),
   bpm=(60, 80), kit=24, fill="none", bass="drone", chords="pad", form="calm", humanize_ms=12, vel_var=8,
   family=AM, tone=-0.3, reverb=0.8,
   parts=(_p("pad", PD, 89), _p("pad 2", PD, 94, "swell", pan=-0.5), _p("bass", B, 89, "drone"),
          _p("bells", L, 98, "sparse"), _p("arp", A, 88, "arp8")),
   progressions=AMBIENT, modes=("major", "lydian", "minor", "dorian"), lead_density=0.15,
   comp_pats=("x---------------", "x-------....t---", "x-----------b---"),
   grooves=(), intro_drums="none")

# --- hip hop and downtempo -------------------------------------------------------------------------
_g(name="lofi", aliases=("lofi", "jazz hip hop", "jazz hip-hop", "jazzy hip hop", "jazz-hop", "lo-fi", "lo fi", "lofi hip hop", "lo-fi hip hop", "low fi",
                         "chillhop", "beats to study", "study beats", "jazzhop", "jazz hop", "chillout",
                         "chill out", "chill beats", "bedroom beats"),
   bpm=(70, 90), kit=8, fill="snare", bass="lofi", chords="lofi", form="song", swing=0.14,
   swing_unit=0.25, humanize_ms=12, vel_var=12, laid_back_ms=16, family=HH, tone=-0.8, reverb=0.3,
   parts=(_p("drums", D, 8), _p("bass", B, 33), _p("rhodes", C, 4), _p("lead", L, 11)),
   progressions=SOUL, modes=("minor", "dorian", "major"), lead_density=0.3, intro_drums="none",
   grooves=({"kick": "X.......x.X.....", "snare": "....x.......x...", "phat": "x...x...x...x...",
             "rim": "..........x...o.", "kick2": ".......?........"},
            {"kick": "X..x......x.....", "rim": "....x.......x..o", "chat": "x..xx..xx..xx..x"},
            {"kick": "X.....x...x..x..", "snare": "....x.......x...", "phat": "..x...x...x...x.",
             "shaker": ".......x.......x"}))
# g-funk: West Coast hip hop — a slow, laid-back 808 groove with claps on the backbeat and
# sixteenth hats, a Moog bass that slides through syncopated lines, Rhodes and string chords on
# minor sevenths, and a high, whining synth lead
_g(name="g-funk", aliases=("g-funk", "ratchet beat", "ratchet rap", "ratchet music", "mustard type", "mustard-type", "jerk rap", "chopped and screwed", "chopped n screwed", "screwed and chopped", "screw music", "houston rap", "hyphy", "thizz", "mobb music",
                           "g funk", "gfunk", "west coast g-funk", "west coast hip hop", "west coast rap",
                           "west coast gangsta rap", "gangsta funk", "90s west coast"),
   bpm=(86, 98), kit=25, fill="snare", bass="pats", chords="pats", form="song", swing=0.1, swing_unit=0.25,
   humanize_ms=6, vel_var=10, laid_back_ms=8, family=HH, tone=-0.05, reverb=0.2, lead_density=0.35,
   intro_drums="all", cadence_v=False,
   parts=(_p("drums", D, 25), _p("moog bass", B, 38), _p("rhodes", C, 4), _p("synth strings", PD, 50),
          _p("synth lead", L, 80, "melody", octave=1)),
   progressions={"minor": ("i7 iv7 i7 iv7", "i7 i7 VImaj7 VImaj7", "i9 iv9 VII7 i9", "i7 VImaj7 iv7 i7"),
                 "dorian": ("i7 IV7 i7 i7", "i9 i9 IV9 i9")},
   modes=("minor", "minor", "dorian"),
   bass_pats=("R-..R-.8-.R..5-.", "R--..RR.-.8..7-.", "R-.R..5.R-..8.7."),
   comp_pats=("x--...x-..x--...", "..x-..x-..x--...", "x---....x-.x-..."),
   grooves=({"kick": "X.....xX..x...x.", "snare": "....X.......X...", "clap": "....X.......X...",
             "chat": "x.xxx.x.x.xxx.x.", "ohat+": "......x.......x."},
            {"kick": "X.x....xX.....x.", "snare": "....X.......X...", "clap": "....X.......X..x",
             "chat": "xx.xxx.xxx.xxx.x", "ohat": "..........x....."}))
_g(name="boom bap", aliases=("boom bap", "j dilla", "dilla", "dilla beat", "dilla-style", "chipmunk soul", "soul chop", "soul chops", "chipmunk soul beat", "east coast rap", "nyc hip hop", "new york hip hop", "new york rap", "mobb deep", "wu-tang", "wu tang", "wu-tang clan", "golden era hip hop", "horrorcore", "turntablism", "turntablist", "scratch dj", "boom bap hip hop", "hip hop", "hip-hop", "rap",
                            "old school hip hop", "golden age hip hop", "east coast hip hop", "90s hip hop",
                            "underground hip hop", "jazz rap", "instrumental hip hop"),
   bpm=(86, 96), kit=16, fill="snare", bass="lofi", chords="lofi", form="song", swing=0.2, swing_unit=0.25,
   humanize_ms=8, vel_var=10, laid_back_ms=10, family=HH, tone=-0.3, reverb=0.15,
   parts=(_p("drums", D, 16), _p("upright bass", B, 32), _p("piano", C, 0), _p("vibes", L, 11, "sparse")),
   progressions={"minor": ("i7 i7 iv7 iv7", "i9 i9 VImaj7 VImaj7", "i7 iv7 VImaj7 V7", "i7 VImaj7 ih7 V7"),
                 "dorian": ("i7 IV7 i7 i7", "i9 i9 IV9 i9"),
                 "major": ("Imaj7 IVmaj7 Imaj7 IVmaj7", "ii7 V7 Imaj7 Imaj7", "Imaj7 vi7 ii7 V7")},
   modes=("minor", "dorian", "minor", "major"), lead_density=0.25, intro_drums="hats",
   bass_pats=("R-.......R-.R...", "R-....R.-.R-..5.", "R--......8..R-.A"),
   comp_pats=("x-.....x..x-....", "x---......x-..x.", "x-..x.....x-...."),
   grooves=({"kick": "X......x.XX.....", "snare": "....X.......X...", "chat": "x.x.x.xxx.x.x.x.",
             "ohat+": "..............x."},
            {"kick": "X.........XX...x", "snare": "....X.......X...", "chat": "x...x.x.x...x.x.",
             "rim+": "..........o....."},
            {"kick": "X.X.......X.....", "snare": "....X.......X..o", "ohat": "..x...x...x...x.",
             "tamb+": "....x.......x..."}))
_g(name="trap", aliases=("trap", "witch house", "jerkin", "jerk beat", "jerkin beat", "nola bounce", "bounce music", "new orleans bounce", "triggerman",
                         "phonk", "rage", "plugg", "crunk", "footwork", "atlanta trap", "southern hip hop",
                         "memphis rap", "cloud rap", "emo rap", "emo-rap", "emo trap", "sad rap", "soundcloud rap"),
   bpm=(130, 150), kit=25, fill="roll", bass="808", chords="pad", form="edm", humanize_ms=1, vel_var=10,
   family=HH, tone=0.1, reverb=0.25,
   parts=(_p("drums", D, 25), _p("808", B, 38), _p("bells", L, 14, "sparse"), _p("pad", PD, 91)),
   progressions={"minor": ("i i VI VI", "i VI iv V", "i iv i VI", "i VII VI V"),
                 "phrygian": ("i bII i i", "i bII bVI V")}, modes=("minor", "phrygian"),
   lead_density=0.35, intro_drums="hats",
   grooves=({"kick": "X.....X...x.....", "clap": "........X.......", "chat": "x.x.x.x.x.rrx.x.",
             "ohat": "...............x", "snare": "...............o"},
            {"kick": "X..X......X..X..", "clap": "........X.......", "chat": "x.x.xtx.x.x.rrrr",
             "snare+": "...............o"},
            {"kick": "X.........X.x...", "clap": "........X.......", "chat": "x.xtx.x.x.xtx.rr"}))
_g(name="drill", aliases=("drill", "uk drill", "ny drill", "brooklyn drill", "chicago drill", "grime"),
   bpm=(138, 145), kit=25, fill="roll", bass="808", chords="pad", form="edm", humanize_ms=1, vel_var=10,
   family=HH, tone=-0.1, reverb=0.3,
   parts=(_p("drums", D, 25), _p("808", B, 38), _p("piano", L, 0, "sparse"), _p("strings", PD, 49)),
   progressions={"minor": ("i i VI V", "i iv VI V", "i VI iv V", "i i iv V")},
   modes=("minor",), lead_density=0.3, intro_drums="hats",
   # two bars: the snare on three, and in the second bar an off-beat one leading back; hats in
   # threes (3+3+2) with triplet rolls
   grooves=({"kick": "X.........X.....X......X..X.....", "snare": "........X...............X.....x.",
             "chat": "x..x..x.x..x..x.x..x..x.x.tx..t."},
            {"kick": "X.......X.....X.X..X......X.....", "snare": "........X...............X..X....",
             "chat": "x..x..x.x.tx..x.x..x..x.x..x.tt."}))
_g(name="trip hop", aliases=("trip hop", "balearic", "balearic beat", "cafe del mar", "illbient", "trip-hop", "bristol sound", "downtempo", "down tempo", "dark downtempo"),
   bpm=(70, 90), kit=0, fill="break", bass="soul", chords="lofi", form="song", swing=0.08, swing_unit=0.25,
   humanize_ms=9, vel_var=10, laid_back_ms=12, family=HH, tone=-0.6, reverb=0.45,
   parts=(_p("drums", D, 0), _p("bass", B, 38), _p("rhodes", C, 4), _p("strings", PD, 49),
          _p("lead", L, 53, "sparse")),
   progressions={"minor": ("i i VI VI", "i iv i iv", "i VII VI V", "i7 iv7 VImaj7 V7"),
                 "dorian": ("i7 IV7 i7 i7",), "phrygian": ("i bII i bII",)},
   modes=("minor", "minor", "dorian"), lead_density=0.25, intro_drums="hats",
   bass_pats=("R---......R-....", "R-----..5-..R-..", "R---....R---.A.."),
   comp_pats=("x-------........", "x---....x---....", "....x-------...."),
   grooves=({"kick": "X......X.X......", "snare": "....X.......X...", "chat": "x...x.x.x...x.x.",
             "snare2": ".......o......o."},
            {"kick": "X.........X.X...", "snare": "....X.......X...", "chat": "x..x..x.x..x..x."},
            {"kick": "X..X....X.......", "snare": "....X.......X.x.", "chat": "x.......x.......",
             "ohat": "....x.......x...", "snare2": ".......o..o....."}))