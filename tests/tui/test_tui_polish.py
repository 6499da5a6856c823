"""What a user sees when text is long or an action is done: ellipses, done chips, tables in
answers drawn the same live and resumed."""

from __future__ import annotations

from agent.config import Settings
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import send, settle
from tui.app import TabletalkApp
from tui.widgets.chat_items import AssistantMessage, ChipButton, SavedAnswer
from tui.widgets.table_tab import TableTab

TABLE_ANSWER = (
    "Top products:\n\n| name | price |\n|---|---|\n| Deluxe Lamp | 12.5 |\n| Eco Mug | 3 |\n\nDone."
)


def widget_lines(app, widget) -> list[str]:
    """The lines of the screen inside `widget`'s region, as the terminal shows them."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    return [s.crop(region.x, region.right).text for s in strips[region.y : region.bottom]]


async def test_long_tab_titles_end_with_an_ellipsis(make_app) -> None:
    condition = "status = 'pending' AND quantity > 2 AND customer_id IN (1, 2, 3, 4, 5)"
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.open_table("orders", condition)
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        label = str(app.query_one("#tabs").get_tab(tab.id).label)
        assert label.endswith("…") and len(label) <= 40
        assert tab.tab_title == f"orders ({condition})", "the whole title is kept"


async def test_long_tool_rows_end_with_an_ellipsis(make_app, scripted_bedrock) -> None:
    words = "tools to count the pending orders of every customer by city and by month"
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": words})]), Reply(text="Done.")
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(app, pilot, "pending orders")
        title = app.query_one("ToolLine CollapsibleTitle")
        (line,) = widget_lines(app, title)
        assert "searchTools" in line and line.rstrip().endswith("…"), line


async def test_a_clicked_chip_shows_as_done(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("proposeOpenTable", {"table": "orders"})]),
        Reply(text="Here is a chip."),
    )
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "show orders")
        chip = app.query_one(ChipButton)
        await pilot.click(chip)
        await settle(app, pilot)
        assert app.query_one(TableTab).table == "orders"
        assert chip.disabled and str(chip.label).startswith("✓")


async def test_a_markdown_table_looks_the_same_live_and_resumed(
    make_app, scripted_bedrock, demo_store
) -> None:
    scripted_bedrock.add(Reply(text=TABLE_ANSWER))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "top products")
        live = [line.strip() for line in widget_lines(app, app.query_one(AssistantMessage))]
        conversation_id = app.session.conversation_id
    again = TabletalkApp(
        demo_store, Settings(mode="manual"), conversation_id=conversation_id, staging_poll_seconds=0
    )
    async with again.run_test(size=(120, 36)) as pilot:
        await settle(again, pilot)
        saved = [line.strip() for line in widget_lines(again, again.query_one(SavedAnswer))]

    def rows(lines: list[str]) -> list[list[str]]:
        """Each table row's cells, with the grid characters that frame them."""
        return [
            [cell.strip() for cell in line.strip("│").split("│")]
            for line in lines
            if line.startswith("│")
        ]

    assert rows(live) == [["name", "price"], ["Deluxe Lamp", "12.5"], ["Eco Mug", "3"]]
    assert rows(saved) == rows(live)
    assert any(line.startswith("┌") for line in saved)
