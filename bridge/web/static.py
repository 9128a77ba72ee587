"""The web page: ``GET /`` (``static/index.html``), ``GET /web/{name}`` and ``GET /favicon.ico``.

Only the files present in ``bridge/web/static`` when the app is set up are served (an allowlist:
no request path reaches the filesystem). ``/favicon.ico`` is the page's SVG icon, so a browser's
automatic request for it is answered. The page at ``/`` carries this install's page token
(``bridge.web.guard``) in a ``<meta name="wavebridge-token">``: only a request whose ``Host`` passed
the guard gets it, and no other origin can read the page. ``[control]``
"""
from __future__ import annotations

import os

from aiohttp import web

from bridge.web.api import ApiError

WEB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
FAVICON = "favicon.svg"
CONTENT_TYPES = {"html": "text/html", "js": "text/javascript", "css": "text/css", "png": "image/png",
                 "svg": "image/svg+xml"}
WEB_FILES = web.AppKey("wavebridge.web_files", frozenset)
PAGE_TOKEN = web.AppKey("wavebridge.page_token", str)
TOKEN_SLOT = b"{{WAVEBRIDGE_TOKEN}}"          # in index.html: replaced by the page token


def setup(app: web.Application, token: str = "") -> None:
    """List the page's files for ``app`` (the allowlist); ``token``: the page token it embeds. ``[control]``"""
    app[WEB_FILES] = (frozenset(n for n in os.listdir(WEB_DIR) if not n.startswith("."))
                      if os.path.isdir(WEB_DIR) else frozenset())
    app[PAGE_TOKEN] = token


async def page(request: web.Request) -> web.Response:
    """``GET /``: the web page, with the page token in it (never cached). ``[control]``"""
    resp = _file(request, "index.html")
    resp.body = resp.body.replace(TOKEN_SLOT, request.app[PAGE_TOKEN].encode("ascii"))
    resp.headers["Cache-Control"] = "no-store"
    return resp


async def static_file(request: web.Request) -> web.Response:
    """``GET /web/{name}``: one of the page's files (an allowlist). ``[control]``"""
    return _file(request, request.match_info["name"])


async def favicon(request: web.Request) -> web.Response:
    """``GET /favicon.ico``: the page's icon (SVG). ``[control]``"""
    return _file(request, FAVICON)


def _file(request: web.Request, name: str) -> web.Response:
    if name not in request.app[WEB_FILES]:        # an allowlist: no request path reaches the filesystem
        raise ApiError(404, "bad_request", "no such file")
    ctype = CONTENT_TYPES.get(name.rsplit(".", 1)[-1], "application/octet-stream")
    with open(os.path.join(WEB_DIR, name), "rb") as f:
        data = f.read()
    return web.Response(body=data, content_type=ctype, headers={"Cache-Control": "no-cache"})
