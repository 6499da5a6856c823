"""SVG snapshots at a fixed size: the main screen, a table tab, the staging panel, the permission modal.

Deterministic: the demo DB is built for a fixed day, staged times are pinned, the cursor does not
blink, nothing shows the clock. Update with `pytest tests/tui --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

import sqlite3

from agent.permissions import PermissionRequest
from agent.staging import StagingArea
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.screens.permission import PermissionScreen


async def _steady(pilot) -> None:
    app = pilot.app
    await settle(app, pilot)
    app.chat.composer.cursor_blink = False
    await pilot.pause()


class TestMainScreen:
    def test_start_screen(self, snap_compare, make_app) -> None:
        assert snap_compare(make_app(), terminal_size=SIZE, run_before=_steady)

    def test_table_tab(self, snap_compare, make_app) -> None:
        async def run_before(pilot) -> None:
            await pilot.app.open_table("products")
            await _steady(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_small_terminal_with_a_conversation(self, snap_compare, make_app, scripted_bedrock):
        """80x24: header values, footer keys and the composer hint all fit."""
        scripted_bedrock.add(
            Reply(tool_uses=[ToolUse("countItems", {"table": "orders"})]),
            Reply(text="There are **1,200** orders."),
        )

        async def run_before(pilot) -> None:
            await send(pilot.app, pilot, "how many orders?")
            await _steady(pilot)

        assert snap_compare(make_app(mode="auto"), terminal_size=(80, 24), run_before=run_before)


class TestStagingPanel:
    def test_panel_with_changes(self, snap_compare, make_app, demo_store) -> None:
        area = StagingArea(demo_store)
        area.stage("orders", "update", {"id": 1}, {"status": "on hold"}, origin="chat:test")
        area.stage("products", "delete", {"id": 3}, origin="mcp:test")
        area.stage(
            "products",
            "create",
            {"id": 500},
            {"name": "Desk lamp", "category": "home", "price": 19.5, "stock": 4},
            origin="chat:test",
        )
        with sqlite3.connect(area.path) as conn:
            conn.execute("UPDATE staged_changes SET created_at = '2026-03-15T09:30:00Z'")

        async def run_before(pilot) -> None:
            await pilot.app.open_staging_panel()
            await _steady(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_panel_with_a_conflict(self, snap_compare, make_app, demo_store) -> None:
        """After a failed commit: only the conflicting attribute, and Commit the others."""
        area = StagingArea(demo_store)
        area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="chat:test")
        area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="chat:test")
        with sqlite3.connect(area.path) as conn:
            conn.execute("UPDATE staged_changes SET created_at = '2026-03-15T09:30:00Z'")
        with sqlite3.connect(demo_store.path) as conn:
            conn.execute("UPDATE orders SET status = 'lost in transit' WHERE id = 7")

        async def run_before(pilot) -> None:
            await pilot.app.open_staging_panel()
            await _steady(pilot)
            # The snapshot is of the panel once the commit's report is in; the report's toast
            # is recorded instead of drawn (drawn or not yet depending on the machine's load; it
            # hid the panel's right side; test_tui_staging checks what it says).
            said: list[str] = []
            pilot.app.notify = lambda message, *a, **k: said.append(str(message))
            await pilot.click("#commit-all")
            for _ in range(500):
                if said:
                    break
                await pilot.pause(0.02)
            assert said and "Nothing was committed" in said[0]
            await _steady(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestPermissionModal:
    def test_modal(self, snap_compare, make_app) -> None:
        request = PermissionRequest(
            "runQuery",
            {"query": "SELECT status, count(*) FROM orders GROUP BY status", "limit": 50},
            "manual",
            "conv-1",
            "read",
        )

        async def run_before(pilot) -> None:
            await _steady(pilot)
            await pilot.app.push_screen(PermissionScreen(request))
            await pilot.pause()

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
