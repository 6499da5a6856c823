"""Staged changes are on disk when `stage` returns: another process sees them, SIGKILL loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]

STAGE_AND_HANG = """
import sys, time
from pathlib import Path
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
area = StagingArea(SQLiteStore.open(sys.argv[1]), Path(sys.argv[2]))
area.stage("orders", "update", {"id": 9}, {"status": "shipped"}, origin="mcp")
area.stage_many("orders", keys=[{"id": 10}, {"id": 11}], delete=True, origin="mcp")
print("staged", flush=True)
if sys.argv[3] == "hang":
    time.sleep(60)
"""


def run_child(db: Path, staging: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", STAGE_AND_HANG, str(db), str(staging), mode],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def test_another_process_sees_staged_changes(demo_path: Path, tmp_path: Path) -> None:
    staging = tmp_path / "staging.sqlite"
    child = run_child(demo_path, staging, "exit")
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0 and out.strip() == "staged"
    area = StagingArea(SQLiteStore.open(demo_path), staging)
    changes = area.list()
    assert [(c.op, c.key) for c in changes] == [
        ("update", {"id": 9}),
        ("delete", {"id": 10}),
        ("delete", {"id": 11}),
    ]
    assert {c.origin for c in changes} == {"mcp"}


def test_sigkill_right_after_staging_loses_nothing(demo_path: Path, tmp_path: Path) -> None:
    staging = tmp_path / "staging.sqlite"
    child = run_child(demo_path, staging, "hang")
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "staged"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    area = StagingArea(SQLiteStore.open(demo_path), staging)
    assert area.count() == 3
    assert area.commit().ok
    assert area.store.get_item("orders", {"id": 9})["status"] == "shipped"
    assert area.store.get_item("orders", {"id": 10}) is None
