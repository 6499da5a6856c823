"""Benchmark: stage one update on 10,000 orders (selected by a query) and commit it, against the
floor of a single executemany UPDATE of the same rows in one transaction.

Staging goes the way bulkEdit stages (`stage_many_unless_unchanged`): orders that already have
the new status are left out in the same INSERT … SELECT, and the commit writes the others
(`--status` picks the new status; one no order has, e.g. `held`, stages all 10,000).

The floor is like-for-like with the real commit: it writes the same target file with the
journal mode and synchronous setting that `SQLiteStore`'s write connection has (read from a
store opened on the floor's copy and set explicitly on the floor's connection). For the demo
database that is journal_mode=delete (a rollback journal: each changed page's original is
copied to a -journal file first) and synchronous=FULL (the journal and the database are
fsynced at commit). The staging database costs come on top, and are counted: it is WAL with
synchronous=FULL (the WAL is fsynced at every staging transaction but the one removing landed
changes, which an interrupted-commit record covers), see agent/staging/db.py and commit.py.

Run: `.venv/bin/python bench/staging.py [--orders 100000] [--items 10000] [--repeat 5]
[--status shipped] [--json]`.
Targets: stage + commit ≤ 2× the floor (issue 15); peak memory < 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.staging import StagingArea  # noqa: E402
from agent.staging.db import open_staging_db  # noqa: E402
from agent.stores.demo import build_demo_db  # noqa: E402
from agent.stores.sqlite import SQLiteStore  # noqa: E402

NEW_STATUS = "shipped"


def selection_query(orders: int, items: int) -> str:
    """A read-only query returning exactly `items` order ids spread over the table."""
    step = max(1, orders // items)
    return f"SELECT id FROM orders WHERE id % {step} = 0 ORDER BY id LIMIT {items}"


class Clock:
    """Wall and CPU time of a block (CPU time is less disturbed by other processes)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def write_settings(conn: sqlite3.Connection) -> dict[str, str]:
    """The journal mode and synchronous setting a connection writes with."""
    journal = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    synchronous = SYNCHRONOUS[int(conn.execute("PRAGMA synchronous").fetchone()[0])]
    return {"journal_mode": journal, "synchronous": synchronous}


def store_settings(db: Path) -> dict[str, str]:
    """The settings `SQLiteStore.apply` writes `db` with (its write connection's)."""
    store = SQLiteStore.open(db)
    try:
        return write_settings(store._conn)  # noqa: SLF001 - the connection commits go through
    finally:
        store.close()


def floor_seconds(db: Path, query: str, status: str) -> Clock:
    """One executemany UPDATE of the selected rows in one transaction: the least work possible,
    on a connection set up exactly as the store's write connection (journal, synchronous)."""
    settings = store_settings(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(f"PRAGMA journal_mode={settings['journal_mode']}")
    conn.execute(f"PRAGMA synchronous={settings['synchronous']}")
    if write_settings(conn) != settings:
        raise SystemExit(f"bench failed: floor runs with {write_settings(conn)}, not {settings}")
    ids = [r[0] for r in conn.execute(query)]
    with Clock() as clock:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE orders SET status = ? WHERE id = ?", [(status, i) for i in ids])
        conn.execute("COMMIT")
    conn.close()
    return clock


def staged_seconds(
    db: Path, staging: Path, query: str, items: int, status: str
) -> tuple[Clock, Clock, int]:
    """(stage, commit) clocks of the same update through StagingArea, and how many orders it
    left out as already holding `status`; checks the rest landed."""
    store = SQLiteStore.open(db)
    area = StagingArea(store, staging)
    with Clock() as stage_clock:
        outcome = area.stage_many_unless_unchanged(
            "orders", query=query, set={"status": status}, origin="bench"
        )
    staged = len(outcome.changes)
    with Clock() as commit_clock:
        report = area.commit()
    if staged + outcome.unchanged != items or len(report.committed) != staged or report.conflicts:
        raise SystemExit(f"bench failed: staged {staged}, {outcome.unchanged} left out, {report}")
    if area.count() != 0:
        raise SystemExit("bench failed: changes left in staging after commit")
    quoted = status.replace("'", "''")
    other = store.query(
        f"SELECT count(*) AS n FROM orders WHERE id IN ({query}) AND status != '{quoted}'"
    )
    if other.rows[0]["n"] != 0:
        raise SystemExit(f"bench failed: {other.rows[0]['n']} selected orders lack the status")
    area.close()
    store.close()
    return stage_clock, commit_clock, outcome.unchanged


def peak_python_mb(db: Path, staging: Path, query: str, items: int, status: str) -> float:
    """tracemalloc's peak of Python allocations during one stage + commit, in MB."""
    tracemalloc.start()
    staged_seconds(db, staging, query, items, status)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def run(orders: int, items: int, repeat: int, status: str = NEW_STATUS) -> dict[str, Any]:
    """Build the scaled demo DB once, then time `repeat` rounds, each on fresh copies."""
    query = selection_query(orders, items)
    with tempfile.TemporaryDirectory(prefix="tabletalk-bench-") as tmp_name:
        tmp = Path(tmp_name)
        source = build_demo_db(tmp / "demo.sqlite", orders=orders)
        floors, stages, commits = [], [], []
        for round_no in range(repeat):
            floor_db = shutil.copy(source, tmp / f"floor{round_no}.sqlite")
            floors.append(floor_seconds(Path(floor_db), query, status))
            db = shutil.copy(source, tmp / f"staged{round_no}.sqlite")
            stage_clock, commit_clock, left_out = staged_seconds(
                Path(db), tmp / f"staging{round_no}.sqlite", query, items, status
            )
            stages.append(stage_clock)
            commits.append(commit_clock)
        target = store_settings(source)
        staging_conn = open_staging_db(tmp / "staging0.sqlite")  # as StagingArea opens it
        staging = write_settings(staging_conn)
        staging_conn.close()
        mem_db = shutil.copy(source, tmp / "memory.sqlite")
        peak_mb = peak_python_mb(Path(mem_db), tmp / "staging-memory.sqlite", query, items, status)
    floor = statistics.median(c.wall for c in floors)
    stage = statistics.median(c.wall for c in stages)
    commit = statistics.median(c.wall for c in commits)
    floor_cpu = statistics.median(c.cpu for c in floors)
    staged_cpu = statistics.median(s.cpu + c.cpu for s, c in zip(stages, commits, strict=True))
    return {
        "orders": orders,
        "items": items,
        "status": status,
        "left_out_unchanged": left_out,
        "repeat": repeat,
        "stage_s": round(stage, 4),
        "commit_s": round(commit, 4),
        "stage_plus_commit_s": round(stage + commit, 4),
        "floor_s": round(floor, 4),
        "ratio": round((stage + commit) / floor, 2),
        "ratio_target": 2.0,
        "floor_cpu_s": round(floor_cpu, 4),
        "stage_plus_commit_cpu_s": round(staged_cpu, 4),
        "ratio_cpu": round(staged_cpu / floor_cpu, 2),
        "target_db": target,
        "staging_db": staging,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "tracemalloc_peak_mb": round(peak_mb, 1),
        "memory_target_mb": 200,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse options, run, print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5, help="rounds; medians are reported")
    parser.add_argument("--status", default=NEW_STATUS, help="the status every order is set to")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = run(args.orders, args.items, max(1, args.repeat), args.status)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    rows = [
        ("orders in table", f"{figures['orders']:,}"),
        ("items selected", f"{figures['items']:,}"),
        (f"left out: already {figures['status']}", f"{figures['left_out_unchanged']:,}"),
        ("stage (median)", f"{figures['stage_s'] * 1000:.0f} ms"),
        ("commit (median)", f"{figures['commit_s'] * 1000:.0f} ms"),
        ("stage + commit", f"{figures['stage_plus_commit_s'] * 1000:.0f} ms"),
        ("floor: one executemany", f"{figures['floor_s'] * 1000:.0f} ms"),
        ("ratio (target ≤ 2×)", f"{figures['ratio']:.2f}×"),
        ("CPU: stage + commit / floor", f"{figures['ratio_cpu']:.2f}×"),
        (
            "target DB (store and floor)",
            "{journal_mode}, synchronous={synchronous}".format(**figures["target_db"]),
        ),
        ("staging DB", "{journal_mode}, synchronous={synchronous}".format(**figures["staging_db"])),
        ("load average (1 min)", f"{figures['load_average_1m']:.2f}"),
        ("peak RSS (target < 200 MB)", f"{figures['maxrss_mb']:.1f} MB"),
        ("tracemalloc peak", f"{figures['tracemalloc_peak_mb']:.1f} MB"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
