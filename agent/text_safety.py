"""Untrusted text (cells, names, model output, titles, error text) made safe for a terminal.

Characters a terminal could act on or that could disguise text are shown as JSON-style
escapes (`\\u001b`, `\\u202e`), so nothing is hidden and JSON output stays valid JSON: C0 and
C1 controls (ESC, the 8-bit CSI 0x9b, ...), DEL, bidi controls and other invisible format
characters (U+200B-U+200F, U+202A-U+202E, U+2066-U+2069, ...), line/paragraph separators,
tag characters, and lone surrogates (which cannot be encoded at all).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_INVISIBLE = (
    "\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ud800-\udfff\U000e0000-\U000e007f"
)
_UNSAFE_IN_STREAM = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_INVISIBLE}]")
_UNSAFE_IN_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")
_UNSAFE_IN_LINE = re.compile(f"[\x00-\x1f{_INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # as JSON writes it: a UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def printable(text: str) -> str:
    """Multi-line untrusted text (model answers): newlines and tabs kept, the rest escaped."""
    return _UNSAFE_IN_TEXT.sub(_escape, text)


def has_unsafe_characters(text: str) -> bool:
    """Whether one-line text holds anything `printable_line` would escape: a control (newline
    included), a bidi or other invisible format character, a tag character, a lone surrogate."""
    return _UNSAFE_IN_LINE.search(text) is not None


def printable_line(text: Any) -> str:
    """One untrusted field on one line (a name, a title, a value): newlines escaped too."""
    return _UNSAFE_IN_LINE.sub(_escape, text if isinstance(text, str) else str(text))


class SafeStream:
    """A text stream that escapes what a terminal would act on in everything written to it.

    The headless CLI wraps stdout and stderr in it, so no print path can send an escape
    sequence to the terminal. Newline, tab and carriage return (our progress line) pass.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(_UNSAFE_IN_STREAM.sub(_escape, text))
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
