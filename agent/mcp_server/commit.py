"""`commitStagedChanges`: the one MCP-only tool, offered at level `full` (see offer.py)."""

from __future__ import annotations

from typing import Any, Literal

from agent.errors import StagingError
from agent.staging import StagingArea
from agent.text_plural import counted, noun
from agent.tools.base import json_value

Status = Literal["success", "error"]
LIST_FIX = "call listStagedChanges to see the staged change ids"


def commit_staged(
    staging: StagingArea, arguments: dict[str, Any] | None, by: str = "mcp"
) -> tuple[Status, dict[str, Any]]:
    """Commit every staged change of the store, or only `ids`; conflicts apply nothing."""
    arguments = arguments or {}
    unknown = sorted(set(arguments) - {"ids"})
    if unknown:
        return "error", {
            "error": f"invalid input for commitStagedChanges: field '{unknown[0]}' is not allowed",
            "fix": 'call commitStagedChanges like {"ids": ["<id>"]}, or {} to commit all',
        }
    ids = arguments.get("ids")
    if ids is not None and (
        not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids)
    ):
        return "error", {
            "error": "invalid input for commitStagedChanges: field 'ids' must be a list of "
            "change id strings",
            "fix": 'call commitStagedChanges like {"ids": ["<id>"]}, or {} to commit all',
        }
    total = staging.count() if ids is None else len(set(ids))
    if total == 0:
        return "success", {"committed": [], "conflicts": [], "message": "nothing is staged"}
    try:
        report = staging.commit(ids, by=by)
    except StagingError as exc:
        fix = (exc.fix or LIST_FIX).replace("`tabletalk staged list`", "listStagedChanges")
        return "error", {"error": exc.message, "fix": fix}
    if report.conflicts:
        committed = len(report.committed)
        done = f"committed {counted(committed, 'change')}" if committed else "nothing was committed"
        return "error", {
            "error": f"{done}: {counted(len(report.conflicts), 'conflict')}; "
            f"{counted(len(report.kept), 'change')} "
            f"{noun(len(report.kept), 'is', 'are')} still staged",
            "fix": "the items changed since they were staged: ask the user to take the current "
            "values (`tabletalk staged rebase ID`, or the staging panel) so the change applies "
            "on top of them, or discard the conflicting changes (discardStagedChanges); then "
            "commit again",
            "committed": list(report.committed),
            "recovered": list(report.recovered),
            "conflicts": [
                {
                    "id": conflict.change_id,
                    "reason": conflict.reason,
                    "current": json_value(conflict.current)[0],
                }
                for conflict in report.conflicts
            ],
        }
    message = (
        f"committed {counted(len(report.committed), 'change')} to {staging.store.label}"
        if report.committed
        else "nothing left to commit: another commit settled these changes first"
    )
    return "success", {
        "committed": list(report.committed),
        "conflicts": [],
        "recovered": list(report.recovered),
        "message": message,
    }
