"""Files attached to the next message, as removable chips above the composer (wrapping onto
more lines when they do not fit, each name cut to a chip's width)."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.message import Message
from textual.widgets import Button

from tui.widgets.flow_bar import FlowBar

NAME_WIDTH = 24
"""Characters of a file name on its chip; a longer one ends in `…` (the tooltip has it whole)."""


class AttachmentChip(Button):
    """`📎 name ✕`: pressing it removes the file from the next message."""

    DEFAULT_CSS = """
    AttachmentChip { height: 1; min-width: 6; border: none; margin: 0 1 0 0; background: $secondary 30%; }
    AttachmentChip:focus { background: $secondary; }
    """

    def __init__(self, path: Path) -> None:
        name = path.name if len(path.name) <= NAME_WIDTH else path.name[: NAME_WIDTH - 1] + "…"
        super().__init__(
            Content(f"📎 {name} ✕"), compact=True, tooltip=f"Remove {path.name} from the message"
        )
        self.path = path


class AttachmentBar(FlowBar):
    """Holds the pending attachments; hidden while empty."""

    DEFAULT_CSS = """
    AttachmentBar { height: auto; display: none; padding: 0 1; }
    AttachmentBar.-has-files { display: block; }
    """

    class Changed(Message):
        """The list of pending attachments changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.paths: list[Path] = []

    def add(self, path: Path) -> None:
        """Add a (validated) file to the next message, once."""
        if path in self.paths:
            return
        self.paths.append(path)
        self.mount(AttachmentChip(path))
        self.set_class(True, "-has-files")

    def clear(self) -> list[Path]:
        """Take the pending files (after sending)."""
        taken, self.paths = self.paths, []
        self.remove_children()
        self.set_class(False, "-has-files")
        return taken

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if isinstance(event.button, AttachmentChip):
            event.stop()
            self.paths.remove(event.button.path)
            event.button.remove()
            self.set_class(bool(self.paths), "-has-files")
