"""The table's cursor stays on a row the user can see."""

from __future__ import annotations

from tests.tui.helpers import SIZE, settle
from tui.widgets.table_tab import TableTab
from tui.widgets.table_view import HEADER_LINES


def visible_rows(view) -> range:
    top = round(view.scroll_y)
    return range(top, top + view.size.height - HEADER_LINES)


async def test_cursor_stays_visible_after_filter_home_and_page_down(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        tab.view.focus()
        for _ in range(5):
            await pilot.press("pagedown")
        await settle(app, pilot)
        tab.query_one("#filter").focus()
        tab.query_one("#filter").value = "status = 'pending'"
        await pilot.press("enter")
        await settle(app, pilot)
        view = tab.view
        view.focus()
        assert view.cursor_row in visible_rows(view), (view.cursor_row, visible_rows(view))
        await pilot.press("home")
        await settle(app, pilot)
        assert view.cursor_row == 0 and view.cursor_row in visible_rows(view)
        await pilot.press("pagedown")
        await settle(app, pilot)
        assert view.cursor_row in visible_rows(view), (view.cursor_row, visible_rows(view))
        values, _ = view.row_at(view.cursor_row)
        await pilot.press("enter")
        await pilot.pause()
        chosen = getattr(app.screen, "values", None)
        assert chosen is not None and chosen["id"] == values[0]


async def test_scrolling_takes_the_cursor_along_and_enter_opens_a_visible_row(make_app) -> None:
    from tui.screens.row_detail import RowDetailScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        tab.query_one("#filter").value = "status = 'pending'"
        tab.query_one("#filter").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        view = tab.view
        view.focus()
        await pilot.press("home")
        view.scroll_to(y=40, animate=False, immediate=True)  # the mouse wheel or scrollbar
        await settle(app, pilot)
        assert view.cursor_row in visible_rows(view), (view.cursor_row, visible_rows(view))
        await pilot.press("pagedown")
        await settle(app, pilot)
        assert view.cursor_row in visible_rows(view)
        values, _ = view.row_at(view.cursor_row)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        assert app.screen.values["id"] == values[0]


async def test_end_shows_the_last_row_above_the_horizontal_scrollbar(make_app) -> None:
    """At 80 columns the table scrolls sideways, and End left the last row (the cursor's) under
    the horizontal scrollbar: the rows that fit were counted without it."""
    from tests.tui.test_tui_polish import widget_lines

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        view.focus()
        assert view.virtual_size.width > view.size.width, "the table scrolls sideways"
        for key in ("end", "pageup", "pagedown", "end"):
            await pilot.press(key)
            await settle(app, pilot)
            values, _ = view.row_at(view.cursor_row)
            assert values is not None
            shown = [line.split("│")[0].strip() for line in widget_lines(app, view)]
            assert str(values[0]) in shown, (key, values[0], shown[-3:])
