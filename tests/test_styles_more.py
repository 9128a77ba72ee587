"""The styles of engine/compose/styles/more.py (fado, bhangra, huayno, chacarera, bolero, ragtime,
polska, soul jazz, big beat): each reached by the words people use, each playing the figure a
player of it names first — properties of the notes, not golden data."""
from __future__ import annotations

import pytest

from engine.compose import compose, composer_of, read_prompt

SEEDS = (0, 1, 2, 3)


def body_bars(score, n=64):
    """Bars of the verse and chorus, each section's fill bars (3 and 7) left out."""
    off = composer_of(score).offset
    return [i for i in range(n) if score.section_of(i) in ("A", "B") and (i + off) % 8 not in (3, 7)]


def notes_by_role(score, i, role):
    roles = [p.role for p in score.parts]
    return [n for n in score.bar(i)[0] if roles[n.part] == role]


@pytest.mark.parametrize("prompt,genre", [
    ("saudade-filled fado in E minor, portuguese guitar", "fado"), ("punjabi bhangra, dhol and tumbi", "bhangra"),
    ("bollywood item song, shehnai melody", "bhangra"), ("andean huayno from cusco, quena", "huayno"),
    ("chacarera santiagueña in 6/8", "chacarera"), ("bolero romántico tipo trío los panchos", "bolero"),
    ("solo stride piano like fats waller", "ragtime"), ("swedish polska on nyckelharpa", "polska"),
    ("greasy soul jazz organ trio", "soul jazz"), ("late 90s big beat like fatboy slim", "big beat")])
def test_each_style_is_reached_by_the_words_people_use(prompt, genre):
    assert read_prompt(prompt).genre == genre or compose(prompt, 0).genre == genre, read_prompt(prompt).genre_why


@pytest.mark.parametrize("seed", SEEDS)
def test_a_polska_leans_on_its_second_beat(seed):
    """The polska's lopsided three: bass and comping put more weight (velocity × length) on beat two
    than on beat one or three."""
    s = compose("swedish polska", seed)
    weight = [0.0, 0.0, 0.0]
    for i in body_bars(s):
        for role in ("bass", "chords"):
            for n in notes_by_role(s, i, role):
                b = n.start - i * 3
                if abs(b - round(b)) < 0.05 and 0 <= round(b) < 3:
                    weight[round(b)] += n.vel * n.dur
    assert weight[1] > weight[0] and weight[1] > weight[2], weight


@pytest.mark.parametrize("seed", SEEDS)
def test_ragtime_is_an_oom_pah_left_hand_under_a_straight_tune(seed):
    """Bass notes on the beats, the left hand's chords on the off-beat eighths, never swung."""
    s = compose("ragtime piano", seed)
    assert s.swing == 0.0 and s.beats_per_bar == 2
    on = off = stray = 0
    for i in body_bars(s):
        for n in notes_by_role(s, i, "bass"):
            on += abs((n.start - i * 2) % 1.0) < 0.05
        for n in notes_by_role(s, i, "chords"):
            b = (n.start - i * 2) % 1.0
            off += abs(b - 0.5) < 0.05
            stray += abs(b - 0.5) >= 0.05
    assert on > 0 and off > 3 * max(1, stray), (on, off, stray)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_chacarera_plays_six_eight_against_three_four(seed):
    """The hemiola: some bars' bass or bombo strikes the 6/8's second beat (1½ quarters), others
    the 3/4's second and third quarters (1 and 2) — both in one take, in its even eighths."""
    s = compose("chacarera santiaguena", seed)
    assert s.meter == (6, 8) and s.swing == 0.0
    six = three = 0
    for i in body_bars(s):
        low = [n for n in s.bar(i)[0] if s.parts[n.part].role in ("bass", "drums")]
        starts = {round(n.start - i * 3, 2) for n in low}
        six += 1.5 in starts
        three += 1.0 in starts and 2.0 in starts
    assert six > 0 and three > 0, (six, three)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_huayno_strums_the_snap(seed):
    """The charango's huayno: a sixteenth then a dotted eighth (or long–short–short) on the beats of
    a 2/4 bar — strokes on 16th steps that a plain eighth strum never plays."""
    s = compose("andean huayno, charango strumming", seed)
    assert s.meter == (2, 4)
    k = next(j for j, p in enumerate(s.parts) if p.program == 24 and p.role == "chords")
    sixteenths = 0
    for i in body_bars(s):
        sixteenths += any(abs(((n.start - i * 2) * 4) % 2 - 1) < 0.1 for n in s.bar(i)[0] if n.part == k)
    assert sixteenths > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_bhangra_plays_the_dhols_chaal(seed):
    """The dhol's dhugg (the kick): on one, three times or more a bar, and never on beat two (the
    backbeat's, a clap's or the tilli's) — a bouncing figure, not a rock kick on one and three."""
    s = compose("punjabi bhangra", seed)
    d = next(j for j, p in enumerate(s.parts) if p.is_drums)
    ok = tot = 0
    for i in body_bars(s):
        kicks = [round((n.start - i * 4) * 4) for n in s.bar(i)[0] if n.part == d and n.pitch in (35, 36)]
        tot += 1
        ok += 0 in kicks and 4 not in kicks and len(set(kicks)) >= 3
    assert tot and ok >= 0.8 * tot, (ok, tot)
