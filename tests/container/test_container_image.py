"""The container image built with Debian's podman on a base made from Debian's packages (no registry
image can be pulled where the suite runs: scripts/container-base.sh), run, and used through its HTTP
API with a key (docs/guide/container.md). It skips, saying what failed, only where no container can
run at all."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest
from dockerfile import ROOT, last

# Base tarballs cached between runs, one per content of what the script that makes them reads.
BASE_CACHE = Path("/tmp/hippo-container-base")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class Podman:
    """Podman with its own storage and settings under ``root`` (nothing of this machine's /etc)."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        storage, engine = self.root / "storage.conf", self.root / "containers.conf"
        storage.write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{self.root}/graph"\n'
                           f'runroot = "{self.root}/run"\n', encoding="utf-8")
        engine.write_text(_engine_settings(self.root), encoding="utf-8")
        self.env = {**os.environ, "CONTAINERS_CONF": str(engine), "CONTAINERS_STORAGE_CONF": str(storage)}

    def __call__(self, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and done.returncode:
            pytest.fail(f"podman {shlex.join(args)} exited {done.returncode}:\n{done.stderr[-4000:]}")
        return done


def _engine_settings(root: Path) -> str:
    """containers.conf for a machine without systemd (cgroupfs, events to a file; health checks run on
    demand with ``podman healthcheck run``), found on a CI sandbox: its processes may not raise their
    limits (no CAP_SYS_RESOURCE), and podman's default limits (nofile 1048576) fail with "setrlimit
    RLIMIT_NOFILE: Operation not permitted", so the containers get this process's own, capped; crun
    1.8 refuses its cgroups (v1 with a cgroup2 hierarchy beside, "cgroups in hybrid mode not
    supported"), runc runs there. No container joins a bridge network (netavark would add firewall
    rules to the machine): the build uses the host's network, the server slirp4netns."""
    nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 65536)
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], 4096)
    runtime = 'runtime = "runc"\n' if shutil.which("runc") else ""
    return (f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
            f'netns = "slirp4netns"\n[engine]\n{runtime}cgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
            f'events_logfile_path = "{root}/events.log"\n[network]\nnetwork_config_dir = "{root}/networks"\n')


def _pip_reach(cert_at: str) -> tuple[list[str], list[str]]:
    """This machine's way to PyPI as build arguments and the mounts they read: a mirror, trusted
    hosts, a timeout, and the certificate authorities pip trusts (a proxy's). File indexes and
    find-links are this machine's folders, which the build cannot see: left out."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            timeout=60).stdout
    values: dict[str, str] = {}
    from_env: dict[str, str] = {}
    for line in listed.splitlines():
        match = re.match(r"^(:env:|[\w-]+)\.([\w-]+)='(.*)'$", line)
        if match:
            (from_env if match.group(1) == ":env:" else values)[match.group(2)] = match.group(3)
    values.update(from_env)  # the environment overrides the files
    args: list[str] = []
    for key, variable in (("index-url", "PIP_INDEX_URL"), ("extra-index-url", "PIP_EXTRA_INDEX_URL"),
                          ("trusted-host", "PIP_TRUSTED_HOST"), ("default-timeout", "PIP_DEFAULT_TIMEOUT")):
        kept = " ".join(v for v in values.get(key, "").split() if key in ("trusted-host", "default-timeout")
                        or v.startswith(("http://", "https://")))
        if kept:
            args += ["--build-arg", f"{variable}={kept}"]
    cert = values.get("cert") or os.environ.get("SSL_CERT_FILE")
    mounts: list[str] = []
    if cert and Path(cert).is_file():
        args += ["--build-arg", f"PIP_CERT={cert_at}"]
        mounts = ["--volume", f"{Path(cert).resolve()}:{cert_at}:ro"]
    return args, mounts


def _base_tarball() -> tuple[Path, float]:
    """The Debian base made by scripts/container-base.sh, cached by what it reads (the script, this
    machine's release and apt sources); and the seconds building it took (0 when cached)."""
    script = ROOT / "scripts" / "container-base.sh"
    inputs = [script, Path("/etc/os-release"), Path("/etc/apt/sources.list"),
              *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    key = hashlib.sha256(b"".join(p.read_bytes() for p in inputs if p.is_file())).hexdigest()[:16]
    BASE_CACHE.mkdir(parents=True, exist_ok=True)
    tarball = BASE_CACHE / f"debian-python-{key}.tar"
    with open(BASE_CACHE / ".lock", "w") as lock:  # two runs at once build it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tarball.exists():
            return tarball, 0.0
        began = time.monotonic()
        done = subprocess.run(["bash", str(script), str(tarball)], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"scripts/container-base.sh failed:\n{done.stderr[-4000:]}"
        for stale in BASE_CACHE.glob("debian-python-*.tar"):  # made from other inputs: 250 MB each
            if stale != tarball:
                stale.unlink()
        return tarball, time.monotonic() - began


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Podman]:
    for tool in ("podman", "mmdebstrap"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (scripts/test.sh installs it as root: apt-get install {tool})")
    if os.geteuid() != 0:
        pytest.skip("building the Debian base with mmdebstrap needs root here")
    engine = Podman(tmp_path_factory.mktemp("podman"))
    yield engine
    engine("rm", "--all", "--force", "--time", "0", check=False)
    engine("volume", "rm", "--all", "--force", check=False)
    engine("rmi", "--all", "--force", check=False, timeout=300)
    with open("/proc/mounts", encoding="utf-8") as mounts:  # overlay keeps its folder mounted on itself
        held = [line.split()[1] for line in mounts if line.split()[1].startswith(str(engine.root))]
    for point in reversed(held):
        subprocess.run(["umount", point], capture_output=True, timeout=60)
    shutil.rmtree(engine.root, ignore_errors=True)


def _wait_healthy(podman: Podman, name: str, seconds: float) -> None:
    """The image's own HEALTHCHECK, run on demand until it passes (no systemd timer here)."""
    deadline = time.monotonic() + seconds
    while True:
        done = podman("healthcheck", "run", name, check=False)
        if done.returncode == 0:
            return
        state = podman("inspect", "--format", "{{.State.Status}}", name, check=False).stdout.strip()
        if state != "running" or time.monotonic() > deadline:
            logs = podman("logs", name, check=False)
            pytest.fail(f"not healthy ({state}): {done.stdout}{done.stderr}\n{logs.stdout}{logs.stderr}")
        time.sleep(1)


IMAGE = "localhost/hippo-memory:test"


def _build(podman: Podman, timings: dict[str, float]) -> None:
    """The Debian base imported, a container run on it (or the skip that says why none can run
    here), then the image built on it as the Dockerfile says."""
    tarball, timings["base"] = _base_tarball()
    base = "localhost/hippo-test-base:" + tarball.stem.rsplit("-", 1)[1]
    for command in (("import", "--change", f"ENV PATH={PATH}", str(tarball), base),
                    ("run", "--rm", "--network", "none", base, "python3", "-c", "print('ran')")):
        probe = podman(*command, check=False, timeout=300)
        if probe.returncode:
            pytest.skip(f"no container can run here: `podman {shlex.join(command)}` exited {probe.returncode}: "
                        f"{probe.stderr.strip()[-1000:]}")
    began = time.monotonic()
    args, mounts = _pip_reach("/run/hippo-build/pip-ca.pem")
    podman("build", "--format", "docker", "--network", "host", "--build-arg", f"BASE={base}", *args, *mounts,
           "--tag", IMAGE, str(ROOT), timeout=1200)
    timings["build"] = time.monotonic() - began


def _store_and_recall(url: str, key: str) -> None:
    import httpx

    with httpx.Client(base_url=url, timeout=30) as client:
        health = client.get("/healthz").json()
        assert health["status"] == "ok" and health["auth"] is True
        assert client.post("/v1/agents/alice/memories", json={"content": "x"}).status_code == 401
        auth = {"Authorization": f"Bearer {key}"}
        stored = client.post("/v1/agents/alice/memories", headers=auth,
                             json={"content": "The deploy runbook lives in the ops wiki under Release."})
        assert stored.status_code == 201, stored.text
        recalled = client.post("/v1/agents/alice/memories/recall", headers=auth,
                               json={"query": "where is the runbook for deploys?"})
        assert recalled.status_code == 200 and recalled.json()["mode"] == "hybrid", recalled.text  # the model ran
        assert recalled.json()["hits"][0]["chunk"]["content"].startswith("The deploy runbook"), recalled.text
        assert client.get("/v1/agents/bob/memories", headers=auth).status_code == 403  # the key reaches alice only


@pytest.mark.install
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_image_builds_refuses_to_serve_without_a_key_and_serves_with_one(podman: Podman):
    timings: dict[str, float] = {}
    _build(podman, timings)
    image = json.loads(podman("image", "inspect", IMAGE).stdout)[0]
    config = image["Config"]
    assert config["User"] == "hippo" and config["Cmd"] == json.loads(last("CMD"))
    assert "/healthz" in " ".join(image["Healthcheck"]["Test"])  # kept: built in docker format
    assert not [e for e in config["Env"] if e.startswith(("PIP_CERT", "PIP_INDEX_URL"))]  # build arguments only

    began = time.monotonic()
    podman("volume", "create", "hippo-data")
    run = ("run", "--volume", "hippo-data:/data", "--health-interval", "disable")
    refused = podman(*run, "--rm", "--network", "none", IMAGE, check=False, timeout=120)
    assert refused.returncode != 0 and "Create a key first" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    created = podman(*run, "--rm", "--network", "none", IMAGE, "hippo", "keys", "create", "--agent", "alice", "--json")
    port = _free_port()
    podman(*run, "--detach", "--name", "hippo", "--publish", f"127.0.0.1:{port}:8000", IMAGE)
    _wait_healthy(podman, "hippo", 180)
    timings["start"] = time.monotonic() - began
    _store_and_recall(f"http://127.0.0.1:{port}", json.loads(created.stdout)["key"])
    uid = podman("exec", "hippo", "python3", "-c", "import os; print(os.getuid(), os.geteuid())").stdout.split()
    assert uid == ["10001", "10001"], uid
    top = podman("top", "hippo", "user", "args").stdout
    assert "hippo serve" in top and not re.search(r"^root\s", top, re.M), top

    began = time.monotonic()
    podman("stop", "--time", "20", "hippo", timeout=60)
    timings["stop"] = time.monotonic() - began
    state = json.loads(podman("inspect", "hippo").stdout)[0]["State"]
    assert state["Status"] == "exited" and state["ExitCode"] == 0, state  # SIGTERM: a clean exit, not a kill
    assert "Traceback" not in podman("logs", "hippo").stderr
    print("container timings (s):", {name: round(seconds, 1) for name, seconds in timings.items()})
