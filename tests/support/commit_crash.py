"""Kill `tabletalk staged commit --all` (a real process) at aimed moments, then check that every
change is either committed and gone from staging, or not committed and still staged, as a
fresh `tabletalk staged list --json` and the table show.

Aim: the harness polls `/proc/PID/fd` until the committing process has the staging database
open (it opens it before touching the table), then, per kill, waits for one of three moments
(`AIMS`): a random delay after that open; the instant the store's write
transaction began (its rollback journal appeared); or the instant that transaction committed
(the journal vanished), when the changes are in the table but staging is not yet cleared.
Used by tests/agent/test_commit_crash.py (small) and bench/commit_crash.py (30 × 10,000).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agent import paths
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from agent.text_plural import counted

ROOT = Path(__file__).resolve().parents[2]
CREATES = 5
DELETES = 5


@dataclass
class Outcome:
    """What one kill found."""

    moment: str  # before-commit | during-apply | between-apply-and-cleanup | after-cleanup | exited
    landed: bool
    returncode: int


@dataclass
class CrashRun:
    """Results of a run: one Outcome per kill, plus the reference commit time."""

    reference_s: float
    outcomes: list[Outcome] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """Counts per moment, and how many kills left the changes in the table."""
        return {
            "kills": len(self.outcomes),
            "reference_commit_s": round(self.reference_s, 3),
            "moments": dict(Counter(o.moment for o in self.outcomes)),
            "landed": sum(o.landed for o in self.outcomes),
            "not_landed": sum(not o.landed for o in self.outcomes),
        }


class Harness:
    """A database of `size` rows with `size` staged changes, restored before each kill."""

    def __init__(
        self, root: Path, size: int, env: dict[str, str], fresh_process: bool, bulk_only: bool
    ) -> None:
        self.root = root
        self.bulk_only = bulk_only
        self.fresh_process = fresh_process
        self.env = {**env, "PYTHONPATH": str(ROOT)}
        self.db = root / "crash.sqlite"
        self.template = root / "template"
        self.template.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.db)
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, n INTEGER, note TEXT)")
        conn.executemany(
            "INSERT INTO items VALUES (?, ?, 'original')", [(i, i) for i in range(1, size + 1)]
        )
        conn.commit()
        conn.close()
        self.staging = self._stage(size)
        shutil.copy(self.db, self.template / "db")
        shutil.copy(self.staging, self.template / "staging")

    def _stage(self, size: int) -> Path:
        old = {k: os.environ.get(k) for k in self.env if k.startswith("XDG_")}
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("XDG_")})
        try:
            store = SQLiteStore.open(self.db)
            area = StagingArea(store, paths.staging_db_path())
            upto = size if self.bulk_only else size - DELETES
            area.stage_many(
                "items", query=f"SELECT id FROM items WHERE id <= {upto}", set={"note": "new"}
            )
            # Only the bulk edit: staged compact (staging.batches), committed as it is.
            for i in range(upto + 1, size + 1):
                area.stage("items", "delete", {"id": i})
            for i in range(size + 1, size + 1 + (0 if self.bulk_only else CREATES)):
                area.stage("items", "create", {"id": i}, {"n": i, "note": "created"})
            self.ids = {c.id: c for c in area.list()}
            path = area.path
            area.close()
            store.close()
            return path
        finally:
            for key, value in old.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def restore(self) -> None:
        """Put the database and the staging area back as they were before any commit."""
        for side in ("-wal", "-shm", ".commit-lock"):
            self.staging.with_name(self.staging.name + side).unlink(missing_ok=True)
            self.db.with_name(self.db.name + side).unlink(missing_ok=True)
        shutil.copy(self.template / "db", self.db)
        shutil.copy(self.template / "staging", self.staging)

    def tabletalk(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "agent", *args, "--db", str(self.db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=self.root,
        )

    def wait_until_open(self, child: subprocess.Popen[str]) -> bool:
        """Poll /proc/PID/fd until `child` has the staging database open; False if it exited."""
        fd_dir = Path(f"/proc/{child.pid}/fd")
        target = str(self.staging)
        while child.poll() is None:
            try:
                for fd in fd_dir.iterdir():
                    try:
                        if os.readlink(fd) == target:
                            return True
                    except OSError:
                        continue
            except OSError:
                pass
            time.sleep(0.001)
        return False

    def reference(self) -> float:
        """Seconds an unkilled commit takes from opening the staging database to exiting."""
        self.restore()
        child = self.tabletalk("staged", "commit", "--all")
        self.wait_until_open(child)
        started = time.monotonic()
        out, err = child.communicate(timeout=600)
        took = time.monotonic() - started
        assert child.returncode == 0, (out, err)
        assert out.startswith(f"Committed {counted(len(self.ids), 'change')}"), out
        return took

    def kill_once(self, aim: str, delay: float) -> Outcome:
        """Restore, start a commit, kill it at `aim` (see AIMS) after `delay` s; check; classify."""
        self.restore()
        child = self.tabletalk("staged", "commit", "--all")
        if self.wait_until_open(child) and self._wait_for(aim, child):
            time.sleep(delay)
            child.send_signal(signal.SIGKILL)
        child.communicate(timeout=600)
        record = self._record_left()
        landed = self.check()
        if child.returncode != -signal.SIGKILL:
            moment = "exited"
        elif record and landed:
            moment = "between-apply-and-cleanup"
        elif record:
            moment = "during-apply"
        else:
            moment = "after-cleanup" if landed else "before-commit"
        return Outcome(moment, landed, child.returncode)

    def _wait_for(self, aim: str, child: subprocess.Popen[str]) -> bool:
        """Wait for the moment `aim` names, watching the table's rollback journal (it exists
        exactly while the store's write transaction is open); False if the child exited."""
        if aim == "open":
            return True
        journal = self.db.with_name(self.db.name + "-journal")
        while not journal.exists():
            if child.poll() is not None:
                return False
            time.sleep(0.0002)
        if aim == "apply":
            return True
        while journal.exists():  # "commit": the store transaction just committed
            if child.poll() is not None:
                return False
            time.sleep(0.0002)
        return True

    def _record_left(self) -> bool:
        conn = sqlite3.connect(self.staging)
        try:
            return bool(conn.execute("SELECT count(*) FROM commits_in_progress").fetchone()[0])
        finally:
            conn.close()

    def _list(self) -> tuple[str, str]:
        """`tabletalk staged list --json`: a new process, or (faster) a new staging area opened
        in this process the way the CLI opens it (`fresh_process=False`)."""
        if self.fresh_process:
            lister = self.tabletalk("staged", "list", "--json")
            out, err = lister.communicate(timeout=600)
            assert lister.returncode == 0, err
            return out, err
        import argparse
        import io

        from agent.cli import staged

        args = argparse.Namespace(
            staged_command="list", db=str(self.db), config=None, json=True, table=None
        )
        out_io, err_io = io.StringIO(), io.StringIO()
        old = {k: os.environ.get(k) for k in self.env if k.startswith("XDG_")}
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("XDG_")})
        try:
            assert staged.run(args, out_io, err_io) == 0, err_io.getvalue()
        finally:
            for key, value in old.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return out_io.getvalue(), err_io.getvalue()

    def check(self) -> bool:
        """Each change is in the table xor still staged (a fresh `staged list`); all or none
        landed (a SQLite commit is one transaction). Returns whether they landed."""
        out, err = self._list()
        staged = {c["id"] for c in json.loads(out)}
        conn = sqlite3.connect(self.db)
        try:
            rows = {r[0]: r for r in conn.execute("SELECT id, n, note FROM items")}
        finally:
            conn.close()
        landed = set()
        for change_id, change in self.ids.items():
            row = rows.get(change.key["id"])
            if change.op == "update":
                done = row is not None and row[2] == "new"
            elif change.op == "delete":
                done = row is None
            else:
                done = row is not None and row[2] == "created"
            assert done != (change_id in staged), (change_id, change.op, done, err)
            if done:
                landed.add(change_id)
        assert landed in (set(), set(self.ids)), f"{len(landed)} of {len(self.ids)} landed"
        return bool(landed)


def run(
    root: Path,
    size: int,
    kills: int,
    env: dict[str, str],
    seed: int = 8,
    fresh_process: bool = True,
    bulk_only: bool = False,
) -> CrashRun:
    """Build the harness, time one unkilled commit, then kill `kills` commits at random delays;
    `bulk_only`: the staged changes are one bulk edit alone (no deletes, no creates)."""
    harness = Harness(root, size, env, fresh_process, bulk_only)
    reference = harness.reference()
    rng = random.Random(seed)
    result = CrashRun(reference)
    for number in range(kills):
        aim = AIMS[number % len(AIMS)]
        # After the open, anywhere in the commit; inside the store transaction, at once;
        # right after the store's COMMIT, at once.
        delay = {"open": 0.9 * reference, "apply": 0.0, "commit": 0.0}[aim]
        result.outcomes.append(harness.kill_once(aim, rng.uniform(0, delay)))
    return result


AIMS = ("open", "apply", "commit")
"""Where kills are aimed: after the process opened staging (+ random delay in [0, 0.9 × the
reference commit]); the moment the store's write transaction began; the moment that
transaction committed (its journal vanished), which is the window before staging is cleared."""
