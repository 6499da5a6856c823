"""Pick a file to attach: type a path, or browse with a directory tree. A file that cannot be
attached keeps the dialog open, the typed path in its box and the reason under it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Static

if TYPE_CHECKING:
    from agent.errors import TabletalkError

AddFile = Callable[[str], "TabletalkError | None"]
"""Checks a path and attaches the file; the error saying why not, or None once attached."""


class AttachScreen(ModalScreen[str | None]):
    """Hands the chosen path to `add`; dismisses with it once attached, or None on Esc. A path
    `add` refuses stays in the box with the error shown under it, to be corrected."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="attach.cancel")]

    DEFAULT_CSS = """
    AttachScreen { align: center middle; }
    AttachScreen > Vertical {
        width: 90; max-width: 95%; height: 80%; border: round $accent; background: $surface; padding: 0 1;
    }
    AttachScreen DirectoryTree { height: 1fr; }
    AttachScreen .attach-help { color: $text-muted; }
    AttachScreen #attach-error { color: $error; display: none; }
    AttachScreen #attach-error.-shown { display: block; }
    """

    def __init__(self, add: AddFile, start: Path | None = None) -> None:
        super().__init__()
        self._add_file = add
        self.start = start or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Attach a file"
            yield Input(placeholder="path to a file (Enter attaches)", id="path")
            yield Static(id="attach-error")
            yield DirectoryTree(self.start)
            yield Static(
                Text(
                    "text, CSV/TSV, JSON/JSON Lines or PDF, up to 20 MB · enter attach · esc cancel"
                ),
                classes="attach-help",
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """The typed or pasted path; quoted or backslash-escaped as a terminal pastes a dropped
        file, it is read as the shell would (the caller checks what it names)."""
        from tui.widgets.composer import pasted_files

        event.stop()
        value = event.value.strip()
        found = pasted_files(value)
        if len(found) == 1:
            self._try_attach(str(found[0]))
        elif value:
            self._try_attach(value)

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self._try_attach(str(event.path))

    def _try_attach(self, path: str) -> None:
        """Attach `path` and close, or say in the dialog why it cannot be (the path stays)."""
        error = self._add_file(path)
        if error is None:
            self.dismiss(path)
            return
        shown = self.query_one("#attach-error", Static)
        shown.update(Text(error.render_sentences()))  # Text: a path's [brackets] stay as typed
        shown.add_class("-shown")

    def action_cancel(self) -> None:
        self.dismiss(None)
