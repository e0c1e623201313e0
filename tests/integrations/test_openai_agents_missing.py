"""Without the openai-agents extra, importing the integration says which extra to install, in one line."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from hippo.errors import MissingDependency
from hippo.installed import install_line


def test_missing_openai_agents_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "agents", None)  # an import of it now fails as if not installed
    monkeypatch.delitem(sys.modules, "hippo.integrations.openai_agents", raising=False)
    with pytest.raises(MissingDependency, match=re.escape(install_line("openai-agents"))):
        importlib.import_module("hippo.integrations.openai_agents")
