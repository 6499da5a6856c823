"""alt+<key> with more keys right behind it is alt+<key>, never "^" and the key typed as text.

A terminal sends alt+m as ESC m. Textual's XTermParser reads ESC as the start of an escape
sequence and keeps adding what follows until a sequence it knows matches, its escape delay
(0.1 s) passes, another ESC comes or 32 characters are gathered; in the last two cases it types
them all out with the ESC as a "^". So alt+m followed at once by a message (one read: tmux
send-keys, a fast typist) put `^mbigbulk mark delivered returned` in the message box and
alt+m never ran. No key's sequence starts with ESC and a character that introduces no longer
sequence (`[`, `O`, `P`, …), so `install()` reads ESC and such a character at once as alt+that
key: what the parser itself reads when nothing follows within its delay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

ESC = "\x1b"

INTRODUCERS = frozenset("[O]PX^_N")
"""Characters after ESC that start a longer sequence: CSI, SS3, OSC, DCS, SOS, PM, APC, SS2
(keys, mouse and the terminal's replies). Second characters of the longer sequences Textual
knows are added at install."""

_PATCHED = "_tabletalk_alt_at_once"


def alt_key_at_once(sequence: str, introducers: frozenset[str]) -> str | None:
    """The character that ESC + it reads as alt+<key> at once, or None when `sequence` is not
    ESC and one printable character that starts no longer sequence."""
    if len(sequence) != 2 or sequence[0] != ESC:
        return None
    character = sequence[1]
    if not character.isprintable() or character in introducers:
        return None
    return character


def install() -> None:
    """Wrap XTermParser's sequence lookup so ESC + a plain character is alt+key at once;
    idempotent, and nothing changes for a sequence Textual already reads as a key."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    from textual._xterm_parser import XTermParser

    original: Callable[..., Iterable[Any]] | None = getattr(
        XTermParser, "_sequence_to_key_events", None
    )
    if original is None or getattr(original, _PATCHED, False):
        return
    introducers = INTRODUCERS | {
        known[1] for known in ANSI_SEQUENCES_KEYS if len(known) > 2 and known[0] == ESC
    }

    def sequence_to_key_events(self: Any, sequence: str, alt: bool = False) -> Iterable[Any]:
        """Textual's keys for `sequence`; ESC + a plain character, which it reads as no key
        yet, is alt+that key (Textual's own reading of the character with alt)."""
        keys = list(original(self, sequence, alt))
        if keys:
            return keys
        character = alt_key_at_once(sequence, introducers)
        if character is None:
            return keys
        return list(original(self, character, True))

    setattr(sequence_to_key_events, _PATCHED, True)
    XTermParser._sequence_to_key_events = sequence_to_key_events  # type: ignore[method-assign]
