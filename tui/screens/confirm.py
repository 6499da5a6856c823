"""A yes/no question before something that cannot be undone (Reject all, full-auto mode)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True on y (or the Yes button), False on n / Esc (or No)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface;
        padding: 1 2;
    }
    ConfirmScreen Horizontal { height: auto; align-horizontal: center; margin-top: 1; }
    ConfirmScreen Button { margin: 0 1; }
    """

    def __init__(self, title: str, question: str, yes: str = "Yes") -> None:
        super().__init__()
        self.confirm_title = title
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = escape(self.confirm_title)
            yield Static(Text(self.question))
            with Horizontal():
                yield Button(Content(f"{self.yes} (y)"), id="yes", variant="error")
                yield Button(Content("No (n)"), id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
