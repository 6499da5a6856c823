"""Stored UTC timestamps shown in this machine's time zone."""

from __future__ import annotations

from datetime import datetime


def local_time(stamp: str | None, pattern: str) -> str:
    """A stored UTC timestamp in this machine's time zone ("never" for none; as stored when
    it does not read as one)."""
    if stamp is None:
        return "never"
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime(pattern)
    except ValueError:
        return stamp
