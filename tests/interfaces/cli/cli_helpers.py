"""Assertions shared by the CLI tests (importable as ``cli_helpers``: pytest puts this folder on the path)."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import Result


def ok(result: Result) -> Result:
    """Assert a command succeeded, showing what it said if not."""
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result


def as_json(result: Result) -> Any:
    """The command's stdout, which must be exactly one JSON document."""
    return json.loads(ok(result).stdout)
