"""Keys held in the staging panel's list while its next page is being read: each press counts
once, in order, so a held PageDown walks every page and ends where slow presses would."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent.staging import StagingArea
from agent.staging.review import StagingReview
from tests.tui.helpers import SIZE, settle
from tui.widgets.staging_panel import PAGE, StagingPanel

STAGED = 2000
"""Every order in the demo database: 40 pages of changes."""


class PageGate:
    """Holds every page read while closed, and notes the offset each read asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open = threading.Event()
        self.open.set()
        self.offsets: list[int] = []
        page = StagingReview.page

        def held_page(review: StagingReview, *args: Any, **kwargs: Any) -> Any:
            self.offsets.append(kwargs.get("offset", 0))
            self.open.wait(30)
            return page(review, *args, **kwargs)

        monkeypatch.setattr(StagingReview, "page", held_page)


def where(panel: StagingPanel) -> tuple[int, int | None]:
    """The page's offset and the highlighted change's place on it."""
    return panel.snapshot.offset, panel.query_one("#staging-list").highlighted


async def opened_list(app: Any, pilot: Any) -> StagingPanel:
    """The staging panel open, the keyboard on its list, the cursor on the first change."""
    await app.open_staging_panel()
    await settle(app, pilot)
    panel = app.query_one(StagingPanel)
    panel.query_one("#staging-list").focus()
    await back_to_the_top(app, pilot, panel)
    return panel


async def press_while_reads_wait(app: Any, pilot: Any, gate: PageGate, *keys: str) -> None:
    """Press `keys` in one burst while every page read waits, then let the reads go."""
    gate.offsets.clear()
    gate.open.clear()
    await pilot.press(*keys)
    gate.open.set()
    await settle(app, pilot)


async def back_to_the_top(app: Any, pilot: Any, panel: StagingPanel) -> None:
    panel.load(0)
    await settle(app, pilot)
    view = panel.query_one("#staging-list")
    view.highlighted = 0
    assert where(panel) == (0, 0)


@pytest.mark.parametrize(
    "keys",
    [
        ["pagedown"] * 24,
        ["pagedown"] * 11 + ["up"] * 3 + ["pageup"] * 6 + ["end", "down", "down"],
    ],
    ids=["held-pagedown", "mixed"],
)
async def test_keys_pressed_while_the_next_page_is_read_each_count_once(
    make_app, demo_store, monkeypatch, keys: list[str]
) -> None:
    """The keys pressed in a burst while every page read is held end on the same change as
    the same keys pressed one at a time, and each page is read once, in order."""
    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders", set={"status": "held"})
    assert area.review().count() == STAGED
    gate = PageGate(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await opened_list(app, pilot)

        gate.offsets.clear()
        for key in keys:  # one at a time: each page read lands before the next key
            await pilot.press(key)
            await settle(app, pilot)
        slow, slow_reads = where(panel), list(gate.offsets)
        assert len(slow_reads) >= 3, "the keys turned the page at least three times"

        await back_to_the_top(app, pilot, panel)
        # every page read waits: each key after the first turn arrives early
        await press_while_reads_wait(app, pilot, gate, *keys)
        assert where(panel) == slow, "the keys end where pressing them slowly ends"
        assert gate.offsets == slow_reads, "each page read once, none skipped or repeated"
        shown = panel.snapshot.page[panel.query_one("#staging-list").highlighted or 0]
        assert shown.id == panel.query_one("#staging-list").highlighted_option.id


async def test_a_held_down_moves_one_change_per_press_across_pages(
    make_app, demo_store, monkeypatch
) -> None:
    """Down held while the page reads are held: 110 presses from the first change land on
    change 111 (the 11th of the third page), each page read once."""
    StagingArea(demo_store).stage_many(
        "orders", query="SELECT id FROM orders", set={"status": "held"}
    )
    gate = PageGate(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await opened_list(app, pilot)
        await press_while_reads_wait(app, pilot, gate, *["down"] * 110)
        assert where(panel) == (2 * PAGE, 10)
        assert gate.offsets == [PAGE, 2 * PAGE]


async def test_a_held_pagedown_walks_every_page_to_the_last_change(
    make_app, demo_store, monkeypatch
) -> None:
    """PageDown held well past the end while the page reads are held: the list
    reads every page once, in order, and ends on the last staged change."""
    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders", set={"status": "held"})
    last = area.review().page(offset=STAGED - 1, limit=1)[0].id
    gate = PageGate(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await opened_list(app, pilot)
        view = panel.query_one("#staging-list")
        await press_while_reads_wait(app, pilot, gate, *["pagedown"] * 250)
        assert gate.offsets == list(range(PAGE, STAGED, PAGE)), "every page, once, in order"
        assert panel.snapshot.offset == STAGED - PAGE
        assert view.highlighted_option is not None and view.highlighted_option.id == last


async def test_enter_and_a_reread_while_the_next_page_is_read_keep_to_that_page(
    make_app, demo_store, monkeypatch
) -> None:
    """The staged set re-read while a page is being turned to reads that page (not the one
    left), and Enter pressed meanwhile opens the change the cursor lands on there."""
    from tui.widgets.staged_change import ChangeDetailScreen

    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders", set={"status": "held"})
    turned_to = area.review().page(offset=PAGE, limit=1)[0].id
    gate = PageGate(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await opened_list(app, pilot)
        gate.open.clear()
        await pilot.press("end", "down")
        panel.show(panel.changes, force=True)  # e.g. the poll saw the staged set move
        await pilot.press("enter")
        gate.open.set()
        await settle(app, pilot)
        assert isinstance(app.screen, ChangeDetailScreen)
        assert app.screen.change.id == turned_to
        await pilot.press("escape")
        await settle(app, pilot)
        assert where(panel) == (PAGE, 0)
