"""Experiences: importance, the short-term buffer, and consolidation into long-term memory."""
