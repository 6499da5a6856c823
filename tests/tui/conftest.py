"""Fixtures for the app's tests: a demo store copy, the scripted Converse endpoint, an app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agent.config import Settings
from tests.support import scripted_bedrock as scripted_support
from tui.app import TabletalkApp

scripted_bedrock = scripted_support.scripted_bedrock


@pytest.fixture
def make_app(demo_store: Any) -> Callable[..., TabletalkApp]:
    """Build the app on the demo store copy; no staging polling (tests refresh explicitly)."""

    def build(**settings: Any) -> TabletalkApp:
        merged = {"mode": "manual", **settings}
        return TabletalkApp(demo_store, Settings(**merged), staging_poll_seconds=0)

    return build
