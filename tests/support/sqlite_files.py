"""Real SQLite files for tests, made from a SQL script."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def make_db(path: Path, script: str) -> Path:
    """Create `path` by running `script` on it; return the path."""
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()
    return path
