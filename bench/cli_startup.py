"""Whole-process time of headless commands: `tabletalk --help`, `staged list`, `info`, `ask`.

Each run starts a fresh interpreter (`python -m tui.entry ...`), so every run pays its imports;
`ask` runs a one-step turn (the model answers with text) against the scripted Converse endpoint
on 127.0.0.1 (tests/support/scripted_bedrock.py), which answers at once, so its figure is
tabletalk's own cost of a turn: imports, the boto3 client, the request, saving the conversation;
the floor (`python -c pass`) is measured in the same run, interleaved, and each command is
reported as a median and as a ratio to the floor's median. `--src DIR` runs another source
tree (e.g. an older commit unpacked with `git archive REV | tar -x -C DIR`) for before/after.

Usage: .venv/bin/python bench/cli_startup.py [--runs N] [--src DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS: dict[str, list[str]] = {
    "floor (python -c pass)": ["-c", "pass"],
    "tabletalk --help": ["-m", "tui.entry", "--help"],
    "tabletalk staged list": ["-m", "tui.entry", "staged", "list"],
    "tabletalk info": ["-m", "tui.entry", "info"],
    "tabletalk ask (one step)": ["-m", "tui.entry", "ask", "how many tables?"],
}


def one_run(args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from process start to exit; a failing command is an error, not a time."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed


def measure(runs: int, src: Path) -> dict[str, float]:
    """Median seconds per command over `runs` interleaved rounds."""
    sys.path.insert(0, str(ROOT))
    from tests.support.scripted_bedrock import UNSET_VARS, Reply, ScriptedBedrock

    with tempfile.TemporaryDirectory() as home, ScriptedBedrock() as endpoint:
        endpoint.responder = lambda _body: Reply(text="Four tables.")
        env = {k: v for k, v in os.environ.items() if k not in UNSET_VARS}
        env.update(endpoint.env())
        for name in ("CONFIG", "DATA", "STATE", "CACHE"):
            env[f"XDG_{name}_HOME"] = os.path.join(home, name.lower())
        env["PYTHONPATH"] = str(src)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # time imports from .pyc, as installed
        for args in COMMANDS.values():  # demo database, .pyc files; not counted
            one_run(args, env, src)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(runs):
            for name, args in COMMANDS.items():
                times[name].append(one_run(args, env, src))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--src", type=Path, default=ROOT, help="source tree to run")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    medians = measure(args.runs, args.src.resolve())
    floor = medians["floor (python -c pass)"]
    if args.json:
        print(json.dumps({"runs": args.runs, "src": str(args.src), "medians_s": medians}))
        return
    print(f"{args.runs} runs each, source {args.src}")
    for name, median in medians.items():
        print(f"  {name:<26} {median * 1000:7.0f} ms  {median / floor:5.2f}x floor")


if __name__ == "__main__":
    main()
