"""How long each tier of the test suite takes (issue 49), written to bench/results/test-tiers.json.

    python bench/tiers.py fast     # times `bash scripts/test.sh --fast`: the inner loop's tier
    python bench/tiers.py full     # times `bash .ci/run`: the whole suite with its set-up, as CI runs it

The command runs from the project's root with its output shown as it comes. Recorded: the wall
time of the whole command (for `full`, set-up included), the number of tests pytest ran (passed,
failed, skipped, xfailed and xpassed in its last summary line; deselected ones left out), and the
machine's load: the mean of the one-minute load average, read every five seconds during the run.
On a shared machine that load is the part of the time that is not the suite's. A run that fails
writes nothing. The other tier's entry in the file is kept as it was.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "test-tiers.json"
TIERS = {"fast": ("bash scripts/test.sh --fast", False), "full": ("bash .ci/run", True)}
COUNTED = ("passed", "failed", "skipped", "xfailed", "xpassed")
SUMMARY = re.compile(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s")  # with -q, or without it


def tests_run(output: str) -> int:
    """The tests pytest ran, read from its last summary line ("3017 passed, 5 skipped, 1856 deselected
    in 251.3s"): deselected tests are not run and not counted."""
    lines = [m.group(1) for line in output.splitlines() if (m := SUMMARY.match(line.strip()))]
    if not lines:
        raise ValueError("no pytest summary line in the output")
    counts = {word: int(number) for number, word in re.findall(r"(\d+) (\w+)", lines[-1])}
    return sum(counts.get(word, 0) for word in COUNTED)


def run(command: str) -> tuple[int, str, float, float]:
    """Run ``command`` showing its output; its exit status, output, wall seconds and mean load."""
    loads: list[float] = [os.getloadavg()[0]]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(5.0):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    process = subprocess.Popen(command, shell=True, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace")
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        sys.stdout.write(line)
        lines.append(line)
    status = process.wait()
    seconds = time.monotonic() - start
    done.set()
    sampler.join()
    return status, "".join(lines), seconds, statistics.fmean(loads)


def record(tier: str, entry: dict[str, Any], path: Path = RESULTS) -> dict[str, Any]:
    """The results file with ``tier``'s entry replaced and today's date; the other tier kept."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"tiers": {}}
    tiers = data.get("tiers", {})
    tiers.setdefault("fast", {"command": TIERS["fast"][0], "seconds": None, "tests": None, "load_average": None})
    tiers.setdefault("full", {"command": TIERS["full"][0], "seconds": None, "with_setup": True})
    tiers[tier] = entry
    data = {"measured": datetime.date.today().isoformat(), "tiers": tiers}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tier", choices=sorted(TIERS))
    args = parser.parse_args()
    command, with_setup = TIERS[args.tier]
    status, output, seconds, load = run(command)
    if status != 0:
        print(f"tiers: `{command}` exited with {status}; nothing recorded", file=sys.stderr)
        return status
    entry: dict[str, Any] = {"command": command, "seconds": round(seconds, 1), "tests": tests_run(output),
                             "load_average": round(load, 2)}
    if with_setup:
        entry["with_setup"] = True
    record(args.tier, entry)
    print(f"tiers: {args.tier} {entry['seconds']} s, {entry['tests']} tests, load {entry['load_average']} "
          f"-> {RESULTS.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
