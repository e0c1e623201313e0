"""A griffe extension for the API reference: the docstrings' Sphinx roles read as code.

The code's docstrings cross-reference with Sphinx roles (``:class:`~hippo.aio.AsyncMemory```,
``:meth:`for_agent```), which mkdocstrings would print as they are. Each becomes inline code: the
last part of the name with a ``~``, the whole name without, as Sphinx shows them.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|exc|obj):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
