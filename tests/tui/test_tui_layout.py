"""What stays on screen at common terminal sizes: header values, footer keys, notices."""

from __future__ import annotations

import pytest

from tests.support.scripted_bedrock import Reply
from tests.tui.helpers import refreshed_until, send, settle
from tui.widgets.footer import KeyFooter

IMPORTANT_ACTIONS = {
    "help",
    "pick_model",
    "attach",
    "pick_table",
    "open_staging_panel",
    "toggle_chat",
    "cycle_mode",
    "quit",
}


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_header_keeps_tokens_and_the_busy_marker_visible(
    make_app, scripted_bedrock, size
) -> None:
    scripted_bedrock.add(Reply(text="Hello."))
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await send(app, pilot, "hi")
        status = app.status
        status.busy = True
        await pilot.pause()
        text = status.render()
        assert text.cell_len <= status.size.width - 2, "nothing is cut at the end"
        plain = text.plain
        assert plain.startswith("●"), "busy comes first"
        tokens_in, tokens_out, _ = status.tokens
        assert str(tokens_in) in plain and str(tokens_out) in plain
        assert "staged 0" in plain and "manual" in plain
        assert "demo.sqlite" in plain
        if size[0] < 100:
            assert f"{tokens_in}/{tokens_out}" in plain and "tok" in plain
            assert "↑" not in plain
        else:
            assert "working" in plain and "tokens" in plain


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_header_counts_staged_changes_as_the_staging_panel_does(make_app, size) -> None:
    """The header said `staged 2000` beside a panel saying `2,000 staged changes`."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.status.staged = 2000
        await pilot.pause()
        assert "staged 2,000" in app.status.render().plain


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.parametrize("model", ["sonnet-4.5", "haiku-4.5"])
async def test_the_header_keeps_the_database_name_after_a_model_switch(
    make_app, size, model
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.set_model(model)
        app.status.busy = True
        app.status.tokens = (123_456, 7_890, 1_000)
        await pilot.pause()
        text = app.status.render()
        assert " demo.sqlite " in text.plain and "…" not in text.plain, text.plain
        assert f" {model} " in text.plain, "named as the picker and --model name it"
        assert text.cell_len <= app.status.size.width - 2
        intro = str(app.chat.log_view.query_one(".chat-intro").render())
        assert f"Runs on Amazon Bedrock ({model})" in intro, "the empty chat's intro follows"


async def test_the_model_picker_marks_the_model_in_use(make_app) -> None:
    from tui.screens.picker import PickerScreen

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.set_model("haiku-4.5")
        await pilot.press("f5")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        marked = [key for key, label in picker.options if label.startswith("●")]
        assert marked == ["us.anthropic.claude-haiku-4-5-20251001-v1:0"]
        assert picker.highlighted == [k for k, _ in picker.options].index(marked[0])


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_footer_shows_the_important_keys(make_app, size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        assert app.chat.composer.has_focus

        def shown() -> set[str]:
            return set(app.query_one(KeyFooter).shown_actions())

        await refreshed_until(app, lambda: IMPORTANT_ACTIONS <= shown())
        assert IMPORTANT_ACTIONS <= shown(), IMPORTANT_ACTIONS - shown()


async def test_the_composer_hint_fits_the_sidebar(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        hint = app.chat.query_one("#chat-hint")
        text = hint.render()
        assert "send" in text.plain and text.cell_len <= hint.size.width


async def test_notices_do_not_cover_the_composer(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(app, pilot)
        app.notify("A long notice\nover several\nlines", timeout=30)
        await pilot.pause()
        await pilot.pause()
        toast = app.screen.query_one("Toast")
        composer = app.chat.composer
        assert toast.region.height
        assert not toast.region.overlaps(composer.region)
        assert toast.region.y >= 1, "the header stays readable"


async def test_f4_into_full_auto_asks_first(make_app) -> None:
    from tui.screens.confirm import ConfirmScreen

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("f4")
        assert app.status.mode == "auto", "manual → auto needs no question"
        await pilot.press("f4")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        # declining skips full-auto: F4 reached manual again only through a yes before
        assert app.session.mode == "manual" and app.status.mode == "manual"
        await pilot.press("f4", "f4")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert app.session.mode == "full-auto" and app.status.mode == "full-auto"
        await pilot.press("f4")
        assert app.session.mode == "manual", "from full-auto F4 goes back to manual"


async def test_the_palette_asks_before_full_auto_and_a_new_chat_keeps_the_mode(make_app) -> None:
    """ctrl+p "Switch mode: full-auto" switched without the question F4 asks; and a mode
    picked in the app went back to the launch mode at ctrl+n (full-auto again, unsaid)."""
    from tui.screens.confirm import ConfirmScreen

    app = make_app(mode="full-auto")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("f4")  # full-auto → manual
        assert app.session.mode == "manual"
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert app.session.mode == "manual" and app.status.mode == "manual"
        await pilot.press("ctrl+p", *"mode: full")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(app, pilot)
        assert app.session.mode == "manual", "a no from the palette leaves the mode as it was"
        await pilot.press("ctrl+p", *"mode: full")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert app.session.mode == "full-auto" and app.status.mode == "full-auto"
