"""band: what the composer decides once per ``(prompt, seed, bpm)`` — the genre, tempo, key and
meter, the parts with their registers and mix, and the drum groove.

:class:`Band` reads the :class:`~engine.compose.prompt.PromptSpec` and fills what the words leave
open from a hash of ``(prompt, seed)`` (:func:`stable_hash`), so two runs agree. Built once at
``compose`` time on the ``[engine]`` thread; read-only afterwards (the bar generator and the
section planner read it, never write it).
"""
from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

from engine.compose import genres as G
from engine.compose import styles  # noqa: F401  (registers the style library in G.GENRES)
from engine.compose.prompt import STRING_QUARTETS, PromptSpec, read_prompt
from engine.score import DRUM_CHANNEL, Part

#: role → (lowest, highest, centre) MIDI pitch of a part's register
_REGISTERS = {"bass": (28, 52, 38), "chords": (50, 76, 63), "pad": (52, 79, 65), "lead": (62, 86, 74),
              "arp": (55, 86, 70), "perc": (36, 55, 43)}
#: instrument words that name a genre when the prompt names none
_GENRE_HINTS = {"violin": "classical", "cello": "classical", "viola": "classical", "harpsichord": "baroque",
                "sax": "jazz", "saxophone": "jazz", "upright bass": "jazz", "trumpet": "jazz", "vibes": "jazz",
                "nylon guitar": "bossa nova", "808": "trap", "808 bass": "trap", "distorted guitar": "rock",
                "rhodes": "lofi", "taiko": "cinematic", "spanish guitar": "flamenco", "bandoneon": "tango",
                "violoncelle": "classical", "violoncello": "classical", "violoncelli": "classical",
                "quarteto de cordas": "classical", "quatuor a cordes": "classical", "cuarteto de cuerdas": "classical",
                "streichquartett": "classical", "banjo": "bluegrass", "accordion": "polka",
                "piano accordion": "polka", "piano-accordion": "polka", "bagpipes": "celtic", "bagpipe": "celtic",
                "steel drums": "calypso", "steel pan": "calypso", "steel drum": "calypso", "steelpan": "calypso", "square lead": "chiptune", "tuba": "polka", "choir": "cinematic", "harp": "ambient",
                "slap bass": "funk", "clavinet": "funk", "funk guitar": "funk", "disco guitar": "disco",
                "jazz guitar": "jazz", "nyckelharpa": "polska", "portuguese guitar": "fado", "tumbi": "bhangra",
                "charango": "huayno", "quena": "huayno", "organ": "soul", "koto": "ambient", "gayageum": "ambient", "haegeum": "ambient", "sitar": "ambient",
                # a bassoon or pizzicato strings: a concert piece's
                **dict.fromkeys(("bassoon", "pizzicato strings"), "classical"),
                # the review after set S: the orchestra's low reed and cor anglais, the strings in
                # Italian and Polish (a mazurka's "fortepian" is the piano's: the piano alone rule)
                **dict.fromkeys(("bass clarinet", "cor anglais", "english horn", "oboe", "archi", "smyczki", "contrabassoon"),
                                "classical"),
                "tb-303": "house", "tb 303": "house", "acid line": "house", "acid lines": "house", "woodwinds": "classical", "woodwind": "classical",
                "honky-tonk piano": "ragtime", "honky tonk piano": "ragtime", "honkytonk piano": "ragtime",
                "hurdy-gurdy": "celtic", "hurdy gurdy": "celtic", "baglama": "arabic"}
#: pads alone name ambient — with no drum, beat, bass or tempo over 100 asked, nor an energetic mood
#: ("slow evolving synth pads, a soft music-box arpeggio, no drums"; not "lush pads, big drums")
_PAD_WORDS = frozenset(("synth pad", "synth pads", "warm pad", "warm pads", "space pad", "space pads", "ambient pad",
                        "ambient pads", "evolving pads"))
_PAD_COMPANY = _PAD_WORDS | {"music box", "music-box", "bells", "piano", "strings", "harp", "celesta", "arpeggio",
                             "arpeggios", "arp", "glockenspiel", "choir", "voices"}
_ENERGY_MOODS = frozenset(("happy", "energetic", "upbeat", "aggressive", "driving", "uplifting", "epic", "hype"))
#: a folk instrument names its music when it is at least half of what the prompt names ("oud and
#: darbuka", "kora and djembe", "sitar and violin" — not "oud, piano and cello", a chamber trio):
#: the Levant's and Anatolia's lutes, zither and reed flute, India's, the griots', the Balkans', Greece's
#: bouzouki (rebetiko's; not the laouto or lyra: the balkan style is Bulgaria's brass in 7/8), the Andes', Ireland's
_FOLK_HINTS = {**{w: "arabic" for w in ("oud", "qanun", "kanun", "ney", "buzuq", "mijwiz", "mizmar",
                                        "arghul", "zurna", "saz", "baglama", "keman")},
               **{w: "raga" for w in ("sitar", "sarod", "veena", "sarangi", "bansuri", "tanpura", "shehnai", "shanai")},
               **{w: "mande" for w in ("kora", "ngoni", "n'goni", "balafon", "balafons", "balaphon")},
               **{w: "balkan" for w in ("gaida", "kaval", "gadulka", "gusle")},
               **{w: "rebetiko" for w in ("bouzouki", "bouzoukia", "buzuki", "baglamas")},
               "zampona": "huayno", "uilleann pipes": "celtic", "mbira": "afrobeat",
               "sanfona": "forro", "algoza": "bhangra"}
#: a beat's drum words name their style before any instrument ("kora and 808s" is a trap beat)
_BEAT_DRUM_HINTS = {"808s": "trap", "breakbeat": "drum and bass", "beatbox": "boom bap", "beatboxing": "boom bap"}
#: drum words that name a genre when the prompt names none (after the instruments: "oud and
#: darbuka" is the oud's); a world drum only beside nothing or its own music's instruments, and
#: no bass, beat or synth ("acoustic guitar with djembe" is a coffeehouse's, "tabla and bass" no raga)
_DRUM_GENRE_HINTS = {**_BEAT_DRUM_HINTS, "amen": "drum and bass", "brushes": "jazz", "brush": "jazz",
                     "darbuka": "arabic", "riq": "arabic", "davul": "arabic", "bendir": "arabic", "tabla": "raga",
                     "djembe": "mande", "dunun": "mande", "dundun": "mande",
                     "talking drum": "afrobeat", "talking drums": "afrobeat", "bodhran": "celtic",
                     "surdo": "samba", "tamborim": "samba", "cuica": "samba", "zabumba": "forro",
                     "dhol": "bhangra", "dholak": "bhangra", "timbales": "salsa", "steel drums": "calypso"}
#: the drum kit's own words: a kit said to play alone with these is a plain backbeat's (pop's);
#: a world drum alone names its music (:data:`_DRUM_GENRE_HINTS`)
_KIT_WORDS = frozenset(("kick", "kicks", "kick drum", "snare", "snares", "snare drum", "hats", "hi-hats", "hi-hat",
                        "hihats", "hihat", "hi hats", "closed hats", "open hats", "open hat", "toms", "tom", "cymbals",
                        "crash", "ride", "ride cymbal", "rimshot", "rimshots", "clap", "claps", "handclaps"))
#: Dutch "oud" (old): "een oud liedje", "oud en nieuw"
_DUTCH_OUD_RE = re.compile(r"\b(?:een|het|heel|erg|zo)\s+oud\b|\boud\s+(?:en\s+nieuw|hollands|liedje|deuntje)\b|"
                           r"\b(?:liedje|slaapliedje|deuntje|muziek|lied)\b")
#: moods of a screen's cue: a world drum beside them is its drum, not its music ("bodhran heartbeat,
#: dark and tense")
_SCREEN_MOODS = frozenset(("dark", "tense", "scary", "spooky", "horror", "epic", "suspense", "suspenseful", "ominous"))
_BAND_SIGN_RE = re.compile(r"\b(?:bass|bassline|beats?|synth\w*|808s?|edm|trap|house|drums|kit)\b")
_WORLD_DRUMS = frozenset(w for w, g in _DRUM_GENRE_HINTS.items() if g not in ("jazz", "trap", "drum and bass", "boom bap"))
#: what plays beside an acoustic guitar that still names folk; the hand percussion beside it
_ACOUSTIC_COMPANY = frozenset(("piano", "voice", "vocals", "vocal", "gesang", "harmonica", "fiddle", "violin", "cello", "mandolin",
                               "banjo", "flute", "strings", "upright bass", "double bass", "accordion", "whistle",
                               "tin whistle", "ukulele", "acoustic guitar", "acoustic guitars", "guitar"))
_HAND_PERCUSSION = frozenset(("shaker", "shakers", "tambourine", "tambourines", "cajon", "djembe", "claps", "handclaps",
                              "hand claps", "clap", "stomps", "foot stomps", "bongos", "congas", "finger snaps",
                              "hand drum", "hand drums"))
#: instruments that name a genre last, among acoustic company only, after the moods ("acoustic
#: guitar and 808s" is a trap beat's, "dark acoustic guitar" a film cue's, "solo acoustic guitar" a folk song's)
_WEAK_GENRE_HINTS = {"acoustic guitar": "folk", "ukulele": "folk", "acoustic guitars": "folk", "steel string guitar": "folk",
                     # the guitar in German, Italian, Polish, Spanish, French, Portuguese (acoustic unless said)
                     **dict.fromkeys(("gitarre", "chitarra", "gitara", "guitarra", "guitare", "violao"), "folk"),
                     "steel-string guitar": "folk", "twelve string guitar": "folk", "twelve-string acoustic": "folk",
                     "twelve string acoustic": "folk",
                     # a harmonica over a guitar is a bluesman's; a clarinet alone a recital's
                     "harmonica": "blues", "blues harp": "blues", "clarinet": "classical",
                     # a music box alone: a cradle's song
                     "music box": "lullaby", "music-box": "lullaby"}
#: a maqam or makam named (hijaz, "taksim on the oud"): the Arab and Turkish art music's (a raga's
#: name is no such sign: "yaman" is Turkish slang, Kalyan and Todi are towns)
_MODE_GENRE_RES = ((re.compile(r"\b(?:maqam|maqams|maqamat|makam|makams|taksim|taqsim|taqasim|"
                               + "|".join(re.escape(w) for w in sorted(G.MAQAM_MODES, key=len, reverse=True))
                               + r")\b"), "arabic"),)


#: generic instrument words and the GM programs that are a kind of them: a style's own part of that
#: kind stays (and counts as named) instead of being replaced by the word's default program
_GUITARS = range(24, 32)
#: the words for a guitar that carries the tune: on the style's own guitar, in the lead's place
_LEAD_GUITARS = frozenset(("lead guitar", "guitar lead", "lead guitar solo"))
#: a style's plucked strings on a guitar's program that are no guitar: "guitar, oud and percussion"
#: keeps its guitar beside the oud
_OTHER_LUTES = frozenset(("oud", "ud", "bouzouki", "saz", "baglama", "buzuq", "sitar", "kora", "ngoni", "shamisen",
                          "tanpura", "cavaquinho", "banjo", "mandolin", "vihuela", "charango", "balalaika"))
_GENERIC = {**dict.fromkeys(STRING_QUARTETS, range(40, 44)), "organ": range(16, 24), "guitar": _GUITARS, "guitars": _GUITARS, "strings": range(40, 52),
            "horns": range(56, 64), "brass": range(56, 64), "brass section": range(56, 64), "sax": range(64, 68),
            "saxophone": range(64, 68), "synth": range(80, 96), "keys": range(0, 8), "keyboard": (*range(0, 8), *range(80, 96)),
            # the keyboard in French and Spanish: the style's own keys (a baroque "clavier" its harpsichord)
            **dict.fromkeys(("clavier", "teclado", "teclados"), (*range(0, 8), *range(80, 96))),
            "downtuned guitar": (29, 30), "downtuned guitars": (29, 30),
            # the guitar in other languages is the style's own ("guitarras" in doom metal are its
            # distortion), else the word's (a nylon guitarra)
            **dict.fromkeys(("guitarra", "guitarras", "guitare", "guitares", "chitarra", "chitarre", "gitarre",
                             "gitarren", "gitar", "gitarr", "gitara", "gitary", "gitare"), _GUITARS),
            # the piano in German, Polish, Italian: the style's own (a Rhodes in soul, a grand in jazz)
            **dict.fromkeys(("klavier", "fortepian", "pianino"), range(0, 8)),
            **dict.fromkeys(("rhythm guitar", "rhythm guitars", "rythm guitar", "rythm guitars", "lead guitars",
                             *_LEAD_GUITARS, "kitara", "kitaraa", "kitarat", "kitaroita"), _GUITARS),
            **dict.fromkeys(("kosketinsoitin", "kosketinsoittimet"), (*range(0, 8), *range(80, 96))),
            "drone": (20, 104, 109, *range(88, 96))}    # a style's own drone: harmonium, tanpura, pipes, a pad


def _density(pat: str) -> float:
    """Hits per step of a drum lane."""
    return sum(ch != "." for ch in pat) / max(1, len(pat))


def stable_hash(*parts) -> int:
    """A stable 64-bit hash of ``parts`` (Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest(),
                          "little")


@dataclass
class PartPlan:
    """How one part plays: its :class:`Part`, role, playing style and register."""

    part: Part
    role: str
    style: str
    lo: int
    hi: int
    centre: int
    nth: int = 0            # how many parts of this role come before it
    named: bool = False     # the prompt named it: it plays from the first bar, and never rests early


class Band:
    """Everything decided once: genre ``g``, ``bpm``, ``meter`` (``bpb`` beats, ``steps`` 16ths a
    bar), ``key_root``/``mode``/``scale``, the progressions, swing and humanisation, the ``parts``
    with their :class:`PartPlan`, and the drum ``groove``. ``[engine]``"""

    #: chords a player steers, ``(beat, Chord | None, key)`` in beat order (see :func:`engine.compose.composer.steer`)
    harmony: tuple = ()
    #: a player's tune as the lead's motif: per bar ``(position, duration, scale step from the
    #: tonic)`` (:func:`engine.compose.theme.motif_of`), sung from bar ``theme_bar0`` on
    theme_cells: tuple = ()
    theme_bar0: int = 0

    def __init__(self, prompt: str, seed: int, bpm: float | None, home: tuple[int, str] | None = None):
        """``home``: (tonic, "major" | "minor") of a tune the player gave — the key the piece is
        in when the prompt names none (a tune played in G is accompanied in G)."""
        self.prompt, self.seed = prompt, int(seed)
        spec = self.spec = read_prompt(prompt)
        base = self.base = stable_hash(spec.text, self.seed)
        rng = random.Random(base)                  # drawn in this order: genre, tempo, mode, key, groove
        if spec.genre:
            gname, self.why = spec.genre, spec.genre_why
        else:
            gname, self.why = _guess_genre(spec, rng)
        g = self.g = G.GENRES[gname]
        self.meter = spec.meter or g.meter
        num, den = self.meter
        self.bpb = num * 4.0 / den
        self.steps = max(1, int(round(self.bpb * 4)))
        self.groups, self.compound = meter_groups(self.meter, spec.groups or g.groups.get(self.meter))
        #: whether the style's own patterns for this meter (written in its grouping) fit the asked one;
        #: never across a simple and a compound meter of one bar length (a 6/8 style's bars in 3/4
        #: would play two dotted quarters where three quarters were asked for, and the reverse)
        self.own_grouping = self.groups == meter_groups(self.meter, g.groups.get(self.meter))[0] \
            and _compound(self.meter) == _compound(g.meter)
        self.beat = 1.5 if self.compound else 1.0          # the felt beat, in quarters
        #: where the groups start, in beats (every beat in a simple meter)
        self.group_starts_beats = tuple(st / 4 for st in group_starts(self.groups)) if self.groups else \
            tuple(float(b) for b in range(int(self.bpb)))
        self.bpm = _tempo(spec, g, bpm, rng, self.beat, self.meter,
                          additive=bool(self.groups) and not self.compound and den == 8)
        if spec.mode is None and spec.key_root is not None and "major" in g.modes:
            mode = "major"          # a bare key letter ("in E", "key of Bb") is its major, as players say it
        else:
            mode = spec.mode or g.modes[rng.randrange(len(g.modes))]
        if home is not None and not spec.mode:
            mode = home[1]
        plain = "minor" if mode in ("dorian", "phrygian", "locrian") else "major" if mode in ("lydian", "mixolydian") \
            else None
        if (not spec.mode or spec.mode_is_mood) and home is None and plain in g.modes \
                and stable_hash(base, "mode") % 3:
            # unasked, a style's modal colour plays a third of the time, its plain key else; a
            # mood's colour too ("dreamy": lydian) — a mood is not a key, and a lydian or dorian
            # tune is heard in the key a fifth away (the bedroom pop in Eb lydian read Bb major)
            mode = plain
        if mode not in G.MODES:
            mode = "minor" if "min" in mode else "major"
        self.mode = mode
        self.key_root = spec.key_root if spec.key_root is not None else rng.randrange(12)
        if home is not None and spec.key_root is None:
            self.key_root = int(home[0]) % 12
        self.scale = tuple(sorted((self.key_root + i) % 12 for i in G.MODES[mode]))
        self.family = G.MODE_FAMILY[mode]
        self.progs, self.prog_scale = _progressions(g, self.family)
        self.swing = g.swing if spec.swing is None else spec.swing
        self.swing_unit = g.swing_unit if spec.swing is None else 0.5
        if spec.swing and g.swing > spec.swing and g.swing_unit == 0.5:
            self.swing = g.swing       # "shuffle" in a style that swings harder keeps the style's swing
        if den == 8 or self.groups:
            self.swing = 0.0           # eighth-note meters (6/8, 7/8 …) are played even, never swung
        self.intro_bars = spec.intro_bars if spec.intro_bars is not None else g.intro_bars
        if spec.intro_bars is None and self.intro_bars > 1:
            # a slow bar (a 12/8 blues at 60: four seconds) makes the style's two-bar intro eight
            # seconds long: the band is in by about seven seconds, whatever the tempo
            self.intro_bars = max(1, min(self.intro_bars, int(_INTRO_MAX_S * self.bpm / (60.0 * self.bpb))))
        ms_to_beats = self.bpm / 60000.0
        self.jitter = g.humanize_ms * ms_to_beats
        self.laid_back = g.laid_back_ms * ms_to_beats
        self.intensity = sum(G.MOODS[m][2] for m in spec.moods)
        self.vel_scale = min(1.12, max(0.82, 1.0 + 0.2 * self.intensity))    # calm plays softer, energetic harder
        self._build_parts(spec, rng)

    def _build_parts(self, spec: PromptSpec, rng: random.Random) -> None:
        g = self.g
        specs = _cast(g, spec)
        if spec.a_cappella:                 # voices alone: no kit (named percussion still plays, on its own)
            specs = [d for d in specs if d["role"] != "drums" or d["named"]]
        kit, groove, lanes = _drum_words(spec, specs)
        #: a style without drums given hand percussion by name ("ambient … and wind chimes", "a
        #: lullaby with a shaker") gets a percussionist playing those, not a drum kit's groove;
        #: a kit or groove word ("brushes", "breakbeat") or "drums" still brings the kit
        self.lanes_only = bool(lanes) and kit is None and groove is None and "drums" not in spec.only_roles \
            and not any(d["role"] == "drums" for d in specs)
        # what the prompt names plays, kit pieces too: "handclaps and mirwas drums", "palmas and cajon",
        # "claps and a kick drum … no drum kit"
        hand = dict(lanes)
        if "drums" in spec.no_roles and hand and kit is None and not spec.no_percussion:
            # "darbuka and riq … no Western drum kit", "synth ve bateri yok" with a darbuka: the
            # percussionist plays what the prompt names, the kit stays out
            self.lanes_only, lanes = True, hand
            specs = [d for d in specs if d["role"] != "drums"]
            specs.insert(0, dict(_part("drums", "drums", g.kit), named=True))
        specs = _keep(g, spec, specs)
        self.kit = kit if kit is not None else g.kit
        self._choose_groove(groove, lanes, rng)
        if self.lanes_only:
            # a percussionist alone plays the words' own patterns, not a fallback kit groove's
            # (a drumless 4/4 style's "gentle kick" on the half bar, not four on the floor)
            self.groove = {lane: self.fit(pat) for lane, pat in lanes.items()}
        self.parts, self.plans = self._mix(specs)
        self.kick_steps = self._lane_steps("kick")
        self.named_lanes = frozenset(lanes)
        # the kit's keys the prompt says no to ("no kick", "no crashes"), a drum named elsewhere
        # kept ("no crash cymbals, just ride"): out of the groove, the builds and the fills
        named = {G.LANES[ln.rstrip("+")] for ln in lanes if ln.rstrip("+") in G.LANES}
        self.silent_keys = frozenset(G.LANES[ln] for ln in spec.no_lanes if ln in G.LANES) - named

    def _choose_groove(self, word: str | None, lanes: dict, rng: random.Random) -> None:
        """The genre's grooves (in its meter) or the meter's generic one; drum-word lanes merged in."""
        g = self.g
        gro = [G.SPECIAL_GROOVES[word]] if word else list(g.grooves) if self.own_grouping else []
        if not gro:
            gro = [G.SPECIAL_GROOVES["four"]] if self.bpb == 4 else []
        gro = [x for x in gro if all(len(p) % self.steps == 0 for p in x.values())] or [self._meter_groove()]
        if self.groups and not self.compound and not any(
                all(len(p) % self.steps == 0 for p in x.values()) for x in ([G.SPECIAL_GROOVES[word]] if word
                                                                           else g.grooves)):
            gro = [self._meter_groove()]   # an additive meter the style does not write: its grouping's groove
        self.groove = gro[rng.randrange(len(gro))]
        if self.spec.no_lanes:
            # "no hi-hats, no kick": the groove without those lanes (a drum word named plays)
            self.groove = {ln: p for ln, p in self.groove.items() if ln.rstrip("+") not in self.spec.no_lanes}
        if lanes:
            self.groove = dict(self.groove)
            for lane, pat in lanes.items():
                pat = self.fit(pat)
                have = self.groove.get(lane)
                if lane == "snare":
                    under = self.groove.get("clap") or self.groove.get("snare+")
                    if under and not (have and all(h != "." for h, u in zip(have, under) if u != ".")):
                        # layered under the clap (trap), the groove's own ghosts kept
                        pat = under if not have else "".join(h if h != "." else under[q % len(under)]
                                                             for q, h in enumerate(have))
                        self.groove[lane] = pat
                        continue
                    if have or self.groove.get("rim") or self.groove.get("side"):
                        continue      # its own snare, or the rim's cross-stick: the one-drop, the bossa
                if have and _density(have) >= _density(pat):   # the style plays it as much already: its
                    continue                                    # way (forró's triangle, not the word's quarters)
                if have and len(have) % len(pat) == 0:         # merge: the groove's hits (rolls, accents) stay
                    pat = "".join(h if h != "." else pat[q % len(pat)] for q, h in enumerate(have))
                self.groove[lane] = pat

    def _mix(self, specs: list[dict]) -> tuple[list[Part], list[PartPlan]]:
        """Parts with their channel, level, pan and register: role defaults, several parts of a
        role spread across the stereo field."""
        g = self.g
        parts: list[Part] = []
        plans: list[PartPlan] = []
        chan = 0
        seen: dict[str, int] = {}
        n_side, first_side = 0, 1
        for d in specs[:15]:
            role = d["role"]
            lvl, pan, rvb, cho = G.ROLE_MIX[role]
            n = seen.get(role, 0)
            seen[role] = n + 1
            if role not in ("drums", "bass"):          # alternate sides, wider for later parts
                side = -1 if n_side % 2 else 1
                if n_side == 0:
                    side = 1 if pan >= 0 else -1
                    first_side = side
                else:
                    side = first_side * (-1 if n_side % 2 else 1)
                pan = side * abs(pan) * (1.0 + 0.2 * (n_side // 2))
                n_side += 1
            if d.get("pan") is not None:
                pan = d["pan"]
            if d.get("level"):
                lvl = d["level"]
            if n:
                lvl *= 0.85
            if role == "drums":
                channel = DRUM_CHANNEL
                program = self.kit
            else:
                channel = chan if chan < DRUM_CHANNEL else chan + 1
                chan += 1
                program = d["program"]
            part = Part(name=d["name"], role=role, program=int(program), channel=channel, level=round(lvl, 3),
                        pan=round(max(-0.9, min(0.9, pan)), 3), reverb=round(min(1.0, g.reverb * rvb), 3),
                        chorus=cho, drive=G.amp_drive(g.family, program, role))
            style = d.get("style") or self._role_style(role, n)
            lo, hi, centre = _register(role, style, program)
            sh = 12 * d.get("octave", 0) + (5 if n and role in ("chords", "arp") and not d.get("octave") else 0)
            parts.append(part)
            plans.append(PartPlan(part, role, style, lo + sh, hi + sh, centre + sh, n, bool(d.get("named"))))
        return parts, plans

    def _role_style(self, role: str, n: int = 0) -> str:
        """A part's playing style when its word brings none: the style's patterns for its first bass
        and chords parts (where written), else the style's named player for the role."""
        g = self.g
        if n == 0 and role == "bass" and g.bass_pats:
            return "pats"
        if n == 0 and role == "chords" and g.comp_pats:
            return "pats"
        return {"bass": g.bass, "chords": g.chords, "pad": g.pad, "lead": g.lead, "arp": g.arp,
                "perc": g.perc}.get(role, G.ROLE_STYLE.get(role, ""))

    #: where a 4/4 beat's four 16ths land in a compound beat's six: on the beat, the second and
    #: third eighths, the 16th before the next beat
    _COMPOUND_16THS = (0, 2, 4, 5)

    def fit(self, pat: str) -> str:
        """A lane written for 4/4 cut or repeated to this meter's steps; in a compound meter beat
        by beat — a quarter's hits on the dotted quarter, its offbeat on the third eighth — so
        a triangle "on the beats" plays 6/8's two beats, not three quarters across them."""
        if len(pat) % self.steps == 0:
            return pat
        if self.compound and len(pat) % 16 == 0 and self.steps % 6 == 0:
            for first in (0, 2):         # a lane only on the 4/4 bar's second half (a vibraslap on
                out = ["."] * self.steps  # three, tom rolls into the next bar) starts from there
                for b in range(self.steps // 6):
                    for k, to in enumerate(self._COMPOUND_16THS):
                        out[6 * b + to] = pat[(4 * (b + first) + k) % len(pat)]
                if any(c != "." for c in out):
                    break
            return "".join(out)
        out = (pat * (self.steps // len(pat) + 1))[:self.steps]
        hits = [q for q, c in enumerate(pat) if c != "."]
        if hits and all(c == "." for c in out):
            first = hits[0] // 4 * 4          # a lane past the bar's end (a vibraslap on four) from its beat
            out = ((pat[first:] + pat) * (self.steps // len(pat) + 1))[:self.steps]
        return out

    def _meter_groove(self) -> dict:
        """A groove for a meter the style does not write, from the meter's grouping: the kick on
        the bar's first group, the backbeat on the others (the last one the strongest), and the
        hats on every eighth, accented where a group starts — so 7/8 is heard 2+2+3, 6/8 in two."""
        if self.meter in G.METER_GROOVES and not (self.groups and not self.compound):
            return G.METER_GROOVES[self.meter]
        steps = self.steps
        starts = group_starts(self.groups) if self.groups else list(range(0, steps, 4))
        kick, snare, hat = ["."] * steps, ["."] * steps, ["."] * steps
        n = len(starts)
        for gi, st in enumerate(starts):
            if st >= steps:
                break
            if gi == 0:
                kick[st] = "X"
            elif gi == n - 1 or (n >= 4 and gi == n // 2):
                snare[st] = "x"
            elif self.compound and n == 3:
                snare[st] = "o"        # 9/8's middle beat the lightest: a kick there made its three
                #                        beats alike, heard as often in twelve eighths as in nine
            else:
                kick[st] = "x"
                if self.compound or (self.groups and self.groups[gi] >= 3):
                    snare[st] = "o"
        if self.groups and not self.compound and self.groups[-1] >= 3 and starts[-1] + 4 < steps:
            kick[starts[-1] + 4] = "o"                       # the long group's pickup into the next bar
        for st in range(0, steps, 2):
            hat[st] = "X" if st == 0 else "x" if st in starts else "o"     # the downbeat the heaviest
        return {"kick": "".join(kick), "snare": "".join(snare), "chat": "".join(hat)}

    def explain(self) -> dict:
        """What the composer understood: style (and why), tempo, meter, key, instruments. Shown by
        ``wavebridge render --explain`` and logged when a job starts. ``[engine]``"""
        # the key as the prompt spelled it, else as musicians write it: Db, Eb, Ab, Bb major; C#,
        # F#, G# minor (a key read from "in Db" is no C#)
        flats = self.spec.key_flats
        if flats is None:
            flats = self.mode in ("major", "lydian", "mixolydian") or self.key_root in (3, 10)
        names = (["C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B"] if flats else
                 ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"])
        if self.spec.key_flats is None:
            names[6] = "F#"                        # F# major and minor, as both are usually written
        num, den = self.meter
        meter = f"{num}/{den}"
        if self.groups and not self.compound:
            meter += " (" + "+".join(str(x) for x in self.groups) + ", additive)"
        elif self.compound:
            meter += " (compound: " + str(len(self.groups)) + " dotted-quarter beats)"
        spec = self.spec
        tempo_from = ("the prompt" if spec.bpm is not None else f"the marking {spec.marking!r}" if spec.marking_bpm else
                      "the style's range" + (" (slow end)" if spec.pace < 0 else " (fast end)" if spec.pace > 0 else ""))
        unit = "dotted quarter" if self.compound else "quarter"
        return {
            "style": self.g.name, "family": self.g.family, "why": self.why,
            "tempo": f"{self.bpm / self.beat:.0f} bpm ({unit} beat, from {tempo_from})",
            "meter": meter, "swing": round(self.swing, 2), "key": f"{names[self.key_root]} {self.mode}",
            "intro_bars": int(self.intro_bars),
            "instruments": [{"name": pl.part.name, "role": pl.role,
                             "program": (f"kit {pl.part.program}" if pl.role == "drums" else pl.part.program),
                             "named": pl.named} for pl in self.plans],
            "percussion": sorted(self.named_lanes),
            "spelled": list(spec.spelled),
        }

    def _lane_steps(self, lane: str) -> list[int]:
        pat = self.groove.get(lane) or self.groove.get(lane + "+") or ""
        return [s for s, ch in enumerate(pat[:self.steps]) if ch not in ".?"] or [0]


# --- decisions made from the words ------------------------------------------------------------------
#: words that ask for a band or a beat: "piano type beat", "piano with a drum loop", "piano and singer"
_BEAT_WORDS_RE = re.compile(r"\b(?:beats?|loops?|drums?|percussion|bass|bassline|singer|vocals?|voice|band|groove|"
                            r"rap|edm|vlog|podcast|game|trap|drill|house|dance|ballads?)\b")
#: what a prompt says no to ("without percussion", "no drums"): no sign of a beat
_SAID_NO_RE = re.compile(r"\b(?:no|without|sans|sin|ohne|senza|sem)\s+(?:any\s+|the\s+)?[\w-]+")
#: an orchestra or strings named with no style: the concert hall's or the screen's
_ORCHESTRA_RE = re.compile(r"\b(?:string\s+orchestra|string\s+section|(?<!new )(?<!pulling )(?<!pull )(?<!guitar )"
                           r"(?<!\d-)(?<!\d )strings(?!\s+(?:on|of|attached)\b)|orchestra(?!\s+hits?\b)|orchestral|symphonic|"
                           r"symphony|philharmonic|orchestre|orquesta|orchester|orchestrale?)\b")
#: dances whose pace is their own within the styles that play them — (factor, styles, (lowest,
#: highest bpm)): a scherzo is a fast three (one beat to the bar) where a nocturne or a quartet's
#: slow movement is not; a strathspey a reel's four at two-thirds of its pace
_DANCE_PACE = {"scherzo": (2.6, ("romantic piano", "classical"), (30.0, 240.0)),
               "strathspey": (0.62, ("reel", "celtic"), (30.0, 240.0)),
               # a jazz ballad: 80–92, below the range a swing tune's "slow" reaches (at 59–76 its
               # swung eighths were tapped on their triplets, ×1.5)
               "ballad": (0.7, ("jazz", "cool jazz", "bebop", "soul jazz", "lounge", "swing", "jazz waltz"), (80.0, 92.0)),
               # happy hardcore: trance's sounds at 165–180
               "hardcore": (1.25, ("trance",), (30.0, 240.0)),
               # a waltz for the piano (Chopin's): a dance's three, not a nocturne's slow four
               "waltz": (2.0, ("romantic piano",), (30.0, 240.0)),
               # the ballroom's slow waltz (84–90) and foxtrot (112–120): a Viennese waltz's and a
               # swing band's dances at a walk
               "slow waltz": (0.58, ("waltz",), (80.0, 96.0)), "foxtrot": (0.7, ("swing",), (108.0, 124.0))}


def _pads_alone(spec: PromptSpec, named: list[str]) -> str | None:
    """The pad word of a prompt where pads name ambient (:data:`_PAD_WORDS`), else ``None``."""
    pads = next((w for w in named if w in _PAD_WORDS), None)
    if pads is None or not set(named) <= _PAD_COMPANY or spec.drum_words or (spec.bpm or 0) >= 100 \
            or set(spec.moods) & _ENERGY_MOODS:
        return None
    rest = re.sub(r"\b(?:no|without)\s+(?:drums?|beats?|percussion)\b|\bgames?\b", "", spec.text.replace(pads, ""))
    return None if _BEAT_WORDS_RE.search(rest) or _BAND_SIGN_RE.search(rest) else pads


def _guess_genre(spec: PromptSpec, rng: random.Random) -> tuple[str, str]:
    """A genre for a prompt that names none, and why: from its instruments, drum words, meter or
    moods, else one of the everyday styles by the hash."""
    if spec.a_cappella and not spec.drum_words and "hymn" in G.GENRES:
        return "hymn", "voices alone (a cappella): a choir's four parts"
    if spec.instruments and set(spec.instruments) <= {"piano", "grand piano", "pianos", "acoustic piano", "felt piano",
                                                               "prepared piano", "prepared-piano", "klavier",
                                                               "fortepian", "fortepiano", "pianino", "pianoforte"} \
            and not spec.drum_words and not _BEAT_WORDS_RE.search(spec.text) and "romantic piano" in G.GENRES:
        return "romantic piano", f"the piano alone ({spec.instruments[0]!r}): a piece for the piano"
    if spec.chamber and "classical" in G.GENRES:
        return "classical", ("a chamber piece for the instruments named ("
                             + ", ".join(repr(w) for w in dict.fromkeys(spec.instruments)) + ")")
    for w in spec.drum_words:
        if _BEAT_DRUM_HINTS.get(w) in G.GENRES:
            return _BEAT_DRUM_HINTS[w], f"the drum word {w!r}"
    if spec.only_roles and spec.only_roles <= {"drums", "bass"} and not spec.instruments and "pop" in G.GENRES \
            and not set(spec.drum_words) - _KIT_WORDS:
        return "pop", "the kit alone (or with a bass): a plain backbeat"
    named = list(dict.fromkeys(spec.instruments))
    folk = [w for w in named if _FOLK_HINTS.get(w) in G.GENRES and not (w == "oud" and _DUTCH_OUD_RE.search(spec.text))]
    if folk and not _BAND_SIGN_RE.search(spec.text):
        style = max(dict.fromkeys(_FOLK_HINTS[w] for w in folk), key=lambda g: sum(_FOLK_HINTS[w] == g for w in folk))
        if 2 * sum(_FOLK_HINTS[w] == style for w in folk) >= len(named):
            return style, f"the instrument {next(w for w in folk if _FOLK_HINTS[w] == style)!r}"
    for w in spec.instruments:
        if w in _GENRE_HINTS and _GENRE_HINTS[w] in G.GENRES:
            return _GENRE_HINTS[w], f"the instrument {w!r}"
    said = _SAID_NO_RE.sub(" ", spec.text)          # "without percussion" asks for none
    if (o := _ORCHESTRA_RE.search(said)) and not _BEAT_WORDS_RE.search(_ORCHESTRA_RE.sub(" ", said)) \
            and not re.search(r"\b808s?\b", said) and "cinematic" in G.GENRES and "classical" in G.GENRES:
        # an orchestra, a symphony, strings for a love theme or an adagio: the concert hall's or the
        # screen's (strings alone the quartet's idiom, a marking or a string orchestra the concert's)
        strings_only = o.group(0).startswith("string") and not re.search(r"\b(?:brass|horns?|winds|woodwinds|timpani|"
                                                                        r"percussion|choir|epic|trailer|film|cinematic)\b",
                                                                        said)
        return ("classical" if strings_only or spec.marking else "cinematic"), f"the word {o.group(0)!r}"
    if spec.marking and not _BEAT_WORDS_RE.search(said) and "classical" in G.GENRES:
        return "classical", f"the tempo marking {spec.marking!r}: a concert piece"
    if (pads := _pads_alone(spec, named)) and "ambient" in G.GENRES:
        return "ambient", f"the instrument {pads!r}"
    for w in spec.drum_words:
        w = w if w in _DRUM_GENRE_HINTS or not w.endswith("s") else w[:-1]      # "two djembes"
        style = _DRUM_GENRE_HINTS.get(w)
        if style in G.GENRES and (w not in _WORLD_DRUMS or all(_FOLK_HINTS.get(x) == style for x in named)
                                  and not _BAND_SIGN_RE.search(spec.text) and not set(spec.moods) & _SCREEN_MOODS):
            return style, f"the drum word {w!r}"
    for rx, name in _MODE_GENRE_RES:
        if (m := rx.search(spec.text)) and name in G.GENRES:
            return name, f"the word {m.group(0)!r}"
    # a scene named alone comes before a stated 3/4 ("ballroom … in 3/4" is a waltz either way, "a
    # medieval tavern in 3/4" the tavern's); with instruments named, 3/4 is their waltz first
    if spec.scene is not None and not spec.instruments and not spec.drum_words:
        return spec.scene[0], f"the scene {spec.scene[1]!r}"
    if spec.meter == (3, 4):
        return "waltz", "the meter 3/4"
    if spec.scene is not None:
        return spec.scene[0], f"the scene {spec.scene[1]!r}"
    for m in sorted(spec.moods, key=lambda m: m != "ballad"):     # a ballad's style first ("una balada triste")
        if m in G.MOOD_GENRES:
            opts = [o for o in G.MOOD_GENRES[m] if o in G.GENRES and o != spec.refused]
            if opts:
                return opts[rng.randrange(len(opts))], f"the mood {m!r}"
    w = next((w for w in spec.instruments if w in _WEAK_GENRE_HINTS), None)
    if w and _WEAK_GENRE_HINTS[w] in G.GENRES and set(named) <= _ACOUSTIC_COMPANY | set(_WEAK_GENRE_HINTS) \
            and set(spec.drum_words) <= _HAND_PERCUSSION:
        return _WEAK_GENRE_HINTS[w], f"the instrument {w!r}"
    opts = [o for o in G.DEFAULT_GENRES if o in G.GENRES and o != spec.refused]
    return opts[rng.randrange(len(opts))], "no style named: an everyday style, by the seed"


def _tempo(spec: PromptSpec, g: G.Genre, bpm: float | None, rng: random.Random, beat: float = 1.0,
           meter: tuple[int, int] = (4, 4), additive: bool = False) -> float:
    """The tempo in quarter notes a minute: ``bpm`` if given (a host's or ``/wb/tempo``'s, in
    quarters), else the prompt's, else a draw from the style's range (the low end when the
    prompt says slow, the high end when it says fast) × the moods' factor. The prompt's number
    and a compound style's range count the felt beat (``beat`` quarters: a dotted quarter in
    6/8). A simple-meter style played in 12/8 keeps its beat (four beats a bar, each now three
    eighths: a soul ballad's 66 becomes 66 dotted quarters, not 44); in 6/8 and 9/8 it keeps
    its eighths' pace. ``additive``: the meter is played in uneven groups (7/8, or a 9/8 asked as
    2+2+2+3)."""
    if bpm is not None:
        return float(min(max(float(bpm), 30.0), 300.0))
    if spec.bpm is not None:
        tempo = spec.bpm * beat
    elif spec.marking_bpm is not None:
        tempo = spec.marking_bpm                  # in quarters: a 6/8 andante's dotted quarter at 2/3 of it
    else:
        lo, hi = g.bpm
        scale = beat if _compound(g.meter) or meter == (12, 8) else 1.0
        u = rng.random()
        if spec.pace > 0:
            u = 0.75 + 0.25 * u
        elif spec.pace < 0:
            u = 0.25 * u
        tempo = round(lo + (hi - lo) * u)
        factor = spec.tempo_factor
        if "ballad" in spec.moods:
            if spec.pace == 0:
                tempo = round(lo + (hi - lo) * 0.25 * u)   # a ballad: the style's slow end …
            if lo < 75:
                factor /= G.MOODS["ballad"][1]         # … and a slow style's (r&b, soul, lofi) only that
        tempo = min(max(tempo * factor, lo * 0.7), hi * 1.15) * scale
        pace, styles, (slowest, fastest) = _DANCE_PACE.get(spec.dance, (1.0, (), (0.0, 0.0)))
        if g.name in styles:
            tempo = min(max(tempo * pace, slowest), fastest)
        odd = additive or _additive_eighths(meter)
        native = _additive_eighths(g.meter) or bool(g.groups.get(meter)) and meter == g.meter
        if odd and not native and tempo > _ODD_METER_MAX_BPM:
            # a 4/4 style asked into 7/8 (or into 9/8 as 2+2+2+3) settles where its groups are felt
            tempo = round(_ODD_METER_MAX_BPM * (0.86 + 0.14 * u))
        if odd and spec.pace < 0 and tempo > _ODD_METER_SLOW_BPM:
            # a slow one of a fast odd-meter dance (a sevdalinka, the lament of the Balkans' 7/8)
            tempo = round(_ODD_METER_SLOW_BPM * (0.9 + 0.1 * u))
        if meter == (5, 8) and tempo > _FIVE_EIGHT_MAX_BPM:
            tempo = round(_FIVE_EIGHT_MAX_BPM * (0.86 + 0.14 * u))
        if _compound(meter) and not additive and tempo < _COMPOUND_MIN_BEAT * 1.5:
            tempo = _COMPOUND_MIN_BEAT * 1.5
    return float(min(max(tempo, 30.0), 300.0))


#: the fastest quarter a style not native to an odd eighth meter takes in one (no tempo asked): a
#: djent or metalcore riff in 7/8 at 149–160 is eighths at 300–320 a minute, whose 2+2+3 groups
#: a listener (and a beat tracker) hears as an even half-bar pulse; at 118–132 they are felt as
#: groups (set B's djent and set D's metalcore in 7/8: heard in 7 in 9 of 10 takes at 118–132, in
#: none of 2 at 149–160)
_ODD_METER_MAX_BPM = 132.0
#: the fastest quarter an odd eighth meter takes when the prompt says slow: eighths at ~220 a minute
#: or fewer, where a dance style's own range (the Balkans' 150–190) would run them at 300 and more
_ODD_METER_SLOW_BPM = 112.0
#: the longest intro, in seconds, a style's own intro bars take when the prompt asks no intro length
_INTRO_MAX_S = 7.0
#: the fastest quarter a 5/8 takes when no tempo is asked: its bar is too short to hold two
#: beats, so above ~170 eighths a minute a listener (and a beat tracker) hears an even half-bar
#: pulse of 2.5 eighths; below it the eighths themselves are the pulse, in 3+2 (set E's midwest
#: emo in 5/8: heard as a half bar at 96–118 in 4 takes of 4, in 5/8 at 80 in 2 of 2, at 88 in 1 of 2)
_FIVE_EIGHT_MAX_BPM = 84.0
#: the slowest dotted quarter a 6/8, 9/8 or 12/8 takes when no tempo is asked: below it a beat
#: tracker (and a listener) feels the beat in eighth pairs, 1.5 eighths apart, not in threes
#: (sets C and F: soul ballads in 12/8 at 55–58, 3 takes of 3; blues, soul and classical in 9/8 and
#: 6/8 at 47–59, 6 takes of 7; set G's lullabies, shanties, nocturnes and barcarolles at 64: 4 of 12
#: tapped on the dotted quarter, at 70: 8 of 12)
_COMPOUND_MIN_BEAT = 70.0


def _additive_eighths(meter: tuple[int, int]) -> bool:
    """An odd count of eighths (5/8, 7/8, 11/8 …) — not 6/8, 9/8 or 12/8 in threes."""
    return meter[1] == 8 and not _compound(meter) and meter[0] % 2 == 1


def _compound(meter: tuple[int, int]) -> bool:
    num, den = meter
    return den == 8 and num in (6, 9, 12)


#: additive meters' usual groupings, in eighths (a prompt's "3+2+2" or a style's ``groups`` win)
_ADDITIVE = {(5, 8): (3, 2), (7, 8): (2, 2, 3), (8, 8): (3, 3, 2), (10, 8): (3, 3, 2, 2), (11, 8): (2, 2, 3, 2, 2),
             (13, 8): (2, 2, 3, 2, 2, 2), (15, 8): (2, 2, 2, 3, 3, 3), (5, 4): (6, 4), (7, 4): (8, 6),
             (5, 16): (3, 2), (7, 16): (2, 2, 3)}


def meter_groups(meter: tuple[int, int], asked: tuple[int, ...] | None) -> tuple[tuple[int, ...], bool]:
    """``(grouping in eighths, compound?)`` for a meter: 6/8, 9/8, 12/8 group in threes (compound,
    a dotted-quarter beat) unless a grouping is asked for (9/8 as 2+2+2+3 is additive); 5/8, 7/8,
    11/8 … and 5/4, 7/4 get their usual grouping or the asked one; simple meters none."""
    num, den = meter
    if asked and den in (4, 8) and all(a > 0 for a in asked) and sum(asked) == num:
        groups = tuple(int(a) * (2 if den == 4 else 1) for a in asked)      # quarters count as two eighths
        return groups, _compound(meter) and all(a == 3 for a in asked)
    if _compound(meter):
        return (3,) * (num // 3), True
    return _ADDITIVE.get(meter, ()), False


def group_starts(groups: tuple[int, ...]) -> list[int]:
    """The 16th steps where each group of eighths starts."""
    starts, pos = [], 0
    for n in groups:
        starts.append(pos)
        pos += 2 * n
    return starts


def _progressions(g: G.Genre, fam: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The progressions the mode family reads its chords from, and the scale their numerals count in."""
    if fam in g.progressions:
        return g.progressions[fam], G.MODES[fam]
    if fam not in ("major", "minor") and fam in G.PROGRESSIONS:
        return G.PROGRESSIONS[fam], G.MODES[fam]
    fam = "major" if fam in ("major", "lydian", "mixolydian") else "minor"
    return g.progressions.get(fam) or G.PROGRESSIONS[fam], G.MODES[fam]


def _part(name: str, role: str, program: int, style: str = "", named: bool = True) -> dict:
    return {"name": name, "role": role, "program": program, "style": style, "pan": None, "octave": 0,
            "named": named, "level": 0.0}


_BOTH_HANDS = frozenset((*range(0, 8), *range(16, 22), 23, 24, 25, 46))     # (an accordion's bass buttons too)
#: instruments whose player carries a tune over their own chords when alone: those of both hands,
#: the jazz and clean electric guitars (chord melody), banjo, shamisen, koto; over a bass, a power
#: trio's muted or overdriven guitar too ("blues trio: guitar, bass, drums")
_CHORD_MELODY = _BOTH_HANDS | {26, 27, 105, 106, 107}
_TRIO_GUITARS = frozenset((28, 29, 30))
#: a word that names another instrument in a family of styles (another word's part, or another
#: program in the word's own part): in a concert style the horns are French horns holding chords
#: and an organ is the pipe organ (19); in the Balkans the tambura is plucked (105), not India's drone
_IN_FAMILY = {("horns", "classical"): "french horn", ("horn", "classical"): "french horn",
              # palm-muted guitars in metal are its distortion, muted (not GM's clean muted guitar)
              ("muted guitar", "metal"): "distorted guitar", ("muted guitars", "metal"): "distorted guitar",
              ("organ", "classical"): 19, ("tambura", "balkan"): 105, ("tamburas", "balkan"): 105,
              ("tamboura", "balkan"): 105,
              # a "clean lead" over rock's and metal's guitars is a clean electric guitar
              **{(w, fam): 27 for w in ("clean lead", "clean leads") for fam in ("rock", "metal")},
              # rock's slide guitar is its own guitar (Duane Allman's overdriven, not Son House's)
              ("slide guitar", "rock"): "guitar", ("slide guitars", "rock"): "guitars",
              # a guitar in jazz is the archtop's (GM's jazz guitar), not a steel-string strummer's
              ("guitar", "jazz"): "jazz guitar", ("guitars", "jazz"): "jazz guitar"}
#: the words for a section of the orchestra or the band: alone, the style's own parts of that kind play
_SECTIONS = frozenset(("strings", "horns", "brass", "brass section"))
#: the bass slapped: "slap funk", "slapped bass", "slappin'"
_SLAP_RE = re.compile(r"\bslap(?:ped|ping|pin'?)?\b")


def _cast(g: G.Genre, spec: PromptSpec) -> list[dict]:
    """The genre's parts, each instrument word replacing the genre's part of its role (the first
    one not already named) or added."""
    specs: list[dict] = []
    # an instrument that plays its own bass and chords (keyboards, organ, harp, a fingerstyle guitar)
    alone = {G.INSTRUMENTS[w][0] for w in spec.instruments} & _BOTH_HANDS if spec.solo else set()
    # a section said to play alone ("strings only", "just brass"): all of the style's own parts of it
    section = {p for w in spec.instruments if w in _SECTIONS for p in _GENERIC[w]} if spec.solo else set()
    alone |= section
    for ps in g.parts:
        # alone: the asked roles, and the style's own parts on an instrument of both hands played
        # alone (a polonaise's "grand piano alone" keeps the left hand's octaves and the bass)
        if not spec.solo or ps.role in spec.only_roles or (ps.program in alone and ps.role != "drums"):
            program = ps.program
            if ps.role == "bass" and program == 33 and _SLAP_RE.search(spec.text):
                program = 36                # "slap funk", "slapped bass": the style's bass slapped
            specs.append({"name": ps.name, "role": ps.role, "program": program, "style": ps.style,
                          "pan": ps.pan, "octave": ps.octave, "named": False, "level": ps.level})
    for w in spec.instruments:
        prog, role, style = G.INSTRUMENTS[w]
        alt = _IN_FAMILY.get((w, g.family))
        if alt is not None and re.search(r"\bclean\s+" + re.escape(w), spec.text):
            alt = None                        # "a clean muted guitar" stays clean in metal
        if (w, g.family) in (("guitar", "jazz"), ("guitars", "jazz")) and re.search(
                r"\b(?:steel|acoustic|fingerstyle|folk|gypsy|manouche|django|selmer)\b", spec.text):
            alt = None                        # a steel-string said, or gypsy jazz's Selmer: no archtop
        if isinstance(alt, str):
            prog, role, style = G.INSTRUMENTS[alt]
        elif alt is not None:
            prog = alt
        same = next((d for d in specs if not d["named"] and d["name"] == w and d["role"] != "drums"), None) \
            if " " in w else None
        if same is not None and w not in spec.as_lead:
            same["named"] = True              # the style's own part by that name ("low strings" in a trailer)
            continue
        kin = _GENERIC.get(w) or (_GENERIC.get(alt) if isinstance(alt, str) else None)
        if kin is not None:
            # the style's own part of the kind: "organ" in a hymn is its church organ, "guitars" in
            # metal its distortion, a "guitar solo" in a power ballad its overdriven lead
            lead = w in spec.as_lead or w in _LEAD_GUITARS        # "lead guitar": the style's lead
            # the part called by the word first: bluegrass's "guitar", not its mandolin (a
            # steel-string too), which the word "mandolin" then names
            own = min((d for d in specs if not d["named"] and d["program"] in kin
                       and (d["role"] == "lead" if lead else d["role"] != "drums")
                       and not (kin is _GUITARS and d["name"] in _OTHER_LUTES)),
                      key=lambda d: w.rstrip("s") not in d["name"], default=None)
            if own is not None:
                own["named"] = True
                continue
            if spec.solo:
                # played alone, a generic word is still the style's own instrument (a bossa's
                # "guitar only" its nylon guitar, metal's its distortion)
                ps = next((ps for ps in g.parts if ps.program in kin and ps.role != "drums"), None)
                if ps is not None and not (ps.program in (29, 30) and g.family == "blues" and not re.search(
                        r"electri|distort|overdriv|crunch|fuzz|chicago|rock", spec.text)
                                           and not spec.only_roles & {"drums", "bass"}):
                    prog = ps.program           # (a bluesman's guitar beside his harmonica is acoustic)
            if w in spec.as_lead and w in ("keyboard", "keyboards"):
                # a "keyboard solo" over the style's own keys: the solo on that instrument
                prog = next((d["program"] for d in specs if d["program"] in kin and d["role"] != "drums"), prog)
            if w in _LEAD_GUITARS and g.family not in ("rock", "metal") \
                    and not g.name.startswith("blues") and not re.search(r"distort|overdriv|crunch|fuzz", spec.text):
                # a "lead guitar" in a style with no guitar lead: on the style's own guitar (a jazz
                # guitar, a bossa's nylon, a country telecaster), else a clean electric one — an
                # overdriven one in rock, metal and the blues
                own_guitars = [d["program"] for d in specs if d["program"] in kin and d["role"] != "drums"]
                prog = next((p for p in (27, 29, 28, 30, 31, 26) if p in own_guitars), own_guitars[0] if own_guitars else 27)
        if not spec.as_lead and w not in spec.as_counter and w not in _LEAD_GUITARS:
            # the style's own part on this instrument, whatever its role there: bluegrass's banjo
            # roll, zydeco's answering fiddle — not a second one in another part's place
            mine = [d for d in specs if not d["named"] and d["program"] == prog and d["role"] != "drums"
                    and (d["role"] == role or {d["role"], role} <= {"lead", "chords", "arp", "pad"})]
            own = min(mine, key=lambda d: (d["name"] != w, d["role"] != role), default=None)  # its name, its role first
            if own is not None:
                own.update(name=w, named=True)
                continue
        if role == "bass" and "808" in w:
            style = style or "808"
        if role != "lead" and (w in spec.as_lead or any(
                d["role"] == "lead" and d["program"] == prog and not d["named"] for d in specs)):
            role, style = "lead", ""        # the tune's instrument: asked for ("accordion melody"), or the style's
        if any(d["program"] == prog and d["named"] and (d["role"] == role or {d["role"], role} <= {"lead", "chords"})
               for d in specs):
            continue                        # the same instrument by another name ("sanfona", "accordion")
        if w in spec.as_counter:
            role, style = "lead", "sparse"  # a line of its own beside the tune, not the tune again
        elif role == "lead" and w not in spec.as_lead and any(
                d["named"] and d["role"] == "lead" and d["name"] in spec.as_lead for d in specs):
            role, style = _beside_the_tune(prog)
        # the style's own part on this instrument first ("saz solo" in a türkü: its saz, not the kaval's place)
        slot = next((d for d in specs if d["role"] == role == "lead" and not d["named"] and d["program"] == prog),
                    None) or next((d for d in specs if d["role"] == role and not d["named"]
                     and not (_GENERIC.get(w) is _GUITARS and d["name"] in _OTHER_LUTES)), None)
        if slot is None:
            if any(d["program"] == prog and d["role"] == role for d in specs):
                continue
            slot = {"role": role, "pan": None, "octave": 0, "level": 0.0}
            specs.append(slot)
        slot.update(name=w, program=prog, named=True, style=style or slot.get("style", ""))
    specs = _pairs_alone(spec, specs)
    if spec.no_solo:
        # "no guitar solo": the guitar that carries the tune (a rock ballad's, metal's lead) is left
        # out; the riffs and chords carry the piece
        specs = [d for d in specs if not (d["role"] == "lead" and d["program"] in _GUITARS)]
    if spec.solo:
        _one_tune(spec, specs)
    if spec.dance == "waltz" and g.name in ("romantic piano", "cinematic") and spec.meter in (None, (3, 4)):
        # a waltz for the piano: the left hand's oom-pah-pah (a low root, then the chord twice), not a
        # nocturne's broken chords, whose six eighths were heard as a 6/8 at two-thirds the pace
        # (a film score's waltz on a named piano too: its even eighths blurred the three beats)
        for d in specs:
            if d["program"] == 0 and (d["role"] == "arp" and not d["named"] or
                                      d["role"] == "chords" and g.name == "cinematic"):
                d.update(role="chords", style="waltz")
    if g.family == "jazz" and _TRIO_RE.search(spec.text) and 0 not in spec.no_programs \
            and not re.search(r"\b(?:guitars?|manouche|gypsy|organ)\b", spec.text) \
            and any(d["program"] in range(0, 8) for d in specs):
        # a (piano) trio: piano, bass and drums — the pianist plays the tune the style gives a horn
        for d in specs:
            if d["role"] == "lead" and not d["named"] and 56 <= d["program"] < 80:
                d.update(name="piano", program=0)
    return specs


def _pairs_alone(spec: PromptSpec, specs: list[dict]) -> list[dict]:
    """A pair named by what tells them apart ("two guitars (one clean, one overdriven)") is the whole
    of that kind: the style's other parts of it go (its lead and drums stay)."""
    for kind in spec.pairs:
        kin = _GENERIC.get(kind)
        if kin is not None and sum(d["named"] and d["program"] in kin for d in specs) >= 2:
            specs = [d for d in specs if d["named"] or d["program"] not in kin or d["role"] in ("lead", "drums")]
    return specs


#: what asks an instrument alone to accompany, not to carry a tune: "chords only", "comping",
#: "accompaniment for a singer", "harp arpeggios alone", "backing track", "no melody"
_ACCOMPANY_ONLY_RE = re.compile(r"\b(?:chords?|comping|comps?|accompan\w*|arpeggi\w*|backing|strumming|strums?|"
                                r"pads?|no\s+(?:melody|lead|solo|tune))\b")


def _one_tune(spec: PromptSpec, specs: list[dict]) -> None:
    """Instruments played alone share one tune and its accompaniment, as their players would.

    With no tune, the melody instrument sings it ("solo cello", "a duo for cello and piano": the
    cello, not a bass line under the piano or a pad); of two that both accompany ("guitar and
    piano, no band") the one named first. With two tunes and nothing under them ("slide guitar n
    harmonica, no band"), the guitar, piano or harp accompanies the other's — not both on the tune
    in unison with silence between the phrases."""
    players = [d for d in specs if d["role"] != "drums"]
    leads = [d for d in players if d["role"] == "lead"]
    if not leads and len(players) <= 2:
        sing = next((d for d in players if d["role"] in ("bass", "pad") and d["program"] in _SINGERS
                     and d["named"]), None)
        if sing is not None and (len(players) == 1 or any(d["program"] in _BOTH_HANDS for d in players)):
            sing.update(role="lead", style="melody")
        elif len(players) == 2 and all(d["role"] in ("chords", "arp") and d["named"] for d in players):
            first = min(players, key=lambda d: spec.instruments.index(d["name"]) if d["name"] in spec.instruments else 99)
            first.update(role="lead", style="melody")
        elif (hands := next((d for d in players if (d["role"] in ("chords", "arp") or d["role"] == "pad"
                                                    and d["program"] in range(16, 21)) and d["named"]
                             and (d["program"] in _CHORD_MELODY or d["program"] in _TRIO_GUITARS
                                  and any(x["role"] == "bass" for x in players))), None)) is not None \
                and all(d is hands or d["role"] == "bass" for d in players) and not _ACCOMPANY_ONLY_RE.search(spec.text) \
                and "lead" not in spec.no_roles and not (spec.only_roles and spec.only_roles <= {"chords", "arp", "pad"}):
            # an instrument of both hands alone or over a bass ("solo acoustic guitar", "jazz guitar
            # alone", "upright bass and piano, no band"): its right hand carries the tune over its own
            # chords, and alone its thumb (or left hand) plays the bass — not chords for 30 s
            specs.append(dict(hands, role="lead", style="melody", level=0.0))
            if len(players) == 1 and "bass" not in spec.no_roles and hands["program"] in _BOTH_HANDS \
                    and "ukulele" not in hands["name"]:
                specs.append(dict(hands, role="bass", style="", level=0.0,
                                  octave=1 if hands["program"] in (24, 25, 46) else 0))
        elif len(players) == 1 and players[0]["named"] and not spec.only_roles and "lead" not in spec.no_roles \
                and not _ACCOMPANY_ONLY_RE.search(spec.text):
            players[0].update(role="lead", style="melody")   # a music box or a celesta alone: the tune
    elif len(leads) >= 2 and not any(d["role"] in ("chords", "pad", "arp") for d in players):
        hands = next((d for d in leads if d["program"] in _BOTH_HANDS), None)
        if hands is not None:
            hands.update(role="chords", style="")
    players = [d for d in specs if d["role"] != "drums"]
    if spec.solo and any(d["role"] == "lead" for d in players) and not any(d["role"] == "bass" for d in players) \
            and "bass" not in spec.no_roles and not (spec.only_roles - {"lead", "chords", "arp"}):
        # a tune over an instrument of both hands ("clarinet and piano", "flute and harp", "just
        # fiddle and guitar"): the accompanist's left hand (or thumb) plays the bass under its chords
        hands = next((d for d in players if (d["role"] in ("chords", "arp") or d["role"] == "pad" and d["program"] in range(16, 21))
                      and d["named"] and d["program"] in _BOTH_HANDS), None)
        if hands is not None:
            specs.append(dict(hands, role="bass", style="", level=0.0,
                              octave=1 if hands["program"] in (24, 25, 46) else 0))


#: a jazz trio by name ("jazz trio ballad", "piano trio, brushes"), not an "organ trio" or a "trio with sax"
_TRIO_RE = re.compile(r"\b(?:jazz|piano)\s+trio\b|^trio\b|\btrio\s+(?:ballad|jazz)\b")


def _beside_the_tune(program: int) -> tuple[str, str]:
    """The role of a melody instrument the prompt names beside the one it asks to carry the tune
    ("a cello melody under muted violins"): bowed strings and voices hold the harmony, keyboards,
    guitars and mallets comp it, winds, brass and reeds answer with a few long chord tones."""
    if 40 <= program <= 55:
        return "pad", ""
    if (program < 40 and program not in (21, 22, 23)) or 104 <= program <= 108:
        return "chords", ""
    return "lead", "sparse"


def _drum_words(spec: PromptSpec, specs: list[dict]) -> tuple[int | None, str | None, dict]:
    """The kit, groove word and extra lanes the drum words ask for; "808s" brings an 808 bass."""
    kit = None
    groove = None
    lanes: dict = {}
    for w in spec.drum_words:
        k, extra, gr = G.DRUM_WORDS[w]
        kit = k if k is not None else kit
        groove = gr or groove
        lanes.update(extra)
        if w in ("808s", "tr-808"):
            b = next((d for d in specs if d["role"] == "bass"), None)
            if b is None:
                specs.append(_part("808", "bass", 38, "808"))
            elif not b["named"]:
                b.update(name="808", program=38, style="808")
    return kit, groove, lanes


#: what plays a part when the prompt leaves out the style's instrument for it and the band would
#: lack the part's job without it ("house, no synths": the bass on a fingered electric bass, the
#: tune on a sax; "ambient, no synths": strings for the pads, vibraphone for the bells), by the
#: left-out program's kind
_STAND_INS = {"bass": ((range(40, 48), (43, 58, 70, 32)), (range(88, 104), (43, 32, 33)),
                       # an 808 said no to: another synth's bass, not a fingered electric one in a trap beat
                       (range(38, 40), (39, 38, 87, 33)), (range(128), (33, 32, 34, 38))),
              "chords": ((range(128), (0, 4, 16, 27, 24, 48, 81)),),
              "pad": ((range(128), (49, 48, 52, 19, 89)),),
              "lead": ((range(80, 88), (65, 73, 40, 56, 0)), (range(88, 104), (11, 8, 9, 73)),
                       (range(128), (73, 65, 40, 56, 0, 81)))}


#: the orchestra said no to (its strings, brass and winds): the synthesizers that take its parts
_ORCHESTRA_BANNED = frozenset((*range(40, 49), *range(56, 62), *range(68, 76)))
_SYNTH_STAND_INS = {"bass": (38, 39, 87), "chords": (89, 90, 81, 4), "pad": (89, 90, 91, 94), "lead": (81, 80, 87, 11)}


def _without(specs: list[dict], banned: set[int]) -> list[dict]:
    """The parts left when the prompt leaves out instruments ("no piano", "no synths", "no acoustic
    instruments at all"). A part on a left-out program just goes where the band keeps its job
    without it: the harmony where another part plays chords or a pad (a pop song's acoustic guitar
    comps alone) or where a tune is left over it (a pianoless jazz trio: sax, bass and drums); the
    tune where another part plays it, or where it was no synthesizer's (a country band's fiddle
    left out leaves its guitars); an arpeggio or percussion part always. Otherwise the first
    stand-in of its kind that is not left out plays it (:data:`_STAND_INS`); the bass always has
    one. Named parts and the drums stay."""
    out, used = [], {d["program"] for d in specs}
    for i, d in enumerate(specs):
        if d["named"] or d["role"] == "drums" or d["program"] not in banned:
            out.append(d)
            continue
        kept = out + [x for x in specs[i + 1:] if x["named"] or x["program"] not in banned or x["role"] == "drums"]
        has = {x["role"] for x in kept}
        role = d["role"]
        if role == "lead" and "lead" not in has:
            # "ballad with cello instead of violin": a named melody instrument takes the tune
            singer = next((x for x in kept if x["named"] and x["program"] in _SINGERS and x["role"] in ("bass", "pad", "chords")
                           and not (x["role"] == "bass" and sum(y["role"] == "bass" for y in kept) == 1)), None) \
                or next((x for x in kept if x["named"] and x["program"] in _SINGERS), None)
            if singer is not None:
                if singer["role"] == "bass" and not any(y is not singer and y["role"] == "bass" for y in kept):
                    out.append(dict(d, program=singer["program"], name=singer["name"], named=True))
                else:
                    singer.update(role="lead", style="melody")
                continue
        if role not in _STAND_INS or (role in ("chords", "pad") and (has & {"chords", "pad"} or "lead" in has)) \
                or (role == "lead" and ("lead" in has or d["program"] not in range(80, 104) and has & {"chords", "pad", "arp"})):
            continue
        kinds = next(p for r, p in _STAND_INS[role] if d["program"] in r)
        if _ORCHESTRA_BANNED <= banned:
            kinds = _SYNTH_STAND_INS[role]        # "film score, no orchestra": synthesizers take its parts
        prog = next((p for p in kinds if p not in banned and p not in used), None)
        if prog is not None:
            used.add(prog)
            # a stand-in is called by what it is ("no vocals": the electro vocoder's line on an alto
            # sax; "no orchestra": the strings' pad on an electric piano)
            out.append(dict(d, program=prog, name=G.GM_NAMES[prog]))
    return out


#: the orchestra's drums: timpani and taiko
_WAR_DRUMS = (47, 116)
#: a gentle cue that still asks for drums or a climax: "… with drums", "war drums", "percussion",
#: "trailer … builds to a climax" (not said no to: "gentle orchestral piece, no drums")
_DRUMS_WANTED_RE = re.compile(r"\b(?:drums?|drum kit|percussion|heartbeat|trailer|climax|crescendo)\b")


#: the sung programs: choir aahs, voice oohs, synth voice
_VOICES = (52, 53, 54)


def _keep(g: G.Genre, spec: PromptSpec, specs: list[dict]) -> list[dict]:
    """The parts that play: drums when drum words ask for them, the negated and unnamed roles left
    out, and a pad when nothing else would carry the harmony."""
    if (spec.drum_words or "drums" in spec.only_roles) and not any(d["role"] == "drums" for d in specs):
        specs.insert(0, _part("drums", "drums", g.kit))
    specs = [d for d in specs if d["role"] not in spec.no_roles or d["named"]]
    if spec.no_percussion:
        specs = [d for d in specs if d["role"] != "perc" or d["named"]]   # "no drums at all": no taiko either
    elif "drums" in spec.no_roles and not re.search(r"\bpercussion\b", spec.text):
        # "no drums" in a film score: no taiko or timpani either (drums, to whoever asks) — unless
        # percussion is asked for ("trailer, no drums, big percussion hits")
        specs = [d for d in specs if not (d["role"] == "perc" and d["program"] in _WAR_DRUMS and not d["named"])]
    if g.name == "cinematic" and sum(G.MOODS[m][2] for m in spec.moods) <= -0.2 and not spec.drum_words \
            and ("drums" in spec.no_roles or not _DRUMS_WANTED_RE.search(spec.text)):
        # a gentle cue ("whimsical … gentle", "tender", "calm"): a film score without its war
        # drums — no kit, taiko or timpani unless named
        specs = [d for d in specs if d["named"] or d["role"] not in ("perc", "drums")]
    if spec.no_programs:
        specs = _without(specs, spec.no_programs)
    if spec.a_cappella:
        # voices alone: the band's parts sung — its chords and bass by the choir in their own
        # rhythm (a hymn's homophony, a doo-wop's bass singer), its tune by a voice; no drums
        sung = []
        for d in specs:
            if d["named"] or d["role"] == "drums":
                sung.append(d)                                 # what the prompt names plays as named
                continue
            if d["role"] in ("perc", "arp"):
                continue
            if d["program"] not in _VOICES:
                if d["role"] == "pad" and any(x["role"] == "pad" and x["program"] in _VOICES for x in specs):
                    continue                                   # the choir already holds the pad
                d = dict(d, program=53 if d["role"] in ("lead", "bass") else 52,
                         name={"bass": "bass voices", "lead": "voice"}.get(d["role"], "voices"))
            sung.append(d)
        if not any(d["role"] == "lead" for d in sung):
            sung.append(_part("voice", "lead", 53, named=False))
        if not any(d["role"] in ("pad", "chords") for d in sung):
            sung.append(_part("choir", "pad", 52, named=False))
        return sung
    if spec.only_roles:
        specs = [d for d in specs if d["role"] in spec.only_roles or d["named"]]
    if not any(d["role"] in ("chords", "pad", "arp", "lead") for d in specs) and \
            not (spec.only_roles and spec.only_roles <= {"drums", "bass"}) and not {"pad", "chords"} <= spec.no_roles:
        specs.append(_part("pad", "pad", 89, named=False))
    return specs


#: instruments that carry a tune alone beside a piano or guitar: the solo strings (violin, viola,
#: cello), brass, reeds and pipes, harmonica and bandoneon, the fiddles and reeds of other lands —
#: not a string section nor a bass
_SINGERS = frozenset((40, 41, 42, 22, 23, *range(56, 80), 109, 110, 111))


#: melody instruments whose singing range lies below the default lead's: (lo, hi, centre)
_LOW_SINGERS = {41: (53, 79, 65), 42: (45, 74, 58), 43: (36, 62, 47), 58: (36, 62, 46), 60: (50, 77, 62),
                32: (36, 62, 47), 69: (52, 79, 65)}


def _register(role: str, style: str, program: int) -> tuple[int, int, int]:
    """``(lo, hi, centre)`` of a part: its role's, moved for low basses and some instruments."""
    lo, hi, centre = _REGISTERS.get(role, (48, 84, 64))
    if role == "bass" and style in ("808", "wobble"):
        lo, hi, centre = 24, 46, 34
    if role == "bass" and style == "drone":
        lo, hi, centre = 36, 55, 45
    if role == "lead" and program in (40, 71, 73, 72, 56, 65, 64):
        lo, hi, centre = (60, 88, 74)
    if role == "lead" and program in (57, 66, 67, 70):
        lo, hi, centre = (48, 72, 60)
    if role == "lead" and program in _LOW_SINGERS:
        lo, hi, centre = _LOW_SINGERS[program]     # a cello sings in its tenor, not a violin's
    if role == "chords" and program in (30, 29) and style in ("power", "chug", "tremolo"):
        lo, hi, centre = (40, 64, 50)
    return lo, hi, centre
