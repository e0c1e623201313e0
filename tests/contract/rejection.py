"""What a refused call leaves: nothing. ``assert_rejected`` runs a call that must raise a hippo
error and checks that no row of the memories or the blocks changed."""

from __future__ import annotations

import pytest
from support import counts, sql

import hippo


def snapshot(db):
    return (
        counts(db),
        sql(db, "SELECT * FROM chunks ORDER BY id"),
        sql(db, "SELECT * FROM memory_blocks ORDER BY key"),
    )


def assert_rejected(db, call, error=hippo.InvalidInput):
    before = snapshot(db)
    with pytest.raises(error) as info:
        call()
    assert snapshot(db) == before
    assert isinstance(info.value, hippo.HippoError)
    assert info.value.code == error.code
    return info.value
