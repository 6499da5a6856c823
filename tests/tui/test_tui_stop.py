"""Stop and responsiveness while a very long answer streams in (200,000 characters at once)."""

from __future__ import annotations

import tui.widgets.answer_segments as segments
import tui.widgets.chat as chat_module
from tests.support.scripted_bedrock import Reply, ToolUse, Usage
from tests.tui import helpers
from tests.tui.helpers import SIZE, send, settle
from tui.app import TabletalkApp
from tui.screens.help import HelpScreen
from tui.widgets.chat_items import AssistantMessage, ChipButton
from tui.widgets.chat_lines import NoteLine
from tui.widgets.status_bar import short_count

LONG = "".join(f"Paragraph {n}: " + "the orders grew steadily. " * 12 + "\n\n" for n in range(700))[
    :200_000
]


async def start_long_answer(app: TabletalkApp, pilot, scripted_bedrock) -> None:
    await helpers.start_long_answer(app, pilot, scripted_bedrock, LONG)


async def test_stop_ends_a_huge_answer_at_once_and_keeps_what_was_shown(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        await pilot.press("escape")
        assert not app.chat.busy, "Stop frees the composer at once"
        shown = app.query_one(AssistantMessage).source
        await settle(app, pilot)
        assert any("Stopped" in str(n.render()) for n in app.query(NoteLine))
        answer = app.query_one(AssistantMessage).source
        assert 0 < len(answer) < len(LONG), "the partial text stays; the rest is not rendered"
        assert answer == shown, "nothing more is rendered after Stop"
        scripted_bedrock.add(Reply(text="Still here."))
        await send(app, pilot, "are you there?")
        assert app.query(AssistantMessage).last().source == "Still here."


async def test_ctrl_c_stops_a_running_answer_and_otherwise_says_how_to_quit(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    """ctrl+c mid-answer only said "Do you want to quit?" while the answer ran on: it stops
    the answer as Esc does (and as ctrl+c does in `tabletalk ask`), from the composer too."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        assert app.focused is app.chat.composer
        await pilot.press("ctrl+c")
        assert not app.chat.busy, "stopped"
        await settle(app, pilot)
        assert any("Stopped" in str(n.render()) for n in app.query(NoteLine))
        assert not any(n.title == "Do you want to quit?" for n in app._notifications)
        await pilot.press("ctrl+c")  # nothing runs: Textual's word on quitting
        await pilot.pause()
        assert any(n.title == "Do you want to quit?" for n in app._notifications)
        assert app.is_running


async def test_help_opens_while_a_huge_answer_renders(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert app.chat.busy and app.chat.rendering, "the answer is still coming in"
        assert len(app.query_one(AssistantMessage).source) < len(LONG)
        await pilot.press("escape")  # closes the help
        assert app.chat.busy
        await pilot.press("escape")  # stops the answer
        assert not app.chat.busy


async def test_a_huge_answer_renders_whole_when_not_stopped(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text=LONG))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "write me a report")
        while app.chat.busy:  # the last render steps
            await pilot.pause()
        pieces = list(app.chat.log_view.query("SavedAnswer, AssistantMessage"))
        notes = [str(n.render()) for n in app.query(NoteLine)]
        assert "".join(w.source for w in pieces) == LONG, notes
        assert len(pieces) > 1, "long answers are kept as light segments"
        assert not app.chat.busy


async def test_quitting_while_an_answer_streams_exits_without_a_traceback(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    """Quit stopped the turn, whose "Stopped" note was then mounted into a chat log being
    torn down: the terminal got a MountError traceback instead of a clean exit."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
    assert app._exception is None, repr(app._exception)


async def test_quitting_while_the_model_answers_keeps_the_message_in_the_conversation(
    make_app, scripted_bedrock, monkeypatch
) -> None:
    """Quit stops the turn, which ends and saves on its own thread; the app left before it
    did, the store was closed under it, the turn failed and its conversation (the message
    just typed) was deleted. The app now exits once the stopped turn has saved."""
    from agent.conversations import ConversationStore

    order: list[str] = []
    save = ConversationStore.save

    def recorded_save(self, conversation):  # type: ignore[no-untyped-def]
        if conversation.messages:
            order.append("saved")
        return save(self, conversation)

    monkeypatch.setattr(ConversationStore, "save", recorded_save)
    app = make_app()
    exit_app = app.exit
    monkeypatch.setattr(app, "exit", lambda *a, **k: (order.append("exit"), exit_app(*a, **k)))
    scripted_bedrock.add(Reply(text="Too late.", delay=20))  # the request stays in flight
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "write me a report"
        await pilot.press("enter")
        while not scripted_bedrock.requests:
            await pilot.pause()
        assert app.chat.busy
        order.clear()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert order[:2] == ["saved", "exit"], order


async def test_the_header_counts_the_answers_tokens_while_it_streams(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    """The header said `tokens 0/0` until the model's usage came at the end of the answer: it
    now counts the streamed text up (estimated, marked ~), then shows the model's figures."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        shown = len(app.query_one(AssistantMessage).source)
        header = app.status.render().plain
        assert f"~{short_count(shown // 4)} out" in header, header
        app.chat._render_timer.stop()
        await app.chat._render_step()  # the next batch: the count goes up
        more = sum(len(m.source) for m in app.query(AssistantMessage))
        assert more > shown
        header = app.status.render().plain
        assert f"~{short_count(more // 4)} out" in header, header
        await pilot.press("escape")
        await settle(app, pilot)
        assert "~" not in app.status.render().plain, "no estimate once the turn is over"


async def test_the_header_shows_the_models_token_counts_once_an_answer_ends(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="There are 240 customers.", usage=Usage(input=1500, output=9)))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "how many customers?")
        header = app.status.render().plain
        assert "1.5k/9" in header or "1.5k in / 9 out" in header, header


async def test_an_answer_on_one_long_line_streams_in_bounded_pieces(
    make_app, scripted_bedrock
) -> None:
    """With no paragraph break nor table, a 100,000-character line grew one widget that was
    re-rendered whole at every step (Stop took 1.5 s and F1 3.7 s halfway through a 200 KB
    line): it is cut at a space past LIMIT, the pieces drawn as one paragraph, no word lost."""
    words = ("orders", "**pending**", "customer", "`status`", "42", "returns", "grew")
    text = " ".join(words[n % len(words)] for n in range(14_000))
    scripted_bedrock.text_chunk_size = 1000
    scripted_bedrock.add(Reply(text=text))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "one line please")
        pieces = list(app.query(AssistantMessage))
        assert "".join(p.source for p in pieces) == text
        assert len(pieces) > 5
        assert max(len(p.source) for p in pieces) <= segments.LIMIT + chat_module.RENDER_BATCH
        assert all(p.has_class("-continued") for p in pieces[1:]), "no gap inside the line"
        assert all(p.source.startswith(words) for p in pieces), "cut between words"


async def test_a_long_code_block_streams_in_bounded_pieces_each_inside_the_fence(
    make_app, scripted_bedrock
) -> None:
    code = "\n".join(f"print({n})  # line {n}" for n in range(4000))
    text = "Here:\n```python\n" + code + "\n```\nDone."
    scripted_bedrock.text_chunk_size = 1000
    scripted_bedrock.add(Reply(text=text))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "print a lot")
        pieces = [p.source for p in app.query(AssistantMessage)]
        assert len(pieces) > 5
        assert max(len(p) for p in pieces) <= segments.LIMIT + chat_module.RENDER_BATCH
        assert all(p.startswith("```python\nprint(") for p in pieces[1:]), "the fence reopens"
        rest = "".join(p.removeprefix("```python\n") for p in pieces[1:])
        assert pieces[0] + rest == text


async def test_stop_while_a_long_answer_still_renders_keeps_the_review_of_what_it_staged(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    """The turn ran ahead of the screen (its long answer still waiting to be shown) and staged
    a change: Stop drops the rest of the text, not the news that a change waits for review."""
    scripted_bedrock.text_chunk_size = 40_000
    stage = ToolUse("stageItem", {"table": "orders", "op": "update", "key": {"id": 1},
                                  "values": {"status": "on hold"}})  # fmt: skip
    scripted_bedrock.add(Reply(text=LONG, tool_uses=[stage]), Reply(text="Staged."))
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "put order 1 on hold"
        await pilot.press("enter")
        for _ in range(500):  # bounded: a turn that never stages fails, not hangs
            if app.session.staging.count():
                break
            await pilot.pause(0.01)
        assert app.session.staging.count() == 1
        assert app.chat.busy and app.chat.rendering, "the answer still waits to be shown"
        await pilot.press("escape")
        await settle(app, pilot)
        assert [chip.chip_action for chip in app.query(ChipButton)] == [
            {"kind": "openStagingPanel"}
        ]
