"""Keeps the app's view of the staging area fresh, and runs staging operations on workers.

Polling is cheap: every tick compares `count()` and the recorded conflicts' stamp (a commit in
another process that found conflicts changes no count); the full list and the conflicts are read
only when either moved, after the app's own operations, and every few ticks (to catch edits in
place).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from textual.app import App

from agent.errors import TabletalkError
from tui.messages import StagingChanged

FULL_REFRESH_EVERY = 8
"""Ticks between full re-reads even when the count did not move."""


class StagingWatch:
    """Owns the app's StagingArea (opened on first use) and posts StagingChanged."""

    def __init__(
        self,
        app: App[Any],
        store: Any,
        *,
        poll_seconds: float = 2.0,
        keep: Callable[[], Any] | None = None,
    ) -> None:
        self.app = app
        self.keep = keep
        """Gives the history retention when the database opens (importing staging only then)."""
        self._opening = threading.Lock()
        self.store = store
        self.poll_seconds = poll_seconds
        self._area: Any | None = None
        self._last_count: int | None = None
        self._last_stamp: Any = None
        self._ticks = 0

    @property
    def area(self) -> Any:
        """The StagingArea for the app's store (shared staging database), opened once."""
        with self._opening:
            if self._area is None:
                from agent.staging import StagingArea

                self._area = StagingArea(self.store, keep=self.keep() if self.keep else None)
            return self._area

    def start_on_worker(self) -> bool:
        """From a worker thread: open the staging database, read it, and start polling.

        The app calls it before the session opens its own. An error is a notice and False;
        the app runs on without a staging view.
        """
        try:
            _ = self.area
        except TabletalkError as exc:
            self.app.call_from_thread(
                self.app.notify, exc.render(), title=exc.title, severity="error", markup=False
            )
            return False
        self.app.call_from_thread(self._begin_polling)
        return True

    def _begin_polling(self) -> None:
        """On the app thread, once the database is open: read it now, then poll."""
        self.refresh_now()
        if self.poll_seconds > 0:
            self.app.set_interval(self.poll_seconds, self._tick, name="staging-poll")

    def _tick(self) -> None:
        self._ticks += 1
        self.app.run_worker(
            self._check, thread=True, exit_on_error=False, group="staging-poll", exclusive=True
        )

    def _check(self) -> None:
        count, stamp = self.area.count(), self.area.conflict_stamp()
        moved = count != self._last_count or stamp != self._last_stamp
        if moved or self._ticks % FULL_REFRESH_EVERY == 0:
            self._read()
        self._tell()

    def _read(self) -> None:
        self._last_stamp = self.area.conflict_stamp()  # first: a record written after is seen
        changes = self.area.list()
        conflicts = self.area.conflicts()
        self._last_count = len(changes)
        self.app.post_message(StagingChanged(changes, conflicts))
        self._tell()

    def _tell(self) -> None:
        """Show, from a worker, what the staging area has to say (an interrupted commit it
        settled, a damaged or replaced file it recovered or reopened)."""
        for notice in self.area.take_notices():
            self.app.call_from_thread(
                self.app.notify, notice, title="Staging", severity="warning", markup=False
            )

    def refresh_now(self) -> None:
        """Re-read the staged changes now (after a turn, a commit, a reject)."""
        self.app.run_worker(self._read, thread=True, exit_on_error=False, group="staging-read")

    def run(
        self,
        job: Callable[[Any], Any],
        *,
        done: Callable[[Any], None] | None = None,
        name: str = "staging",
    ) -> None:
        """Run `job(area)` on a worker; `done(result)` runs on the app thread; then refresh."""

        def work() -> None:
            result = job(self.area)
            if done is not None:
                self.app.call_from_thread(done, result)
            self._read()

        self.app.run_worker(work, thread=True, exit_on_error=False, group="staging-op", name=name)

    def read(self, job: Callable[[Any], Any], *, done: Callable[[Any], None]) -> None:
        """Run the read `job(area)` on a worker; `done(result)` runs on the app thread."""

        def work() -> None:
            result = job(self.area)
            self.app.call_from_thread(done, result)

        self.app.run_worker(work, thread=True, exit_on_error=False, group="staging-view")

    def close(self) -> None:
        if self._area is not None:
            self._area.close()
