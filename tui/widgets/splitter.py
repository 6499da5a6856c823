"""A one-column drag handle between the tab area and the chat sidebar."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widget import Widget


class Splitter(Widget):
    """Drag it with the mouse to resize the chat; posts Dragged with the new screen x."""

    DEFAULT_CSS = """
    Splitter { width: 1; height: 1fr; background: $panel; }
    Splitter:hover, Splitter.-dragging { background: $accent; }
    """

    class Dragged(Message):
        def __init__(self, screen_x: int) -> None:
            super().__init__()
            self.screen_x = screen_x

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tooltip = "Drag to resize the chat (alt+left / alt+right)"
        self._dragging = False

    def render(self) -> str:
        return "\n".join("┃" for _ in range(max(1, self.size.height)))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._dragging = True
        self.add_class("-dragging")
        self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            self.post_message(self.Dragged(event.screen_x))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self._dragging = False
        self.remove_class("-dragging")
        self.release_mouse()
