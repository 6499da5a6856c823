"""Where a streamed answer is cut into widgets of about SEGMENT characters, so each render
step re-renders a bounded text however long the answer: at a paragraph break outside code
fences, else between two rows of a Markdown table, whose header then heads the next piece;
past LIMIT characters without either (one long line), at a line break or a space anyway."""

from __future__ import annotations

import re
from typing import NamedTuple

SEGMENT = 4_000
"""Characters of a streamed answer's widget past which the next break starts a new one."""

LIMIT = 2 * SEGMENT
"""Characters past which a widget ends at the next line break or space, if nothing better."""

FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
FENCE_LINE = re.compile(r"^ {0,3}(```|~~~)[^\n]*", re.MULTILINE)
TABLE_DELIMITER = re.compile(r" {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*")
"""The line under a Markdown table's header (`|---|:--:|`)."""


class Break(NamedTuple):
    """Where the next widget starts (`cut` into the text appended), what it starts with
    before the rest (a table's header, a code fence reopened), and whether it continues the
    same paragraph or code block (drawn without the gap between paragraphs)."""

    cut: int
    head: str = ""
    continued: bool = False


def segment_break(before: str, text: str) -> Break | None:
    """Where in `text` (appended to `before`) the answer may start a new widget; None when
    nowhere yet."""
    cut = paragraph_break(before, text)
    if cut is not None:
        return Break(cut)
    table = table_break(before, text)
    if table is not None:
        return Break(*table)
    if len(before) + len(text) > LIMIT:
        return forced_break(before, text)
    return None


def forced_break(before: str, text: str) -> Break:
    """Where a widget with no paragraph or table break in it ends anyway: after the last line
    break in `text`, else after its last space, else at its end. Inside a code fence the
    next widget opens the fence again (and code is cut at a line break when it has one)."""
    fences = [match.group(0) for match in FENCE_LINE.finditer(before + text)]
    newline = text.rfind("\n") + 1
    if len(fences) % 2:  # inside a code block: its opening line heads the next widget
        return Break(newline or len(text), fences[-1] + "\n", True)
    cut = newline or text.rfind(" ") + 1 or len(text)
    return Break(cut, "", True)


def paragraph_break(before: str, text: str) -> int | None:
    """Where in `text` (appended to `before`) a paragraph ends outside any code fence."""
    at = text.find("\n\n")
    while at != -1:
        if len(FENCE.findall(before + text[:at])) % 2 == 0:
            return at + 2
        at = text.find("\n\n", at + 2)
    return None


def table_break(before: str, text: str) -> tuple[int, str] | None:
    """Where in `text` (appended to `before`) a row of a Markdown table ends and another
    begins, outside any code fence, with the table's header and delimiter lines to repeat
    above the rows after it; None when `text` has no such place."""
    at = text.find("\n")
    while at != -1:
        if text[at + 1 :].lstrip(" ").startswith("|"):
            source = before + text[:at]
            head = table_head(source)
            if head is not None and len(FENCE.findall(source)) % 2 == 0:
                return at + 1, head
        at = text.find("\n", at + 1)
    return None


def table_head(source: str) -> str | None:
    """The header and delimiter lines of the table whose rows `source` ends with, or None."""
    lines = source.split("\n")
    i = len(lines) - 1
    while i > 0 and lines[i].lstrip(" ").startswith("|"):
        if TABLE_DELIMITER.fullmatch(lines[i]):
            return f"{lines[i - 1]}\n{lines[i]}\n" if "|" in lines[i - 1] else None
        i -= 1
    return None
