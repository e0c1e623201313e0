"""The missing-extra hint gives the install line that works from where hippo was installed: the
checkout's path for a local or editable install, the git URL for one from git, the published name
only for the package index (a fresh environment installed from a checkout: tests/test_install.py)."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import hippo
from hippo.installed import install_line_from


def test_a_checkout_installed_editable_gets_pip_install_e_with_its_path(tmp_path):
    origin = {"url": tmp_path.as_uri(), "dir_info": {"editable": True}}
    assert install_line_from("cli", origin) == f"pip install -e '{tmp_path}[cli]'"


def test_a_checkout_installed_as_a_copy_gets_its_path(tmp_path):
    assert install_line_from("http", {"url": tmp_path.as_uri(), "dir_info": {}}) == f"pip install '{tmp_path}[http]'"
    wheel = tmp_path / "hippo_memory-0.1.0-py3-none-any.whl"
    wheel.touch()
    assert install_line_from("ann", {"url": wheel.as_uri(), "archive_info": {}}) == f"pip install '{wheel}[ann]'"


def test_git_gets_the_url_and_the_index_the_published_name(tmp_path):
    from_git = {"url": "https://example.org/hippo.git", "vcs_info": {"vcs": "git", "commit_id": "0" * 40,
                                                                     "requested_revision": "main"}}
    assert install_line_from("mcp", from_git) == \
        "pip install 'hippo-memory[mcp] @ git+https://example.org/hippo.git@main'"
    assert install_line_from("mcp", None) == "pip install 'hippo-memory[mcp]'"
    gone = {"url": (tmp_path / "deleted").as_uri(), "dir_info": {}}  # the checkout is no more: the name
    assert install_line_from("mcp", gone) == "pip install 'hippo-memory[mcp]'"


def test_this_environment_installed_from_a_checkout_is_told_the_checkout_not_the_unpublished_name():
    recorded = json.loads(metadata.distribution("hippo-memory").read_text("direct_url.json") or "{}")
    assert recorded.get("dir_info", {}).get("editable"), "scripts/setup.sh installs hippo editable"
    checkout = Path(recorded["url"].removeprefix("file://"))
    error = hippo.MissingDependency("typer", "cli")
    assert error.message == f"typer is not installed; install it with: pip install -e '{checkout}[cli]'"
    assert "hippo-memory[" not in error.message
