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
# The page tests drive Debian's chromium through Playwright (never `playwright install`).
if ! command -v chromium >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "hippo: installing chromium for the page tests" >&2
        { apt-get update -q && apt-get install -y -q chromium; } >/dev/null
    else
        echo "hippo: chromium is missing (apt-get install chromium); the page tests will be skipped" >&2
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
