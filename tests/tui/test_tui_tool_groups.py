"""Many calls of one tool in a row fold into one group line that expands to the calls' lines."""

from __future__ import annotations

from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, refreshed_until, send, settle
from tui.app import TabletalkApp
from tui.widgets.chat_items import AssistantMessage, ToolLine

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def get_items(count: int, failing: tuple[int, ...] = ()) -> list[ToolUse]:
    """`count` getItem calls of customers 1, 2, …; those numbered in `failing` ask a table
    that does not exist (an error result)."""
    return [
        ToolUse("getItem", {"table": "nosuch" if i in failing else "customers", "key": {"id": i}})
        for i in range(1, count + 1)
    ]


def group_titles(app: TabletalkApp) -> list[str]:
    return [str(group.title) for group in app.query("ToolGroup")]


async def _alt_t_lands_on_the_group(app: TabletalkApp, pilot) -> None:
    """The newest tool row (alt+t) is the group's line, not a call folded inside it."""
    app.action_focus_latest("tool")
    await pilot.pause()
    assert app.focused is app.query_one("ToolGroup > CollapsibleTitle")


async def test_forty_calls_of_one_tool_show_as_one_line_that_expands(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(tool_uses=get_items(40, failing=(7, 31))), Reply(text="Done."))
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "fetch forty customers")
        assert group_titles(app) == ["✗ getItem ×40  2 failed"]
        group = app.query_one("ToolGroup")
        lines = list(group.query(ToolLine))
        assert len(lines) == 40 and group.collapsed
        assert not any(line.region.height for line in lines), "folded: the calls take no rows"
        failed = [line for line in lines if line.status == "error"]
        assert [line.tool_input["key"]["id"] for line in failed] == [7, 31]
        await pilot.click(group.query_one("CollapsibleTitle"))
        await pilot.pause()
        assert not group.collapsed
        assert all(line.region.height == 1 for line in lines[:5]), "expanded: a line per call"
        assert str(failed[0].title).startswith("✗ getItem")
        assert str(lines[1].title) == '✓ getItem  key={"id": 2}, table="customers"', (
            "the key that tells the calls apart leads, so a narrow chat still shows it"
        )
        assert str(failed[1].title) == (
            '✗ getItem  unknown table \'nosuch\'  key={"id": 31}, table="nosuch"'
        ), "why it failed shows on the line, without opening it"
        failed[0].query_one("CollapsibleTitle").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not failed[0].collapsed and "nosuch" in str(failed[0]._result_view.render())


async def test_two_calls_stay_as_lines_and_other_tools_between_break_the_run(
    make_app, scripted_bedrock
) -> None:
    uses = [
        *get_items(2),
        ToolUse("listTables", {}),
        *get_items(2),
        ToolUse("countItems", {"table": "customers"}),
        ToolUse("countItems", {"table": "orders"}),
        ToolUse("countItems", {"table": "products"}),
    ]
    scripted_bedrock.add(Reply(tool_uses=uses), Reply(text="Done."))
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "a bit of everything")
        assert group_titles(app) == ["✓ countItems ×3"]
        top = [w for w in app.chat.log_view.children if isinstance(w, ToolLine)]
        assert [w.tool_name for w in top] == [
            "getItem",
            "getItem",
            "listTables",
            "getItem",
            "getItem",
        ]


async def test_a_resumed_conversation_shows_the_same_group(demo_store, scripted_bedrock) -> None:
    from agent.config import Settings

    scripted_bedrock.add(Reply(tool_uses=get_items(12, failing=(3,))), Reply(text="Done."))
    first = TabletalkApp(demo_store, Settings(mode="auto"), staging_poll_seconds=0)
    async with first.run_test(size=SIZE) as pilot:
        await send(first, pilot, "fetch twelve customers")
        live = group_titles(first)
        conversation_id = first.session.conversation_id
    assert live == ["✗ getItem ×12  1 failed"]
    again = TabletalkApp(
        demo_store, Settings(mode="auto"), conversation_id=conversation_id, staging_poll_seconds=0
    )
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert group_titles(again) == live
        assert len(again.query_one("ToolGroup").query(ToolLine)) == 12
        await _alt_t_lands_on_the_group(again, pilot)


async def test_stop_mid_group_marks_the_running_call_and_its_late_result_lands_on_it(
    make_app, scripted_bedrock
) -> None:
    uses = [ToolUse("runQuery", {"query": f"SELECT {i}"}) for i in range(3)]
    uses.append(ToolUse("runQuery", {"query": RUNAWAY}))
    scripted_bedrock.add(Reply(tool_uses=uses), Reply(text="Still here."))
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "count forever"
        await pilot.press("enter")
        assert await refreshed_until(
            app,
            lambda: any(line.tool_input["query"] == RUNAWAY for line in app.query(ToolLine)),
            refreshes=400,
        ), "the fourth call never started"
        assert group_titles(app) == ["… runQuery ×4  running"]
        await pilot.press("escape")
        assert group_titles(app) == ["■ runQuery ×4  1 stopped"]
        await settle(app, pilot)
        await send(app, pilot, "are you there?")
        assert app.query(AssistantMessage).last().source == "Still here."
        lines = list(app.query_one("ToolGroup").query(ToolLine))
        assert [line.status for line in lines] == ["success"] * 3 + ["stopped"]
        assert "the query was stopped" in str(lines[-1]._result_view.render())
        await _alt_t_lands_on_the_group(app, pilot)


async def test_a_resumed_chat_shows_each_chip_under_its_call_as_the_live_chat_did(
    demo_store, scripted_bedrock
) -> None:
    """Three proposeOpenTable calls in one step: live, each chip follows its call, so nothing
    folds; the saved items listed the calls first and folded them on resume."""
    from agent.config import Settings

    tables = ("orders", "customers", "products")
    uses = [ToolUse("proposeOpenTable", {"table": t}) for t in tables]
    scripted_bedrock.add(Reply(tool_uses=uses), Reply(text="Pick one."))

    def shown(app: TabletalkApp) -> list[str]:
        """The log's kinds of widget; the intro note shows in a new chat only, and a saved
        answer is drawn by its own widget."""
        names = [type(w).__name__ for w in app.chat.log_view.children]
        return [n.replace("SavedAnswer", "AssistantMessage") for n in names if n != "NoteLine"]

    first = TabletalkApp(demo_store, Settings(mode="auto"), staging_poll_seconds=0)
    async with first.run_test(size=SIZE) as pilot:
        await send(first, pilot, "which table?")
        live = shown(first)
        conversation_id = first.session.conversation_id
    assert live.count("ToolLine") == 3 and "ToolGroup" not in live
    again = TabletalkApp(
        demo_store, Settings(mode="auto"), conversation_id=conversation_id, staging_poll_seconds=0
    )
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert shown(again) == live, (shown(again), live)


def test_a_resumed_chat_builds_about_sixty_lines_however_its_calls_are_grouped() -> None:
    from tui.widgets.chat_log import RECENT_ITEMS, newest_start

    call = {"tool": "getItem"}
    units = [[call] * 40 for _ in range(10)]  # ten groups of forty calls
    at = newest_start(units)
    assert sum(len(u) for u in units[at:]) <= RECENT_ITEMS and at == 9
    assert newest_start([[call] * 100]) == 0, "a group larger than the budget still shows"
    plain = [{"text": str(n)} for n in range(100)]
    assert newest_start(plain) == 100 - RECENT_ITEMS
