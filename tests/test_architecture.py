"""The house rules, read from the imports of every file (``docs/ARCHITECTURE.md``).

One direction between the top-level folders: ``plugin_stub ← bridge → engine → dsp``. ``dsp``
imports nothing of ours, ``engine`` only ``dsp`` (and knows no transport: no OSC, HTTP, MIDI
ports, rings), ``plugin_stub`` only itself (the ring layout lives there), ``bridge`` anything.
Inside them the rooms keep a direction too (``bridge.core`` knows no control surface, no web
and no ops; the composer knows no synth). And no module imports itself back through others —
every import counts, the ones inside functions as well.
"""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOPS = ("bridge", "engine", "dsp", "plugin_stub")

#: a module under the first prefix may import ours only from the listed prefixes
ALLOWED = [
    ("dsp", ("dsp",)),
    ("plugin_stub", ("plugin_stub",)),
    ("engine.compose", ("engine.compose", "engine.score")),
    ("engine.synth", ("engine.synth", "engine.compose", "engine.score", "engine.backend", "engine.hostsync",
                      "engine.midifile", "dsp")),
    ("engine.musicgen", ("engine.musicgen", "engine.backend", "dsp")),
    ("engine", ("engine.backend", "engine.scheduler", "engine.hostsync", "engine.score", "engine.midifile",
                "dsp")),
    ("bridge.core", ("bridge.core", "engine", "dsp", "plugin_stub")),
    ("bridge.control", ("bridge.control", "bridge.core", "engine", "dsp", "plugin_stub")),
    ("bridge.web", ("bridge.web", "bridge.core", "bridge.control", "engine", "dsp", "plugin_stub")),
    ("bridge", TOPS),
]
#: third-party packages that mean a transport: none of them in engine or dsp
#: (``mido`` is allowed: ``engine.midifile`` writes Standard MIDI Files with it, no ports)
TRANSPORTS = ("pythonosc", "aiohttp", "rtmidi", "pyaudio", "jack", "socket", "http", "websockets")


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for top in TOPS:
        for f in sorted((ROOT / top).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


def _is_package(f: pathlib.Path) -> bool:
    return f.name == "__init__.py"


def imports_of(name: str, f: pathlib.Path, known) -> tuple[set[str], set[str]]:
    """(our modules, third-party top-level names) that ``f`` imports anywhere in its body."""
    ours, theirs = set(), set()
    package = name if _is_package(f) else name.rpartition(".")[0]

    def add(mod: str) -> None:
        if mod.split(".")[0] in TOPS:
            ours.add(mod)
        else:
            theirs.add(mod.split(".")[0])

    for node in ast.walk(ast.parse(f.read_text(), str(f))):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
            if names:              # ``from pkg import module``: an import of the module
                ours.update(names)
                if len(names) < len(node.names):
                    add(mod)
            else:
                add(mod)
    return ours, theirs


def graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    mods = _modules()
    ours, theirs = {}, {}
    for name, f in mods.items():
        o, t = imports_of(name, f, mods)
        ours[name] = {m for m in o if m != name}
        theirs[name] = t
    return ours, theirs


def rule_for(name: str):
    for prefix, allowed in ALLOWED:
        if name == prefix or name.startswith(prefix + "."):
            return prefix, allowed
    raise AssertionError(f"{name} is in no room of ALLOWED")


def _under(mod: str, prefixes) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def violations(ours: dict[str, set[str]]) -> list[str]:
    bad = []
    for name, deps in sorted(ours.items()):
        prefix, allowed = rule_for(name)
        for d in sorted(deps):
            if d == "bridge" and name.startswith("bridge."):
                continue           # bridge/__init__ holds the version only
            if not _under(d, allowed):
                bad.append(f"{name} imports {d} (the {prefix} room may import only {', '.join(allowed)})")
    return bad


def cycles(ours: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in ours.get(v, ()):
            if w not in ours:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(ours):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_room_and_imports_only_what_its_room_may():
    ours, _ = graph()
    assert len(ours) > 40                      # the walk found the project, not an empty tree
    assert violations(ours) == []


def test_no_import_circles():
    ours, _ = graph()
    assert cycles(ours) == []


def test_engine_and_dsp_know_no_transport():
    _, theirs = graph()
    bad = {m: sorted(t & set(TRANSPORTS)) for m, t in theirs.items()
           if m.split(".")[0] in ("engine", "dsp") and t & set(TRANSPORTS)}
    assert bad == {}


def test_the_light_imports_stay_light():
    """The GPU check's bare interpreter (torch, CuPy, NumPy, msgpack) and a DAW-side reader import
    ``dsp``, the ring layout, the reader and the ring writer without any optional package."""
    code = ("import sys, dsp, dsp.core, dsp.fused, dsp.plan, dsp.gpu, dsp.resample, dsp.seams, "
            "plugin_stub.protocol, plugin_stub.reader, bridge.core.ring; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = set(out.stdout.split())
    heavy = {"cupy", "torch", "soxr", "aiohttp", "pythonosc", "mido", "rtmidi", "transformers", "av",
             "soundfile", "scipy", "prometheus_client", "msgspec", "engine"}
    assert loaded & heavy == set()
    assert {"numpy", "msgpack", "dsp", "plugin_stub", "bridge"} <= loaded


# --- the checker itself, on graphs with a planted fault -------------------------------------------------
def test_the_checker_finds_a_planted_circle_and_a_planted_upward_import():
    g = {"engine.a": {"engine.b"}, "engine.b": {"engine.c"}, "engine.c": {"engine.a"}, "dsp.x": set()}
    assert cycles(g) == [["engine.a", "engine.b", "engine.c"]]
    assert violations({"dsp.core": {"engine.backend"}}) == [
        "dsp.core imports engine.backend (the dsp room may import only dsp)"]
    assert violations({"bridge.core.ring": {"bridge.web.app"}})
    assert violations({"engine.compose.composer": {"engine.synth.perform"}})
    assert violations({"engine.scheduler": {"bridge.core.ring"}})
    assert violations({"plugin_stub.reader": {"bridge.core.ring"}})
    assert violations({"bridge.ops.cli": {"bridge.web.app", "engine.synth.backend"}}) == []


@pytest.mark.parametrize("src, expect", [
    ("from . import genres as G", {"engine.compose.genres"}),
    ("from .score import Note", {"engine.score"}),
    ("from engine.compose import genres, nothing_like_a_module", {"engine.compose.genres", "engine.compose"}),
    ("def f():\n    import bridge.core.ring\n", {"bridge.core.ring"}),
])
def test_imports_are_read_as_python_resolves_them(tmp_path, src, expect):
    f = tmp_path / "composer.py"
    f.write_text(src)
    known = {"engine.compose.genres": None, "engine.score": None}
    name = "engine.compose.composer" if "genres" in src else "engine.synth"
    if src.startswith("from .score"):
        name = "engine.hostsync"
    ours, _ = imports_of(name, f, known)
    assert ours == expect
