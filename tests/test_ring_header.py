"""plugin_stub/lv2/wb_ring.h says what plugin_stub/protocol.py says: one ring layout, two languages.

The header's object-like ``#define WB_<NAME>`` lines are parsed (a small, strict grammar: a value
it cannot read fails the test) and each ``<NAME>`` must exist in ``plugin_stub.protocol`` with the
same value; every ``OFF_*`` and ``FLAG_*`` of the protocol and the identity and bounds the C reader
checks must be in the header. Then, where gcc is installed (always on CI), the header is compiled
on its own with warnings as errors and a program built from it prints what the compiler thinks
each constant is, which must agree too (a macro the regex misread would show here). Last, the C
files of the plugin include the header instead of keeping a copy of the layout.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from plugin_stub import protocol as P

LV2 = Path(__file__).resolve().parents[1] / "plugin_stub" / "lv2"
HEADER = LV2 / "wb_ring.h"

# In the header but not in protocol.py, with the value it must have and why.
C_ONLY = {
    "WRITER_STALE_NS": 1_000_000_000,   # plugin_stub/reader.py's writer_alive uses the same 1 s literal
}
# What the C reader relies on beyond the OFF_* and FLAG_* names: all must be in the header.
REQUIRED = {"MAGIC", "VERSION", "DATA_OFFSET", "HEADER_SIZE", "META_MAX", "MAX_CHANNELS", "MAX_CAPACITY"}

_DEFINE = re.compile(r"^#define\s+WB_([A-Z0-9_]+)(?:\s+(.*?))?\s*(?:/\*.*\*/)?\s*$")
_INT = re.compile(r"^(\d+)[uUlL]*$")
_SHIFT = re.compile(r"^\((\d+)[uUlL]*\s*<<\s*(\d+)\)$")
_ALIAS = re.compile(r"^WB_([A-Z0-9_]+)$")
_DIFF = re.compile(r"^\(WB_([A-Z0-9_]+)\s*-\s*WB_([A-Z0-9_]+)\)$")
_STRING = re.compile(r'^"([^"\\]*)"$')


def _value(text: str, known: dict) -> int | bytes:
    if m := _INT.match(text):
        return int(m[1])
    if m := _SHIFT.match(text):
        return int(m[1]) << int(m[2])
    if m := _STRING.match(text):
        return m[1].encode("ascii") + b"\0"          # a C string literal carries its NUL
    if m := _ALIAS.match(text):
        return known[m[1]]
    if m := _DIFF.match(text):
        return known[m[1]] - known[m[2]]
    raise AssertionError(f"wb_ring.h: cannot read the value {text!r} (keep the header's defines simple)")


def header_constants() -> dict[str, int | bytes]:
    """``NAME → value`` of every object-like ``#define WB_NAME value`` in wb_ring.h, in order."""
    out: dict[str, int | bytes] = {}
    for line in HEADER.read_text().splitlines():
        if not line.startswith("#define WB_") or re.match(r"#define\s+WB_\w+\(", line):
            continue                                   # function-like macros (WB_U64) are code
        m = _DEFINE.match(line)
        assert m, f"wb_ring.h: unreadable line {line!r}"
        name, text = m[1], m[2]
        if text is None:
            continue                                   # the include guard
        assert name not in out, f"wb_ring.h defines WB_{name} twice"
        out[name] = _value(text, out)
    return out


def expected(name: str):
    if name in C_ONLY:
        return C_ONLY[name]
    assert hasattr(P, name), f"wb_ring.h defines WB_{name}, which plugin_stub/protocol.py does not have"
    return getattr(P, name)


def test_every_header_constant_equals_the_protocol():
    consts = header_constants()
    wrong = {f"WB_{n}": (v, expected(n)) for n, v in consts.items() if v != expected(n)}
    assert not wrong, f"wb_ring.h (value, protocol.py's) differ: {wrong}"


def test_the_header_has_every_offset_flag_and_bound_of_the_protocol():
    names = {n for n in vars(P) if re.match(r"^(OFF|FLAG)_[A-Z0-9_]+$", n)} | REQUIRED
    missing = sorted(f"WB_{n}" for n in names - set(header_constants()))
    assert not missing, f"wb_ring.h lacks {missing}"


def test_the_plugin_sources_use_the_header_and_keep_no_copy_of_the_layout():
    for name in ("wavebridge_stub.c", "bench_read.c"):
        text = (LV2 / name).read_text()
        copies = re.findall(r"^#define\s+(\w*(?:OFF_|FLAG_|MAGIC|DATA_OFFSET)\w*)", text, re.M)
        assert not copies, f"{name} defines its own {copies}: use wb_ring.h"
    assert '#include "wb_ring.h"' in (LV2 / "wavebridge_stub.c").read_text()


def test_the_compiler_reads_the_same_constants(tmp_path):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("needs gcc (make setup installs it)")
    consts = header_constants()
    lines = []
    for n, v in consts.items():
        if isinstance(v, bytes):
            lines.append(f'    dump_bytes("{n}", WB_{n}, sizeof WB_{n});')
        else:
            lines.append(f'    printf("{n} %llu\\n", (unsigned long long)(WB_{n}));')
    src = tmp_path / "consts.c"
    src.write_text('#include "wb_ring.h"\n'            # first: the header stands on its own
                   "#include <stdio.h>\n\n"
                   "static void dump_bytes(const char* name, const char* s, size_t n)\n{\n"
                   '    printf("%s ", name);\n'
                   '    for (size_t i = 0; i < n; ++i) printf("%02x", (unsigned char)s[i]);\n'
                   '    printf("\\n");\n}\n\n'
                   "int main(void)\n{\n" + "\n".join(lines) + "\n    return 0;\n}\n")
    exe = tmp_path / "consts"
    build = subprocess.run([gcc, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", str(LV2), "-o", str(exe),
                            str(src)], capture_output=True, text=True, timeout=60)
    assert build.returncode == 0, build.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=10, check=True).stdout
    seen = {}
    for line in out.splitlines():
        name, value = line.split()
        seen[name] = bytes.fromhex(value) if isinstance(consts[name], bytes) else int(value)
    assert seen.keys() == consts.keys()
    wrong = {f"WB_{n}": (v, expected(n)) for n, v in seen.items() if v != expected(n)}
    assert not wrong, f"compiled wb_ring.h (value, protocol.py's) differ: {wrong}"
