"""Where this hippo was installed from, and so the ``pip install`` line that adds an extra to it.

hippo is not on the package index yet: a hint that says ``pip install 'hippo-memory[cli]'`` fails
for everyone who installed from a checkout. The installer records the source in the
distribution's ``direct_url.json`` (PEP 610): a local directory (editable or not), an archive, or a
version-control URL; no record means the package index. Read once, on the first hint.
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = ["DISTRIBUTION", "install_line", "install_line_from"]

DISTRIBUTION = "hippo-memory"


def install_line(extra: str) -> str:
    """The command that installs ``extra`` into this hippo, from where it was installed."""
    return install_line_from(extra, _origin())


def install_line_from(extra: str, origin: dict[str, Any] | None) -> str:
    """The command for an install recorded as ``origin`` (a ``direct_url.json``; None: the index)."""
    origin = origin if isinstance(origin, dict) else {}
    url = str(origin.get("url") or "")
    wanted = f"{DISTRIBUTION}[{extra}]"
    vcs = origin.get("vcs_info")
    if isinstance(vcs, dict) and url:  # pip install 'hippo-memory[local] @ git+URL'
        revision = vcs.get("requested_revision")
        return _pip(f"{wanted} @ {vcs.get('vcs', 'git')}+{url}" + (f"@{revision}" if revision else ""))
    path = _local_path(url)
    if path is None or not path.exists():  # the index, or a local source that is gone: the name
        return _pip(wanted)
    dir_info = origin.get("dir_info")  # a checkout, editable or not; else a wheel or sdist file
    return _pip(f"{path}[{extra}]", editable=isinstance(dir_info, dict) and dir_info.get("editable") is True)


def _pip(requirement: str, *, editable: bool = False) -> str:
    return f"pip install {'-e ' if editable else ''}{shlex.quote(requirement)}"


def _local_path(url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


@cache
def _origin() -> dict[str, Any] | None:
    """This distribution's ``direct_url.json``; for source run without installing (``src/`` on the
    path), the checkout as an editable install would record it; None for the package index."""
    from importlib import metadata

    try:
        recorded = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        root = Path(__file__).resolve().parents[2]
        return {"url": root.as_uri(), "dir_info": {"editable": True}} if (root / "pyproject.toml").is_file() else None
    if not recorded:
        return None
    try:
        found = json.loads(recorded)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
