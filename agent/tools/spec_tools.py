"""Tools for saved specs (named queries and views) and declared relationships between tables."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent.errors import ReadStopped, TabletalkError
from agent.specs import Relationship, SavedSpec, check_spec, is_full_query
from agent.tools.base import (
    ToolContext,
    ToolFailure,
    ToolImpl,
    ToolInput,
    require_attributes,
    require_table,
    strip_where,
)
from agent.tools.read_tools import NoInput


class SpecNameInput(ToolInput):
    """One saved spec."""

    name: str = Field(description="saved spec name, see listSavedSpecs")


class SaveSpecInput(ToolInput):
    """A query or view to save."""

    name: str = Field(
        description="short unique name, e.g. 'pending orders'", min_length=1, max_length=80
    )
    query: str = Field(
        description="a read-only SELECT, or (with table) a filter condition like status = 'pending'"
    )
    table: str | None = Field(
        None, description="table the view shows (needed when query is a condition)"
    )
    description: str | None = Field(None, description="one line on what it shows", max_length=300)
    overwrite: bool = Field(False, description="true to replace a spec with the same name")


class RelationshipsInput(ToolInput):
    """Relationships, optionally of one table."""

    table: str | None = Field(None, description="only relationships touching this table")


class DeclareInput(ToolInput):
    """A join between two tables."""

    left: str = Field(description="first table, e.g. orders")
    left_on: str = Field(description="its column, e.g. customer_id")
    right: str = Field(description="second table, e.g. customers")
    right_on: str = Field(description="its column, e.g. id")
    name: str | None = Field(
        None, description="optional name; default left.left_on->right.right_on"
    )


def list_saved_specs(ctx: ToolContext, _: NoInput) -> dict[str, Any]:
    """listSavedSpecs: the store's saved queries and views."""
    specs = [s.to_dict() for s in ctx.specs.list_specs()]
    out: dict[str, Any] = {"specs": specs}
    if not specs:
        out["message"] = "No saved specs yet; saveSpec saves one."
    return out


def open_saved_spec(ctx: ToolContext, args: SpecNameInput) -> dict[str, Any]:
    """openSavedSpec: open a saved query or view through the UI port."""
    spec = ctx.specs.get_spec(args.name)
    return {"message": ctx.ui.open_saved_spec(spec.to_dict()), "spec": spec.to_dict()}


def save_spec(ctx: ToolContext, args: SaveSpecInput) -> dict[str, Any]:
    """saveSpec: save a query or filtered view under a name, after checking it runs."""
    table = require_table(ctx, args.table).name if args.table else None
    query = args.query.strip().rstrip(";").strip()
    if not is_full_query(query):
        query = strip_where(query) or ""
        if table is None:
            raise ToolFailure(
                "query is a condition, so the spec needs a table",
                'pass table (e.g. "orders"), or make query a full read-only SELECT',
            )
    spec = SavedSpec(args.name.strip(), query, table, args.description)
    if args.overwrite and ctx.own_changes_only:
        if any(saved.name == spec.name for saved in ctx.specs.list_specs()):
            raise ToolFailure(
                f"a saved spec named '{spec.name}' already exists, and a client below level "
                "full cannot replace one",
                "save it under a new name (listSavedSpecs shows the names taken)",
            )
    try:
        check_spec(ctx.store, spec)
    except ReadStopped:
        raise  # Stop, not a query that does not run
    except TabletalkError as exc:
        raise ToolFailure(
            f"the spec's query does not run: {exc.message}",
            "test it with runQuery (or countItems for a condition) and save it again",
        ) from exc
    ctx.specs.save_spec(spec, overwrite=args.overwrite)
    return {"saved": spec.to_dict(), "message": f"Saved '{spec.name}'; openSavedSpec opens it."}


def list_relationships(ctx: ToolContext, args: RelationshipsInput) -> dict[str, Any]:
    """listRelationships: declared joins, optionally of one table."""
    table = require_table(ctx, args.table).name if args.table else None
    found = [r.to_dict() for r in ctx.specs.list_relationships(table)]
    out: dict[str, Any] = {"relationships": found}
    if not found:
        out["message"] = "No relationships declared; declareRelationship declares one."
    return out


def declare_relationship(ctx: ToolContext, args: DeclareInput) -> dict[str, Any]:
    """declareRelationship: record a join after checking both columns exist."""
    left = require_table(ctx, args.left)
    right = require_table(ctx, args.right)
    (left_on,) = require_attributes(ctx, left, [args.left_on], "left_on")
    (right_on,) = require_attributes(ctx, right, [args.right_on], "right_on")
    name = (args.name or "").strip() or f"{left.name}.{left_on}->{right.name}.{right_on}"
    rel = Relationship(name, left.name, left_on, right.name, right_on)
    stored, created = ctx.specs.declare_relationship(rel)
    return {
        "relationship": stored.to_dict(),
        "created": created,
        "message": "Declared." if created else "This relationship was already declared.",
    }


TOOLS = [
    ToolImpl("listSavedSpecs", NoInput, list_saved_specs, {}),
    ToolImpl("openSavedSpec", SpecNameInput, open_saved_spec, {"name": "pending orders"}),
    ToolImpl(
        "saveSpec",
        SaveSpecInput,
        save_spec,
        {"name": "pending orders", "table": "orders", "query": "status = 'pending'"},
    ),
    ToolImpl("listRelationships", RelationshipsInput, list_relationships, {"table": "orders"}),
    ToolImpl(
        "declareRelationship",
        DeclareInput,
        declare_relationship,
        {"left": "orders", "left_on": "customer_id", "right": "customers", "right_on": "id"},
    ),
]
