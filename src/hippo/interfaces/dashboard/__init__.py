"""The web dashboard (issue 22): server-rendered pages over the core, served by ``hippo serve`` at ``/``.

Jinja2 templates and a little JavaScript; charts by the vendored Chart.js
(``static/``, MIT). Every asset ships in the package, so the pages work with no
network. Access uses the HTTP API's keys (see :mod:`.sessions`).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS", "install_dashboard"]

ASSETS = "/dashboard-assets"


def install_dashboard(app: FastAPI) -> None:
    """Mount the dashboard's pages and its packaged assets on the API's app."""
    try:
        import jinja2  # noqa: F401
    except ImportError as exc:  # the http extra brings it
        from hippo.errors import MissingDependency

        raise MissingDependency("jinja2", "http") from exc
    from hippo.interfaces.dashboard import edits, landing, pages, panels, short_term, trail

    app.mount(ASSETS, StaticFiles(directory=Path(__file__).parent / "static"), name="dashboard-assets")
    app.include_router(landing.router)
    app.include_router(pages.router)
    app.include_router(edits.router)
    app.include_router(panels.router)
    app.include_router(short_term.router)
    app.include_router(trail.router)
