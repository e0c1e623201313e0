"""Moved: the vector indexes are the SQLite store's (``hippo.stores.sqlite.index``), and the
archive's 8-bit codec is every store's (``hippo.stores.vectors``). Only ``hippo.index.int8`` stays,
re-exporting that codec, until ``hippo.core.archive`` imports it from ``hippo.stores.vectors``."""
