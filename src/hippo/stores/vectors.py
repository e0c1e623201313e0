"""How vectors are stored as bytes where a store keeps them whole.

A vector is kept as little-endian float32 bytes where a store keeps it whole (SQLite's chunks,
windows and short-term buffer). PostgreSQL keeps live vectors in pgvector's own type. The 8-bit
copy every store's archive keeps is the core's format (:mod:`hippo.core.ports.vectors`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["decode_vector", "encode_vector", "split"]


def split(vector: np.ndarray, *, windows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's vectors as its own vector (the first row) and its later windows (maybe none; at most
    ``windows`` - 1 of them when a store keeps no more)."""
    matrix = np.atleast_2d(np.asarray(vector, dtype=np.float32))
    return matrix[0], matrix[1:windows]


def encode_vector(vector: np.ndarray) -> bytes:
    """Little-endian float32 bytes, the on-disk format of every vector SQLite keeps whole."""
    return np.asarray(vector, dtype="<f4").tobytes()


def decode_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")
