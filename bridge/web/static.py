"""The web page: ``GET /`` (``static/index.html``), ``GET /web/{name}`` and ``GET /favicon.ico``.

Only the files present in ``bridge/web/static`` when the app is set up are served (an allowlist:
no request path reaches the filesystem). ``/favicon.ico`` is the page's SVG icon, so a browser's
automatic request for it is answered. ``[control]``
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


def setup(app: web.Application) -> None:
    """List the page's files for ``app`` (the allowlist). ``[control]``"""
    app[WEB_FILES] = (frozenset(n for n in os.listdir(WEB_DIR) if not n.startswith("."))
                      if os.path.isdir(WEB_DIR) else frozenset())


async def page(request: web.Request) -> web.Response:
    """``GET /``: the web page. ``[control]``"""
    return _file(request, "index.html")


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
