"""Every Python block of the README runs exactly as written, in a fresh folder, with the real local model."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_there_are_blocks_to_run():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_a_python_block_runs_as_written(number, tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnxruntime")
    monkeypatch.chdir(tmp_path)
    script = tmp_path / f"block{number}.py"
    script.write_text(BLOCKS[number], encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    for line in BLOCKS[number].splitlines():  # every "print(...)  # output" comment is what it prints
        shown = re.match(r"\s*print\(.*\)\s+# (.+)$", line)
        if shown and "..." not in shown.group(1) and "(" not in shown.group(1):
            expected = shown.group(1).split(" (")[0].strip()
            assert any(out.startswith(expected) for out in printed.splitlines()), line
