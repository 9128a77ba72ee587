"""Readings a blind review found wrong after set S (612 prompts a helper wrote as producers,
performers and musicians of other languages would, without reading the engine): a list of parts
said to be all that plays beside a style, "X solo" as a piece for X, what is left out in other
words and languages, the piano, guitar and strings in German, Polish, Italian, Russian and Greek,
meters and keys written as words, and style words that were another style's.

Each test states what a musician expects and fails on the commit before its fix."""
from __future__ import annotations

import pytest

from engine.compose import compose, read_prompt


def progs(s):
    return {p.program for p in s.parts if not p.is_drums}


def roles(s):
    return {p.role for p in s.parts}


def drum_keys(s, bars=range(4, 12)):
    d = [k for k, p in enumerate(s.parts) if p.is_drums]
    return {n.pitch for i in bars for n in s.bar(i)[0] if n.part in d}


# --- a list of parts said to be all that plays ------------------------------------------------------
@pytest.mark.parametrize("prompt,want", [
    ("drums only, 4 bars, 170 bpm jungle", {"drums"}),
    ("bass and drums only, 100 bpm funk", {"drums", "bass"}),
    ("techno 132bpm, hypnotic, no melody, just kick hats and bass", {"drums", "bass"}),
    ("nur Schlagzeug und Bass, 100 BPM", {"drums", "bass"}),
    ("kick, snare, hats. 90bpm. nothing else", {"drums"}),
    ("stems: kick, snare, hats only, 95 bpm", {"drums"}),
    ("hi-hats and snare only", {"drums"}),
])
def test_the_parts_listed_as_all_that_plays_are_all_that_plays(prompt, want):
    """Beside a style too: a jungle's drums alone, a funk rhythm section, a techno's kick, hats and
    bass — the style's pads, acid line, guitars and brass stay out."""
    assert roles(compose(prompt, 1)) == want


def test_a_kit_alone_with_no_style_is_a_plain_backbeat():
    """"kick, snare, hats … nothing else" had been a jazz combo's brushes under a sax, "hi-hats and
    snare only" a film score's."""
    for p in ("kick, snare, hats. 90bpm. nothing else", "hi-hats and snare only", "stems: kick, snare, hats only"):
        s = compose(p, 1)
        assert s.genre == "pop" and {36, 38} & drum_keys(s), (p, s.genre)


def test_hand_percussion_alone_is_a_percussionist_not_a_kit():
    s = compose("shakers and congas only", 1)
    assert roles(s) == {"drums"} and drum_keys(s) <= {62, 63, 64, 69, 70, 82}, drum_keys(s)
    assert not drum_keys(s) & {35, 36, 38, 40, 42, 46}


@pytest.mark.parametrize("prompt", ["drums only in the intro, then house", "just a chill beat"])
def test_only_at_one_moment_or_a_whole_beat_keeps_the_band(prompt):
    assert len(roles(compose(prompt, 1))) >= 3


def test_named_instruments_and_nothing_else():
    s = compose("kalimba and rain, nothing else", 1)
    assert progs(s) == {108} and not any(p.is_drums for p in s.parts), s.describe()


# --- "X solo" as a piece for X ----------------------------------------------------------------------
@pytest.mark.parametrize("prompt,program", [
    ("harpsichord solo, baroque, in D minor", 6), ("church organ solo, toccata", 19),
    ("tango en re menor, bandoneón solo", 23), ("bass clarinet solo", 71), ("oud taqsim, solo, maqam hijaz", 24),
    ("handpan solo, meditative", 114),
])
def test_an_instrument_named_alone_and_solo_plays_alone(prompt, program):
    s = compose(prompt, 1)
    assert progs(s) == {program} and not any(p.is_drums for p in s.parts), s.describe()


@pytest.mark.parametrize("prompt", ["djembe solo", "tabla solo, teental"])
def test_a_hand_drum_solo_is_that_drum_alone(prompt):
    s = compose(prompt, 1)
    assert roles(s) == {"drums"} and not drum_keys(s) & {35, 36, 38, 40, 42}, (s.describe(), drum_keys(s))


@pytest.mark.parametrize("prompt", ["rock ballad, guitar solo", "jazz, sax solo", "jazz, piano solo", "rock anthem, solo guitar"])
def test_a_solo_in_a_band_style_is_the_bands(prompt):
    assert len(compose(prompt, 1).parts) >= 3


# --- what is left out -------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt", [
    "everything but drums, ballad", "drop the drums, keep the bass, lofi", "mute drums, pop ballad",
    "без ударных, акустическая гитара, фолк", "χωρίς ντραμς, ακουστική κιθάρα, φολκ", "davulsuz, akustik gitar, folk",
    "बिना ड्रम, अकूस्टिक गिटार, फ़ोक",
])
def test_drums_left_out_in_other_words_and_languages(prompt):
    s = compose(prompt, 1)
    assert not any(p.is_drums for p in s.parts), s.describe()


def test_dropping_the_drums_in_brings_them():
    assert any(p.is_drums for p in compose("drop the drums in at bar 9, house", 1).parts)


def test_hats_left_out_in_german():
    spec = read_prompt("Techno in a-Moll, 130 BPM, ohne Hi-Hats")
    assert {"chat", "ohat"} <= spec.no_lanes and not spec.drum_words
    assert not drum_keys(compose("Techno in a-Moll, 130 BPM, ohne Hi-Hats", 1)) & {42, 44, 46}


@pytest.mark.parametrize("prompt,refused", [("not jazz, just a chill beat", "jazz"), ("anything but rock, energetic", "rock")])
def test_the_one_style_refused_is_not_played(prompt, refused):
    assert compose(prompt, 1).genre != refused


def test_no_orchestra_leaves_its_strings_brass_and_winds_out():
    s = compose("cinematic but no orchestra, synth score", 1)
    assert not progs(s) & {*range(40, 50), *range(56, 62), *range(68, 76)} and 81 in progs(s), s.describe()


def test_a_voice_left_out_is_not_named_as_one():
    s = compose("IDM, glitchy, 160 bpm, no vocals", 1)
    assert not progs(s) & {52, 53, 54, 85} and not any("vocoder" in p.name for p in s.parts), s.describe()


# --- instruments in other languages -----------------------------------------------------------------
@pytest.mark.parametrize("prompt,program", [
    ("nur Klavier, langsam, fis-Moll", 0), ("tylko fortepian, smutno", 0), ("μόνο πιάνο", 0),
    ("только пианино, грустно", 0), ("только фортепиано, ля минор", 0), ("brano in La minore, solo chitarra", 25),
])
def test_only_one_instrument_in_other_languages(prompt, program):
    s = compose(prompt, 1)
    assert progs(s) == {program} and not any(p.is_drums for p in s.parts), s.describe()


@pytest.mark.parametrize("prompt,program", [
    ("Re minore, archi, adagio", 48), ("muzyka filmowa, smyczki, bez perkusji", 48), ("mazurek, fortepian, 3/4", 0),
    ("cor anglais melody over strings", 69), ("medieval estampie, hurdy-gurdy", 110),
    ("Stück in Dreivierteltakt, Klavier, g-Moll", 0), ("balada romántica, sin guitarra, solo piano y cuerdas", 48),
])
def test_instrument_words_of_other_languages_and_other_times_play(prompt, program):
    assert program in progs(compose(prompt, 1))


def test_a_bass_clarinet_is_no_bass_guitar():
    s = compose("bass clarinet solo", 1)
    assert 71 in progs(s) and not progs(s) & set(range(32, 40))


def test_russian_keys_tempos_and_meters():
    assert compose("только фортепиано, ля минор", 1).key_name == "A minor"
    s = compose("рок, 140 ударов в минуту, ми минор", 1)
    assert s.genre == "rock" and s.bpm == 140 and s.key_name == "E minor", s.describe()
    assert compose("вальс, три четверти, фортепиано", 1).meter == (3, 4)
    assert compose("быстрый рок", 1).bpm > compose("медленный рок", 1).bpm


# --- meters, keys and tempos in words ---------------------------------------------------------------
@pytest.mark.parametrize("prompt,meter", [
    ("Stück in Dreivierteltakt, Klavier, g-Moll", (3, 4)), ("muziek in drie-kwartsmaat, wals, piano", (3, 4)),
    ("cumbia en dos por cuatro", (2, 4)), ("oberek w trzech czwartych", (3, 4)), ("krautrock, motorik beat", (4, 4)),
    ("vals en tres por cuatro, piano solo", (3, 4)), ("sei ottavi, tarantella", (6, 8)),
])
def test_meters_in_words_of_other_languages(prompt, meter):
    assert compose(prompt, 1).meter == meter


@pytest.mark.parametrize("prompt", ["vals en tres por cuatro, piano solo", "cumbia en dos por cuatro",
                                    "rock en español, cuatro por cuatro, 120 bpm, en mi menor"])
def test_por_cuatro_is_a_meter_not_a_cuatro(prompt):
    assert "cuatro" not in read_prompt(prompt).instruments


@pytest.mark.parametrize("prompt,key", [("BPM: 87 | Key: Db | Genre: RnB", (1, None)), ("Ebmaj 96 neo soul", (3, "major")),
                                        ("F#min techno", (6, "minor"))])
def test_keys_written_as_a_field_or_a_chord_symbol(prompt, key):
    spec = read_prompt(prompt)
    assert (spec.key_root, spec.mode) == key


@pytest.mark.parametrize("prompt", ["valse lente", "langsamer Walzer"])
def test_a_slow_waltz_in_french_and_german_is_the_ballrooms(prompt):
    assert compose(prompt, 1).bpm <= 100


@pytest.mark.parametrize("prompt", ["powolny jazz, kontrabas i fortepian", "arabesk, yaylılar ve ud, yavaş"])
def test_slow_in_polish_and_turkish(prompt):
    assert read_prompt(prompt).pace < 0


# --- style words that were another style's ----------------------------------------------------------
@pytest.mark.parametrize("prompt,genre", [
    ("in the style of Daft Punk, 116 bpm, filtered disco", "house"), ("Beach House style dream pop", "pop"),
    ("Earth, Wind & Fire style, horns, 1978", "funk"), ("like Kraftwerk, robotic, 120", "synthpop"),
    ("darkwave, cold, 120 bpm", "synthpop"), ("drone techno, 128, dark, no melody", "techno"),
    ("extremely fast, 220 bpm, speedcore", "techno"), ("1980s drum machine, LinnDrum, 110 bpm", "synthpop"),
    ("TB-303 acid line, 130", "house"), ("like J Dilla, swung drums, 88", "boom bap"),
    ("polska polka z akordeonem", "polka"), ("honky-tonk piano", "ragtime"), ("Mozart piano sonata", "romantic piano"),
    ("Irish trad session, reel, fiddle and bodhrán", "reel"), ("Black Sabbath riff, heavy", "doom"),
    ("la guitarra y la voz, balada", "pop"), ("una balada triste", "pop"),
    ("laiko, greek, bouzouki", "rebetiko"), ("ρεμπέτικο με μπουζούκι", "rebetiko"),
])
def test_style_words_reach_their_style(prompt, genre):
    assert compose(prompt, 1).genre == genre


def test_quartetto_darchi_is_a_string_quartet_not_a_section():
    s = compose("quartetto d'archi e pianoforte", 1)
    assert s.genre == "classical" and 48 not in progs(s) and {0, 40} <= progs(s)


@pytest.mark.parametrize("prompt,kept", [
    ("pop punk like blink 182, fast palm mute guitars, 180bpm", {30}),            # palm-muted: no "mute the guitars"
    ("detroit electro, 808 cowbell, no hi-hats at all just claps & rimshots, 128bpm", {81}),   # "just" the kit's
    ("Drone-Metal, tiefe verzerrte Gitarren mit endlos ausklingenden Akkorden", {30}),
])
def test_words_beside_the_new_readings_keep_their_meaning(prompt, kept):
    """What the blind sets' note hashes showed moving while these readings were written: a palm mute
    is a guitar technique, a "just" after a drum said no to is about the kit, German "Akkorden"
    (chords) is no Polish "akordeon"."""
    s = compose(prompt, 1)
    assert kept <= progs(s) and 21 not in progs(s), s.describe()


def test_a_one_drop_keeps_its_drums():
    s = compose("Roots reggae, one drop drums, a deep round bass line, 74 bpm", 1)
    assert any(p.is_drums for p in s.parts) and "drums" not in read_prompt("one drop drums, reggae").no_roles


# --- chamber ensembles by name ----------------------------------------------------------------------
@pytest.mark.parametrize("prompt,want", [
    ("brass quintet, festive fanfare, Bb major", {56, 60, 57, 58}),
    ("saxophone quartet", {64, 65, 66, 67}),
    ("woodwind quintet", {73, 68, 71, 70, 60}),
    ("piano trio in E flat", {0, 40, 42}),
])
def test_a_chamber_ensemble_is_its_players_and_no_one_else(prompt, want):
    """A brass quintet had been a marching band with drums and a glockenspiel, a woodwind quintet a
    film orchestra with taiko, a piano trio the piano alone."""
    s = compose(prompt, 1)
    assert progs(s) == want and not any(p.is_drums for p in s.parts), s.describe()


def test_a_barbershop_quartet_is_sung():
    s = compose("barbershop quartet", 1)
    assert progs(s) <= {52, 53, 54} and not any(p.is_drums for p in s.parts), s.describe()


def test_an_ensemble_with_a_guest_keeps_the_guest():
    s = compose("jazz saxophone quartet", 1)
    assert s.genre == "jazz" and {64, 65, 66, 67} <= progs(s)


@pytest.mark.parametrize("prompt,genre", [
    ("Gitarre und Gesang, ruhig, in E-Dur", "folk"), ("canzone napoletana, mandolino, in re minore", "folk"),
    ("Buena Vista Social Club", "salsa"), ("Nusrat Fateh Ali Khan", "raga"), ("Ludovico Einaudi", "romantic piano"),
    ("recorder consort, renaissance", "baroque"), ("allegretto, woodwinds, pastoral", "classical"),
    ("English horn and strings, pastoral", "classical"),
])
def test_more_names_and_words_reach_their_style(prompt, genre):
    assert compose(prompt, 1).genre == genre


def test_a_recorder_consort_keeps_its_recorder():
    assert 74 in progs(compose("recorder consort, renaissance", 1))


def test_a_gymnopedie_is_in_three_and_slow_jazz_is_a_ballads_pace():
    assert compose("Satie gymnopedie", 1).meter == (3, 4)
    assert all(compose("slow jazz, upright bass and piano", seed).bpm <= 92 for seed in (1, 2, 3))


@pytest.mark.parametrize("prompt", ["jazz waltz in 3/4 with brushes and a piano trio",
                                    "piano trio, brushes, jazz waltz in 3/4, Bb, let the bass take a solo chorus"])
def test_a_jazz_piano_trio_is_piano_bass_and_drums(prompt):
    s = compose(prompt, 1)
    assert 0 in progs(s) and 32 in progs(s) and any(p.is_drums for p in s.parts) and 40 not in progs(s), s.describe()


# --- the second review: what the new readings must not take ----------------------------------------
@pytest.mark.parametrize("prompt,program", [
    ("jazz with mute trumpet", 56), ("mute trombone, big band", 57), ("jazz ballad with harmon mute trumpet and brushes", 56),
    ("a mute trumpet and a smoky sax, film noir", 56),
])
def test_a_muted_horn_is_still_played(prompt, program):
    assert program in progs(compose(prompt, 1))


@pytest.mark.parametrize("prompt,genre", [
    ("Harlem Renaissance jazz, 1920s hot jazz", "dixieland"), ("pastoral black metal", "black metal"),
    ("pastoral folk with acoustic guitar and flute", "folk"), ("black sabbath, doom metal", "doom"),
    ("herbie hancock maiden voyage, modal jazz", "jazz"), ("Einaudi meets hip hop", "boom bap"),
    ("earth wind & fire, disco", "disco"), ("kraftwerk meets techno", "techno"), ("tb-303 acid techno", "techno"),
    ("piano trio, bossa nova", "bossa nova"), ("piano trio, blues", "blues"), ("brass quintet, march", "marching band"),
    ("christmas gospel choir", "gospel"), ("christmas piano", "romantic piano"), ("beyonce renaissance era disco house", "disco"),
])
def test_a_style_named_beside_a_new_word_is_the_style(prompt, genre):
    """Renaissance, pastoral, christmas, an artist's name or a chamber ensemble gives way to a style
    the prompt names beside it."""
    assert compose(prompt, 1).genre == genre


@pytest.mark.parametrize("prompt,kept", [
    ("drop the drums at 1:30, techno", "drums"), ("drop the bass", "bass"),
    ("drop the drums, let the piano breathe, then slam back in, cinematic", "percussion"),
    ("drop the drums and build tension, trailer", "percussion"),
])
def test_dropping_at_a_moment_or_the_drop_keeps_the_part(prompt, kept):
    """A drop at a time or before a return is a moment, and "drop the bass" is the drop: the part
    plays (a film score's percussion is its kit, taiko or timpani)."""
    s = compose(prompt, 1)
    has = {"drums": any(p.is_drums for p in s.parts), "bass": any(p.role == "bass" for p in s.parts),
           "percussion": any(p.is_drums or p.role == "perc" for p in s.parts)}
    assert has[kept], s.describe()


@pytest.mark.parametrize("prompt,meter", [("per tre quarti del brano solo pianoforte, poi batteria", (4, 4)),
                                          ("dreiviertel Stunde Lofi zum Lernen", (4, 4)),
                                          ("dos por cuatro metros, documental de carpintería, música acústica", (4, 4)),
                                          ("trzy czwarte utworu to cisza, ambient", (4, 4))])
def test_three_quarters_of_something_is_no_meter(prompt, meter):
    assert compose(prompt, 1).meter == meter


@pytest.mark.parametrize("prompt", ["guitar solo, reggaeton", "guitar solo, folk rock", "accordion solo, cumbia",
                                    "keyboard solo, arabic pop"])
def test_a_solo_in_a_dance_band_is_the_bands(prompt):
    assert len(compose(prompt, 1).parts) >= 3


@pytest.mark.parametrize("prompt", ["cordes vocales, chanson a cappella", "guitare 12 cordes, country",
                                    "bajo de cinco cuerdas, funk", "cordes à vide, guitare folk"])
def test_a_guitars_strings_and_the_vocal_cords_are_no_string_section(prompt):
    assert 48 not in progs(compose(prompt, 1))


@pytest.mark.parametrize("prompt", ["cuarteto de cuerdas", "quatuor à cordes"])
def test_a_string_quartet_in_spanish_and_french_is_classical(prompt):
    assert compose(prompt, 1).genre == "classical"


@pytest.mark.parametrize("prompt,kept", [("808s only, trap", {"drums", "bass"}), ("just drums and 808s, trap", {"drums", "bass"}),
                                         ("horns and drums only, brass band", {"drums", "bass", "lead"}),
                                         ("analog synths and drum machine, nothing else, electro", {"drums", "bass"}),
                                         ("drum & bass only", {"drums", "bass", "lead"}),
                                         ("just the beat, trap", {"drums", "bass"})])
def test_a_list_of_sections_or_a_styles_name_keeps_the_band(prompt, kept):
    assert kept <= roles(compose(prompt, 1))


def test_gitarsiz_rock_is_rock_without_guitars():
    s = compose("gitarsız rock", 1)
    assert s.genre == "rock" and not progs(s) & set(range(24, 32)), s.describe()


def test_the_cure_for_sadness_is_no_band():
    assert compose("the cure for sadness, uplifting piano", 1).genre != "synthpop"
