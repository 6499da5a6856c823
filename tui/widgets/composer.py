"""The message composer: a multi-line TextArea where Enter sends and ctrl+j adds a newline.

Send and Newline stay out of the footer (the hint under the composer shows them).
ctrl+j arrives as its own key in every common terminal and in tmux; shift+enter also works in
terminals that report it (kitty keyboard protocol). `@` completes table and column names.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class Composer(TextArea):
    """Multi-line input; posts Submitted on Enter."""

    BINDINGS = [
        Binding("enter", "submit", "Send", id="send", priority=True, show=False),
        Binding(
            "ctrl+j,shift+enter", "newline", "Newline", id="newline", priority=True, show=False
        ),
        Binding("tab", "complete", "Complete @name", id="complete", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 12; border: round $primary 50%; }
    Composer:focus { border: round $primary; }
    """

    class Submitted(Message):
        """The user pressed Enter with this text."""

        def __init__(self, composer: Composer, text: str) -> None:
            super().__init__()
            self.composer = composer
            self.text = text

    class PathPasted(Message):
        """A pasted text that is an existing file path (offered as an attachment)."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(
        self, *, names: Callable[[], list[str]] | None = None, id: str | None = None
    ) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder="Ask about your tables… (@name)",
            compact=False,
        )
        self.names = names or (lambda: [])
        self._cycle: tuple[tuple[int, int], list[str], int] | None = None

    def action_submit(self) -> None:
        # Priority bindings run before keys already queued for this widget (text and Enter
        # arriving in one burst, e.g. from tmux or a fast paste): send after those keys land.
        self.call_later(self._submit)

    def _submit(self) -> None:
        text = self.text.strip()
        if text:
            self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")

    def current_word(self) -> str:
        """The word left of the cursor (what `@` completion replaces)."""
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        start = max(line.rfind(" "), line.rfind("\n"), line.rfind("("), line.rfind(",")) + 1
        return line[start:]

    def completions(self) -> list[str]:
        """Table and column names matching the `@word` before the cursor (or, right after a
        completion, the names Tab cycles through)."""
        if self._cycling():
            return self._cycle[1] if self._cycle else []
        word = self.current_word()
        if not word.startswith("@"):
            return []
        prefix = word[1:].lower()
        return [name for name in self.names() if name.lower().startswith(prefix)]

    def _cycling(self) -> bool:
        """The cursor sits right after a name that Tab put there (so Tab picks the next one)."""
        if self._cycle is None:
            return False
        (row, column), options, index = self._cycle
        inserted = options[index] + " "
        if self.cursor_location != (row, column + len(inserted)):
            return False
        return self.document.get_line(row)[column : column + len(inserted)] == inserted

    def action_complete(self) -> None:
        """Replace `@prefix` with the first matching name; Tab again cycles; else move focus."""
        if self._cycling() and self._cycle is not None:
            start, options, index = self._cycle
            index = (index + 1) % len(options)
            end = (start[0], start[1] + len(options[self._cycle[2]]) + 1)
            self._cycle = (start, options, index)
            self.replace(options[index] + " ", start, end)
            return
        options = self.completions()
        if not options:
            self._cycle = None
            self.screen.focus_next()
            return
        word = self.current_word()
        row, column = self.cursor_location
        start = (row, column - len(word))
        self._cycle = (start, options, 0) if len(options) > 1 else None
        self.replace(options[0] + " ", start, (row, column))

    async def _on_paste(self, event: events.Paste) -> None:
        """A pasted single-line path to an existing file attaches it instead of typing it."""
        from pathlib import Path

        pasted = event.text.strip().strip("'\"")
        looks_like_path = any(mark in pasted for mark in ("/", "\\", "~"))
        if looks_like_path and "\n" not in pasted and len(pasted) < 1024:
            try:
                candidate = Path(pasted).expanduser()
                if candidate.is_file():
                    event.prevent_default()
                    event.stop()
                    self.post_message(self.PathPasted(str(candidate)))
                    return
            except OSError:
                pass
        # Anything else: TextArea's own paste handler runs next (Textual calls each class's
        # handler along the MRO), so calling super() here would insert the text twice.
