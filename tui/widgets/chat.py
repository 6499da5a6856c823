"""The chat: the message log, pending attachments, the composer, Send and Stop.

A turn runs in a thread worker; its events arrive through a TurnFeed (coalesced, in order),
tagged with the turn number so the events of a stopped turn are dropped once Stop was pressed.
Streamed text is rendered in batches of RENDER_BATCH characters, one batch per RENDER_INTERVAL,
so a long answer never holds the event loop: keys (Esc, F1) are handled between batches.
"""

from __future__ import annotations

import threading
from collections import deque
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Button, TextArea

from agent.errors import TabletalkError
from agent.stop import StopSignal
from tui.input_history import InputHistory
from tui.key_hints import app_key
from tui.messages import TurnEventsReady
from tui.notices import brief
from tui.turn_feed import TurnFeed
from tui.widgets.action_button import ActionButton
from tui.widgets.answer_segments import SEGMENT, segment_break
from tui.widgets.attachment_bar import AttachmentBar
from tui.widgets.chat_lines import ChatHint, NoteLine
from tui.widgets.chat_log import ChatLog
from tui.widgets.chat_notes import end_notes, failure, intro
from tui.widgets.composer import Composer
from tui.widgets.tool_calls import ToolCalls
from tui.workers import run_in_thread

if TYPE_CHECKING:  # loaded with the first turn (or attachment), after the first screen
    from agent.events import TurnEnded
    from agent.transcript import ReviewMarker
    from tui.widgets.chat_items import AssistantMessage, WaitLine

RENDER_BATCH = 2_000
"""Characters of streamed text appended to the Markdown per render step (bounds each step)."""

RENDER_INTERVAL = 1 / 20
"""Seconds between render steps while streamed text waits; keys are handled in between."""


def _items() -> ModuleType:
    """The widgets a conversation adds (messages, tool lines, chips, questions), imported with
    the first one shown: the first screen has none."""
    from tui.widgets import chat_items

    return chat_items


class ChatHost(Protocol):
    """What the chat panel asks of the app it lives in (TabletalkApp)."""

    def cancel_permission_prompt(self) -> None: ...

    def set_busy(self, busy: bool) -> None: ...

    def show_usage(self, usage: Any) -> None: ...

    def show_streaming(self, characters: int) -> None: ...

    def show_stopped(self, characters: int) -> None: ...

    def refresh_staging(self) -> None: ...


class ChatPanel(Vertical):
    """Owns the composer and the log, and runs turns on the app's ChatSession."""

    DEFAULT_CSS = """
    ChatPanel { height: 1fr; }
    ChatPanel > #chat-actions { height: 1; }
    ChatPanel > #chat-actions > #chat-hint { width: 1fr; height: 1; color: $text-muted; padding: 0 0 0 1; }
    ChatPanel > #chat-actions ActionButton { margin: 0 0 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.turn = 0
        self.busy = False
        self.cancel: threading.Event | None = None
        self._ended: set[int] = set()
        self.feed = TurnFeed(lambda: self.post_message(TurnEventsReady()))
        self.history = InputHistory()
        self._backlog: deque[tuple[int, Any]] = deque()
        self._render_timer: Timer | None = None
        self._answer: AssistantMessage | None = None
        self._wait_line: WaitLine | None = None
        self._streamed = 0
        """Characters of the step in flight shown so far (the header estimates its tokens)."""
        self._next_start: tuple[str, bool] = ("", False)
        """What the answer's next widget starts with, and whether it continues the last."""
        self._tool_calls = ToolCalls()
        self._queued: tuple[int, str, list[Path], threading.Event] | None = None
        self._sent: tuple[int, str, list[Path]] | None = None
        """The running turn's message, given back to the composer if its worker fails."""

    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat-log")
        yield AttachmentBar(id="attachment-bar")
        yield Composer(
            id="composer", names=self._completion_names, history=self._recall, send=self.submit
        )
        with Horizontal(id="chat-actions"):
            yield ChatHint(id="chat-hint")
            yield ActionButton("Send", "primary", id="send")
            yield ActionButton("Stop", "error", id="stop", disabled=True)

    @cached_property
    def _review(self) -> ReviewMarker:
        """The transcript's review-chip rule, followed live (built at the first turn)."""
        from agent.transcript import ReviewMarker

        return ReviewMarker()

    @property
    def host(self) -> ChatHost:
        return cast(ChatHost, self.app)

    @property
    def log_view(self) -> ChatLog:
        return self.query_one(ChatLog)

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)

    @property
    def attachments(self) -> AttachmentBar:
        return self.query_one(AttachmentBar)

    def _completion_names(self) -> list[str]:
        return list(getattr(self.app, "completion_names", lambda: [])())

    def _conversation_id(self) -> str | None:
        conversation = getattr(getattr(self.app, "session", None), "conversation", None)
        return getattr(conversation, "id", None)

    def _recall(self) -> list[str]:
        return self.history.recall(self._conversation_id())

    # ----- sending ------------------------------------------------------------------------

    @on(ActionButton.Pressed, "#send")
    def _on_send_pressed(self, event: ActionButton.Pressed) -> None:
        event.stop()
        self.composer.action_submit()

    @on(ActionButton.Pressed, "#stop")
    def _on_stop_pressed(self, event: ActionButton.Pressed) -> None:
        event.stop()
        self.stop()

    @on(events.DescendantFocus)
    def _on_focus_in(self, event: events.DescendantFocus) -> None:
        self.query_one(ChatHint).show_away(event.widget is not self.composer)

    @on(events.DescendantBlur)
    def _on_focus_out(self, event: events.DescendantBlur) -> None:
        if event.widget is self.composer:  # to a table, the staging panel, … (or in here)
            self.query_one(ChatHint).show_away(True)

    @on(Composer.ScrollChat)
    def _on_scroll_chat(self, event: Composer.ScrollChat) -> None:
        event.stop()
        self.log_view.scroll_by_key(event.where)

    @on(Composer.PathPasted)
    def _on_path_pasted(self, event: Composer.PathPasted) -> None:
        self.attach(event.path)

    @on(Button.Pressed, "AnswerChip")
    def _on_answer(self, event: Button.Pressed) -> None:
        event.stop()
        assert isinstance(event.button, _items().AnswerChip)
        self.submit(event.button.choice)

    def attach(self, path: str | Path) -> bool:
        """Validate a file now (size, type) and add it to the next message; say why not."""
        error = self.add_attachment(path)
        if error is not None:
            self.app.notify(
                error.render_sentences(), title=error.title, severity="error", markup=False
            )
            return False
        return True

    def add_attachment(self, path: str | Path) -> TabletalkError | None:
        """Validate a file now (size, type) and add it to the next message; the error saying
        why not, or None once added (the attach dialog shows the error itself)."""
        from agent.attachments import AttachmentSet

        try:
            attachment = AttachmentSet().add(path)
        except TabletalkError as exc:
            return exc
        self.attachments.add(attachment.path)
        return None

    def submit(self, text: str) -> None:
        """Send `text` (with pending attachments), or run a `/command`."""
        if text.startswith("/attach"):
            path = text[len("/attach") :].strip()
            if not path:
                self.app.notify("Usage: /attach PATH", severity="warning", markup=False)
            elif self.attach(path):
                self.composer.clear()
            return
        if self.busy:
            warning = (
                f"Wait for the answer, or press {app_key(self.app, 'stop', 'Esc')} to stop it."
            )
            self.app.notify(warning, severity="warning", markup=False)
            return
        session = getattr(self.app, "session", None)
        self.history.add(self._conversation_id(), text)
        files = self.attachments.clear()
        self.composer.clear()
        for answered in self.query("AnswerChip"):
            answered.disabled = True
        self.log_view.mount(_items().UserMessage(text, [p.name for p in files]))
        self.log_view.anchor()
        self.turn += 1
        self._sent = (self.turn, text, files)
        self.cancel = StopSignal()  # Stop interrupts the turn's read or stream at once
        self._set_busy(True)
        if session is None:  # still starting: the message goes out when the session is ready
            self._queued = (self.turn, text, files, self.cancel)
            return
        self._run_turn(session, self.turn, text, files, self.cancel)

    def session_ready(self, session: Any) -> None:
        """Send a message typed while the chat was starting (unless it was stopped)."""
        queued, self._queued = self._queued, None
        if queued is None or queued[3].is_set() or queued[0] != self.turn:
            return
        user_message = _items().UserMessage
        shown = self.log_view.query(user_message)
        if not shown or shown.last().text != queued[1]:
            self.log_view.mount(user_message(queued[1], [p.name for p in queued[2]]))
        self._run_turn(session, *queued)

    @property
    def has_queued(self) -> bool:
        """A message typed while the chat was starting waits to be sent."""
        return self._queued is not None

    def _run_turn(
        self, session: Any, turn: int, text: str, files: list[Path], cancel: threading.Event
    ) -> None:
        """Run the turn on an app thread worker; its events come back through the feed."""

        def work() -> None:
            session.run_turn(
                text,
                attachments=files,
                on_event=lambda event: self.feed.put(turn, event),
                cancel=cancel,
            )

        run_in_thread(self, work, group="turn")

    def stop(self) -> bool:
        """Cancel the running turn at once: nothing more of it is rendered (what is shown
        stays), the composer is free again, and its late events are ignored. False when idle."""
        if not self.busy or self.cancel is None:
            return False
        self.cancel.set()
        self.host.cancel_permission_prompt()
        shown = self._streamed
        self._end_turn(self.turn)
        self.host.show_stopped(shown)
        self.call_later(self._show_end, "stopped", None)
        return True

    def turn_failed(self, error: BaseException | None) -> None:
        """The worker raised: end the turn (the app shows the error) so the chat goes on."""
        from agent.events import TurnEnded

        message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        fix = getattr(error, "fix", None)
        kept = getattr(getattr(self.app, "session", None), "last_turn_kept", False)
        said = "The turn failed" if kept else "The message was not sent"
        failed = TurnEnded("error", error=f"{said}: {message}", fix=fix)
        self.feed.put(self.turn, failed)  # after the events the turn already sent
        if not kept:  # a message the conversation kept would be sent twice
            self._give_back(self.turn)

    def _give_back(self, turn: int) -> None:
        """The failed turn's text (and its files that still exist) back in an empty composer,
        so Enter sends it again once the cause is fixed."""
        sent, self._sent = self._sent, None
        if sent is None or sent[0] != turn or self.composer.text:
            return
        self.fill(sent[1], sent[2])

    def fill(self, text: str, files: list[Path]) -> None:
        """Put a message in the composer, cursor at its end, with its files that are still
        there (checked again: one kept across a restart may have changed)."""
        self.composer.text = text
        self.composer.move_cursor(self.composer.document.end)
        for path in files:
            if path.is_file():
                self.attach(path)

    @on(ChatLog.Scrolled)
    def _scrolled(self, event: ChatLog.Scrolled) -> None:
        event.stop()
        self.query_one(ChatHint).show_below(event.up)

    @property
    def rendering(self) -> bool:
        """Events of the turn are still waiting to be shown."""
        return bool(self._backlog) or self._render_timer is not None or self.feed.pending

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.query_one("#stop", ActionButton).disabled = not busy
        self.query_one("#send", ActionButton).disabled = busy
        self.query_one(ChatHint).show_busy(busy)
        self.host.set_busy(busy)

    # ----- events from the worker -----------------------------------------------------------

    async def on_turn_events_ready(self, message: TurnEventsReady) -> None:
        message.stop()
        self._backlog.extend(self.feed.take())
        if self._render_timer is None:
            await self._render_step()

    async def _render_step(self) -> None:
        """Show queued events in order, at most RENDER_BATCH characters of text; if more
        waits, the next step runs after RENDER_INTERVAL (so keys get handled in between)."""
        from agent.events import TextDelta

        self._render_timer = None
        budget = RENDER_BATCH
        while self._backlog and budget > 0:
            turn, event = self._backlog[0]
            if turn != self.turn or turn in self._ended:
                self._backlog.popleft()
                self._late_result(event)
                continue
            if isinstance(event, TextDelta):
                piece, rest = event.text[:budget], event.text[budget:]
                if rest:
                    self._backlog[0] = (turn, TextDelta(rest))
                else:
                    self._backlog.popleft()
                budget -= len(piece)
                self._streamed += len(piece)
                self.host.show_streaming(self._streamed)
                await self._append_text(piece)
            else:
                self._backlog.popleft()
                await self._show_event(turn, event)
        if self._backlog and self._render_timer is None:
            self._render_timer = self.set_timer(RENDER_INTERVAL, self._render_step)

    async def _waiting(self, waiting: bool) -> None:
        """Show the line that says the model is being waited for, or take it away."""
        line, self._wait_line = self._wait_line, None
        if line is not None:
            await line.remove()
        if waiting:
            self._wait_line = _items().WaitLine()
            await self.log_view.mount(self._wait_line)

    async def _append_text(self, text: str) -> None:
        if self._wait_line is not None:
            await self._waiting(False)
        answer = self._answer
        if answer is None:
            answer = self._answer = _items().AssistantMessage(*self._next_start)
            self._next_start = ("", False)
            await self.log_view.mount(answer)
            if self._answer is not answer:  # Stop was pressed meanwhile: show nothing more
                return
        if len(answer.source) + len(text) > SEGMENT:
            found = segment_break(answer.source, text)
            if found is not None:  # the rest goes to a new widget (under the table's head)
                answer.append(text[: found.cut])
                self._answer = None
                self._next_start = (found.head, found.continued)
                if text[found.cut :]:
                    await self._append_text(text[found.cut :])
                return
        answer.append(text)

    def _close_answer(self) -> None:
        """Text after this starts a new answer (after a tool line, a question, the end)."""
        self._answer = None
        self._next_start = ("", False)

    async def _show_event(self, turn: int, event: Any) -> None:
        from agent.events import (
            AskUser,
            ChipProposed,
            Notice,
            Retrying,
            StepStarted,
            ToolCallFinished,
            ToolCallStarted,
            ToolCallWriting,
            TurnEnded,
            UsageUpdated,
        )

        # A call being written or a refused request sent again: the wait line says so (it
        # comes back after text).
        if isinstance(event, ToolCallWriting | Retrying):
            if self._wait_line is None:
                self._close_answer()
                await self._waiting(True)
            if self._wait_line is not None and isinstance(event, Retrying):
                self._wait_line.retrying(event.message)
            elif self._wait_line is not None and isinstance(event, ToolCallWriting):
                self._wait_line.writing(event.name, event.characters)
            return
        if isinstance(event, StepStarted) or self._wait_line is not None:
            if not isinstance(event, UsageUpdated | Notice):
                await self._waiting(isinstance(event, StepStarted))
        log = self.log_view
        if isinstance(event, ToolCallStarted):
            self._close_answer()
            if event.name == "ask":  # the question itself shows as an AskBlock
                return
            await self._tool_calls.start(log, event)
        elif isinstance(event, ToolCallFinished):
            self._finish_tool(event)
        elif isinstance(event, ChipProposed):
            pieces = _items()
            await log.mount(pieces.ChipRow(pieces.ChipButton(event.chip.label, event.chip.action)))
        elif isinstance(event, AskUser):
            self._close_answer()
            await log.mount(_items().AskBlock(event.question, event.choices))
        elif isinstance(event, UsageUpdated):
            self._streamed = 0
            self.host.show_usage(event.conversation)
        elif isinstance(event, Notice):
            await log.mount(NoteLine(event.message))
        elif isinstance(event, TurnEnded):
            if self._end_turn(turn):
                await self._show_end(event.reason, event)

    def _finish_tool(self, event: Any) -> None:
        """A tool's result on its line (ToolCallFinished), counted for the review chip."""
        self._tool_calls.finish(event)
        self._review.saw(event.name, event.status, event.result)

    def _late_result(self, event: Any) -> None:
        """A result of a tool whose turn had ended while it ran: on its line, and the staging
        view refreshed (it may have staged changes)."""
        from agent.events import ToolCallFinished

        if isinstance(event, ToolCallFinished) and self._tool_calls.late_result(event):
            self.host.refresh_staging()

    def _end_turn(self, turn: int) -> bool:
        """Mark the turn over and drop whatever of it still waits (but the results of tools
        that had ended: their lines show them); False if it already was."""
        from agent.events import ToolCallFinished

        if turn in self._ended:
            return False
        self._ended.add(turn)
        waiting = [*self._backlog, *self.feed.take()]
        self._backlog.clear()
        for event_turn, event in waiting:
            if event_turn == turn and isinstance(event, ToolCallFinished):
                self._finish_tool(event)
        if self._render_timer is not None:
            self._render_timer.stop()
            self._render_timer = None
        self._close_answer()
        if self._wait_line is not None:
            self._wait_line.remove()
            self._wait_line = None
        self._tool_calls.end_turn()  # Stop, or a tool that crashed
        self._streamed = 0
        self.host.show_streaming(0)
        self._set_busy(False)
        return True

    async def _show_end(self, reason: str, event: TurnEnded | None) -> None:
        """The notes under a finished turn (why it stopped, the review chip), then tidy up;
        nothing once the app is closing (quit stops the turn, then tears the log down)."""
        if not self.log_view.is_attached:
            return
        review = self._review.end_turn()
        if review is not None:
            pieces = _items()
            chip = pieces.ChipButton(review["label"], review["action"])
            await self.log_view.mount(pieces.ChipRow(chip))
        for note in end_notes(reason, event):
            await self.log_view.mount(note)
        if reason == "error":  # the notes say it all; the toast points at them
            text, fix = failure(event)
            short = brief(text)
            if fix:
                short += "\nWhat to do is in the chat."
            elif short != text.strip():
                short += "\nThe rest is in the chat."
            self.app.notify(short, title="The answer failed", severity="error", markup=False)
        self.host.refresh_staging()
        if self.app.focused is None or not self.app.focused.is_attached:
            self.composer.focus()

    # ----- whole-log operations -------------------------------------------------------------

    async def show_items(self, items: list[dict[str, Any]]) -> None:
        """Replace the log with a saved conversation's items (after resume or rewind); an
        empty conversation shows the intro."""
        self._tool_calls.clear()
        await self.log_view.show_items(items, NoteLine(self.intro(), classes="chat-intro"))

    def intro(self) -> str:
        """The first line of an empty chat: what to ask, what it runs on, that edits wait."""
        return intro(self.app)

    def refresh_intro(self) -> None:
        """Say the intro again (the model it names changed); nothing once the chat has begun."""
        for note in self.log_view.query(".chat-intro"):
            if isinstance(note, NoteLine):
                note.update(Text(self.intro()))

    def focus_latest(self, kind: str) -> None:
        """Focus the newest chip or answer choice, or tool row (see ChatLog.focus_latest)."""
        self.log_view.focus_latest(kind)

    @on(TextArea.Changed, "#composer")
    def _on_composer_changed(self, event: TextArea.Changed) -> None:
        self.query_one(ChatHint).show_completions(self.composer.completions())
