"""Curation's rules for co-recall links, which every store's bookkeeping applies.

A link is strong from the second recall that returned both ends (``STRONG_LINK``); a link that
stays weak fades: once no recall has returned its pair for ``LINK_FADE``, it goes, and an agent
keeps at most ``WEAK_LINKS_KEPT`` weak links (the ones recalled longest ago go first). The table of
links stays bounded however many recalls an agent makes.
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["LINK_FADE", "STRONG_LINK", "WEAK_LINKS_KEPT"]

STRONG_LINK = 2.0  # a co-recall link is strong from the second recall that returned both ends
LINK_FADE = timedelta(days=30)  # a weak link no recall strengthened for this long goes
WEAK_LINKS_KEPT = 100_000  # per agent: past it, the weak links recalled longest ago go
