"""Without the langgraph extra, importing the integration says which extra to install, in one line."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from hippo.errors import MissingDependency
from hippo.installed import install_line


def test_missing_langgraph_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "langgraph", None)  # an import of it now fails as if not installed
    monkeypatch.setitem(sys.modules, "langgraph.store.base", None)
    monkeypatch.delitem(sys.modules, "hippo.integrations.langgraph", raising=False)
    with pytest.raises(MissingDependency, match=re.escape(install_line("langgraph"))):
        importlib.import_module("hippo.integrations.langgraph")
