"""The message composer: a multi-line TextArea where Enter sends and ctrl+j adds a newline.

Send and Newline stay out of the footer (the hint under the composer shows them).
ctrl+j arrives as its own key in every common terminal and in tmux; shift+enter also works in
terminals that report it (kitty keyboard protocol). `@` completes table and column names.
PageUp/PageDown and ctrl+Home/ctrl+End scroll the chat above (ScrollChat), so a streaming
answer can be read back without leaving the box; a message taller than the box keeps
TextArea's PageUp/PageDown for itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class Composer(TextArea):
    """Multi-line input; Enter hands its text to `send`."""

    BINDINGS = [
        Binding("enter", "submit", "Send", id="send", priority=True, show=False),
        Binding(
            "ctrl+j,shift+enter", "newline", "Newline", id="newline", priority=True, show=False
        ),
        Binding("tab", "complete", "Complete @name", id="complete", show=False, priority=True),
        Binding("pageup", "scroll_chat('page_up')", "Chat page up", id="chat.page_up", show=False),
        Binding(
            "pagedown",
            "scroll_chat('page_down')",
            "Chat page down",
            id="chat.page_down",
            show=False,
        ),
        Binding("ctrl+home", "scroll_chat('top')", "Chat top", id="chat.top", show=False),
        Binding("ctrl+end", "scroll_chat('end')", "Chat end", id="chat.end", show=False),
    ]

    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 12; border: round $primary 50%; }
    Composer:focus { border: round $primary; }
    """

    class ScrollChat(Message):
        """A key asked to scroll the chat: `page_up`, `page_down`, `top` or `end`."""

        def __init__(self, where: str) -> None:
            super().__init__()
            self.where = where

    class PathPasted(Message):
        """A pasted text that is an existing file path (offered as an attachment)."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(
        self,
        *,
        names: Callable[[], list[str]] | None = None,
        history: Callable[[], list[str]] | None = None,
        send: Callable[[str], None] | None = None,
        id: str | None = None,
    ) -> None:
        """`send` takes the text Enter sends, called at once (not by a message) so it has
        emptied the box before the keys typed after Enter land in it."""
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
        self.sent_history = history or (lambda: [])
        self._send = send or (lambda text: None)
        self._cycle: tuple[tuple[int, int], list[str], int] | None = None
        self._recalled: tuple[list[str], int] | None = None  # (history, index shown)

    def action_cursor_up(self, select: bool = False) -> None:
        """Up in an empty composer (or on a recalled message) shows the previous message."""
        if select or not self._recall(1):
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        """Down on a recalled message shows the next newer one, then an empty composer."""
        if select or not self._recall(-1):
            super().action_cursor_down(select)

    def _recall(self, step: int) -> bool:
        """Step through the input history; False when the key should move the cursor instead."""
        recalled = self._recalled
        if recalled is not None and self.text != recalled[0][recalled[1]]:
            recalled = self._recalled = None  # edited: the history walk is over
        if recalled is None:
            if self.text or step < 0:
                return False
            recalled = (self.sent_history(), -1)
        entries, index = recalled
        index += step
        if index >= len(entries):
            return bool(entries) and recalled[1] >= 0  # at the oldest: stay
        if index < 0:
            self._recalled = None
            self.text = ""
            return True
        self._recalled = (entries, index)
        self.text = entries[index]
        self.move_cursor(self.document.end)
        return True

    def action_scroll_chat(self, where: str) -> None:
        """Scroll the chat (the panel that holds this composer does it); PageUp/PageDown in a
        message taller than the box page through the message, as in any TextArea."""
        if where in ("page_up", "page_down") and self.max_scroll_y > 0:
            if where == "page_up":
                self.action_cursor_page_up()
            else:
                self.action_cursor_page_down()
            return
        self.post_message(self.ScrollChat(where))

    async def _on_key(self, event: events.Key) -> None:
        """Run this box's own bindings (ctrl+u, ctrl+k, backspace, the arrows, …) when their key
        reaches it, in the order typed.

        Textual runs a focused widget's bindings only once the key has bubbled back up to the
        app, after the keys queued behind it were typed: ctrl+u then `x1` in one burst (tmux,
        a fast typist) typed `x1` and then deleted it. Running the binding here keeps its
        place; a binding this box does not run (copy with nothing selected) goes on up as
        before. TextArea's own handler (typing) runs next when nothing here took the key.
        """
        bindings = self._bindings.copy()
        if self.app._keymap:  # `[keys]` in config.toml, as the app's binding chain applies it
            bindings.apply_keymap(self.app._keymap)
        for binding in bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return

    # Priority bindings run as soon as the app sees their key, before keys already queued for
    # this widget (text and Enter or ctrl+j arriving in one burst, e.g. from tmux or a fast
    # paste): each action runs after those keys have landed, so the order is the typed order.

    def action_submit(self) -> None:
        self.call_later(self._submit)

    def _submit(self) -> None:
        """Hand the text to `send` now: the chat empties the box (or keeps the text while an
        answer runs) before the keys typed behind Enter are inserted."""
        text = self.text.strip()
        if text:
            self._send(text)

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

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
        qualified = "." in prefix  # `@table.col` completes that table's columns
        return [
            name
            for name in self.names()
            if ("." in name) == qualified and name.lower().startswith(prefix)
        ]

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
        self.call_later(self._complete)

    def _complete(self) -> None:
        """Replace `@prefix` with the first matching name; Tab again cycles. With nothing to
        complete Tab does nothing: focus stays here, so the next key is typed (F3 moves on)."""
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
            return
        word = self.current_word()
        row, column = self.cursor_location
        start = (row, column - len(word))
        self._cycle = (start, options, 0) if len(options) > 1 else None
        self.replace(options[0] + " ", start, (row, column))

    async def _on_paste(self, event: events.Paste) -> None:
        """Pasted paths of existing files (one, or several as a file manager drops them:
        quoted, backslash-escaped or `file://` URIs) attach them instead of typing them."""
        found = pasted_files(event.text)
        if found:
            event.prevent_default()
            event.stop()
            for path in found:
                self.post_message(self.PathPasted(str(path)))
            return
        # Anything else: TextArea's own paste handler runs next (Textual calls each class's
        # handler along the MRO), so calling super() here would insert the text twice.


def pasted_files(text: str) -> list[Path]:
    """The existing files a pasted single line names, as typed (quotes around it dropped), as
    a shell would read it (`my\\ file.csv`, several names), or as `file://` URIs; [] when it
    does not name only existing files."""
    import shlex
    from urllib.parse import unquote, urlsplit

    text = text.strip()
    if "\n" in text or len(text) >= 4096 or not any(mark in text for mark in "/\\~"):
        return []
    readings = [[text.strip("'\"")]]
    try:
        readings.append(shlex.split(text))
    except ValueError:  # an unbalanced quote: not a shell word list
        pass
    for words in readings:
        words = [unquote(urlsplit(w).path) if w.startswith("file://") else w for w in words]
        try:
            paths = [Path(word).expanduser() for word in words]
            if paths and all(path.is_file() for path in paths):
                return paths
        except (OSError, ValueError):
            continue
    return []
