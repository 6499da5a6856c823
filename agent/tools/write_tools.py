"""Write tools: every edit goes to the staging area for a person to review and commit."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from agent.errors import TabletalkError
from agent.store_hints import for_store
from agent.text_plural import counted, noun
from agent.tools.base import (
    TABLE_FIELD,
    ToolContext,
    ToolFailure,
    ToolImpl,
    ToolInput,
    json_value,
    require_columns,
    require_table,
)

if TYPE_CHECKING:
    from agent.staging.model import BulkStaged, Unchanged
    from agent.stores.base import TableInfo

MAX_LISTED_IDS = 20
DIFF_SAMPLE = 5
DIFF_COLUMNS = 12
STAGED_NOTE = "Staged for review: nothing is written until the user commits in the staging panel."


class StageItemInput(ToolInput):
    """One create, update or delete."""

    table: str = Field(description=TABLE_FIELD)
    op: Literal["create", "update", "delete"] = Field(description="create, update or delete")
    key: dict[str, Any] = Field(
        description='the item\'s key columns, e.g. {"id": 7}; for create pick an unused key'
    )
    values: dict[str, Any] | None = Field(
        None,
        description='columns to set, e.g. {"status": "shipped"}; required for create and update',
    )

    @model_validator(mode="after")
    def _values_match_op(self) -> StageItemInput:
        if self.op in ("create", "update") and not self.values:
            raise ValueError(f"values is required for {self.op} (the columns to set)")
        if self.op == "delete" and self.values:
            raise ValueError("values must be left out for delete")
        return self


class BulkEditInput(ToolInput):
    """One change on many items."""

    table: str = Field(description=TABLE_FIELD)
    keys: list[dict[str, Any]] | None = Field(
        None, description='the items\' keys, e.g. [{"id": 1}, {"id": 2}]; or use query'
    )
    query: str | None = Field(
        None,
        description="or: a read-only SELECT returning the key columns, e.g. "
        "SELECT id FROM orders WHERE status = 'pending'",
    )
    set: dict[str, Any] | None = Field(
        None, description='columns to set on every item, e.g. {"status": "shipped"}'
    )
    delete: bool = Field(False, description="true to delete every item instead of set")

    @model_validator(mode="after")
    def _one_of_each(self) -> BulkEditInput:
        if (self.keys is None) == (self.query is None):
            raise ValueError("give exactly one of keys or query (which items)")
        if bool(self.set) == bool(self.delete):
            raise ValueError("give exactly one of set (columns to change) or delete: true")
        if self.keys is not None and not self.keys:
            raise ValueError("keys is empty; list at least one key")
        return self


class ListStagedInput(ToolInput):
    """Staged changes, optionally of one table."""

    table: str | None = Field(None, description="only this table's changes")
    limit: int = Field(50, ge=1, le=200, description="max changes listed (1-200)")


class DiscardInput(ToolInput):
    """Which staged changes to drop: exactly one selector."""

    all: bool = Field(False, description="true to discard every staged change")
    table: str | None = Field(None, description="or: discard this table's changes")
    ids: list[str] | None = Field(
        None, description="or: discard these change ids (see listStagedChanges)"
    )

    @model_validator(mode="after")
    def _one_selector(self) -> DiscardInput:
        chosen = [bool(self.all), self.table is not None, self.ids is not None]
        if sum(chosen) != 1:
            raise ValueError("give exactly one of all: true, table or ids")
        if self.ids is not None and not self.ids:
            raise ValueError("ids is empty; list at least one id")
        return self


def _missing_required(info: TableInfo, values: dict[str, Any]) -> list[str]:
    given = {k.lower() for k in values}
    return [
        c.name
        for c in info.columns
        if c.not_null and c.name not in info.key_columns and c.name.lower() not in given
    ]


_CLI_DISCARD = re.compile(r"`tabletalk staged discard (\w+)`")


def _for_model(exc: TabletalkError) -> ToolFailure:
    """A staging error with its fix phrased as tool calls instead of CLI commands."""
    fix = exc.fix or "call listStagedChanges to see what is staged"
    fix = _CLI_DISCARD.sub(lambda m: f'discardStagedChanges {{"ids": ["{m.group(1)}"]}}', fix)
    fix = fix.replace("`tabletalk staged list`", "listStagedChanges")
    return ToolFailure(exc.message, fix)


def diff_of(ctx: ToolContext, change: Any) -> list[dict[str, Any]]:
    """A change's attribute diffs as JSON-ready dicts, at most DIFF_COLUMNS of them."""
    diffs = ctx.staging.diff(change)
    shown: list[dict[str, Any]] = [
        {"column": d.attribute, "old": json_value(d.old)[0], "new": json_value(d.new)[0]}
        for d in diffs[:DIFF_COLUMNS]
    ]
    if len(diffs) > DIFF_COLUMNS:
        shown.append({"more": f"{len(diffs) - DIFF_COLUMNS} more columns"})
    return shown


def staged_summary(ctx: ToolContext, changes: Sequence[Any]) -> dict[str, Any]:
    """What the model sees after staging: counts, some ids, a short diff sample, the note."""
    sample = []
    for change in changes[:DIFF_SAMPLE]:
        diff = diff_of(ctx, change)
        sample.append({"id": change.id, "op": change.op, "key": change.key, "diff": diff})
    out: dict[str, Any] = {
        "staged": len(changes),
        "table": changes[0].table if changes else None,
        "ids": [c.id for c in changes[:MAX_LISTED_IDS]],
    }
    if len(changes) > MAX_LISTED_IDS:
        out["moreIds"] = len(changes) - MAX_LISTED_IDS
    out["sample"] = sample
    out["pendingTotal"] = ctx.staging.count()
    out["note"] = STAGED_NOTE
    return out


def stage_item(ctx: ToolContext, args: StageItemInput) -> dict[str, Any]:
    """stageItem: stage one create/update/delete; nothing is written before commit."""
    info = require_table(ctx, args.table)
    values = dict(args.values or {})
    if ctx.store.value_checker is None:  # a store with fixed columns (items take any attribute)
        require_columns(info, list(values), "values")
    if args.op == "create":
        missing = _missing_required(info, values)
        if missing:
            raise ToolFailure(
                f"create in {info.name} needs values for the required columns: {', '.join(missing)}",
                "add them to values and call stageItem again",
            )
    try:
        change = ctx.staging.stage_unless_unchanged(
            info.name,
            args.op,
            args.key,
            values or None,
            origin=ctx.origin,
            own_only=ctx.own_changes_only,
        )
    except TabletalkError as exc:
        raise _for_model(exc) from exc
    from agent.staging.model import Unchanged  # staging is loaded: the area just staged

    if isinstance(change, Unchanged):
        return unchanged_summary(ctx, change)
    return staged_summary(ctx, [change])


def unchanged_summary(ctx: ToolContext, unchanged: Unchanged) -> dict[str, Any]:
    """What the model sees when an update would change nothing: `staged: 0`, and why, so it
    does not stage the same thing again; or that it took a staged change back to what the
    item holds, so that change was dropped (`withdrawn`)."""
    names = ", ".join(unchanged.values)
    if unchanged.withdrawn:
        return {
            "staged": 0,
            "withdrawn": True,
            "table": unchanged.table,
            "key": unchanged.key,
            "changeId": unchanged.change_id,
            "message": f"Staged change {unchanged.change_id} was dropped: with these values "
            f"({names}) it would set only what the item already holds, so there is nothing "
            "left to commit for it.",
            "next": "Tell the user the change was withdrawn and the item keeps its current "
            "values; stage it again only if they want different values.",
            "pendingTotal": ctx.staging.count(),
        }
    if unchanged.change_id is None:
        message = (
            f"Nothing was staged: the item already has these values ({names}), so this update "
            "would change nothing."
        )
    else:
        message = (
            f"Nothing changed: staged change {unchanged.change_id} already sets these values "
            f"({names}); it waits for the user's review."
        )
    return {
        "staged": 0,
        "unchanged": True,
        "table": unchanged.table,
        "key": unchanged.key,
        "changeId": unchanged.change_id,
        "message": message,
        "next": "Do not stage it again. Tell the user the item already has these values, or "
        "ask which values they want if they meant different ones.",
        "pendingTotal": ctx.staging.count(),
    }


def bulk_edit(ctx: ToolContext, args: BulkEditInput) -> dict[str, Any]:
    """bulkEdit: stage one update or delete on many items (keys or a query), leaving out the
    items an update would not change and saying how many."""
    info = require_table(ctx, args.table)
    if args.set and ctx.store.value_checker is None:
        require_columns(info, list(args.set), "set")
    try:
        outcome = ctx.staging.stage_many_unless_unchanged(
            info.name,
            keys=args.keys,
            query=args.query,
            set=args.set or None,
            delete=bool(args.delete),
            origin=ctx.origin,
            own_only=ctx.own_changes_only,
        )
    except TabletalkError as exc:
        raise _for_model(exc) from exc
    if not outcome.matched:
        raise ToolFailure(
            "no items matched, so nothing was staged",
            "check the selection with countItems or runQuery, then call bulkEdit again",
        )
    left_out = outcome.unchanged + outcome.already_staged
    if not outcome.changes:
        out: dict[str, Any] = {"staged": 0, "table": info.name}
    else:
        out = staged_summary(ctx, outcome.changes)
    out["matched"] = outcome.matched
    out["unchanged"] = left_out
    if outcome.withdrawn:
        out["withdrawn"] = list(outcome.withdrawn[:MAX_LISTED_IDS])
    if left_out or outcome.withdrawn:
        out["message"] = bulk_message(outcome, args.set or {})
    if not outcome.changes:
        out["next"] = (
            "Do not stage it again. Tell the user the items already have these values, or ask "
            "which values they want if they meant different ones."
        )
        out["pendingTotal"] = ctx.staging.count()
    return out


def bulk_message(outcome: BulkStaged, values: dict[str, Any]) -> str:
    """One sentence on what a bulk update left out and staged: "Matched 40 items; 12 already
    have status="shipped" and were left out; staged 28 changes." """
    shown = ", ".join(f"{name}={_short_json(value)}" for name, value in list(values.items())[:4])
    if len(values) > 4:
        shown += f" (and {len(values) - 4} more)"
    held, pre, gone = outcome.unchanged, outcome.already_staged, len(outcome.withdrawn)
    matched, staged = outcome.matched, len(outcome.changes)
    every = held + pre + gone == matched
    parts = []
    if held:
        lead = f"all {counted(matched, 'matched item')}" if held == matched else f"{held:,}"
        parts.append(f"{lead} already {noun(held, 'has', 'have')} {shown}")
    if pre:
        it = "it" if len(values) == 1 else "them"
        parts.append(f"{pre:,} {noun(pre, 'has', 'have')} a staged change that already sets {it}")
    left = held + pre
    clauses = []
    if len(parts) == 1:
        clauses.append(f"{parts[0]} and {noun(left, 'was', 'were')} left out")
    elif parts:
        clauses.append(" and ".join(parts) + f", so {noun(left, 'it was', 'they were')} left out")
    if gone:
        clauses.append(
            f"{counted(gone, 'staged change')} {noun(gone, 'was', 'were')} dropped, since "
            f"{noun(gone, 'its item already has', 'their items already have')} these values"
        )
    if every:
        return "Nothing was staged: " + "; ".join(clauses) + "."
    return (
        f"Matched {counted(matched, 'item')}; "
        + "; ".join(clauses)
        + (f"; staged {counted(staged, 'change')}.")
    )


def _short_json(value: Any) -> str:
    """A value as JSON, cut to 60 characters."""
    text = json.dumps(json_value(value)[0], ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def list_staged_changes(ctx: ToolContext, args: ListStagedInput) -> dict[str, Any]:
    """listStagedChanges: pending changes with their diffs."""
    table = require_table(ctx, args.table).name if args.table else None
    changes = ctx.staging.list(table)
    conflicts = ctx.staging.conflicts()  # recorded by the last commit (of any process)
    listed = []
    for change in changes[: args.limit]:
        entry = {
            "id": change.id,
            "table": change.table,
            "op": change.op,
            "key": change.key,
            "diff": diff_of(ctx, change),
            "origin": change.origin,
        }
        if change.id in conflicts:
            entry["conflict"] = json_value(conflicts[change.id].to_dict())[0]
        listed.append(entry)
    out: dict[str, Any] = {"pending": len(changes), "changes": listed}
    in_conflict = sum(c.id in conflicts for c in changes)
    if in_conflict:
        out["in_conflict"] = in_conflict
        hint = (
            f"{counted(in_conflict, 'change')} conflicted at the last commit: the item changed "
            "after it was staged. Tell the user: they can take current or reject it in "
            "tabletalk's staging panel, or with `tabletalk staged rebase ID` / "
            "`tabletalk staged discard ID`."
        )
        out["conflict_hint"] = for_store(hint, ctx.store)  # the commands reach this store
    if len(changes) > args.limit:
        out["truncated"] = (
            f"{len(changes) - args.limit} more not listed; raise limit or filter by table"
        )
    if not changes:
        out["message"] = "Nothing is staged."
    return out


def discard_staged_changes(ctx: ToolContext, args: DiscardInput) -> dict[str, Any]:
    """discardStagedChanges: drop all, one table's, or some changes by id.

    An MCP client below `full` (`ctx.own_changes_only`) drops only changes of its own origin;
    others' stay staged. The model in chat works in the user's own session: it may drop any.
    """
    table = require_table(ctx, args.table).name if args.table else None
    staged = ctx.staging.list(table)
    if args.ids is not None:
        known = {c.id for c in staged}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise ToolFailure(
                f"no staged change has the id{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}; nothing was discarded",
                "call listStagedChanges to see the ids",
            )
    origin = ctx.origin if ctx.own_changes_only else None
    if origin is not None and args.ids is not None:
        others = [c.id for c in staged if c.id in set(args.ids) and c.origin != origin]
        if others:
            raise ToolFailure(
                f"{noun(len(others), 'change')} {', '.join(others[:5])} "
                f"{noun(len(others), 'was', 'were')} staged by someone else; nothing was discarded",
                f"at your MCP level you may discard only the changes you staged (origin "
                f"{origin}); discarding others' changes needs level full",
            )
    try:
        count = ctx.staging.discard(ids=args.ids, table=table, all=bool(args.all), origin=origin)
    except TabletalkError as exc:
        raise _for_model(exc) from exc
    out: dict[str, Any] = {"discarded": count, "pending": ctx.staging.count()}
    if origin is not None and args.ids is None:
        kept = sum(1 for c in staged if c.origin != origin)
        if kept:
            out["keptOthers"] = (
                f"{counted(kept, 'change')} staged by others {noun(kept, 'was', 'were')} "
                "kept: at this MCP level you may "
                "discard only your own; discarding them needs level full"
            )
    return out


TOOLS = [
    ToolImpl(
        "stageItem",
        StageItemInput,
        stage_item,
        {"table": "orders", "op": "update", "key": {"id": 7}, "values": {"status": "shipped"}},
    ),
    ToolImpl(
        "bulkEdit",
        BulkEditInput,
        bulk_edit,
        {
            "table": "orders",
            "query": "SELECT id FROM orders WHERE status = 'pending'",
            "set": {"status": "shipped"},
        },
    ),
    ToolImpl("listStagedChanges", ListStagedInput, list_staged_changes, {"table": "orders"}),
    ToolImpl("discardStagedChanges", DiscardInput, discard_staged_changes, {"table": "orders"}),
]
