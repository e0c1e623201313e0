#!/usr/bin/env bash
# Set up, then run the whole test suite.
#   bash scripts/test.sh [PYTEST ARGS]           the full suite: both backends, remote, Chromium, TypeScript,
#                                                install and scale-out (CI runs this, through .ci/run)
#   bash scripts/test.sh --fast [PYTEST ARGS]    the fast tier: the core on SQLite with the fake embedder,
#                                                every test marked postgres, remote, async_api, model,
#                                                chromium, node, install or slow left out (pyproject.toml)
#   Both run on HIPPO_TEST_WORKERS pytest-xdist workers (default 2, one per core of a CI machine; each
#   has its own PostgreSQL server); -n 0 after the command runs in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
WORKERS=(-n "${HIPPO_TEST_WORKERS:-2}" --dist worksteal)
FAST="not (postgres or remote or async_api or model or chromium or node or install or slow)"
if [[ ${1:-} == --fast ]]; then
    shift
    # The fast tier needs only .venv with the test tools (set up on the first run, checked after);
    # chromium, the mem0 environment and the TypeScript client's packages are for tests it leaves out.
    bash scripts/setup.sh test
    .venv/bin/ruff check src
    .venv/bin/mypy
    exec .venv/bin/python -m pytest "${WORKERS[@]}" -m "$FAST" "$@"
fi
bash scripts/setup.sh test
# Debian's packages some tests need, installed when missing: chromium for the page tests (driven through
# Playwright, never `playwright install`), podman and mmdebstrap for the container test (tests/container).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)  # where crun cannot (cgroup v1 beside a cgroup2 hierarchy)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
if (( ${#missing[@]} )); then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "hippo: installing ${missing[*]} for the page and container tests" >&2
        { apt-get update -q && apt-get install -y -q "${missing[@]}"; } >/dev/null
    else
        echo "hippo: ${missing[*]} missing (apt-get install ${missing[*]}); the tests that need them will be skipped" >&2
    fi
fi
# The environment of bench/mem0_compare.py (mem0 is no dependency of hippo): its smoke test runs there.
bash bench/mem0-env.sh
# The TypeScript client's dependencies, from its lock file; tests/clients/test_typescript.py runs its tests.
if command -v node >/dev/null && command -v npm >/dev/null; then
    echo "hippo: npm ci in clients/typescript" >&2
    (cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
else
    echo "hippo: node is missing; the TypeScript client's tests will be skipped" >&2
fi
# Quality gates over the package: the linter and the type checker (settings in pyproject.toml).
echo "hippo: ruff check src && mypy" >&2
.venv/bin/ruff check src
.venv/bin/mypy
# PostgreSQL for the contract suite is started by the tests themselves (pgserver, no root).
exec .venv/bin/python -m pytest "${WORKERS[@]}" "$@"
