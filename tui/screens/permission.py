"""The permission prompt: names the gated tool (and an external tool's MCP server) and its
input, and which of the step's gated calls it is ("call 2 of 5"); allow once, for the chat,
or deny."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent.permissions import (
    Decision,
    PermissionRequest,
    call_position,
    shortest_first,
    tool_source,
)
from tui.key_hints import app_key, compact
from tui.screens.typing_guard import TypingGuard

ACCESS_WORDS = {
    "read": "it reads your data",
    "open": "it opens a view in a tab",
    "export": "it writes your data to a file",
    "write": "it changes your data",
}
EXTERNAL_ACCESS_WORDS = {
    "read": "its server says it only reads",
    "export": "it may send data or change things outside tabletalk",
}
"""An external tool's access, as its row has it: a readOnlyHint is only its server's claim."""


class PermissionScreen(TypingGuard, ModalScreen[Decision]):
    """Waits for a decision: 1 (or Enter on its focused button) allows once, 2 for this
    conversation, 3 or Esc denies. It opens while the user may be typing, so letters answer
    nothing (`a` of "and" once allowed a tool for the whole chat): they go on to the message
    box they were meant for; and a digit or Enter typed within a burst of keys answers nothing
    either (`TypingGuard`). A question (`request.question`): 1 yes, 2, 3 or Esc no."""

    guard_note = "What you typed as this opened went to the message box: it answered nothing."

    BINDINGS = [
        Binding("1", "decide('allow_once')", "Allow once", id="permission.allow_once"),
        Binding(
            "2",
            "decide('allow_conversation')",
            "Allow for this chat",
            id="permission.allow_conversation",
        ),
        Binding("3,escape", "decide('deny')", "Deny", id="permission.deny"),
        # ctrl+c stops the whole answer, as it does in the chat (the screen's own ctrl+c
        # copies selected text): forty calls in a row need not be denied one by one
        Binding("ctrl+c", "app.help_quit", "Stop the answer", id="permission.stop"),
    ]

    DEFAULT_CSS = """
    PermissionScreen { align: center middle; }
    PermissionScreen > Vertical {
        width: 76; max-width: 95%; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    PermissionScreen #tool-input {
        height: auto; max-height: 40vh; background: $boost; padding: 0 1; margin: 1 0;
    }
    PermissionScreen Horizontal { height: auto; align-horizontal: center; }
    PermissionScreen Button { margin: 0 1; }
    PermissionScreen #guard-note { display: none; color: $text-muted; }
    """

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        source = tool_source(request)
        words = EXTERNAL_ACCESS_WORDS if source else ACCESS_WORDS
        does = words.get(request.access, f"access: {request.access}")
        with Vertical() as box:
            box.border_title = "Confirm" if request.question else "Permission needed"
            position = call_position(request)
            if position:  # several gated calls in one step: which one this is
                box.border_title += f" · {position}"
            if request.question:
                yield Static(Text.assemble((request.tool, "bold"), " asks: ", request.question))
            else:
                yield Static(
                    Text.assemble(
                        "The assistant wants to call ",
                        (request.tool, "bold"),
                        f" ({does}) with this input:",
                    )
                )
            if source:  # Text, not markup: the server's and the tool's names are untrusted
                yield Static(
                    Text.assemble("From ", (source, "bold"), " (an external tool)."),
                    id="tool-source",
                )
            with VerticalScroll(id="tool-input"):
                yield Static(indented_json(shortest_first(request.input)))
            stop = compact(app_key(self.app, "permission.stop", "ctrl+c"))
            yield Static(
                Text(
                    f"Permission mode: {request.mode} (F4 switches modes) · {stop} stops the answer",
                    style="dim",
                )
            )
            yield Static("", id="guard-note")
            with Horizontal():
                if request.question:
                    yield Button(Content("1 Yes"), id="allow_once", variant="warning")
                    yield Button(Content("2 No (esc)"), id="deny", variant="primary")
                    return
                yield Button(Content("1 Allow once"), id="allow_once", variant="success")
                yield Button(
                    Content("2 Allow for this chat"), id="allow_conversation", variant="primary"
                )
                yield Button(Content("3 Deny (esc)"), id="deny", variant="error")

    def answers(self, event: events.Key) -> bool:
        """A digit or Enter (on the focused button) answers; a letter or a space never does."""
        return event.key == "enter" or (event.character or "").isdigit()

    def set_aside(self, event: events.Key) -> None:
        """A character typed while this is open goes to the message box it was meant for."""
        composer = getattr(getattr(self.app, "chat", None), "composer", None)
        if composer is not None and event.is_printable and event.character:
            composer.insert(event.character)

    def on_mount(self) -> None:
        self.guard_started()
        # a yes/no question starts on No: Enter alone never replaces a file
        self.query_one("#deny" if self.request.question else "#allow_once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(str(event.button.id))

    def action_decide(self, decision: str) -> None:
        if self.request.question and decision == "allow_conversation":
            decision = "deny"  # a question has Yes (1) and No (2)
        self.dismiss(decision)  # type: ignore[arg-type]


def indented_json(value: Any) -> Group:
    """`value` as indented JSON whose long lines wrap under their own indent: a long query
    wrapped to the box's edge looked like broken JSON."""
    lines = json.dumps(value, indent=2, default=str, ensure_ascii=False).splitlines()
    return Group(
        *(Padding(Text(line.lstrip()), (0, 0, 0, len(line) - len(line.lstrip()))) for line in lines)
    )
