"""The Trace Workbench's static files (script and style): served from memory, named by their content.

The files are read once, when the pages are mounted (together a few tens of KB). A request is answered from memory,
with no file system call and no thread: on 2 busy cores the three files of a first page load took up to ~200 ms each
through Starlette's ``StaticFiles`` (a stat and a read on a worker thread per file), the whole budget of the page.

A page links ``/static/workbench.js?v=<first 12 hex digits of its SHA-256>``. That exact name is served with
``Cache-Control: public, max-age=31536000, immutable``: a browser that has it loads the next page without asking
again, and a new release's pages name new versions, so no page ever runs an old script. Any other name (no
version, an old one) is served with ``no-cache`` and an ``ETag``: checked each time, never kept stale.
"""

from __future__ import annotations

import hashlib
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response

KEEP = "public, max-age=31536000, immutable"
CHECK = "no-cache"


@dataclass(frozen=True)
class Asset:
    body: bytes
    media_type: str
    version: str  # the first 12 hex digits of the body's SHA-256


def read_assets(directory: Path) -> dict[str, Asset]:
    """Every file of ``directory`` by name, with its media type and content version."""
    assets = {}
    for path in sorted(directory.iterdir()):
        if path.is_file():
            body = path.read_bytes()
            media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if media_type.startswith("text/"):
                media_type += "; charset=utf-8"
            assets[path.name] = Asset(body, media_type, hashlib.sha256(body).hexdigest()[:12])
    return assets


def mount_assets(app: FastAPI, directory: Path, refuse: Callable[[int, str], Exception]) -> Callable[[str], str]:
    """Serve ``directory`` at ``/static/{name}``; returns ``url(name)``, the versioned path a page links."""
    assets = read_assets(directory)

    @app.api_route("/static/{name}", methods=["GET", "HEAD"], include_in_schema=False)
    async def static_file(name: str, request: Request) -> Response:
        asset = assets.get(name)
        if asset is None:
            raise refuse(404, f"no static file {name}")
        etag = f'"{asset.version}"'
        headers = {"Cache-Control": KEEP if request.query_params.get("v") == asset.version else CHECK,
                   "ETag": etag, "X-Content-Type-Options": "nosniff"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)  # uvicorn drops a HEAD's body

    def url(name: str) -> str:
        return f"/static/{name}?v={assets[name].version}"

    return url
