"""The loop's seams: any ModelCaller drives a session, and what a tool does to the turn comes
from its row's declared effects (replayed model, real store, real tools)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import catalog
from agent.config import Settings
from agent.events import AskUser, ChipProposed, TurnEvent
from agent.session import ChatSession
from agent.stores.open import open_store
from agent.toolset import ExternalTool, Toolset
from catalog import Effect
from tests.support.replay import ReplayCaller, Step


def _run(
    demo_path: Path, caller: ReplayCaller, toolset: Toolset | None = None
) -> tuple[Any, list[TurnEvent]]:
    events: list[TurnEvent] = []
    session = ChatSession.open(
        Settings(mode="auto"), open_store(str(demo_path)), caller=caller, toolset=toolset
    )
    ended = session.run_turn("go", on_event=events.append)
    return ended, events


def test_a_session_runs_on_any_model_caller(demo_path: Path) -> None:
    caller = ReplayCaller([Step(tool_uses=[("listTables", {})]), Step("There are tables.")])
    ended, _ = _run(demo_path, caller)
    assert ended.reason == "end_turn" and ended.text == "There are tables."
    assert ended.steps == 2 and "listTables" in caller.offered[0]


def _external(name: str, effects: frozenset[Effect]) -> ExternalTool:
    row = catalog.ToolRow(
        name,
        "An external tool that answers with a chip.",
        catalog.Visibility.INLINE,
        catalog.Tier.SILENT,
        catalog.Access.READ,
        catalog.McpLevel.NONE,
        ("chip",),
        effects,
    )
    chip = {"label": "Open orders", "action": {"kind": "openTable", "table": "orders"}}
    return ExternalTool(row, {"type": "object"}, lambda ctx, raw: ("success", {"chip": chip}))


def test_a_chip_is_shown_only_for_a_tool_whose_row_proposes_chips(demo_path: Path) -> None:
    declared = _external("srv__propose", frozenset({Effect.PROPOSES_CHIP}))
    plain = _external("srv__plain", frozenset())
    toolset = Toolset.build(external=[declared, plain])
    caller = ReplayCaller(
        [Step(tool_uses=[("srv__propose", {}), ("srv__plain", {})]), Step("Done.")]
    )
    _, events = _run(demo_path, caller, toolset)
    chips = [event for event in events if isinstance(event, ChipProposed)]
    assert [chip.chip.label for chip in chips] == ["Open orders"]


def test_a_tool_declared_to_end_the_turn_ends_it(demo_path: Path) -> None:
    rows = [
        dataclasses.replace(row, effects=frozenset({Effect.ENDS_TURN}))
        if row.name == "listTables"
        else row
        for row in catalog.ROWS
    ]
    caller = ReplayCaller([Step(tool_uses=[("listTables", {})]), Step("never reached")])
    ended, events = _run(demo_path, caller, Toolset(rows))
    assert ended.reason == "ask" and ended.steps == 1
    assert any(isinstance(event, AskUser) for event in events)
