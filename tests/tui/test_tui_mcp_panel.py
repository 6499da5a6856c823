"""The MCP panel (F8): serve the open store over loopback HTTP, tokens, consent, revocation.

A real server thread in the app, and the official MCP client on another thread, as an external
agent would connect.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from textual.widgets import Button, DataTable, Input, Select, TextArea

from tests.tui.helpers import SIZE, settle
from tui.screens.confirm import ConfirmScreen
from tui.screens.mcp_panel import McpPanel

WAIT_STEPS = 2400  # bounded polling of app state (2 min at most), never a timed assert


def stage_in_thread(url: str, token: str) -> concurrent.futures.Future[Any]:
    """Start a client on another thread that stages one change; the future holds the result."""

    async def run() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await client.call_tool(
                    "stageItem",
                    {
                        "table": "customers",
                        "op": "update",
                        "key": {"id": 7},
                        "values": {"city": "Lisbon"},
                    },
                )

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(asyncio.run, run())
    pool.shutdown(wait=False)
    return future


async def wait_for(pilot: Any, condition: Any) -> None:
    for _ in range(WAIT_STEPS):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition never held")


async def start_and_create(app: Any, pilot: Any, name: str, level: str) -> tuple[McpPanel, str]:
    await pilot.press("f8")
    await settle(app, pilot)
    panel = app.screen
    assert isinstance(panel, McpPanel)
    panel.query_one("#port", Input).value = "0"
    panel.query_one("#toggle", Button).press()
    await pilot.pause()
    assert app.mcp_serving.running and app.mcp_serving.url
    assert app.mcp_serving.url in str(panel.query_one("#state").render())
    panel.query_one("#name", Input).value = name
    panel.query_one("#level", Select).value = level
    panel.query_one("#create", Button).press()
    await pilot.pause()
    snippet = panel.query_one("#snippet", TextArea).text
    token = re.search(r"(tt_\S+)", snippet).group(1)  # type: ignore[union-attr]
    block = json.loads(snippet[snippet.index("{") :])
    assert block["mcpServers"]["tabletalk"]["url"] == app.mcp_serving.url
    assert panel.query_one("#clients", DataTable).row_count == 1
    return panel, token


async def test_a_new_clients_first_call_asks_and_what_it_stages_shows_at_once(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel, token = await start_and_create(app, pilot, "desk", "stage")
        future = stage_in_thread(app.mcp_serving.url, token)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "desk" in str(app.screen.question)
        await pilot.press("y")
        await wait_for(pilot, future.done)
        assert not future.result().is_error
        await wait_for(pilot, lambda: app.status.staged == 1)
        assert [c.origin for c in app.staged_changes] == ["mcp:desk"]
        calls = app.screen.query_one("#calls", DataTable)
        await wait_for(pilot, lambda: calls.row_count == 1)  # the panel re-reads every second
        app.screen.query_one("#toggle", Button).press()
        await pilot.pause()
        assert not app.mcp_serving.running


async def test_denying_a_new_client_revokes_it_and_revoking_ends_access(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel, token = await start_and_create(app, pilot, "stranger", "read")
        future = stage_in_thread(app.mcp_serving.url, token)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_for(pilot, future.done)
        assert future.exception() is not None or future.result().is_error
        assert app.mcp_serving.clients() == []
        assert app.status.staged == 0

        _, second = await start_and_create_again(app, pilot, panel, "laptop")
        headers = {
            "Authorization": f"Bearer {second}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        panel.query_one("#clients", DataTable).move_cursor(row=0)
        panel.query_one("#revoke", Button).press()
        await pilot.pause()
        response = await asyncio.to_thread(
            httpx2.post, app.mcp_serving.url, content=b"{}", headers=headers, timeout=120
        )
        assert response.status_code == 401


async def start_and_create_again(
    app: Any, pilot: Any, panel: McpPanel, name: str
) -> tuple[McpPanel, str]:
    panel.query_one("#name", Input).value = name
    panel.query_one("#create", Button).press()
    await pilot.pause()
    token = re.search(r"(tt_\S+)", panel.query_one("#snippet", TextArea).text).group(1)  # type: ignore[union-attr]
    return panel, token


async def test_a_port_in_use_or_out_of_range_says_to_type_another_in_the_box(make_app) -> None:
    """The panel has a port box, not a --port flag; 99999 crashed binding (OverflowError)."""
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    app = make_app()
    try:
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await pilot.press("f8")
            await settle(app, pilot)
            panel = app.screen
            assert isinstance(panel, McpPanel)
            for port, problem in (
                (taken.getsockname()[1], "Cannot listen on 127.0.0.1:"),
                (99999, "99999 is not a port number (0 to 65535)"),
            ):
                app.clear_notifications()
                panel.query_one("#port", Input).value = str(port)
                panel.query_one("#toggle", Button).press()
                await settle(app, pilot)
                assert not app.mcp_serving.running
                [toast] = [n.message for n in app._notifications]
                assert problem in toast and "port box" in toast and "--port" not in toast
            assert app.screen is panel, "the panel stays open to try again"
    finally:
        taken.close()


async def test_the_panel_works_from_the_keyboard_and_shows_the_port_in_use(make_app) -> None:
    """Typed digits went nowhere until Tab, Enter in the port box did nothing, and while
    serving on port 0 the box still said 0."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f8")
        await settle(app, pilot)
        panel = app.screen
        assert isinstance(panel, McpPanel)
        port = panel.query_one("#port", Input)
        assert port.has_focus, "the keyboard starts in the port box"
        await pilot.press("ctrl+a", *"0", "enter")  # select all, type 0, Enter
        await wait_for(pilot, lambda: app.mcp_serving.running)
        await settle(app, pilot)
        served = int(app.mcp_serving.url.rsplit(":", 1)[1].split("/")[0])
        assert port.value == str(served) and served != 0 and port.disabled
        panel.query_one("#name", Input).focus()
        await pilot.press(*"desk", "enter")
        await settle(app, pilot)
        assert "tt_" in panel.query_one("#snippet", TextArea).text, "Enter created the token"
        app.mcp_serving.stop()
