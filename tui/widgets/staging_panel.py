"""The staging review panel: staged changes by table and item, each attribute old → new.

Reject one attribute, one change or all; commit all or just one change. Conflicts stay staged
and show the item's current value. Shows changes staged by any process (chat, MCP, CLI).
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, ProgressBar, Static, TabPane

from agent.staging import AttributeDiff, StagedChange
from agent.stores.base import transaction_plan

if TYPE_CHECKING:
    from tui.staging_watch import StagingWatch

MAX_SHOWN = 200
OP_STYLE = {"create": "green", "update": "yellow", "delete": "red"}


def show_value(value: Any) -> str:
    """A value on one line (JSON for structures, ∅ for missing)."""
    if value is None:
        return "∅"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str, ensure_ascii=False)
    return " ".join(str(value).split()) if isinstance(value, str) else str(value)


def origin_text(origin: str) -> str:
    """`chat:20261130-…` → `chat`, `mcp:client` → `mcp client`: who staged it, briefly."""
    kind, _, detail = origin.partition(":")
    return kind if kind == "chat" or not detail else f"{kind} {detail}"


def key_text(key: dict[str, Any]) -> str:
    return ", ".join(f"{k}={show_value(v)}" for k, v in key.items())


def signature(changes: list[StagedChange]) -> tuple[tuple[str, str], ...]:
    """What identifies a staged set as the user saw it: ids and staged values."""
    return tuple((c.id, json.dumps(c.values, sort_keys=True, default=str)) for c in changes)


def conflict_lines(change: StagedChange, conflict: Any) -> list[str]:
    """Only what conflicts: `status: staged pending → shipped, now 'cancelled'` per attribute."""
    current = conflict.current
    if current is None:
        return [f"⚠ conflict: the item is gone now ({conflict.reason})"]
    if change.op == "create":
        return [f"⚠ conflict: an item with this key exists now ({conflict.reason})"]
    before = change.pre_image or {}
    lines = []
    for attribute in sorted(set(before) | set(current)):
        old, now = before.get(attribute), current.get(attribute)
        if old == now:
            continue
        if change.op == "update" and attribute in change.values:
            staged = f"staged {show_value(old)} → {show_value(change.values[attribute])}"
        else:
            staged = f"was {show_value(old)}"
        now_text = repr(now) if isinstance(now, str) else show_value(now)
        lines.append(f"  {attribute}: {staged}, now {now_text}")
    if not lines:
        return [f"⚠ conflict: {conflict.reason}"]
    return ["⚠ conflict: changed in the table since it was staged", *lines]


class CommitProgress(Message):
    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total


class SmallButton(Button):
    """A one-line button carrying the change (and attribute) it acts on."""

    DEFAULT_CSS = "SmallButton { height: 1; min-width: 4; margin: 0 0 0 1; border: none; }"

    def __init__(
        self,
        label: str,
        action: str,
        change_id: str,
        attribute: str | None = None,
        variant: str = "default",
    ) -> None:
        super().__init__(Content(label), compact=True, variant=variant)  # type: ignore[arg-type]
        self.action_name = action
        self.change_id = change_id
        self.attribute = attribute


class ChangeCard(Vertical):
    """One staged change: op, key, origin; its attributes; commit/reject buttons."""

    DEFAULT_CSS = """
    ChangeCard { height: auto; margin: 0 0 1 2; padding: 0 1; border-left: wide $warning; }
    ChangeCard.-create { border-left: wide $success; }
    ChangeCard.-delete { border-left: wide $error; }
    ChangeCard.-conflict { background: $error 15%; }
    ChangeCard Horizontal { height: 1; }
    ChangeCard .card-head { width: 1fr; }
    ChangeCard .attr { width: 1fr; }
    ChangeCard .conflict { color: $error; }
    """

    def __init__(
        self, change: StagedChange, diffs: list[AttributeDiff], conflict: Any | None
    ) -> None:
        super().__init__(
            classes=f"-{change.op}" + (" -conflict" if conflict else ""), id=f"change-{change.id}"
        )
        self.change = change
        self.diffs = diffs
        self.conflict = conflict

    def compose(self) -> ComposeResult:
        change = self.change
        head = Text.assemble(
            (change.op.upper(), f"bold {OP_STYLE.get(change.op, '')}"),
            "  ",
            (key_text(change.key), "bold"),
            (
                f"   {origin_text(change.origin)} · {change.created_at[:16].replace('T', ' ')}",
                "dim",
            ),
        )
        with Horizontal():
            yield Static(head, classes="card-head")
            yield SmallButton("Commit this", "commit", change.id, variant="success")
            yield SmallButton("Reject", "reject", change.id, variant="error")
        for diff in self.diffs:
            line = Text("  ")
            line.append(diff.attribute, style="bold")
            line.append(": ")
            if change.op == "create":
                line.append(show_value(diff.new), style="green")
            elif change.op == "delete":
                line.append(show_value(diff.old), style="red strike")
            else:
                line.append(show_value(diff.old), style="dim strike")
                line.append(" → ")
                line.append(show_value(diff.new), style="bold yellow")
            with Horizontal():
                yield Static(line, classes="attr")
                if change.op != "delete" and diff.attribute in change.values:
                    button = SmallButton("✕", "reject_attribute", change.id, diff.attribute)
                    button.tooltip = f"Reject the change to {diff.attribute}"
                    yield button
        if self.conflict is not None:
            yield Static(Text("\n".join(conflict_lines(change, self.conflict))), classes="conflict")


class StagingPanel(TabPane):
    """The panel; `show(changes)` re-renders when the staged set changed."""

    DEFAULT_CSS = """
    StagingPanel { padding: 0 1; }
    StagingPanel > #staging-summary { height: auto; }
    StagingPanel > #staging-bar { height: 1; margin: 0 0 1 0; }
    StagingPanel > #staging-bar Button { margin: 0 1 0 0; min-width: 10; }
    StagingPanel > #staging-bar > #commit-clean { display: none; }
    StagingPanel.-conflicts > #staging-bar > #commit-clean { display: block; }
    StagingPanel.-conflicts > #staging-bar > #commit-all { display: none; }
    StagingPanel > #commit-progress { display: none; height: 1; }
    StagingPanel.-committing > #commit-progress { display: block; }
    StagingPanel .table-head { text-style: bold; margin: 0 0 0 0; }
    StagingPanel #staging-empty { color: $text-muted; }
    """

    def __init__(self, staging_watch: StagingWatch) -> None:
        super().__init__("Staged", id="staging")
        self.staging_watch = staging_watch
        self.changes: list[StagedChange] = []
        self.conflicts: dict[str, Any] = {}
        self._shown: tuple[Any, ...] | None = None
        self._summary = Static(Text("Reading staged changes…"), id="staging-summary")
        self._commit_all = Button(
            Content("Commit all"), id="commit-all", variant="success", compact=True, disabled=True
        )
        self._reject_all = Button(
            Content("Reject all"), id="reject-all", variant="error", compact=True, disabled=True
        )
        self._commit_clean = Button(
            Content("Commit the 0 without conflict"),
            id="commit-clean",
            variant="success",
            compact=True,
        )
        self._body = VerticalScroll(id="changes")
        self._progress = ProgressBar(id="commit-progress", show_eta=False)

    def compose(self) -> ComposeResult:
        yield self._summary
        with Horizontal(id="staging-bar"):
            yield self._commit_clean
            yield self._commit_all
            yield self._reject_all
            yield Button(Content("Refresh"), id="refresh", compact=True)
        yield self._progress
        yield self._body

    def on_mount(self) -> None:
        self.show(getattr(self.app, "staged_changes", []), force=True)

    def focus_first(self) -> None:
        """Keyboard to the panel: the commit button when there is something to commit, else
        Refresh."""
        commit = self._commit_clean if self.conflicts else self._commit_all
        target = commit if not commit.disabled else self.query_one("#refresh")
        target.focus()

    def show(self, changes: list[StagedChange], *, force: bool = False) -> None:
        """Render `changes` grouped by table and item (skipped when nothing changed)."""
        shown = signature(changes) + tuple(sorted(self.conflicts))
        if shown == self._shown and not force:
            return
        self._shown = shown
        self.changes = changes
        self.conflicts = {
            k: v for k, v in self.conflicts.items() if any(c.id == k for c in changes)
        }
        count = len(changes)
        tables = len({c.table for c in changes})
        summary = (
            f"{count} staged change{'s' * (count != 1)} in {tables} table{'s' * (tables != 1)}"
            if count
            else "Nothing staged."
        )
        if self.conflicts:
            summary += f" · {len(self.conflicts)} in conflict"
        plan = transaction_plan(self.staging_watch.area.store, count)
        if plan:
            summary += f"\nCommitting them takes {plan}."
        self._summary.update(Text(summary))
        self._commit_all.label = Content(f"Commit {count}")
        self._commit_all.disabled = not count
        self._reject_all.disabled = not count
        clean = count - len(self.conflicts)
        self._commit_clean.label = Content(f"Commit the {clean} without conflict")
        self._commit_clean.disabled = not clean
        self.set_class(bool(self.conflicts), "-conflicts")
        self.call_later(self._rebuild)

    async def _rebuild(self) -> None:
        area = self.staging_watch.area
        body = self._body
        widgets: list[Any] = []
        shown = self.changes[:MAX_SHOWN]
        for table, group in groupby(sorted(shown, key=lambda c: c.table), key=lambda c: c.table):
            items = list(group)
            widgets.append(Static(Text(f"{table}  ({len(items)})"), classes="table-head"))
            widgets.extend(ChangeCard(c, area.diff(c), self.conflicts.get(c.id)) for c in items)
        if len(self.changes) > MAX_SHOWN:
            widgets.append(
                Static(
                    Text(
                        f"… and {len(self.changes) - MAX_SHOWN} more (the Commit button includes them)"
                    )
                )
            )
        if not self.changes:
            widgets.append(
                Static(
                    Text("Edits the assistant stages appear here for you to review and commit."),
                    id="staging-empty",
                )
            )
        async with body.batch():
            await body.remove_children()
            await body.mount_all(widgets)

    # ----- actions -----------------------------------------------------------------------------

    @on(Button.Pressed, "#refresh")
    def _refresh(self) -> None:
        """Re-read the staged changes; conflicts are checked again at the next commit."""
        self.conflicts.clear()
        self._shown = None
        self.staging_watch.refresh_now()

    @on(Button.Pressed, "#commit-all")
    def _commit_all_pressed(self) -> None:
        self.commit([c.id for c in self.changes], expect=self.changes)

    @on(Button.Pressed, "#commit-clean")
    def _commit_clean_pressed(self) -> None:
        clean = [c for c in self.changes if c.id not in self.conflicts]
        self.commit([c.id for c in clean], expect=self.changes)

    @on(Button.Pressed, "#reject-all")
    def _reject_all_pressed(self) -> None:
        from tui.screens.confirm import ConfirmScreen

        changes = list(self.changes)
        count = len(changes)
        question = (
            f"Discard {count:,} staged change{'s' * (count != 1)}? "
            "They are dropped from staging and never reach the table."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.reject(changes)

        self.app.push_screen(ConfirmScreen("Reject all", question, yes="Discard"), answered)

    def reject(self, changes: list[StagedChange]) -> None:
        """Discard exactly `changes` (what the panel showed); if the set moved, refresh instead."""
        ids = [c.id for c in changes]

        def job(area: Any) -> Any:
            if signature(area.list()) != signature(changes):
                return None
            return area.discard(ids=ids) if ids else 0

        self.staging_watch.run(job, done=self._said_rejected, name="reject-all")

    @on(Button.Pressed, "SmallButton")
    def _small(self, event: Button.Pressed) -> None:
        button = event.button
        assert isinstance(button, SmallButton)
        if button.action_name == "commit":
            self.commit([button.change_id])
        elif button.action_name == "reject":
            self.staging_watch.run(
                lambda area: area.discard(ids=[button.change_id]), done=self._said_rejected
            )
        elif button.action_name == "reject_attribute":
            attribute = button.attribute or ""
            self.staging_watch.run(lambda area: area.reject_attribute(button.change_id, attribute))

    def _said_rejected(self, count: int | None) -> None:
        if count is None:
            self._said_moved()
            return
        self.app.notify(f"Rejected {count} staged change{'s' * (count != 1)}.", markup=False)

    def _said_moved(self) -> None:
        self._shown = None
        self.app.notify(
            "The staged changes changed since this panel showed them, so nothing was done. "
            "The panel is refreshed: review it and press the button again.",
            title="Staged changes moved",
            severity="warning",
            markup=False,
        )

    def commit(self, ids: list[str], *, expect: list[StagedChange] | None = None) -> None:
        """Commit exactly `ids` on a worker, with a progress bar. With `expect` (the set the
        panel showed) nothing is committed if the staging area no longer holds that set."""
        self.add_class("-committing")
        self._progress.update(total=max(len(ids), 1), progress=0)

        def job(area: Any) -> Any:
            if expect is not None and signature(area.list()) != signature(expect):
                return None
            return area.commit(
                ids, progress=lambda done, of: self.post_message(CommitProgress(done, of))
            )

        self.staging_watch.run(job, done=self._committed, name="commit")

    def on_commit_progress(self, message: CommitProgress) -> None:
        self._progress.update(total=max(message.total, 1), progress=message.done)

    def _committed(self, report: Any) -> None:
        self.remove_class("-committing")
        if report is None:
            self._said_moved()
        elif report.conflicts:
            for conflict in report.conflicts:
                self.conflicts[conflict.change_id] = conflict
            clean = len(self.changes) - len(self.conflicts)
            after = (
                f"Reject them, or commit the others with “Commit the {clean} without conflict”."
                if clean
                else "Reject them, or change the table back and commit again."
            )
            self.app.notify(
                f"Nothing was committed: {len(report.conflicts)} change(s) conflict with the table "
                f"as it is now. They stay staged (marked ⚠ below). {after}",
                title="Commit conflict",
                severity="error",
                markup=False,
            )
            self._shown = None
        else:
            self.app.notify(f"Committed {len(report.committed)} change(s).", markup=False)

    def committing_failed(self) -> None:
        self.remove_class("-committing")
