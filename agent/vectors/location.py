"""Where a store's vector sidecar lives: a path only, so callers can check for an index
without loading apsw and sqlite-vec (which also pulls in numpy)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agent import paths


def sidecar_path(identity: str) -> Path:
    """The sidecar file of the store named `identity` (a hash, so any identity is a file name)."""
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:24]
    return paths.data_dir() / "vectors" / f"{digest}.sqlite"
