"""Memory blocks: named blocks of text the agent keeps in its context and edits."""
