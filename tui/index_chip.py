"""The "build a search index" chip's flow, as one line in the chat: estimate the rows, tokens
and cost on a worker, ask, build on a worker with progress, say when it is done (or why not).

The chip comes from a vectorSearch result on a table without an index; nothing is read or
spent until the person clicks it, and nothing is embedded until they confirm.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from agent.errors import TabletalkError
from agent.text_plural import counted, noun
from agent.text_safety import printable_line
from tui.screens.confirm import ConfirmScreen
from tui.workers import run_in_thread

if TYPE_CHECKING:
    from agent.stores.base import Store
    from agent.vectors.build import Estimate
    from agent.vectors.index import BuildPlan

PROGRESS_EVERY_S = 0.25
"""At most this often a progress message crosses to the app."""


def chip_request(action: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(table, columns) of a buildIndex chip's action, or None when it is malformed (a saved
    conversation is a file anyone could edit)."""
    table, columns = action.get("table"), action.get("columns")
    if not isinstance(table, str) or not table or not isinstance(columns, list):
        return None
    if not columns or not all(isinstance(c, str) and c for c in columns):
        return None
    return table, list(columns)


class IndexBuildLine(Static):
    """One chat line that runs a chip's index build and shows where it is."""

    DEFAULT_CSS = """
    IndexBuildLine { color: $text-muted; margin: 0 0 0 2; }
    IndexBuildLine.-done { color: $success; }
    IndexBuildLine.-error { color: $error; }
    """

    class Estimated(Message):
        def __init__(self, plan: BuildPlan, estimate: Estimate) -> None:
            super().__init__()
            self.plan = plan
            self.estimate = estimate

    class Progressed(Message):
        def __init__(self, done: int, total: int, rate: float) -> None:
            super().__init__()
            self.done = done
            self.total = total
            self.rate = rate

    class Built(Message):
        def __init__(self, rows: int) -> None:
            super().__init__()
            self.rows = rows

    class Failed(Message):
        def __init__(self, error: TabletalkError) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        store: Store,
        table: str,
        columns: Sequence[str],
        *,
        profile: str | None,
        region: str | None,
    ) -> None:
        self.store = store
        self.table = table
        self.columns = list(columns)
        self.aws_profile = profile
        self.aws_region = region
        self.shown_table = printable_line(table)
        self.active = True
        """Estimating, asking or building; False once done, declined or failed."""
        super().__init__(Text(f"Reading {self.shown_table} to estimate its index…"))

    def on_mount(self) -> None:
        run_in_thread(self, self._estimate, group="index", name="index-estimate")

    def _say(self, text: str, level: str = "", *, finished: bool = False) -> None:
        self.active = self.active and not finished and not level
        self.update(Text(text))
        self.set_class(level == "done", "-done")
        self.set_class(level == "error", "-error")

    # -- worker threads: they only post messages ------------------------------------------

    def _estimate(self) -> None:
        from agent.vectors.build import check_columns, plan_build
        from agent.vectors.index import VectorIndex

        try:
            info = self.store.describe_table(self.table)
            any_attribute = self.store.value_checker is not None
            columns = check_columns(info, self.columns, any_attribute=any_attribute)
            index = VectorIndex.open(self.store)
            try:
                plan, estimate = plan_build(index, info, columns)
            finally:
                index.close()
        except TabletalkError as exc:
            self.post_message(self.Failed(exc))
            return
        self.post_message(self.Estimated(plan, estimate))

    def _build(self, plan: BuildPlan, estimate: Estimate) -> None:
        from agent.vectors.build import run_build
        from agent.vectors.index import VectorIndex

        lock = threading.Lock()
        started = time.monotonic()
        state = {"done": 0, "posted": 0.0}

        def progress(n: int) -> None:  # called from the embedder's threads
            with lock:
                state["done"] += n
                now = time.monotonic()
                if now - state["posted"] < PROGRESS_EVERY_S and state["done"] < estimate.rows:
                    return
                state["posted"] = now
                done = int(state["done"])
            self.post_message(self.Progressed(done, estimate.rows, done / max(now - started, 1e-6)))

        try:
            index = VectorIndex.open(self.store)
            try:
                rows = run_build(
                    index,
                    plan,
                    estimate,
                    profile=self.aws_profile,
                    region=self.aws_region,
                    on_progress=progress,
                )
            finally:
                index.close()
        except TabletalkError as exc:
            self.post_message(self.Failed(exc))
            return
        self.post_message(self.Built(rows))

    # -- handlers (the app's thread) --------------------------------------------------------

    def on_index_build_line_estimated(self, message: Estimated) -> None:
        estimate = message.estimate
        columns = ", ".join(map(printable_line, estimate.columns))
        if not estimate.rows and not estimate.drop:
            self._say(f"The index of {self.shown_table} is up to date.", "done")
            return
        unchanged = estimate.unchanged
        kept = (
            f" {counted(unchanged, 'row')} {noun(unchanged, 'is', 'are')} already indexed."
            if unchanged
            else ""
        )
        question = (
            f"Embed {counted(estimate.rows, 'row')} of {self.shown_table} (columns {columns}) with "
            f"{estimate.model} ({estimate.dims} dims)?\n"
            f"About {estimate.tokens:,} tokens: {estimate.price()} (approximate), billed to "
            f"your AWS account.{kept}"
        )
        self._say(f"Waiting for your answer: build the index of {self.shown_table}?")
        self.app.push_screen(
            ConfirmScreen("Build a search index", question, yes="Build"),
            callback=lambda yes: self._answered(bool(yes), message.plan, estimate),
        )

    def _answered(self, yes: bool, plan: BuildPlan, estimate: Estimate) -> None:
        if not yes:
            columns = ",".join(estimate.columns)
            self._say(
                f"Nothing built. Later: tabletalk index build {self.shown_table} "
                f"--columns {printable_line(columns)}",
                finished=True,
            )
            return
        self._say(f"Building the index of {self.shown_table}: 0/{estimate.rows:,} rows")
        run_in_thread(self, lambda: self._build(plan, estimate), group="index", name="index-build")

    def on_index_build_line_progressed(self, message: Progressed) -> None:
        left = (message.total - message.done) / message.rate if message.rate else 0.0
        self._say(
            f"Building the index of {self.shown_table}: {message.done:,}/{message.total:,} "
            f"rows · {message.rate:,.0f} rows/s · about {left:,.0f} s left"
        )

    def on_index_build_line_built(self, message: Built) -> None:
        text = (
            f"Index of {self.shown_table} built: {counted(message.rows, 'row')}. vectorSearch can "
            "search it from your next message."
        )
        self._say(text, "done")
        self.app.notify(text, title="Search index built", markup=False)

    def on_index_build_line_failed(self, message: Failed) -> None:
        error = message.error
        fix = f" What to do: {error.fix}" if error.fix else ""
        self._say(f"The index of {self.shown_table} was not built: {error.message}.{fix}", "error")
