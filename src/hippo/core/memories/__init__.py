"""Raw memories: the one writer, edits, keyed items, browsing, summaries and re-embedding."""
