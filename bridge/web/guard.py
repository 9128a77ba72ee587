"""Browser-origin safety: which Host, which Origin, which request a web page may send. ``[control]``

The way Jupyter and local dev servers (Vite, webpack-dev-server) do it, so that no site on the
internet can drive a studio's DAW through the browser of the person sitting at it:

- **Host allow-list** (DNS rebinding): a request's ``Host`` must be a loopback name or address
  (``localhost``, ``127.0.0.0/8``, ``::1``, ``ip6-localhost``) or the bound address, with the bound
  port (no port only when that is 80); with ``--http 0.0.0.0``/``[::]`` any IP literal; names beyond
  those only when listed in ``[http] allowed_hosts``. Anything else is ``421``.
- **Origin**: a request that carries ``Origin`` must come from this server's own origin (the scheme
  aside: ``Host`` and the origin's host and port) or from one listed in ``[http] allowed_origins`` /
  ``--allow-origin``; ``null`` never passes. Else ``403``, before any handler — WebSocket
  handshakes included, so a refusal is never a ``101``.
- **Fetch Metadata**: ``Sec-Fetch-Site: cross-site`` or ``same-site`` (another port of the same
  host is same-site) without a listed Origin is ``403`` for everything but ``GET``/``HEAD`` of the
  page (``/``, ``/web/…``, ``/favicon.ico``): a foreign ``<audio src>`` or ``<img>`` sends no
  Origin, but it sends that.
- **JSON only**: a state-changing request (``POST``, ``PUT``, ``PATCH``, ``DELETE``) must say
  ``Content-Type: application/json`` (``415`` otherwise): a page can send that only after a CORS
  preflight, and the preflight is answered for listed origins alone. No wildcard CORS.
- **The page token**: one random string per install (``<state_dir>/page-token``, 0600), embedded
  in the page at ``/`` (which only a passing ``Host`` is served, and which no other origin can
  read) and sent back by the page as ``X-Wavebridge-Token`` (``?token=`` on its WebSockets). On a
  server that needs no key, a request is the *local admin* (may drive the DAW slots, sees every
  status row) if it carries no browser marker (no ``Origin``, no ``Sec-Fetch-Site`` but ``none``:
  curl, apps, ffmpeg, a URL the user typed) or it carries the token;
  :data:`bridge.web.api.LOCAL_ADMIN` records the answer for ``bridge.web.auth``. Requests without
  that are served as the local user, not the admin.

Requests without ``Origin`` and without ``Sec-Fetch-Site`` (curl, ffmpeg, Python clients) pass the
origin checks; they still need the right ``Host`` and JSON bodies. Everything runs on the loop.
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
from urllib.parse import urlsplit

from aiohttp import web

from bridge.web.api import LOCAL_ADMIN, ApiError, json_error
from bridge.web.store import open_private, private_dir, private_file

log = logging.getLogger("wavebridge.http")

__all__ = ["Guard", "TOKEN_HEADER", "check_allowed", "load_page_token", "normalize_origin"]

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "*"})
TOKEN_HEADER = "X-Wavebridge-Token"
TOKEN_FILE = "page-token"
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PAGE_PATHS = frozenset({"/", "/favicon.ico"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
#: what a listed origin's preflight may ask for (no cookies are used: keys are bearer tokens)
ALLOW_METHODS = "GET, POST, OPTIONS"
ALLOW_HEADERS = "Authorization, X-API-Key, Content-Type, Accept"
EXPOSE_HEADERS = "Retry-After, X-Wavebridge-Job, Location"


def load_page_token(state_dir: str) -> str:
    """This install's page token: read from ``<state_dir>/page-token`` or made once (0600). A token
    file that is a symlink or another user's is refused (PermissionError), never adopted. ``[control]``"""
    path = private_file(os.path.join(private_dir(state_dir), TOKEN_FILE))
    with open(path, encoding="ascii", errors="replace") as f:
        tok = f.read().strip()
    if len(tok) >= 32 and all(c.isalnum() or c in "-_" for c in tok):
        return tok
    tok = secrets.token_urlsafe(32)
    with open_private(path, "w") as f:
        f.write(tok + "\n")
    return tok


def _host_entry(h) -> str:
    """One ``allowed_hosts`` entry checked: ``name``, ``name:port``, ``.suffix`` or ``*``; raises ValueError."""
    h = str(h).strip().lower()
    if h == "*" or (h.startswith(".") and len(h) > 2 and split_host(h[1:]) == (h[1:].rstrip("."), None)):
        return h.rstrip(".") if h != "*" else h
    if split_host(h) is None or h.startswith("."):
        raise ValueError(f"allowed host {h!r} is not a host name, host:port, .suffix or *")
    return h


def check_allowed(hosts=(), origins=()) -> set[tuple[str, str, int]]:
    """Check ``allowed_hosts`` entries and ``allowed_origins`` (``scheme://host[:port]``, http or
    https); returns the origins normalized; raises ValueError naming the first bad entry. ``[control]``"""
    for h in hosts or ():
        _host_entry(h)
    out = set()
    for o in origins or ():
        n = normalize_origin(str(o))
        if n is None:
            raise ValueError(f"allowed origin {o!r} is not scheme://host[:port] (http or https)")
        out.add(n)
    return out


def split_host(value: str) -> tuple[str, int | None] | None:
    """``Host`` → (lower-case name or address without brackets, port or None); None if malformed."""
    v = (value or "").strip().lower()
    if not v or any(c in v for c in "/\\@?# \t"):
        return None
    if v.startswith("["):
        name, sep, rest = v[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
    elif v.count(":") > 1:
        return None                                   # an IPv6 address must be bracketed
    else:
        name, _, port = v.partition(":") if ":" in v else (v, "", None)
    name = name.rstrip(".") if name != "." else ""
    if not name:
        return None
    if port is None:
        return name, None
    if not port.isdigit() or not 0 < int(port) <= 65535:
        return None
    return name, int(port)


def _ip(name: str):
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback_name(name: str) -> bool:
    """``localhost``, ``ip6-localhost``, 127.0.0.0/8, ::1 (and ::ffff:127.x). ``[control]``"""
    if name in LOOPBACK_NAMES:
        return True
    ip = _ip(name)
    if ip is None:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or bool(mapped and mapped.is_loopback)


def normalize_origin(origin: str) -> tuple[str, str, int] | None:
    """``scheme://host[:port]`` → (scheme, host, port with the scheme's default); None for ``null``,
    a path, credentials or any other scheme. ``[control]``"""
    o = (origin or "").strip().lower()
    if not o or o == "null":
        return None
    try:
        u = urlsplit(o)
        port = u.port
    except ValueError:
        return None
    if u.scheme not in ("http", "https") or not u.hostname or u.username or u.password or u.path not in ("", "/") \
            or u.query or u.fragment:
        return None
    return u.scheme, u.hostname.rstrip("."), port if port is not None else DEFAULT_PORTS[u.scheme]


class Guard:
    """The Host, Origin, Fetch-Metadata and content-type checks of one service, and its page token.

    ``bound()`` returns the (host, port) the service is bound to (known once it listens);
    ``allowed_hosts`` and ``allowed_origins`` come from the config. ``[control]``
    """

    def __init__(self, bound, configured_host: str, state_dir: str, allowed_hosts=(), allowed_origins=()):
        self.bound = bound
        self.configured_host = (configured_host or "").strip("[]").lower()
        self.token = load_page_token(state_dir)
        self.any_host = False
        self.host_names: set[str] = set()                     # listed names, any port
        self.host_ports: set[tuple[str, int]] = set()         # listed name:port
        self.host_suffixes: list[str] = []                     # ".example.com": it and its subdomains
        for h in allowed_hosts or ():
            self._add_host(h)
        self.origins = check_allowed(origins=allowed_origins)

    def _add_host(self, h: str) -> None:
        h = str(h).strip().lower()
        if h == "*":
            self.any_host = True
        elif h.startswith("."):
            self.host_suffixes.append(_host_entry(h))
        else:
            name, port = split_host(_host_entry(h))
            if port is None:
                self.host_names.add(name)
            else:
                self.host_ports.add((name, port))

    # ------------------------------------------------------------------ the checks
    def host_ok(self, value: str | None) -> bool:
        """Whether a request's ``Host`` names this server (see the module docstring). ``[control]``"""
        if value is None:
            return True                                       # HTTP/1.0 without Host: no browser sends that
        sp = split_host(value)
        if sp is None:
            return False
        name, port = sp
        if self.any_host or name in self.host_names or (name, port) in self.host_ports \
                or any(name == s[1:] or name.endswith(s) for s in self.host_suffixes):
            return True
        host, bound_port = self.bound()
        bound_host = str(host or "").strip("[]").lower()
        if port != bound_port and not (port is None and bound_port == 80):
            return False
        if is_loopback_name(name) or name in (bound_host, self.configured_host):
            return True
        return (bound_host in WILDCARD_HOSTS or self.configured_host in WILDCARD_HOSTS) and _ip(name) is not None

    def origin_listed(self, origin: str | None) -> bool:
        """Whether ``origin`` is one of the config's allowed origins. ``[control]``"""
        n = normalize_origin(origin) if origin else None
        return n is not None and n in self.origins

    def same_origin(self, origin: str, host: str | None) -> bool:
        """Whether ``Origin`` is this request's own origin: its host and port are the ``Host``'s
        (no port in ``Host``: the origin's scheme's default), whatever the scheme (a TLS proxy in
        front serves ``https`` as ``http`` here). ``[control]``"""
        n = normalize_origin(origin)
        sp = split_host(host) if host else None
        if n is None or sp is None:
            return False
        _, oname, oport = n
        name, port = sp
        return oname == name and (oport == port if port is not None else oport == DEFAULT_PORTS[n[0]])

    def token_ok(self, request: web.Request) -> bool:
        """Whether the request carries this install's page token (header, else ``?token=``). ``[control]``"""
        tok = request.headers.get(TOKEN_HEADER) or request.query.get("token") or ""
        return bool(tok) and hmac.compare_digest(tok.encode("utf-8", "replace"), self.token.encode())

    def refusal(self, request: web.Request) -> ApiError | None:
        """Why the request is refused (421, 403 or 415), or None. ``[control]``"""
        host = request.headers.get("Host")
        if not self.host_ok(host):
            return ApiError(421, "misdirected", f"this server does not answer for Host {str(host)[:80]!r}; "
                                                "list the name in [http] allowed_hosts to serve it")
        origin = request.headers.get("Origin")
        listed = self.origin_listed(origin)
        if origin is not None and not listed and not self.same_origin(origin, host):
            return ApiError(403, "forbidden", f"cross-origin request from {origin[:80]!r} refused; list the "
                                              "origin in [http] allowed_origins (or --allow-origin) to allow it")
        site = request.headers.get("Sec-Fetch-Site", "").lower()
        if site in ("cross-site", "same-site") and not listed and not _page_get(request):
            return ApiError(403, "forbidden", f"{site} request refused (Sec-Fetch-Site); only this server's "
                                              "own page and listed origins may call the API")
        if request.method in STATE_CHANGING and request.match_info.http_exception is None \
                and request.content_type != "application/json":
            given = repr(request.content_type) if "Content-Type" in request.headers else "none"
            return ApiError(415, "bad_request", f"{request.method} needs Content-Type: application/json, "
                                                f"not {given} (curl: -H 'Content-Type: "
                                                "application/json')")
        return None

    def local_admin(self, request: web.Request) -> bool:
        """A key-less request is the local admin: no browser marker (no ``Origin``; ``Sec-Fetch-Site``
        absent or ``none``, what the user typed or bookmarked), or the page token. ``[control]``"""
        browser = "Origin" in request.headers or request.headers.get("Sec-Fetch-Site", "none").lower() != "none"
        return not browser or self.token_ok(request)

    # ------------------------------------------------------------------ aiohttp hooks
    @property
    def middleware(self):
        """The first middleware: refuse what the checks refuse, mark the local admin. ``[control]``"""
        @web.middleware
        async def guard(request, handler):
            err = self.refusal(request)
            if err is not None:
                log.debug("HTTP %s %s refused %d: %s", request.method, request.path, err.status, err.message)
                return json_error(err)
            request[LOCAL_ADMIN] = self.local_admin(request)
            return await handler(request)

        return guard

    async def on_response_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        """CORS for listed origins only (the origin echoed, ``Vary: Origin``), never ``*``; the
        page may not be framed; API responses are not for other origins' ``<audio>``/``<img>``. ``[control]``"""
        h = response.headers
        h.setdefault("X-Content-Type-Options", "nosniff")
        origin = request.headers.get("Origin")
        if request.path.startswith("/v1/"):
            h.add("Vary", "Origin")
            if self.origin_listed(origin):
                h["Access-Control-Allow-Origin"] = origin
                h["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
            else:
                h.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        if request.path == "/":
            h.setdefault("X-Frame-Options", "DENY")
            h.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
            h.setdefault("Referrer-Policy", "no-referrer")

    async def preflight(self, request: web.Request) -> web.Response:
        """``OPTIONS /v1/…``: a CORS preflight, answered for listed origins only (the middleware has
        refused every other origin with 403). ``[control]``"""
        origin = request.headers.get("Origin")
        if origin is not None and not self.origin_listed(origin):
            raise ApiError(403, "forbidden", f"origin {origin[:80]!r} is not allowed")
        return web.Response(status=204, headers={
            "Access-Control-Allow-Methods": ALLOW_METHODS, "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": "600"})


def _page_get(request: web.Request) -> bool:
    """``GET``/``HEAD`` of the page's own files: what a navigation or a foreign ``<img>`` may load."""
    return request.method in ("GET", "HEAD") and (request.path in PAGE_PATHS or request.path.startswith("/web/"))
