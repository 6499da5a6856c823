"""What a running turn tells its front end (TUI, headless CLI): plain, thread-safe data.

The loop calls `on_event(event)` from its own (worker) thread; front ends forward the event
to their own thread (the TUI posts a Textual message) and never block in the callback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

StopReason = Literal[
    "end_turn",  # the model answered without calling a tool
    "ask",  # the model asked the user a question
    "stopped",  # the user pressed Stop
    "step_limit",  # the step limit was reached
    "max_tokens",  # the model ran out of output tokens
    "error",  # Bedrock or the store failed; see TurnEnded.error
    "other",  # an unusual Converse stop reason, in TurnEnded.detail
]


@dataclass(frozen=True)
class Usage:
    """Token counts, as Converse reports them, and an estimate for steps it never reported."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    estimated_output: int = 0
    """Output tokens of steps stopped while streaming (Converse sends a step's usage only at
    its end, yet the tokens streamed before Stop are billed): about four characters each of
    the text received, kept apart from the reported counts."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.estimated_output + other.estimated_output,
        )

    def to_dict(self) -> dict[str, int]:
        counts = {
            "inputTokens": self.input,
            "outputTokens": self.output,
            "cacheReadInputTokens": self.cache_read,
            "cacheWriteInputTokens": self.cache_write,
        }
        if self.estimated_output:  # only after a stopped step: other answers keep their shape
            counts["estimatedOutputTokens"] = self.estimated_output
        return counts


def estimated_tokens(characters: int) -> int:
    """Output tokens that many characters of text took, at about four characters a token
    (the agent's count for a stopped step and the app's while an answer streams)."""
    return -(-characters // 4)


@dataclass(frozen=True)
class StepStarted:
    """A request is about to go to the model; `active_tools` is its toolConfig, in order."""

    step: int
    active_tools: tuple[str, ...]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's answer text."""

    text: str


@dataclass(frozen=True)
class ToolCallWriting:
    """The model is writing a call of `name` (its input `characters` long so far); the call
    starts (ToolCallStarted) once the model's answer is complete."""

    name: str
    characters: int


@dataclass(frozen=True)
class ToolCallStarted:
    """The model called a tool (input already parsed)."""

    tool_use_id: str
    name: str
    input: dict[str, Any]


ToolStatus = Literal["success", "error", "denied"]
"""How a call ended: "denied" is a gated call the person or the permission mode refused (it
never ran); the model gets it as an "error" result, as Converse knows only success and error."""


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call produced its result (`status`: see ToolStatus)."""

    tool_use_id: str
    name: str
    status: ToolStatus
    result: dict[str, Any]


@dataclass(frozen=True)
class Chip:
    """A proposed action the user may click; nothing happens until they do."""

    label: str
    action: dict[str, Any]


@dataclass(frozen=True)
class ChipProposed:
    chip: Chip


@dataclass(frozen=True)
class AskUser:
    """The model asked the user a question; the turn ends and waits for the answer."""

    question: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class UsageUpdated:
    """Usage after a step: this turn's sum and the conversation's sum."""

    turn: Usage
    conversation: Usage


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not an error (a retry, a dropped cache point)."""

    message: str


_RETRY_CAUSES = {
    "ThrottlingException": "Bedrock is throttling",
    "ServiceUnavailableException": "Bedrock is unavailable for the moment",
    "ModelNotReadyException": "The model is not ready yet",
    "ModelStreamErrorException": "The model's answer broke off",
    "InternalServerException": "Bedrock had an internal error",
}


@dataclass(frozen=True)
class Retrying:
    """Bedrock refused a request for now (`code`: throttling, unavailable, …; "" when it did not
    answer at all) and it goes again after a pause, as attempt `attempt` of `max_attempts`.
    Front ends show `message` on their wait line until the answer comes."""

    code: str
    attempt: int
    max_attempts: int

    @property
    def message(self) -> str:
        """`Bedrock is throttling; retrying (attempt 2 of 4)…`."""
        cause = _RETRY_CAUSES.get(self.code) or (
            f"Bedrock answered {self.code[:60]}" if self.code else "Bedrock did not answer"
        )
        return f"{cause}; retrying (attempt {self.attempt} of {self.max_attempts})…"


@dataclass(frozen=True)
class TurnEnded:
    """The turn is over; `text` is the final answer text of the last step."""

    reason: StopReason
    text: str = ""
    error: str | None = None
    fix: str | None = None
    detail: str | None = None
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    error_kind: str | None = None
    """For reason "error": the BedrockCallError kind (e.g. "no_credentials"), if it was one."""


TurnEvent = (
    StepStarted
    | TextDelta
    | ToolCallWriting
    | ToolCallStarted
    | ToolCallFinished
    | ChipProposed
    | AskUser
    | UsageUpdated
    | Notice
    | Retrying
    | TurnEnded
)
