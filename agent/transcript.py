"""One transcript rule: a conversation as the chat shows it, live or resumed.

`display_items` turns saved messages into display items — user and assistant texts (user
texts with the names of the files sent with them), tool calls with their results (a call
refused at the permission gate as "denied", though the model got an "error"), chips, a
review chip after a turn that staged changes, and turns that failed before any answer (taken
back from the messages; shown where they were sent, with their error). The live chat follows
the same rule through `ReviewMarker` (which tools stage comes from the catalog rows:
`catalog.staging_names`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import catalog

ATTACHED_PREFIX = "[Attached files: "
"""Starts the text block that lists a prompt's files to the model (not shown as a message)."""

_CHIP_TOOLS = catalog.effect_names(catalog.Effect.PROPOSES_CHIP)

REVIEW_CHIP: dict[str, Any] = {
    "label": "Review staged changes",
    "action": {"kind": "openStagingPanel"},
}


class ReviewMarker:
    """Follows one turn's tool results; at its end says whether a review chip follows."""

    def __init__(self, staging_tools: Iterable[str] | None = None) -> None:
        self.staging_tools = frozenset(
            staging_tools if staging_tools is not None else catalog.staging_names()
        )
        self.staged = False

    def saw(self, tool: str, status: str | None, result: Any = None) -> None:
        """One finished call; a success of a staging tool counts unless its result says it
        staged nothing (`staged: 0`, an update that would change nothing)."""
        if status != "success" or tool not in self.staging_tools:
            return
        if isinstance(result, dict) and result.get("staged") == 0:
            return
        self.staged = True

    def end_turn(self) -> dict[str, Any] | None:
        """The review chip (a fresh copy) if the turn staged, else None; starts a new turn."""
        staged, self.staged = self.staged, False
        return (
            {"label": REVIEW_CHIP["label"], "action": dict(REVIEW_CHIP["action"])}
            if staged
            else None
        )


def display_items(
    messages: list[dict[str, Any]],
    attached: Iterable[dict[str, Any]] = (),
    denied: Iterable[dict[str, Any]] = (),
    failed: Iterable[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The display items of `messages`; `attached` holds `{"message", "block", "names"}`
    records of the files sent with a user text (see `Conversation.attached`), `denied` the
    `{"message", "id"}` records of calls refused at the permission gate (`Conversation.denied`),
    `failed` the turns taken back after failing (`Conversation.failed`): each a `{"failed":
    {"text", "error", "fix"}}` item before the block it was sent at.
    """
    names_at = {(a["message"], a["block"]): list(a["names"]) for a in attached}
    refused = {(d["message"], d["id"]) for d in denied}
    unsent = sorted(failed, key=lambda f: (f["message"], f["block"]))  # stable: sent order
    items: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}
    denied_pending: set[str] = set()
    review = ReviewMarker()

    def end_turn() -> None:
        chip = review.end_turn()
        if chip is not None:
            items.append({"chip": chip})

    def failures_before(position: tuple[int, int] | None) -> None:
        """The failed turns sent before `position` (None: all that are left)."""
        while unsent and (
            position is None or (unsent[0]["message"], unsent[0]["block"]) <= position
        ):
            end_turn()
            record = unsent.pop(0)
            items.append(
                {
                    "failed": {
                        "text": record["text"],
                        "error": record["error"],
                        "fix": record.get("fix"),
                    }
                }
            )

    for message_index, message in enumerate(messages):
        for block_index, block in enumerate(message["content"]):
            failures_before((message_index, block_index))
            if "text" in block and message["role"] == "assistant":
                items.append({"role": "assistant", "text": block["text"]})
            elif "text" in block and block["text"].startswith(ATTACHED_PREFIX):
                continue
            elif "text" in block:
                end_turn()
                item: dict[str, Any] = {"role": "user", "text": block["text"]}
                names = names_at.get((message_index, block_index))
                if names:
                    item["attachments"] = names
                items.append(item)
            elif "toolUse" in block:
                use = block["toolUse"]
                call = {"tool": use["name"], "input": use.get("input", {}), "status": None}
                call["result"] = None
                if (message_index, use["toolUseId"]) in refused:
                    denied_pending.add(use["toolUseId"])
                else:
                    denied_pending.discard(use["toolUseId"])
                pending[use["toolUseId"]] = call
                items.append(call)
            elif "toolResult" in block:
                _answer(block["toolResult"], pending, denied_pending, items, review)
    failures_before(None)
    end_turn()
    return items


def _answer(
    result: dict[str, Any],
    pending: dict[str, dict[str, Any]],
    denied: set[str],
    items: list[dict[str, Any]],
    review: ReviewMarker,
) -> None:
    """A call's result on its item; a call refused at the gate is "denied", not "error"."""
    call = pending.pop(result["toolUseId"], None)
    if call is None:
        return
    if result["toolUseId"] in denied:
        denied.discard(result["toolUseId"])
        call["status"] = "denied"
    else:
        call["status"] = result.get("status", "success")
    content = result.get("content") or [{}]
    call["result"] = content[0].get("json", {"text": content[0].get("text")})
    chip = (call["result"] or {}).get("chip")
    if call["tool"] in _CHIP_TOOLS and isinstance(chip, dict):  # from an error result too
        # Right under its own call, as the live chat shows it (a step's calls come first).
        at = next((i for i in range(len(items) - 1, -1, -1) if items[i] is call), len(items) - 1)
        items.insert(at + 1, {"chip": chip})
    review.saw(call["tool"], call["status"], call["result"])
