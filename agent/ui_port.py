"""The interface UI tools act through; the TUI implements it, headless runs report instead."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class UiPort(Protocol):
    """What tools may ask of the screen. Methods are called from the loop's worker thread."""

    def open_table(self, table: str, query: str | None = None) -> str:
        """Open `table` (optionally filtered by a read-only query) in a tab; say what opened."""
        ...

    def open_joined_view(self, spec: dict[str, Any]) -> str:
        """Open a joined view described by `spec`; say what opened."""
        ...

    def open_saved_spec(self, spec: dict[str, Any]) -> str:
        """Open a saved query or view; say what opened."""
        ...

    def open_staging_panel(self) -> str:
        """Open the staging review panel; say what opened."""
        ...

    def list_open_tabs(self) -> list[dict[str, Any]]:
        """The tabs open now, each `{"id", "kind", "title"}`."""
        ...


@dataclass
class HeadlessUi:
    """No screen: records what would have opened so the transcript can say so."""

    opened: list[dict[str, Any]] = field(default_factory=list)

    def open_table(self, table: str, query: str | None = None) -> str:
        self.opened.append({"kind": "table", "table": table, "query": query})
        return f"No screen (headless): would open table '{table}'" + (
            f" filtered by: {query}" if query else ""
        )

    def open_joined_view(self, spec: dict[str, Any]) -> str:
        self.opened.append({"kind": "joined", **spec})
        return f"No screen (headless): would open joined view {spec}"

    def open_saved_spec(self, spec: dict[str, Any]) -> str:
        self.opened.append({"kind": "spec", **spec})
        return f"No screen (headless): would open saved spec '{spec.get('name')}'"

    def open_staging_panel(self) -> str:
        self.opened.append({"kind": "staging"})
        return "No screen (headless): would open the staging panel; use `tabletalk staged list`."

    def list_open_tabs(self) -> list[dict[str, Any]]:
        return []
