"""The DynamoDB store: tables of an account and region, read with capacity guards, written
only by `apply` (TransactWriteItems, see apply.py)."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import threading
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent.errors import StagingError, UnknownTableError
from agent.stop import reads_should_stop
from agent.stores.base import (
    ApplyResult,
    ChangeToApply,
    Item,
    Key,
    Landed,
    QueryResult,
    RetryListener,
    Store,
    TableInfo,
    stopped_error,
)
from agent.stores.dynamodb import apply as apply_mod
from agent.stores.dynamodb import batch_get
from agent.stores.dynamodb.batch_get import holds_item
from agent.stores.dynamodb.client import (
    SCHEME,
    Target,
    account_of,
    call,
    endpoint_of,
    make_client,
    parse_url,
    translate,
)
from agent.stores.dynamodb.describe import index_stats, narrowing_hint, size_label, table_info
from agent.stores.dynamodb.keys import normalize_key
from agent.stores.dynamodb.partiql_guard import check_select, quote_name, table_of
from agent.stores.dynamodb.reads import Limits, ReadReport, scan_pages, statement_pages, stop_note
from agent.stores.dynamodb.retries import StoreRetries
from agent.stores.dynamodb.types import (
    TYPE_NAMES,
    check_plain,
    item_to_plain,
    type_name,
    value_to_wire,
)
from agent.stores.paging import RowSource
from agent.stores.references import Reference, ReferencingRows

SAMPLE_ITEMS = 50
TRANSACTION_LIMIT = 100


class DynamoDBStore(Store):
    """DynamoDB tables (optionally only those matching a glob) as a store."""

    kind = "dynamodb"

    def __init__(
        self, client: Any, *, region: str, account: str, target: Target, limits: Limits
    ) -> None:
        self.client = client
        self.region = region
        self.endpoint = endpoint_of(client)
        self.target = target
        self.limits = limits
        self.identity = f"dynamodb:{account}:{region}:{self.endpoint or 'aws'}"
        self.label = f"DynamoDB {region}" + (f" at {self.endpoint}" if self.endpoint else "")
        self._described: dict[str, dict[str, Any]] = {}
        self._key_shapes: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {}
        self._samples: dict[str, tuple[dict[str, Counter[str]], int]] = {}
        self._local = threading.local()
        self._lock = threading.Lock()
        self._read_units = 0.0
        self._retries = StoreRetries(client)

    @classmethod
    def open(
        cls,
        db: str,
        *,
        profile: str | None = None,
        region: str | None = None,
        limits: Limits | None = None,
    ) -> DynamoDBStore:
        """Open `dynamodb://REGION[?tables=GLOB]` with the profile's credentials (`region`:
        used when the address names none, before the profile's own)."""
        target = parse_url(db)
        client, session, region = make_client(target.region or region, profile)
        endpoint = endpoint_of(client)
        account = account_of(session, region, endpoint)
        return cls(client, region=region, account=account, target=target, limits=limits or Limits())

    # -- capabilities ---------------------------------------------------------------------------

    @property
    def no_tables_hint(self) -> str:
        """No table in the region (or none matching the `tables=` glob) for these credentials."""
        matching = f" matching {self.target.tables!r}" if self.target.tables else ""
        return (
            f"No DynamoDB tables{matching} in {self.region} for this profile. Check --region "
            "and --profile (or the glob in `?tables=`), or create the demo tables with "
            "`tabletalk demo dynamodb`."
        )

    @property
    def query_language(self) -> str:
        return "PartiQL"

    @property
    def filter_example(self) -> str:
        return "\"status\" = 'pending'"

    @property
    def db_arg(self) -> str:
        glob = f"?tables={self.target.tables}" if self.target.tables else ""
        return f"{SCHEME}{self.region}{glob}"

    @property
    def max_transaction_items(self) -> int | None:
        return TRANSACTION_LIMIT

    @property
    def value_checker(self) -> Callable[[str, Any], None] | None:
        """Any attribute name; values in the plain-JSON convention (see types.py)."""
        return check_plain

    # -- accounting -----------------------------------------------------------------------------

    def _report(self) -> ReadReport:
        report = getattr(self._local, "report", None)  # per-thread, created on first read
        if report is None:
            report = self._local.report = ReadReport()
        return report

    def take_read_report(self) -> dict[str, Any] | None:
        """What the reads since the last call cost (read units, items scanned, early stop)."""
        report: ReadReport | None = getattr(self._local, "report", None)
        self._local.report = None
        if report is None:
            return None
        with self._lock:
            self._read_units += report.read_units
        return report.to_dict()

    @property
    def read_units_total(self) -> float | None:
        """Read units consumed by every counted read of this store."""
        with self._lock:
            return self._read_units

    @contextlib.contextmanager
    def bounded(self, table: str | None, action: str) -> Iterator[ReadReport]:
        """One capped read: its own caps, its cost added to the call's report, errors in one
        line; an early stop is explained with the key and indexes to narrow by."""
        op = ReadReport()
        try:
            yield op
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, action=action, table=table, region=self.region) from exc
        finally:
            total = self._report()
            total.read_units += op.read_units
            total.items_scanned += op.items_scanned
            if op.stopped_early:
                hint = self._hint(table) if table else "the table's key"
                total.stopped_early = stop_note(op, self.limits, table or "the table", hint)

    def _call(self, method: str, action: str, table: str | None, **kwargs: Any) -> Any:
        return call(getattr(self.client, method), action, table, self.region, **kwargs)

    # -- tables ---------------------------------------------------------------------------------

    def list_tables(self) -> list[str]:
        """Table names (every page), filtered by the address's `tables` glob."""
        names: list[str] = []
        start: str | None = None
        while True:
            if start and reads_should_stop():  # Stop: no further page is asked for
                raise stopped_error()
            kwargs = {"ExclusiveStartTableName": start} if start else {}
            page = self._call("list_tables", "dynamodb:ListTables", None, **kwargs)
            names.extend(page.get("TableNames", []))
            start = page.get("LastEvaluatedTableName")
            if not start:
                break
        glob = self.target.tables
        return sorted(n for n in names if glob is None or fnmatch.fnmatchcase(n, glob))

    def _resolve(self, table: str) -> str:
        """The table's exact name: DescribeTable first (one request, cached), then the table
        list for a case-insensitive match or an error naming the tables."""
        if table in self._described:
            return table
        glob = self.target.tables
        if glob is None or fnmatch.fnmatchcase(str(table), glob):
            try:
                found = self.client.describe_table(TableName=str(table))
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code")
                if code not in ("ResourceNotFoundException", "ValidationException"):
                    raise translate(
                        exc, action="dynamodb:DescribeTable", table=table, region=self.region
                    ) from exc
            except BotoCoreError as exc:
                raise translate(
                    exc, action="dynamodb:DescribeTable", table=table, region=self.region
                ) from exc
            else:
                self._described[table] = found["Table"]
                return table
        tables = self.list_tables()
        if table in tables:
            return table
        match = next((t for t in tables if t.lower() == str(table).lower()), None)
        if match is None:
            raise UnknownTableError(
                f"no table named {table!r} in {self.label}",
                fix=f"Valid tables: {', '.join(tables) or '(none)'}. Call listTables to see them.",
            )
        return match

    def _describe(self, table: str) -> dict[str, Any]:
        name = self._resolve(table)
        if name not in self._described:
            found = self._call("describe_table", "dynamodb:DescribeTable", name, TableName=name)
            self._described[name] = found["Table"]
        return self._described[name]

    def _key_shape(self, table: str) -> tuple[str, tuple[str, ...], dict[str, str]]:
        """(table name, key attributes, their types), from the cached DescribeTable; looked up
        once per name, as staging asks it for every key."""
        shape = self._key_shapes.get(table)
        if shape is None:
            raw = self._describe(table)
            schema = raw["KeySchema"]
            keys = tuple(
                k["AttributeName"] for k in sorted(schema, key=lambda k: k["KeyType"] != "HASH")
            )
            types = {
                d["AttributeName"]: d["AttributeType"]
                for d in raw["AttributeDefinitions"]
                if d["AttributeName"] in keys
            }
            shape = self._key_shapes[table] = (str(raw["TableName"]), keys, types)
        return shape

    def key_attributes(self, table: str) -> tuple[str, ...]:
        """Partition key, then sort key."""
        return self._key_shape(table)[1]

    def key_types(self, table: str) -> dict[str, str]:
        """Key attribute → S, N or B."""
        return dict(self._key_shape(table)[2])

    def schema(self, table: str) -> TableInfo:
        """Name, key and the attributes seen in a small sample (keys first)."""
        return self._info(table, with_extra=False)

    def describe_table(self, table: str) -> TableInfo:
        """Key, attribute types seen, indexes with projections, billing, approximate counts."""
        return self._info(table, with_extra=True)

    def _info(self, table: str, *, with_extra: bool) -> TableInfo:
        raw = self._describe(table)
        name = raw["TableName"]
        seen, sampled = self._sample_types(name)
        keys, types = self.key_attributes(name), self.key_types(name)
        return table_info(raw, keys, types, seen, sampled, with_extra=with_extra)

    def _sample_types(self, table: str) -> tuple[dict[str, Counter[str]], int]:
        """Attribute → types seen in the first SAMPLE_ITEMS items (scanned once per store)."""
        cached = self._samples.get(table)
        if cached is not None:
            return cached
        response = self._call(
            "scan",
            "dynamodb:Scan",
            table,
            TableName=table,
            Limit=SAMPLE_ITEMS,
            ReturnConsumedCapacity="TOTAL",
        )
        self._report().add(response)
        seen: dict[str, Counter[str]] = {}
        for item in response.get("Items", []):
            for attr, wire in item.items():
                seen.setdefault(attr, Counter())[type_name(wire)] += 1
        self._samples[table] = (seen, len(response.get("Items", [])))
        return self._samples[table]

    # -- reads ----------------------------------------------------------------------------------

    def normalize_key(self, table: str, key: Key) -> Key:
        """Check `key` names exactly the key attributes; coerce numbers given as text."""
        name, wanted, types = self._key_shape(table)
        return normalize_key(name, wanted, types, key)

    def wire_key(self, table: str, key: Key) -> dict[str, Any]:
        """A normalised key as the low-level API takes it."""
        return {k: value_to_wire(v, k) for k, v in key.items()}

    def get_item(self, table: str, key: Key) -> Item | None:
        """The item with this key (strongly consistent read), or None."""
        name = self._resolve(table)
        key = self.normalize_key(name, key)
        response = self._call(
            "get_item",
            "dynamodb:GetItem",
            name,
            TableName=name,
            Key=self.wire_key(name, key),
            ConsistentRead=True,
            ReturnConsumedCapacity="TOTAL",
        )
        self._report().add({"ConsumedCapacity": response.get("ConsumedCapacity")})
        self._report().items_scanned += 1 if "Item" in response else 0
        raw = response.get("Item")
        return None if raw is None else self._ordered(name, item_to_plain(raw))

    def get_items(self, table: str, keys: list[Key]) -> list[Item | None]:
        """Items for many keys with BatchGetItem (100 keys a call, consistent reads)."""
        return batch_get.get_items(self, table, keys)

    def _ordered(self, table: str, item: Item) -> Item:
        keys = self._key_shape(table)[1]
        return {
            **{k: item[k] for k in keys if k in item},
            **{k: v for k, v in item.items() if k not in keys},
        }

    def query(self, sql: str, limit: int | None = None) -> QueryResult:
        """One PartiQL SELECT (refused otherwise), NextToken-paged up to `limit`, capped."""
        tokens = check_select(sql)
        named = table_of(tokens)
        table = self._resolve(named[0]) if named else None
        if named and table != named[0]:
            # The statement runs as written, and DynamoDB's names are case-sensitive: a name
            # matched case-insensitively may be another table, one the address's glob hides.
            raise UnknownTableError(
                f"no table named {named[0]!r} in {self.label}",
                fix=f"Table names are case-sensitive; write FROM {quote_name(table or '')}.",
            )
        want = limit if limit is not None else self.limits.max_scan_items
        rows: list[Item] = []
        with self.bounded(table, "dynamodb:PartiQLSelect") as report:
            for response in statement_pages(self.client, sql, report, self.limits, want + 1):
                rows.extend(item_to_plain(i) for i in response.get("Items", []))
        truncated = len(rows) > want or report.stopped_early is not None
        rows = rows[:want]
        if table is not None:
            rows = [self._ordered(table, r) for r in rows]
        columns: dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        return QueryResult(list(columns), rows, truncated)

    def _hint(self, table: str) -> str:
        return narrowing_hint(table, self.key_attributes(table), self._describe(table))

    def count(self, table: str, where: str | None = None) -> int:
        """Items of `table` (matching a PartiQL condition), counted up to the scan caps."""
        name = self._resolve(table)
        if where:
            keys = ", ".join(quote_name(k) for k in self.key_attributes(name))
            sql = f"SELECT {keys} FROM {quote_name(name)} WHERE {where}"
            return len(self.query(sql, limit=self.limits.max_scan_items).rows)
        total = 0
        request = {"TableName": name, "Select": "COUNT"}
        with self.bounded(name, "dynamodb:Scan") as report:
            for response in scan_pages(self.client, request, report, self.limits):
                total += int(response.get("Count", 0))
        return total

    def sample_values(self, table: str, column: str, limit: int = 20) -> list[dict[str, Any]]:
        """Most frequent values of an attribute in a bounded scan (a sample on big tables)."""
        name = self._resolve(table)
        counts: Counter[str] = Counter()
        values: dict[str, Any] = {}
        request = {
            "TableName": name,
            "ProjectionExpression": "#a",
            "ExpressionAttributeNames": {"#a": column},
        }
        with self.bounded(name, "dynamodb:Scan") as report:
            for response in scan_pages(self.client, request, report, self.limits):
                for raw in response.get("Items", []):
                    if column in raw:
                        value = item_to_plain(raw)[column]
                        text = json.dumps(value, sort_keys=True, default=str)
                        counts[text] += 1
                        values[text] = value
        return [{"value": values[t], "count": c} for t, c in counts.most_common(limit)]

    def index_stats(self, table: str) -> list[dict[str, Any]]:
        """Each GSI/LSI with key schema, projection, status and approximate item count."""
        return index_stats(self._describe(table))

    def referencing_rows(
        self,
        table: str,
        keys: list[Key],
        also: tuple[Reference, ...] = (),
        examples: int = 3,
        deleted: Mapping[str, list[Key]] | None = None,
    ) -> list[ReferencingRows]:
        """Items that reference these items of `table` through declared relationships (DynamoDB
        has no foreign keys): an index Query per value when an index fits, else a bounded Scan.
        Items `deleted` names (keys per table, deleted in the same commit) are not counted."""
        from agent.stores.dynamodb.references import referencing_rows

        return referencing_rows(self, table, keys, also, examples, deleted)

    def watch_retries(self, listener: RetryListener | None) -> None:
        """Tell `listener` while DynamoDB throttles and botocore retries (see retries.py)."""
        self._retries.listener = listener

    def value_type(self, value: Any) -> str | None:
        """DynamoDB's type of a plain value: Number, String, String Set, List, Map, ..."""
        try:
            return TYPE_NAMES.get(type_name(value_to_wire(value)))
        except StagingError:
            return None

    def holds(self, table: str, key: Key, values: Item, *, whole: bool = False) -> bool:
        """Like Store.holds, with null meaning "no such attribute" (how updates remove one)."""
        return holds_item(self.get_item(table, key), values, whole)

    def holds_many(
        self, table: str, checks: Sequence[tuple[Key, Item]], *, whole: bool = False
    ) -> list[bool]:
        """`holds` for many pairs, the items read with BatchGetItem (`get_items`)."""
        items = self.get_items(table, [key for key, _values in checks])
        pairs = zip(items, checks, strict=True)
        return [holds_item(item, values, whole) for item, (_key, values) in pairs]

    def holds_as_read(self, table: str, item: Item | None, values: Item) -> bool | None:
        """`holds` judged on an item already read: the same comparison, no second read."""
        return holds_item(item, values, False)

    def size_label(self, table: str) -> str:
        """Key schema and DynamoDB's approximate item count (no scan)."""
        return size_label(self.key_attributes(table), self._describe(table))

    def describe_raw(self, table: str) -> dict[str, Any]:
        """DescribeTable's answer for `table` (cached)."""
        return self._describe(table)

    def pages(self, table: str, where: str | None = None) -> RowSource:
        """Scan (or a PartiQL filter) pages of `table`, fetched as the tab scrolls."""
        from agent.stores.dynamodb.paging import DynamoRowSource

        name = self._resolve(table)
        return DynamoRowSource(self, name, where)

    def scan_rows(
        self, table: str, columns: Sequence[str], batch_size: int = 1000
    ) -> Generator[list[Item], None, None]:
        """Every item's key and `columns` by paginated Scan, uncapped (`Store.scan_rows`)."""
        from agent.stores.dynamodb.scan_rows import scan_all

        name = self._resolve(table)
        keys = self.key_attributes(name)
        return scan_all(self.client, name, [*keys, *columns], batch_size, region=self.region)

    # -- writes ---------------------------------------------------------------------------------

    def apply(
        self, changes: list[ChangeToApply], progress: Any = None, landed: Landed | None = None
    ) -> ApplyResult:
        """TransactWriteItems of ≤ 100 changes each, each reported to `landed` once durable;
        a conflict stops the commit there."""
        return apply_mod.apply_changes(self, changes, progress, landed)

    def close(self) -> None:
        """Nothing to release (boto3 clients close with the process)."""
        return None
