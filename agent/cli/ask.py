"""`tabletalk ask PROMPT`: one headless turn; the answer streams to stdout."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agent.cli.common import (
    add_model_flags,
    add_store_flag,
    db_flag,
    printable,
    printable_line,
    report_error,
    resolve_settings,
    retries_to_stderr,
    store_path,
)
from agent.cli.status_line import StatusLine, cut_to, is_tty
from agent.errors import TabletalkError
from agent.text_plural import counted, noun

if TYPE_CHECKING:  # events, session and permissions load only when `ask` runs
    from agent.events import AskUser, TurnEnded, TurnEvent
    from agent.permissions import Decision, PermissionRequest
    from agent.session import ChatSession

EXIT_CODES = {"error": 1, "step_limit": 3, "max_tokens": 3}
"""0: answered, asked, or stopped; 1: the turn failed; 3: cut short (step or token limit)."""
INTERRUPTED = 130
"""The status after Ctrl+C stopped the turn (128 + SIGINT, as shells report an interrupt):
what was printed is saved all the same."""

SETUP_ERRORS = frozenset(
    {"no_credentials", "sso_expired", "expired_token", "access_denied", "unknown_model"}
)
"""Bedrock failures that only a change of setup fixes (credentials, model access, model id):
exit status 2, like a bad flag or config, rather than 1 (the turn failed; retrying may help)."""

NOT_SENT = frozenset({"no_credentials", "sso_expired"})
"""Bedrock failures raised while signing, before any request leaves the machine."""

REASONS = {
    "end_turn": "the model finished its answer",
    "ask": "the model asked you a question; answer with: tabletalk ask{db} --conversation {id} ...",
    "stopped": "stopped",
    "step_limit": "step limit reached",
    "max_tokens": "the answer hit the model's output token limit",
    "error": "error",
    "other": "the model stopped",
}


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "ask",
        help="run one turn headless and print the answer",
        description="Ask one question; the answer streams to stdout. Gated tools need "
        "--mode auto/full-auto when there is no terminal to ask.",
    )
    parser.add_argument("prompt", type=_question, help="what to ask")
    add_store_flag(parser, suppress=True)
    add_model_flags(parser, suppress=True)
    parser.add_argument(
        "--attach", action="append", default=[], metavar="FILE", help="attach a file (repeatable)"
    )
    parser.add_argument(
        "--conversation",
        metavar="ID",
        default=argparse.SUPPRESS,
        help="continue a saved conversation",
    )
    parser.add_argument("--no-stream", action="store_true", help="use Converse, not ConverseStream")
    parser.add_argument("--step-limit", type=int, metavar="N", help="model requests per turn")
    parser.add_argument("--json", action="store_true", help="print a JSON transcript")
    return parser


def _question(text: str) -> str:
    """The prompt argument: an empty or blank question is a usage error (exit status 2)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            'empty question; ask something, e.g. tabletalk ask "which tables are there?"'
        )
    return text


def exit_status(ended: TurnEnded) -> int:
    """The exit status for how the turn ended (see EXIT_CODES and SETUP_ERRORS)."""
    if ended.reason == "error" and ended.error_kind in SETUP_ERRORS:
        return 2
    return EXIT_CODES.get(ended.reason, 0)


def args_db(args: argparse.Namespace) -> bool:
    """True when the user gave --db on the command line."""
    return getattr(args, "db", None) is not None


def shown_input(tool_input: dict[str, Any]) -> str:
    """Every field of a gated call's input on its own line, shortest first and none cut: what
    the person allows must all be in view (a long query must not hide where an export writes).
    """
    from agent.permissions import shortest_first

    fields = [
        (json.dumps(key, ensure_ascii=False), json.dumps(value, ensure_ascii=False, default=str))
        for key, value in shortest_first(tool_input).items()
    ]
    return "\n".join(f"  {key}: {value}" for key, value in fields) or "  (no input)"


class _PromptCancelled(Exception):
    """Ctrl+C while a prompt waits for its answer: the call is denied and the turn stops."""


_prompt_up = threading.Event()
"""Set while a prompt reads its answer, so Ctrl+C ends the wait instead of being retried."""


def _read_answer() -> str:
    """One line from the terminal, lower-cased; "n" when Ctrl+C stopped the turn meanwhile
    (readline is retried after a signal, so a later "y" would still have allowed the call)."""
    _prompt_up.set()
    try:
        line = sys.stdin.readline()
        _prompt_up.clear()
        return line.strip().lower()
    except _PromptCancelled:
        print(file=sys.stderr)
        return "n"
    finally:
        _prompt_up.clear()


def terminal_prompter(request: PermissionRequest) -> Decision:
    """Ask on the terminal (stderr/stdin) whether a gated call may run, or a tool's question."""
    if request.question:
        print(printable(f"\n{request.tool}: {request.question}"), file=sys.stderr)
        while True:
            print("  [y] yes  [n] no: ", end="", file=sys.stderr)
            sys.stderr.flush()
            answer = _read_answer()
            if answer in ("y", "yes"):
                return "allow_once"
            if answer in ("n", "no", ""):
                return "deny"
    from agent.permissions import call_position, tool_source

    source = tool_source(request)
    origin = f" (from {printable_line(source)})" if source else ""
    position = call_position(request)
    which = f" ({position})" if position else ""
    print(
        f"\nAllow {printable_line(request.tool)}{origin} with this input?{which}\n"
        f"{shown_input(request.input)}",
        file=sys.stderr,
    )
    while True:
        print("  [y] once  [a] for this chat  [n] deny: ", end="", file=sys.stderr)
        sys.stderr.flush()
        answer = _read_answer()
        if answer in ("y", "yes"):
            return "allow_once"
        if answer in ("a", "always"):
            return "allow_conversation"
        if answer in ("n", "no", ""):
            return "deny"


def _short(value: Any, width: int = 80) -> str:
    """A one-line JSON preview of a tool input."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


class Waiting:
    """What `ask`'s status line says while a step's answer has not started or the model
    writes tool calls, as the app's wait line: `waiting for the model… 4 s`, `the model is
    writing getItem (call 15)… 3 s`, `the model is writing bulkEdit, 96 KB… 41 s`, `Bedrock is
    throttling; retrying (attempt 2 of 4)… 6 s`."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.tool: str | None = None
        self.calls = 0
        self.characters = 0
        self.retry: str | None = None

    def writing(self, name: str, characters: int) -> None:
        """The model is writing a call of `name`, its input `characters` long (0: a new call)."""
        if characters == 0:
            self.calls += 1
        self.tool, self.characters = name, characters
        self.retry = None

    def retrying(self, message: str) -> None:
        """A request was refused for now and goes again (`Retrying.message`)."""
        self.retry = message

    def text(self) -> str:
        """The line as it reads now; the tool name (from the model) made safe and cut."""
        if self.retry is not None:
            text = printable_line(self.retry)
        elif self.tool is None:
            text = "waiting for the model…"
        else:
            text = f"the model is writing {cut_to(printable_line(self.tool), 40)}"
            text += f" (call {self.calls})" if self.calls > 1 else ""
            if self.characters >= 1024:
                text += f", {self.characters // 1024:,} KB"
            text += "…"
        seconds = int(time.monotonic() - self.started)
        return text + (f" {seconds} s" if seconds else "")


class _Printer:
    """Streams a turn to the terminal: answer on stdout, tool lines and notices on stderr.

    While the model thinks or writes tool calls, or Bedrock's throttling holds the request
    (each can take a minute and print nothing), a StatusLine on stderr says so, only when stderr is a terminal; it is cleared before
    anything else is printed, so it never mixes into the answer. With `answer=False` (--json)
    only that line is shown: stdout gets the transcript alone.
    """

    def __init__(self, *, answer: bool = True) -> None:
        self.answer = answer
        self.chips: list[dict[str, Any]] = []
        self.asked: AskUser | None = None
        self.wrote_text = False
        self.inputs: dict[str, Any] = {}
        self.denied: list[str] = []  # tools refused at the permission gate, in call order
        self.status = StatusLine(sys.stderr)
        self.waiting: Waiting | None = None

    def __call__(self, event: TurnEvent) -> None:
        from agent.events import Notice, Retrying, StepStarted, ToolCallWriting, UsageUpdated

        if isinstance(event, StepStarted):
            self._wait(Waiting())
        elif isinstance(event, ToolCallWriting | Retrying):
            waiting = self.waiting or Waiting()  # a new wait after the step's text
            if isinstance(event, Retrying):
                waiting.retrying(event.message)
            else:
                waiting.writing(event.name, event.characters)
            self._wait(waiting)
        elif not isinstance(event, UsageUpdated):
            was_waiting = self.waiting
            self.stop_waiting()
            if self.answer:
                self._show(event)
            if isinstance(event, Notice) and was_waiting is not None:
                self._wait(was_waiting)  # a retry's note: the wait goes on below it

    def _wait(self, waiting: Waiting) -> None:
        if not self.status.tty:
            return
        if self.wrote_text and is_tty(sys.stdout):  # the answer's line is on the same screen
            self._newline()
        self.waiting = waiting
        self.status.follow(waiting.text)

    def stop_waiting(self) -> None:
        """Clear the status line (before output, a prompt, or the summary)."""
        self.waiting = None
        self.status.clear()

    def close(self) -> None:
        """The turn is over: the status line goes, with its clock."""
        self.waiting = None
        self.status.close()

    def _show(self, event: TurnEvent) -> None:
        from agent.events import (
            AskUser,
            ChipProposed,
            Notice,
            TextDelta,
            ToolCallFinished,
            ToolCallStarted,
        )

        if isinstance(event, TextDelta):
            sys.stdout.write(printable(event.text))
            sys.stdout.flush()
            self.wrote_text = True
        elif isinstance(event, ToolCallFinished):
            mark = {"success": "ok", "denied": "denied"}.get(event.status, "error")
            if event.status == "denied":
                self.denied.append(event.name)
            detail = ""
            if event.status != "success":
                detail = ": " + str(event.result.get("error") or event.result.get("text", ""))[:200]
            self._newline()
            shown = _short(self.inputs.pop(event.tool_use_id, {}))
            line = f"  · {event.name} {shown} [{mark}]{detail}"
            print(printable(line), file=sys.stderr)
        elif isinstance(event, ToolCallStarted):
            self.inputs[event.tool_use_id] = event.input
        elif isinstance(event, ChipProposed):
            self.chips.append({"label": event.chip.label, "action": event.chip.action})
        elif isinstance(event, AskUser):
            self.asked = event
        elif isinstance(event, Notice):
            self._newline()
            print(printable(f"  note: {event.message}"), file=sys.stderr)

    def _newline(self) -> None:
        if self.wrote_text:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.wrote_text = False


def run(args: argparse.Namespace) -> int:
    from agent.session import ChatSession, build_toolset, conversation_db, start_mcp_sources
    from agent.stores.open import open_store

    settings = resolve_settings(args)
    db = conversation_db(
        getattr(args, "conversation", None), store_path(args, settings), explicit=args_db(args)
    )
    store = open_store(db, settings)
    retries_to_stderr(store)
    interactive = sys.stdin.isatty() and sys.stderr.isatty() and not args.json
    sources = start_mcp_sources(settings, lambda text: print(f"warning: {text}", file=sys.stderr))
    try:
        session = ChatSession.open(
            settings,
            store,
            conversation_id=getattr(args, "conversation", None),
            prompter=terminal_prompter if interactive else None,
            toolset=build_toolset(settings, sources),
            use_saved_model=getattr(args, "model", None) is None,  # --model wins for this turn
        )
        if session.model_notice:
            print(printable(f"  note: {session.model_notice}"), file=sys.stderr)
        if session.granted_tools and session.mode != "full-auto":
            tools = session.granted_tools
            runs = noun(len(tools), "runs", "run")
            print(
                printable(
                    f"  note: {', '.join(tools)} {runs} without asking (allowed earlier in "
                    "this chat)."
                ),
                file=sys.stderr,
            )
        return _run_turn(args, session)
    finally:
        if sources is not None:
            sources.close()


def _run_turn(args: argparse.Namespace, session: ChatSession) -> int:
    from agent.stop import StopSignal

    before = {change.id: change.values for change in session.staging.list()}
    printer = _Printer(answer=not args.json)
    cancel = StopSignal()
    try:
        with _ctrl_c_stops(cancel) as interrupted:
            ended = session.run_turn(
                args.prompt, attachments=args.attach, on_event=printer, cancel=cancel
            )
    finally:
        printer.close()
    touched = [c for c in session.staging.list() if before.get(c.id) != c.values]
    if args.json:
        print(json.dumps(_transcript(session, ended, touched), indent=2, default=str))
    else:
        _summary(session, ended, printer, touched)
    if interrupted.is_set():
        return INTERRUPTED  # a script sees the interrupt, as after any Ctrl+C
    return exit_status(ended)


@contextlib.contextmanager
def _ctrl_c_stops(cancel: threading.Event) -> Iterator[threading.Event]:
    """The first Ctrl+C stops the turn as Esc does in the app (what was printed is saved, the
    summary names the conversation) and is reported by the event yielded; a second one
    interrupts at once."""
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted  # signal handlers can only be set from the main thread
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):  # ignored (nohup, `&`), or a handler set from C
        yield interrupted
        return

    def stop(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, previous)
        interrupted.set()
        cancel.set()
        if _prompt_up.is_set():
            raise _PromptCancelled

    signal.signal(signal.SIGINT, stop)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def _transcript(session: ChatSession, ended: TurnEnded, staged: list[Any]) -> dict[str, Any]:
    record = session.last_record
    return {
        # null when nothing was saved (a turn that got no answer): no id to continue.
        "conversation": session.conversation_id if session.conversation.messages else None,
        "model": session.model_id,
        "store": session.store.identity,
        "mode": session.mode,
        "steps": record.steps if record else [],
        "finalText": ended.text,
        "stopReason": ended.reason,
        "stopDetail": ended.detail,
        "error": ended.error,
        "errorKind": ended.error_kind,
        "fix": ended.fix,
        "usage": ended.usage.to_dict(),
        "conversationUsage": session.usage.to_dict(),
        **(
            {"readUnits": round(units, 2)}
            if (units := session.store.read_units_total) is not None
            else {}
        ),
        "staged": [change.to_dict() for change in staged],
    }


def _summary(session: ChatSession, ended: TurnEnded, printer: _Printer, staged: list[Any]) -> None:
    printer._newline()
    db = db_flag(session.store)
    if printer.asked:
        print(f"Question: {printable(printer.asked.question)}")
        if printer.asked.choices:
            print("Choices: " + " | ".join(printable_line(c) for c in printer.asked.choices))
    for chip in printer.chips:
        print(
            f"[chip] {printable_line(chip['label'])}  (click it in the app: tabletalk{db} "
            f"--conversation {session.conversation_id})"
        )
    if staged:
        print(
            f"Staged {counted(len(staged), 'change')} for review: `tabletalk staged list{db}`, then "
            f"`tabletalk staged commit{db} --all`."
        )
    reason = REASONS.get(ended.reason, ended.reason).format(id=session.conversation_id, db=db)
    if ended.reason == "error":
        report_error(TabletalkError(ended.error or "the turn failed", fix=ended.fix))
    elif ended.reason in ("step_limit", "other") and ended.detail:
        reason = f"{reason} ({printable(ended.detail)})"
    print(f"-- {reason}; " + _what_happened(session, ended), file=sys.stderr)
    if printer.denied and session.gate.prompter is None:
        _no_terminal_hint(session, printer.denied)


def _no_terminal_hint(session: ChatSession, denied: list[str]) -> None:
    """What to do when gated calls were refused because nothing could ask: the flag that
    lets them run, or a terminal to be asked in."""
    tools = ", ".join(dict.fromkeys(printable_line(name) for name in denied))
    # auto mode runs every gated tool but exports; those need full-auto
    flag = "--mode full-auto" if session.mode == "auto" else "--mode auto (exports: full-auto)"
    print(
        f"-- {tools} needed your approval in {session.mode} mode and there was no terminal "
        f"to ask: rerun with {flag} to let it run, or run ask in a terminal to be asked.",
        file=sys.stderr,
    )


def _what_happened(session: ChatSession, ended: TurnEnded) -> str:
    """The steps, tokens and conversation id of the turn, or that no request left the machine
    (e.g. no credentials); the id only when the conversation was saved and can be continued."""
    if ended.reason == "error" and ended.error_kind in NOT_SENT and ended.steps <= 1:
        sent = "no request was sent"
    else:
        usage = ended.usage
        sent = (
            f"{counted(ended.steps, 'step')}; tokens in {usage.input:,} / out {usage.output:,}"
            + (f" + ~{usage.estimated_output:,} stopped" if usage.estimated_output else "")
            + f" / cache read {usage.cache_read:,}"
        )
    if not session.conversation.messages:
        return f"{sent}; nothing was saved"
    return f"{sent}; conversation {session.conversation_id}"
