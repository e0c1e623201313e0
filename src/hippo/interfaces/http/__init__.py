"""hippo's HTTP API (FastAPI). Needs the ``http`` extra."""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(*args: Any, **kwargs: Any) -> Any:
    """See :func:`hippo.interfaces.http.app.create_app`; imported here lazily so a missing extra is a clear error."""
    try:
        from hippo.interfaces.http.app import create_app as create
    except ImportError as exc:
        from hippo.errors import MissingDependency

        raise MissingDependency(exc.name or "fastapi", "http") from None
    return create(*args, **kwargs)
