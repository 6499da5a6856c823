"""The key footer: what it shows follows the bindings, a click presses the key, hovering a key
shows its tooltip."""

from __future__ import annotations

from tests.tui.helpers import SIZE, refreshed_until, settle
from tui.widgets.footer import KeyFooter


def _column(footer: KeyFooter, label: str) -> int:
    """The footer column where `label` (`^s Staged`) starts, as drawn."""
    return footer.render().plain.index(label)


async def test_a_click_on_a_footer_key_presses_it(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        footer = app.query_one(KeyFooter)
        assert not app.query("#staging")
        await pilot.click(KeyFooter, offset=(_column(footer, "^s Staged") + 3, 0))
        await settle(app, pilot)
        assert app.query("#staging"), "the click on ^s Staged did not open the staging panel"


async def test_the_footer_shows_a_remapped_key(make_app) -> None:
    app = make_app(keys={"staging": "f12"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        footer = app.query_one(KeyFooter)
        assert await refreshed_until(app, lambda: "f12 Staged" in footer.render().plain)
        assert "^s Staged" not in footer.render().plain
        app.update_keymap({"staging": "f11"})  # a later change shows too
        assert await refreshed_until(app, lambda: "f11 Staged" in footer.render().plain)


async def test_hovering_a_footer_key_shows_its_tooltip(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        footer = app.query_one(KeyFooter)
        await pilot.hover(KeyFooter, offset=(_column(footer, "^t Table") + 1, 0))
        await pilot.pause()
        assert footer.tooltip == "Open a table"
        await pilot.hover(KeyFooter, offset=(_column(footer, "f1 Help") + 1, 0))
        await pilot.pause()
        assert footer.tooltip is None  # no tooltip of its own: none (not the previous one)


async def test_at_80_columns_every_key_shows_with_its_description(make_app) -> None:
    """The palette key gives up its description before any other key loses its own."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        footer = app.query_one(KeyFooter)
        labels = ("^q Quit", "f1 Help", "^o Attach", "^t Table", "^s Staged", "f2 Full chat")
        labels += ("f4 Mode", "f5 Model")
        assert await refreshed_until(app, lambda: "f5 Model" in footer.render().plain)
        line = footer.render().plain
        assert all(label in line for label in labels), line
        assert line.rstrip().endswith("▏^p"), line
        await pilot.hover(KeyFooter, offset=(line.index("▏^p") + 1, 0))
        await pilot.pause()
        assert footer.tooltip == "Open the command palette"  # hovering still names it


async def test_a_wide_footer_names_the_palette_key(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        footer = app.query_one(KeyFooter)
        assert await refreshed_until(app, lambda: "f5 Model" in footer.render().plain)
        assert footer.render().plain.rstrip().endswith("▏^p palette")


async def test_at_60_columns_no_key_is_cut_in_the_middle(make_app) -> None:
    """The line was cut at the right edge, so a narrow terminal showed `f2 Full cha▏^p`: a key
    that does not fit whole is left out."""
    app = make_app()
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(app, pilot)
        footer = app.query_one(KeyFooter)
        assert await refreshed_until(app, lambda: "^q Quit" in footer.render().plain)
        line = footer.render().plain
        left = line.split("▏")[0].rstrip()
        labels = [f"{e.display} {e.description}" for e in footer.entries]
        assert any(left.endswith(label) for label in labels), line
        assert line.rstrip().endswith("▏^p"), line
