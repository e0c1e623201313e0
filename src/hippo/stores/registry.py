"""Which store a database name opens: the one place that knows the backends.

A database is named by a path or a URL, wherever one is taken (``hippo.open``, ``--db``,
``HIPPO_DB``, ``hippo.toml``):

- ``memory.db``, ``~/hippo.db``, ``sqlite:///abs/path.db``, ``sqlite:///:memory:``: the embedded
  SQLite store (:mod:`hippo.stores.sqlite`);
- ``postgresql://user:pass@host:5432/dbname`` (or ``postgres://``): PostgreSQL with pgvector
  (:mod:`hippo.stores.postgres`, the ``postgres`` extra).

A SQLite path may hold ``{agent_id}`` (``memories/{agent_id}.db``): each agent then has a file of
its own, made with its folder when first opened.

Nothing outside ``stores/`` names a backend class or treats a database name as a file path.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hippo.errors import ConfigError
from hippo.stores.names import AGENT_FIELD, Target, parse, shown, validate_table_name

if TYPE_CHECKING:
    from hippo.core.ports import Store
    from hippo.core.ports.database import Progress, RestoreResult

__all__ = ["AGENT_FIELD", "Target", "create_messages_table", "discard", "exists", "for_agent", "open_store", "parse",
           "per_agent", "restore", "shown"]

def per_agent(db: str | os.PathLike[str]) -> bool:
    """Whether a database name is a template with a file per agent."""
    return AGENT_FIELD in os.fspath(db)


def for_agent(db: str | os.PathLike[str], agent_id: str, *, make_folder: bool = False) -> str:
    """The database of one agent: a template's ``{agent_id}`` filled in (agent ids are checked
    words without a slash, so the file stays in the template's folder); other names as they are.
    ``make_folder``: create the file's folder (before opening it)."""
    text = os.fspath(db)
    if not per_agent(text):
        return text
    if parse(text).backend != "sqlite":
        raise ConfigError("{agent_id} in a database name makes a SQLite file per agent; a server database "
                          "holds every agent already")
    filled = text.replace(AGENT_FIELD, agent_id)
    folder = os.path.dirname(parse(filled).location)
    if folder and make_folder:
        os.makedirs(folder, exist_ok=True)
    return filled


def open_store(db: str | os.PathLike[str], **options: Any) -> "Store":
    """Open (creating if needed) the store a database name means. ``options`` are the store
    settings (``ann_threshold``); each backend takes what applies to it."""
    if per_agent(db):
        raise ConfigError(f"{shown(db)} names one database per agent: open it for an agent (hippo.open(..., "
                          "agent_id=...))")
    target = parse(db)
    if target.backend == "postgresql":
        from hippo.stores.postgres import PostgresStore

        return PostgresStore(target.location, **options)
    from hippo.stores.sqlite import SQLiteStore

    return SQLiteStore(target.location, **options)


def exists(db: str | os.PathLike[str]) -> bool:
    """Whether the database is there already (a server database always is: hippo creates its
    tables, never the database itself)."""
    target = parse(db)
    return target.backend != "sqlite" or target.location == ":memory:" or os.path.exists(target.location)


def discard(db: str | os.PathLike[str]) -> None:
    """Remove a database this process created and never wrote to (SQLite's files). A server
    database is left as it is: hippo did not create it."""
    target = parse(db)
    if target.backend != "sqlite" or target.location == ":memory:":
        return
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target.location + suffix):
            os.remove(target.location + suffix)


def restore(db: str | os.PathLike[str], backup: str, *, progress: "Progress | None" = None) -> "RestoreResult":
    """Check the backup file ``backup`` (made by ``Store.backup``), then put it in place of the
    database ``db``, which no process may have open (``stores/sqlite/upkeep/restore.py``)."""
    if per_agent(db):
        raise ConfigError(f"{shown(db)} names one database per agent: restore one agent's file (--agent)")
    target = parse(db)
    if target.backend == "postgresql":
        raise ConfigError(f"{shown(db)} is a PostgreSQL database: restore a pg_dump file with pg_restore "
                          "--no-owner --dbname 'postgresql://USER@HOST:PORT/DBNAME' FILE into a new, empty "
                          "database, then run hippo check on it (see the backup guide)")
    if target.location == ":memory:":
        raise ConfigError("an in-memory database cannot be restored into: name a database file (--db)")
    from hippo.stores.sqlite.upkeep import restore_file

    return restore_file(backup, target.location, progress=progress)


def create_messages_table(target: Any, name: str = "messages") -> None:
    """An application's messages table with its full-text index, in the database ``target``
    names (or an open ``sqlite3.Connection``)."""
    import sqlite3

    name = validate_table_name(name)
    if isinstance(target, sqlite3.Connection):
        from hippo.stores.sqlite.conversation import create_messages_table as create

        create(target, name)
        return
    parsed = parse(target)
    if parsed.backend == "postgresql":
        from hippo.stores.postgres.conversation import create_messages_table as create_pg

        create_pg(parsed.location, name)
        return
    from hippo.stores.sqlite.conversation import create_messages_table as create

    create(parsed.location, name)
