"""bridge.core.schema, message by message: what each kind of type and bound is called, the key
path each failure names, the unknown/missing/key cases, the fallback to msgspec's own words, and
load_toml's three failures — then every bounded field of the real config file at each side of
each bound (issue #24). Pure functions and a temp file; no daemon."""
from __future__ import annotations

import typing
from typing import Annotated, Literal, Union

import msgspec
import pytest
from msgspec import inspect as mi

from bridge.core import schema
from bridge.core.schema import FINITE, convert, expect, explain, load_toml
from plugin_stub.protocol import FixedCodeError


class Bad(FixedCodeError):
    code = "bad_test"


class Other(FixedCodeError):
    code = "other_test"


def words(t) -> str:
    return expect(mi.type_info(t))


# ---------------------------------------------------------------- expect()


@pytest.mark.parametrize("t, text", [
    (bool, "true or false"),
    (int, "an integer"),
    (Annotated[int, msgspec.Meta(ge=1, le=64)], "an integer 1..64"),
    (Annotated[int, msgspec.Meta(gt=0, lt=10)], "an integer 0..10"),
    (Annotated[int, msgspec.Meta(ge=3)], "an integer ≥ 3"),
    (Annotated[int, msgspec.Meta(gt=3)], "an integer > 3"),
    (Annotated[int, msgspec.Meta(le=7)], "an integer ≤ 7"),
    (Annotated[int, msgspec.Meta(lt=7)], "an integer < 7"),
    (Annotated[int, msgspec.Meta(ge=0, lt=7)], "an integer 0..7"),
    (Annotated[int, msgspec.Meta(gt=-2, le=7)], "an integer -2..7"),
    (float, "a number"),
    (Annotated[float, msgspec.Meta(ge=0.05, le=3600.0)], "a number 0.05..3600"),
    (Annotated[float, msgspec.Meta(ge=1.0, le=1.0e9)], "a number 1..1e+09"),
    (Annotated[float, msgspec.Meta(gt=0.5)], "a number > 0.5"),
    (str, "a string"),
    (Annotated[str, msgspec.Meta(min_length=1)], "a non-empty string"),
    (Annotated[str, msgspec.Meta(pattern="^[a-z]+$")], "a string matching ^[a-z]+$"),
    (Literal["a", "b"], '"a" or "b"'),
    (Literal[1, 2], "1 or 2"),
    (dict, "a table"),
    (dict[str, int], "a table"),
    (list[int], "a list of integers"),
    (list[float], "a list of numbers"),
    (list[str], "a list of strings"),
    (Annotated[list[str], msgspec.Meta(min_length=1)], "a non-empty list of strings"),
    (list[Annotated[int, msgspec.Meta(ge=1, le=3)]], "a list of integers 1..3"),
    (list[bool], "a list of true or false"),
    (Union[int, None], "an integer"),
    (Union[int, str], "an integer or a string"),
    (typing.Any, "something else"),
    (Annotated[float, FINITE], "a finite number"),
    (Annotated[int, msgspec.Meta(ge=1, extra={"other": 1})], "an integer ≥ 1"),
])
def test_expect_words(t, text):
    assert words(t) == text


def test_expect_tables_and_arrays_of_tables():
    class Inner(msgspec.Struct):
        x: int = 0

    assert words(Inner) == "a table"
    assert words(list[Inner]) == "an array of tables"
    assert words(list[Annotated[Inner, msgspec.Meta(extra={"a": 1})]]) == "an array of tables"
    assert words(Annotated[int, msgspec.Meta(extra={"expect": "a slot 1..64"})]) == "a slot 1..64"


@pytest.mark.parametrize("s, plural", [("an integer 1..3", "integers 1..3"), ("a number", "numbers"),
                                       ("a string", "strings"), ("true or false", "true or false"),
                                       ("an integer or an integer", "integers or an integer"),
                                       ("a table", "table")])
def test_plural(s, plural):
    assert schema._plural(s) == plural


def test_num_formats_floats_short_and_ints_as_they_are():
    assert schema._num(3600.0) == "3600" and schema._num(0.05) == "0.05" and schema._num(1e9) == "1e+09"
    assert schema._num(12345678) == "12345678"


# ---------------------------------------------------------------- explain() through convert()


class Sub(msgspec.Struct, forbid_unknown_fields=True):
    level: Annotated[int, msgspec.Meta(ge=1, le=9)] = 1
    names: list[Annotated[str, msgspec.Meta(pattern="^[a-z]+$")]] = []


class Top(msgspec.Struct, forbid_unknown_fields=True):
    need: int
    sub: Sub = None
    subs: list[Sub] = []
    either: Union[Sub, list[int], None] = None
    table: dict[Annotated[str, msgspec.Meta(pattern="^[a-z]+$")], Annotated[int, msgspec.Meta(ge=0)]] = {}
    flag: bool = False


def refused(data) -> str:
    with pytest.raises(Bad) as e:
        convert(data, Top, Bad)
    assert e.value.code == "bad_test"
    return e.value.message


@pytest.mark.parametrize("data, message", [
    ({"need": "x"}, "need must be an integer, not 'x'"),
    ({"need": 1, "flag": 1}, "flag must be true or false, not 1"),
    ({"need": 1, "sub": {"level": 10}}, "sub.level must be an integer 1..9, not 10"),
    ({"need": 1, "sub": {"level": 0}}, "sub.level must be an integer 1..9, not 0"),
    ({"need": 1, "sub": {"names": ["ok", "No"]}}, "sub.names[1] must be a string matching ^[a-z]+$, not 'No'"),
    ({"need": 1, "subs": [{}, {"level": 99}]}, "subs[1].level must be an integer 1..9, not 99"),
    ({"need": 1, "either": {"level": 99}}, "either.level must be an integer 1..9, not 99"),
    ({"need": 1, "either": [1, "x"]}, "either[1] must be an integer, not 'x'"),
    ({"need": 1, "table": {"ok": -1}}, "table.ok must be an integer ≥ 0, not -1"),
    ({"need": 1, "table": {"a": 1, "b": -2}}, "table.b must be an integer ≥ 0, not -2"),
    ({"need": 1, "table": {"ok": 1, "Bad": 2}}, "table: key 'Bad' must be a string matching ^[a-z]+$"),
    ({"need": 1, "sub": 3}, "sub must be a table, not 3"),
    ({"need": 1, "subs": {}}, "subs must be an array of tables, not {}"),
    ({}, "the file: needs 'need'"),
    ({"need": 1, "subs": [{"level": 2}, {"nope": 1}]}, "unknown key subs[1].nope; known: level, names"),
    ({"need": 1, "sub": {"nope": 1}}, "unknown key sub.nope; known: level, names"),
    ({"need": 1, "zzz": 1}, "unknown key 'zzz'; known: either, flag, need, sub, subs, table"),
])
def test_each_failure_names_its_key_and_what_was_expected(data, message):
    assert refused(data) == message


class Req(msgspec.Struct):
    x: int


class Wrap(msgspec.Struct):
    req: Req = None


def test_missing_field_inside_a_table_names_the_table():
    with pytest.raises(Bad) as e:
        convert({"req": {}}, Wrap, Bad)
    assert e.value.message == "req: needs 'x'"


def test_an_unknown_key_in_a_union_table_lists_that_tables_keys():
    assert refused({"need": 1, "either": {"levl": 2}}) == "unknown key either.levl; known: level, names"


def test_a_key_failure_without_a_bad_key_found_still_names_the_table():
    # a key type explain() cannot check key by key: the general words
    assert schema._key_error(dict, {"a": 1}, "t") == "t: a key must be something else"
    assert schema._key_error(dict[int, int], {"a": 1}, "t") == "t: key 'a' must be an integer"
    assert schema._key_error(dict[int, int], [1], "t") == "t: a key must be an integer"


def test_explain_on_a_top_level_value_and_on_paths_it_cannot_follow():
    assert explain("Expected `int`, got `str`", "x", int) == "the file must be an integer, not 'x'"
    # an index into something that is not a list, a field of something that is not a table
    assert explain("Expected `int`, got `str` - at `$.need[3]`", {"need": 1}, Top).startswith("need[3] must be")
    assert explain("Expected `int`, got `str` - at `$[5]`", [1], list[int]) == "[5] must be an integer, not None"
    assert explain("Expected `int`, got `str` - at `$[0]`", [1], list[int]) == "[0] must be an integer, not 1"
    assert explain("Expected `int`, got `str` - at `$.sub.level`", {"sub": 7}, Top) == \
        "sub.level must be an integer 1..9, not None"


def test_unreadable_shapes_fall_back_to_msgspecs_own_words(monkeypatch):
    def broken(*a):
        raise RuntimeError("explain does not know this shape")

    monkeypatch.setattr(schema, "explain", broken)
    with pytest.raises(Bad) as e:
        convert({"need": "x"}, Top, Bad)
    assert e.value.message == "Expected `int`, got `str` - at `$.need`"
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_convert_returns_the_typed_value():
    got = convert({"need": 2, "sub": {"level": 9}, "table": {"ab": 0}}, Top, Bad)
    assert isinstance(got, Top) and got.need == 2 and got.sub.level == 9 and got.table == {"ab": 0}


def test_finite_refuses_infinities_and_nan_and_takes_the_largest_floats():
    T = Annotated[float, FINITE]
    assert convert(1.0e308, T, Bad) == 1.0e308 and convert(-1.0e308, T, Bad) == -1.0e308
    for v in (float("inf"), float("-inf"), float("nan"), 1.0e308 * 1.5):
        with pytest.raises(Bad, match="a finite number"):
            convert(v, T, Bad)


# ---------------------------------------------------------------- load_toml


def test_load_toml_reads_parses_and_prefixes_the_path(tmp_path):
    p = tmp_path / "a.toml"
    p.write_text('x = 1\n[t]\ny = "z"\n')
    assert load_toml(str(p), lambda d: d, Bad) == {"x": 1, "t": {"y": "z"}}

    def parse(d):
        raise Bad("x must be 2")

    with pytest.raises(Bad) as e:
        load_toml(str(p), parse, Bad)
    assert e.value.message == f"{p}: x must be 2"
    assert e.value.__cause__ is None and e.value.__suppress_context__

    def other(d):
        raise Other("not ours")

    with pytest.raises(Other) as e:                         # another error class is not rewritten
        load_toml(str(p), other, Bad)
    assert e.value.message == "not ours"


def test_load_toml_names_an_unreadable_or_invalid_file(tmp_path):
    missing = tmp_path / "none.toml"
    with pytest.raises(Bad) as e:
        load_toml(str(missing), lambda d: d, Bad, what="MIDI map ")
    assert e.value.message == f"cannot read MIDI map {missing}: No such file or directory"
    with pytest.raises(Bad) as e:
        load_toml(str(tmp_path), lambda d: d, Bad)
    assert e.value.message == f"cannot read {tmp_path}: Is a directory"
    bad = tmp_path / "bad.toml"
    bad.write_text("x = = 1\n")
    with pytest.raises(Bad) as e:
        load_toml(str(bad), lambda d: d, Bad)
    assert e.value.message.startswith(f"{bad}: not valid TOML: ")
    assert e.value.__cause__ is None


# ---------------------------------------------------------------- every bounded field of the config


def _bounded_fields():
    from bridge.ops import config

    sections = {"": config._Config, "osc": config._Osc, "engine": config._Engine, "midi": config._Midi,
                "metrics": config._Metrics, "http": config._Http, "log": config._Log}
    out = []
    for section, struct in sections.items():
        for f in mi.type_info(struct).fields:
            t = f.type
            meta = t if isinstance(t, mi.Metadata) else None
            t = t.type if meta else t
            if isinstance(t, (mi.IntType, mi.FloatType)) and (t.ge is not None or t.le is not None):
                out.append((section, f.encode_name, t))
    return out


FIELDS = _bounded_fields()


def test_the_bounded_fields_are_found():
    names = {f"{s}.{k}" if s else k for s, k, _ in FIELDS}
    assert {"tempo", "osc.port", "engine.slots", "metrics.port", "http.max_connections",
            "http.keepalive_timeout_s", "http.body_min_rate"} <= names


@pytest.mark.parametrize("section, key, t", FIELDS, ids=[f"{s}.{k}" for s, k, _ in FIELDS])
def test_every_bounded_config_field_at_each_side_of_its_bounds(section, key, t):
    from bridge.ops.config import ConfigError, parse

    def data(v):
        return {key: v} if not section else {section: {key: v}}

    where = f"{section}.{key}" if section else key
    step = 1 if isinstance(t, mi.IntType) else 1e-6 * max(1.0, abs(t.ge or 0), abs(t.le or 0))
    for bound, outside in ((t.ge, -step), (t.le, step)):
        if bound is None or abs(bound) >= 1e300:
            continue
        v = type(bound)(bound) if isinstance(t, mi.IntType) else float(bound)
        parse(data(v))                                      # the bound itself is accepted
        with pytest.raises(ConfigError) as e:
            parse(data(v + outside))
        assert e.value.message.startswith(f"{where} must be "), e.value.message
        assert e.value.message.endswith(f", not {v + outside!r}"), e.value.message


# ---------------------------------------------------------------- unions of tables, odd paths, plurals


class Opt(msgspec.Struct):
    opt: Union[dict[Annotated[str, msgspec.Meta(pattern="^[a-z]+$")], int], None] = None


def test_a_bad_key_of_an_optional_table_is_named():
    with pytest.raises(Bad) as e:
        convert({"opt": {"ok": 1, "Ab": 2}}, Opt, Bad)
    assert e.value.message == "opt: key 'Ab' must be a string matching ^[a-z]+$"
    assert schema._key_error(Union[dict[int, int], None], {"a": 1}, "t") == "t: key 'a' must be an integer"


def test_a_key_error_on_a_value_that_is_no_table_names_no_key():
    assert schema._key_error(dict[int, int], None, "t") == "t: a key must be an integer"
    assert schema._key_error(dict[int, int], "ab", "t") == "t: a key must be an integer"


def test_an_unknown_key_in_a_table_of_an_untyped_shape_lists_nothing():
    """A tuple's table: explain() cannot type ``[0]``, the unknown key is still named, no list."""
    with pytest.raises(Bad) as e:
        convert([{"nope": 1}], tuple[Sub], Bad)
    assert e.value.message == "unknown key [0].nope"


def test_explain_on_more_paths_it_cannot_follow():
    # one past the end of the list (msgspec never names it: explain() must not fail on it either)
    assert explain("Expected `int`, got `str` - at `$[1]`", [1], list[int]) == "[1] must be an integer, not None"
    # a field of a scalar, an index or an entry of a table that is a struct
    assert explain("Expected `int`, got `str` - at `$.need.x`", {"need": 1}, Top) == \
        "need.x must be something else, not None"
    assert explain("Expected `int`, got `str` - at `$.sub[0]`", {"sub": {}}, Top) == \
        "sub[0] must be something else, not None"
    assert explain("Expected `int`, got `str` - at `$.sub[...]`", {"sub": {}}, Top) == \
        "sub[...] must be something else, not None"


@pytest.mark.parametrize("s, plural", [
    ("a string matching ^string$", "strings matching ^string$"),
    ("a number, at most the number of slots", "numbers, at most the number of slots"),
    ("a number or a number", "numbers or a number"),
    ("a string matching ^integer$", "strings matching ^integer$"),
    ("a string matching ^(number|string)$", "strings matching ^(number|string)$"),
    ("a non-empty string", "non-empty strings"),
    ("a stringy thing", "stringy thing"),
])
def test_only_the_leading_noun_is_made_plural(s, plural):
    assert schema._plural(s) == plural
