"""The API reference pages, /docs (Swagger UI) and /redoc, served with no network at all.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so offline they are
blank. The same files ship inside the ``fastapi-offline`` package (MIT; part of
the ``http`` extra); hippo serves them from there under ``/docs-assets`` and
builds both pages with FastAPI's own HTML helpers, Google Fonts left out.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from hippo.errors import MissingDependency

__all__ = ["ASSETS", "install_docs"]

ASSETS = "/docs-assets"


def _static_folder() -> Path:
    spec = importlib.util.find_spec("fastapi_offline")
    folder = Path(next(iter(spec.submodule_search_locations or ()), "")) / "static" if spec else None
    if folder is None or not (folder / "swagger-ui-bundle.js").is_file():
        raise MissingDependency("fastapi-offline", "http")
    return folder


def install_docs(app: FastAPI) -> None:
    """Mount the packaged assets and answer /docs and /redoc (the app was made with both off)."""
    app.mount(ASSETS, StaticFiles(directory=_static_folder()), name="docs-assets")
    title = f"{app.title} {app.version}"

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json", title=f"{title}: API reference",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js", swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png", swagger_ui_parameters={"persistAuthorization": True},
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=app.openapi_url or "/openapi.json", title=f"{title}: API reference",
                              redoc_js_url=f"{ASSETS}/redoc.standalone.js", redoc_favicon_url=f"{ASSETS}/favicon.png",
                              with_google_fonts=False)
