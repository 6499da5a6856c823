"""The chat: streamed answers, tool lines, chips, Stop, rewind, attachments."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from textual.geometry import Region

import tui.widgets.chat as chat_module
from agent.config import Settings
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, press_ready, refreshed_until, send, settle
from tui.app import TabletalkApp, default_session_factory
from tui.widgets.chat_items import AssistantMessage, ChipButton, ToolLine, UserMessage
from tui.widgets.chat_lines import NoteLine
from tui.widgets.table_tab import TableTab


def texts(app, kind) -> list[str]:
    return [
        str(w.render()) if not isinstance(w, AssistantMessage) else w.source
        for w in app.query(kind)
    ]


async def test_streamed_answer_shows_as_markdown_and_counts_tokens(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="There are **240** customers."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "how many customers?")
        assert [m.text for m in app.query(UserMessage)] == ["how many customers?"]
        answers = list(app.query(AssistantMessage))
        assert len(answers) == 1 and answers[0].source == "There are **240** customers."
        assert app.status.tokens[0] > 0 and app.status.tokens[1] > 0
        assert not app.chat.busy


async def test_tool_call_shows_a_compact_line_that_expands(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("listTables", {})]),
        Reply(text="You have 4 tables."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "what tables?")
        line = app.query_one(ToolLine)
        assert line.tool_name == "listTables" and line.status == "success"
        assert line.collapsed
        await pilot.click(line.query_one("CollapsibleTitle"))
        assert not line.collapsed
        assert "customers" in str(line._result_view.render())


async def test_chip_opens_its_table_only_when_clicked(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[ToolUse("proposeOpenTable", {"table": "orders", "query": "quantity >= 5"})]
        ),
        Reply(text="Here is a chip."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "show big orders")
        assert not app.query(TableTab), "a proposal opens nothing by itself"
        chip = app.query_one(ChipButton)
        chip.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        assert tab.table == "orders"
        assert tab.query_one("#filter").value == "quantity >= 5"
        assert app.query_one("#tabs").active == tab.id


async def test_stop_mid_stream_ends_the_turn_and_the_chat_goes_on(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="word " * 400, chunk_delay=0.01), Reply(text="Still here."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "write a lot"
        await pilot.press("enter")
        while not app.query(AssistantMessage):
            await pilot.pause()
        await pilot.press("escape")
        assert not app.chat.busy, "Stop frees the composer at once"
        await settle(app, pilot)
        assert any("Stopped" in str(n.render()) for n in app.query(NoteLine))
        await send(app, pilot, "are you there?")
        assert app.query(AssistantMessage).last().source == "Still here."


RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


async def test_stop_while_a_tool_runs_marks_its_line_stopped(make_app, scripted_bedrock) -> None:
    """A tool line whose turn was stopped does not keep showing as running."""
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": RUNAWAY})]), Reply(text="Still here.")
    )
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "count forever"
        await pilot.press("enter")
        while not app.query(ToolLine):
            await pilot.pause()
        await pilot.press("escape")
        line = app.query_one(ToolLine)
        assert line.status == "stopped" and str(line.title).startswith("■ runQuery")
        await settle(app, pilot)
        await send(app, pilot, "are you there?")
        assert app.query(AssistantMessage).last().source == "Still here."
        line = app.query_one(ToolLine)  # the result that came after Stop: on the line, still ■
        assert line.status == "stopped" and "the query was stopped" in str(
            line._result_view.render()
        )


async def test_rewind_rolls_back_and_puts_the_text_in_the_composer(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="First answer."), Reply(text="Second answer."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "first question")
        await send(app, pilot, "second question")
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("enter")  # the picker starts on the newest message
        await settle(app, pilot)
        assert [m.text for m in app.query(UserMessage)] == ["first question"]
        assert app.chat.composer.text == "second question"
        assert app.session.user_messages()[-1][1] == "first question"


async def test_rewind_puts_back_the_files_sent_with_the_message(
    make_app, scripted_bedrock, tmp_path: Path
) -> None:
    """Rewinding to a message sent with a file returns the file too: sending the edited text
    again sends the file again (the model is told of it), nothing the user attached is lost."""
    notes = tmp_path / "notes.csv"
    notes.write_text("sku,qty\nA1,3\n")
    scripted_bedrock.add(Reply(text="Got the file."), Reply(text="Got it again."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = f"/attach {notes}"
        await pilot.press("enter")
        await pilot.pause()
        await send(app, pilot, "read it")
        assert app.chat.attachments.paths == []
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.chat.composer.text == "read it"
        assert app.chat.attachments.paths == [notes.resolve()]
        await pilot.press("enter")
        await settle(app, pilot)
        assert [str(m.render()) for m in app.query(UserMessage)] == ["read it\n📎 notes.csv"]
    sent = scripted_bedrock.requests[-1].body["messages"][-1]["content"]
    assert any("notes.csv" in block.get("text", "") for block in sent[1:]), sent


async def test_attachment_is_sent_with_the_message(
    make_app, scripted_bedrock, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.csv"
    notes.write_text("sku,qty\nA1,3\n")
    scripted_bedrock.add(Reply(text="Got the file."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = f"/attach {notes}"
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat.attachments.paths == [notes.resolve()]
        await send(app, pilot, "read it")
        assert "notes.csv" in str(app.query(UserMessage).last().render())
        sent = scripted_bedrock.requests[-1].body["messages"][0]["content"]
        assert any("notes.csv" in block.get("text", "") for block in sent)
        assert app.chat.attachments.paths == []


async def test_unsupported_attachment_is_refused_before_sending(make_app, tmp_path: Path) -> None:
    blob = tmp_path / "image.bin"
    blob.write_bytes(b"\x00\x01\x02" * 10)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert not app.chat.attach(blob)
        await pilot.pause()
        assert app.chat.attachments.paths == []
        assert any("binary" in n.message for n in app._notifications)


async def test_a_message_sent_while_the_chat_starts_goes_out_when_ready(
    demo_store, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="Ready now."))
    release = threading.Event()

    def slow_open(*args, **kwargs):  # the real session, opened once the test lets it
        release.wait(10)
        return default_session_factory(*args, **kwargs)

    app = TabletalkApp(demo_store, Settings(), session_factory=slow_open, staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.composer.text = "early question"
        await pilot.press("enter")
        assert app.session is None
        assert [m.text for m in app.query(UserMessage)] == ["early question"]
        release.set()
        await settle(app, pilot)
        assert [m.text for m in app.query(UserMessage)] == ["early question"]
        assert app.query(AssistantMessage).last().source == "Ready now."


async def test_a_long_answer_keeps_the_view_at_the_bottom(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(text="\n\n".join(f"Paragraph {n} of a long answer." for n in range(80)))
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "tell me everything")
        log = app.chat.log_view
        assert log.max_scroll_y > 0
        assert log.scroll_y == log.max_scroll_y


async def test_text_and_enter_arriving_in_one_burst_send_the_whole_text(
    make_app, scripted_bedrock
) -> None:
    from textual import events

    scripted_bedrock.add(Reply(text="Got it."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        await pilot.pause()
        for character in "hi there":  # queued at once, as a terminal delivers a fast paste
            app.post_message(events.Key(character if character != " " else "space", character))
        app.post_message(events.Key("enter", "\r"))
        await settle(app, pilot)
        assert texts(app, UserMessage) == ["hi there"]
        user_text = scripted_bedrock.requests[0].body["messages"][0]["content"][0]["text"]
        assert user_text == "hi there"


async def test_clicking_stop_ends_a_running_turn(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="word " * 400, chunk_delay=0.01))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "write a lot"
        await pilot.press("enter")
        while not app.query(AssistantMessage):
            await pilot.pause()
        assert await pilot.click("#stop")
        assert not app.chat.busy
        await settle(app, pilot)
        assert any("Stopped" in str(n.render()) for n in app.query(NoteLine))


async def test_send_and_stop_are_pressed_by_click_or_enter_and_not_while_disabled(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="First."), Reply(text="Second."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        notes = texts(app, NoteLine)
        assert await pilot.click("#stop")  # disabled while no turn runs: nothing happens
        await pilot.pause()
        assert not app.chat.busy and texts(app, NoteLine) == notes
        app.chat.composer.text = "one"
        assert await pilot.click("#send")
        await settle(app, pilot)
        app.chat.composer.text = "two"
        send_button = app.chat.query_one("#send")
        send_button.focus()  # applied at the app's next turn of its loop, not here
        await pilot.pause()
        await press_ready(pilot, send_button)  # the first turn can end inside the click's look
        assert send_button.has_focus and not send_button.disabled and not app.chat.busy
        await pilot.press("enter")
        await settle(app, pilot)
        assert texts(app, UserMessage) == ["one", "two"]
        assert [m.source for m in app.query(AssistantMessage)] == ["First.", "Second."]


async def test_pasting_a_file_path_attaches_it(make_app, tmp_path: Path) -> None:
    from textual import events

    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        app.post_message(events.Paste(f"'{notes}'"))
        await pilot.pause()
        await pilot.pause()
        assert app.chat.attachments.paths == [notes.resolve()]
        assert app.chat.composer.text == "", "the path is not typed into the message"


@pytest.mark.parametrize("form", ["escaped", "uri", "two"])
async def test_a_path_pasted_as_a_file_manager_drops_it_attaches_the_file(
    make_app, tmp_path: Path, form: str
) -> None:
    """Terminals paste a dropped file as `my\\ file.csv` (or a `file://` URI, or several
    names): those were typed into the message instead of attaching the file."""
    from urllib.parse import quote

    from textual import events

    one = tmp_path / "my file.csv"
    one.write_text("id,name\n1,Ann\n")
    two = tmp_path / "other's notes.txt"
    two.write_text("hello\n")
    pasted = {
        "escaped": str(one).replace(" ", "\\ "),
        "uri": "file://" + quote(str(one)),
        "two": f'{str(one).replace(" ", chr(92) + " ")} "{two}" ',
    }[form]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        app.post_message(events.Paste(pasted))
        await pilot.pause()
        await pilot.pause()
        expected = [one.resolve(), two.resolve()] if form == "two" else [one.resolve()]
        assert app.chat.attachments.paths == expected
        assert app.chat.composer.text == "", "the path is not typed into the message"


async def test_a_resumed_chat_shows_attachments_and_one_review_chip(
    make_app, scripted_bedrock, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("put order 3 on hold\n")
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse(
                    "bulkEdit",
                    {"table": "orders", "keys": [{"id": 3}], "set": {"status": "on hold"}},
                )
            ]
        ),
        Reply(text="Staged."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.chat.attach(notes)
        await send(app, pilot, "do what the notes say")

        def review_chips() -> int:
            return sum(
                1 for c in app.query(ChipButton) if c.chip_action == {"kind": "openStagingPanel"}
            )

        def user_texts() -> list[str]:
            return [str(m.render()) for m in app.query(UserMessage)]

        assert review_chips() == 1
        assert user_texts() == ["do what the notes say\n📎 notes.txt"]
        await app.chat.show_items(app.session.display_items())  # as after a restart or rewind
        await pilot.pause()
        assert review_chips() == 1
        assert user_texts() == ["do what the notes say\n📎 notes.txt"]
        review = next(c for c in app.query(ChipButton) if c.chip_label == "Review staged changes")
        await pilot.click(review)
        await settle(app, pilot)
        assert app.query_one("#tabs").active == "staging"


async def test_tab_cycles_through_at_completions(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        names = [n for n in app.completion_names() if n.startswith("c")]
        assert len(names) >= 2
        await pilot.press("@", "c")
        await pilot.pause()
        assert "tab → " + names[0] in str(app.chat.query_one("#chat-hint").render())
        await pilot.press("tab")
        assert composer.text == names[0] + " "
        await pilot.press("tab")
        assert composer.text == names[1] + " "
        assert composer.has_focus, "Tab cycles instead of leaving the composer"
        await pilot.press("x")
        await pilot.press("tab")
        assert composer.has_focus, "with nothing to complete, Tab keeps the composer"


async def test_pasting_a_bare_word_that_names_a_file_types_it(
    make_app, tmp_path: Path, monkeypatch
) -> None:
    from textual import events

    (tmp_path / "README.md").write_text("hello\n")
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        app.post_message(events.Paste("README.md"))
        await pilot.pause()
        await pilot.pause()
        assert app.chat.attachments.paths == []
        assert app.chat.composer.text == "README.md"


async def test_pasted_text_is_typed_once(make_app) -> None:
    from textual import events

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        app.post_message(events.Paste("orders from last week"))
        await pilot.pause()
        await pilot.pause()
        assert app.chat.composer.text == "orders from last week"


async def test_an_empty_chat_says_what_to_do_and_what_it_runs_on(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        intro = str(app.chat.log_view.query_one(NoteLine).render())
        assert "demo.sqlite" in intro and "Bedrock" in intro and "staging" in intro
        assert "Earlier chats" not in intro, "a first start has none"


async def test_the_intro_of_a_new_chat_says_where_the_earlier_ones_are(
    make_app, scripted_bedrock
) -> None:
    """A restart opened a blank chat with no word that the earlier ones were kept."""
    scripted_bedrock.add(Reply(text="Hi."))
    first = make_app()
    async with first.run_test(size=SIZE) as pilot:
        await settle(first, pilot)
        await send(first, pilot, "hello")
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        intro = str(again.chat.log_view.query_one(".chat-intro").render())
        assert intro.endswith("Earlier chats: ctrl+l."), intro


async def test_three_ask_choices_all_show_whole(make_app, scripted_bedrock) -> None:
    from tui.widgets.chat_items import AnswerChip

    choices = ["Cancel the pending orders", "Keep them and notify customers", "Show me the list"]
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("ask", {"question": "What now?", "choices": choices})])
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "deal with the pending orders")
        log = app.chat.log_view.region
        chips = list(app.query(AnswerChip))
        assert [c.choice for c in chips] == choices
        for chip in chips:
            assert log.contains_region(chip.region), f"{chip.choice!r} is cut off"
            assert chip.region.width >= len(chip.choice)


async def test_a_choice_longer_than_the_chat_wraps_instead_of_being_cut(
    make_app, scripted_bedrock
) -> None:
    """A chip is one line: at 80 columns a long choice lost its end without a sign."""
    from tui.widgets.chat_items import AnswerChip

    long_choice = (
        "Cancel every pending order older than thirty days and email each customer a refund "
        "note [bold]now[/]"
    )
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("ask", {"question": "What now?", "choices": [long_choice, "No"]})])
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(app, pilot, "deal with the pending orders")
        chip = app.query(AnswerChip).first()
        assert app.chat.log_view.region.width < len(long_choice)
        app.chat.log_view.scroll_to_widget(chip, animate=False)
        await settle(app, pilot)
        lines = [s.text for s in app.screen._compositor.render_strips()]
        region = chip.region
        shown = " ".join(
            " ".join(
                line[region.x : region.right] for line in lines[region.y : region.bottom]
            ).split()
        )
        assert " ".join(long_choice.split()) in shown, shown
        second = app.query(AnswerChip).last()
        assert second.region.y > region.bottom, "a blank line between choices"
        starts = [
            len(line[region.x :]) - len(line[region.x :].lstrip())
            for line in lines[region.y : region.bottom]
        ]
        assert len(set(starts)) == 1, f"wrapped lines align left: {starts}"
        await pilot.click(chip)
        await settle(app, pilot)
        assert long_choice in str(scripted_bedrock.requests[-1].body), "the whole choice is sent"


async def test_a_table_too_wide_for_the_chat_shows_as_records_with_no_value_cut(
    make_app, scripted_bedrock
) -> None:
    """Five columns in a 34-column chat were squeezed to `3…` for 37,037.01: too narrow for
    every column's longest word, the table reads as records (field │ value); wide enough,
    it stays a grid."""
    rows = [
        f"| Customer number {i} | person{i}@example.org | {i * 37} | {i * 12345.67:,.2f} |"
        for i in range(1, 6)
    ]
    table = "| customer | email | orders | revenue |\n|---|---|---:|---:|\n" + "\n".join(rows)
    for size, full in (((80, 24), False), ((160, 40), True)):
        scripted_bedrock.add(Reply(text="Top customers:\n\n" + table + "\n\nDone."))
        app = make_app()
        async with app.run_test(size=size) as pilot:
            if full:
                await pilot.press("f2")  # the chat full width
            await send(app, pilot, "top customers")
            await settle(app, pilot)
            [answer] = [m for m in app.query(AssistantMessage) if "revenue" in m.source]
            width, height = answer.size
            text = "\n".join(s.text for s in answer.render_lines(Region(0, 0, width, height)))
            header = next((line for line in text.splitlines() if "revenue" in line), "")
            if full:
                assert "customer" in header and "orders" in header, "one header row: a grid"
            else:
                assert "customer" not in header, "records: one field per line"
                assert "…" not in text
            for i in range(1, 6):
                assert f"{i * 12345.67:,.2f}" in text, (size, text)


async def test_a_long_markdown_table_streams_in_bounded_pieces_each_under_its_header(
    make_app, scripted_bedrock
) -> None:
    """A table has no paragraph break, so a 3,000-row one grew a single widget that was
    re-rendered whole at every step (F1 took seconds to open while it streamed): it is cut
    between rows instead, each piece a table under the same header, no row lost or doubled."""
    header = "| id | name | note |\n|---:|---|---|\n"
    rows = [f"| {i} | name {i} | note {i} |" for i in range(3000)]
    scripted_bedrock.text_chunk_size = 1000
    scripted_bedrock.add(Reply(text="All of them:\n\n" + header + "\n".join(rows) + "\n\nDone."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "list them")
        pieces = [m.source for m in app.query(AssistantMessage)]
        assert max(len(p) for p in pieces) <= 2 * chat_module.SEGMENT
        row = re.compile(r"\| \d+ \|.*")
        with_rows = [p for p in pieces if any(map(row.fullmatch, p.splitlines()))]
        assert len(with_rows) > 5
        assert all(header in p for p in with_rows)
        shown = [line for p in with_rows for line in p.splitlines() if row.fullmatch(line)]
        assert shown == rows
        assert pieces[-1].rstrip().endswith("Done.")


async def test_a_chip_too_long_for_the_chat_ends_in_an_ellipsis(make_app, scripted_bedrock) -> None:
    """At 80 columns a chip's label was cut mid-word at the chat's edge (`Open orders (status =
    'pen`), with nothing saying there was more: it ends in `…`, and its tooltip is whole."""
    from tests.tui.test_tui_polish import widget_lines

    condition = "status = 'pending' AND quantity > 2"
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("proposeOpenTable", {"table": "orders", "query": condition})]),
        Reply(text="Open it with the chip."),
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(app, pilot, "show pending orders")
        chip = app.query_one(ChipButton)
        (line,) = widget_lines(app, chip)
        assert line.rstrip().endswith("…"), line
        assert condition in str(chip.tooltip)


async def test_the_chat_says_it_waits_for_the_model_until_the_answer_starts(
    make_app, scripted_bedrock
) -> None:
    """While the model had not said its first word the chat showed nothing under the message
    (only a dot in the header): it says it is waiting, and how to stop, until text comes."""
    gate = threading.Event()

    def slow(_body: dict) -> Reply:
        gate.wait(30)
        return Reply(text="Here at last.")

    scripted_bedrock.add(slow)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "take your time"
        await pilot.press("enter")
        try:
            assert await refreshed_until(app, lambda: bool(app.query("WaitLine")), 200)
            (line,) = app.query("WaitLine")
            assert "waiting for the model" in str(line.render())
        finally:
            gate.set()
        await settle(app, pilot)
        assert not app.query("WaitLine")
        assert app.query(AssistantMessage).last().source == "Here at last."


async def test_while_the_model_writes_tool_calls_the_chat_says_which_under_its_text(
    make_app, scripted_bedrock
) -> None:
    """The model's text came, then it wrote tool calls for seconds with nothing new on the
    screen: a line under the text names the call being written, until the calls run."""
    calls = [ToolUse("listTables", {}) for _ in range(3)]
    scripted_bedrock.add(Reply(text="Let me look.", tool_uses=calls, chunk_delay=0.4))
    scripted_bedrock.add(Reply(text="Four tables."))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "what tables are there?"
        await pilot.press("enter")

        def writing() -> str:
            lines = [str(line.render()) for line in app.query("WaitLine")]
            return lines[0] if lines else ""

        for _ in range(300):  # at most 15 s; the third call alone streams for 2 s
            if re.search(r"writing listTables \(call [23]\)", writing()):
                break
            await pilot.pause(0.05)
        else:
            raise AssertionError(f"the line said {writing()!r}")
        log = list(app.chat.log_view.children)
        answer = app.query(AssistantMessage).last()
        assert answer.source == "Let me look."
        assert log.index(app.query_one("WaitLine")) > log.index(answer), "under the text"
        await settle(app, pilot)
        assert not app.query("WaitLine")
        assert [str(g.title) for g in app.query("ToolGroup")] == ["✓ listTables ×3"]
        assert app.query(AssistantMessage).last().source == "Four tables."


async def test_a_long_conversation_shows_its_newest_items_and_the_earlier_ones_on_demand(
    make_app,
) -> None:
    """A resumed conversation of 150 messages builds the newest 60; "Show 60 earlier of 90"
    above them builds the next 60 (oldest last), then "Show 30 earlier of 30" the rest."""
    from tui.widgets.chat_log import RECENT_ITEMS

    items = [{"role": "user", "text": f"question {i}"} for i in range(150)]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.chat.show_items(items)
        await pilot.pause()

        def shown() -> list[str]:
            return [str(m.render()) for m in app.query(UserMessage)]

        assert shown() == [f"question {i}" for i in range(150 - RECENT_ITEMS, 150)]
        for hidden, first in ((90, 30), (30, 0)):
            button = app.query_one("#show-earlier")
            assert f"Show {min(RECENT_ITEMS, hidden)} earlier of {hidden}" in str(button.label)
            button.press()
            await settle(app, pilot)
            assert shown() == [f"question {i}" for i in range(first, 150)]
        assert not app.query("#show-earlier")
        await app.chat.show_items([])
        await pilot.pause()
        assert not app.query(UserMessage) and app.query(NoteLine), "an empty chat shows the intro"
