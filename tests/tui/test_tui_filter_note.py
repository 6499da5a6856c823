"""A table tab's filter box never claims a condition the rows do not show: while its text is
not the applied filter (rejected by Enter, or edited since), the info line says so."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.helpers import SIZE, settle
from tui.widgets.table_tab import TableTab


def shown(app, widget) -> str:
    """The screen's text inside `widget`'s region, as the terminal shows it."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    return "\n".join(s.crop(region.x, region.right).text for s in strips[region.y : region.bottom])


async def _type_filter(app, pilot, tab: TableTab, text: str, *, enter: bool = True) -> Input:
    box = tab.query_one("#filter", Input)
    box.focus()
    box.value = ""
    await pilot.press(*text, *(["enter"] if enter else []))
    await settle(app, pilot)
    return box


async def test_a_rejected_filter_left_in_the_box_says_it_is_not_applied_until_fixed(
    make_app,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        info = tab.query_one(".tab-info")
        assert "not applied" not in shown(app, info).lower()

        box = await _type_filter(app, pilot, tab, "total >> [b]5")
        assert tab.view.total_rows == 2000, "the rows stay as they were"
        assert any(n.severity == "error" for n in app._notifications), "the toast stays"
        app.clear_notifications()
        await pilot.pause()
        line = shown(app, info)
        assert "Not valid, not applied: enter applies, esc reverts · 2,000 rows" in line, line
        assert "enter: row" not in line, "what does not fit whole is left out, not cut"
        assert box.value == "total >> [b]5" and box.has_class("-pending")

        await pilot.press("backspace")  # edited: no longer the text Enter rejected
        await pilot.pause()
        line = shown(app, info)
        assert "not applied" in line and "not valid" not in line.lower(), line

        box.value = "quantity >= 5"
        await pilot.press("enter")
        await settle(app, pilot)
        assert tab.view.total_rows is not None and tab.view.total_rows < 2000
        line = shown(app, info)
        assert "not applied" not in line.lower() and line.strip().endswith("enter: row detail")
        assert not box.has_class("-pending")


async def test_esc_in_the_box_goes_back_to_the_applied_filter(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:  # room for the note's longest form
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        info = tab.query_one(".tab-info")
        box = await _type_filter(app, pilot, tab, "quantity >= 5")
        rows = tab.view.total_rows
        assert "not applied" not in shown(app, info).lower()

        await pilot.press("0")  # `quantity >= 50`, typed but not applied
        await pilot.pause()
        line = shown(app, info)
        assert "Filter not applied: enter applies, esc restores the applied filter" in line, line
        assert tab.view.total_rows == rows

        await pilot.press("escape")
        await pilot.pause()
        assert box.value == "quantity >= 5" and box.has_focus
        assert "not applied" not in shown(app, info).lower()
        await pilot.press("escape")  # nothing to revert: Esc does what it does elsewhere
        await pilot.pause()
        assert box.value == "quantity >= 5"

        box.value = ""  # cleared, not applied yet: the rows are still filtered
        await pilot.pause()
        assert "not applied" in shown(app, info).lower()


async def test_the_note_fits_an_80_column_terminal_and_names_a_remapped_key(make_app) -> None:
    app = make_app(keys={"table.revert": "ctrl+b"})
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        box = await _type_filter(app, pilot, tab, "total > nosuch")
        line = shown(app, tab.query_one(".tab-info"))
        assert "Not valid: enter applies, ^b reverts" in line, line
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert box.value == "" and "not applied" not in shown(app, tab.query_one(".tab-info"))


async def test_a_tab_opened_with_a_filter_shows_no_note(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders", "quantity >= 5")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        assert tab.query_one("#filter", Input).value == "quantity >= 5"
        assert "not applied" not in shown(app, tab.query_one(".tab-info")).lower()


async def test_the_empty_box_shows_the_longest_hint_that_fits_and_marks_a_cut(make_app) -> None:
    """The placeholder was cut mid-word at 80 columns ("(SQL"); now a shorter form fits whole,
    and a box too narrow for any form ends in … rather than a clipped word."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        box = app.query_one(TableTab).query_one("#filter", Input)
        line = shown(app, box).strip()
        assert line.startswith("/ filter, e.g. ") and line.endswith(")"), line
        assert "(SQL" in line
        await pilot.resize_terminal(120, 36)
        await settle(app, pilot)
        assert "Enter applies" in shown(app, box)
        await pilot.resize_terminal(60, 24)
        await settle(app, pilot)
        narrow = shown(app, box).strip()
        assert narrow.startswith("/ filter, e.g.") and narrow.endswith("…"), narrow
