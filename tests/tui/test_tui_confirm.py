"""The confirm dialog at 80x24: a long question scrolls, its buttons stay on the screen."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Button

from tests.tui.helpers import settle
from tui.screens.confirm import ConfirmScreen

LONG = (
    "The deletes in this commit leave 120 rows pointing at items that will be gone:\n"
    + ("\n".join(f"• orders.customer_id → customers ({n} rows)" for n in range(40)))
    + "\nCommit anyway?"
)


async def test_a_long_question_scrolls_and_keeps_the_buttons_on_screen() -> None:
    answers: list[bool | None] = []
    app = App()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(ConfirmScreen("Orphaned rows", LONG, yes="Commit"), answers.append)
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        for name in ("#yes", "#no"):
            button = screen.query_one(name)
            assert screen.region.contains_region(button.region) and button.region.height, name
        shown = "\n".join(s.text for s in screen._compositor.render_strips())
        assert "Commit (y)" in shown and "No (n)" in shown
        assert "leave 120 rows" in shown, "the question starts at its top"
        body = screen.query_one("#confirm-body")
        assert body.max_scroll_y > 0, "the question scrolls"
        await pilot.press("down", "pagedown")
        assert body.scroll_y > 1, "the keys scroll it, the focus staying on No"
        assert screen.focused is screen.query_one("#no")
        body.scroll_end(animate=False)
        await pilot.pause()
        shown = "\n".join(s.text for s in screen._compositor.render_strips())
        assert "Commit anyway?" in shown
        await pilot.press("y")
        await pilot.pause()
        assert answers == [True]


async def test_a_short_question_keeps_its_box_small() -> None:
    app = App()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(ConfirmScreen("Reject all", "Discard 2 staged changes?", yes="Discard"))
        await pilot.pause()
        await pilot.pause()
        box = app.screen.query_one("ConfirmScreen > Vertical")
        assert box.region.height <= 10, box.region


def _question(kind: str):
    if kind == "confirm":
        return ConfirmScreen("Reject all", "Discard all 12 staged changes?", yes="Discard")
    from agent.permissions import PermissionRequest
    from tui.screens.permission import PermissionScreen

    request = PermissionRequest(
        "exportCsv", {"query": "SELECT id FROM orders", "path": "o.csv"}, "manual", "c1", "export"
    )
    return PermissionScreen(request)


async def _toasts_drawn(app, pilot) -> None:
    """Wait (bounded) until both toasts are on the current screen, laid out."""
    for _ in range(200):
        toasts = app.screen.query("Toast")
        if len(toasts) == 2 and all(t.region.height for t in toasts):
            break
        await pilot.pause(0.05)
    await pilot.pause()


@pytest.mark.parametrize("kind", ["confirm", "permission"])
async def test_toasts_pass_under_a_question_and_not_over_its_buttons(make_app, kind) -> None:
    """At 80x24 an error toast (top right) covered the confirm dialog's No button; a question
    now stays whole above the toasts, which are shown in full again once it is answered."""
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.notify("Committed 5 changes to orders.", markup=False)
        error = "Could not reach Bedrock: the request timed out. Check your network."
        app.notify(error, severity="error", markup=False)
        app.push_screen(_question(kind))
        await _toasts_drawn(app, pilot)  # on the new screen a frame or more later
        screen = app.screen
        shown = "\n".join(s.text for s in screen._compositor.render_strips())
        for button in screen.query(Button):
            label = str(button.label)
            assert label in shown, f"{label!r} is covered:\n{shown}"
        if kind == "confirm":  # a short question: the toast above its box still shows
            assert "Committed 5 changes" in shown
        await pilot.press("escape")
        await _toasts_drawn(app, pilot)
        shown = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "Could not reach Bedrock" in shown
