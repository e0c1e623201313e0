"""The documentation beside the code: the site builds with no warning, offline, and no link is broken
(README.md, NOTES.md and every page of docs/, anchors included).

The pages' Python and console blocks run in tests/test_readme.py, with the README's.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "NOTES.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def test_the_site_builds_strict_with_no_warning(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs and mkdocstrings are in the dev extra")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "WARNING" not in said, said
    assert (site / "reference" / "memory" / "index.html").is_file()
    for page in site.rglob("*.html"):  # a page read offline loads nothing from the network
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"((?:https?:)?//[^\"]+)\"", html)
        assert not remote, (page.relative_to(site), remote)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and mkdocs both make it, for the plain headings these pages use."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # a link written inside inline code is an example, not a link
    return [m.group(1) for m in LINK.finditer(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_and_heading(page):
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.relative_to(ROOT)}: {target} names no file"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file), f"{page.relative_to(ROOT)}: {target} names no heading"


def test_the_link_check_reads_links_and_headings():
    assert slug("What a recall writes, and when") == "what-a-recall-writes-and-when"
    assert slug("Forgetting: `forget_memory`") == "forgetting-forget_memory"
    assert links(ROOT / "README.md"), "the README links to its documentation pages"
