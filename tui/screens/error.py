"""A modal for a failure the user must read: the error's title, message and fix."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ErrorScreen(ModalScreen[None]):
    """Title, message, fix; one button (or Esc/Enter) closes it."""

    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="error.close")]

    DEFAULT_CSS = """
    ErrorScreen { align: center middle; }
    ErrorScreen > Vertical {
        width: 70%; max-width: 100; height: auto; border: thick $error; background: $surface;
        padding: 1 2;
    }
    ErrorScreen .fix { color: $success; margin-top: 1; }
    ErrorScreen Button { margin-top: 1; }
    """

    def __init__(self, title: str, message: str, fix: str | None = None) -> None:
        super().__init__()
        self.error_title = title
        self.message = message
        self.fix = fix

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = escape(self.error_title)
            yield Static(Text(self.message))
            if self.fix:
                yield Static(Text(f"What to do: {self.fix}"), classes="fix")
            yield Button("Close", variant="error", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)
