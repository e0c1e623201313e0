"""Running the ``hippo`` command in-process (Typer's CliRunner) on real SQLite files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner, Result

from hippo.interfaces.cli import app

Run = Callable[..., Result]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def cli(runner: CliRunner, db_path: Path) -> Run:
    """``cli("recall", "x", db=..., agent=..., embedder=..., input=...)``: one ``hippo`` invocation.

    The global options default to the test's database, agent ``alice`` and the fake embedder.
    """

    def run(*args: Any, db: Path | str | None = None, agent: str | None = "alice", embedder: str | None = "fake",
            input: str | None = None) -> Result:
        argv = ["--db", str(db or db_path)]
        if agent is not None:
            argv += ["--agent", agent]
        if embedder is not None:
            argv += ["--embedder", embedder]
        return runner.invoke(app, [*argv, *map(str, args)], input=input, env={"COLUMNS": "200"})

    return run
