"""The TOML config of ``wavebridge serve``: where it is found, what it may say, how flags win.

Search order (the first file that exists is used, files are not merged):
``--config FILE`` → ``$XDG_CONFIG_HOME/wavebridge/config.toml`` (``~/.config/…``) →
``/etc/wavebridge/config.toml``. Flags given on the command line override the file; the file
overrides the built-in defaults. ``--config`` naming a missing file is an error; the others are
optional. Unknown keys are errors (a typo should not silently do nothing on stage).

Sections (``examples/config.toml`` shows every key)::

    resume = true                  # restart: carry on what a crashed daemon was playing
    tempo = 122                    # /wb/tempo at start and on reload
    [osc]      host, port, allow
    [engine]   backend, model, device, dtype, soundfont, slots, slot_names, target_s, xfade_ms, first_chunk, max_chunk, splice
    [midi]     enabled, port, map  # map: relative to the config file
    [metrics]  enabled, host, port # port 0 = a free port
    [http]     listen ("HOST:PORT" | "off"), state_dir, storage ("DIR" | "s3://bucket/prefix"),
               track_workers; [http.tiers.NAME] audio_s_per_day, concurrent, max_request_s
    [log]      level
    [params]   gain = 0.8 …        # every slot; [params.3] for slot 3 only

``SIGHUP`` re-reads the same file: ``[params]``, ``tempo``, the MIDI map and ``[http.tiers]`` apply
live, other changes are reported as needing a restart. Pure ``[control]`` code; no I/O besides reading files.
"""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, fields

from .protocol import FixedCodeError

SYSTEM_CONFIG = "/etc/wavebridge/config.toml"


class ConfigError(FixedCodeError):
    """A config file that cannot be read or does not validate (code ``bad_config``)."""

    code = "bad_config"


@dataclass
class Settings:
    """Everything ``serve`` needs; built-in defaults here."""

    osc_host: str = "127.0.0.1"
    osc_port: int = 9137
    allow: list | None = None
    backend: str = "synth"
    model: str | None = None
    device: str | None = None
    dtype: str | None = None
    soundfont: str | None = None
    slots: int = 8
    slot_names: list | None = None                   # ring names instead of 1..slots
    target_s: float = 1.0
    xfade_ms: float = 50.0
    first_chunk: int = 2048
    max_chunk: int = 8192
    splice: bool = True
    price_per_hour: float = 1.0
    midi: bool = False
    midi_port: str | None = None
    midi_map: str | None = None
    metrics: bool = True
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 9464
    metrics_allow: list | None = None
    log_level: str = "INFO"
    resume: bool = True
    tempo: float | None = None
    params: dict = field(default_factory=dict)       # name → value (every slot)
    slot_params: dict = field(default_factory=dict)  # slot → {name → value}
    http: str = "127.0.0.1:8137"                     # HOST:PORT of the HTTP API, or "off"
    state_dir: str | None = None                     # keys, usage, track queue (~/.local/state/wavebridge)
    storage: str | None = None                       # finished tracks: a directory or s3://bucket/prefix
    track_workers: int = 2
    tiers: dict = field(default_factory=dict)        # tier name → limits (over bridge.store.DEFAULT_TIERS)
    config_path: str | None = None

    def live_params(self) -> list[tuple[int | None, str, float]]:
        """(slot or None for every slot, name, value), in a stable order."""
        out = [(None, k, v) for k, v in sorted(self.params.items())]
        for s in sorted(self.slot_params):
            out += [(s, k, v) for k, v in sorted(self.slot_params[s].items())]
        return out


# section → {key: (Settings field, type)}
SCHEMA = {
    "": {"resume": ("resume", bool), "tempo": ("tempo", float)},
    "osc": {"host": ("osc_host", str), "port": ("osc_port", int), "allow": ("allow", list)},
    "engine": {"backend": ("backend", str), "model": ("model", str), "device": ("device", str), "dtype": ("dtype", str),
               "soundfont": ("soundfont", str), "slots": ("slots", int), "target_s": ("target_s", float), "xfade_ms": ("xfade_ms", float),
               "first_chunk": ("first_chunk", int), "max_chunk": ("max_chunk", int),
               "splice": ("splice", bool), "price_per_hour": ("price_per_hour", float),
               "slot_names": ("slot_names", list)},
    "midi": {"enabled": ("midi", bool), "port": ("midi_port", str), "map": ("midi_map", str)},
    "metrics": {"enabled": ("metrics", bool), "host": ("metrics_host", str), "port": ("metrics_port", int),
                "allow": ("metrics_allow", list)},
    "log": {"level": ("log_level", str)},
    "http": {"listen": ("http", str), "state_dir": ("state_dir", str), "storage": ("storage", str),
             "track_workers": ("track_workers", int), "tiers": ("tiers", dict)},
}
#: fields that SIGHUP applies without a restart
LIVE_FIELDS = {"tempo", "params", "slot_params", "midi_map", "tiers"}
PATH_FIELDS = {"midi_map", "model", "state_dir", "soundfont"}


def search_path(environ=None) -> list[str]:
    """Where a config is looked for when ``--config`` is not given."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return [os.path.join(xdg, "wavebridge", "config.toml"), SYSTEM_CONFIG]


def find_config(explicit: str | None = None, environ=None) -> str | None:
    """The config file to use, or None. ``explicit`` must exist."""
    if explicit:
        if not os.path.isfile(explicit):
            raise ConfigError(f"config file {explicit} does not exist")
        return os.path.abspath(explicit)
    for p in search_path(environ):
        if os.path.isfile(p):
            return p
    return None


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


def load_file(path: str) -> dict:
    """Read and validate one config file into ``{Settings field: value}`` (only what it sets)."""
    return load_toml(path, lambda data: parse(data, os.path.dirname(os.path.abspath(path))), ConfigError)


def parse(data: dict, base_dir: str = ".") -> dict:
    """Validate a parsed config; relative paths are taken from ``base_dir``."""
    out: dict = {}
    for key, val in data.items():
        if key == "params":
            _params(val, out)
        elif key in SCHEMA[""]:
            _put(out, SCHEMA[""][key], val, key)
        elif key in SCHEMA and key != "":
            if not isinstance(val, dict):
                raise ConfigError(f"[{key}] must be a table")
            for k, v in val.items():
                if k not in SCHEMA[key]:
                    raise ConfigError(f"unknown key {key}.{k}; known: {', '.join(sorted(SCHEMA[key]))}")
                _put(out, SCHEMA[key][k], v, f"{key}.{k}")
        else:
            known = sorted(set(SCHEMA[""]) | (set(SCHEMA) - {""}) | {"params"})
            raise ConfigError(f"unknown key {key!r}; known: {', '.join(known)}")
    for f_ in PATH_FIELDS:
        if out.get(f_):
            out[f_] = os.path.normpath(os.path.join(base_dir, os.path.expanduser(out[f_])))
    if "slots" in out and not 1 <= out["slots"] <= 64:
        raise ConfigError("engine.slots must be 1..64")
    if "osc_port" in out and not 0 <= out["osc_port"] <= 65535:
        raise ConfigError("osc.port must be 0..65535")
    if "metrics_port" in out and not 0 <= out["metrics_port"] <= 65535:
        raise ConfigError("metrics.port must be 0..65535 (0 = a free port; metrics.enabled = false turns it off)")
    if "tempo" in out and not 20.0 <= out["tempo"] <= 400.0:
        raise ConfigError("tempo must be 20..400 bpm")
    for f_, where in (("allow", "osc.allow"), ("metrics_allow", "metrics.allow")):
        if f_ in out and not all(isinstance(a, str) for a in out[f_]):
            raise ConfigError(f"{where} must be a list of CIDR strings")
    if "tiers" in out:
        from .store import validate_tiers

        try:
            out["tiers"] = validate_tiers(out["tiers"])
        except ValueError as e:
            raise ConfigError(f"http.tiers: {e}") from None
    if "slot_names" in out:
        from .protocol import SLOT_NAME_RE

        names = out["slot_names"]
        if not names or len(names) > 64 or len(set(map(str, names))) != len(names) or not all(
                isinstance(n, str) and SLOT_NAME_RE.match(n) for n in names):
            raise ConfigError("engine.slot_names must be 1..64 distinct names of [A-Za-z0-9_-]{1,32}")
    return out


def _put(out, spec, val, where):
    name, typ = spec
    if typ is float:
        if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
            raise ConfigError(f"{where} must be a number, not {val!r}")
        val = float(val)
    elif typ is int:
        if isinstance(val, bool) or not isinstance(val, int):
            raise ConfigError(f"{where} must be an integer, not {val!r}")
    elif not isinstance(val, typ):
        raise ConfigError(f"{where} must be {typ.__name__}, not {val!r}")
    out[name] = val


def _params(val, out):
    if not isinstance(val, dict):
        raise ConfigError("[params] must be a table")
    every, per = {}, {}
    for k, v in val.items():
        if isinstance(v, dict):
            try:
                slot = int(k)
            except ValueError:
                raise ConfigError(f"[params.{k}]: {k!r} is not a slot number") from None
            if not 1 <= slot <= 64:
                raise ConfigError(f"[params.{k}]: slot must be 1..64")
            per[slot] = {}
            for name, x in v.items():
                per[slot][name] = _param_value(x, f"params.{k}.{name}")
        else:
            every[k] = _param_value(v, f"params.{k}")
    out["params"] = every
    out["slot_params"] = per


def _param_value(x, where) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ConfigError(f"{where} must be a finite number, not {x!r}")
    return float(x)


def resolve(cli: dict, environ=None) -> Settings:
    """Settings from defaults ← config file ← explicit CLI values (``None`` = flag not given).

    ``cli`` maps Settings field names to values; ``cli['config']`` is ``--config``.
    """
    path = find_config(cli.get("config"), environ)
    from_file = load_file(path) if path else {}
    s = Settings()
    names = {f.name for f in fields(Settings)}
    for k, v in from_file.items():
        setattr(s, k, v)
    for k, v in cli.items():
        if k in names and v is not None:
            setattr(s, k, v)
    s.config_path = path
    if cli.get("midi") is None:   # naming a port or a map means: use MIDI (unless told otherwise)
        if cli.get("midi_port") or cli.get("midi_map"):
            s.midi = True
        elif "midi" not in from_file and (from_file.get("midi_port") or from_file.get("midi_map")):
            s.midi = True
    return s


def reload(s: Settings, cli: dict) -> tuple[Settings, list[str]]:
    """Settings again for SIGHUP: (new settings, fields whose change needs a restart)."""
    # the file found at start, or (if there was none) the search again: a config written later counts
    new = resolve({**cli, "config": s.config_path} if s.config_path else cli)
    restart = [f.name for f in fields(Settings)
               if f.name not in LIVE_FIELDS and f.name != "config_path" and getattr(new, f.name) != getattr(s, f.name)]
    return new, restart
