"""The query sanitiser: any user string becomes a list of plain words to search by.

1. URLs are stripped (noisy, FTS5-incompatible tokens);
2. hyphens split words (FTS5 reads ``word-word`` as column filter or subtraction);
3. remaining punctuation and FTS5 operators characters are removed;
4. single-character tokens are dropped;
5. what remains are lower-cased words, each searched for as itself (any of them matches).

Only word characters survive, so a store can hand the words to its full-text engine without
reading any as an operator (SQLite quotes each for FTS5: ``stores/sqlite/search.match_expression``;
PostgreSQL builds a ``tsquery``). No query syntax crosses the store port.
"""

from __future__ import annotations

import re

__all__ = ["ENGLISH_STOPWORDS", "keyword_terms"]

_URL = re.compile(r"(?:https?|ftp)://\S+|www\.\S+", re.IGNORECASE)
# Anything that is not a letter, digit or combining mark separates words; "_"
# is a word character to Python but a separator to FTS5's unicode61 tokenizer.
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
MAX_TERMS = 64

# Words that carry no meaning in a recall query. Used by recall, not by the
# conversation search, which searches every word the sanitiser keeps.
ENGLISH_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    """.split()
)


def keyword_terms(text: str, *, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """The distinct lower-cased words of ``text`` that survive sanitising, in order."""
    if not isinstance(text, str):
        return []
    text = _URL.sub(" ", text)
    seen: dict[str, None] = {}
    for token in _NON_WORD.split(text.replace("-", " ")):
        word = token.lower()
        if len(word) < 2 or word in stopwords or word in seen:
            continue
        seen[word] = None
        if len(seen) == MAX_TERMS:
            break
    return list(seen)
