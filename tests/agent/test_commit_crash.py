"""Acceptance: a commit killed with SIGKILL at aimed moments never leaves a change both in the
table and staged, nor gone from both (harness: tests/support/commit_crash.py; the full
30 kills × 10,000 changes run is bench/commit_crash.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.support.commit_crash import run

SIZE = 2000
KILLS = 3


def test_sigkill_during_a_commit_leaves_each_change_committed_xor_staged(
    tmp_path: Path, isolated_dirs: Path
) -> None:
    result = run(tmp_path, SIZE, KILLS, dict(os.environ), fresh_process=False)
    print(result.summary())
    # Every kill was checked inside `run`; at least one must have hit a live commit, or the
    # run proved nothing.
    assert any(o.returncode == -signal.SIGKILL for o in result.outcomes), result.summary()


def test_sigkill_during_the_commit_of_a_lone_bulk_edit_leaves_each_change_committed_xor_staged(
    tmp_path: Path, isolated_dirs: Path
) -> None:
    """The same with one bulk edit alone, which is staged compact and committed as it is
    (its history is its own rows: `staging.batches`)."""
    result = run(tmp_path, SIZE, KILLS, dict(os.environ), fresh_process=False, bulk_only=True)
    print(result.summary())
    assert any(o.returncode == -signal.SIGKILL for o in result.outcomes), result.summary()
