"""The message left unsent in the composer when the app quits, put back at the next start.

One small JSON file in the state dir holds its text and the paths of its pending
attachments; taking it back deletes the file, so a draft comes back once. Two apps quitting
with drafts keep the later one. Best effort, like the input history: a read-only state dir
only costs the draft.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent import paths
from agent.json_state import read_json, write_json


class UnsentDraft:
    """The composer's unsent text and attachments across a restart."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.state_dir() / "unsent_draft.json"

    def keep(self, text: str, files: list[Path]) -> bool:
        """Save the draft; False when there is nothing to keep or it could not be written."""
        if not text.strip() and not files:
            return False
        return write_json(self.path, {"text": text, "files": [str(p) for p in files]})

    def take(self) -> tuple[str, list[Path]] | None:
        """The kept draft (attachments that are still files), removed from disk; None if none."""
        if not self.path.is_file():
            return None
        data: Any = read_json(self.path)
        self.path.unlink(missing_ok=True)
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            return None
        named = data.get("files")
        files = [Path(p) for p in named if isinstance(p, str)] if isinstance(named, list) else []
        files = [p for p in files if p.is_file()]
        if not data["text"].strip() and not files:
            return None
        return data["text"], files
