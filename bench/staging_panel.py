"""Opening the staging panel with many staged changes (a bulk edit of N orders).

Measures: open_staging_panel → the first staged changes on screen, median of several runs.
Target: < 300 ms at 10,000 staged changes.
Usage: .venv/bin/python bench/staging_panel.py [changes] [runs]
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings  # noqa: E402
from agent.staging import StagingArea  # noqa: E402
from agent.stores.sqlite import SQLiteStore  # noqa: E402
from tui.app import TabletalkApp  # noqa: E402


def build(folder: Path, rows: int) -> tuple[Path, Path]:
    """A store of `rows` orders, all staged for one bulk update of their status."""
    db, staging = folder / "shop.sqlite", folder / "staging.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT, email TEXT, note TEXT)"
        )
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?, ?)",
            ((i, "delivered", f"customer{i}@example.com", "n" * (i % 50)) for i in range(rows)),
        )
    store = SQLiteStore.open(db)
    area = StagingArea(store, staging)
    area.stage_many(
        "orders", query="SELECT id FROM orders", set={"status": "cancelled"}, origin="bench"
    )
    area.close()
    store.close()
    return db, staging


def shown(app: TabletalkApp) -> bool:
    """The panel shows staged changes (the first page of the list)."""
    from tui.widgets import staging_panel

    ready = getattr(staging_panel, "panel_ready", None)
    if ready is not None:
        return bool(ready(app))
    return bool(app.query("ChangeCard"))


async def until(pilot, predicate, timeout: float = 60.0) -> None:
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > timeout:
            raise TimeoutError
        await pilot.pause(0.002)


async def measure(db: Path, staging: Path) -> float:
    from agent import paths

    paths.staging_db_path = lambda: staging  # the bench's own staging database
    store = SQLiteStore.open(db)
    app = TabletalkApp(store, Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.status.staged > 0)  # start-up read of the staging area
        await app.workers.wait_for_complete()
        await pilot.pause()
        started = time.perf_counter()
        await app.open_staging_panel()
        await until(pilot, lambda: shown(app))
        await pilot.pause()
        elapsed = time.perf_counter() - started
    store.close()
    return elapsed


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        db, staging = build(Path(tmp), count)
        times = [asyncio.run(measure(db, staging)) for _ in range(runs)]
    print(f"staged changes: {count:,}; runs: {runs}")
    print(f"open → first changes shown: median {statistics.median(times) * 1000:.0f} ms, "
          f"min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
