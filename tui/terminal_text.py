"""No untrusted text reaches the terminal as a control sequence.

A table cell, a model answer or a staged value may hold ESC sequences (set the window title,
clear the screen, write the clipboard through OSC 52). Rich's Text and Textual's Content already
drop BEL, BS, VT, FF and CR from every string they hold, through one translation table each;
`install()` extends those same tables so every other C0 control but tab and newline, DEL and
the C1 controls (the 8-bit CSI 0x9b, ...) show as a visible picture (`␛`) instead, and
characters that would reorder or hide text (bidi overrides, zero-width spaces) as `�`. A picture is
one character like the code it stands for, so styled spans keep their offsets. Text drawn as
raw Segments (the table view) goes through `visible` first.
"""

from __future__ import annotations

from typing import cast

import rich.control
import textual.content

_KEPT = {0x09, 0x0A}  # tab and newline lay text out
DISGUISING = (
    (0x061C, 0x061C),  # Arabic letter mark
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200B),  # zero-width space (joiners U+200C/D stay: scripts and emoji use them)
    (0x200E, 0x200F),  # left-to-right / right-to-left marks
    (0x2028, 0x202E),  # line and paragraph separators, bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated formats
    (0xFEFF, 0xFEFF),  # zero-width no-break space
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0xD800, 0xDFFF),  # lone surrogates: written as `\ud800`, 6 cells where 1 was laid out
)
"""Invisible characters that reorder or hide text (a bidi override makes `exe.txt` read as
`txt.exe`), shown as U+FFFD like the C1 controls."""


def _pictures() -> dict[int, str]:
    table = {code: chr(0x2400 + code) for code in range(0x20) if code not in _KEPT}
    table[0x7F] = "\u2421"  # ␡
    table.update({code: "\ufffd" for code in range(0x80, 0xA0)})
    for first, last in DISGUISING:
        table.update({code: "\ufffd" for code in range(first, last + 1)})
    return table


PICTURES = _pictures()
"""Control code → the one visible character shown in its place."""


def visible(text: str) -> str:
    """`text` with every terminal control code (but tab and newline) shown as a picture."""
    return text.translate(PICTURES)


GRID_DROPPED = dict.fromkeys([0x200D, 0xFE0F, *range(0x1F3FB, 0x1F400)])
"""Code points that join emoji into one picture on some terminals and not on others (the zero
width joiner, the emoji presentation selector, skin-tone modifiers): `👍🏽` takes 2 columns in
one terminal, 4 in another (tmux 3.3), so a grid cell holding it moves every divider after it."""


def grid_text(text: str) -> str:
    """`visible(text)` for a cell of a grid: without GRID_DROPPED, so every terminal gives it
    the width the layout measured (`👍🏽` shows as `👍`, `👨‍👩‍👧` as `👨👩👧`)."""
    return text.translate(PICTURES).translate(GRID_DROPPED)


def install() -> None:
    """Make Rich's and Textual's own control-code tables cover every terminal control code.

    Codes they already strip stay stripped; idempotent.
    """
    tables = (rich.control._CONTROL_STRIP_TRANSLATE, textual.content._CONTROL_STRIP_TRANSLATE)
    for table in tables:
        shown = cast("dict[int, str | None]", table)  # typed as code -> None (strip) only
        for code, picture in PICTURES.items():
            shown.setdefault(code, picture)
