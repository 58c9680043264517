"""``/docs``: Swagger UI from the installed ``swagger-ui-bundle`` package, so the page works without internet.

FastAPI's default docs page loads its JavaScript and CSS from a CDN; on a server without internet access (and
evigate reaches nothing at run time but its model server and sources) that page stays blank.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"


def mount_docs(app: FastAPI) -> None:
    from swagger_ui_bundle import swagger_ui_path

    app.mount(ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="evigate API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )
