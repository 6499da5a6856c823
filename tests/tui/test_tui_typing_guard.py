"""Keys typed for something else answer no question: a permission prompt that opens while the
user types, a commit question that one letter of a typed word opened, a change's detail opened
by the Enter of a double Enter. (The other tests answer at once: tests/tui/conftest.py.)"""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

import tui.screens.typing_guard as typing_guard
from agent.staging import StagingArea
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, settle
from tui.screens.confirm import ConfirmScreen
from tui.screens.permission import PermissionScreen
from tui.widgets.chat_items import ToolLine
from tui.widgets.staged_change import ChangeDetailScreen
from tui.widgets.staging_panel import StagingPanel

GUARD = 1.5


class GuardClock:
    """The guard's clock, moved only by the test: a burst is one instant however slowly a
    loaded machine presses it (with the real clock a slow CI run answered the prompt)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> GuardClock:
    clock = GuardClock()
    monkeypatch.setattr(typing_guard, "GUARD_SECONDS", GUARD)
    monkeypatch.setattr(typing_guard, "time", clock)
    return clock


async def _pause_typing(clock: GuardClock) -> None:
    """As a person stops typing to read the question."""
    clock.now += GUARD + 0.2
    await asyncio.sleep(0)


def _cities(path) -> dict[int, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT id, city FROM customers WHERE id IN (1, 2)"))


async def test_letters_typed_as_a_permission_prompt_opens_go_to_the_message_box(
    make_app, scripted_bedrock, guarded
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": "SELECT count(*) AS n FROM customers"})]),
        Reply(tool_uses=[ToolUse("runQuery", {"query": "SELECT 1 AS one"})]),
        Reply(text="Done."),
    )
    app = make_app()  # manual: every runQuery asks
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "count customers"
        await pilot.press("enter")
        while not isinstance(app.screen, PermissionScreen):
            await pilot.pause()
        prompt = app.screen
        await pilot.press("t", "o", "p", "space", "1")  # "top 1…", meant for the composer
        assert app.screen is prompt, "no key of the burst answered the prompt, not even the 1"
        assert app.chat.composer.text == "top 1"
        assert "went to the message box" in str(prompt.query_one("#guard-note").render())
        await _pause_typing(guarded)
        await pilot.press("a")  # a letter never answers: it is typing
        assert app.screen is prompt and app.chat.composer.text == "top 1a"
        await _pause_typing(guarded)
        await pilot.press("1")  # read, then answered: allow once, not for the chat
        for _ in range(400):  # the second call's prompt (bounded: a broken answer fails)
            if isinstance(app.screen, PermissionScreen) and app.screen is not prompt:
                break
            await pilot.pause(0.01)
        assert app.screen is not prompt, "1 after a pause answered the prompt"
        assert [line.status for line in app.query(ToolLine)][0] == "success"
        await pilot.press("escape")  # the second call asks again (nothing granted for the chat)
        await settle(app, pilot)
        assert [line.status for line in app.query(ToolLine)] == ["success", "denied"]
        assert app.chat.composer.text == "top 1a", "nothing typed was lost"


async def test_a_word_typed_into_the_staging_panel_commits_nothing(
    make_app, demo_store, demo_path, guarded
) -> None:
    area = StagingArea(demo_store)
    for key in (1, 2):
        area.stage("customers", "update", {"id": key}, {"city": "Quito"}, origin="test")
    before = _cities(demo_path)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await pilot.press("c", "i", "t", "y")  # c asks to commit; y of "city" must not answer
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert _cities(demo_path) == before and len(area.list()) == 2
        await _pause_typing(guarded)
        await pilot.press("y")
        await settle(app, pilot)
        assert _cities(demo_path) == {1: "Quito", 2: "Quito"}


async def test_enter_twice_on_a_staged_delete_commits_nothing_and_commit_this_asks_first(
    make_app, demo_store, demo_path
) -> None:
    """The panel promises that a delete leaving rows pointing at nothing asks first: so does
    its detail's Commit this, and the Enter that opened the detail, pressed again, does nothing."""
    area = StagingArea(demo_store)
    area.stage("customers", "delete", {"id": 2}, {}, origin="test")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        while not panel.snapshot.complete:  # the orphan check has read the references
            await pilot.pause()
        await pilot.press("enter", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ChangeDetailScreen)
        assert len(area.list()) == 1
        await pilot.press("tab", "enter")  # Tab reaches "Commit this"
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "pointing at" in app.screen.question
        await pilot.press("n")
        await settle(app, pilot)
        assert len(area.list()) == 1
        with sqlite3.connect(demo_path) as conn:
            assert conn.execute("SELECT count(*) FROM customers WHERE id = 2").fetchone() == (1,)
