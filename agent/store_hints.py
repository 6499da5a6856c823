"""Hints that name a `tabletalk` command reach the store they are about: a store's `--db`
flag, and the hint text with it added to each command that acts on one store. Used by the
CLI's output, the app's messages and the tools' hints alike (so tools need not import cli).
"""

from __future__ import annotations

import re
import shlex

from agent.stores.base import Store


def db_flag(store: Store) -> str:
    """` --db VALUE` for hints that must reach the same store; empty for the demo database."""
    from agent import paths

    path = store.file_path
    if path is not None and path.resolve() == paths.demo_db_path().resolve():
        return ""
    return f" --db {shlex.quote(store.db_arg)}"


_STORE_COMMAND = re.compile(r"`(tabletalk (?:staged|commits|index|ask)\b[^`]*)`")
"""A command in a hint that acts on one store (it takes --db)."""


def for_store(text: str, store: Store) -> str:
    """`text` with each `tabletalk staged|commits|index|ask …` command it names given this
    store's --db, so a hint copied as printed reaches the same store (the demo needs none)."""
    return with_flag(text, db_flag(store))


def with_flag(text: str, flag: str) -> str:
    """`text` with `flag` (from db_flag) added to each store command it names without one."""
    if not flag or "`tabletalk " not in text:
        return text
    return _STORE_COMMAND.sub(
        lambda m: m.group(0) if " --db " in m.group(1) else f"`{m.group(1)}{flag}`", text
    )
