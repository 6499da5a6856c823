"""The app's own text names the keys bindings have after `[keys]` in config.toml remapped
them: the chat intro, the home tab, the composer's hint and notices once said ctrl+s, F1, f2,
esc whatever the user had bound."""

from __future__ import annotations

from textual.widgets import Static

from tests.tui.helpers import SIZE, settle
from tui.key_hints import bound_key, compact
from tui.widgets.chat_lines import ChatHint, NoteLine

REMAPPED = {
    "staging": "ctrl+y",
    "help": "f10,f1",
    "toggle_chat": "f12",
    "stop": "ctrl+c",
    "close_tab": "f11",
}


def test_bound_key_is_the_first_remapped_key_or_the_default() -> None:
    assert bound_key({"staging": " ctrl+y , f12"}, "staging", "ctrl+s") == "ctrl+y"
    assert bound_key({}, "staging", "ctrl+s") == "ctrl+s"
    assert bound_key({"staging": " , "}, "staging", "ctrl+s") == "ctrl+s"
    assert [compact(k) for k in ("enter", "escape", "ctrl+j", "f6")] == ["⏎", "esc", "^j", "f6"]


async def test_remapped_keys_are_the_ones_the_intro_home_tab_and_hint_name(make_app) -> None:
    app = make_app(keys=REMAPPED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        intro = str(app.chat.log_view.query_one(NoteLine).render())
        assert "review (ctrl+y)" in intro and "ctrl+s" not in intro
        home = str(app.query_one(".home-help", Static).render())
        assert "f10 keys" in home and "ctrl+y staged changes" in home
        assert "f12 full-width chat" in home
        assert "F1" not in home and "ctrl+s" not in home and "f2" not in home
        assert "ctrl+p commands" in home  # Textual's palette key: not remappable by id
        app.chat.query_one(ChatHint).show_busy(True)  # stop is offered while a turn runs
        await pilot.pause()
        hint = str(app.chat.query_one(ChatHint).render())
        assert "^c stop" in hint and "esc" not in hint
        app.chat.query_one(ChatHint).show_busy(False)
        await pilot.pause()
        await pilot.press("f11")
        await settle(app, pilot)
        closing = [n.message for n in app._notifications if "Tables tab stays" in n.message]
        assert closing == ["The Tables tab stays open; f11 closes the other tabs."]


async def test_default_keys_keep_the_default_text(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "review (ctrl+s)" in str(app.chat.log_view.query_one(NoteLine).render())
        home = str(app.query_one(".home-help", Static).render())
        assert "F1 keys · ctrl+p commands · ctrl+s staged changes · f2 full-width chat" in home
        assert "⏎ send · ^j new line · ^o attach" in str(app.chat.query_one(ChatHint).render())
