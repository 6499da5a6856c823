"""What the user sent, kept so Up in an empty composer brings it back (even after a restart).

A small JSON file in the state dir holds the newest HISTORY_LIMIT messages, each with the id of
its conversation: the current conversation's messages come first, then everyone else's.
Writing it is best effort (agent/json_state.py): a read-only state dir only costs the history,
never a message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent import paths
from agent.json_state import read_json, write_json

HISTORY_LIMIT = 200
"""Messages kept in the history file (oldest dropped first)."""

MAX_TEXT = 20_000
"""Longer messages are not kept (the history is for questions, not pasted documents)."""


class InputHistory:
    """Sent messages, newest last, bounded; loaded on first use."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.state_dir() / "input_history.json"
        self._entries: list[dict[str, str]] | None = None

    def _load(self) -> list[dict[str, str]]:
        if self._entries is None:
            self._entries = []
            data: Any = read_json(self.path)  # None when damaged: a new history starts
            for item in data if isinstance(data, list) else []:
                if isinstance(item, dict) and isinstance(item.get("text"), str):
                    conversation = item.get("conversation")
                    self._entries.append(
                        {
                            "conversation": conversation if isinstance(conversation, str) else "",
                            "text": item["text"],
                        }
                    )
            del self._entries[:-HISTORY_LIMIT]
        return self._entries

    def add(self, conversation: str | None, text: str) -> None:
        """Remember one sent message (a repeat of the newest one is kept once)."""
        text = text.strip()
        if not text or len(text) > MAX_TEXT:
            return
        entries = self._load()
        entry = {"conversation": conversation or "", "text": text}
        if entries and entries[-1] == entry:
            return
        entries.append(entry)
        del entries[:-HISTORY_LIMIT]
        write_json(self.path, entries)

    def recall(self, conversation: str | None) -> list[str]:
        """Texts to step through with Up, newest first: this conversation's, then the rest."""
        entries = self._load()
        own = [
            e["text"]
            for e in reversed(entries)
            if conversation and e["conversation"] == conversation
        ]
        rest = [e["text"] for e in reversed(entries)]
        seen: set[str] = set()
        ordered = []
        for text in own + rest:
            if text not in seen:
                seen.add(text)
                ordered.append(text)
        return ordered
