"""The HTTP side's database: API keys, tiers' usage and the track queue, in one SQLite file.

``Store`` owns ``<state_dir>/wavebridge.db`` (WAL mode, so ``wavebridge keys …`` can run while
the daemon serves). Keys are stored hashed: ``HMAC-SHA256(salt, secret)`` with a random
per-key salt; the key string a client holds is ``wb_<id>_<secret>`` and is shown once, at
creation. Usage is metered per key and UTC day (audio seconds, compute seconds, cost,
requests). Tracks are rows that move ``queued → running → done | error``; a row is the whole
truth of a job, so a daemon killed mid-render finds it again (``running`` → ``queued``) at start.

Threading: one ``Store`` per process, used from the asyncio loop (``[control]``); every call is a
short indexed query. ``check_same_thread=False`` only so a worker thread may close it.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import logging
import math
import os
import re
import secrets
import sqlite3
import stat
import time
from dataclasses import dataclass

log = logging.getLogger("wavebridge.store")

DB_NAME = "wavebridge.db"
KEY_RE = re.compile(r"^wb_([0-9a-f]{12})_([A-Za-z0-9_-]{20,64})$")
TRACK_ID_RE = re.compile(r"^[0-9a-f]{32}$")
NAME_RE = re.compile(r"^[A-Za-z0-9 ._@-]{1,64}$")

#: built-in tiers (the config's [http.tiers.NAME] tables override or add):
#: audio seconds per UTC day, concurrent streams, longest single request in seconds
DEFAULT_TIERS = {
    "free": {"audio_s_per_day": 600.0, "concurrent": 2, "max_request_s": 60.0},
    "pro": {"audio_s_per_day": 36000.0, "concurrent": 16, "max_request_s": 600.0},
}
#: a key's scopes: "" (its own streams and tracks) or "admin" (also the DAW slots and every stream's status)
SCOPES = ("", "admin")
#: what an unauthenticated client gets on a loopback-only server with no keys at all
LOCAL_TIER = {"audio_s_per_day": math.inf, "concurrent": 64, "max_request_s": 600.0}

SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, tier TEXT NOT NULL,
    salt BLOB NOT NULL, hash BLOB NOT NULL, created REAL NOT NULL, revoked REAL,
    scope TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS usage (
    key_id TEXT NOT NULL, day TEXT NOT NULL, tier TEXT NOT NULL,
    audio_s REAL NOT NULL DEFAULT 0, compute_s REAL NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0, requests INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day)
);
CREATE TABLE IF NOT EXISTS tracks (
    id TEXT PRIMARY KEY, key_id TEXT NOT NULL, prompt TEXT NOT NULL, seconds REAL NOT NULL,
    format TEXT NOT NULL, seed INTEGER NOT NULL, state TEXT NOT NULL, progress REAL NOT NULL DEFAULT 0,
    created REAL NOT NULL, started REAL, finished REAL, attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT, location TEXT, bytes INTEGER, compute_s REAL, cost_usd REAL, render_s REAL
);
CREATE INDEX IF NOT EXISTS tracks_state ON tracks (state, created);
"""


class StoreError(Exception):
    pass


def validate_tiers(tiers: dict) -> dict:
    """``{name: {audio_s_per_day, concurrent, max_request_s}}`` checked; raises ValueError. ``[control]``"""
    if not isinstance(tiers, dict):
        raise ValueError("must be a table of tiers")
    out = {}
    for name, lim in tiers.items():
        if not NAME_RE.match(str(name)) or not isinstance(lim, dict):
            raise ValueError(f"[http.tiers.{name}] must be a table under a plain name")
        t = {}
        for k, v in lim.items():
            if k not in ("audio_s_per_day", "concurrent", "max_request_s"):
                raise ValueError(f"unknown key {name}.{k}; known: audio_s_per_day, concurrent, max_request_s")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
                raise ValueError(f"{name}.{k} must be a number ≥ 0")
            t[k] = int(v) if k == "concurrent" else float(v)
        out[str(name)] = t
    return out


@dataclass
class Principal:
    """Who a request is: a key (``key_id``, ``name``) or the local anonymous user (``key_id='local'``)."""

    key_id: str
    name: str
    tier: str
    limits: dict
    admin: bool = False     # may drive the DAW slots and sees every stream (an ``admin`` key, or the local admin)


def default_state_dir() -> str:
    """``$XDG_STATE_HOME/wavebridge`` or ``~/.local/state/wavebridge``. ``[control]``"""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "wavebridge")


def _refuse_foreign(path: str, st: os.stat_result, kind: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise PermissionError(f"{path} is a symlink; wavebridge keeps its {kind} only at a real path it owns")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise PermissionError(f"{path} belongs to uid {st.st_uid}, not to this user ({os.geteuid()}); "
                              f"wavebridge does not adopt another user's {kind}")


def private_dir(path: str, kind: str = "state directory") -> str:
    """Make ``path`` a 0700 directory of this user (created if missing; an existing one re-chmodded);
    raises PermissionError for a symlink, a non-directory or another user's directory. ``[control]``"""
    path = os.path.abspath(os.path.expanduser(str(path)))
    try:
        os.makedirs(path, mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    _refuse_foreign(path, st, kind)
    if not stat.S_ISDIR(st.st_mode):
        raise PermissionError(f"{path} is not a directory")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def private_file(path: str) -> str:
    """Make ``path`` a 0600 regular file of this user (created empty if missing, never through a
    symlink; an existing one re-chmodded); raises PermissionError for a symlink, a non-regular file or
    another user's file. The one helper for every file the daemon keeps (db, page token …). ``[control]``"""
    path = os.path.abspath(os.path.expanduser(str(path)))
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
    except FileExistsError:
        pass
    st = os.lstat(path)
    _refuse_foreign(path, st, "files")
    if not stat.S_ISREG(st.st_mode):
        raise PermissionError(f"{path} is not a regular file")
    if stat.S_IMODE(st.st_mode) != 0o600:
        os.chmod(path, 0o600)
    return path


def open_private(path: str, mode: str = "wb"):
    """``open(path, mode)`` for writing a file created 0600 (truncated if it exists; never through a
    symlink). ``[control]`` or a worker"""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def today() -> str:
    """The UTC day, ``YYYY-MM-DD`` (usage is counted per UTC day). ``[control]``"""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def seconds_to_utc_midnight() -> int:
    """Seconds until the daily allowances reset (``Retry-After``). ``[control]``"""
    now = _dt.datetime.now(_dt.timezone.utc)
    nxt = (now + _dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int(math.ceil((nxt - now).total_seconds())))


def _digest(salt: bytes, secret: str) -> bytes:
    return hmac.new(salt, secret.encode(), hashlib.sha256).digest()


class Store:
    """The SQLite database under ``state_dir``. ``[control]``"""

    def __init__(self, state_dir: str):
        # the db is 0600 before SQLite opens it: its -wal and -shm are created with the db's mode
        self.state_dir = private_dir(state_dir)
        self.path = private_file(os.path.join(self.state_dir, DB_NAME))
        for side in ("-wal", "-shm"):
            if os.path.lexists(self.path + side):
                private_file(self.path + side)
        self.db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
        self.closed = False
        self._late_meters = 0
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self._migrate()

    def close(self) -> None:
        """Close the database (after every stream's bill: ``HttpService.close``). ``[control]``"""
        self.closed = True
        self.db.close()

    def _migrate(self) -> None:
        """Bring a database of an older version up to :data:`SCHEMA` (columns added since). ``[control]``"""
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(keys)")}
        if "scope" not in cols:
            self.db.execute("ALTER TABLE keys ADD COLUMN scope TEXT NOT NULL DEFAULT ''")

    # ------------------------------------------------------------------ keys
    def add_key(self, name: str, tier: str, scope: str = "") -> str:
        """Create a key (``scope`` ``admin``: it may drive the DAW slots); returns the key string
        (shown once, never stored). ``[control]``"""
        if not NAME_RE.match(name or ""):
            raise StoreError("a key name is 1-64 of letters, digits, space and ._@-")
        if scope not in SCOPES:
            raise StoreError(f"unknown scope {scope!r}; known: admin (or none)")
        kid = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        try:
            self.db.execute("INSERT INTO keys (id, name, tier, salt, hash, created, scope) VALUES (?,?,?,?,?,?,?)",
                            (kid, name, tier, salt, _digest(salt, secret), time.time(), scope))
        except sqlite3.IntegrityError:
            raise StoreError(f"a key named {name!r} exists already") from None
        return f"wb_{kid}_{secret}"

    def list_keys(self) -> list[dict]:
        """Every key (never the secret) with today's usage. ``[control]``"""
        rows = self.db.execute("SELECT id, name, tier, scope, created, revoked FROM keys ORDER BY created").fetchall()
        day = today()
        out = []
        for r in rows:
            u = self.usage(r["id"], day)
            out.append({**dict(r), "audio_s_today": u["audio_s"], "requests_today": u["requests"]})
        return out

    def revoke(self, name_or_id: str) -> bool:
        """Revoke a key by name or id; False if no active key matched. ``[control]``"""
        cur = self.db.execute("UPDATE keys SET revoked=? WHERE (name=? OR id=?) AND revoked IS NULL",
                              (time.time(), name_or_id, name_or_id))
        return cur.rowcount > 0

    def has_keys(self) -> bool:
        """True once any key was ever created (revoked ones count: the server stays locked). ``[control]``"""
        return self.db.execute("SELECT 1 FROM keys LIMIT 1").fetchone() is not None

    def check_key(self, key: str) -> dict | None:
        """The key's row if ``key`` is valid and not revoked, else None (constant-time compare). ``[control]``"""
        m = KEY_RE.match(key or "")
        if not m:
            return None
        row = self.db.execute("SELECT id, name, tier, scope, salt, hash, revoked FROM keys WHERE id=?",
                              (m.group(1),)).fetchone()
        if row is None:
            _digest(b"\0" * 16, m.group(2))          # same work for unknown ids
            return None
        ok = hmac.compare_digest(_digest(row["salt"], m.group(2)), row["hash"])
        if not ok or row["revoked"] is not None:
            return None
        return {"id": row["id"], "name": row["name"], "tier": row["tier"], "scope": row["scope"]}

    # ------------------------------------------------------------------ usage
    def usage(self, key_id: str, day: str | None = None) -> dict:
        """The key's totals for ``day`` (default today). ``[control]``"""
        r = self.db.execute("SELECT audio_s, compute_s, cost_usd, requests FROM usage WHERE key_id=? AND day=?",
                            (key_id, day or today())).fetchone()
        if r is None:
            return {"audio_s": 0.0, "compute_s": 0.0, "cost_usd": 0.0, "requests": 0}
        return dict(r)

    def meter(self, key_id: str, tier: str, audio_s: float, compute_s: float, cost: float, requests: int = 1) -> None:
        """Add usage to the key's row for today (one upsert); after :meth:`close` it is not recorded
        and the first such bill logs one warning (never an exception into a handler). ``[control]``"""
        if self.closed:
            self._late_meters += 1
            if self._late_meters == 1:
                log.warning("usage of key %s (%.2f audio s) arrived after the database closed and is not "
                            "recorded (later ones are not logged)", key_id, float(audio_s))
            return
        self.db.execute(
            "INSERT INTO usage (key_id, day, tier, audio_s, compute_s, cost_usd, requests) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT (key_id, day) DO UPDATE SET audio_s=audio_s+excluded.audio_s, "
            "compute_s=compute_s+excluded.compute_s, cost_usd=cost_usd+excluded.cost_usd, "
            "requests=requests+excluded.requests, tier=excluded.tier",
            (key_id, today(), tier, float(audio_s), float(compute_s), float(cost), int(requests)))

    # ------------------------------------------------------------------ tracks
    def add_track(self, key_id: str, prompt: str, seconds: float, fmt: str, seed: int) -> str:
        """Queue a track; returns its server-generated id. ``[control]``"""
        tid = secrets.token_hex(16)
        self.db.execute("INSERT INTO tracks (id, key_id, prompt, seconds, format, seed, state, created) "
                        "VALUES (?,?,?,?,?,?,'queued',?)", (tid, key_id, prompt, float(seconds), fmt, int(seed),
                                                            time.time()))
        return tid

    def track(self, tid: str) -> dict | None:
        """A track's row, or None (ids that are not server-generated hex never reach the query). ``[control]``"""
        if not TRACK_ID_RE.match(tid or ""):
            return None
        r = self.db.execute("SELECT * FROM tracks WHERE id=?", (tid,)).fetchone()
        return dict(r) if r is not None else None

    def tracks_of(self, key_id: str, limit: int = 100) -> list[dict]:
        """The key's tracks, newest first. ``[control]``"""
        rows = self.db.execute("SELECT * FROM tracks WHERE key_id=? ORDER BY created DESC LIMIT ?",
                               (key_id, int(limit))).fetchall()
        return [dict(r) for r in rows]

    def pending_seconds(self, key_id: str) -> float:
        """Audio seconds queued or rendering for this key (counted against its allowance). ``[control]``"""
        r = self.db.execute("SELECT COALESCE(SUM(seconds), 0) FROM tracks WHERE key_id=? AND state IN "
                            "('queued', 'running')", (key_id,)).fetchone()
        return float(r[0])

    def requeue_running(self) -> int:
        """At start: jobs a dead daemon was rendering go back to the queue. ``[control]``"""
        return self.db.execute("UPDATE tracks SET state='queued', progress=0 WHERE state='running'").rowcount

    def next_queued(self, exclude: set) -> dict | None:
        """The oldest queued track not in ``exclude``. ``[control]``"""
        for r in self.db.execute("SELECT * FROM tracks WHERE state='queued' ORDER BY created LIMIT 64"):
            if r["id"] not in exclude:
                return dict(r)
        return None

    def set_track(self, tid: str, **fields) -> None:
        """Update a track's row (column names come from code, never from a request). ``[control]``"""
        if not fields:
            return
        cols = ", ".join(f"{k}=?" for k in fields)
        self.db.execute(f"UPDATE tracks SET {cols} WHERE id=?", (*fields.values(), tid))

    def queue_depth(self) -> dict:
        """Tracks per state. ``[control]``"""
        return {r[0]: r[1] for r in self.db.execute("SELECT state, COUNT(*) FROM tracks GROUP BY state")}

    def kept_tracks(self, limit: int = 64) -> list[dict]:
        """Rendered tracks that storage refused, kept on this server to be stored again (``error``
        rows with a ``location``), oldest first. ``[control]``"""
        rows = self.db.execute("SELECT * FROM tracks WHERE state='error' AND location IS NOT NULL "
                               "ORDER BY finished LIMIT ?", (int(limit),)).fetchall()
        return [dict(r) for r in rows]
