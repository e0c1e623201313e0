"""The embedded SQLite store."""

from hippo.stores.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
