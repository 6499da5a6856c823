"""Building an index as a person asks for it (the CLI's `index build`, the app's chip): choose
the columns, estimate rows, tokens and cost before anything is spent, then build."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent.errors import TabletalkError
from agent.stores.base import TableInfo
from agent.vectors.embedder import (
    DEFAULT_MODEL,
    Embedder,
    check_dims,
    estimate_cost,
    estimate_tokens,
    model_format,
)
from agent.vectors.index import BuildPlan, VectorIndex

_TEXT_TYPES = ("TEXT", "CHAR", "CLOB", "STRING")
_NOT_PROSE = ("_at", "_on", "_date", "_time", "_id", "_key", "_url")


def default_columns(info: TableInfo) -> list[str]:
    """The columns an index embeds when nobody named any: the table's text columns that are
    not part of the key and do not look like ids, dates or links."""
    chosen = []
    for column in info.columns:
        kind = column.type.upper()
        texty = any(t in kind for t in _TEXT_TYPES) or "S" in kind.split("/")
        name = column.name.lower()
        if column.key_position or not texty or name == "id" or name.endswith(_NOT_PROSE):
            continue
        chosen.append(column.name)
    return chosen


def build_chip(info: TableInfo) -> dict[str, Any] | None:
    """The chip that builds `info`'s index on its default columns (None when it has none)."""
    columns = default_columns(info)
    if not columns:
        return None
    return {
        "label": f"Build index: {info.name}",
        "action": {"kind": "buildIndex", "table": info.name, "columns": columns},
    }


@dataclass(frozen=True)
class Estimate:
    """What a build will cost before it starts."""

    table: str
    columns: tuple[str, ...]
    model: str
    dims: int
    rows: int  # rows to embed (new or changed)
    drop: int
    unchanged: int
    tokens: int
    cost_usd: float

    def price(self) -> str:
        return f"${self.cost_usd:,.4f}" if self.cost_usd >= 0.0001 else "less than $0.0001"


def plan_build(
    index: VectorIndex,
    info: TableInfo,
    columns: Sequence[str] | None,
    model: str | None = None,
    dims: int | None = None,
) -> tuple[BuildPlan, Estimate]:
    """Read the table and say what building (or refreshing) its index would embed and cost.
    `model`/`dims` default to the index's own, else Titan Text Embeddings V2."""
    current = index.get(info.name)
    model = model or (current.model if current else DEFAULT_MODEL)
    fmt = model_format(model)
    dims = check_dims(fmt, dims or (current.dims if current and current.model == model else None))
    plan = index.plan(info, columns, model, dims)
    tokens = estimate_tokens([text for _, text, _ in plan.embed])
    estimate = Estimate(
        info.name,
        plan.columns,
        model,
        dims,
        len(plan.embed),
        len(plan.drop),
        plan.unchanged,
        tokens,
        estimate_cost(fmt, tokens),
    )
    return plan, estimate


def check_columns(
    info: TableInfo, columns: Sequence[str], *, any_attribute: bool = False
) -> tuple[str, ...]:
    """The columns' real names (matched case-insensitively); an unknown one fails naming the
    table's columns. With `any_attribute` (DynamoDB: the columns are those seen in a sample of
    items) a name not seen is taken as given."""
    known = {c.name.lower(): c.name for c in info.columns}
    if any_attribute:
        known.update({c.lower(): c for c in columns if c.lower() not in known})
    unknown = [c for c in columns if c.lower() not in known]
    if unknown or not columns:
        raise TabletalkError(
            f"no column {', '.join(map(repr, unknown))} in table '{info.name}'"
            if unknown
            else "no columns to embed",
            fix=f"choose among the columns of {info.name}: {', '.join(known.values())}",
        )
    return tuple(known[c.lower()] for c in columns)


def run_build(
    index: VectorIndex,
    plan: BuildPlan,
    estimate: Estimate,
    *,
    profile: str | None,
    region: str | None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """Embed and write what the plan holds; returns the rows the index now has."""
    embedder = Embedder(estimate.model, estimate.dims, profile=profile, region=region)
    index.build(plan, embedder, on_progress)
    return estimate.unchanged + estimate.rows
