"""The tab strip: labels drawn in order with the bar under the active one; a click or
left/right (strip focused) switches tabs; closing the active tab activates its neighbour;
focus moving into a pane makes its tab active."""

from __future__ import annotations

from tests.tui.helpers import SIZE, settle
from tests.tui.test_tui_polish import widget_lines
from tui.widgets.tab_area import TabArea, TabStrip
from tui.widgets.table_tab import TableTab


def _shown(area: TabArea) -> list[str]:
    return [pane.id or "" for pane in area.children if pane.display and pane.id]


async def test_the_strip_switches_tabs_by_click_and_arrows_and_closing_picks_a_neighbour(
    make_app,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for table in ("customers", "orders", "products"):
            await app.open_table(table, focus=False)
        await settle(app, pilot)
        area = app.query_one("#tabs", TabArea)
        strip = area.query_one(TabStrip)
        ids = {tab.table: tab.id for tab in app.query(TableTab)}
        labels, bar = widget_lines(app, strip)
        assert labels.split() == ["Tables", "customers", "orders", "products"], labels
        start = labels.index(" products ")
        assert set(bar[start + 1 : start + 9]) == {"━"} and bar[start] == "╸", bar
        assert area.active == ids["products"] and _shown(area) == [ids["products"]]

        await pilot.click(TabStrip, offset=(labels.index("customers") + 1, 0))
        assert strip.has_focus and area.active == ids["customers"]
        assert _shown(area) == [ids["customers"]]
        await pilot.click(TabStrip, offset=(labels.index("Tables"), 1))  # the bar row too
        assert area.active == "home" and _shown(area) == ["home"]

        await pilot.press("right")
        assert area.active == ids["customers"]
        await pilot.press("left", "left")  # wraps around to the last tab
        assert area.active == ids["products"]

        area.active = ids["orders"]
        await app.run_action("close_tab")
        await settle(app, pilot)
        assert area.active == ids["products"], "the right neighbour"
        await app.run_action("close_tab")
        await settle(app, pilot)
        assert area.active == ids["customers"], "the last tab closed: its left neighbour"
        assert [tab.id for tab in strip.tabs] == ["home", ids["customers"]]
        assert widget_lines(app, strip)[0].split() == ["Tables", "customers"]


async def test_focus_moving_into_a_pane_makes_its_tab_active(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.open_table("orders")
        await settle(app, pilot)
        area = app.query_one("#tabs", TabArea)
        area.active = "home"
        await pilot.pause()
        app.query_one(TableTab).query_one("#filter").focus()
        await settle(app, pilot)
        assert area.active == app.query_one(TableTab).id


async def test_many_tabs_keep_the_active_one_in_view(make_app) -> None:
    """Tabs wider than the strip scroll so that the active label shows (80 columns)."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for table in ("customers", "orders", "products", "stock_levels"):
            await app.open_table(table, "1 = 1", focus=False)
        await settle(app, pilot)
        area = app.query_one("#tabs", TabArea)
        strip = area.query_one(TabStrip)
        last = area.get_tab(area.active).label.plain
        labels, _bar = widget_lines(app, strip)
        assert last in labels, labels
        area.active = "home"
        await pilot.pause()
        assert widget_lines(app, strip)[0].startswith(" Tables ")
