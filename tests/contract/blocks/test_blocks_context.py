"""context(max_tokens): the blocks as a stable system-prompt section within a budget."""

from __future__ import annotations

import pytest

from hippo.core.tokens import estimate_tokens
from hippo.errors import InvalidInput


def test_blocks_render_in_key_order_with_their_sizes(mem):
    assert mem.context() == "<memory_blocks>\n</memory_blocks>"
    mem.set_memory_block("persona", "A patient tutor.", char_limit=500)
    mem.append_memory_block("human", "Name: Kris")
    section = mem.context()
    assert section == ('<memory_blocks>\n<human chars="10">\nName: Kris\n</human>\n'
                       '<persona chars="16/500">\nA patient tutor.\n</persona>\n</memory_blocks>')
    assert mem.context() == section  # stable: the same blocks, the same bytes


def test_the_budget_cuts_then_names_what_did_not_fit(mem):
    mem.set_memory_block("a_notes", "word " * 400)
    mem.set_memory_block("b_more", "other " * 400)
    section = mem.context(max_tokens=200)
    assert estimate_tokens(section) <= 200
    assert "<a_notes" in section and "…(cut)" in section and "not shown for lack of room: b_more" in section


def test_bad_budget(mem):
    for bad in (0, 49, "100", True, 10**7):
        with pytest.raises(InvalidInput):
            mem.context(max_tokens=bad)
