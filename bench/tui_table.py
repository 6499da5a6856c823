"""Opening and scrolling a 1,000,000-row table in a tab (virtual table, pages read in workers).

Measures: open → first rows on screen; page-down steps; jump to the end; jump to the middle
(OFFSET fallback when rowids are not dense is measured with a sparse-key table too).
Target: first rows < 300 ms.  Usage: .venv/bin/python bench/tui_table.py [rows]
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings  # noqa: E402
from agent.stores.sqlite import SQLiteStore  # noqa: E402
from tui.app import TabletalkApp  # noqa: E402
from tui.widgets.table_tab import TableTab  # noqa: E402


def build(path: Path, rows: int) -> None:
    """`events` (dense integer keys) and `sparse` (text keys, so paging uses keyset/OFFSET)."""
    if path.exists():
        return
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT, amount REAL, note TEXT)"
        )
        conn.executemany(
            "INSERT INTO events VALUES (?, ?, ?, ?)",
            ((i, f"event {i}", i * 0.5, "x" * (i % 30)) for i in range(1, rows + 1)),
        )
        conn.execute("CREATE TABLE sparse (code TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID")
        conn.executemany(
            "INSERT INTO sparse VALUES (?, ?)", ((f"k{i:09d}", i) for i in range(rows))
        )


async def until(pilot, predicate, timeout: float = 30.0) -> float:
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > timeout:
            raise TimeoutError
        await pilot.pause(0.002)
    return time.perf_counter() - started


async def measure(path: Path, table: str) -> dict[str, float]:
    store = SQLiteStore.open(path)
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    results: dict[str, float] = {}
    async with app.run_test(size=(120, 36)) as pilot:
        await app.workers.wait_for_complete()  # start-up work (row counts, session) is done
        await pilot.pause()
        started = time.perf_counter()
        await app.open_table(table)
        results["open_table returned (s)"] = time.perf_counter() - started
        view = app.query_one(TableTab).view
        await until(pilot, lambda: 0 in view._pages)
        results["open → first rows (s)"] = time.perf_counter() - started
        await until(pilot, lambda: view.total_rows is not None)
        results["row count known (s)"] = time.perf_counter() - started
        steps = []
        for _ in range(60):
            step = time.perf_counter()
            await pilot.press("pagedown")
            await until(pilot, lambda: view.row_at(view.cursor_row)[0] is not None)
            steps.append(time.perf_counter() - step)
        results["page-down step, median (s)"] = statistics.median(steps)
        results["page-down step, max (s)"] = max(steps)
        step = time.perf_counter()
        await pilot.press("end")
        await until(pilot, lambda: view.row_at(view.cursor_row)[0] is not None)
        results["jump to last row (s)"] = time.perf_counter() - step
        step = time.perf_counter()
        view._move_to(view.row_count // 2)
        await until(pilot, lambda: view.row_at(view.cursor_row)[0] is not None)
        results["jump to middle row (s)"] = time.perf_counter() - step
        results["pages held in memory"] = len(view._pages)
    store.close()
    return results


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    path = Path(tempfile.gettempdir()) / f"tabletalk-bench-{rows}.sqlite"
    with tempfile.TemporaryDirectory() as home:
        for name in ("CONFIG", "DATA", "STATE", "CACHE"):
            os.environ[f"XDG_{name}_HOME"] = os.path.join(home, name.lower())
        build(path, rows)
        for table in ("events", "sparse"):
            print(f"{table} ({rows:,} rows):")
            for name, value in asyncio.run(measure(path, table)).items():
                print(
                    f"  {name:32} {value:.4f}"
                    if isinstance(value, float)
                    else f"  {name:32} {value}"
                )


if __name__ == "__main__":
    main()
