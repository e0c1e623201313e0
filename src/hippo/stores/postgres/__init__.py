"""PostgreSQL with pgvector: the store for several servers on one database (the ``postgres`` extra)."""

from hippo.errors import missing_extra

try:
    from hippo.stores.postgres.store import PostgresStore
except ImportError as exc:  # psycopg, psycopg_pool or pgvector missing: name the extra, in one line
    raise (missing_extra(exc) or exc) from None

__all__ = ["PostgresStore"]
