"""Table-tab pages of a DynamoDB table: Scan with ExclusiveStartKey (or a PartiQL filter with
NextToken), one page of a few hundred items per fetch, so a large table opens at once."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent.stores.dynamodb.client import translate
from agent.stores.dynamodb.partiql_guard import check_select, quote_name
from agent.stores.dynamodb.types import TYPE_NAMES, item_to_plain, type_name
from agent.stores.paging import PAGE_SIZE, ColumnSpec, Page, TabClosed

if TYPE_CHECKING:
    from agent.stores.dynamodb.store import DynamoDBStore


class DynamoRowSource:
    """Items of one table in scan order; columns are the key attributes, then every other
    attribute in the order first seen, growing as later pages load (at most MAX_COLUMNS: the
    row detail shows the whole item)."""

    truncated = False
    MAX_COLUMNS = 60

    def __init__(self, store: DynamoDBStore, table: str, where: str | None = None) -> None:
        self.store = store
        self.table = table
        self.where = (where or "").strip() or None
        self.title = table if not self.where else f"{table} ⧩"
        self.key_columns = store.key_attributes(table)
        self._statement = None
        if self.where:
            self._statement = f"SELECT * FROM {quote_name(table)} WHERE {self.where}"
            check_select(self._statement)
        self._lock = threading.Lock()
        self._rows: list[dict[str, Any]] = []
        self._cursor: Any = None
        self._done = False
        self._closed = False
        self._count: int | None = None
        self._seen: dict[str, None] = dict.fromkeys(self.key_columns)
        key_types = store.key_types(table)
        self.columns = [
            ColumnSpec(c, TYPE_NAMES.get(key_types.get(c, ""), "").lower(), key=True)
            for c in self.key_columns
        ]
        self._fill(PAGE_SIZE)

    def _fetch(self) -> None:
        """One more chunk from DynamoDB (caller holds the lock)."""
        try:
            if self._statement is not None:
                kwargs: dict[str, Any] = {"Statement": self._statement}
                if self._cursor:
                    kwargs["NextToken"] = self._cursor
                response = self.store.client.execute_statement(**kwargs)
                self._cursor = response.get("NextToken")
            else:
                kwargs = {"TableName": self.table, "Limit": PAGE_SIZE}
                if self._cursor:
                    kwargs["ExclusiveStartKey"] = self._cursor
                response = self.store.client.scan(**kwargs)
                self._cursor = response.get("LastEvaluatedKey")
        except (ClientError, BotoCoreError) as exc:
            if self._closed:
                raise TabClosed from exc
            action = "dynamodb:PartiQLSelect" if self._statement else "dynamodb:Scan"
            raise translate(exc, action=action, table=self.table, region=self.store.region) from exc
        keys = self.key_columns
        for raw in response.get("Items", []):
            item = item_to_plain(raw)
            self._rows.append({**{k: item[k] for k in keys if k in item}, **item})
            if len(self._seen) < self.MAX_COLUMNS and not self._seen.keys() >= item.keys():
                self._grow(raw)
        self._done = not self._cursor

    def _grow(self, raw: dict[str, Any]) -> None:
        """Add the item's new attributes as columns, typed by the value first seen (a new
        list: readers keep theirs)."""
        added = [a for a in raw if a not in self._seen][: self.MAX_COLUMNS - len(self._seen)]
        self._seen.update(dict.fromkeys(added))
        self.columns = [
            *self.columns,
            *(ColumnSpec(a, TYPE_NAMES.get(type_name(raw[a]), "").lower()) for a in added),
        ]

    def _fill(self, upto: int) -> None:
        while len(self._rows) < upto and not self._done and not self._closed:
            self._fetch()

    def count(self) -> int:
        """Items read so far when the end is reached; else DynamoDB's approximate count."""
        with self._lock:
            if self._done:
                return len(self._rows)
        if self._count is None:
            approx = int(self.store.describe_raw(self.table).get("ItemCount", 0))
            self._count = max(approx, len(self._rows) + (0 if self._done else 1))
        return self._count

    def page(self, number: int) -> Page:
        """Rows `number * PAGE_SIZE ...`, scanning forward as far as needed."""
        with self._lock:
            self._fill((number + 1) * PAGE_SIZE)
            chunk = self._rows[number * PAGE_SIZE : (number + 1) * PAGE_SIZE]
            columns = self.columns
        names = [c.name for c in columns]
        rows = [tuple(r.get(n) for n in names) for r in chunk]
        keys = [{k: r.get(k) for k in self.key_columns} for r in chunk]
        return Page(number, rows, keys, [], columns=columns, records=chunk)

    def whole_row(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """None: pages hold each item whole (`Page.records`)."""
        return None

    def invalidate(self) -> None:
        """Read again from the start (the table changed)."""
        with self._lock:
            self._rows, self._cursor, self._done, self._count = [], None, False, None
            # the columns seen stay: a tab never loses a column it showed

    def close(self) -> None:
        """Stop fetching; a read in flight ends as TabClosed."""
        self._closed = True
