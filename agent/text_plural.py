"""Counts of things as a person reads them: "1 change", "10,000 changes".

One helper so every message in the app, the CLI and the tools says a count the same way,
with a thousands separator and the right singular or plural instead of "change(s)".
"""

from __future__ import annotations


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """The word for ``n`` things: ``singular`` for exactly one, else ``plural`` (default: +s);
    also a verb that agrees with the count: ``noun(n, "is", "are")``."""
    if n == 1:
        return singular
    return plural if plural is not None else singular + "s"


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` with separators and the matching word: ``counted(1, "entry", "entries")`` -> "1 entry"."""
    return f"{n:,} {noun(n, singular, plural)}"
