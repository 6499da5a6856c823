"""The app's conversation list survives damaged conversation files."""

from __future__ import annotations

import json

from agent import paths
from tests.tui.helpers import SIZE, settle
from tui.screens.picker import PickerScreen


async def test_conversation_list_skips_damaged_files(make_app) -> None:
    folder = paths.conversations_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "list.json").write_text("[]", encoding="utf-8")
    (folder / "shape.json").write_text('{"id": "shape", "messages": "nope"}', encoding="utf-8")
    (folder / "good.json").write_text(
        json.dumps({"id": "good", "title": "an old chat", "messages": []}), encoding="utf-8"
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        keys = [key for key, _ in app.screen.options]
        assert "good" in keys and "shape" not in keys
