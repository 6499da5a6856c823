"""MCP client tokens: who may call the HTTP server, at which level.

A token is shown once when created; only its SHA-256 is kept, in a SQLite file under the state
dir (mode 0600). The server looks tokens up on every request, so a revocation made by another
process takes effect on the next request.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agent import paths
from agent.errors import TabletalkError
from agent.mcp_server.levels import LEVELS

TOKEN_PREFIX = "tt_"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

SCHEMA = """
CREATE TABLE IF NOT EXISTS clients (
    name TEXT PRIMARY KEY,
    level TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_used TEXT,
    calls INTEGER NOT NULL DEFAULT 0
)
"""


@dataclass(frozen=True)
class McpClient:
    """One client the user issued a token to."""

    name: str
    level: str
    created: str
    last_used: str | None = None
    calls: int = 0

    @property
    def origin(self) -> str:
        """The origin its staged changes carry (what the review panel shows)."""
        return f"mcp:{self.name}"


def token_hash(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class TokenBook:
    """The clients file: create, list, revoke, and verify tokens."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.state_dir() / "mcp_clients.sqlite"
        self._lock = threading.Lock()
        paths.ensure_dir(self.path.parent)
        fresh = not self.path.exists()
        if fresh:  # create it private before SQLite writes anything into it
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
        try:
            self._conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(SCHEMA)
            self._conn.commit()
        except sqlite3.DatabaseError as exc:
            raise TabletalkError(
                f"Cannot open the MCP clients file {self.path}: {exc}",
                fix="Move the file aside and create the tokens again "
                "(`tabletalk mcp token create NAME --level LEVEL`).",
            ) from exc
        os.chmod(self.path, 0o600)

    def create(self, name: str, level: str) -> str:
        """Issue a token for a new client name; returns the token (the only time it is seen)."""
        if not NAME_PATTERN.fullmatch(name):
            raise TabletalkError(
                f"{name!r} is not a usable client name",
                fix="Use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.",
            )
        if name.lower() in LEVELS:  # mcp:stage is the stdio client's origin at --level stage
            raise TabletalkError(
                f"{name!r} is the name of an MCP level; a client named so would stage changes "
                f"as the stdio server at --level {name.lower()} does (the same origin, "
                "mcp:" + name.lower() + "), and could discard or amend that client's changes",
                fix="Name the client after what it is, e.g. `desk` or `claude-code`.",
            )
        if level not in LEVELS:
            raise TabletalkError(
                f"Unknown level {level!r}", fix=f"Use one of: {', '.join(LEVELS)}."
            )
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT INTO clients (name, level, token_hash, created) VALUES (?, ?, ?, ?)",
                    (name, level, token_hash(token), _now()),
                )
                self._conn.commit()
            except sqlite3.IntegrityError as exc:
                raise TabletalkError(
                    f"A client named {name!r} already exists",
                    fix=f"Pick another name, or revoke it first: `tabletalk mcp token revoke {name}`.",
                ) from exc
        return token

    def list(self) -> list[McpClient]:
        """Every client, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT name, level, created, last_used, calls FROM clients ORDER BY created, name"
            ).fetchall()
        return [McpClient(*row) for row in rows]

    def revoke(self, name: str) -> bool:
        """Forget a client's token; False when no such client exists."""
        with self._lock:
            done = self._conn.execute("DELETE FROM clients WHERE name = ?", (name,))
            self._conn.commit()
        return done.rowcount > 0

    def verify(self, token: str) -> McpClient | None:
        """The client a presented token belongs to, or None (unknown or revoked)."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        with self._lock:
            row = self._conn.execute(
                "SELECT name, level, created, last_used, calls FROM clients WHERE token_hash = ?",
                (token_hash(token),),
            ).fetchone()
        return McpClient(*row) if row else None

    def record_call(self, name: str) -> None:
        """Count one call and stamp its time."""
        with self._lock:
            self._conn.execute(
                "UPDATE clients SET calls = calls + 1, last_used = ? WHERE name = ?",
                (_now(), name),
            )
            self._conn.commit()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._conn.close()
