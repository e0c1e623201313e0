"""compose.yaml, the Dockerfile and .dockerignore read, without a container engine: that they agree
with each other and with hippo's settings (the image itself: test_container_image.py)."""

from __future__ import annotations

import json
import re

import pytest
from dockerfile import ROOT, instructions, last


def _compose() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))


def test_the_dockerfile_serves_as_a_user_with_the_extras_and_a_health_check():
    steps = instructions()
    assert steps[0] == ("ARG", "BASE=python:3.12-slim") and ("FROM", "${BASE}") in steps
    assert any(word == "RUN" and '[local,cli,http,mcp,postgres]"' in args for word, args in steps)
    user = last("USER")
    created = [args for word, args in steps if word == "RUN" and re.search(rf"useradd .* {user} &&", args)]
    assert user not in ("root", "0") and created, user
    assert "hippo prepare" in [args for word, args in steps if word == "RUN"]  # the model checked at build time
    assert "/healthz" in last("HEALTHCHECK")
    assert json.loads(last("CMD")) == ["hippo", "serve", "--host", "0.0.0.0", "--port", "8000"]
    assert last("EXPOSE") == "8000"
    # An image must not keep this machine's way to PyPI: the pip settings are build arguments only.
    assert not [args for word, args in steps if word == "ENV" and re.search(r"PIP_(INDEX|CERT|TRUSTED|EXTRA)", args)]


def test_the_build_context_holds_only_what_the_dockerfile_copies():
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0] == "*", "the context is an allowlist: everything out, then what the image needs back in"
    allowed = {line[1:] for line in lines if line.startswith("!")}
    copied = {source for word, args in instructions() if word == "COPY" for source in args.split()[:-1]}
    assert copied == allowed
    assert all((ROOT / name).exists() for name in copied)


def test_compose_runs_hippo_on_postgresql_with_pgvector_once_the_database_is_healthy():
    from hippo.config import Settings

    services = _compose()["services"]
    db, hippo = services["db"], services["hippo"]
    assert db["image"] == "pgvector/pgvector:pg16"
    assert hippo["build"] == "." and hippo["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    # the hippo service checks itself as the image does, runs the image's command on its port
    assert hippo["healthcheck"]["test"] == ["CMD", *json.loads(last("HEALTHCHECK").split(" CMD ", 1)[1])]
    assert hippo["command"] == json.loads(last("CMD"))
    assert hippo["ports"] == [f"{last('EXPOSE')}:{last('EXPOSE')}"]
    # HIPPO_DB is the setting hippo reads (Settings.db), a URL of the db service's user and database
    assert "db" in {f.name for f in Settings.__dataclass_fields__.values()}
    url = hippo["environment"]["HIPPO_DB"]
    env = db["environment"]
    match = re.fullmatch(r"postgresql://(\w+):(\$\{HIPPO_DB_PASSWORD:\?[^}]*\})@db:5432/(\w+)", url)
    assert match, url
    assert match.group(1) == env["POSTGRES_USER"] and match.group(3) == env["POSTGRES_DB"]
    assert env["POSTGRES_PASSWORD"].startswith("${HIPPO_DB_PASSWORD:?")  # no default password
    volume = db["volumes"][0].split(":")
    assert volume[1] == "/var/lib/postgresql/data" and volume[0] in _compose()["volumes"]


def test_the_test_set_up_installs_the_container_tools():
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "missing+=(podman)" in script and "missing+=(mmdebstrap)" in script
