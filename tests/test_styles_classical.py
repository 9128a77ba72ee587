"""The classical family's styles (engine/compose/styles/classical.py): each reached by its words,
in its meter and tempo, with its instruments, and playing its idiom — properties of the notes."""
from __future__ import annotations

import collections

import pytest

from engine.compose import genres as G
from engine.compose import compose, composer_of, read_prompt

MINE = ("classical", "baroque", "minuet", "romantic piano", "hymn", "cinematic", "waltz", "lullaby",
        "marching band", "military march")


def notes_of(score, b0, b1):
    out = []
    for i in range(b0, b1):
        out.extend(score.bar(i)[0])
    return out


def parts_with(score, program=None, role=None):
    return [k for k, p in enumerate(score.parts) if not p.is_drums and (program is None or p.program == program)
            and (role is None or p.role == role)]


def drum_index(score):
    return next(k for k, p in enumerate(score.parts) if p.is_drums)


def positions(score, notes):
    """Each note's place in its bar, in quarter-note beats (a note a hair early is on the next downbeat)."""
    bpb = score.beats_per_bar
    out = []
    for n in notes:
        p = n.start % bpb
        out.append(round(p - bpb if p > bpb - 0.06 else p, 3))
    return out


def bars_of(score, kinds, n=160):
    return [i for i in range(n) if score.section_of(i) in kinds]


# --- words --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt,style", [
    ("string quartet in G major", "classical"), ("a mozart sonata", "classical"), ("chamber music", "classical"),
    ("baroque", "baroque"), ("something like bach", "baroque"), ("vivaldi four seasons", "baroque"),
    ("barroque harpsichord piece", "baroque"),                                  # misspelt
    ("a minuet", "minuet"), ("menuet in G", "minuet"),
    ("chopin nocturne", "romantic piano"), ("romantic piano piece", "romantic piano"), ("debussy", "romantic piano"),
    ("a hymn", "hymn"), ("church choir", "hymn"), ("gregorian chant", "hymn"),
    ("epic film score", "cinematic"), ("hans zimmer trailer music", "cinematic"), ("orchestral", "cinematic"),
    ("waltz", "waltz"), ("strauss", "waltz"), ("viennese waltz", "waltz"),
    ("lullaby", "lullaby"), ("a berceuse", "lullaby"), ("bedtime song for a baby", "lullaby"),
    ("lulaby", "lullaby"),                                                        # misspelt
    ("marching band", "marching band"), ("a parade with a brass band", "marching band"), ("sousa", "marching band"),
    ("marching", "marching band"), ("drumline", "marching band"),
    ("military march", "military march"), ("army march", "military march"), ("quick march", "military march"),
])
def test_each_style_is_reached_by_its_words(prompt, style):
    assert compose(prompt, 0).genre == style, read_prompt(prompt).genre_why


def test_marches_are_no_longer_film_scores_and_every_alias_is_unique():
    for w in ("military march", "marching"):
        assert read_prompt(w).genre != "cinematic"
    seen = collections.Counter(a for g in G.GENRES.values() for a in g.aliases)
    assert not [a for name in MINE for a in G.GENRES[name].aliases if seen[a] > 1]
    assert all(G.GENRES[name].family == "classical" for name in MINE)


def test_the_words_this_family_adds_reach_their_programs():
    s = compose("marching band with a sousaphone and a bugle", 0)
    progs = [p.program for p in s.parts if p.name in ("sousaphone", "bugle")]
    assert sorted(progs) == [56, 58]
    s = compose("marching band with a snare drum", 0)
    d = drum_index(s)
    assert any(n.pitch == 38 for n in notes_of(s, 0, 2) if n.part == d)


# --- meters, tempi, swing ---------------------------------------------------------------------------
@pytest.mark.parametrize("style,meter,beat,lo,hi", [
    ("waltz", (3, 4), 1.0, 138, 176), ("minuet", (3, 4), 1.0, 104, 132), ("lullaby", (6, 8), 1.5, 58, 70),
    ("marching band", (2, 4), 1.0, 112, 124), ("military march", (6, 8), 1.5, 108, 120),
    ("classical", (4, 4), 1.0, 72, 116), ("nocturne", (4, 4), 1.0, 58, 80),
])
def test_meter_and_tempo_are_the_styles(style, meter, beat, lo, hi):
    for seed in range(4):
        s = compose(style, seed)           # the bare style word: no mood word moves the tempo
        assert s.meter == meter and s.beat == beat
        assert lo <= s.beat_bpm <= hi, (seed, s.beat_bpm)
        assert s.swing == 0.0


def test_a_lullaby_is_slow_unswung_six_eight_not_a_waltz_with_brushes():
    s = compose("lullaby", 1)
    assert s.genre == "lullaby" and not any(p.is_drums for p in s.parts)
    box = parts_with(s, 10)
    assert box
    ns = [n for n in notes_of(s, 0, 16) if n.part in box]
    assert len(ns) >= 16 * 4
    # even eighths: every onset on the eighth grid (a swung second eighth would sit 0.17+ late)
    assert all(abs(p * 2 - round(p * 2)) < 0.06 for p in positions(s, ns))
    # the harp rocks root–fifth on the two dotted-quarter beats
    harp = parts_with(s, 46)
    hp = positions(s, [n for n in notes_of(s, 0, 16) if n.part in harp])
    assert hp and all(min(abs(p - 0), abs(p - 1.5)) < 0.06 for p in hp)


@pytest.mark.parametrize("seed", range(6))
def test_a_lullabys_harp_rocks_on_both_beats_of_every_bar(seed):
    """The cradle's rock is two beats a bar: a harp held over the whole bar left the second beat
    unmarked and the bar unheard (one take in four; a quarter-note tracker on the 6/8)."""
    s = compose("lullaby", seed)
    harp = parts_with(s, 46)
    for i in range(8, 24):
        hp = positions(s, [n for n in s.bar(i)[0] if n.part in harp])
        assert not hp or (min(abs(p) for p in hp) < 0.06 and min(abs(p - 1.5) for p in hp) < 0.06), (i, hp)


@pytest.mark.parametrize("prompt", ["a barcarolle in 6/8, solo piano", "chopin nocturne in 12/8", "romantic piano in 9/8"])
def test_a_left_hand_arpeggio_in_a_compound_meter_rises_from_each_beat(prompt):
    """A barcarolle's left hand: every dotted quarter its own rising three — its first eighth the
    lowest of the three, and on the whole the loudest — so the beats are heard, not a run of even
    eighths (a quarter-note tracker heard set G's barcarolle at 96 for its 64)."""
    for seed in range(3):
        s = compose(prompt, seed)
        assert s.beat == 1.5
        arp = {j for j, p in enumerate(s.parts) if p.role == "arp"}
        first = rest = 0.0
        groups = 0
        for i in range(4, 20):
            by = {}
            for n in s.bar(i)[0]:
                if n.part in arp:
                    by.setdefault(int((n.start - i * s.beats_per_bar + 0.05) // 1.5), []).append(n)
            for g in by.values():
                g.sort(key=lambda n: n.start)
                if len(g) == 3:
                    groups += 1
                    assert g[0].pitch < g[1].pitch < g[2].pitch, (seed, i, [n.pitch for n in g])
                    first += g[0].vel
                    rest += (g[1].vel + g[2].vel) / 2
        assert groups >= 16 and first > rest + 4 * groups, (seed, groups, first, rest)


# --- instruments -------------------------------------------------------------------------------------
@pytest.mark.parametrize("style,programs", [
    ("classical", {40, 41, 42}), ("baroque", {6, 40, 42}), ("minuet", {6, 40, 42}), ("romantic piano", {0}),
    ("hymn", {19, 52}), ("cinematic", {48, 60, 116, 47}), ("waltz", {32, 48, 40}), ("lullaby", {10, 8, 46, 49}),
    ("marching band", {58, 57, 56, 9}), ("military march", {58, 57, 56, 72}),
])
def test_its_instruments_are_there_and_play(style, programs):
    s = compose(style, 0)
    ns = notes_of(s, 0, 48)
    playing = {s.parts[n.part].program for n in ns if not s.parts[n.part].is_drums}
    assert programs <= playing, (programs - playing)
    if style == "romantic piano":
        assert {p.program for p in s.parts} == {0}                 # solo piano, nothing else


@pytest.mark.parametrize("style", ["classical", "baroque", "minuet", "romantic piano", "hymn", "lullaby"])
def test_the_concert_styles_have_no_drum_kit(style):
    s = compose(style, 0)
    assert not any(p.is_drums or p.role == "perc" for p in s.parts)


# --- grooves ---------------------------------------------------------------------------------------------
def _signature(groove: dict) -> frozenset:
    """A groove's onsets: (GM drum key, 16th step) for every hit of every lane, "+" lanes too."""
    return frozenset((G.LANES[lane.rstrip("+")], st) for lane, pat in groove.items()
                     for st, ch in enumerate(pat) if ch not in ".?")


def test_every_groove_of_this_family_differs_from_every_other_styles():
    mine = [(name, _signature(gr)) for name in MINE for gr in G.GENRES[name].grooves]
    assert len(mine) >= 14
    others = {(name, _signature(gr)) for name, g in G.GENRES.items() for gr in g.grooves}
    for name, sig in mine:
        same = [o for o, osig in others if osig == sig and o != name]
        assert not same, (name, same)
    for name in ("cinematic", "waltz", "marching band", "military march"):
        g = G.GENRES[name]
        assert len(g.grooves) >= 3
        steps = int(round(g.meter[0] * 16 / g.meter[1]))
        assert sum(all(len(p) % steps == 0 for p in gr.values()) for gr in g.grooves) >= 3, name


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_marching_band_drums_from_the_first_bar_with_bass_drum_on_the_beats_and_snare_rolls(seed):
    s = compose("marching band", seed)
    assert s.meter == (2, 4)
    d = drum_index(s)
    assert s.parts[d].program == 48                                  # the orchestra kit: concert drums
    first = [n for n in notes_of(s, 0, 1) if n.part == d]
    assert {36, 38} <= {n.pitch for n in first}                      # no film-score build: drums at once
    ns = [n for n in notes_of(s, 0, 40) if n.part == d]
    full = [i for i in range(40) if s.section_of(i) in ("A", "B") and (i + composer_of(s).offset) % 8 not in (3, 7)]
    kicks = {round(n.start) for n in ns if n.pitch == 36 and abs(n.start - round(n.start)) < 0.05}
    beats = [b for i in full for b in (2 * i, 2 * i + 1)]
    assert len(full) >= 16 and all(b in kicks for b in beats)       # the bass drum on every beat
    snares = sorted(n.start for n in ns if n.pitch == 38)
    rolls = sum(1 for a, b in zip(snares, snares[1:]) if b - a < 0.14)    # 32nd-note strokes: rolls
    assert rolls >= 10
    assert any(n.pitch in (57, 49) for n in ns)                      # cymbals


@pytest.mark.parametrize("style,beat_pos,after_pos", [
    ("marching band", (0.0, 1.0), (0.5, 1.5)),                        # 2/4: oom on the beats, pah on the ands
    ("military march", (0.0, 1.5), (0.5, 1.0, 2.0, 2.5)),             # 6/8: oom on the dotted quarters
    ("waltz", (0.0,), (1.0, 2.0)),                                     # 3/4: oom on one, pah-pah on two, three
])
def test_oom_pah_the_bass_on_the_beats_the_chords_between(style, beat_pos, after_pos):
    s = compose(style, 3)
    bass = parts_with(s, role="bass")
    chords = parts_with(s, role="chords")
    bars = [i for i in range(8, 56) if s.section_of(i) in ("A", "B")]
    assert len(bars) >= 16
    ns = notes_of(s, 0, 0)
    for i in bars:
        ns.extend(s.bar(i)[0])

    def near(p, targets):
        return min(abs(p - t) for t in targets) < 0.06

    bp = positions(s, [n for n in ns if n.part in bass])
    cp = positions(s, [n for n in ns if n.part in chords])
    assert bp and cp
    assert sum(near(p, beat_pos) for p in bp) >= 0.85 * len(bp)      # (a pickup into the next bar now and then)
    assert sum(near(p, after_pos) for p in cp) >= 0.9 * len(cp)


def test_a_military_march_is_in_six_eight_with_the_bass_drum_on_the_dotted_quarters():
    s = compose("military march", 0)
    d = drum_index(s)
    ns = [n for n in notes_of(s, 0, 32) if n.part == d]
    kp = positions(s, [n for n in ns if n.pitch == 36])
    assert kp and sum(min(abs(p), abs(p - 1.5)) < 0.05 for p in kp) >= 0.9 * len(kp)
    snares = sorted(n.start for n in ns if n.pitch == 38)
    assert sum(1 for a, b in zip(snares, snares[1:]) if b - a < 0.14) >= 8


def test_a_film_score_has_string_ostinato_and_a_trailer_build():
    s = compose("epic film score", 0)
    strings = parts_with(s, 48, "chords")
    assert strings
    bars = bars_of(s, ("A", "B", "drop"))[:16]
    per_bar = [sum(1 for n in s.bar(i)[0] if n.part in strings) for i in bars]
    assert min(per_bar) >= 8                                          # 8ths or 16ths every bar
    kinds = [s.section_of(i) for i in range(400)]
    assert "drop" in kinds                                            # break → build → drop
    d = drum_index(s)
    k = kinds.index("drop")
    build = [n for n in s.bar(k - 1)[0] if n.part == d and n.pitch == 38]
    assert len(build) >= 8                                            # the snare build into the drop


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_baroque_continuo_walks_in_even_eighths_under_a_harpsichord(seed):
    s = compose("baroque", seed)
    bass = parts_with(s, role="bass")
    harpsichord = parts_with(s, 6)
    assert bass and harpsichord and s.parts[bass[0]].program == 42
    bars = [i for i in range(4, 60) if s.section_of(i) in ("A", "B")][:24]
    for i in bars:
        ns = sorted((n for n in s.bar(i)[0] if n.part in bass), key=lambda n: n.start)
        assert 7 <= len(ns) <= 8, i                                   # eighths (a quarter on one)
        assert all(abs(p * 2 - round(p * 2)) < 0.06 for p in positions(s, ns))
        assert len({n.pitch for n in ns}) >= 3                        # a line that moves, not a held root
    terraced = []                                                     # forte and piano sections
    for kind in ("A", "B"):
        vs = [n.vel for i in bars_of(s, (kind,)) for n in s.bar(i)[0] if n.part in harpsichord]
        terraced.append(sum(vs) / len(vs))
    assert terraced[1] - terraced[0] >= 5


def test_a_nocturne_is_a_left_hand_of_rising_broken_chords_under_a_melody():
    s = compose("chopin nocturne", 2)
    arp = parts_with(s, 0, "arp")
    lead = parts_with(s, 0, "lead")
    assert arp and lead
    bars = [i for i in range(4, 40) if s.section_of(i) in ("A", "B")][:16]
    rising = 0
    for i in bars:
        ns = sorted((n for n in s.bar(i)[0] if n.part in arp), key=lambda n: n.start)
        assert len(ns) >= 6
        rising += sum(b.pitch > a.pitch for a, b in zip(ns, ns[1:])) >= 0.6 * (len(ns) - 1)
    assert rising >= 0.75 * len(bars)
    low = [n.pitch for n in notes_of(s, 4, 20) if n.part in arp]
    top = [n.pitch for n in notes_of(s, 4, 20) if n.part in lead]
    assert top and sum(top) / len(top) > sum(low) / len(low) + 7        # the tune sings above the left hand


def test_a_hymn_is_organ_and_choir_in_slow_four():
    s = compose("a hymn", 0)
    assert 60 <= s.beat_bpm <= 84 and s.meter == (4, 4)
    organ = parts_with(s, 19)
    assert organ and parts_with(s, 52)
    ns = [n for n in notes_of(s, 4, 36) if n.part in organ]
    assert ns and all(abs(p - round(p)) < 0.06 for p in positions(s, ns))    # chords on the beats


@pytest.mark.parametrize("prompt", ["big broadway opening number", "musical theatre showstopper",
                                    "a show tune like west side story"])
def test_a_show_tune_is_the_pit_band_two_beat_brass_and_a_trumpet_tune(prompt):
    """A Broadway number: the pit's bass on one and three, the brass punching chords, a trumpet on the
    tune, timpani; bright (mostly major) and driving — not a marching band or a film score."""
    majors = 0
    for seed in range(4):
        s = compose(prompt, seed)
        assert s.genre == "show tune", (prompt, s.describe())
        majors += s.mode == "major"
        assert 112 * 0.85 <= s.bpm <= 144 * 1.15
        bass = parts_with(s, role="bass")
        b_on = positions(s, [n for n in notes_of(s, 2, 18) if n.part in bass])
        assert sum(abs(p) < 0.05 for p in b_on) >= 12 and sum(abs(p - 2) < 0.05 for p in b_on) >= 10, seed
        assert parts_with(s, program=61) and parts_with(s, program=47)             # brass, timpani
        trumpet = parts_with(s, program=56, role="lead")
        assert trumpet and sum(n.part in trumpet for n in notes_of(s, 2, 18)) >= 16
    assert majors >= 2


@pytest.mark.parametrize("prompt", ["a barcarolle", "venetian gondolier song", "barcarola para piano"])
def test_a_barcarolle_is_a_romantic_piano_piece_in_six_eight(prompt):
    s = compose(prompt, 0)
    assert (s.genre, s.meter, s.beat) == ("romantic piano", (6, 8), 1.5), s.describe()


@pytest.mark.parametrize("prompt", ["passacaglia in 3/4, harpsichord continuo", "baroque chaconne in 3/4", "a bach sarabande in 3/4"])
def test_a_baroque_three_realises_every_beat_and_leans_on_one(prompt):
    """In three the harpsichord strikes each beat, the first the hardest: a chord on one held over
    two, struck again on three, made the bar's halves (two dotted quarters) the loudest period —
    heard as a 6/8 in 7 of 9 takes."""
    for seed in range(3):
        s = compose(prompt, seed)
        assert s.genre == "baroque" and s.meter == (3, 4)
        hp = {j for j, p in enumerate(s.parts) if p.program == 6}
        vel = {0: [], 1: [], 2: []}
        for i in range(4, 28):
            for n in s.bar(i)[0]:
                t = n.start - i * 3
                if n.part in hp and abs(t - round(t)) < 0.06 and round(t) in vel:
                    vel[round(t)].append(n.vel)
        assert all(vel.values()), (seed, {b: len(v) for b, v in vel.items()})
        mean = {b: sum(v) / len(v) for b, v in vel.items()}
        assert mean[0] > max(mean[1], mean[2]) + 8, (seed, mean)
