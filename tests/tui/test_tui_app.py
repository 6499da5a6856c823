"""App-wide behaviour: ask with choices, resume with working chips, errors, keymap, markup safety."""

from __future__ import annotations

import sqlite3

from agent.config import Settings
from tests.support.scripted_bedrock import Error, Reply, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.app import TabletalkApp
from tui.screens.error import ErrorScreen
from tui.screens.picker import PickerScreen
from tui.screens.row_detail import RowDetailScreen
from tui.widgets.chat_items import (
    AnswerChip,
    AskBlock,
    AssistantMessage,
    ChipButton,
    ToolLine,
    UserMessage,
)
from tui.widgets.chat_lines import NoteLine
from tui.widgets.staging_panel import StagingPanel
from tui.widgets.table_tab import TableTab


async def test_ask_shows_choices_as_chips_and_a_choice_is_sent_as_the_answer(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[ToolUse("ask", {"question": "Which city?", "choices": ["Lyon", "Porto"]})]
        ),
        Reply(text="Porto it is."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "customers in a city")
        block = app.query_one(AskBlock)
        assert block.question == "Which city?"
        said = " ".join(str(line.render()) for line in block.query("Static"))
        assert "^g goes to the choices" in said, "the key to the choices is named beside them"
        await pilot.press("ctrl+g")
        assert isinstance(app.focused, AnswerChip) and app.focused.choice == "Lyon"
        porto = [chip for chip in app.query(AnswerChip) if chip.choice == "Porto"][0]
        await pilot.click(porto)
        await settle(app, pilot)
        assert [m.text for m in app.query(UserMessage)][-1] == "Porto"
        assert app.query(AssistantMessage).last().source == "Porto it is."


async def test_a_resumed_conversation_shows_its_chips_and_they_still_work(
    demo_store, scripted_bedrock
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("proposeOpenTable", {"table": "products"})]),
        Reply(text="Chip above."),
    )
    first = TabletalkApp(demo_store, Settings(), staging_poll_seconds=0)
    async with first.run_test(size=SIZE) as pilot:
        await send(first, pilot, "show products")
        conversation_id = first.session.conversation_id
    again = TabletalkApp(
        demo_store, Settings(), conversation_id=conversation_id, staging_poll_seconds=0
    )
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert [m.text for m in again.query(UserMessage)] == ["show products"]
        chip = again.query_one(ChipButton)
        chip.focus()
        await pilot.press("enter")
        await settle(again, pilot)
        assert again.query_one(TableTab).table == "products"


async def test_a_chip_whose_table_is_gone_says_why(make_app, demo_path) -> None:
    with sqlite3.connect(demo_path) as conn:
        conn.execute("CREATE TABLE scratch (id INTEGER PRIMARY KEY)")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        with sqlite3.connect(demo_path) as conn:
            conn.execute("DROP TABLE scratch")
        await app.run_chip({"kind": "openTable", "table": "scratch", "query": None})
        await pilot.pause()
        assert any("scratch" in n.message for n in app._notifications)


async def test_a_bedrock_error_becomes_a_readable_note_and_the_chat_goes_on(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(
        Error(
            status=403, code="AccessDeniedException", message="You don't have access to the model."
        ),
        Reply(text="Working again."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hello")
        errors = [str(n.render()) for n in app.query(NoteLine) if n.has_class("-error")]
        assert errors and "access" in errors[0].lower()
        assert "Traceback" not in errors[0]
        fixes = [str(n.render()) for n in app.query(NoteLine) if n.has_class("-fix")]
        assert fixes and fixes[0].startswith("What to do:")
        await send(app, pilot, "again")
        assert app.query(AssistantMessage).last().source == "Working again."


async def test_a_failed_answers_toast_is_short_and_points_at_the_chat(
    make_app, scripted_bedrock
) -> None:
    """The toast repeated the chat's error note and its fix whole: at 80x24 it was taller
    than the screen and covered the note it repeated."""
    long_message = "The model rejected the request. " + "It said a great deal more. " * 20
    scripted_bedrock.add(Error(status=403, code="AccessDeniedException", message=long_message))
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await send(app, pilot, "hello")
        [toast] = [n for n in app._notifications if n.title == "The answer failed"]
        first, where = toast.message.splitlines()
        assert len(first) <= 120 and where == "What to do is in the chat."
        notes = " ".join(str(n.render()) for n in app.query(NoteLine))
        assert "It said a great deal more. It said" in notes and "What to do:" in notes
        await settle(app, pilot)
        rack = app.screen.query_one("ToastRack")
        assert rack.region.height <= 8, "a toast of a few lines"


async def test_keys_are_remapped_from_config(demo_store) -> None:
    app = TabletalkApp(demo_store, Settings(keys={"staging": "f12"}), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f12")
        await settle(app, pilot)
        assert app.query(StagingPanel)
        assert not any(n.title == "Key remaps" for n in app._notifications)


async def test_an_unknown_key_id_in_config_is_named(demo_store) -> None:
    keys = {"not_a_binding": "f9", "table.row_detail": "space"}
    app = TabletalkApp(demo_store, Settings(keys=keys), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        warned = [n.message for n in app._notifications if n.title == "Key remaps"]
        assert len(warned) == 1
        assert "unknown id 'not_a_binding'" in warned[0] and "row_detail" not in warned[0]


async def test_a_remap_warning_names_the_config_file_it_came_from(demo_store, tmp_path) -> None:
    """`tabletalk --config cfg1.toml` warned about "config.toml [keys]", a file not in play."""
    from agent.config import load_settings

    config = tmp_path / "cfg1.toml"
    config.write_text('[keys]\nbogus = "f12"\n', encoding="utf-8")
    settings = load_settings(config).model_copy(update={"mode": "auto"})  # as flags apply
    app = TabletalkApp(demo_store, settings, staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        [warned] = [n.message for n in app._notifications if n.title == "Key remaps"]
        assert warned.startswith("• unknown id 'bogus'"), warned
        assert warned.endswith(f"in [keys] in {config}."), warned


async def test_a_key_given_to_two_bindings_in_config_is_named(demo_store) -> None:
    """`stop = "ctrl+s"` silently took ctrl+s from the staging panel (the footer lost
    `^s Staged`, the intro still said ctrl+s); the clash is named at start."""
    app = TabletalkApp(demo_store, Settings(keys={"stop": "ctrl+s"}), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        warned = [n.message for n in app._notifications if n.title == "Key remaps"]
        assert len(warned) == 1, warned
        assert "ctrl+s goes to stop, not staging: pick another key for stop." in warned[0]
    app = TabletalkApp(demo_store, Settings(keys={"staging": "f12"}), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not [n for n in app._notifications if n.title == "Key remaps"]


async def test_a_key_the_composer_edits_with_is_named_as_a_clash(demo_store) -> None:
    """`staging = "ctrl+y"` looked fine, but while typing ctrl+y is the composer's redo: the
    staging panel never opened and the footer lost `Staged`. The clash is named at start; a
    priority binding (quit) outranks the composer and is not."""
    keys = {"staging": "ctrl+y", "quit": "ctrl+k,ctrl+q"}
    app = TabletalkApp(demo_store, Settings(keys=keys), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        warned = [n.message for n in app._notifications if n.title == "Key remaps"]
        assert len(warned) == 1, warned
        assert (
            "ctrl+y goes to the composer's redo while typing in the message box, to staging "
            "elsewhere: pick another key for staging." in warned[0]
        )
        assert "quit" not in warned[0]


async def test_markup_in_cells_and_model_text_is_shown_literally(
    make_app, scripted_bedrock, demo_path
) -> None:
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE customers SET name = '[bold red]Eve[/] [link=x]' WHERE id = 1")
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("describeTable", {"table": "[bold]x[/] [@click=app.quit]"})]),
        Reply(text="Name: [/] [bold]Eve[/bold] [@click=app.quit]x[/]"),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "who is customer 1? [/]")
        await app.open_table("customers")
        await settle(app, pilot)
        line = app.query_one(TableTab).view.render_line(2).text
        assert "[bold red]Eve[/]" in line
        assert app.is_running
        assert "[/]" in app.query(UserMessage).last().text
        title = app.query_one(ToolLine).query_one("CollapsibleTitle").render()
        assert "[bold]x[/]" in str(title)
        view = app.query_one(TableTab).view
        view.cursor_row = 0
        view.action_open_row()
        await settle(app, pilot)
        assert app.is_running and isinstance(app.screen, RowDetailScreen)


async def test_at_completes_table_and_column_names(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        await pilot.press("s", "u", "m", " ", "@", "c", "u", "s")
        await pilot.press("tab")
        assert composer.text == "sum @customers " or composer.text == "sum customers "


async def test_conversations_list_resumes_an_old_chat(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="One."), Reply(text="Two."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "first chat")
        first_id = app.session.conversation_id
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert not app.query(UserMessage)
        await send(app, pilot, "second chat")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        keys = [key for key, _ in app.screen.options]
        assert set(keys[1:]) == {app.session.conversation_id, first_id}
        app.screen.query_one("OptionList").highlighted = keys.index(first_id)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.session.conversation_id == first_id
        assert [m.text for m in app.query(UserMessage)] == ["first chat"]


async def test_a_failing_worker_becomes_an_error_modal_and_the_chat_recovers(
    make_app, tmp_path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("soon gone")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.chat.attach(notes)
        notes.unlink()  # the file disappears between attaching and sending
        app.chat.composer.text = "read my notes"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not app.chat.busy and app.is_running
        notes = [str(n.render()) for n in app.query(NoteLine)]
        assert any("not sent" in note and "notes.txt" in note for note in notes)
        assert any(note.startswith("What to do:") for note in notes)


async def test_a_message_that_was_not_sent_goes_back_to_the_composer(
    make_app, tmp_path, monkeypatch
) -> None:
    """A turn whose worker failed before the model was asked ("The message was not sent")
    left an empty composer: the text had to be typed again. It comes back, with its files
    that still exist, for Enter to send once the cause is fixed."""
    from agent.errors import StoreError

    kept, gone = tmp_path / "kept.txt", tmp_path / "gone.txt"
    kept.write_text("stays")
    gone.write_text("soon gone")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)

        def locked(*args: object, **kwargs: object) -> None:
            raise StoreError("demo.sqlite is locked by another program", fix="Wait, then retry.")

        monkeypatch.setattr(app.session, "run_turn", locked)
        assert app.chat.attach(kept) and app.chat.attach(gone)
        gone.unlink()
        app.chat.composer.text = "how many orders are pending?"
        await pilot.press("enter")
        await settle(app, pilot)
        notes = [str(n.render()) for n in app.query(NoteLine)]
        assert any("not sent" in note and "locked" in note for note in notes)
        assert app.chat.composer.text == "how many orders are pending?"
        assert app.chat.attachments.paths == [kept.resolve()]


async def test_an_unexpected_worker_error_is_a_modal_not_a_crash(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)

        def broken() -> None:
            raise ValueError("boom")

        app.run_worker(broken, thread=True, exit_on_error=False, group="test")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorScreen)
        assert "boom" in app.screen.message and "tui-errors.log" in (app.screen.fix or "")
        await pilot.press("escape")
        assert app.is_running


async def test_configured_mcp_servers_join_the_chat_and_a_dead_one_is_a_notice(
    make_app, scripted_bedrock
) -> None:
    import sys
    from pathlib import Path

    from agent.config import McpServerSettings

    server = Path(__file__).resolve().parents[1] / "support" / "mcp_echo_server.py"
    app = make_app(
        mcp_servers={
            "notes": McpServerSettings(command=sys.executable, args=[str(server), "notes"]),
            "ghost": McpServerSettings(command="/nonexistent/tabletalk-ghost"),
        }
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.session is not None
        assert app.session.toolset.row("notes__echo") is not None
        notices = [n.message for n in app._notifications]
        assert any("ghost" in message for message in notices)


async def test_ask_takes_a_typed_answer_too(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("ask", {"question": "Which city?", "choices": ["Lyon"]})]),
        Reply(text="Nantes then."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "customers in a city")
        assert app.query_one(AskBlock).question == "Which city?"
        await send(app, pilot, "Nantes")
        assert [m.text for m in app.query(UserMessage)] == ["customers in a city", "Nantes"]
        sent = scripted_bedrock.requests[-1].body["messages"]
        assert any("Nantes" in block.get("text", "") for m in sent[-1:] for block in m["content"])
        assert app.query(AssistantMessage).last().source == "Nantes then."
        assert all(chip.disabled for chip in app.query(AnswerChip)), "the old choices are spent"


async def test_typing_in_a_picker_jumps_to_the_option_that_matches(make_app) -> None:
    """ctrl+t, `ord`, Enter opens orders (typed letters used to do nothing, so Enter opened
    the first table); text inside a name matches too, and what matches nothing says so."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("o", "r", "d")
        await pilot.press("enter")
        await settle(app, pilot)
        assert [t.table for t in app.query(TableTab)] == ["orders"]

        await pilot.press("ctrl+t")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        await pilot.press("l", "e", "v")  # inside "stock_levels"
        listed = picker.query_one("OptionList")
        assert picker.options[listed.highlighted][0] == "stock_levels"
        await pilot.press("q", "x")  # matches nothing: the cursor stays, the hint says so
        assert picker.options[listed.highlighted][0] == "stock_levels"
        assert "no match" in str(picker.query_one("#picker-hint").render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert [t.table for t in app.query(TableTab)] == ["orders"]


async def test_the_same_toast_twice_shows_once(make_app) -> None:
    """Enter twice on a bad filter stacked two identical toasts over the composer."""
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        for _ in range(2):  # two presses, each shown before the next
            app.notify("Filter not valid: no such column nope", title="Filter", markup=False)
            await pilot.pause()
        app.notify("Something else", markup=False)
        await settle(app, pilot)
        shown = [(n.title, n.message) for n in app._notifications]
        assert shown == [
            ("Filter", "Filter not valid: no such column nope"),
            ("", "Something else"),
        ]
        assert len(app.screen.query("Toast")) == 2
