"""The one schema layer of wavebridge's files: msgspec types in, clear messages out.

The config file (:mod:`bridge.ops.config`) and the MIDI map (:mod:`bridge.control.midi`) describe what they
accept as ``msgspec.Struct`` types (``forbid_unknown_fields``, ``Meta`` bounds, ``Literal`` choices);
:func:`convert` validates a parsed TOML table against such a type and turns msgspec's
``ValidationError`` into the caller's error class with a message a musician can act on: the key
(``engine.slots``, ``note[0].slot``), what was expected (written from the type's own constraints,
or from ``Meta(extra={"expect": ...})``) and the value found; :func:`load_toml` reads such a file.
``[control]`` code; its only I/O is that one read.
"""
from __future__ import annotations

import re
import tomllib
import types
import typing

import msgspec
import msgspec.structs
from msgspec import inspect as mi

from plugin_stub.protocol import FixedCodeError

#: a finite float (TOML allows inf and nan; no setting wants them)
FINITE = msgspec.Meta(ge=-1.0e308, le=1.0e308, extra={"expect": "a finite number"})

_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<key>key` in `)?\$(?P<path>[^`]*)`)?$", re.S)
_TOKEN = re.compile(r"\.([^.\[`]+)|\[(\d+|\.\.\.)\]")


def convert(data, typ, error: type[FixedCodeError]):
    """``data`` validated into ``typ``; a mismatch raises ``error`` naming the key. ``[control]``"""
    try:
        return msgspec.convert(data, typ)
    except msgspec.ValidationError as e:
        try:
            message = explain(str(e), data, typ)
        except Exception:  # noqa: BLE001 — a shape explain() does not know: msgspec's own words still name the key
            message = str(e)
        raise error(message) from None


def _num(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _bounds(t) -> str:
    lo = t.ge if t.ge is not None else t.gt
    hi = t.le if t.le is not None else t.lt
    if lo is not None and hi is not None:
        return f" {_num(lo)}..{_num(hi)}"
    if lo is not None:
        return f" {'≥' if t.ge is not None else '>'} {_num(lo)}"
    if hi is not None:
        return f" {'≤' if t.le is not None else '<'} {_num(hi)}"
    return ""


def expect(t) -> str:
    """What a value of type info ``t`` must be, in words."""
    if isinstance(t, mi.Metadata):
        if t.extra and "expect" in t.extra:
            return t.extra["expect"]
        t = t.type
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.IntType):
        return "an integer" + _bounds(t)
    if isinstance(t, mi.FloatType):
        return "a number" + _bounds(t)
    if isinstance(t, mi.StrType):
        if t.pattern:
            return f"a string matching {t.pattern}"
        return "a non-empty string" if t.min_length else "a string"
    if isinstance(t, mi.LiteralType):
        return " or ".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in t.values)
    if isinstance(t, (mi.StructType, mi.DictType)):
        return "a table"
    if isinstance(t, mi.ListType):
        inner = t.item_type.type if isinstance(t.item_type, mi.Metadata) else t.item_type
        if isinstance(inner, mi.StructType):
            return "an array of tables"
        return ("a non-empty list" if t.min_length else "a list") + f" of {_plural(expect(t.item_type))}"
    if isinstance(t, mi.UnionType):
        return " or ".join(expect(m) for m in t.types if not isinstance(m, mi.NoneType))
    return "something else"


def _plural(s: str) -> str:
    """``expect``'s words for one value made the words for each item of a list: the article
    dropped and the leading noun (after an optional "non-empty") made plural — only that noun,
    never a word inside a pattern or a note after it."""
    for a in ("an ", "a "):
        if s.startswith(a):
            rest = s[len(a):]
            pre = "non-empty " if rest.startswith("non-empty ") else ""
            rest = rest[len(pre):]
            for noun in ("integer", "number", "string"):
                if rest == noun or rest.startswith((noun + " ", noun + ",")):
                    return pre + noun + "s" + rest[len(noun):]
            return pre + rest
    return s


def _plain(t):
    """The type under ``Annotated[...]``."""
    return typing.get_args(t)[0] if typing.get_origin(t) is typing.Annotated else t


def _is_struct(t) -> bool:
    return isinstance(t, type) and issubclass(t, msgspec.Struct)


def _branch(t, value):
    """The member of a union that ``value`` was meant for (a table, an array, else the union itself)."""
    p = _plain(t)
    if typing.get_origin(p) not in (typing.Union, types.UnionType):
        return p
    for m in typing.get_args(p):
        q = _plain(m)
        if isinstance(value, dict) and (_is_struct(q) or typing.get_origin(q) is dict or q is dict):
            return q
        if isinstance(value, list) and (typing.get_origin(q) is list or q is list):
            return q
    return p


def _fails(value, t) -> bool:
    try:
        msgspec.convert(value, t)
    except msgspec.ValidationError:
        return True
    return False


def _step(t, value, tok):
    """(type, value, key name) one step further down; ``[...]`` is the table entry that fails."""
    t = _branch(t, value)
    name, idx = tok
    if _is_struct(t) and name is not None:
        for f in msgspec.structs.fields(t):
            if f.encode_name == name:
                return f.type, value.get(name) if isinstance(value, dict) else None, name
    if idx is not None and typing.get_origin(t) is list:
        item = typing.get_args(t)[0]
        return item, value[int(idx)] if isinstance(value, list) and int(idx) < len(value) else None, f"[{idx}]"
    if idx == "..." and typing.get_origin(t) is dict and isinstance(value, dict):
        vt = typing.get_args(t)[1]
        for k, v in value.items():
            if _fails(v, vt):
                return vt, v, str(k)
    return typing.Any, None, name or f"[{idx}]"


def _key_error(t, value, where) -> str:
    d = _branch(t, value)
    kt = typing.get_args(d)[0] if typing.get_origin(d) is dict else typing.Any
    bad = [k for k in value if _fails(k, kt)] if isinstance(value, dict) else []
    what = expect(mi.type_info(kt))
    return f"{where}: key {bad[0]!r} must be {what}" if bad else f"{where}: a key must be {what}"


def explain(msg: str, data, typ) -> str:
    """msgspec's ``Expected `int` <= 64 - at `$.engine.slots``` → ``engine.slots must be 1..64, not 99``."""
    m = _AT.match(msg)
    text, path = m.group("msg"), m.group("path") or ""
    t, v, where = typ, data, ""
    for a, i in _TOKEN.findall(path):
        t, v, name = _step(t, v, (a or None, i or None))
        where += name if name.startswith("[") or not where else f".{name}"
    unknown = re.match(r"Object contains unknown field `(.+)`", text)
    if unknown:
        b = _branch(t, v)
        known = f"; known: {', '.join(sorted(f.encode_name for f in msgspec.structs.fields(b)))}" \
            if _is_struct(b) else ""
        key = f"{where}.{unknown.group(1)}" if where else repr(unknown.group(1))
        return f"unknown key {key}{known}"
    missing = re.match(r"Object missing required field `(.+)`", text)
    if missing:
        return f"{where or 'the file'}: needs {missing.group(1)!r}"
    if m.group("key"):                      # a table's key did not validate
        return _key_error(t, v, where)
    return f"{where or 'the file'} must be {expect(mi.type_info(t))}, not {v!r}"


def load_toml(path: str, parse, error: type[FixedCodeError], what: str = ""):
    """``parse`` the table in TOML file ``path``; any failure is an ``error`` naming the file.

    Shared by the config file and the MIDI map. ``what`` prefixes the unreadable-file message.
    """
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise error(f"cannot read {what}{path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None
    try:
        return parse(data)
    except error as e:
        raise error(f"{path}: {e.message}") from None
