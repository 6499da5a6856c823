"""Fixtures for the app's tests: a demo store copy, the scripted Converse endpoint, an app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agent.config import Settings
from tests.support import scripted_bedrock as scripted_support
from tui.app import TabletalkApp

scripted_bedrock = scripted_support.scripted_bedrock


@pytest.fixture(autouse=True)
def keys_answer_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot presses keys faster than anyone types: questions take them at once here, except
    in the tests of that guard (tests/tui/test_tui_typing_guard.py sets it back)."""
    import tui.screens.typing_guard as typing_guard

    monkeypatch.setattr(typing_guard, "GUARD_SECONDS", 0.0)


@pytest.fixture
def make_app(demo_store: Any) -> Callable[..., TabletalkApp]:
    """Build the app on the demo store copy; no staging polling (tests refresh explicitly)."""

    def build(**settings: Any) -> TabletalkApp:
        merged = {"mode": "manual", **settings}
        return TabletalkApp(demo_store, Settings(**merged), staging_poll_seconds=0)

    return build


@pytest.fixture
def one_step_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render one batch of a streamed answer, then wait (an hour) for the next render step:
    the test decides when more comes."""
    import tui.widgets.chat as chat_module

    monkeypatch.setattr(chat_module, "RENDER_INTERVAL", 3600, raising=False)
