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
    [engine]   backend, model, device, dtype, soundfont, slots, slot_names, target_s, xfade_ms, first_chunk, max_chunk, splice,
               remote ("http://host:port" | "auto" — the engine on a Ray Serve cluster), fallback
    [midi]     enabled, port, map  # map: relative to the config file
    [metrics]  enabled, host, port # port 0 = a free port
    [http]     listen ("HOST:PORT" | "off"), state_dir, storage ("DIR" | "s3://bucket/prefix"),
               queue ("redis://host:port/db", shared by several gateways),
               track_workers, allowed_hosts, allowed_origins, keepalive_timeout_s, head_timeout_s,
               body_timeout_s, body_min_rate, max_connections, max_connections_per_host;
               [http.tiers.NAME] audio_s_per_day, concurrent, max_request_s
    [log]      level
    [params]   gain = 0.8 …        # every slot; [params.3] for slot 3 only

``SIGHUP`` re-reads the same file: ``[params]``, ``tempo``, the MIDI map and ``[http.tiers]`` apply
live, other changes are reported as needing a restart. What a file may say is the msgspec structs
below (``_Config`` and its sections), checked by :func:`bridge.core.schema.convert`; ``SCHEMA`` maps
each key to its :class:`Settings` field. Pure ``[control]`` code; no I/O besides reading files.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Annotated, Union

import msgspec

from plugin_stub.protocol import SLOT_NAME_RE, FixedCodeError
from bridge.core.schema import FINITE, convert, load_toml
from bridge.web.store import validate_tiers

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
    engine: str | None = None                        # the engine on a cluster (bridge.cluster.remote); None = local
    engine_fallback: bool = False                    # cluster unreachable at start: the local backend instead
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
    queue: str | None = None                         # the track queue: None = SQLite; redis://host:port/db
    track_workers: int = 2
    tiers: dict = field(default_factory=dict)        # tier name → limits (over bridge.web.store.DEFAULT_TIERS)
    allowed_hosts: list | None = None                # Host names the HTTP API answers beyond loopback/its address
    allowed_origins: list | None = None              # other origins whose pages may call the API (CORS)
    # the HTTP listener's connections (bridge.web.conn; defaults: bridge.web.api.HttpConfig)
    keepalive_timeout_s: float = 5.0                 # an idle keep-alive connection is closed
    head_timeout_s: float = 10.0                     # no request head started this long: closed
    body_timeout_s: float = 5.0                      # a body's time: this plus its size at body_min_rate
    body_min_rate: float = 4096.0                    # bytes per second
    max_connections: int = 512                       # open at once, all peers
    max_connections_per_host: int = 64               # open at once from one host beyond loopback
    config_path: str | None = None

    def live_params(self) -> list[tuple[int | None, str, float]]:
        """(slot or None for every slot, name, value), in a stable order."""
        out = [(None, k, v) for k, v in sorted(self.params.items())]
        for s in sorted(self.slot_params):
            out += [(s, k, v) for k, v in sorted(self.slot_params[s].items())]
        return out


Port = Annotated[int, msgspec.Meta(ge=0, le=65535)]
Cidrs = Annotated[list[str], msgspec.Meta(extra={"expect": "a list of CIDR strings"})]
Finite = Annotated[float, FINITE]
Seconds = Annotated[float, msgspec.Meta(ge=0.05, le=3600.0, extra={"expect": "seconds, 0.05..3600"})]
SlotName = Annotated[str, msgspec.Meta(pattern=SLOT_NAME_RE.pattern, extra={"expect": "a name of [A-Za-z0-9_-]{1,32}"})]


class _Table(msgspec.Struct, forbid_unknown_fields=True):
    """A section: every key optional (what the file leaves out keeps the Settings default)."""


class _Osc(_Table):
    host: str = None
    port: Port = None
    allow: Cidrs = None


class _Engine(_Table):
    backend: str = None
    remote: Annotated[str, msgspec.Meta(pattern=r"^https?://\S+$|^auto$|^local$|^[\w.-]+:\d+$", extra={
        "expect": "http://HOST:PORT[/PREFIX] (Serve's HTTP address), auto, local or a GCS HOST:PORT"})] = None
    fallback: bool = None
    model: str = None
    device: str = None
    dtype: str = None
    soundfont: str = None
    slots: Annotated[int, msgspec.Meta(ge=1, le=64)] = None
    slot_names: Annotated[list[SlotName], msgspec.Meta(min_length=1, max_length=64, extra={
        "expect": "1..64 distinct names of [A-Za-z0-9_-]{1,32}"})] = None
    target_s: Finite = None
    xfade_ms: Finite = None
    first_chunk: int = None
    max_chunk: int = None
    splice: bool = None
    price_per_hour: Finite = None


class _Midi(_Table):
    enabled: bool = None
    port: str = None
    map: str = None


class _Metrics(_Table):
    enabled: bool = None
    host: str = None
    port: Annotated[int, msgspec.Meta(ge=0, le=65535, extra={
        "expect": "an integer 0..65535 (0 = a free port; metrics.enabled = false turns it off)"})] = None
    allow: Cidrs = None


class _Http(_Table):
    listen: str = None
    state_dir: str = None
    storage: str = None
    queue: str = None                           # redis://host:port/db[?reclaim_s=N] (bridge.web.redisqueue)
    track_workers: int = None
    tiers: dict = None                          # checked by bridge.web.store.validate_tiers
    allowed_hosts: list[str] = None             # checked by bridge.web.guard (names, name:port, .suffix, *)
    allowed_origins: list[str] = None           # checked by bridge.web.guard (scheme://host[:port])
    keepalive_timeout_s: Seconds = None
    head_timeout_s: Seconds = None
    body_timeout_s: Seconds = None
    body_min_rate: Annotated[float, msgspec.Meta(ge=1.0, le=1.0e9, extra={
        "expect": "bytes per second, 1..1e9"})] = None
    max_connections: Annotated[int, msgspec.Meta(ge=1, le=100000, extra={"expect": "an integer 1..100000"})] = None
    max_connections_per_host: Annotated[int, msgspec.Meta(ge=1, le=100000, extra={
        "expect": "an integer 1..100000"})] = None


class _Log(_Table):
    level: str = None


class _Config(_Table):
    resume: bool = None
    tempo: Annotated[float, msgspec.Meta(ge=20.0, le=400.0, extra={"expect": "20..400 bpm"})] = None
    osc: _Osc = None
    engine: _Engine = None
    midi: _Midi = None
    metrics: _Metrics = None
    http: _Http = None
    log: _Log = None
    # every slot: name = value; [params.N]: slot N only
    params: dict[str, Annotated[Union[Finite, dict[str, Finite]], msgspec.Meta(
        extra={"expect": "a finite number or a table [params.N] of them"})]] = None


#: section ("" = top level) → {key: Settings field}; the types are the msgspec structs above
SCHEMA = {
    "": {"resume": "resume", "tempo": "tempo"},
    "osc": {"host": "osc_host", "port": "osc_port", "allow": "allow"},
    "engine": {"backend": "backend", "remote": "engine", "fallback": "engine_fallback", "model": "model", "device": "device", "dtype": "dtype",
               "soundfont": "soundfont", "slots": "slots", "target_s": "target_s", "xfade_ms": "xfade_ms",
               "first_chunk": "first_chunk", "max_chunk": "max_chunk", "splice": "splice",
               "price_per_hour": "price_per_hour", "slot_names": "slot_names"},
    "midi": {"enabled": "midi", "port": "midi_port", "map": "midi_map"},
    "metrics": {"enabled": "metrics", "host": "metrics_host", "port": "metrics_port", "allow": "metrics_allow"},
    "log": {"level": "log_level"},
    "http": {"listen": "http", "state_dir": "state_dir", "storage": "storage", "queue": "queue",
             "track_workers": "track_workers", "tiers": "tiers", "allowed_hosts": "allowed_hosts",
             "allowed_origins": "allowed_origins", "keepalive_timeout_s": "keepalive_timeout_s",
             "head_timeout_s": "head_timeout_s", "body_timeout_s": "body_timeout_s", "body_min_rate": "body_min_rate",
             "max_connections": "max_connections", "max_connections_per_host": "max_connections_per_host"},
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


def load_file(path: str) -> dict:
    """Read and validate one config file into ``{Settings field: value}`` (only what it sets)."""
    return load_toml(path, lambda data: parse(data, os.path.dirname(os.path.abspath(path))), ConfigError)


def parse(data: dict, base_dir: str = ".") -> dict:
    """Validate a parsed config; relative paths are taken from ``base_dir``."""
    cfg = convert(data, _Config, ConfigError)
    out: dict = {}
    for section, keys in SCHEMA.items():
        table = cfg if section == "" else getattr(cfg, section)
        if table is None:
            continue
        given = data if section == "" else data[section]
        for k, name in keys.items():
            if k in given:
                out[name] = getattr(table, k)
    if cfg.params is not None:
        out["params"], out["slot_params"] = _params(cfg.params)
    for f_ in PATH_FIELDS:
        if out.get(f_):
            out[f_] = os.path.normpath(os.path.join(base_dir, os.path.expanduser(out[f_])))
    if "tiers" in out:
        try:
            out["tiers"] = validate_tiers(out["tiers"])
        except ValueError as e:
            raise ConfigError(f"http.tiers: {e}") from None
    _check_web_origins(out)
    names = out.get("slot_names")
    if names is not None and len(set(names)) != len(names):
        raise ConfigError(f"engine.slot_names must be distinct, not {names!r}")
    return out


def _check_web_origins(out: dict) -> None:
    """``http.allowed_hosts`` / ``http.allowed_origins`` as ``bridge.web.guard`` takes them."""
    from bridge.web.guard import check_allowed

    for k, kw in (("allowed_hosts", "hosts"), ("allowed_origins", "origins")):
        if out.get(k) is not None:
            try:
                check_allowed(**{kw: out[k]})
            except ValueError as e:
                raise ConfigError(f"http.{k}: {e}") from None


def _params(table: dict) -> tuple[dict, dict]:
    """(every slot {name: value}, {slot: {name: value}}) from a validated [params] table."""
    every, per = {}, {}
    for k, v in table.items():
        if not isinstance(v, dict):
            every[k] = v
            continue
        if not k.isdigit():
            raise ConfigError(f"[params.{k}]: {k!r} is not a slot number")
        if not 1 <= int(k) <= 64:
            raise ConfigError(f"[params.{k}]: slot must be 1..64")
        per[int(k)] = dict(v)
    return every, per


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
