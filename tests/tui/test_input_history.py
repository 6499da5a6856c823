"""The composer's sent-message history file: a damaged one starts empty instead of failing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.input_history import InputHistory


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not text", b"{not json", b"[" * 100_000 + b"]" * 100_000, b'{"text": 5}'],
)
def test_a_damaged_history_file_starts_empty_and_is_written_again(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "input_history.json"
    path.write_bytes(content)
    history = InputHistory(path)
    assert history.recall("c1") == []
    history.add("c1", "show me orders")
    assert InputHistory(path).recall("c1") == ["show me orders"]
