"""Crash bench: SIGKILL `tabletalk staged commit --all` (a real process) 30 times on 10,000
staged changes, aimed at three moments, and check after each kill, with a fresh
`tabletalk staged list --json` process and the table, that every change is either committed
and gone from staging, or not committed and still staged (and that all or none landed).

Run: `.venv/bin/python bench/commit_crash.py [--size 10000] [--kills 30] [--seed 8] [--json]`.
How kills are aimed: tests/support/commit_crash.py (AIMS). Any violation stops the run with
an AssertionError naming the change.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.commit_crash import run  # noqa: E402

XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def main() -> None:
    """Parse the options, run the kills in a temporary folder, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--bulk-only",
        action="store_true",
        help="stage one bulk edit alone (compact, committed as it is), no deletes or creates",
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="commit-crash-") as tmp:
        root = Path(tmp)
        env = dict(os.environ)
        for var in XDG_VARS:
            env[var] = str(root / var.lower())
            os.makedirs(env[var])
        started = time.monotonic()
        result = run(
            root,
            options.size,
            options.kills,
            env,
            options.seed,
            fresh_process=True,
            bulk_only=options.bulk_only,
        )
        summary = {
            **result.summary(),
            "size": options.size,
            "wall_s": round(time.monotonic() - started, 1),
        }
    if options.json:
        print(json.dumps(summary))
        return
    print(
        f"{summary['kills']} kills on {options.size:,} staged changes: every change committed xor staged"
    )
    for key, value in summary.items():
        print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
