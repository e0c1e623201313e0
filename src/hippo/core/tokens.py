"""Token counts: a real tokenizer where a budget is a contract, an estimate where it is a guide.

:func:`count_tokens` uses the word-piece tokenizer of the local model (``tokenizers``, in the
``local`` extra: what hippo installs by default); without it, the estimate. Capture windows,
surfacing budgets and compaction count with it. :func:`estimate_tokens` (four characters a token)
is what tool results and the blocks' prompt section budget by: cheap, and never called per word.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, Sequence

from hippo.core.facts.offline import non_latin_share
from hippo.errors import ConfigError, MissingDependency

__all__ = ["count_tokens", "estimate_tokens", "tokenizer_name"]


def estimate_tokens(value: Any) -> int:
    """About four characters of text (or of compact JSON) per token, at least one."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return max(1, -(-len(text) // 4))


_ESTIMATE: tuple[str, Callable[[Sequence[str]], list[int]]] = (
    "estimate (4 characters a token)", lambda texts: [estimate_tokens(t) for t in texts])


@lru_cache(maxsize=1)
def _counter() -> tuple[str, Callable[[Sequence[str]], list[int]]]:
    try:
        from hippo.providers.local import count_tokens as word_pieces

        word_pieces(["probe"])
        return "all-MiniLM-L6-v2 word pieces", word_pieces
    except MissingDependency:  # the local extra is not installed: the estimate stands in
        return _ESTIMATE
    except ConfigError:
        raise  # an installed tokenizer other than the one hippo pins: said, not estimated around
    except Exception:  # the tokenizers library fails to load: the estimate too
        return _ESTIMATE


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Tokens of each text (0 for an empty one). The word-piece vocabulary reads a Thai or Chinese
    word as one unknown token, so a text mostly in another script counts at least the estimate: a
    budget must not be overrun by what the vocabulary cannot see."""
    counts = _counter()[1](list(texts))
    return [0 if not t else max(n, estimate_tokens(t)) if non_latin_share(t) > 0.5 else n
            for n, t in zip(counts, texts)]


def tokenizer_name() -> str:
    """What :func:`count_tokens` counts with."""
    return _counter()[0]
