"""The app on a DynamoDB table (moto's server): the tab opens on its first page and scans on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.config import Settings
from agent.staging import StagingArea
from agent.stores.dynamodb.paging import DynamoRowSource
from agent.stores.open import open_store
from agent.stores.paging import PAGE_SIZE
from tests.agent.test_dynamodb_cli import _throttled
from tests.agent.test_dynamodb_store import make_orders, raw_client
from tests.support.moto_dynamodb import REGION, dynamo_endpoint, moto_server
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.app import TabletalkApp
from tui.screens.row_detail import RowDetailScreen
from tui.widgets.chat_items import ToolLine
from tui.widgets.staging_panel import StagingPanel
from tui.widgets.status_bar import short_units
from tui.widgets.table_tab import TableTab

__all__ = ["dynamo_endpoint", "moto_server"]


async def test_a_10000_item_table_opens_on_one_page_and_pages_on(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 10_000)
    scans: list[int] = []
    store = open_store(f"dynamodb://{REGION}")
    store.client.meta.events.register(  # type: ignore[attr-defined]
        "provide-client-params.dynamodb.Scan", lambda params, **_: scans.append(1)
    )
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        view = tab.view
        assert [c.name for c in view.columns][0] == "id", "key attributes first"
        assert set(view._pages) == {0}, "only the first page is read at open"
        opened_with = len(scans)
        assert opened_with <= 3  # the page (+ the sample describeTable takes), never the table
        values, _ = view.row_at(0)
        assert values[0] is not None
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown", "pagedown", "pagedown")
        await settle(app, pilot)
        assert len(scans) > opened_with, "scrolling fetches more pages"
        assert "PartiQL" in str(tab.query_one("#filter").placeholder)


async def test_the_staging_panel_says_how_many_transactions_then_commits(
    dynamo_endpoint: str,
) -> None:
    make_orders(raw_client(), 150)
    store = open_store(f"dynamodb://{REGION}")
    area = StagingArea(store)
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 151)], set={"status": "held"})
    area.close()
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        summary = str(panel.query_one("#staging-summary").render())
        assert "150 staged changes" in summary
        assert "2 transactions of up to 100 changes" in summary
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert app.status.staged == 0
    item = raw_client().get_item(TableName="orders", Key={"id": {"N": "150"}})["Item"]
    assert item["status"] == {"S": "held"}


async def test_the_header_shows_the_turns_read_units_next_to_the_tokens(
    dynamo_endpoint: str, scripted_bedrock: ScriptedBedrock
) -> None:
    make_orders(raw_client(), 120)
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("countItems", {"table": "orders"})]),
        Reply(text="There are 120 orders."),
        Reply(text="Nothing to read for that."),
    )
    store = open_store(f"dynamodb://{REGION}")
    app = TabletalkApp(store, Settings(mode="auto"), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "read units 0" in str(app.status.render()), "shown from the start on DynamoDB"
        await send(app, pilot, "how many orders?")
        assert app.query_one(ToolLine).status == "success"
        block = scripted_bedrock.requests[1].body["messages"][-1]["content"][0]["toolResult"]
        sent = block["content"][0]
        spent = (sent.get("json") or json.loads(sent["text"]))["capacity"]["readUnits"]
        assert spent > 0
        assert app.status.read_units == pytest.approx(spent)
        header = str(app.status.render())
        assert f"read units {short_units(spent)}" in header
        assert header.index("tokens") < header.index("read units")
        await send(app, pilot, "and now?")
        assert app.status.read_units == 0, "the count is the turn's, not the session's"


async def test_a_sqlite_header_has_no_read_units(make_app: Any) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.status.read_units is None
        assert "read units" not in str(app.status.render())


def _scan_order() -> list[int]:
    """Order ids as a Scan returns them (the order the tab shows)."""
    ids: list[int] = []
    kwargs: dict[str, Any] = {"TableName": "orders"}
    while True:
        page = raw_client().scan(**kwargs)
        ids += [int(i["id"]["N"]) for i in page["Items"]]
        if "LastEvaluatedKey" not in page:
            return ids
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


async def test_columns_grow_as_later_pages_show_new_attributes(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 450)
    late = _scan_order()[420]  # on the third page of 200
    raw_client().update_item(
        TableName="orders",
        Key={"id": {"N": str(late)}},
        UpdateExpression="SET gift = :g, wrap = :w",
        ExpressionAttributeValues={
            ":g": {"M": {"note": {"S": "happy birthday"}, "tags": {"SS": ["red"]}}},
            ":w": {"BOOL": True},
        },
    )
    store = open_store(f"dynamodb://{REGION}")
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        assert [c.name for c in view.columns] == ["id", "status", "total"]
        view.focus()
        await pilot.press("end")
        await settle(app, pilot)
        await pilot.press("end")
        await settle(app, pilot)
        names = [c.name for c in view.columns]
        assert names == ["id", "status", "total", "gift", "wrap"], "key first, new ones added"
        assert [c.type for c in view.columns] == ["number", "string", "number", "map", "boolean"]
        placeholder = str(app.query_one(TableTab).query_one("#filter").placeholder)
        assert "begins_with(\"status\", 'A')" in placeholder and "LIKE" not in placeholder
        row = next(i for i in range(view.row_count) if (view.row_at(i)[0] or (None,))[0] == late)
        values, _ = view.row_at(row)
        assert values is not None and values[names.index("wrap")] is True
        first, _ = view.row_at(0)
        assert first is not None and len(first) == 5, "rows read earlier lack the new attributes"
        view.scroll_to(y=row, animate=False, immediate=True)
        view.cursor_row = row
        view.action_open_row()
        await settle(app, pilot)
        detail = app.screen
        assert isinstance(detail, RowDetailScreen)
        assert detail.values["gift"] == {"note": "happy birthday", "tags": {"$set": ["red"]}}


async def test_the_row_detail_shows_attributes_past_the_column_cap(
    dynamo_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(DynamoRowSource, "MAX_COLUMNS", 3)
    make_orders(raw_client(), 5)
    raw_client().update_item(
        TableName="orders",
        Key={"id": {"N": "2"}},
        UpdateExpression="SET note = :n",
        ExpressionAttributeValues={":n": {"S": "fragile"}},
    )
    store = open_store(f"dynamodb://{REGION}")
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        assert [c.name for c in view.columns] == ["id", "status", "total"]
        row = next(i for i in range(view.row_count) if (view.row_at(i)[0] or (None,))[0] == 2)
        view.cursor_row = row
        view.action_open_row()
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        assert app.screen.values == {"id": 2, "status": "shipped", "total": 2.1, "note": "fragile"}


async def test_the_staging_panel_shows_a_type_change(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 10)
    store = open_store(f"dynamodb://{REGION}")
    area = StagingArea(store)
    change = area.stage("orders", "update", {"id": 3}, {"total": "3.1"})
    area.close()
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        prompt = str(app.query_one("#staging-list").get_option(change.id).prompt)
        assert "total: 3.1 (Number) → 3.1 (String)" in prompt


async def test_the_header_says_retrying_while_dynamodb_throttles(
    dynamo_endpoint: str, no_backoff: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_orders(raw_client(), 3)
    store = open_store(f"dynamodb://{REGION}")
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    seen: list[str] = []
    throttle = {"times": 2}

    def throttle_page_scans(request: Any, **_: Any) -> Any:
        if json.loads(request.body).get("Limit") != PAGE_SIZE:
            return None  # another read (e.g. the attribute sample): not this test's
        seen.append(app.status.notice)  # what the header says as each attempt goes out
        return _throttled() if len(seen) <= throttle["times"] else None

    notified: list[str] = []
    notify = app.notify

    def record(message: str, **kwargs: Any) -> None:
        notified.append(message)
        notify(message, **kwargs)

    monkeypatch.setattr(app, "notify", record)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        store.client.meta.events.register("before-send.dynamodb.Scan", throttle_page_scans)
        await app.open_table("orders")
        await until(app, pilot, lambda: app.query_one(TableTab).view.row_count == 3)
        assert seen == [
            "",
            "DynamoDB is throttling Scan; retrying (attempt 2 of 6)…",
            "DynamoDB is throttling Scan; retrying (attempt 3 of 6)…",
        ]
        assert app.status.notice == "", "cleared once the read went through"
        throttle["times"] = 1_000
        app.query_one(TableTab).reload()
        gave_up = "DynamoDB throttled Scan 6 times; gave up."
        await until(app, pilot, lambda: any(gave_up in m for m in notified))
        assert app.status.notice == ""


async def until(app: TabletalkApp, pilot: Any, condition: Any) -> None:
    """Let workers and messages run until `condition()` holds (a bounded number of rounds)."""
    for _ in range(200):
        if condition():
            return
        await settle(app, pilot)
    assert condition()


async def test_acceptance_demo_chat_bulk_edit_of_35_orders_committed_from_the_panel(
    dynamo_endpoint: str, scripted_bedrock: ScriptedBedrock, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.main import main
    from tui.entry import prepare
    from tui.widgets.home import HomeTab

    assert main(["demo", "dynamodb"]) == 0, capsys.readouterr().err
    ids = list(range(1, 36))
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse(
                    "bulkEdit",
                    {
                        "table": "orders",
                        "keys": [{"id": i} for i in ids],
                        "set": {"status": "held"},
                    },
                )
            ]
        ),
        Reply(text="I staged 35 orders as held; review them in the staging panel."),
    )
    store, settings, _, _ = prepare(["--db", f"dynamodb://{REGION}", "--mode", "auto"])
    before = raw_client().get_item(TableName="orders", Key={"id": {"N": "36"}})["Item"]
    app = TabletalkApp(store, settings, staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        home = app.query_one(HomeTab)
        assert {"customers", "orders", "products"} <= set(home.tables)
        assert dynamo_endpoint in str(app.status.render()) or dynamo_endpoint in store.label
        await send(app, pilot, "hold orders 1 to 35")
        assert app.query_one(ToolLine).status == "success"
        assert app.status.staged == 35
        assert raw_client().get_item(TableName="orders", Key={"id": {"N": "1"}})["Item"][
            "status"
        ] != {"S": "held"}, "staging alone changes nothing in DynamoDB"
        await app.open_staging_panel()
        await settle(app, pilot)
        summary = str(app.query_one(StagingPanel).query_one("#staging-summary").render())
        assert "35 staged changes" in summary
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert app.status.staged == 0
    for i in ids:
        item = raw_client().get_item(TableName="orders", Key={"id": {"N": str(i)}})["Item"]
        assert item["status"] == {"S": "held"}, i
    after = raw_client().get_item(TableName="orders", Key={"id": {"N": "36"}})["Item"]
    assert after == before, "only the 35 changed"
