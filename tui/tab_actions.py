"""Opening and listing the tab area's tabs: tables, joined views, saved specs and the staging
panel, from keys, the home list, the palette, chat chips and the model (through the bridge).

A mixin of TabletalkApp, kept apart so the app module stays about wiring and state.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from textual.app import App

from agent.errors import TabletalkError
from agent.text_plural import counted
from tui.messages import ChipClicked
from tui.widgets.home import HomeTab
from tui.widgets.tab_area import TabArea

if TYPE_CHECKING:  # the rest loads on first use, after the first screen
    from tui.staging_watch import StagingWatch
    from tui.tabs import TabOpener
    from tui.widgets.chat import ChatPanel
    from tui.widgets.table_tab import TableTab
    from tui.widgets.table_view import TableView

    _Base = App[int]
else:
    _Base = object


class TabActions(_Base):
    """What opens a tab and what lists them; `self` is the TabletalkApp."""

    session: Any
    settings: Any
    store: Any
    staging_watch: StagingWatch
    staged_changes: list[Any]

    if TYPE_CHECKING:  # provided by TabletalkApp and AppActions

        @property
        def chat(self) -> ChatPanel: ...

        def action_toggle_chat(self) -> None: ...

    @cached_property
    def opener(self) -> TabOpener:
        """Opens table, view and spec tabs (built at the first one)."""
        from tui.tabs import TabOpener

        return TabOpener(self.store, self.query_one("#tabs", TabArea))

    async def open_table(self, table: str, query: str | None = None, *, focus: bool = True) -> str:
        tab = await self.opener.open_table(table, query)
        self._show_tabs()
        self._tint(tab)
        if focus:  # a click or key moves the keyboard there; the model's opens do not
            self.call_after_refresh(tab.focus_table)
        return f"Opened table '{tab.table}' in a tab" + (f" filtered by: {query}" if query else "")

    async def open_joined_view(self, spec: dict[str, Any], *, focus: bool = True) -> str:
        tab = await self.opener.open_joined_view(spec)
        self._show_tabs()
        if focus:  # a click or key moves the keyboard there; the model's opens do not
            self.call_after_refresh(tab.focus_table)
        return f"Opened the joined view {tab.tab_title} in a tab"

    async def open_saved_spec(self, spec: dict[str, Any], *, focus: bool = True) -> str:
        tab = await self.opener.open_saved_spec(spec)
        self._show_tabs()
        self._tint(tab)
        if focus:  # a click or key moves the keyboard there; the model's opens do not
            self.call_after_refresh(tab.focus_table)
        return f"Opened saved spec '{spec.get('name')}' in a tab"

    async def open_staging_panel(self, *, focus: bool = True) -> str:
        from tui.widgets.staging_panel import StagingPanel

        tabs = self.query_one("#tabs", TabArea)
        opened = not tabs.query("#staging")
        if opened:  # a new panel reads the staging DB itself; no second full read meanwhile
            await tabs.add_pane(StagingPanel(self.staging_watch))
        tabs.active = "staging"
        if focus:
            self.call_after_refresh(tabs.query_one(StagingPanel).focus_first)
        self._show_tabs()
        if not opened:
            self.staging_watch.refresh_now()
        return f"Opened the staging panel ({counted(len(self.staged_changes), 'staged change')})"

    def _show_tabs(self) -> None:
        """Leave the full-width chat so a tab that just opened is visible."""
        if self.screen.has_class("-chat-full"):
            self.action_toggle_chat()

    def list_open_tabs(self) -> list[dict[str, Any]]:
        found = [{"id": "home", "kind": "home", "title": "Tables"}]
        found += self.opener.open_tabs()
        if self.query("#staging"):
            found.append({"id": "staging", "kind": "staging", "title": "Staged changes"})
        return found

    def _tint(self, tab: TableTab) -> None:
        tab.set_staged(self.staged_changes)

    async def on_home_tab_open_table(self, message: HomeTab.OpenTable) -> None:
        await self.run_action_safely_open(message.table)

    async def run_action_safely_open(self, table: str) -> None:
        """Open a table tab; a failure becomes a notification."""
        await self.run_action_safely(self.open_table(table))

    def on_table_view_row_chosen(self, message: TableView.RowChosen) -> None:
        from tui.screens.row_detail import RowDetailScreen

        title = message.view.source.title
        self.push_screen(RowDetailScreen(title, message.values, message.staged))

    async def on_chip_clicked(self, message: ChipClicked) -> None:
        await self.run_chip(message.action)

    async def run_chip(self, action: dict[str, Any]) -> None:
        """Do what a chip names; if it cannot (table gone, spec deleted) say why."""
        kind = action.get("kind")
        if kind == "openTable":
            job = self.open_table(str(action.get("table")), action.get("query"))
        elif kind == "openJoinedView":
            job = self.open_joined_view(action)
        elif kind == "openSavedSpec":
            job = self._open_spec_by_name(str(action.get("name")))
        elif kind == "openStagingPanel":
            job = self.open_staging_panel()
        elif kind == "buildIndex":
            await self._build_index_from_chip(action)
            return
        else:
            self.notify(
                f"This chip cannot be opened here (unknown action {kind!r}).",
                severity="warning",
                markup=False,
            )
            return
        await self.run_action_safely(job)

    async def _build_index_from_chip(self, action: dict[str, Any]) -> None:
        """A line in the chat that estimates, asks, then builds the table's index."""
        from tui.index_chip import IndexBuildLine, chip_request

        request = chip_request(action)
        if request is None:
            self.notify("This chip names no table and columns to index.", severity="warning")
            return
        for running in self.chat.log_view.query(IndexBuildLine):
            if running.active and running.table == request[0]:
                self.notify(
                    f"The index of {running.shown_table} is already being built: its line in "
                    "the chat shows how far it is.",
                    markup=False,
                )
                running.scroll_visible()
                return
        line = IndexBuildLine(
            self.store,
            *request,
            profile=self.settings.profile,
            region=self.settings.region,
        )
        await self.chat.log_view.mount(line)
        self.chat.log_view.anchor()

    async def _open_spec_by_name(self, name: str) -> str:
        from agent.specs import SpecBook

        book = getattr(self.session, "specs", None) or SpecBook(None, self.store.identity)
        spec = book.get_spec(name)
        return await self.open_saved_spec(spec.to_dict())

    async def run_action_safely(self, job: Any) -> None:
        """Await an opening job; a TabletalkError becomes a notification with its fix."""
        try:
            await job
        except TabletalkError as exc:
            self.notify(
                exc.render(), title=f"Cannot open: {exc.title}", severity="error", markup=False
            )
