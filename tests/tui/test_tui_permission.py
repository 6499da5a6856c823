"""Permission prompts: a gated call in manual mode waits for the person's decision."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import Static

from agent.config import Settings
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, settle
from tui.app import TabletalkApp
from tui.commands import app_commands
from tui.screens.permission import PermissionScreen
from tui.widgets.chat_items import ToolLine


async def _send_until_prompt(app, pilot, text: str) -> PermissionScreen:
    """Send `text` and wait until the permission modal is up."""
    await settle(app, pilot)
    app.chat.composer.text = text
    await pilot.press("enter")
    while not isinstance(app.screen, PermissionScreen):
        await pilot.pause()
    return app.screen


def _gated_script(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": "SELECT count(*) AS n FROM customers"})]),
        Reply(text="Done."),
    )


async def test_allow_once_runs_the_gated_call(make_app, scripted_bedrock) -> None:
    from tui.widgets.chat_lines import ChatHint

    _gated_script(scripted_bedrock)
    app = make_app()
    rings: list[bool] = []
    app.bell = lambda: rings.append(True)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await _send_until_prompt(app, pilot, "count customers")
        await pilot.pause()
        hint = app.chat.query_one(ChatHint)
        assert _drawn(hint).startswith("↑ answer the dialog first"), "`esc stop` is not Esc here"
        assert rings == [True], "the prompt rings the bell once"
        assert screen.request.tool == "runQuery"
        assert screen.query_one(Vertical).border_title == "Permission needed", (
            "a step's only gated call is not numbered"
        )
        assert "SELECT count(*)" in "\n".join(_input_lines(app))
        await pilot.press("1")
        await settle(app, pilot)
        line = app.query_one(ToolLine)
        assert line.status == "success"
        assert "240" in str(line._result_view.render())
        assert "send" in _drawn(hint), "the dialog gone, the hint names the chat's keys again"


def _drawn(widget) -> str:
    """The first line of `widget` as it is drawn now (its cached render, if not refreshed)."""
    from textual.geometry import Region

    return widget.render_lines(Region(0, 0, widget.size.width, 1))[0].text.strip()


async def test_deny_shows_denied_sends_an_error_result_and_the_turn_goes_on(
    make_app, scripted_bedrock
) -> None:
    _gated_script(scripted_bedrock)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _send_until_prompt(app, pilot, "count customers")
        await pilot.click("#deny")
        await settle(app, pilot)
        line = app.query_one(ToolLine)
        assert line.status == "denied"
        assert str(line.title).startswith("⊘ runQuery denied "), (
            "a denial is not shown as a failure"
        )
        assert not app.chat.busy
        results = scripted_bedrock.requests[-1].body["messages"][-1]["content"]
        assert results[0]["toolResult"]["status"] == "error", "Converse knows success/error"


async def test_allow_for_the_conversation_asks_only_once(make_app, scripted_bedrock) -> None:
    query = {"query": "SELECT 1 AS one"}
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", query)]),
        Reply(tool_uses=[ToolUse("runQuery", query)]),
        Reply(text="Both ran."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _send_until_prompt(app, pilot, "twice")
        await pilot.press("2")
        await settle(app, pilot)
        assert [line.status for line in app.query(ToolLine)] == ["success", "success"]


async def test_stop_while_the_prompt_is_open_denies_and_ends_the_turn(
    make_app, scripted_bedrock
) -> None:
    _gated_script(scripted_bedrock)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _send_until_prompt(app, pilot, "count customers")
        app.chat.stop()
        await settle(app, pilot)
        assert not isinstance(app.screen, PermissionScreen)
        assert not app.chat.busy


async def test_full_auto_still_asks_before_replacing_a_file(
    make_app, scripted_bedrock, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "exports" / "report.csv"
    report.parent.mkdir()
    report.write_text("the user's report\n")
    export = {"query": "SELECT id FROM customers", "path": "report.csv", "overwrite": True}
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "export csv"})]),
        Reply(tool_uses=[ToolUse("exportCsv", export)]),
        Reply(text="Kept."),
        Reply(tool_uses=[ToolUse("exportCsv", export)]),
        Reply(text="Replaced."),
    )
    app = make_app(mode="full-auto")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _send_until_prompt(app, pilot, "export to report.csv")
        assert "Replace the existing file" in str(screen.query_one(Static).render())
        assert not screen.query("#allow_conversation"), "a file replace is decided per call"
        await pilot.press("enter")  # the focused answer is No
        await settle(app, pilot)
        assert report.read_text() == "the user's report\n"
        assert app.query(ToolLine).last().status == "error"
        await _send_until_prompt(app, pilot, "yes, replace it")
        await pilot.press("1")
        await settle(app, pilot)
        assert report.read_text().startswith("id\n")
        assert app.query(ToolLine).last().status == "success"


async def test_a_long_query_does_not_push_the_export_path_out_of_view(make_app) -> None:
    from agent.permissions import PermissionRequest

    padded = "SELECT id FROM customers WHERE " + " OR ".join(["id = 1"] * 300)
    request = PermissionRequest(
        "exportCsv", {"query": padded, "path": "reports/all.csv"}, "manual", "c1", "export"
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.push_screen(PermissionScreen(request))
        await pilot.pause()
        shown = " ".join(line.strip() for line in _input_lines(app))
        assert shown.index('"path": "reports/all.csv"') < shown.index('"query"')
        assert padded in shown


def _input_lines(app) -> list[str]:
    """The tool input's lines as the prompt draws them (every line, scrolled or not)."""
    from textual.geometry import Region

    widget = app.screen.query_one("#tool-input Static")
    width, height = widget.size
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


async def test_a_long_value_wraps_under_its_key_not_at_the_edge(make_app) -> None:
    """At 80 columns a long query wrapped back to the box's margin, so the JSON looked broken."""
    from agent.permissions import PermissionRequest

    query = (
        "SELECT status, count(*) AS n, sum(total) AS revenue FROM orders WHERE created_at > "
        "'2026-01-01' GROUP BY status ORDER BY revenue DESC"
    )
    request = PermissionRequest("runQuery", {"query": query}, "manual", "c1", "read")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await app.push_screen(PermissionScreen(request))
        await pilot.pause()
        lines = [line for line in _input_lines(app) if line.strip()]
        assert lines[0].strip() == "{" and lines[-1].strip() == "}"
        margin = len(lines[0]) - len(lines[0].lstrip())
        inner = lines[1:-1]
        assert len(inner) >= 2, "the query wraps at 80 columns"
        assert all(len(line) - len(line.lstrip()) >= margin + 2 for line in inner), lines


async def _prompt_or_end(app, pilot, text: str) -> PermissionScreen | None:
    """Send `text`; the permission modal when one comes up, None when the turn ends first."""
    await settle(app, pilot)
    app.chat.composer.text = text
    await pilot.press("enter")
    while app.chat.busy and not isinstance(app.screen, PermissionScreen):
        await pilot.pause()
    return app.screen if isinstance(app.screen, PermissionScreen) else None


async def test_a_grant_goes_with_the_turn_a_rewind_removes(make_app, scripted_bedrock) -> None:
    """'Allow for this conversation' given in the second turn is taken back by rewinding to
    before that turn (ctrl+r); the grant from the first turn stays."""
    query = ToolUse("runQuery", {"query": "SELECT 1 AS one"})
    count = ToolUse("countItems", {"table": "orders"})
    scripted_bedrock.add(
        Reply(tool_uses=[query]), Reply(text="One."),
        Reply(tool_uses=[count]), Reply(text="Many."),
        Reply(tool_uses=[query, count]), Reply(text="Both again."),
    )  # fmt: skip
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first", "second"):
            screen = await _prompt_or_end(app, pilot, text)
            assert screen is not None
            await pilot.press("2")
            await settle(app, pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("enter")  # the newest message: "second"
        await settle(app, pilot)
        assert app.chat.composer.text == "second"

        screen = await _prompt_or_end(app, pilot, "second, again")
        assert screen is not None, "the grant given in the removed turn no longer holds"
        assert screen.request.tool == "countItems", "the first turn's grant still holds"
        await pilot.press("1")
        await settle(app, pilot)
        assert [line.status for line in app.query(ToolLine)][-2:] == ["success", "success"]


async def test_the_prompt_for_an_external_tool_names_its_server_as_configured(
    make_app, scripted_bedrock
) -> None:
    """A gated tool of a configured MCP server: the prompt named only `_b_notes_b___shout_loud`
    (the model-facing name), not the server nor the tool's own name there. Both are untrusted,
    so a server name that looks like markup shows as written."""
    import sys
    from pathlib import Path

    from agent.config import McpServerSettings

    server = Path(__file__).resolve().parents[1] / "support" / "mcp_echo_server.py"
    hostile = "[b]notes[/b]"
    app = make_app(
        mcp_servers={hostile: McpServerSettings(command=sys.executable, args=[str(server)])}
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.session is not None
        name = next(
            n for n, tool in app.session.toolset.external.items() if tool.row.name.endswith("loud")
        )
        app.session.active.add(name)
        scripted_bedrock.add(
            Reply(tool_uses=[ToolUse(name, {"text": "hello"})]), Reply(text="Shouted.")
        )
        screen = await _send_until_prompt(app, pilot, "shout hello")
        shown = "\n".join(str(static.render()) for static in screen.query(Static))
        assert name in shown
        assert 'the MCP server "[b]notes[/b]"' in shown, shown
        assert 'named "shout.loud"' in shown, shown
        assert "writes your data to a file" not in shown
        await pilot.press("3")
        await settle(app, pilot)
        assert app.query(ToolLine).last().status == "denied"


async def test_ctrl_c_at_a_prompt_stops_the_answer_instead_of_asking_for_each_call(
    make_app, scripted_bedrock
) -> None:
    """Forty gated calls in one step meant forty prompts: Esc denies one, and ctrl+c (the
    chat's stop key) only copied text on the prompt. Now ctrl+c stops the whole answer."""
    calls = [ToolUse("getItem", {"table": "orders", "key": {"id": n}}) for n in range(1, 6)]
    scripted_bedrock.add(Reply(tool_uses=calls), Reply(text="Done."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _send_until_prompt(app, pilot, "read five orders")
        hint = " ".join(str(s.render()) for s in screen.query(Static))
        assert "ctrl+c stops the answer" in hint.replace("^c", "ctrl+c"), hint
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        assert not isinstance(app.screen, PermissionScreen), "no prompt for the other calls"
        assert not app.chat.busy
        assert len(scripted_bedrock.requests) == 1, "the stopped turn asks the model no more"


async def _next_prompt(app, pilot, previous: PermissionScreen | None) -> PermissionScreen:
    """The permission modal that follows `previous` (bounded: a prompt that never comes fails)."""
    for _ in range(2000):
        screen = app.screen
        if isinstance(screen, PermissionScreen) and screen is not previous:
            return screen
        await pilot.pause()
    raise AssertionError("no further permission prompt came up")


async def test_each_prompt_of_a_step_says_which_call_it_is_and_denials_group_as_denied(
    demo_store, scripted_bedrock
) -> None:
    """Five gated calls in one step: every prompt says "call k of 5"; the user allows the
    first and denies the rest, and the run's line says "4 denied" (not "4 failed"), live and
    after resuming the conversation."""

    queries = [ToolUse("runQuery", {"query": f"SELECT {n} AS n"}) for n in range(1, 6)]
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {}), *queries]), Reply("Ok."))
    app = TabletalkApp(demo_store, Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _send_until_prompt(app, pilot, "five queries")
        titles = []
        for answer in "13333":
            screen = await _next_prompt(app, pilot, None if not titles else screen)
            titles.append(screen.query_one(Vertical).border_title)
            await pilot.press(answer)
        await settle(app, pilot)
        assert titles == [f"Permission needed · call {n} of 5" for n in range(1, 6)], (
            "the silent listTables call is not counted"
        )
        group = app.query_one("ToolGroup")
        assert str(group.title) == "⊘ runQuery ×5  4 denied"
        statuses = [line.status for line in group.query(ToolLine)]
        assert statuses == ["success"] + ["denied"] * 4
        results = scripted_bedrock.requests[-1].body["messages"][-1]["content"]
        statuses_sent = [b["toolResult"]["status"] for b in results if "toolResult" in b]
        assert statuses_sent == ["success"] * 2 + ["error"] * 4
        conversation_id = app.session.conversation_id
    again = TabletalkApp(
        demo_store, Settings(mode="manual"), conversation_id=conversation_id, staging_poll_seconds=0
    )
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        group = again.query_one("ToolGroup")
        assert str(group.title) == "⊘ runQuery ×5  4 denied", "resumed, a denial stays a denial"
        assert [line.status for line in group.query(ToolLine)] == ["success"] + ["denied"] * 4


async def test_a_resumed_chats_grants_are_named_and_can_be_forgotten(
    make_app, demo_store, scripted_bedrock
) -> None:
    """'Allow for this chat' outlives a restart (it is saved with the chat) without a sign:
    resuming names the tools that still run without asking; forgetting makes them ask."""
    query = ToolUse("runQuery", {"query": "SELECT 1 AS one"})
    scripted_bedrock.add(
        Reply(tool_uses=[query]), Reply(text="One."),
        Reply(tool_uses=[query]), Reply(text="Again."),
        Reply(tool_uses=[query]), Reply(text="Asked."),
    )  # fmt: skip
    first = make_app()
    async with first.run_test(size=SIZE) as pilot:
        await _send_until_prompt(first, pilot, "first")
        await pilot.press("2")  # allow for this chat
        await settle(first, pilot)
        chat_id = first.session.conversation_id

    def resumed() -> TabletalkApp:
        settings = Settings(mode="manual")
        return TabletalkApp(demo_store, settings, staging_poll_seconds=0, conversation_id=chat_id)

    app = resumed()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        toasts = [n.message for n in app._notifications if n.title == "Permissions"]
        assert toasts == [
            "Earlier in this chat you allowed runQuery without asking; that still holds. "
            "To be asked again: ctrl+p, “Forget this chat's permissions”."
        ]
        assert await _prompt_or_end(app, pilot, "again") is None, "the grant still holds"
        titles = [command.title for command in app_commands(app)]
        assert "Forget this chat's permissions" in titles, "the toast's advice exists"
        app.action_forget_grants()
        await settle(app, pilot)
        told = "runQuery asks again before each call in this chat."
        assert any(n.message == told for n in app._notifications)
        screen = await _prompt_or_end(app, pilot, "once more")
        assert screen is not None and screen.request.tool == "runQuery", "it asks again"
        await pilot.press("1")
        await settle(app, pilot)
    again = resumed()
    async with again.run_test(size=SIZE, notifications=True) as pilot:
        await settle(again, pilot)
        assert not [n for n in again._notifications if n.title == "Permissions"], "saved"
