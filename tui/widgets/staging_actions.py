"""What the staging panel does to staged changes: commit (with its progress and the orphan
question), reject, take the current value for conflicts, refresh.

A second base class of `StagingPanel` (a Widget, so Textual collects its `@on` handlers; second,
after TabPane, so the panel keeps TabPane's CSS type names). The panel owns what it reads and
shows, this class what it changes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button

from agent.errors import StagedSetMoved
from agent.staging import StagedChange
from agent.staging.review import ChangeFilter, ChangeGroup
from agent.stores.references import ReferencingRows
from agent.text_plural import counted, noun
from tui.key_hints import app_key
from tui.messages import signature

if TYPE_CHECKING:
    from textual.widgets import ProgressBar

    from tui.staging_watch import StagingWatch
    from tui.widgets.fitting_input import FittingInput


@dataclass
class Snapshot:
    """What the panel shows, read on a worker: totals, groups, one page, orphaned rows."""

    total: int = 0
    tables: list[tuple[str, int]] = field(default_factory=list)
    groups: list[ChangeGroup] = field(default_factory=list)
    matching: int = 0
    offset: int = 0
    page: list[StagedChange] = field(default_factory=list)
    orphans: list[ReferencingRows] = field(default_factory=list)
    conflicting: int = 0
    """How many of the matching changes are known to conflict (a filtered commit skips them)."""
    complete: bool = True
    """False while groups and orphaned rows are still being read (commits wait for them)."""


def relabel(button: Button, label: Content) -> None:
    """Give `button` a new label and lay it out again (a Button keeps the width of its first
    label otherwise, so "Commit 0" would cut "Commit 1,429" to "Commit")."""
    if button.label != label:
        button.label = label
        button.refresh(layout=True)


def matching_conflicts(
    review: Any, flt: ChangeFilter, conflicted: tuple[str, ...], matching: int
) -> int:
    """How many of the `matching` changes `flt` matches are among the known `conflicted`
    (all of them under `is:conflict`, whose ids are the conflicts)."""
    if not conflicted or flt.empty:
        return 0
    if flt.ids is not None:
        return matching
    return int(review.count(replace(flt, ids=conflicted)))


def page_signature(snap: Snapshot, conflicts: dict[str, Any]) -> tuple[Any, ...]:
    """What the list draws for a snapshot: the page's changes and their conflicts."""
    ids = [c.id for c in snap.page]
    return (signature(snap.page), [(i, id(conflicts.get(i))) for i in ids], snap.total > 0)


def same_conflict(known: Any, recorded: Any) -> bool:
    """True when a recorded conflict says what the one already shown says (keep the shown one:
    the list is not redrawn for it)."""
    return (known.reason, known.current) == (recorded.reason, recorded.current)


class CommitProgress(Message):
    """A commit running on a worker has written `done` of `total` changes."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total


class StagingActions(Widget):
    """Commit, reject and take-current for the staging panel (see the module docstring)."""

    staging_watch: StagingWatch
    changes: list[StagedChange]
    conflicts: dict[str, Any]
    filter: ChangeFilter
    snapshot: Snapshot
    _shown: Any
    _filter_input: FittingInput
    _progress: ProgressBar

    @on(Button.Pressed, "#take-current")
    def _take_current_pressed(self) -> None:
        self.take_current(list(self.conflicts))

    def take_current(self, ids: list[str]) -> None:
        """Resolve conflicts by re-staging these changes on the items' current values."""

        def done(report: Any) -> None:
            for change_id in [*report.refreshed, *report.dropped]:
                self.conflicts.pop(change_id, None)
            self.drop_conflict_filter()
            self._shown = None
            if report.refused:
                self.app.notify(report.describe(), severity="warning", markup=False)
            else:
                self.app.notify(report.describe(), markup=False)

        self.staging_watch.run(lambda area: area.rebase(ids), done=done, name="take-current")

    def take_recorded(self, recorded: dict[str, Any] | None) -> None:
        """The conflicts the staging area records (found by a commit of any process, forgotten
        when their change is rejected, taken current, folded over or commits) become the ones
        shown; None leaves them as they are."""
        if recorded is None:
            return
        known = self.conflicts
        self.conflicts = {
            i: known[i] if i in known and same_conflict(known[i], c) else c
            for i, c in recorded.items()
        }

    @on(Button.Pressed, "#refresh")
    def _refresh(self) -> None:
        """Re-read the staged changes and the conflicts commits recorded; the conflict filter
        goes (the list shows every change again)."""
        self.drop_conflict_filter(always=True)
        self._shown = None
        self.staging_watch.refresh_now()

    def drop_conflict_filter(self, always: bool = False) -> None:
        """Once no change is in conflict, `is:conflict` leaves the filter: it would match
        nothing, hiding every change staged next."""
        if (self.conflicts and not always) or self.filter.ids is None:
            return
        self.filter = replace(self.filter, ids=None)
        words = self._filter_input.value.split()
        self._filter_input.value = " ".join(w for w in words if w != "is:conflict")

    @on(Button.Pressed, "#commit-all")
    @on(Button.Pressed, "#commit-clean")
    def _commit_pressed(self) -> None:
        self.commit_staged(ask=False)

    def action_commit_staged(self) -> None:
        """The panel's commit key: what the commit button commits, after asking."""
        self.commit_staged(ask=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The commit key is dimmed while nothing is staged or a commit runs (in the filter box
        it types: Textual leaves keys an Input takes out of the footer)."""
        if action != "commit_staged":
            return True
        return None if not self.changes or self.has_class("-committing") else True

    def on_key(self, event: events.Key) -> None:
        """The commit key pressed while nothing is staged says why it does nothing."""
        if self.changes:
            return
        if any(
            b.action == "commit_staged" for b in self._bindings.key_to_bindings.get(event.key, ())
        ):
            event.stop()
            self._say_nothing_to_commit()

    def _say_nothing_to_commit(self) -> None:
        self.app.notify(
            "Nothing is staged, so there is nothing to commit. Ask in the chat for an edit: "
            "the assistant stages it here for you to review first.",
            markup=False,
        )

    def commit_staged(self, *, ask: bool) -> None:
        """Commit every staged change not in conflict (the commit buttons; the key asks first)."""
        if not self.changes:
            self._say_nothing_to_commit()
            return
        clean = [c.id for c in self.changes if c.id not in self.conflicts]
        if not clean:
            n = len(self.changes)
            every = noun(n, "The staged change conflicts", f"All {n:,} staged changes conflict")
            self.app.notify(
                f"{every} with the table as it is now: take the current values (Take current) "
                "or reject them first.",
                severity="warning",
                markup=False,
            )
            return
        self.confirm_commit(clean, expect=self.changes, ask=ask)

    def label_matching(self, snap: Snapshot) -> None:
        """`Commit 3` / `Reject 4` for what the filter matches; the commit leaves out the
        changes known to conflict (they would fail again) and is hidden when only those match;
        both are hidden when nothing matches (the list says so: no "Commit 0")."""
        for name in ("#commit-matching", "#reject-matching"):
            button = self.query_one(name, Button)
            button.disabled = self.filter.empty or not snap.matching or not snap.complete
            committing = name == "#commit-matching"
            count = snap.matching - snap.conflicting if committing else snap.matching
            verb = "Commit" if committing else "Reject"
            relabel(button, Content(f"{verb} these" if self.filter.empty else f"{verb} {count:,}"))
            shown = not self.filter.empty and snap.matching > 0  # "these" needs a filter
            button.display = shown and (not committing or not snap.conflicting or count > 0)

    @on(Button.Pressed, "#commit-matching")
    def _commit_matching_pressed(self) -> None:
        self.act_on_matching("commit")

    def commit_matching(self, found: list[str], expect: list[StagedChange]) -> None:
        """Commit the matching `found` but the changes known to conflict, or say why not."""
        clean = [i for i in found if i not in self.conflicts]
        if clean:
            self.confirm_commit(clean, expect=expect)
            return
        n = len(found)
        self.app.notify(
            f"{noun(n, 'The change', f'All {n:,} changes')} the filter matches "
            f"{noun(n, 'conflicts', 'conflict')} with the table as it is now, so nothing was "
            "committed: take the current values (Take current) or reject them first.",
            severity="warning",
            markup=False,
        )

    @on(Button.Pressed, "#reject-matching")
    def _reject_matching_pressed(self) -> None:
        self.act_on_matching("reject")

    def act_on_matching(self, action: str) -> None:
        """Commit or reject every change the filter matches (all pages), after asking."""
        from tui.screens.confirm import ConfirmScreen

        flt, expect, count = self.filter, list(self.changes), self.snapshot.matching

        def answered(yes: bool | None) -> None:
            if not yes:
                return

            def ids(area: Any) -> list[str]:
                return list(area.review().ids(flt))

            if action == "commit":
                self.staging_watch.read(ids, done=lambda found: self.commit_matching(found, expect))
            else:
                self.staging_watch.read(
                    ids, done=lambda found: self.reject([c for c in expect if c.id in set(found)])
                )

        verb = "Commit" if action == "commit" else "Discard"
        skipped = self.snapshot.conflicting if action == "commit" else 0
        question = f"{verb} the {counted(count - skipped, 'staged change')} the filter matches?"
        if skipped:
            question += (
                f" The {counted(skipped, 'change')} in conflict {noun(skipped, 'stays', 'stay')}"
                " staged."
            )
        self.app.push_screen(ConfirmScreen(f"{verb} these", question, yes=verb), answered)

    @on(Button.Pressed, "#reject-all")
    def _reject_all_pressed(self) -> None:
        from tui.screens.confirm import ConfirmScreen

        changes = list(self.changes)
        count = len(changes)
        question = (
            f"Discard {counted(count, 'staged change')}? "
            "They are dropped from staging and never reach the table."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.reject(changes)

        self.app.push_screen(ConfirmScreen("Reject all", question, yes="Discard"), answered)

    def reject(self, changes: list[StagedChange]) -> None:
        """Discard exactly `changes` (what the panel showed); if the set moved, refresh instead."""
        ids = [c.id for c in changes]
        expect = self.changes

        def job(area: Any) -> Any:
            if signature(area.list()) != signature(expect):
                return None
            return area.discard(ids=ids) if ids else 0

        self.staging_watch.run(job, done=self._said_rejected, name="reject-all")

    def _said_rejected(self, count: int | None) -> None:
        if count is None:
            self._said_moved()
            return
        self.app.notify(f"Rejected {counted(count, 'staged change')}.", markup=False)

    def _said_moved(self) -> None:
        self._shown = None
        self.app.notify(
            "The staged changes changed since this panel showed them, so nothing was done. "
            "The panel is refreshed: review it and press the button again.",
            title="Staged changes moved",
            severity="warning",
            markup=False,
        )

    def confirm_commit(
        self, ids: list[str], *, expect: list[StagedChange] | None = None, ask: bool = False
    ) -> None:
        """Commit `ids`; ask first when `ask`, or when they delete items other rows still
        reference (one question says both)."""
        from tui.screens.confirm import ConfirmScreen

        if not self.snapshot.complete:
            self.app.notify(
                "Still checking the staged deletes for orphaned rows: press again in a moment.",
                severity="warning",
                markup=False,
            )
            return
        chosen = set(ids)
        deleting = {c.table for c in self.changes if c.op == "delete" and c.id in chosen}
        orphans = [o for o in self.snapshot.orphans if o.reference.target in deleting]
        if not orphans and not ask:
            self.commit(ids, expect=expect)
            return
        parts = [self._commit_question(chosen)] if ask else []
        if orphans:
            rows = sum(o.count for o in orphans)
            parts.append(
                f"The deletes in this commit leave {counted(rows, 'row')} pointing at "
                "items that will be gone:\n"
                + "\n".join(f"• {o.describe()}" for o in orphans)
                + "\nCommit anyway?"
            )

        def answered(yes: bool | None) -> None:
            if yes:
                self.commit(ids, expect=expect)

        title = "Orphaned rows" if orphans else "Commit"
        self.app.push_screen(ConfirmScreen(title, "\n\n".join(parts), yes="Commit"), answered)

    def _commit_question(self, chosen: set[str]) -> str:
        """`Commit 3 staged changes (orders 2, products 1) to the tables?` and what stays."""
        tables = Counter(c.table for c in self.changes if c.id in chosen)
        where = ", ".join(f"{t} {n:,}" for t, n in sorted(tables.items()))
        question = f"Commit {counted(len(chosen), 'staged change')} ({where}) to the tables?"
        if self.conflicts:
            left = len(self.conflicts)
            question += (
                f" The {counted(left, 'change')} in conflict {noun(left, 'stays', 'stay')} staged."
            )
        history = app_key(self.app, "history", "f9")
        return question + f" A commit can be reverted later from the history ({history})."

    def commit(self, ids: list[str], *, expect: list[StagedChange] | None = None) -> None:
        """Commit exactly `ids` on a worker, with a progress bar. With `expect` (the set the
        panel showed) nothing is committed if the staging area no longer holds that set."""
        self.add_class("-committing")
        self._progress.update(total=max(len(ids), 1), progress=0)
        if not self._progress.is_attached:  # mounted at the first commit, not on every open
            self.mount(self._progress, after="#staging-bar")

        def job(area: Any) -> Any:
            try:  # the commit checks the set inside its transaction, so it reads it only once
                return area.commit(
                    ids,
                    progress=lambda done, of: self.post_message(CommitProgress(done, of)),
                    as_shown=expect,
                )
            except StagedSetMoved:
                return None

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
                f"Reject them, or commit the others with “Commit the {clean:,} without conflict”."
                if clean
                else "Reject them, or change the table back and commit again."
            )
            self.app.notify(
                f"Nothing was committed: {counted(len(report.conflicts), 'change')} "
                f"{noun(len(report.conflicts), 'conflicts', 'conflict')} with the "
                f"table as it is now. They stay staged (marked ⚠, listed first). {after}",
                title="Commit conflict",
                severity="error",
                markup=False,
            )
            self._filter_input.value = "is:conflict"
            self.filter = ChangeFilter(ids=tuple(self.conflicts))
            self._shown = None
        else:
            self.app.notify(f"Committed {counted(len(report.committed), 'change')}.", markup=False)

    def committing_failed(self) -> None:
        self.remove_class("-committing")
