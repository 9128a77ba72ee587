"""Who a request is and what it may spend: keys, tiers, admission, usage metering. ``[control]``

:class:`Auth` turns a request's key (``Authorization: Bearer <key>``, ``X-API-Key: <key>`` or
``?key=`` — WebSockets from a page cannot set headers) into a :class:`Principal`, admits a
request against its tier (longest request, concurrent streams, audio seconds per UTC day) and
meters what was served into the key's row of today (``bridge.web.store``) and the per-tier
Prometheus totals (:class:`Meters`). A key is required once any key exists, or whenever the server
listens beyond loopback; without one, a loopback server serves everyone as the ``local`` tier.
A principal is the *admin* (drives the DAW slots, sees every stream) when its key has scope
``admin``, or when it is key-less on such a server and ``bridge.web.guard`` found no browser
marker or the page token (:data:`bridge.web.api.LOCAL_ADMIN`).
Everything runs on the asyncio loop; the meters are read by the metrics thread's scrape.
"""
from __future__ import annotations

import collections
import ipaddress
import math

from aiohttp import web

from bridge.web.api import LOCAL_ADMIN, TIER, ApiError
from bridge.web.store import DEFAULT_TIERS, LOCAL_TIER, Principal, Store, seconds_to_utc_midnight


def is_loopback(host: str) -> bool:
    """True for a loopback address or name. ``[control]``"""
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Meters:
    """Per-tier totals for Prometheus (exported by ``bridge.web.app.HttpCollector``)."""

    def __init__(self):
        self.audio_s = collections.Counter()
        self.compute_s = collections.Counter()
        self.cost = collections.Counter()
        self.requests = collections.Counter()       # (endpoint, tier, status)
        self.rejected = collections.Counter()       # (tier, reason)
        self.first_audio_ms: collections.deque = collections.deque(maxlen=2000)   # (endpoint, ms)
        self.encode_s = collections.Counter()       # format → seconds of encoding
        self.encoded_audio_s = collections.Counter()  # format → audio seconds encoded


class Auth:
    """Keys, tiers, admission and metering over one :class:`Store`. ``[control]``"""

    def __init__(self, store: Store, tiers: dict | None, price_per_hour: float, host: str):
        self.store = store
        self.set_tiers(tiers)
        self.price_per_hour = float(price_per_hour)
        self.host = host                              # the bound address (set again after binding)
        self.active: collections.Counter = collections.Counter()      # key id → open streams
        self.reserved: collections.Counter = collections.Counter()    # key id → audio-s promised, unmetered
        self.meters = Meters()

    def set_tiers(self, tiers: dict | None) -> None:
        """The built-in tiers overridden or extended by the config's (at start and on SIGHUP). ``[control]``"""
        t = {k: dict(v) for k, v in DEFAULT_TIERS.items()}
        for name, lim in (tiers or {}).items():
            t[name] = {**t.get(name, DEFAULT_TIERS["free"]), **lim}
        self.tiers = t

    def cost(self, compute_s: float) -> float:
        """The price of ``compute_s`` engine seconds at ``--price-per-hour``. ``[control]``"""
        return compute_s * self.price_per_hour / 3600.0

    # ------------------------------------------------------------------ who
    def keys_required(self) -> bool:
        """A key is needed once any key exists or when listening beyond loopback. ``[control]``"""
        return not is_loopback(self.host) or self.store.has_keys()

    def principal(self, request: web.Request) -> Principal:
        """Who the request is (key from the Authorization/X-API-Key header or ``?key=``); raises ApiError 401/403. ``[control]``"""
        key = ""
        auth = request.headers.get("Authorization", "")
        if auth[:7].lower() == "bearer ":
            key = auth[7:].strip()
        key = key or request.headers.get("X-API-Key", "").strip() or request.query.get("key", "").strip()
        if key:
            row = self.store.check_key(key)
            if row is None:
                raise ApiError(401, "unauthorized", "invalid or revoked API key",
                               {"WWW-Authenticate": 'Bearer realm="wavebridge"'})
            lim = self.tiers.get(row["tier"])
            if lim is None:
                raise ApiError(403, "unauthorized", f"tier {row['tier']!r} is not configured on this server")
            return Principal(row["id"], row["name"], row["tier"], lim, admin=row.get("scope") == "admin")
        if self.keys_required():
            raise ApiError(401, "unauthorized", "an API key is required (Authorization: Bearer <key>)",
                           {"WWW-Authenticate": 'Bearer realm="wavebridge"'})
        return Principal("local", "local", "local", LOCAL_TIER, admin=bool(request.get(LOCAL_ADMIN, False)))

    def identify(self, request: web.Request) -> Principal:
        """:meth:`principal`, and the request's meters count it under its tier. ``[control]``"""
        p = self.principal(request)
        request[TIER] = p.tier
        return p

    def identify_admin(self, request: web.Request) -> Principal:
        """:meth:`identify`, refused with 403 unless it is the local admin or an ``admin`` key: the DAW
        slots are the studio's, not a web client's. ``[control]``"""
        p = self.identify(request)
        if not p.admin:
            raise ApiError(403, "forbidden", "the DAW slots are controlled by the local admin only (a key with "
                                             "scope admin: wavebridge keys add NAME --scope admin, or this "
                                             "server's own page)")
        return p

    # ------------------------------------------------------------------ admission
    def admit(self, p: Principal, seconds: float, stream: bool = True) -> None:
        """Tier limits: longest request, concurrent streams, audio seconds per UTC day. ``[control]``"""
        lim = p.limits
        if seconds > float(lim["max_request_s"]):
            raise ApiError(400, "bad_request", f"tier {p.tier} allows requests up to {lim['max_request_s']:g} s, "
                                               f"asked for {seconds:g} s")
        if stream and self.active[p.key_id] >= int(lim["concurrent"]):
            self.meters.rejected[(p.tier, "concurrent")] += 1
            raise ApiError(429, "quota", f"tier {p.tier} allows {lim['concurrent']} concurrent streams",
                           {"Retry-After": "1"})
        used = self.used_today(p)
        allowance = float(lim["audio_s_per_day"])
        if used + max(seconds, 0.0) > allowance or (seconds <= 0 and used >= allowance):
            self.meters.rejected[(p.tier, "daily")] += 1
            left = max(0.0, allowance - used)
            raise ApiError(429, "quota", f"daily allowance of tier {p.tier} is {allowance:g} audio seconds; "
                                         f"{left:.1f} s left today", {"Retry-After": str(seconds_to_utc_midnight())})

    def used_today(self, p: Principal) -> float:
        """Audio seconds charged to the key today: served, reserved by open requests, queued as tracks. ``[control]``"""
        return (self.store.usage(p.key_id)["audio_s"] + self.reserved[p.key_id]
                + self.store.pending_seconds(p.key_id))

    # ------------------------------------------------------------------ metering
    def meter(self, key_id: str, tier: str | None, audio_s: float, compute_s: float, cost: float,
              requests: int = 1) -> None:
        """Add a request's usage to its key's row of today and to the per-tier Prometheus totals. ``[control]``"""
        if tier is None:
            row = self.store.db.execute("SELECT tier FROM keys WHERE id=?", (key_id,)).fetchone()
            tier = row[0] if row else "local"
        self.store.meter(key_id, tier, audio_s, compute_s, cost, requests)
        self.meters.audio_s[tier] += audio_s
        self.meters.compute_s[tier] += compute_s
        self.meters.cost[tier] += cost

    def encode_stats(self, enc) -> None:
        """Add an encoder's CPU time and audio to the per-format totals. ``[control]``"""
        self.meters.encode_s[enc.format] += enc.encode_s
        self.meters.encoded_audio_s[enc.format] += enc.frames_in / enc.rate


AUTH = web.AppKey("wavebridge.auth", Auth)


async def usage(request: web.Request) -> web.Response:
    """``GET /v1/usage``: the key's usage today and its tier's limits. ``[control]``"""
    auth = request.app[AUTH]
    p = auth.principal(request)
    u = auth.store.usage(p.key_id)
    lim = p.limits
    return web.json_response({"key": p.name, "tier": p.tier, "today": u,
                              "limits": {k: (None if isinstance(v, float) and math.isinf(v) else v)
                                         for k, v in lim.items()},
                              "active_streams": auth.active[p.key_id]})
