"""Helpers for tool tests: a ToolContext on a real store and staging area, and result checks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent.attachments import AttachmentSet
from agent.specs import SpecBook
from agent.staging import StagingArea
from agent.stores.open import open_store
from agent.tools.base import ToolContext
from agent.tools.registry import run_tool
from agent.ui_port import HeadlessUi


def make_ctx(db: Path | str, tmp_path: Path, **overrides: Any) -> ToolContext:
    """A ToolContext on `db` with a private staging area, spec book and export dir."""
    store = overrides["store"] if "store" in overrides else open_store(db)
    export_dir = tmp_path / "out"
    export_dir.mkdir(exist_ok=True)
    fields: dict[str, Any] = {
        "store": store,
        "staging": overrides.get("staging") or StagingArea(store, tmp_path / "staging.sqlite"),
        "ui": HeadlessUi(),
        "attachments": AttachmentSet(),
        "specs": SpecBook(tmp_path / "specs.sqlite", store.identity),
        "conversation_id": "c1",
        "export_dir": export_dir,
    }
    fields.update(overrides)
    return ToolContext(**fields)


@contextmanager
def opened_ctx(db: Path | str, tmp_path: Path, **overrides: Any) -> Iterator[ToolContext]:
    """`make_ctx`, whose staging area and store are closed when the block ends."""
    context = make_ctx(db, tmp_path, **overrides)
    try:
        yield context
    finally:
        context.staging.close()
        context.store.close()


def ok(ctx: ToolContext, tool: str, /, **args: object) -> dict:
    """Run a tool and assert it succeeded."""
    status, result = run_tool(ctx, tool, args)
    assert status == "success", result
    return result


def err(ctx: ToolContext, tool: str, /, **args: object) -> dict:
    """Run a tool and assert it failed with an error and a fix."""
    status, result = run_tool(ctx, tool, args)
    assert status == "error", result
    assert result["error"] and result.get("fix"), result
    return result
