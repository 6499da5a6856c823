"""Where a streamed answer is cut into widgets of about SEGMENT characters, so each render
step re-renders a bounded text however long the answer: at a paragraph break outside code
fences, else between two rows of a Markdown table, whose header then heads the next piece."""

from __future__ import annotations

import re

SEGMENT = 4_000
"""Characters of a streamed answer's widget past which the next break starts a new one."""

FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
TABLE_DELIMITER = re.compile(r" {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*")
"""The line under a Markdown table's header (`|---|:--:|`)."""


def segment_break(before: str, text: str) -> tuple[int | None, str]:
    """Where in `text` (appended to `before`) the answer may start a new widget, and what the
    new widget starts with before the rest (a table's header); (None, "") when nowhere."""
    cut = paragraph_break(before, text)
    if cut is not None:
        return cut, ""
    return table_break(before, text) or (None, "")


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
