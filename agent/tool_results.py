"""How much of a tool's result goes into the conversation, and how a conversation that the
model rejects as too long is made to fit.

A result over `RESULT_CAP` characters of JSON keeps as many items of its longest list (rows,
values, …) as fit and says how to page for the rest; one that has no such list is replaced by
a preview. A conversation the model refuses as too long gets every large tool result replaced
by a short placeholder (the toolUse/toolResult pairing and status stay, so Converse accepts
the history) and is sent once more.
"""

from __future__ import annotations

import json
from typing import Any, cast

RESULT_CAP = 50_000
"""Characters of JSON one tool result may put into the conversation."""

PREVIEW_CHARS = 2_000
PLACEHOLDER_THRESHOLD = 400
"""Tool results at most this long (as JSON) stay when a conversation is compacted."""


def capped_result(result: dict[str, Any], cap: int = RESULT_CAP) -> dict[str, Any]:
    """`result` as plain JSON data (round-tripped, so Converse can send it), within `cap`."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    safe = cast("dict[str, Any]", json.loads(text))
    if len(text) <= cap:
        return safe
    field = _longest_list(safe)
    if field is not None:
        fitted = _fit_list(safe, field, len(text), cap)
        if fitted is not None:
            return fitted
    return {
        "truncated": (
            f"The result was {len(text):,} characters, over the {cap:,}-character limit for a "
            "tool result; only its beginning is shown."
        ),
        "fix": "Ask for less: select fewer columns, aggregate, or page with offset/limit.",
        "preview": text[:PREVIEW_CHARS],
    }


def _longest_list(result: dict[str, Any]) -> str | None:
    lists = [(len(json.dumps(v, default=str)), k) for k, v in result.items() if isinstance(v, list)]
    return max(lists)[1] if lists else None


def _fit_list(result: dict[str, Any], field: str, size: int, cap: int) -> dict[str, Any] | None:
    """The result with `field` cut to the most leading items that fit (binary search)."""
    items: list[Any] = result[field]

    def build(count: int) -> dict[str, Any]:
        shown = dict(result)
        shown[field] = items[:count]
        shown["truncated"] = (
            f"The result was {size:,} characters, over the {cap:,}-character limit for a tool "
            f"result: only the first {count} of {len(items)} {field} are shown. Page with "
            "offset/limit (e.g. LIMIT/OFFSET in SQL), select fewer columns, or narrow the query."
        )
        return shown

    low, high = 0, len(items)
    while low < high:
        middle = (low + high + 1) // 2
        if len(json.dumps(build(middle), ensure_ascii=False)) <= cap:
            low = middle
        else:
            high = middle - 1
    fitted = build(low)
    return fitted if len(json.dumps(fitted, ensure_ascii=False)) <= cap else None


def compact_tool_results(messages: list[dict[str, Any]]) -> int:
    """Replace every large toolResult's content with a short placeholder; return how many."""
    replaced = 0
    for message in messages:
        for block in message.get("content", []):
            result = block.get("toolResult") if isinstance(block, dict) else None
            if result is None:
                continue
            size = len(json.dumps(result.get("content", []), ensure_ascii=False, default=str))
            if size <= PLACEHOLDER_THRESHOLD:
                continue
            result["content"] = [
                {
                    "text": f"(This tool result, {size:,} characters, was removed so the "
                    "conversation fits the model. Call the tool again, asking for less, if "
                    "it is needed.)"
                }
            ]
            replaced += 1
    return replaced
