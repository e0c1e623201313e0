"""Curation: the agent's feedback, links between memories, the archive, and importers."""
