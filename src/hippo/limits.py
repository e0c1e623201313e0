"""Every bound hippo puts on what a caller hands it, in one table.

Validation, the tools, MCP, the CLI and the HTTP models read their limits
here, so a limit is changed in one place and every surface agrees. The text
limits are the defaults of the matching settings (``max_content_chars``,
``max_query_chars``); the rest are fixed.
"""

from __future__ import annotations

CONTENT_CHARS = 32_000  # a memory, a fact text, a block value (Settings.max_content_chars)
QUERY_CHARS = 4_000  # a recall query, a forget description (Settings.max_query_chars)
RESULT_LIMIT = 1_000  # hits, forgotten chunks or listed items in one call
BROWSE_OFFSET = 100_000_000  # how deep a browse pages (Memory.browse_memories' offset)
METADATA_BYTES = 16_384  # a chunk's metadata as UTF-8 JSON
NAME_CHARS = 256  # a message's id or speaker, an experience's user, room or task id
ITEM_KEY_CHARS = 1_024  # the key of a keyed memory (Memory.put_item, the LangGraph store)
NESTING = 32  # levels of objects and arrays in metadata, tool arguments or an imported record
JSON_BYTES = 1_000_000  # one JSON document parsed from text: tool arguments, one imported line
IMPORT_FILE_BYTES = 128_000_000  # one file an importer reads whole: a mem0 or Letta export, a JSONL graph, a note
INTEGER = 2**63 - 1  # the largest magnitude of an integer anywhere (SQLite's INTEGER)
BLOCK_CHAR_LIMIT = 1_000_000  # the largest character limit a block may be given
CONTEXT_TOKENS = (50, 1_000_000)  # the token budget of the blocks' prompt section (Memory.context)
SHORT_TERM_SIZE = (1, 100_000)  # the short-term buffer's capacity per agent (Settings.short_term_size)
EMBED_BATCH = 10_000  # chunks one batch of a re-embedding reads and embeds (Memory.reembed's batch_size)
SESSION_ITEMS = 10_000  # items one call adds to a session's history (Memory.add_session_items)
