"""Opening tabs: tables, filtered tables, joined views and saved specs, each at most once."""

from __future__ import annotations

import json
import re
from typing import Any

from agent.errors import StoreError, UnknownTableError
from agent.stores.base import Store
from agent.stores.paging import QueryRowSource, RowSource
from agent.stores.sqlite_readonly import quote_ident as _quote
from tui.widgets.tab_area import TabArea
from tui.widgets.table_tab import TableTab


def tab_id(kind: str, *parts: str) -> str:
    """A widget id from free text (ids allow letters, digits, - and _): readable, and unique
    through a digest of the parts themselves (`a b` and `a:b` read alike once cleaned)."""
    import hashlib  # not at start-up: only when a tab opens

    readable = re.sub(r"[^A-Za-z0-9_-]", "_", "-".join([kind, *parts]))[:120]
    digest = hashlib.blake2s(json.dumps([kind, *parts]).encode(), digest_size=8).hexdigest()
    return f"{readable}-{digest}"


class TabOpener:
    """Builds the row source for what is asked and adds (or re-selects) its tab."""

    def __init__(self, store: Store, tabs: TabArea) -> None:
        self.store = store
        self.tabs = tabs

    def resolve(self, table: str) -> str:
        """The table's own name (matched case-insensitively), or UnknownTableError."""
        known = self.store.list_tables()
        if table not in known:
            match = next((t for t in known if t.lower() == table.lower()), None)
            if match is None:
                raise UnknownTableError(
                    f"There is no table '{table}' in {self.store.label}.",
                    fix=f"Tables: {', '.join(known) or '(none)'}.",
                )
            table = match
        return table

    def table_source(self, table: str, condition: str | None = None) -> RowSource:
        """Paged rows of `table`, read through the store (filtered by a condition in its
        query language)."""
        return self.store.pages(self.resolve(table), condition)

    async def open_table(self, table: str, condition: str | None = None) -> TableTab:
        """Open (or focus) the tab of `table`, filtered by `condition` when given."""
        real_table = self.resolve(table)
        source = self.table_source(real_table, condition)
        name = source.title if not condition else f"{real_table} ({condition})"
        ident = tab_id("table", real_table, condition or "")
        existing = self._existing(ident)
        if existing is not None:
            source.close()
            return existing
        tab = TableTab(
            name,
            source,
            id=ident,
            kind="table",
            table=real_table,
            make_source=lambda cond: self.table_source(real_table, cond),
            language=self.store.query_language,
            condition=condition,
        )
        await self._add(tab)
        return tab

    async def open_joined_view(self, spec: dict[str, Any]) -> TableTab:
        """A read-only join of two tables on one column each (left join, first rows)."""
        left, right = str(spec["left"]), str(spec["right"])
        left_on, right_on = str(spec["left_on"]), str(spec["right_on"])
        ident = tab_id("join", left, left_on, right, right_on)
        existing = self._existing(ident)
        if existing is not None:
            return existing
        if not self.store.supports_sql_joins:
            raise StoreError(
                f"Joined views need SQL joins, which {self.store.label} does not offer.",
                fix=f"Open {left} and {right} in separate tabs instead.",
            )
        left_info = self.store.describe_table(left)
        right_info = self.store.describe_table(right)
        picks = [f"l.{_quote(c.name)} AS {_quote(c.name)}" for c in left_info.columns]
        picks += [
            f"r.{_quote(c.name)} AS {_quote(right + '.' + c.name)}" for c in right_info.columns
        ]
        sql = (
            f"SELECT {', '.join(picks)} FROM {_quote(left)} AS l LEFT JOIN {_quote(right)} AS r "
            f"ON l.{_quote(left_on)} = r.{_quote(right_on)}"
        )
        source = QueryRowSource(self.store, left, sql, left_info.key_columns)
        title = f"{left} ⋈ {right}"
        label = str(spec.get("label") or title)
        tab = TableTab(title, source, id=ident, kind="joined", table=left, note=label)
        await self._add(tab)
        return tab

    async def open_saved_spec(self, spec: dict[str, Any]) -> TableTab:
        """A saved view (table + filter) or saved query."""
        table, query = spec.get("table"), str(spec.get("query") or "")
        if table:
            condition = (
                query
                if query and not query.lstrip().lower().startswith(("select", "with"))
                else None
            )
            if condition or not query:
                return await self.open_table(str(table), condition)
        ident = tab_id("spec", str(spec.get("name", "")))
        existing = self._existing(ident)
        if existing is not None:
            return existing
        source = QueryRowSource(self.store, str(spec.get("name", "query")), query)
        tab = TableTab(
            str(spec.get("name", "query")), source, id=ident, kind="spec", note=query[:80]
        )
        await self._add(tab)
        return tab

    def _existing(self, ident: str) -> TableTab | None:
        found = self.tabs.query(f"#{ident}")
        if found:
            self.tabs.active = ident
            return found.first(TableTab)
        return None

    async def _add(self, tab: TableTab) -> None:
        await self.tabs.add_pane(tab)
        self.tabs.active = tab.id or ""

    def open_tabs(self) -> list[dict[str, Any]]:
        """The tabs now open, for listOpenTabs."""
        found = []
        for pane in self.tabs.query(TableTab):
            found.append(
                {"id": pane.id, "kind": pane.kind, "title": pane.tab_title, "table": pane.table}
            )
        return found
