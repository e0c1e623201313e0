"""How much the keyword side weighs in a small set of memories (issue 47): nothing below about 300
words of text in all, its configured weight from about 3,000, a log ramp between; a memory without
a vector keeps the configured keyword weight."""

from __future__ import annotations

import pytest

from hippo.core.fusion import FEW_CHARS, MANY_CHARS, Fusion, keyword_confidence


@pytest.mark.parametrize("chars, expected", [(0, 0.0), (FEW_CHARS, 0.0), (MANY_CHARS, 1.0), (10**9, 1.0)])
def test_confidence_at_its_ends(chars, expected):
    assert keyword_confidence(chars) == expected


def test_confidence_grows_with_the_text_between():
    between = [keyword_confidence(c) for c in range(FEW_CHARS, MANY_CHARS + 1, 1_000)]
    assert between == sorted(between) and 0.0 < keyword_confidence(5_700) < 1.0
    assert keyword_confidence(int((FEW_CHARS * MANY_CHARS) ** 0.5)) == pytest.approx(0.5, abs=1e-4)


def test_trusting_keywords_scales_the_keyword_weight_alone():
    fusion = Fusion(vector_weight=0.6)
    assert fusion.trusting_keywords(1.0) is fusion
    none = fusion.trusting_keywords(0.0)
    assert none.relevance(0.5, 1.0) == pytest.approx(0.6 * 0.5)  # the keyword score counts for nothing
    assert none.relevance(0.5, 0.0) == fusion.relevance(0.5, 0.0)  # meaning keeps its scale
    half = fusion.trusting_keywords(0.5)
    assert half.relevance(0.5, 1.0) == pytest.approx(0.6 * 0.5 + 0.2 * 1.0)
    # A memory with no vector is known by its words alone: it keeps the configured keyword weight.
    assert none.relevance(None, 1.0) == pytest.approx(0.4) == fusion.relevance(None, 1.0)
    assert none.trusting_keywords(0.0).relevance(None, 1.0) == pytest.approx(0.4)
    # An embedder that does not read meaning keeps its keywords.
    assert Fusion(vector_weight=0.6, meaning=False).trusting_keywords(0.0).relevance(0.5, 1.0) == pytest.approx(0.7)


def test_the_setting_is_a_boolean(tmp_path):
    import hippo
    from hippo.errors import ConfigError

    with pytest.raises(ConfigError, match="keyword_trust"):
        hippo.open(tmp_path / "m.db", embedder="fake", keyword_trust="yes")
    assert not (tmp_path / "m.db").exists()
    with hippo.open(tmp_path / "m.db", embedder="fake", keyword_trust=True) as mem:
        assert mem.settings.keyword_trust is True
