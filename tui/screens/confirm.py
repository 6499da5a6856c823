"""A yes/no question before something that cannot be undone (Reject all, full-auto mode, a
commit that orphans rows). The question scrolls; its buttons stay below it, on the screen."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.screens.typing_guard import TypingGuard


class ConfirmScreen(TypingGuard, ModalScreen[bool]):
    """Dismisses with True on y (or the Yes button), False on n / Esc (or No); keys typed just
    as it opened answer nothing (`TypingGuard`)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        Binding("down", "scroll_body(1)", show=False),
        Binding("up", "scroll_body(-1)", show=False),
        Binding("pagedown", "scroll_body(0, 1)", show=False),
        Binding("pageup", "scroll_body(0, -1)", show=False),
    ]

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 95%; height: auto; max-height: 90%; border: thick $warning;
        background: $surface; padding: 1 2;
    }
    ConfirmScreen #confirm-body { height: auto; max-height: 100%; scrollbar-size-vertical: 1; }
    ConfirmScreen Horizontal {
        height: auto; align-horizontal: center; margin-top: 1; dock: bottom;
    }
    ConfirmScreen Button { margin: 0 1; }
    ConfirmScreen #guard-note { display: none; color: $text-muted; }
    """

    def __init__(self, title: str, question: str, yes: str = "Yes") -> None:
        super().__init__()
        self.confirm_title = title
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = escape(self.confirm_title)
            with VerticalScroll(id="confirm-body"):  # a long question scrolls, not the buttons
                yield Static(Text(self.question))
            yield Static("", id="guard-note")
            with Horizontal():
                yield Button(Content(f"{self.yes} (y)"), id="yes", variant="error")
                yield Button(Content("No (n)"), id="no", variant="primary")

    def on_mount(self) -> None:
        self.guard_started()
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_scroll_body(self, lines: int, pages: int = 0) -> None:
        """Up/Down (a line) and PageUp/PageDown (a page) scroll a long question, the buttons
        keeping the focus."""
        body = self.query_one("#confirm-body", VerticalScroll)
        step = lines or pages * max(body.size.height - 1, 1)
        body.scroll_relative(y=step, animate=False)
