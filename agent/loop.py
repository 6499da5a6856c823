"""One turn of the agent: steps of Converse requests and tool calls until the turn ends.

The rules (DESIGN.md, "A turn, step by step"): each step sends the active set; every toolUse
gets a toolResult (unavailable tool, invalid input, denied permission, or the tool's own
result), all in one user message; the turn ends on an answer without tool calls, a tool that
ends the turn (`ask`), Stop, or the step limit. Before a tool runs, `PRE_CALL_CHECKS` run in
order (a gated call's input is validated before anyone is asked to allow it); what a tool
does to the turn comes from its row's `effects`, never from its name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.active_set import ActiveSet
from agent.bedrock.errors import BedrockCallError
from agent.bedrock.stream import (
    StepCancelled,
    StepEnd,
    TextChunk,
    ToolInputProgress,
    ToolUseBlock,
    assistant_message,
)
from agent.caller import ModelCaller
from agent.conversations import Conversation
from agent.errors import TabletalkError
from agent.events import (
    AskUser,
    Chip,
    ChipProposed,
    Notice,
    Retrying,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallWriting,
    ToolStatus,
    TurnEnded,
    TurnEvent,
    Usage,
    UsageUpdated,
    estimated_tokens,
)
from agent.permissions import PermissionGate, PermissionRequest, denial_message
from agent.search.searcher import ToolSearcher
from agent.stop import StopSignal, reads_stop_when, stop_signal
from agent.text_plural import counted, noun
from agent.tool_results import capped_result
from agent.tools.context import ToolContext
from agent.toolset import Toolset
from catalog import Effect

STOPPED_TEXT = "(Stopped by the user.)"


@dataclass
class ToolOutcome:
    """What one toolUse produced, ready to go back as a toolResult block."""

    status: ToolStatus
    result: dict[str, Any] | None = None
    text: str | None = None

    def block(self, tool_use_id: str) -> dict[str, Any]:
        """The toolResult the model gets: a denial is an "error" (Converse knows no other)."""
        content = [{"text": self.text}] if self.text is not None else [{"json": self.result}]
        status = "error" if self.status == "denied" else self.status
        return {"toolResult": {"toolUseId": tool_use_id, "content": content, "status": status}}

    def as_dict(self) -> dict[str, Any]:
        return self.result if self.result is not None else {"text": self.text}


@dataclass
class TurnRecord:
    """A machine-readable account of the turn, for `tabletalk ask --json`."""

    steps: list[dict[str, Any]] = field(default_factory=list)

    def start_step(self, number: int, active: tuple[str, ...]) -> None:
        self.steps.append(
            {"step": number, "activeTools": list(active), "text": "", "toolCalls": []}
        )

    def text(self, text: str) -> None:
        self.steps[-1]["text"] += text

    def tool_call(self, name: str, tool_input: Any, outcome: ToolOutcome) -> None:
        self.steps[-1]["toolCalls"].append(
            {
                "name": name,
                "input": tool_input,
                "status": outcome.status,
                "result": outcome.as_dict(),
            }
        )


class TurnRunner:
    """Runs one turn against a model caller; emits TurnEvents; saves after every step."""

    def __init__(
        self,
        *,
        caller: ModelCaller,
        toolset: Toolset,
        active: ActiveSet,
        searcher: ToolSearcher,
        gate: PermissionGate,
        conversation: Conversation,
        context: ToolContext,
        system: list[dict[str, Any]],
        step_limit: int,
        on_event: Callable[[TurnEvent], None],
        save: Callable[[], None],
        cancel: threading.Event | None = None,
        flush: Callable[[], None] = lambda: None,
    ) -> None:
        """`save` stores the conversation after each step; `flush` returns once every save
        is on disk (called before the turn ends)."""
        self.caller = caller
        self.toolset = toolset
        self.active = active
        self.searcher = searcher
        self.gate = gate
        self.conversation = conversation
        self.context = context
        self.system = system
        self.step_limit = step_limit
        self.emit = on_event
        self.save = save
        self.flush = flush
        self._given_cancel = cancel
        self.cancel: StopSignal = cancel if isinstance(cancel, StopSignal) else StopSignal()
        self.usage = Usage()
        self.record = TurnRecord()
        self._dirty = False
        self._compacted = False
        self.gated_positions: dict[str, int] = {}
        """The step's gated calls by toolUseId: which one each is (1-based), for its prompt."""

    def run(self, user_content: list[dict[str, Any]]) -> TurnEnded:
        """Run the turn to its end; Bedrock errors end it with reason "error", never raise."""
        with stop_signal(self._given_cancel) as self.cancel:
            return self._run(user_content)

    def _run(self, user_content: list[dict[str, Any]]) -> TurnEnded:
        self.searcher.start_turn()
        self.conversation.append_user(user_content)
        self.save()
        text = ""
        for step in range(1, self.step_limit + 1):
            if self.cancel.is_set():
                return self._end("stopped", text, step - 1)
            try:
                text, tool_uses, stop_reason = self._model_step(step)
            except StepCancelled as cancelled:
                partial = cancelled.partial_text
                self.conversation.append_assistant(
                    {"content": [{"text": (partial + "\n\n" if partial else "") + STOPPED_TEXT}]}
                )
                streamed = len(partial) + cancelled.tool_characters
                if streamed:  # billed, though the stream never reached its usage
                    self._add_usage(Usage(estimated_output=estimated_tokens(streamed)))
                self._dirty = True
                return self._end("stopped", partial, step)
            except TabletalkError as exc:
                kind = getattr(exc, "kind", None)
                return self._end(
                    "error", text, step, error=exc.message, fix=exc.fix, error_kind=kind
                )
            if not tool_uses:
                reason = {"end_turn": "end_turn", "max_tokens": "max_tokens"}.get(stop_reason)
                if reason is None and stop_reason == "stop_sequence":
                    reason = "end_turn"
                return self._end(reason or "other", text, step, detail=stop_reason)
            asked = self._run_tools(tool_uses)
            if asked is not None:
                self.emit(asked)
                return self._end("ask", text, step, detail=asked.question)
            if self.cancel.is_set():
                return self._end("stopped", text, step)
        return self._end(
            "step_limit",
            text,
            self.step_limit,
            detail=f"the turn reached the step limit of {self.step_limit} model requests",
        )

    def _model_step(self, step: int) -> tuple[str, list[ToolUseBlock], str]:
        names = self.active.names()
        self.emit(StepStarted(step, names))
        self.record.start_step(step, names)
        tools = self.toolset.specs(names)
        try:
            return self._call_model(tools)
        except BedrockCallError as exc:
            if exc.kind != "too_long" or self._compacted:
                raise
            replaced = self.conversation.compact_tool_results()
            if not replaced:
                raise
        self._compacted = True
        self.save()
        self.emit(
            Notice(
                f"The conversation was too long for the model: "
                f"{counted(replaced, 'earlier tool result')} {noun(replaced, 'was', 'were')} "
                "replaced by a short note and the request was sent again."
            )
        )
        return self._call_model(tools)

    def _call_model(self, tools: list[dict[str, Any]]) -> tuple[str, list[ToolUseBlock], str]:
        text_parts: list[str] = []
        tool_uses: list[ToolUseBlock] = []
        writing = 0  # input characters of the tool call being written, as last reported
        end: StepEnd | None = None
        try:
            for event in self.caller.step(
                system=self.system,
                messages=self.conversation.messages,
                tools=tools,
                inline_count=len(self.active.inline),
                cancel=self.cancel,
            ):
                if isinstance(event, TextChunk):
                    text_parts.append(event.text)
                    self.record.text(event.text)
                    self.emit(TextDelta(event.text))
                elif isinstance(event, ToolInputProgress):
                    writing = event.characters
                    self.emit(ToolCallWriting(event.name, event.characters))
                elif isinstance(event, ToolUseBlock):
                    tool_uses.append(event)
                    writing = 0
                elif isinstance(event, StepEnd):
                    end = event
                elif isinstance(event, Retrying):
                    self.emit(event)
        except StepCancelled:
            written = sum(len(use.raw) for use in tool_uses) + writing
            raise StepCancelled("".join(text_parts), written) from None
        if end is None:  # a stream that ended without messageStop: keep what came, validly
            message = assistant_message("".join(text_parts), tool_uses)
            end = StepEnd("tool_use" if tool_uses else "other", Usage(), message)
        self.conversation.append_assistant(end.message)
        self._add_usage(end.usage)
        # A toolUse is saved only together with its results (see _run_tools), so a crash in a
        # tool never leaves a history that Converse would reject.
        self._dirty = True
        return "".join(text_parts), tool_uses, end.stop_reason

    def _add_usage(self, usage: Usage) -> None:
        """Count a step's usage in the turn's and the conversation's (saved with it)."""
        self.usage = self.usage + usage
        self.conversation.usage = self.conversation.usage + usage
        self.emit(UsageUpdated(self.usage, self.conversation.usage))

    def _run_tools(self, tool_uses: list[ToolUseBlock]) -> AskUser | None:
        """Answer every toolUse (in order) in one user message; return an ask, if any."""
        with reads_stop_when(self.cancel.is_set):  # a store read stops at Stop, or never starts
            return self._answer_tools(tool_uses)

    def _answer_tools(self, tool_uses: list[ToolUseBlock]) -> AskUser | None:
        blocks, asked = [], None
        gated = [
            use.tool_use_id
            for use in tool_uses
            if use.input is not None and use.name in self.active and self.toolset.is_gated(use.name)
        ]
        self.gated_positions = {tool_use_id: n for n, tool_use_id in enumerate(gated, start=1)}
        message = len(self.conversation.messages) - 1  # the assistant message with the calls
        for use in tool_uses:
            shown_input = use.input if use.input is not None else {"_raw": use.raw}
            self.emit(ToolCallStarted(use.tool_use_id, use.name, shown_input))
            if self.cancel.is_set():
                outcome = ToolOutcome("error", {"error": "Cancelled: the user pressed Stop."})
            else:
                outcome = self._execute(use)
            self.record.tool_call(use.name, shown_input, outcome)
            if outcome.status == "denied":
                self.conversation.denied.append({"message": message, "id": use.tool_use_id})
            self.emit(
                ToolCallFinished(use.tool_use_id, use.name, outcome.status, outcome.as_dict())
            )
            blocks.append(outcome.block(use.tool_use_id))
            if outcome.result:
                asked = self._apply_effects(use.name, outcome) or asked
        self.conversation.append_user(blocks)
        self.conversation.discovered = [self.toolset.identity(n) for n in self.active.discovered]
        self.conversation.granted = [grant.to_dict() for grant in self.gate.grants]
        self.save()
        self._dirty = False
        return asked

    def _apply_effects(self, name: str, outcome: ToolOutcome) -> AskUser | None:
        """What a call does to the turn, as its row declares: a chip (from any result, e.g.
        "build the missing index"), an ask (from a successful one)."""
        effects = self.toolset.effects(name)
        result = outcome.result or {}
        chip = result.get("chip")
        if Effect.PROPOSES_CHIP in effects and isinstance(chip, dict):
            self.emit(ChipProposed(Chip(str(chip.get("label", "")), dict(chip.get("action", {})))))
        if outcome.status != "success":
            return None
        if Effect.ENDS_TURN in effects:
            return AskUser(
                str(result.get("question", "")),
                tuple(str(c) for c in result.get("choices", []) or ()),
            )
        return None

    def _execute(self, use: ToolUseBlock) -> ToolOutcome:
        for check in PRE_CALL_CHECKS:
            refused = check(self, use)
            if refused is not None:
                return refused
        status, result = self.toolset.run(self.context, use.name, use.input)
        return ToolOutcome(status, capped_result(result))

    def _end(self, reason: str, text: str, steps: int, **extra: Any) -> TurnEnded:
        if self._dirty:
            self.save()
            self._dirty = False
        self.flush()
        ended = TurnEnded(reason, text=text, steps=steps, usage=self.usage, **extra)  # type: ignore[arg-type]
        self.emit(ended)
        return ended


PreCallCheck = Callable[[TurnRunner, ToolUseBlock], ToolOutcome | None]
"""Runs before a tool: None lets the call go on, an outcome answers it instead."""


def check_active(runner: TurnRunner, use: ToolUseBlock) -> ToolOutcome | None:
    """Only tools in the active set may run; the answer names how to find the others."""
    if use.name in runner.active:
        return None
    return ToolOutcome("error", text=runner.active.unavailable_text(use.name))


def check_input_parsed(runner: TurnRunner, use: ToolUseBlock) -> ToolOutcome | None:
    """The input must have been valid JSON."""
    if use.input is not None:
        return None
    return ToolOutcome(
        "error",
        {
            "error": f"The input for {use.name} was not valid JSON ({use.error}).",
            "fix": f"Call {use.name} again with a JSON object that matches its input schema.",
        },
    )


def check_search_budget(runner: TurnRunner, use: ToolUseBlock) -> ToolOutcome | None:
    """A tool finder over this turn's budget answers with the budget message, unrun."""
    if Effect.FINDS_TOOLS in runner.toolset.effects(use.name) and runner.searcher.over_budget():
        return ToolOutcome("error", runner.searcher.search(""))
    return None


def check_gated_input(runner: TurnRunner, use: ToolUseBlock) -> ToolOutcome | None:
    """A gated call's input is validated before the permission prompt: nobody is asked to
    allow a call that its own input would fail."""
    if not runner.toolset.is_gated(use.name):
        return None
    problem = runner.toolset.input_problem(use.name, use.input)
    return None if problem is None else ToolOutcome("error", problem)


def check_permission(runner: TurnRunner, use: ToolUseBlock) -> ToolOutcome | None:
    """A gated tool passes the permission gate (audit-logged; a failing log fails closed)."""
    row = runner.toolset.row(use.name)
    if row is None or not runner.toolset.is_gated(use.name):
        return None
    server, server_tool = runner.toolset.source(use.name) or ("", "")
    request = PermissionRequest(
        use.name,
        use.input or {},
        runner.gate.mode,
        runner.conversation.id,
        row.access.value,
        identity=runner.toolset.identity(use.name),
        message=len(runner.conversation.messages) - 1,  # the assistant message with the call
        server=server,
        server_tool=server_tool,
        position=runner.gated_positions.get(use.tool_use_id, 0),
        gated_calls=len(runner.gated_positions),
    )
    try:
        verdict = runner.gate.check(request)
    except TabletalkError as exc:  # e.g. the audit log cannot be written: fail closed
        return ToolOutcome("error", {"error": exc.message, "fix": exc.fix or ""})
    if not verdict.allowed:
        return ToolOutcome("denied", denial_message(request, verdict))
    return None


PRE_CALL_CHECKS: tuple[PreCallCheck, ...] = (
    check_active,
    check_input_parsed,
    check_search_budget,
    check_gated_input,
    check_permission,
)
