"""The staging review panel: every staged change, paged from the staging database.

A summary with the bulk groups (`1,400 orders: status delivered → cancelled`), a filter
(table:, op:, attr:, text), a page of the matching changes (Enter: the change in full, with
commit / reject), commit or reject of all or of what the filter matches, and a warning for
rows that staged deletes would leave orphaned. Conflicts stay staged and show the item's
current value. Shows changes staged by any process (chat, MCP, CLI). What the buttons do to
the staged set is in `staging_actions`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Button, Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from agent.errors import TabletalkError
from agent.staging import StagedChange
from agent.staging.review import ChangeFilter, ChangeGroup
from agent.stores.base import transaction_plan
from agent.stores.references import ReferencingRows, orphan_warning
from agent.text_plural import counted
from tui.key_hints import app_key
from tui.messages import signature
from tui.widgets.change_list import ChangeList
from tui.widgets.fitted_lines import CutLine, FittedLines, Line
from tui.widgets.fitting_input import FittingInput
from tui.widgets.flow_bar import FlowBar
from tui.widgets.staged_change import (
    ChangeCard,
    ChangeDetailScreen,
    SmallButton,
    change_text,
    conflict_lines,
    origin_text,
)
from tui.widgets.staging_actions import (
    CommitProgress,
    Snapshot,
    StagingActions,
    matching_conflicts,
    page_signature,
    relabel,
)
from tui.widgets.tab_area import TabPane

if TYPE_CHECKING:
    from tui.staging_watch import StagingWatch

__all__ = [
    "ChangeCard",
    "CommitProgress",
    "SmallButton",
    "StagingPanel",
    "conflict_lines",
    "origin_text",
]

PAGE = 50
"""Changes per page of the list."""
SHORT_HEIGHT = 28
"""Fewer rows than this: bulk groups one line each, no pager row while there is one page."""
FILTER_PLACEHOLDERS = (
    "/ filter · table:NAME op:OP attr:COLUMN words · enter applies",
    "/ filter · table: op: attr: words · enter applies",
    "/ table: op: attr: words · enter applies",
    "/ filter · enter applies",
)
"""The filter box's hint, longest first: the widest that fits is shown (F1 lists the syntax)."""


class StagingPanel(TabPane, StagingActions):
    """The panel; `show(changes)` re-reads what it shows when the staged set changed."""

    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="staging.filter", show=False),
        Binding("escape", "leave_filter", "Back to the list", show=False),
        Binding(
            "c",
            "commit_staged",
            "Commit",
            id="staging.commit",
            tooltip="Commit what is staged (asks first; changes in conflict stay staged)",
        ),
    ]

    DEFAULT_CSS = """
    StagingPanel { padding: 0 1; }
    StagingPanel > #staging-summary { height: auto; }
    StagingPanel > #staging-orphans { height: auto; color: $error; display: none; }
    StagingPanel.-orphans > #staging-orphans { display: block; }
    StagingPanel FlowBar Button { margin: 0 1 0 0; min-width: 6; }
    StagingPanel #commit-matching { margin: 0 1 0 1; }
    StagingPanel > #commit-progress { display: none; height: 1; }
    StagingPanel.-committing > #commit-progress { display: block; }
    StagingPanel > #staging-groups { height: auto; max-height: 3; border: none; padding: 0; }
    StagingPanel > #staging-filter { height: 1; border: none; padding: 0 1; background: $boost; }
    StagingPanel > #staging-filter:focus { background: $primary 20%; }
    StagingPanel #staging-showing { width: auto; margin: 0 1 0 0; color: $text-muted; }
    StagingPanel > #staging-list { height: 1fr; border: none; padding: 0; }
    StagingPanel #staging-empty { color: $text-muted; }
    """

    def __init__(self, staging_watch: StagingWatch) -> None:
        super().__init__("Staged", id="staging")
        self.staging_watch = staging_watch
        self.changes: list[StagedChange] = []
        self.conflicts: dict[str, Any] = {}
        self.filter = ChangeFilter()
        self.snapshot = Snapshot()
        self._shown: Any = None
        self._drawn: Any = None
        self._generation = 0
        self._summaries_read = False
        self._list_wanted = False
        """Focus was given to the panel before its first page arrived: it goes to the list then."""
        self._group_lines: tuple[list[str], bool] = ([], False)
        self._summary = Static(Content("Reading staged changes…"), id="staging-summary")
        self._orphans = Static("", id="staging-orphans")
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
        self._commit_clean.display = False
        self._take_current = Button(
            Content("Take current"), id="take-current", variant="warning", compact=True
        )
        self._take_current.tooltip = (
            "Re-stage the changes in conflict on top of the items as they are now"
        )
        self._take_current.display = False
        self._groups = OptionList(id="staging-groups", compact=True)
        self._filter_input = FittingInput(FILTER_PLACEHOLDERS, id="staging-filter", compact=True)
        self._showing = Static("", id="staging-showing")
        self._list = ChangeList(id="staging-list", compact=True)
        self._land: int | None = None
        """Where the cursor lands on the next page drawn (after a page turn by keyboard)."""
        self._offset = 0
        """The page last asked for (the one shown, or the one on its way)."""
        self._progress = ProgressBar(id="commit-progress", show_eta=False)

    def compose(self) -> ComposeResult:
        yield self._summary
        yield self._orphans
        with FlowBar(id="staging-bar"):  # wraps at 80 columns: every button stays reachable
            yield self._commit_clean
            yield self._commit_all
            yield self._take_current
            yield self._reject_all
            yield Button(Content("Refresh"), id="refresh", compact=True)
        yield self._groups
        yield self._filter_input
        with FlowBar(id="staging-pager"):  # with what the filter matches: one row, not two
            yield Button(Content("◀"), id="page-prev", compact=True)
            yield self._showing
            yield Button(Content("▶"), id="page-next", compact=True)
            yield Button(Content("Commit these"), id="commit-matching", compact=True)
            yield Button(Content("Reject these"), id="reject-matching", compact=True)
        yield self._list

    def on_mount(self) -> None:
        """Read the first page at once; the set's signature is left to the next refresh (it
        costs a pass over every staged change, on the way to the first frame)."""
        self.changes = getattr(self.app, "staged_changes", [])
        self.take_recorded(getattr(self.app, "staged_conflicts", {}))
        self.load(0)

    def action_focus_filter(self) -> None:
        """`/`: the keyboard to the filter box (Enter applies it)."""
        self._filter_input.focus()

    def action_leave_filter(self) -> None:
        """Esc in the filter box: the keyboard back to the changes, so the panel's keys (c
        commits) work again; elsewhere Esc does what it does in the app (stop the answer)."""
        if not self._filter_input.has_focus:
            raise SkipAction()
        self.focus_first()

    def focus_first(self) -> None:
        """Keyboard to the panel: the list of changes when there are some, else Refresh (and
        the list once a page that is still being read arrives)."""
        target = self._list if self.changes else self.query_one("#refresh")
        self._list_wanted = not self.changes
        target.focus()

    # ----- reading -----------------------------------------------------------------------------

    def show(
        self,
        changes: list[StagedChange],
        *,
        force: bool = False,
        signed: list[tuple[str, str, Any]] | None = None,
        conflicts: dict[str, Any] | None = None,
    ) -> None:
        """Re-read what the panel shows when `changes` (the whole staged set) or the recorded
        `conflicts` moved; `signed` is their `signature` when the caller has it (off the app's
        thread)."""
        self.take_recorded(conflicts)
        drawn = sorted((k, id(v)) for k, v in self.conflicts.items())
        shown = (signed if signed is not None else signature(changes), drawn)
        if shown == self._shown and not force:
            return
        self._shown = shown
        self.changes = changes
        ids = {c.id for c in changes}
        self.conflicts = {k: v for k, v in self.conflicts.items() if k in ids}
        self.drop_conflict_filter()
        self._summaries_read = False
        self.load(self._offset, land=self._land)  # a page being turned to stays the one read

    def load(self, offset: int = 0, *, land: int | None = None) -> None:
        """Read the totals and the page at `offset` of the filtered changes on a worker, the
        cursor to `land` on it when given. The summaries (bulk groups, orphaned rows) cover the
        whole staged set: they are read after that page is painted, and again only when the
        staged set moved."""
        self._generation += 1
        generation = self._generation
        self._offset, self._land = offset, land
        flt = self.filter
        if flt.ids is not None:
            flt = replace(flt, ids=tuple(self.conflicts))  # is:conflict: every one known now
        known, conflicted = self._summaries_read, tuple(self.conflicts)
        groups, orphans = self.snapshot.groups, self.snapshot.orphans

        def job(area: Any) -> Snapshot:
            try:
                return read(area)
            except Exception:  # the app reports it; the keys held for this page apply anyway
                self.app.call_from_thread(self._page_failed, generation)
                raise

        def read(area: Any) -> Snapshot:
            review = area.review()
            matching = review.count(flt)
            conflicting = matching_conflicts(review, flt, conflicted, matching)
            start = max(0, min(offset, (max(matching, 1) - 1) // PAGE * PAGE))
            return Snapshot(
                total=review.count(),
                tables=review.tables(),
                groups=groups,
                matching=matching,
                offset=start,
                page=review.page(flt, offset=start, limit=PAGE),
                orphans=orphans if known else [],
                conflicting=conflicting,
                complete=known,
            )

        self.staging_watch.read(job, done=lambda snap: self._page_read(snap, generation))

    def _page_read(self, snap: Snapshot, generation: int) -> None:
        if generation != self._generation:  # a later read is on its way
            return
        self._loaded(snap)
        self._offset, self._land = snap.offset, None
        self._list.resume()  # keys pressed while the page was read, in order
        if not snap.complete:
            self.call_after_refresh(self._read_summaries, generation)

    def _page_failed(self, generation: int) -> None:
        if generation == self._generation:
            self._offset, self._land = self.snapshot.offset, None
            self._list.resume()

    def _read_summaries(self, generation: int) -> None:
        """The bulk groups and the rows staged deletes would orphan, on a worker."""
        if generation != self._generation:
            return
        relationships = self._relationships

        def job(area: Any) -> tuple[list[ChangeGroup], list[ReferencingRows]]:
            review = area.review()
            deletes = review.deletes()
            orphans: list[ReferencingRows] = []
            if deletes:
                from agent.staging.orphans import orphaned_by

                orphans = orphaned_by(area.store, deletes, relationships())
            return review.groups(), orphans

        def done(found: tuple[list[ChangeGroup], list[ReferencingRows]]) -> None:
            if generation != self._generation:  # the page moved meanwhile; it reads them again
                return
            self._summaries_read = True
            groups, orphans = found
            self._loaded(replace(self.snapshot, groups=groups, orphans=orphans, complete=True))

        self.staging_watch.read(job, done=done)

    def _relationships(self) -> list[Any]:
        from agent.specs import SpecBook

        session = getattr(self.app, "session", None)
        book = getattr(session, "specs", None) or SpecBook(None, self.staging_watch.store.identity)
        try:
            return list(book.list_relationships())
        except (TabletalkError, OSError):
            return []

    def _loaded(self, snap: Snapshot) -> None:
        self.snapshot = snap
        count = snap.total
        tables = ", ".join(f"{t} {n:,}" for t, n in snap.tables)
        summary = f"{counted(count, 'staged change')} ({tables})" if count else "Nothing staged."
        if self.conflicts:
            summary += f" · {len(self.conflicts):,} in conflict (filter is:conflict)"
        if count > len(self.conflicts):  # first, so a wrap never parts the key from its word
            summary = f"{app_key(self.app, 'staging.commit', 'c')} commits · {summary}"
        plan = transaction_plan(self.staging_watch.area.store, count)
        if plan:
            summary += f"\nCommitting them takes {plan}."
        self._summary.update(Content(summary))
        self._show_orphans(snap.orphans)
        relabel(self._commit_all, Content(f"Commit {count:,}"))
        self._commit_all.disabled = not count or not snap.complete
        self._reject_all.disabled = not count
        clean = count - len(self.conflicts)
        relabel(self._commit_clean, Content(f"Commit the {clean:,} without conflict"))
        self._commit_clean.display = bool(self.conflicts) and clean > 0
        self._commit_clean.disabled = not snap.complete
        self._commit_all.display = not self.conflicts
        self._take_current.display = bool(self.conflicts)
        relabel(self._take_current, Content(f"Take current for {len(self.conflicts):,}"))
        self._show_groups()
        end = snap.offset + len(snap.page)
        self._showing.update(
            Content(f"{snap.offset + 1:,}–{end:,} of {snap.matching:,}")
            if snap.matching
            else Content("none")
        )
        self.query_one("#page-prev", Button).disabled = snap.offset == 0
        self.query_one("#page-next", Button).disabled = end >= snap.matching
        self._show_pager()
        self.label_matching(snap)
        drawn = page_signature(snap, self.conflicts)
        if drawn != self._drawn:  # the same page again (summaries arrived): keep the list as is
            self._drawn = drawn
            self._fill_list(snap)
        if self.app.focused is None and self.display and self.screen is self.app.screen:
            self.focus_first()  # the focused button went away (disabled, e.g. "Commit 0")
        elif self._list_wanted and self.changes:
            self._list_wanted = False
            if self.app.focused is self.query_one("#refresh"):
                self._list.focus()  # opened before its first page was read

    def _fill_list(self, snap: Snapshot) -> None:
        area = self.staging_watch.area
        highlighted = self._list.highlighted
        self._list.clear_options()
        if not snap.page:
            text = (
                "Edits the assistant stages appear here for you to review and commit."
                if not snap.total
                else f"No staged change matches the filter (of {snap.total:,} staged): empty "
                "it and press enter to list them all."
            )
            self._list.add_option(
                Option(Content.styled(text, "dim"), id="staging-empty", disabled=True)
            )
            return
        self._list.add_options(
            [
                Option(change_text(c, area.diff(c), self.conflicts.get(c.id)), id=c.id)
                for c in snap.page
            ]
        )
        if self._land is not None:
            highlighted = self._land % len(snap.page)
        if highlighted is not None:
            self._list.highlighted = min(highlighted, len(snap.page) - 1)
        elif self._list.has_focus:
            self._list.highlight_first()

    def on_resize(self) -> None:
        """Short of rows (80x24), each bulk group takes one line, cut, so the list keeps them."""
        self.set_class(self.size.height < SHORT_HEIGHT, "-short")
        self._show_groups()
        self._show_pager()

    def _show_pager(self) -> None:
        """Short of rows, no pager row while it adds nothing (one page, no filter)."""
        one_page = self.snapshot.offset == 0 and self.snapshot.matching <= PAGE
        quiet = self.has_class("-short") and one_page and self.filter.empty
        self.query_one("#staging-pager").display = not quiet

    def _show_groups(self) -> None:
        groups = [g.summary() for g in self.snapshot.groups]
        short = self.has_class("-short")
        if (groups, short) == self._group_lines:
            return
        self._group_lines = (groups, short)
        self._groups.clear_options()
        lines = [
            CutLine(Content(f"▸ {g}"))
            if short
            else FittedLines(Content(), (), [Line(Content(g), Content("▸ "))])
            for g in groups
        ]
        self._groups.add_options([Option(line, id=str(i)) for i, line in enumerate(lines)])
        self._groups.display = bool(groups)

    def _show_orphans(self, orphans: list[ReferencingRows]) -> None:
        """One short warning; the commit's confirmation lists each reference in full."""
        self.set_class(bool(orphans), "-orphans")
        if orphans:
            self._orphans.update(Content(orphan_warning(orphans)))

    # ----- filter, pages, groups, detail -------------------------------------------------------

    @on(Input.Submitted, "#staging-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_filter(event.value)

    def set_filter(self, typed: str) -> None:
        """Show only the changes matching `typed` (see ChangeFilter.parse); a bad filter says why."""
        self._filter_input.show_hints(FILTER_PLACEHOLDERS)
        words = typed.split()
        conflicts = "is:conflict" in words
        try:
            flt = ChangeFilter.parse(" ".join(w for w in words if w != "is:conflict"))
        except TabletalkError as exc:
            self.app.notify(exc.render(), title=exc.title, severity="error", markup=False)
            return
        self.filter = replace(flt, ids=tuple(self.conflicts) if conflicts else None)
        self.load(0)

    @on(OptionList.OptionSelected, "#staging-groups")
    def _group_selected(self, event: OptionList.OptionSelected) -> None:
        """A bulk group becomes the filter: its changes are listed, commit/reject act on them."""
        event.stop()
        group = self.snapshot.groups[int(event.option.id or 0)]
        self._filter_input.value = ""
        summary = group.summary()
        self._filter_input.show_hints(
            (f"showing the bulk edit “{summary}” (enter: all)", f"enter: all · “{summary}”")
        )
        self.filter = ChangeFilter(table=group.table, op=group.op, values_json=group.values_json)
        self.load(0)

    @on(ChangeList.PageTurn)
    def _page_turn(self, event: ChangeList.PageTurn) -> None:
        """The cursor went past the page: the next page opens on its first change, the
        previous one on its last; the keys pressed meanwhile wait in the list for it."""
        event.stop()
        self._list.taken()
        if event.step > 0 and self._offset + PAGE < self.snapshot.matching:
            self.load(self._offset + PAGE, land=0)
        elif event.step < 0 and self._offset > 0:
            self.load(self._offset - PAGE, land=-1)
        else:  # no page there: the keys held apply to this one
            self._list.resume()

    @on(Button.Pressed, "#page-prev")
    def _prev(self) -> None:
        self.load(max(0, self._offset - PAGE))

    @on(Button.Pressed, "#page-next")
    def _next(self) -> None:
        self.load(self._offset + PAGE)

    @on(OptionList.OptionSelected, "#staging-list")
    def _change_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        change = next((c for c in self.snapshot.page if c.id == event.option.id), None)
        if change is not None:
            self.open_change(change)

    def open_change(self, change: StagedChange) -> None:
        """The change in full, with its buttons."""
        screen = ChangeDetailScreen(
            change, self.staging_watch.area.diff(change), self.conflicts.get(change.id)
        )
        self.app.push_screen(screen, self._detail_done)

    def _detail_done(self, answer: tuple[str, str, str | None] | None) -> None:
        if answer is None:
            return
        action, change_id, attribute = answer
        if action == "commit":  # asks first if the change is a delete that orphans rows
            self.confirm_commit([change_id])
        elif action == "reject":
            self.staging_watch.run(
                lambda area: area.discard(ids=[change_id]), done=self._said_rejected
            )
        elif action == "reject_attribute":
            self.staging_watch.run(lambda area: area.reject_attribute(change_id, attribute or ""))
        elif action == "take_current":
            self.take_current([change_id])
