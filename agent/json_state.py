"""Small JSON files of app state (caches, the input history, an unsent message), written
whole and best effort: a temp file renamed over the old one, so a reader finds the old file
or the new one, never half of one, and a read-only directory costs only what the file keeps.
`json` and `tempfile` are imported on first use (the first screen writes none of these)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent import paths


def write_json(path: Path, content: Any) -> bool:
    """Replace `path` with `content` as JSON (temp file in the same directory, rename).
    False when it could not be written; nothing is left behind then."""
    import json
    import tempfile

    try:
        paths.ensure_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(content, handle, ensure_ascii=False)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        Path(tmp).unlink(missing_ok=True)
        return False
    return True


def read_json(path: Path) -> Any:
    """The JSON in `path`, or None when it is missing, unreadable or damaged."""
    import json

    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
