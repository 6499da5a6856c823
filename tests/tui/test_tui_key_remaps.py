"""What `[keys]` in config.toml cannot do, as the user sees it: quit keeps its key whatever a
remap says, a key two bindings share is named with the one that gets it, and every start-up
key warning is one toast that fits an 80x24 screen."""

from __future__ import annotations

from textual.widgets import Static

from tests.tui.helpers import settle
from tui.screens.help import HelpScreen
from tui.widgets.chat_lines import NoteLine
from tui.widgets.footer import KeyFooter
from tui.widgets.staging_panel import StagingPanel

SMALL = (80, 24)


def _key_toasts(app) -> list[str]:
    return [n.message for n in app._notifications if n.title == "Key remaps"]


async def test_a_remap_onto_quits_key_is_refused_and_ctrl_q_still_quits(make_app) -> None:
    """`staging = "ctrl+q"` gave ctrl+q to the staging panel: the footer lost Quit, the intro
    said "ctrl+q staged changes" and no key quit the app. The remap is refused and says so."""
    app = make_app(keys={"staging": "ctrl+q"})
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        [toast] = _key_toasts(app)
        assert "ctrl+q stays Quit; staging keeps ctrl+s. Pick another key for staging." in toast
        assert "in [keys] in " in toast and "config.toml" in toast
        shown = app.query_one(KeyFooter).shown_actions()
        assert "quit" in shown and "open_staging_panel" in shown, shown
        home = str(app.query_one(".home-help", Static).render())
        assert "ctrl+s staged changes" in home and "ctrl+q staged" not in home
        assert "review (ctrl+s)" in str(app.chat.log_view.query_one(NoteLine).render())
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = {binding_id: keys for keys, _, binding_id in app.screen.rows}
        assert listed["quit"] == "ctrl+q" and listed["staging"] == "ctrl+s"
        await pilot.press("escape")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.query(StagingPanel), "staging keeps its own key"
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not app.is_running, "ctrl+q quits"


async def test_a_shared_key_is_named_with_the_binding_that_gets_it(make_app) -> None:
    """The toast said "only one of them can run" without saying which one did."""
    app = make_app(keys={"staging": "f12", "history": "f12"})
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        [toast] = _key_toasts(app)
        assert "f12 goes to staging, not history: pick another key for history." in toast
        assert "open_staging_panel" in app.query_one(KeyFooter).shown_actions()
        await pilot.press("f12")
        await settle(app, pilot)
        assert app.query(StagingPanel), "the toast named the binding that runs"


async def test_every_start_up_key_warning_is_in_one_toast_on_screen_at_80x24(make_app) -> None:
    """Three toasts stacked at 80x24 and the third, "unknown id 'bogus'", was off the
    screen. Clashes, unknown ids and bad key names now come as one toast listing them all."""
    keys = {"staging": "ctrl+q", "stop": "ctrl+s", "bogus": "f12", "history": "Ctrl+H"}
    app = make_app(keys=keys)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        assert [n.title for n in app._notifications] == ["Key remaps"]
        [toast] = _key_toasts(app)
        assert "ctrl+q stays Quit; staging keeps ctrl+s." in toast
        assert "ctrl+s goes to stop, not staging: pick another key for stop." in toast
        assert "unknown id 'bogus'" in toast
        assert "history: 'Ctrl+H' is not a key name" in toast and "history keeps f9" in toast
        rack = app.screen.query_one("ToastRack")
        assert rack.region.bottom <= SMALL[1] and rack.region.y >= 0
        text = " ".join(str(t.render()) for t in app.screen.query("Toast"))
        assert "bogus" in text


async def test_the_filter_box_and_change_detail_ids_are_not_called_unknown(make_app) -> None:
    """`table.revert` (the filter box's Esc) and `change_detail.close` remapped fine but were
    named "unknown id" at start, as the list of ids left their widgets out."""
    app = make_app(keys={"table.revert": "ctrl+b", "change_detail.close": "x"})
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        assert not [n.message for n in app._notifications if n.title.startswith("Key remap")]
