"""The MCP panel: serve the open store to other agents over loopback HTTP, and manage clients."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, Select, Static, TextArea

from agent.errors import TabletalkError
from tui.local_time import local_time

if TYPE_CHECKING:
    from tui.mcp_serving import McpServing

LEVEL_CHOICES = [("read", "read"), ("stage", "stage"), ("full", "full")]
REFRESH_SECONDS = 1.0
NAME_WIDTH = 22
"""Client and tool names are cut to this many cells in the tables, so every column fits in
80 columns (the catalog's longest tool name has 20)."""


def short_name(name: str) -> Text:
    """A client or tool name as the tables show it: cut with an ellipsis past NAME_WIDTH."""
    return Text(name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…")


class McpPanel(ModalScreen[None]):
    """Start/stop serving, the clients with their levels and calls, tokens, recent calls."""

    BINDINGS = [Binding("escape", "close", "Close", id="mcp.close")]

    DEFAULT_CSS = """
    McpPanel { align: center middle; }
    McpPanel > VerticalScroll {
        width: 100; max-width: 98%; height: 90%; border: thick $primary; background: $surface;
        padding: 0 1;
    }
    McpPanel Horizontal { height: auto; margin: 1 0 0 0; }
    McpPanel Input { width: 1fr; }
    McpPanel #port { width: 12; }
    McpPanel Select { width: 14; height: 3; margin: 0; }
    McpPanel Horizontal > * { height: 3; }
    McpPanel Button { margin: 0 0 0 1; }
    McpPanel DataTable { height: auto; max-height: 10; }
    McpPanel #snippet { height: 10; }
    McpPanel .heading { margin: 1 0 0 0; text-style: bold; }
    """

    def __init__(self, serving: McpServing) -> None:
        super().__init__()
        self.serving = serving

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "MCP server (loopback HTTP)"
            yield Static(id="state")
            with Horizontal():
                yield Input(value="8765", id="port", placeholder="port", type="integer")
                yield Button("Start serving", id="toggle", variant="primary")
            yield Label("Clients", classes="heading")
            yield DataTable(id="clients", cursor_type="row", zebra_stripes=True)
            with Horizontal():
                yield Input(id="name", placeholder="new client name (e.g. claude-desktop)")
                yield Select(LEVEL_CHOICES, value="read", allow_blank=False, id="level")
                yield Button("Create token", id="create")
                yield Button("Revoke selected", id="revoke", variant="error")
            yield Label(
                "Connection (the token is shown only now)", classes="heading", id="snippet-heading"
            )
            yield TextArea(id="snippet", read_only=True)
            with Horizontal():
                yield Button("Copy", id="copy")
            yield Label("Recent calls", classes="heading")
            yield DataTable(id="calls", zebra_stripes=True)

    def on_mount(self) -> None:
        clients = self.query_one("#clients", DataTable)
        clients.add_columns("name", "level", "created", "last call", "calls")
        calls = self.query_one("#calls", DataTable)
        calls.add_columns("time", "client", "level", "tool", "ok")
        self.refresh_view()
        self.set_interval(REFRESH_SECONDS, self.refresh_view, name="mcp-panel-refresh")
        # the keyboard starts where the next step is: the port to serve on, or a client's name
        self.query_one("#name" if self.serving.running else "#port", Input).focus()

    @on(Input.Submitted, "#port")
    def port_entered(self, event: Input.Submitted) -> None:
        """Enter in the port box starts serving on it (as the button does)."""
        event.stop()
        if not self.serving.running:
            self.toggle()

    @on(Input.Submitted, "#name")
    def name_entered(self, event: Input.Submitted) -> None:
        """Enter in the name box creates the client's token (as the button does)."""
        event.stop()
        self.create()

    def refresh_view(self) -> None:
        """Server state, clients and recent calls, read again."""
        serving = self.serving
        state = self.query_one("#state", Static)
        if serving.running and serving.url:
            state.update(Text(f"Serving {self.app_store_label()} on {serving.url}"))
        else:
            state.update(Text("Not serving. Start to let MCP clients with a token connect."))
        self.query_one("#toggle", Button).label = (
            "Stop serving" if serving.running else "Start serving"
        )
        port = self.query_one("#port", Input)
        port.disabled = serving.running  # the port in use is shown, not edited, while serving
        if serving.running and serving.url:
            port.value = str(urlsplit(serving.url).port or port.value)
        clients = self.query_one("#clients", DataTable)
        selected = self._selected_client()
        clients.clear()
        for client in serving.clients():
            clients.add_row(
                short_name(client.name),
                client.level,
                local_time(client.created, "%Y-%m-%d %H:%M"),
                local_time(client.last_used, "%Y-%m-%d %H:%M"),
                str(client.calls),
                key=client.name,
            )
        if selected is not None and selected in [str(k.value) for k in clients.rows]:
            clients.move_cursor(row=clients.get_row_index(selected))
        calls = self.query_one("#calls", DataTable)
        calls.clear()
        for record in reversed(serving.recent_calls()[-50:]):
            calls.add_row(
                local_time(record.time, "%H:%M:%S"),
                short_name(record.client),
                record.level,
                short_name(record.tool),
                "✓" if record.ok else "✗",
            )

    def app_store_label(self) -> str:
        return str(self.serving.app.store.label)

    def _selected_client(self) -> str | None:
        clients = self.query_one("#clients", DataTable)
        if not clients.row_count:
            return None
        try:
            key = clients.coordinate_to_cell_key(clients.cursor_coordinate).row_key
        except Exception:
            return None
        return str(key.value) if key.value is not None else None

    @on(Button.Pressed, "#toggle")
    def toggle(self) -> None:
        if self.serving.running:
            self.serving.stop()
            self.notify("MCP server stopped.")
        else:
            port_text = self.query_one("#port", Input).value.strip() or "0"
            try:
                url = self.serving.start(port=int(port_text))
            except (TabletalkError, ValueError) as exc:
                message = exc.render() if isinstance(exc, TabletalkError) else str(exc)
                self.notify(message, title="Cannot start", severity="error", markup=False)
                return
            self.notify(f"Serving on {url}", markup=False)
        self.refresh_view()

    @on(Button.Pressed, "#create")
    def create(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        level = str(self.query_one("#level", Select).value)
        try:
            token = self.serving.create_token(name, level)
        except TabletalkError as exc:
            self.notify(exc.render(), title="Cannot create", severity="error", markup=False)
            return
        from agent.mcp_server.http import client_snippet

        url = self.serving.url or f"http://127.0.0.1:{self.query_one('#port', Input).value}/mcp"
        self.query_one(
            "#snippet", TextArea
        ).text = f"token for {name} ({level}): {token}\n\n{client_snippet(url, token)}\n"
        self.query_one("#name", Input).value = ""
        self.refresh_view()
        # the token is shown only now: bring it and Copy into view (at 24 rows they were below)
        self.query_one("#copy", Button).focus(scroll_visible=False)
        self.query_one("#snippet-heading").scroll_visible(top=True, animate=False)

    @on(Button.Pressed, "#revoke")
    def revoke(self) -> None:
        name = self._selected_client()
        if name is None:
            self.notify("Select a client first.", severity="warning")
            return
        self.serving.revoke(name)
        self.notify(f"Revoked {name}: its next request is refused.", markup=False)
        self.refresh_view()

    @on(Button.Pressed, "#copy")
    def copy(self) -> None:
        text = self.query_one("#snippet", TextArea).text
        try:
            self.app.copy_to_clipboard(text)
            self.notify("Copied.")
        except Exception:  # no clipboard here: the text stays selectable
            self.notify("Could not reach the clipboard; select the text instead.")

    def action_close(self) -> None:
        self.dismiss(None)
