"""Whole-process time of headless commands: `tabletalk --help`, `staged list`, `info`, `ask`.

Each run starts a fresh interpreter (`python -m tui.entry ...`), so every run pays its imports;
`ask` runs a one-step turn (the model answers with text) against the scripted Converse endpoint
on 127.0.0.1 (tests/support/scripted_bedrock.py), which answers at once, so its figure is
tabletalk's own cost of a turn: imports, the Bedrock client, the request, saving the conversation;
`ask --conversation` does the same turn continuing a conversation (read back from its file);
the floor (`python -c pass`) is measured in the same run, interleaved, and each command is
reported as a median, as a ratio to the floor's median, and as CPU time (user+sys, which a
loaded machine inflates far less than wall time). `--before DIR` times another source tree
(e.g. an older commit unpacked with `git archive REV | tar -x -C DIR`) in the same rounds,
interleaved, for a before/after under the same load; `--src DIR` replaces this tree.

Usage: .venv/bin/python bench/cli_startup.py [--runs N] [--src DIR] [--before DIR] [--json]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = "floor (python -c pass)"
COMMANDS: dict[str, list[str]] = {
    FLOOR: ["-c", "pass"],
    "tabletalk --help": ["-m", "tui.entry", "--help"],
    "tabletalk staged list": ["-m", "tui.entry", "staged", "list"],
    "tabletalk info": ["-m", "tui.entry", "info"],
    "tabletalk ask (one step)": ["-m", "tui.entry", "ask", "how many tables?"],
    "tabletalk ask --conversation": [
        "-m", "tui.entry", "ask", "and now?", "--conversation", "{conversation}",
    ],
}  # fmt: skip


def one_run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds from process start to exit, CPU seconds user+sys) of one child; a failing
    command is an error, not a time. CPU time moves far less than wall time with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
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
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def with_conversation(args: list[str], conversation: str) -> list[str]:
    """The command's arguments with the saved conversation's id filled in."""
    return [conversation if arg == "{conversation}" else arg for arg in args]


Medians = dict[str, dict[str, float]]
"""Per source tree, per command: {"wall": s, "cpu": s} medians."""


def measure(runs: int, sources: list[Path]) -> Medians:
    """Medians per tree and command over `runs` rounds; each round runs every command of every
    tree in turn (the floor once), so a change in load hits all of them alike."""
    sys.path.insert(0, str(ROOT))
    from tests.support.scripted_bedrock import UNSET_VARS, Reply, ScriptedBedrock

    with tempfile.TemporaryDirectory() as home, ScriptedBedrock() as endpoint:
        endpoint.responder = lambda _body: Reply(text="Four tables.")
        base = {k: v for k, v in os.environ.items() if k not in UNSET_VARS}
        base.update(endpoint.env())
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # time imports from .pyc, as installed
        envs = {}
        conversation: dict[Path, str] = {}
        for number, src in enumerate(sources):
            env = dict(base, PYTHONPATH=str(src))
            for name in ("CONFIG", "DATA", "STATE", "CACHE"):
                env[f"XDG_{name}_HOME"] = os.path.join(home, str(number), name.lower())
            envs[src] = env
            started = subprocess.run(  # the conversation `ask --conversation` continues
                [sys.executable, "-m", "tui.entry", "ask", "hello", "--json"],
                cwd=src, env=env, capture_output=True, text=True, timeout=120, check=True,
            )  # fmt: skip
            conversation[src] = json.loads(started.stdout)["conversation"]
            for args in COMMANDS.values():  # demo database, .pyc files; not counted
                one_run(with_conversation(args, conversation[src]), env, src)
        samples: dict[str, dict[str, list[tuple[float, float]]]] = {
            str(src): {name: [] for name in COMMANDS} for src in sources
        }
        for _ in range(runs):
            for name, args in COMMANDS.items():
                for src in sources[:1] if name == FLOOR else sources:
                    run_args = with_conversation(args, conversation[src])
                    samples[str(src)][name].append(one_run(run_args, envs[src], src))
    for src in sources[1:]:
        samples[str(src)][FLOOR] = samples[str(sources[0])][FLOOR]
    return {
        src: {
            name: {
                "wall": statistics.median(w for w, _ in values),
                "cpu": statistics.median(c for _, c in values),
            }
            for name, values in commands.items()
        }
        for src, commands in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--src", type=Path, default=ROOT, help="source tree to run")
    parser.add_argument(
        "--before", type=Path, help="another source tree, timed in the same rounds (before/after)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    sources = [args.src.resolve()] + ([args.before.resolve()] if args.before else [])
    medians = measure(args.runs, sources)
    if args.json:
        print(json.dumps({"runs": args.runs, "medians_s": medians}))
        return
    for src, commands in medians.items():
        floor = commands[FLOOR]["wall"]
        print(f"{args.runs} runs each, source {src} (wall median, ratio to the floor, CPU median)")
        for name, median in commands.items():
            print(
                f"  {name:<30} {median['wall'] * 1000:7.0f} ms  {median['wall'] / floor:5.2f}x floor"
                f"  cpu {median['cpu'] * 1000:5.0f} ms"
            )


if __name__ == "__main__":
    main()
