"""The DynamoDB store against moto's server: open, read tools, caps, types, staging, commit."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest

from agent.errors import ReadOnlyQueryError, StoreError, UnknownTableError
from agent.staging import StagingArea
from agent.stores.dynamodb.reads import Limits
from agent.stores.dynamodb.store import DynamoDBStore
from agent.stores.open import open_store
from agent.tools.base import ToolContext
from agent.tools.registry import run_tool
from tests.support.moto_dynamodb import REGION


def raw_client() -> Any:
    """Another client of the same endpoint (a colleague, or the bare-boto3 floor)."""
    return boto3.client("dynamodb", region_name=REGION)


def deliver_order_4_elsewhere() -> None:
    """A colleague's write to an item after it was staged: the commit finds a conflict."""
    set_status_elsewhere(4, "delivered")


def set_status_elsewhere(order: int, status: str) -> None:
    """A colleague sets an order's status, outside tabletalk."""
    raw_client().update_item(
        TableName="orders",
        Key={"id": {"N": str(order)}},
        UpdateExpression="SET #s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": status}},
    )


def make_orders(client: Any, count: int) -> None:
    client.create_table(
        TableName="orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "id", "AttributeType": "N"},
            {"AttributeName": "status", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {
                "IndexName": "status-index",
                "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    for start in range(0, count, 25):
        client.batch_write_item(
            RequestItems={
                "orders": [
                    {
                        "PutRequest": {
                            "Item": {
                                "id": {"N": str(i)},
                                "status": {"S": "pending" if i % 2 else "shipped"},
                                "total": {"N": f"{i}.1"},
                            }
                        }
                    }
                    for i in range(start + 1, min(start + 25, count) + 1)
                ]
            }
        )


@pytest.fixture
def store(dynamo_endpoint: str) -> DynamoDBStore:
    make_orders(raw_client(), 120)
    opened = open_store(f"dynamodb://{REGION}")
    assert isinstance(opened, DynamoDBStore)
    return opened


@pytest.fixture
def area(store: DynamoDBStore, tmp_path: Path) -> Any:
    staging = StagingArea(store, tmp_path / "staging.sqlite")
    yield staging
    staging.close()


def tool(store: DynamoDBStore, tmp_path: Path, name: str, /, **args: Any) -> dict[str, Any]:
    from agent.attachments import AttachmentSet
    from agent.specs import SpecBook
    from agent.ui_port import HeadlessUi

    staging = StagingArea(store, tmp_path / "tool-staging.sqlite")
    try:
        ctx = ToolContext(
            store=store,
            staging=staging,
            ui=HeadlessUi(),
            attachments=AttachmentSet(),
            specs=SpecBook(tmp_path / "specs.json", store.identity),
            conversation_id="c1",
        )
        status, result = run_tool(ctx, name, args)
    finally:
        staging.close()
    assert status == "success", result
    return result


def test_identity_is_account_region_and_endpoint(
    store: DynamoDBStore, dynamo_endpoint: str
) -> None:
    assert store.identity == f"dynamodb:123456789012:{REGION}:{dynamo_endpoint}"
    assert dynamo_endpoint in store.label  # the header shows which endpoint
    assert store.db_arg == f"dynamodb://{REGION}"


def test_table_glob_limits_the_tables(store: DynamoDBStore) -> None:
    raw_client().create_table(
        TableName="audit",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    assert store.list_tables() == ["audit", "orders"]
    limited = open_store(f"dynamodb://{REGION}?tables=ord*")
    assert limited.list_tables() == ["orders"]
    with pytest.raises(UnknownTableError):
        limited.get_item("audit", {"k": "x"})
    assert store.get_item("ORDERS", {"id": 1}) is not None, "a unique case-insensitive match"


def test_read_tools_report_capacity(store: DynamoDBStore, tmp_path: Path) -> None:
    described = tool(store, tmp_path, "describeTable", table="orders")
    assert described["key"] == ["id"]
    assert described["indexes"][0]["name"] == "status-index"
    assert "approximation" in described["note"]
    item = tool(store, tmp_path, "getItem", table="orders", key={"id": 7})
    assert item["item"] == {"id": 7, "status": "pending", "total": 7.1}
    rows = tool(
        store, tmp_path, "runQuery", query='SELECT * FROM "orders" WHERE "status" = \'shipped\''
    )
    assert rows["rowCount"] == 50 and {r["status"] for r in rows["rows"]} == {"shipped"}
    counted = tool(store, tmp_path, "countItems", table="orders")
    assert counted["count"] == 120
    assert counted["capacity"]["itemsScanned"] == 120


def test_a_write_statement_is_refused_and_nothing_changes(
    store: DynamoDBStore, tmp_path: Path
) -> None:
    from agent.attachments import AttachmentSet
    from agent.specs import SpecBook
    from agent.ui_port import HeadlessUi

    staging = StagingArea(store, tmp_path / "s.sqlite")
    ctx = ToolContext(
        store=store,
        staging=staging,
        ui=HeadlessUi(),
        attachments=AttachmentSet(),
        specs=SpecBook(tmp_path / "specs.json", store.identity),
        conversation_id="c1",
    )
    status, result = run_tool(ctx, "runQuery", {"query": 'DELETE FROM "orders" WHERE "id" = 7'})
    staging.close()
    assert status == "error" and "SELECT" in str(result)
    assert store.get_item("orders", {"id": 7}) is not None


def test_a_count_stops_at_the_scan_cap_and_says_how_to_narrow(
    store: DynamoDBStore, tmp_path: Path
) -> None:
    store.limits = Limits(max_scan_items=50)
    counted = tool(store, tmp_path, "countItems", table="orders")
    assert counted["count"] == 50
    note = counted["capacity"]["stoppedEarly"]
    assert "50 items scanned" in note and "status-index" in note and '"id"' in note


def test_decimals_sets_and_binary_round_trip(store: DynamoDBStore, area: StagingArea) -> None:
    big = "12345678901234567890123456789012345678"
    area.stage(
        "orders",
        "update",
        {"id": 3},
        {"total": 0.1, "big": int(big), "tags": {"$set": ["b", "a"]}, "blob": {"$binary": "AAE="}},
    )
    report = area.commit()
    assert not report.conflicts
    raw = raw_client().get_item(TableName="orders", Key={"id": {"N": "3"}})["Item"]
    assert raw["total"] == {"N": "0.1"} and raw["big"] == {"N": big}
    assert raw["tags"] == {"SS": ["a", "b"]} or set(raw["tags"]["SS"]) == {"a", "b"}
    assert raw["blob"] == {"B": b"\x00\x01"}
    item = store.get_item("orders", {"id": 3})
    assert item is not None and item["big"] == int(big) and item["tags"] == {"$set": ["a", "b"]}
    assert Decimal(repr(item["total"])) == Decimal("0.1")


def test_creates_updates_and_deletes_commit_in_one_transaction(
    store: DynamoDBStore, area: StagingArea
) -> None:
    area.stage("orders", "create", {"id": 500}, {"status": "new", "total": 5})
    area.stage("orders", "update", {"id": 1}, {"status": "cancelled", "total": None})
    area.stage("orders", "delete", {"id": 2})
    report = area.commit()
    assert len(report.committed) == 3 and not report.conflicts
    client = raw_client()
    assert client.get_item(TableName="orders", Key={"id": {"N": "500"}})["Item"]["status"] == {
        "S": "new"
    }
    one = client.get_item(TableName="orders", Key={"id": {"N": "1"}})["Item"]
    assert one["status"] == {"S": "cancelled"} and "total" not in one
    assert "Item" not in client.get_item(TableName="orders", Key={"id": {"N": "2"}})
    assert area.list() == []


def test_a_conflict_reports_the_current_item_and_keeps_everything_staged(
    store: DynamoDBStore, area: StagingArea
) -> None:
    area.stage("orders", "update", {"id": 4}, {"status": "cancelled"})
    area.stage("orders", "update", {"id": 6}, {"status": "cancelled"})
    deliver_order_4_elsewhere()
    report = area.commit()
    assert report.committed == []
    (conflict,) = report.conflicts
    assert conflict.current is not None and conflict.current["status"] == "delivered"
    assert len(area.list()) == 2  # the whole transaction stayed staged
    six = raw_client().get_item(TableName="orders", Key={"id": {"N": "6"}})["Item"]
    assert six["status"] == {"S": "shipped"}


def test_250_changes_commit_as_three_transactions_with_request_tokens(
    store: DynamoDBStore, area: StagingArea
) -> None:
    make_small = raw_client()
    for start in range(121, 251, 25):
        make_small.batch_write_item(
            RequestItems={
                "orders": [
                    {"PutRequest": {"Item": {"id": {"N": str(i)}, "status": {"S": "pending"}}}}
                    for i in range(start, min(start + 25, 251))
                ]
            }
        )
    sent: list[dict[str, Any]] = []
    store.client.meta.events.register(
        "provide-client-params.dynamodb.TransactWriteItems",
        lambda params, **_: sent.append(params),
    )
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 251)], set={"flag": True})
    report = area.commit()
    assert len(report.committed) == 250 and not report.conflicts
    assert [len(p["TransactItems"]) for p in sent] == [100, 100, 50]
    tokens = [p["ClientRequestToken"] for p in sent]
    assert len(set(tokens)) == 3 and all(0 < len(t) <= 36 for t in tokens)


def test_a_transaction_whose_answer_is_lost_is_settled_not_left_staged(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """DynamoDB applies the second of three transactions, then the connection drops before its
    answer arrives. Those 100 changes are in the table: they must leave staging (a later
    commit would call them conflicts, showing the user's own values as "current") and be in the
    history; the 50 never sent stay staged."""
    import botocore.exceptions

    from agent.errors import StoreError

    client = raw_client()
    for start in range(121, 251, 25):
        client.batch_write_item(
            RequestItems={
                "orders": [
                    {"PutRequest": {"Item": {"id": {"N": str(i)}, "status": {"S": "pending"}}}}
                    for i in range(start, min(start + 25, 251))
                ]
            }
        )
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 251)], set={"flag": True})
    answers: list[int] = []

    def drop_the_second_answer(**_: Any) -> None:
        answers.append(1)
        if len(answers) == 2:
            raise botocore.exceptions.ConnectionClosedError(endpoint_url="http://dynamodb")

    store.client.meta.events.register(
        "after-call.dynamodb.TransactWriteItems", drop_the_second_answer
    )
    with pytest.raises(StoreError):
        area.commit()
    flagged = client.scan(TableName="orders", FilterExpression="attribute_exists(flag)")
    assert sorted(int(i["id"]["N"]) for i in flagged["Items"]) == list(range(1, 201))
    again = StagingArea(store, area.path)
    try:
        assert sorted(c.key["id"] for c in again.list()) == list(range(201, 251))
        (entry,) = again.history()
        assert entry.changes == 200
    finally:
        again.close()


def test_a_lost_answer_while_dynamodb_stays_unreachable_is_settled_later(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """The answer of the only transaction is lost and DynamoDB cannot be read either: the
    change stays named by the commit record, and the next operation once DynamoDB answers
    settles it (landed: gone from staging, in the history) instead of showing it staged."""
    import botocore.exceptions

    from agent.errors import StoreError

    area.stage("orders", "update", {"id": 5}, {"status": "cancelled"})
    down = [True]

    def unreachable(**_: Any) -> None:
        if down[0]:
            raise botocore.exceptions.ConnectionClosedError(endpoint_url="http://dynamodb")

    store.client.meta.events.register("after-call.dynamodb.TransactWriteItems", unreachable)
    for read in ("GetItem", "BatchGetItem"):
        store.client.meta.events.register(f"before-send.dynamodb.{read}", unreachable)
    with pytest.raises(StoreError):
        area.commit()
    item = raw_client().get_item(TableName="orders", Key={"id": {"N": "5"}})["Item"]
    assert item["status"] == {"S": "cancelled"}
    with pytest.raises(StoreError):
        area.list()  # cannot say yet whether it landed: never shown as merely staged
    down[0] = False
    assert area.list() == []
    assert [e.changes for e in area.history()] == [1]


def test_a_transaction_retried_after_a_timeout_carries_the_same_request_token(
    store: DynamoDBStore, area: StagingArea
) -> None:
    import json

    import botocore.exceptions

    area.stage("orders", "update", {"id": 9}, {"total": 1})
    area.stage("orders", "update", {"id": 11}, {"total": 2})
    tokens: list[str] = []

    def time_out_once(request: Any, **_: Any) -> None:
        tokens.append(json.loads(request.body)["ClientRequestToken"])
        if len(tokens) == 1:
            raise botocore.exceptions.ReadTimeoutError(endpoint_url=request.url)

    store.client.meta.events.register("before-send.dynamodb.TransactWriteItems", time_out_once)
    report = area.commit()
    assert len(report.committed) == 2
    assert len(tokens) == 2 and tokens[0] == tokens[1], "DynamoDB dedupes a retry by this token"


def test_the_diff_names_the_types_an_update_changes(
    store: DynamoDBStore, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.main import main

    area = StagingArea(store)  # the default place, where `tabletalk staged` looks
    raw_client().update_item(
        TableName="orders",
        Key={"id": {"N": "5"}},
        UpdateExpression="SET tags = :t",
        ExpressionAttributeValues={":t": {"L": [{"S": "gift"}]}},
    )
    change = area.stage(
        "orders",
        "update",
        {"id": 5},
        {"total": "5.1", "status": "held", "tags": {"$set": ["gift"]}},
    )
    diffs = {d.attribute: d for d in area.diff(change)}
    assert (diffs["total"].old_type, diffs["total"].new_type) == ("Number", "String")
    assert (diffs["tags"].old_type, diffs["tags"].new_type) == ("List", "String Set")
    assert diffs["status"].old_type is None, "no type shown when it stays a String"
    area.close()
    assert main(["staged", "list", "--db", f"dynamodb://{REGION}"]) == 0
    listed = capsys.readouterr().out
    assert 'total: 5.1 (Number) → "5.1" (String)' in listed
    assert 'tags: ["gift"] (List) → {"$set": ["gift"]} (String Set)' in listed
    assert 'status: "pending" → "held"' in listed
    assert main(["staged", "diff", "--db", f"dynamodb://{REGION}"]) == 0
    assert 'total: 5.1 (Number) → "5.1" (String)' in capsys.readouterr().out


def test_a_query_cannot_read_a_table_the_glob_hides_by_changing_case(store: DynamoDBStore) -> None:
    """`?tables=ord*` shows "orders"; a table "ORDERS" exists too. A query naming "ORDERS" was
    accepted as "orders" (a case-insensitive match) but sent as written: it read the hidden
    table."""
    client = raw_client()
    client.create_table(
        TableName="ORDERS",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName="ORDERS", Item={"id": {"N": "1"}, "secret": {"S": "hidden"}})
    limited = open_store(f"dynamodb://{REGION}?tables=ord*")
    try:
        for statement in ('SELECT * FROM "ORDERS"', "SELECT * FROM ORDERS WHERE id = 1"):
            with pytest.raises(UnknownTableError, match="no table named 'ORDERS'") as refused:
                limited.query(statement)
            assert 'FROM "orders"' in refused.value.fix
        assert "secret" not in limited.query('SELECT * FROM "orders"', limit=5).rows[0]
    finally:
        limited.close()


def test_a_from_inside_an_ion_literal_cannot_name_the_table_the_glob_checks(
    dynamo_endpoint: str,
) -> None:
    """The guard took the first FROM for the table; DynamoDB's parser reads the first one
    below as part of a `...` Ion literal and reads the table named after the second."""
    client = raw_client()
    for name in ("orders", "secret"):
        client.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
            BillingMode="PAY_PER_REQUEST",
        )
        client.put_item(TableName=name, Item={"id": {"N": "1"}, "v": {"S": f"{name} value"}})
    limited = open_store(f"dynamodb://{REGION}?tables=ord*")
    try:
        with pytest.raises(ReadOnlyQueryError, match="Ion literals"):
            limited.query('SELECT v, `(FROM "orders")` FROM "secret"')
    finally:
        limited.close()


def test_the_home_list_names_the_key_and_the_approximate_count(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 1)
    store = open_store(f"dynamodb://{REGION}")
    assert store.size_label("orders") == "key (id)  ~1 item"


def test_numbers_at_dynamodbs_limits_commit_and_revert(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """A 38-digit number at the top exponent reads back as a 126-digit int; it must still
    guard a commit, and its revert must restore it exactly."""
    top = "9.9999999999999999999999999999999999999E+125"
    raw_client().put_item(
        TableName="orders",
        Item={"id": {"N": "7"}, "status": {"S": "a"}, "top": {"N": top}, "low": {"N": "1E-130"}},
    )
    area.stage("orders", "update", {"id": 7}, {"status": "b", "top": 10**40})
    report = area.commit()
    assert report.ok and len(report.committed) == 1
    area.revert(area.history()[0].id)
    assert area.commit().ok
    item = raw_client().get_item(TableName="orders", Key={"id": {"N": "7"}})["Item"]
    assert Decimal(item["top"]["N"]) == Decimal(top) and item["status"] == {"S": "a"}


@pytest.mark.parametrize(
    "value", [1e300, 2**200 + 1, {"$decimal": "1." + "1" * 45}, 1e-200], ids=str
)
def test_a_number_dynamodb_cannot_hold_is_refused_when_staged(
    store: DynamoDBStore, area: StagingArea, value: Any
) -> None:
    from agent.errors import StagingError

    with pytest.raises(StagingError) as caught:
        area.stage("orders", "update", {"id": 3}, {"total": value})
    assert "38 significant digits" in str(caught.value) and "string" in caught.value.fix
    area.stage("orders", "update", {"id": 3}, {"total": 5})
    assert area.commit().ok


def test_a_commit_over_the_item_size_limit_says_so_and_keeps_the_change(
    store: DynamoDBStore, area: StagingArea
) -> None:
    change = area.stage("orders", "update", {"id": 4}, {"doc": "q" * 420_000})
    with pytest.raises(StoreError) as caught:
        area.commit()
    assert "400 KB" in str(caught.value) and "smaller" in caught.value.fix
    assert "PartiQL" not in caught.value.fix
    assert [c.id for c in area.list()] == [change.id]


def test_a_map_whose_one_key_looks_like_a_tag_stays_a_map(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """A map attribute {"$binary": "AAE="} read back as binary: every edit of its item
    conflicted, and deleting then reverting the item wrote it back as a different type."""
    odd = {"M": {"$binary": {"S": "AAE="}}}
    tagged = {"M": {"$set": {"L": [{"S": "a"}]}}}
    raw_client().put_item(
        TableName="orders",
        Item={"id": {"N": "8"}, "status": {"S": "a"}, "m": odd, "t": tagged},
    )
    area.stage("orders", "update", {"id": 8}, {"status": "b"})
    assert area.commit().ok
    area.stage("orders", "delete", {"id": 8})
    assert area.commit().ok
    area.revert(area.history()[0].id)
    assert area.commit().ok
    item = raw_client().get_item(TableName="orders", Key={"id": {"N": "8"}})["Item"]
    assert item["m"] == odd and item["t"] == tagged and item["status"] == {"S": "b"}


def test_stop_during_a_scan_asks_for_no_further_page(dynamo_endpoint: str) -> None:
    """Stop pressed while a count reads its first page: the count ends with "stopped" after
    that page instead of reading the table to the end (or to the scan cap)."""
    import threading

    from agent.stop import reads_stop_when

    make_orders(raw_client(), 1_100)  # two Scan pages of at most 1,000 items
    opened = open_store(f"dynamodb://{REGION}")
    assert isinstance(opened, DynamoDBStore)
    stop, scans = threading.Event(), []

    def page_read(**_: Any) -> None:
        scans.append(1)
        stop.set()  # Stop, pressed while the first page came back

    opened.client.meta.events.register("after-call.dynamodb.Scan", page_read)
    with reads_stop_when(stop.is_set), pytest.raises(StoreError) as caught:
        opened.count("orders")
    assert caught.value.message == "the query was stopped" and len(scans) == 1
    assert opened.count("orders") == 1_100  # outside the stopped block, reads run in full


def test_stop_while_listing_tables_asks_for_no_further_page(dynamo_endpoint: str) -> None:
    """An account with hundreds of tables lists them 100 a page: Stop pressed meanwhile read
    every page before the turn could end."""
    import threading

    from agent.stop import reads_stop_when

    client = raw_client()
    for n in range(105):
        client.create_table(
            TableName=f"t{n:03}",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
            BillingMode="PAY_PER_REQUEST",
        )
    opened = open_store(f"dynamodb://{REGION}")
    assert isinstance(opened, DynamoDBStore)
    stop, pages = threading.Event(), []

    def page_read(**_: Any) -> None:
        pages.append(1)
        stop.set()

    opened.client.meta.events.register("after-call.dynamodb.ListTables", page_read)
    with reads_stop_when(stop.is_set), pytest.raises(StoreError) as caught:
        opened.list_tables()
    assert caught.value.message == "the query was stopped" and len(pages) == 1
    assert len(opened.list_tables()) >= 105 and len(pages) == 3


def test_stop_during_a_bulk_edits_item_reads_stages_nothing(
    dynamo_endpoint: str, tmp_path: Path
) -> None:
    """Stop pressed while a bulk edit by keys reads its items (BatchGetItem, 100 keys a
    call): no further call is made and nothing is staged, as a Scan asks for no further page."""
    import threading

    from agent.stop import reads_stop_when

    make_orders(raw_client(), 250)  # three BatchGetItem calls of at most 100 keys
    opened = open_store(f"dynamodb://{REGION}")
    assert isinstance(opened, DynamoDBStore)
    staging = StagingArea(opened, tmp_path / "staging.sqlite")
    stop, calls = threading.Event(), []

    def batch_read(**_: Any) -> None:
        calls.append(1)
        stop.set()  # Stop, pressed while the first call came back

    opened.client.meta.events.register("after-call.dynamodb.BatchGetItem", batch_read)
    try:
        with reads_stop_when(stop.is_set), pytest.raises(StoreError) as caught:
            staging.stage_many("orders", keys=[{"id": i} for i in range(1, 251)], set={"f": 1})
        assert caught.value.message == "the query was stopped" and len(calls) == 1
        assert staging.count() == 0
    finally:
        staging.close()


def test_a_conflict_dynamodb_reports_is_recorded_for_the_next_process(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """A batching store: the conflict it names is recorded with the item DynamoDB returned."""
    stuck = area.stage("orders", "update", {"id": 4}, {"status": "cancelled"})
    area.stage("orders", "update", {"id": 6}, {"status": "cancelled"})
    deliver_order_4_elsewhere()
    assert not area.commit().ok
    later = StagingArea(store, area.path)
    try:
        found = later.conflicts()
        assert list(found) == [stuck.id]
        assert found[stuck.id].current["status"] == "delivered"
    finally:
        later.close()


def test_a_change_found_clean_in_the_conflicting_transaction_loses_its_old_record(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """Order 6's conflict is gone (the colleague set it back): the next commit's one
    transaction checked it clean beside order 4's conflict, so only order 4 shows."""
    stuck = area.stage("orders", "update", {"id": 4}, {"status": "cancelled"})
    area.stage("orders", "update", {"id": 6}, {"status": "cancelled"})
    deliver_order_4_elsewhere()
    set_status_elsewhere(6, "delivered")
    assert not area.commit().ok
    assert len(area.conflicts()) == 2
    set_status_elsewhere(6, "shipped")  # as it was when staged
    assert not area.commit().ok
    assert list(area.conflicts()) == [stuck.id]


def test_a_conflict_in_the_first_transaction_keeps_the_records_of_later_ones(
    store: DynamoDBStore, area: StagingArea
) -> None:
    """120 changes are two transactions; a commit stopped at the first never checked the
    second, so order 110's recorded conflict stays beside order 50's new one."""
    staged = {i: area.stage("orders", "update", {"id": i}, {"total": i}).id for i in range(1, 121)}
    set_status_elsewhere(110, "delivered")
    assert not area.commit(ids=[staged[110]]).ok
    set_status_elsewhere(50, "delivered")
    report = area.commit()
    assert not report.committed and [c.change_id for c in report.conflicts] == [staged[50]]
    assert set(area.conflicts()) == {staged[50], staged[110]}
