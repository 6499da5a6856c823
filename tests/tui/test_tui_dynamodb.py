"""The app on a DynamoDB table (moto's server): the tab opens on its first page and scans on."""

from __future__ import annotations

from agent.config import Settings
from agent.staging import StagingArea
from agent.stores.open import open_store
from tests.agent.test_dynamodb_store import make_orders, raw_client
from tests.support.moto_dynamodb import REGION, dynamo_endpoint, moto_server
from tests.tui.helpers import SIZE, settle
from tui.app import TabletalkApp
from tui.widgets.staging_panel import StagingPanel
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
