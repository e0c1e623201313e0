"""Compaction: a long session decayed into a summary, what fades kept as memories."""
