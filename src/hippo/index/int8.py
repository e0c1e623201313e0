"""Moved to :mod:`hippo.stores.vectors`; kept until ``hippo.core.archive`` imports it from there."""

from hippo.stores.vectors import decode_int8, encode_int8

__all__ = ["decode_int8", "encode_int8"]
