"""The permission check for gated tools, and the audit log every gated decision goes to.

manual: ask before every gated call (allow once, allow for this conversation, deny).
auto: gated reads and opens run; exports ask. full-auto: every gated call runs.
A confirmation a tool asks for while it runs (replacing a file) asks in every mode.
An "allow for this conversation" is a `Grant`: bound to what was allowed (not to the name the
model calls, which for an external tool can change with the config) and to the message it was
given in, so a rewind to before that message takes it back.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agent import paths
from agent.errors import TabletalkError

Mode = Literal["manual", "auto", "full-auto"]
MODES: tuple[str, ...] = ("manual", "auto", "full-auto")
Decision = Literal["allow_once", "allow_conversation", "deny"]


@dataclass(frozen=True)
class PermissionRequest:
    """A gated call waiting for a decision."""

    tool: str
    input: dict[str, Any]
    mode: str
    conversation_id: str
    access: str
    client: str = ""  # the MCP client (token name) the call came from, if any
    question: str = ""
    """Set for a confirmation asked during a call (e.g. "Replace the file x.csv?"): the
    answer is yes or no for this one call, and is never remembered for the conversation."""
    identity: str = ""
    """What a grant for this call covers (`Toolset.identity`); empty: the tool's name."""
    message: int = 0
    """The index of the conversation message holding the call: a grant given now is recorded
    there, so a rewind to before it drops the grant."""
    server: str = ""
    """An external tool's MCP server (its name in the config); empty for a built-in tool."""
    server_tool: str = ""
    """An external tool's own name on its server (the model calls it by `tool`)."""
    position: int = 0
    """Which of the step's gated calls this is (1-based; 0: not counted, e.g. a question)."""
    gated_calls: int = 0
    """How many gated calls the model asked for in this step."""

    @property
    def grant_identity(self) -> str:
        return self.identity or self.tool


def call_position(request: PermissionRequest) -> str:
    """`call 2 of 5` when the step asked for more than one gated call, else empty: each
    prompt then says which one it is."""
    if request.gated_calls <= 1 or not request.position:
        return ""
    return f"call {request.position} of {request.gated_calls}"


def tool_source(request: PermissionRequest) -> str:
    """Where an external tool comes from, for its permission prompt: `the MCP server "notes",
    where it is named "shout.loud"`; empty for a built-in tool. Both names are untrusted
    (the config's and the server's), so they are quoted as JSON strings (quotes and control
    characters escaped) and front ends must not read the result as markup."""
    if not request.server:
        return ""
    words = f"the MCP server {_quoted(request.server)}"
    if request.server_tool and request.server_tool != request.tool:
        words += f", where it is named {_quoted(request.server_tool)}"
    return words


def _quoted(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


Prompter = Callable[[PermissionRequest], Decision]
"""Asks a person; called on the loop's worker thread and may block until they answer."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: allowed or not, and who decided."""

    allowed: bool
    decided_by: str  # "mode", "user", "conversation-grant", "no-terminal"


def shortest_first(tool_input: dict[str, Any]) -> dict[str, Any]:
    """A gated call's input with its shortest fields first, for the prompt that shows it: a
    long query must not push where an export writes (or whom a tool mails) out of view."""

    def size(item: tuple[str, Any]) -> int:
        return len(json.dumps(item[1], ensure_ascii=False, default=str))

    return dict(sorted(tool_input.items(), key=size))


def input_digest(tool_input: dict[str, Any]) -> str:
    """A short stable digest of a tool input (the audit log never stores the input itself)."""
    canonical = json.dumps(tool_input, sort_keys=True, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


class AuditLog:
    """Append-only JSON lines, one per gated decision; a write failure is a TabletalkError."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.audit_log_path()
        self._lock = threading.Lock()

    def record(self, request: PermissionRequest, verdict: Verdict) -> None:
        entry = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "conversation": request.conversation_id,
            "tool": request.tool,
            "input_digest": input_digest(request.input),
            "decision": "allow" if verdict.allowed else "deny",
            "mode": request.mode,
            "decided_by": verdict.decided_by,
        }
        if request.client:
            entry["client"] = request.client
        if request.server:
            entry["server"] = request.server
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        with self._lock:
            try:
                paths.ensure_dir(self.path.parent)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
                    handle.flush()
            except OSError as exc:
                raise TabletalkError(
                    f"Cannot write the audit log {self.path}: {exc.strerror or exc}",
                    fix=f"Make {self.path.parent} writable; gated tools stay blocked until then.",
                ) from exc


@dataclass(frozen=True)
class Grant:
    """One "allow for this conversation": what it covers (`identity`: a built-in tool's name,
    or an external tool's server, own name and server-config fingerprint), the name the model
    called it by then (`tool`, for people reading the file) and the index of the message whose
    call it was given for (`message`)."""

    identity: str
    tool: str
    message: int

    def to_dict(self) -> dict[str, Any]:
        """The form a conversation file keeps (`Conversation.granted`)."""
        return {"tool": self.tool, "identity": self.identity, "message": self.message}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grant:
        return cls(str(data["identity"]), str(data["tool"]), int(data["message"]))


def grants_of(saved: Iterable[dict[str, Any]]) -> list[Grant]:
    """The grants a conversation file keeps, as the gate holds them."""
    return [Grant.from_dict(entry) for entry in saved]


@dataclass
class PermissionGate:
    """Decides gated calls for one conversation; remembers 'allow for this conversation' as
    `grants`, each matched by what it was given for (`PermissionRequest.grant_identity`)."""

    mode: str
    prompter: Prompter | None
    audit: AuditLog
    grants: list[Grant] = field(default_factory=list)

    def granted(self, request: PermissionRequest) -> bool:
        """Whether the conversation already allows `request`'s tool."""
        identity = request.grant_identity
        return any(grant.identity == identity for grant in self.grants)

    def check(self, request: PermissionRequest) -> Verdict:
        """Decide, record the decision in the audit log, and return it."""
        verdict = self._decide(request)
        self.audit.record(request, verdict)
        return verdict

    def confirm(self, request: PermissionRequest) -> Verdict:
        """Ask the person a yes/no `request.question` in every mode (full-auto too); record it.

        Nobody to ask (no terminal) is a no; "allow for this conversation" counts as once.
        """
        if self.prompter is None:
            verdict = Verdict(False, "no-terminal")
        else:
            verdict = Verdict(self.prompter(request) != "deny", "user")
        self.audit.record(request, verdict)
        return verdict

    def _decide(self, request: PermissionRequest) -> Verdict:
        if self.mode == "full-auto":
            return Verdict(True, "mode")
        if self.mode == "auto" and request.access != "export":
            return Verdict(True, "mode")
        if self.granted(request):
            return Verdict(True, "conversation-grant")
        if self.prompter is None:
            return Verdict(False, "no-terminal")
        decision = self.prompter(request)
        if decision == "allow_conversation":
            self.grants.append(Grant(request.grant_identity, request.tool, request.message))
        return Verdict(decision != "deny", "user")


def denial_message(request: PermissionRequest, verdict: Verdict) -> dict[str, str]:
    """The error result the model sees for a denied call, naming the recovery."""
    if verdict.decided_by == "no-terminal":
        return {
            "error": f"Permission denied: {request.tool} needs the user's approval in "
            f"{request.mode} mode, and there is no terminal to ask.",
            "fix": "Tell the user which call you need; they can rerun with --mode auto "
            "(or full-auto), or use proposeOpenTable / silent tools instead.",
        }
    return {
        "error": f"The user denied {request.tool}.",
        "fix": "Do not retry the same call. Ask the user what they want instead, or "
        "use a silent tool (e.g. a propose* chip) that needs no permission.",
    }
