"""How fast ``hippo`` starts (issue 36): ``hippo --help`` and a warm ``hippo recall``.

Every timed call is a new process, as a shell runs it: the ``hippo`` script beside this
interpreter (``python -c`` running its entry point when there is none), with bytecode caches
allowed (PYTHONDONTWRITEBYTECODE unset) and, after one untimed call of each, the model files in
the OS cache: "warm". The database, in a temporary folder, holds a few memories stored with the
embedder of ``--embedder`` (the default local model). The calls run interleaved, round after
round:

- baseline: ``python -c pass``, the interpreter's own start, in the same run;
- ``hippo --help``;
- ``hippo recall QUERY`` (a table) and ``hippo recall QUERY --json``;
- ``hippo --embedder none recall QUERY``: the same recall by keyword, without the model, so that
  the model's share (its runtime's import, loading it, one embedding) is the difference.

Reported: median and p95 of the wall time, and the median CPU time (user + system, the child's
rusage), which another process on the machine disturbs less than the wall clock. ``--imports``
adds what a recall imports, from ``python -X importtime``: the cumulative time of each top-level
package it loads.

    python bench/cli_start.py [--runs 20] [--embedder local] [--imports] [--json]
    python bench/cli_start.py --smoke          # 2 rounds, the fake embedder: for the test suite
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NOTES = ["We chose SQLite over PostgreSQL for the prototype", "The user's name is Ada",
         "Deploys happen on Fridays only", "The staging database lives on db-2"]
QUERY = "which database did we pick?"
TARGETS = {"help": 0.3, "recall": 0.5}  # seconds, issue 36


def hippo_command() -> list[str]:
    script = Path(sys.executable).with_name("hippo")
    return [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from hippo.interfaces.command import main; main()"]


def environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["HIPPO_CONFIG"] = str(folder / "no-such-hippo.toml")
    return env


def calls(db: Path, embedder: str) -> dict[str, list[str]]:
    hippo = hippo_command()
    base = [*hippo, "--db", str(db), "--agent", "bench", "--embedder", embedder]
    return {
        "baseline": [sys.executable, "-c", "pass"],
        "help": [*hippo, "--help"],
        "recall": [*base, "recall", QUERY],
        "recall --json": [*base, "recall", QUERY, "--json"],
        "recall, no model": [*hippo, "--db", str(db), "--agent", "bench", "--embedder", "none", "recall", QUERY],
    }


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one call (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imports(argv: list[str], env: dict[str, str], cwd: Path, top: int = 14) -> list[tuple[str, float]]:
    """The top-level packages one call imports, by cumulative import time (ms), largest first."""
    command = argv[1:] if argv[0] == sys.executable else argv  # the script runs under this interpreter
    done = subprocess.run([sys.executable, "-X", "importtime", *command], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    total: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if name.startswith(" ") and not name.startswith("  "):  # a top-level import of the run
            total[name.strip().split(".")[0]] += int(cumulative) / 1000
    return sorted(total.items(), key=lambda item: -item[1])[:top]


def summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls = sorted(w for w, _ in samples)
    return {"wall_p50_s": round(statistics.median(walls), 3),
            "wall_p95_s": round(walls[min(len(walls) - 1, int(0.95 * len(walls)))], 3),
            "cpu_p50_s": round(statistics.median(c for _, c in samples), 3), "runs": len(samples)}


def run(runs: int, embedder: str, with_imports: bool) -> dict[str, Any]:
    import hippo

    with tempfile.TemporaryDirectory(prefix="hippo-cli-start-") as tmp:
        folder = Path(tmp)
        db = folder / "bench.db"
        with hippo.open(db, agent_id="bench", embedder=embedder) as mem:
            mem.store_memories(NOTES)
        env, argvs = environment(folder), calls(db, embedder)
        for argv in argvs.values():  # untimed: bytecode written, model files in the OS cache
            timed(argv, env, folder)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in argvs}
        for _ in range(runs):
            for name, argv in argvs.items():
                samples[name].append(timed(argv, env, folder))
        result: dict[str, Any] = {name: summary(found) for name, found in samples.items()}
        if with_imports:
            result["recall imports (ms, cumulative)"] = dict(imports(argvs["recall"], env, folder))
            result["help imports (ms, cumulative)"] = dict(imports(argvs["help"], env, folder))
    result["embedder"] = embedder
    result["load_average"] = round(os.getloadavg()[0], 2)
    return result


def print_table(result: dict[str, Any]) -> None:
    base = result["baseline"]["wall_p50_s"]
    print(f"embedder {result['embedder']}; load average {result['load_average']} at the end")
    print("| call | wall p50 | wall p95 | CPU p50 | wall p50 − baseline | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in ("baseline", "help", "recall", "recall --json", "recall, no model"):
        row = result[name]
        target = TARGETS.get(name)
        print(f"| {name} | {row['wall_p50_s']:.3f} s | {row['wall_p95_s']:.3f} s | {row['cpu_p50_s']:.3f} s | "
              f"{row['wall_p50_s'] - base:+.3f} s | {f'{target} s' if target else ''} |")
    for key in ("recall imports (ms, cumulative)", "help imports (ms, cumulative)"):
        if key in result:
            print(f"\n{key}: " + ", ".join(f"{name} {ms:.0f}" for name, ms in result[key].items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--imports", action="store_true", help="also list what a recall imports")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="2 rounds with the fake embedder")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs, args.embedder = 2, "fake"
    result = run(args.runs, args.embedder, args.imports)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
