"""One transient status line on a terminal, rewritten in place (commit counts, `ask`'s wait).

Only when the stream is a TTY: piped or in CI, a status line prints nothing at all, as git's,
curl's and pip's progress meters do. Lines redrawn with a carriage return turn into a pile of
half-lines (or thousands of lines) in a log file, and what a headless command does is already
said by the lines it prints for good (a commit's summary, `ask`'s tool lines).

It draws with carriage returns and spaces only, no escape sequences (the CLI's `SafeStream`
shows those as text), and is cut to the terminal's width, so a redraw never wraps onto a
second row that `\\r` could not reach.
"""

from __future__ import annotations

import os
import threading
import unicodedata
from collections.abc import Callable
from typing import TextIO

FALLBACK_WIDTH = 80
"""Columns when the terminal does not say (a pseudo-terminal created without a size)."""


def cells(text: str) -> int:
    """Terminal columns `text` takes: wide (CJK, emoji) characters two, combining marks none."""
    return sum(_cell_width(char) for char in text)


def _cell_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cut_to(text: str, width: int) -> str:
    """`text` cut to at most `width` columns, ending in … when cut."""
    if cells(text) <= width:
        return text
    shown, used = [], 0
    for char in text:
        used += _cell_width(char)
        if used > width - 1:
            break
        shown.append(char)
    return "".join(shown) + "…"


def is_tty(stream: TextIO) -> bool:
    """Whether `stream` is a terminal (False for a stream without isatty, or closed)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class StatusLine:
    """A line on `stream` (a TTY, else it does nothing) that `show` rewrites in place; `clear`
    blanks it before other output, `end` keeps its last text and moves to a new line.

    `follow(render)` shows `render()` and redraws it every `every` seconds (a clock that keeps
    counting while nothing else happens) until the next show, clear or end; a lock keeps that
    redraw from landing between a `clear` and the output it makes room for.
    """

    def __init__(self, stream: TextIO, *, every: float = 1.0) -> None:
        self.stream = stream
        self.tty = is_tty(stream)
        self.every = every
        self._drawn = 0  # columns on the screen now, 0: nothing shown
        self._lock = threading.Lock()
        self._render: Callable[[], str] | None = None
        self._wake = threading.Event()
        self._ticker: threading.Thread | None = None

    @property
    def shown(self) -> bool:
        """Whether the line is on the screen now."""
        return self._drawn > 0

    def show(self, text: str) -> None:
        """Draw `text` (one line, already made safe) over what the line showed."""
        with self._lock:
            self._render = None
            self._draw(text)

    def follow(self, render: Callable[[], str]) -> None:
        """Draw `render()` now and again every `every` seconds, until show, clear or end."""
        if not self.tty:
            return
        with self._lock:
            self._render = render
            self._draw(render())
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick, name="status-line", daemon=True)
                self._ticker.start()

    def clear(self) -> None:
        """Blank the line and put the cursor at its start, ready for other output."""
        with self._lock:
            self._render = None
            if self._drawn:
                self._write("\r" + " " * self._drawn + "\r")
                self._drawn = 0

    def end(self) -> None:
        """Leave the last text on the screen and move to a new line."""
        with self._lock:
            self._render = None
            if self._drawn:
                self._write("\n")
                self._drawn = 0

    def close(self) -> None:
        """Clear the line and stop the redrawing thread (the command is done)."""
        self.clear()
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            self._wake.set()
            ticker.join(timeout=5)
            self._wake.clear()

    def _draw(self, text: str) -> None:
        if not self.tty:
            return
        text = cut_to(text, self._width() - 1)  # the last column would wrap on some terminals
        width = cells(text)
        self._write("\r" + text + " " * max(self._drawn - width, 0))
        self._drawn = max(width, 1)

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # no fileno (a test's StringIO)
            return FALLBACK_WIDTH
        return columns if columns > 1 else FALLBACK_WIDTH

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away; the status is not worth a crash
            self.tty = False

    def _tick(self) -> None:
        while not self._wake.wait(self.every):
            with self._lock:
                if self._render is not None:
                    self._draw(self._render())
