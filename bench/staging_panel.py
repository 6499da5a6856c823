"""Opening the staging panel with many staged changes (a bulk edit of N orders).

Measures what a person waits for: ctrl+s pressed → the first frame the app sends to the
terminal that shows the first staged change (its row in the list). Every frame is rendered to
text to look for that row; the time spent looking is subtracted. Also measured, in the same
app and the same run: the floor (a key typed in the composer → its frame), and the main
thread's CPU time over the open (less sensitive to a busy machine than wall time).

Target: < 300 ms at 10,000 staged changes.
Usage: .venv/bin/python bench/staging_panel.py [counts, default 1,1000,10000] [runs, default 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from textual import events  # noqa: E402

from agent.config import Settings  # noqa: E402
from agent.staging import StagingArea  # noqa: E402
from agent.stores.sqlite import SQLiteStore  # noqa: E402
from tui.app import TabletalkApp  # noqa: E402

SIZE = (120, 36)
POLL = 0.002
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]|\x1b\][^\x07]*\x07|\x1b\\")


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


class FrameWatch:
    """Wraps the app's display: notes when a frame holding `marker` is sent to the terminal."""

    def __init__(self, app: TabletalkApp) -> None:
        self.console = Console(width=SIZE[0], force_terminal=True, color_system="truecolor")
        self.marker: str | None = None
        self.frames = 0
        self.seen_at: float | None = None
        self.looking = 0.0
        """Seconds spent rendering frames to text, before the marker was seen."""
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if renderable is not None and self.seen_at is None and self.marker is not None:
                at = time.perf_counter()
                self.frames += 1
                if self.marker == "" or self.marker in self.text(renderable):
                    self.seen_at = at
                self.looking += time.perf_counter() - at
            original(screen, renderable)

        app._display = display  # type: ignore[method-assign]

    def text(self, renderable: Any) -> str:
        return ESCAPES.sub("", "".join(s.text for s in self.console.render(renderable)))

    def expect(self, marker: str) -> None:
        """Look for `marker` in the next frames ("" = any frame)."""
        self.marker, self.seen_at, self.looking, self.frames = marker, None, 0.0, 0


async def wait_for(condition: Callable[[], bool], limit: float = 60.0) -> None:
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > limit:
            raise TimeoutError("condition not met")
        await asyncio.sleep(POLL)


async def key_to_frame(
    app: TabletalkApp, watch: FrameWatch, key: str, marker: str
) -> tuple[float, float]:
    """Seconds (wall, main-thread CPU) from `key` posted to the first frame holding `marker`."""
    watch.expect(marker)
    started, cpu = time.perf_counter(), time.thread_time()
    app.post_message(events.Key(key, key if len(key) == 1 else None))
    await wait_for(lambda: watch.seen_at is not None)
    assert watch.seen_at is not None
    used = time.thread_time() - cpu - watch.looking
    return watch.seen_at - started - watch.looking, used


async def measure(db: Path, staging: Path) -> dict[str, float]:
    from agent import paths

    paths.staging_db_path = lambda: staging  # the bench's own staging database
    store = SQLiteStore.open(db)
    app = TabletalkApp(store, Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        watch = FrameWatch(app)
        await wait_for(lambda: app.status.staged > 0)  # start-up read of the staging area
        await app.workers.wait_for_complete()
        await pilot.pause()
        floor, _ = await key_to_frame(app, watch, "x", "")
        await pilot.pause()
        await pilot.press("backspace")
        await pilot.pause()
        opened, cpu = await key_to_frame(app, watch, "ctrl+s", "orders id=0 ")
        frames = watch.frames
        await app.workers.wait_for_complete()
    store.close()
    return {"open": opened, "cpu": cpu, "floor": floor, "frames": frames}


def figures(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"{name} median {statistics.median(ms):.0f} ms (min {min(ms):.0f}, max {max(ms):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Staging panel open time: ctrl+s to the first frame showing a change."
    )
    parser.add_argument(
        "counts", nargs="?", default="1,1000,10000", help="staged changes, comma-separated"
    )
    parser.add_argument("runs", nargs="?", type=int, default=5, help="runs per count (default 5)")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    runs: int = args.runs
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for count in counts:
        with tempfile.TemporaryDirectory() as tmp:
            db, staging = build(Path(tmp), count)
            results = [asyncio.run(measure(db, staging)) for _ in range(runs)]
        opened = [r["open"] for r in results]
        floor = [r["floor"] for r in results]
        ratio = statistics.median(o / f for o, f in zip(opened, floor, strict=True))
        print(
            f"{count:,} staged changes, {runs} runs: ctrl+s → first change painted: "
            f"{figures('', opened).strip()}; main-thread CPU "
            f"{figures('', [r['cpu'] for r in results]).strip()}; floor (a typed key → its "
            f"frame) {figures('', floor).strip()}; open/floor median ×{ratio:.1f}"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
