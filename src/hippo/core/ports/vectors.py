"""The archive's 8-bit vectors: the bytes every store keeps for an archived chunk, and the core
reads back to compare archived memories with a forget's text.

A vector is kept as 8-bit codes with one float32 scale where a quarter of the float32 size will do.
"""

from __future__ import annotations

import numpy as np

__all__ = ["decode_int8", "encode_int8", "quantize"]


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and per-row scales with ``codes * scale ≈ vectors``."""
    vectors = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    codes = np.empty(vectors.shape, dtype=np.int8)
    scales = np.zeros(len(vectors), dtype=np.float32)
    for start in range(0, len(vectors), 65_536):  # float32 temporaries of a block, not of a million rows
        block = vectors[start:start + 65_536]
        top = np.abs(block).max(axis=1) if block.size else np.zeros(len(block), dtype=np.float32)
        scales[start:start + 65_536] = top / 127
        safe = np.where(top > 0, top / 127, 1).astype(np.float32)
        codes[start:start + 65_536] = np.clip(np.rint(block / safe[:, None]), -127, 127)
    return codes, scales


def encode_int8(vector: np.ndarray) -> bytes:
    """One vector as stored where a quarter of the float32 size will do (the archive): its scale as
    a little-endian float32, then its int8 codes."""
    codes, scales = quantize(np.asarray(vector, dtype=np.float32).reshape(1, -1))
    return scales.astype("<f4").tobytes() + codes.tobytes()


def decode_int8(blobs: list[bytes], dimension: int) -> np.ndarray:
    """The approximate float32 rows of :func:`encode_int8` blobs (each of ``dimension`` codes)."""
    if not blobs:
        return np.zeros((0, dimension), dtype=np.float32)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), dimension + 4)
    scales = raw[:, :4].copy().view("<f4").reshape(-1)
    return raw[:, 4:].view(np.int8).astype(np.float32) * scales[:, None]
