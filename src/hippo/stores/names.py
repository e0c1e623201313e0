"""What a database name means: a path or a URL read into its backend and location, and the name
as it may be shown (a URL's password masked). Pure: nothing here opens or imports a backend, so
the registry and the backends can both use it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from hippo.errors import ConfigError, InvalidInput

__all__ = ["AGENT_FIELD", "Target", "parse", "shown", "validate_table_name"]

AGENT_FIELD = "{agent_id}"

_POSTGRES = ("postgresql", "postgres")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class Target:
    """A database name, read: its ``backend`` and where it is (a file path or a URL)."""

    backend: str  # "sqlite" or "postgresql"
    location: str


def parse(db: str | os.PathLike[str]) -> Target:
    """The backend and location a database name means; ConfigError for a scheme hippo has no store for."""
    text = os.fspath(db)
    match = _SCHEME.match(text)
    if match is None:  # "~" and "$VARS" are expanded by hippo.config.load_settings, which every name goes through
        return Target("sqlite", text)
    scheme = match.group(1).lower()
    if scheme in _POSTGRES:
        return Target("postgresql", text)
    if scheme == "sqlite":
        path = text[len(match.group(0)):]
        if path.startswith("/:memory:"):
            return Target("sqlite", ":memory:")
        return Target("sqlite", path)
    raise ConfigError(f"no store for {scheme}:// databases; use a file path, sqlite:///path or postgresql://...")


def shown(db: str | os.PathLike[str]) -> str:
    """The database name as it may be printed or logged: a URL's password is masked."""
    target = parse(db)
    if target.backend == "sqlite":
        return target.location
    parts = urlsplit(target.location)
    if not parts.password:  # no password, or an empty one: nothing to hide
        return target.location
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def validate_table_name(name: str) -> str:
    """Table names cannot be bound as parameters, so only plain identifiers pass."""
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise InvalidInput(f"invalid table name {name!r}: use letters, digits and underscores")
    return name
