"""What a tool call may touch (ToolContext), without the tools: the loop and the session build
one every turn, and importing the tools (and pydantic, their input models) waits until a tool runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent.permissions import PermissionGate, PermissionRequest

if TYPE_CHECKING:
    from agent.attachments import AttachmentSet
    from agent.specs import SpecBook
    from agent.staging import StagingArea
    from agent.stores.base import Store
    from agent.ui_port import UiPort


class SearchPort(Protocol):
    """Tool search as the loop provides it (the loop owns the budget and the active set)."""

    def search(self, query: str, limit: int, schemas: bool = False) -> dict[str, Any]: ...


def local_now() -> datetime:
    """The current local time, time-zone aware."""
    return datetime.now().astimezone()


@dataclass
class ToolContext:
    """Everything a tool may touch during one call: store, staging, screen, files, specs."""

    store: Store
    staging: StagingArea
    ui: UiPort
    attachments: AttachmentSet
    specs: SpecBook
    conversation_id: str
    origin: str = ""
    search: SearchPort | None = None
    now: Callable[[], datetime] = local_now
    export_dir: Path = field(default_factory=Path.cwd)
    own_changes_only: bool = False
    """True for an MCP client below `full`: it may discard only changes of its own origin,
    and may not replace a saved spec."""
    aws_profile: str | None = None
    aws_region: str | None = None
    """Where tools that call Bedrock themselves (vectorSearch embeds its query) send requests."""
    gate: PermissionGate | None = None
    """The conversation's permission gate, for confirmations a tool asks while it runs;
    None where nobody can be asked (an MCP client)."""

    def __post_init__(self) -> None:
        if not self.origin:
            self.origin = f"chat:{self.conversation_id}"

    def confirm(self, tool: str, tool_input: dict[str, Any], question: str, access: str) -> str:
        """Ask the person `question` (in every mode); "yes", "no", or "nobody" when none can
        be asked (no terminal, or an MCP client)."""
        if self.gate is None:
            return "nobody"
        request = PermissionRequest(
            tool, tool_input, self.gate.mode, self.conversation_id, access, question=question
        )
        verdict = self.gate.confirm(request)
        if verdict.decided_by == "no-terminal":
            return "nobody"
        return "yes" if verdict.allowed else "no"
