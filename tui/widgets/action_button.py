"""A one-line button drawn and driven like Textual's compact Button, with a small stylesheet.

Textual's Button brings some 200 lines of CSS (every variant, flat and ANSI styles) that the app
parses and matches against each button at start-up, where the chat's Send and Stop are the
only buttons on screen. This button has the compact default style of the two variants it is
used with (`primary`, `error`): the same colours, hover, focus, disabled and pressed looks;
Enter or a click presses it (not while it is disabled or during its 0.2 s pressed effect).
"""

from __future__ import annotations

from typing import Literal

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

ActionVariant = Literal["primary", "error"]


class ActionButton(Widget, can_focus=True):
    """A compact button; posts Pressed when clicked or when Enter is pressed on it."""

    ALLOW_SELECT = False
    BINDINGS = [Binding("enter", "press", "Press button", show=False)]
    DEFAULT_CSS = """
    ActionButton {
        width: auto;
        height: 1;
        line-pad: 1;
        text-align: center;
        content-align: center middle;
        pointer: pointer;
        text-style: bold;
        color: $button-color-foreground;
        &:disabled { text-opacity: 0.6; pointer: not-allowed; }
        &:focus { text-style: $button-focus-text-style; background-tint: $foreground 5%; }
        &.-active { tint: $background 30%; }
        &.-primary {
            background: $primary;
            &:hover { background: $primary-darken-2; }
            &.-active { background: $primary; }
        }
        &.-error {
            background: $error;
            &:hover { background: $error-darken-1; }
            &.-active { background: $error; }
        }
    }
    """

    ACTIVE_SECONDS = 0.2
    """How long the pressed look lasts (Textual's Button: 0.2 s)."""

    class Pressed(Message):
        """The button was pressed."""

        def __init__(self, button: ActionButton) -> None:
            super().__init__()
            self.button = button

        @property
        def control(self) -> ActionButton:
            return self.button

    def __init__(
        self,
        label: str,
        variant: ActionVariant,
        *,
        id: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(id=id, classes=f"-{variant}", disabled=disabled)
        self.label = Content(label)

    def render(self) -> Content:
        return self.label

    async def _on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_press()

    def action_press(self) -> None:
        """Press it, unless it is still showing the last press."""
        if not self.has_class("-active"):
            self.press()

    def press(self) -> None:
        """Show the pressed look and post Pressed (nothing while disabled or hidden)."""
        if self.disabled or not self.display:
            return
        self.add_class("-active")
        self.set_timer(self.ACTIVE_SECONDS, lambda: self.remove_class("-active"))
        self.post_message(self.Pressed(self))
