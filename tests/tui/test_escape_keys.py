"""alt+<key> with keys right behind it in one read (tui/escape_keys.py): alt+<key>, no `^`."""

from __future__ import annotations

from textual._xterm_parser import XTermParser

from tui import escape_keys


def keys(data: str) -> list[tuple[str, str | None]]:
    """The keys Textual's parser (as the app installs it) reads from one read of `data`."""
    escape_keys.install()
    return [(t.key, t.character) for t in XTermParser().feed(data) if hasattr(t, "key")]


def test_alt_m_and_a_long_message_behind_it_is_alt_m_then_the_message() -> None:
    message = "bigbulk mark delivered returned"  # 31 characters: the parser's limit was 32
    read = keys("\r\x1bm" + message + "\r")
    assert read[:2] == [("enter", "\r"), ("alt+m", "m")]
    assert "".join(character or "" for _, character in read[2:-1]) == message
    assert ("circumflex_accent", "^") not in read


def test_alt_m_then_escape_is_alt_m() -> None:
    assert keys("\x1bm\x1b")[0] == ("alt+m", "m")


def test_the_sequences_textual_knows_read_as_before() -> None:
    assert keys("\x1b[A") == [("up", None)]
    assert keys("\x1b[1;5A") == [("ctrl+up", None)]
    assert keys("\x1bOP") == [("f1", None)]
    assert keys("\x1bb") == [("ctrl+left", None)]
    assert keys("\x1b\x1b") == [("escape", "\x1b")]
    assert keys("\x1b[200~pasted\x1b[201~x") == [("x", "x")]  # the paste is a Paste event


def test_install_is_idempotent() -> None:
    escape_keys.install()
    first = XTermParser._sequence_to_key_events
    escape_keys.install()
    assert XTermParser._sequence_to_key_events is first
