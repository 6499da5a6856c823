"""The chat: the message log, pending attachments, the composer, Send and Stop.

A turn runs in a thread worker; its events arrive as TurnEventPosted messages, tagged with the
turn number so the events of a stopped turn are dropped once Stop was pressed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Markdown, TextArea
from textual.widgets.markdown import MarkdownStream

from agent.attachments import AttachmentSet
from agent.errors import TabletalkError
from agent.events import (
    AskUser,
    ChipProposed,
    Notice,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnded,
    UsageUpdated,
)
from tui.messages import TurnEventPosted
from tui.widgets.attachment_bar import AttachmentBar
from tui.widgets.chat_items import (
    AnswerChip,
    AskBlock,
    AssistantMessage,
    ChatHint,
    ChipButton,
    ChipRow,
    NoteLine,
    SavedAnswer,
    ToolLine,
    UserMessage,
)
from tui.widgets.composer import Composer
from tui.widgets.status_bar import short_model
from tui.workers import run_in_thread

END_NOTES = {
    "stopped": ("Stopped. The conversation is intact; send a new message to continue.", "warning"),
    "step_limit": (
        "The turn reached the step limit; ask again or raise step_limit in the config.",
        "warning",
    ),
    "max_tokens": (
        "The answer was cut off at the model's output limit; ask for a shorter answer.",
        "warning",
    ),
}


STAGING_TOOLS = frozenset({"stageItem", "bulkEdit"})
"""Tools whose success puts a "Review staged changes" chip under the answer (live; a resumed
chat gets the same chip from ChatSession.display_items, and never both: the log is rebuilt)."""

LIVE_ANSWERS = 20
"""Answers kept as (heavy) Markdown widgets; older ones are re-rendered as one light widget."""

RECENT_ITEMS = 60
"""Items of a resumed conversation built at once; older ones wait behind a button."""


def item_widget(item: dict[str, Any]) -> Any:
    """The widget for one saved display item (see ChatSession.display_items)."""
    if "chip" in item:
        chip = item["chip"]
        return ChipRow(ChipButton(str(chip.get("label", "")), dict(chip.get("action", {}))))
    if "tool" in item:
        line = ToolLine("", item["tool"], item.get("input"))
        line.finish(item.get("status"), item.get("result"))
        return line
    if item.get("role") == "user":
        return UserMessage(item.get("text", ""), list(item.get("attachments") or []))
    return SavedAnswer(item.get("text", ""))


class ChatLog(VerticalScroll):
    """The scrolling message list; anchored to the bottom unless the user scrolls up."""

    DEFAULT_CSS = "ChatLog { height: 1fr; padding: 0 1 0 0; scrollbar-size-vertical: 1; }"

    def on_mount(self) -> None:
        self.anchor()


class ChatPanel(Vertical):
    """Owns the composer and the log, and runs turns on the app's ChatSession."""

    DEFAULT_CSS = """
    ChatPanel { height: 1fr; }
    ChatPanel > #chat-actions { height: 1; }
    ChatPanel > #chat-actions > #chat-hint { width: 1fr; color: $text-muted; padding: 0 1; }
    ChatPanel > #chat-actions Button { min-width: 6; margin: 0 0 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.turn = 0
        self.busy = False
        self.cancel: threading.Event | None = None
        self._ended: set[int] = set()
        self._stream: MarkdownStream | None = None
        self._tool_lines: dict[str, ToolLine] = {}
        self._hidden_items: list[dict[str, Any]] = []
        self._staged_this_turn = False
        self._queued: tuple[int, str, list[Path], threading.Event] | None = None

    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat-log")
        yield AttachmentBar(id="attachment-bar")
        yield Composer(id="composer", names=self._completion_names)
        with Horizontal(id="chat-actions"):
            yield ChatHint(id="chat-hint")
            yield Button("Send", id="send", variant="primary", compact=True)
            yield Button("Stop", id="stop", variant="error", compact=True, disabled=True)

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

    # ----- sending ------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _on_submitted(self, event: Composer.Submitted) -> None:
        event.stop()
        self.submit(event.text)

    @on(Button.Pressed, "#send")
    def _on_send_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.composer.action_submit()

    @on(Button.Pressed, "#stop")
    def _on_stop_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.stop()

    @on(Composer.PathPasted)
    def _on_path_pasted(self, event: Composer.PathPasted) -> None:
        self.attach(event.path)

    @on(Button.Pressed, "AnswerChip")
    def _on_answer(self, event: Button.Pressed) -> None:
        event.stop()
        assert isinstance(event.button, AnswerChip)
        self.submit(event.button.choice)

    def attach(self, path: str | Path) -> bool:
        """Validate a file now (size, type) and add it to the next message; say why not."""
        try:
            attachment = AttachmentSet().add(path)
        except TabletalkError as exc:
            self.app.notify(exc.render(), title=exc.title, severity="error", markup=False)
            return False
        self.attachments.add(attachment.path)
        return True

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
            self.app.notify("Wait for the answer, or press Esc to stop it.", severity="warning")
            return
        session = getattr(self.app, "session", None)
        files = self.attachments.clear()
        self.composer.clear()
        for answered in self.query(AnswerChip):
            answered.disabled = True
        self.log_view.mount(UserMessage(text, [p.name for p in files]))
        self.log_view.anchor()
        self.turn += 1
        self.cancel = threading.Event()
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
        shown = self.log_view.query(UserMessage)
        if not shown or shown.last().text != queued[1]:
            self.log_view.mount(UserMessage(queued[1], [p.name for p in queued[2]]))
        self._run_turn(session, *queued)

    @property
    def has_queued(self) -> bool:
        """A message typed while the chat was starting waits to be sent."""
        return self._queued is not None

    def _run_turn(
        self, session: Any, turn: int, text: str, files: list[Path], cancel: threading.Event
    ) -> None:
        """Run the turn on an app thread worker; its events come back as TurnEventPosted."""

        def work() -> None:
            session.run_turn(
                text,
                attachments=files,
                on_event=lambda event: self.post_message(TurnEventPosted(turn, event)),
                cancel=cancel,
            )

        run_in_thread(self, work, group="turn")

    def stop(self) -> bool:
        """Cancel the running turn at once; its late events are ignored. False when idle."""
        if not self.busy or self.cancel is None:
            return False
        self.cancel.set()
        self.app.cancel_permission_prompt()
        self.call_later(self._finish_turn, self.turn, "stopped", None)
        return True

    def turn_failed(self, error: BaseException | None) -> None:
        """The worker raised: end the turn (the app shows the error) so the chat goes on."""
        message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        fix = getattr(error, "fix", None)
        failed = TurnEnded("error", error=f"The message was not sent: {message}", fix=fix)
        self.call_later(self._finish_turn, self.turn, "error", failed)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.query_one("#stop", Button).disabled = not busy
        self.query_one("#send", Button).disabled = busy
        self.app.set_busy(busy)

    # ----- events from the worker -----------------------------------------------------------

    async def on_turn_event_posted(self, message: TurnEventPosted) -> None:
        message.stop()
        if message.turn != self.turn or message.turn in self._ended:
            return
        event = message.event
        log = self.log_view
        if isinstance(event, TextDelta):
            if self._stream is None:
                widget = AssistantMessage()
                await log.mount(widget)
                self._stream = Markdown.get_stream(widget)
            await self._stream.write(event.text)
        elif isinstance(event, ToolCallStarted):
            await self._close_stream()
            if event.name == "ask":  # the question itself shows as an AskBlock
                return
            line = ToolLine(event.tool_use_id, event.name, event.input)
            self._tool_lines[event.tool_use_id] = line
            await log.mount(line)
        elif isinstance(event, ToolCallFinished):
            line = self._tool_lines.get(event.tool_use_id)
            if line is not None:
                line.finish(event.status, event.result)
            if event.name in STAGING_TOOLS and event.status == "success":
                self._staged_this_turn = True
        elif isinstance(event, ChipProposed):
            await log.mount(ChipRow(ChipButton(event.chip.label, event.chip.action)))
        elif isinstance(event, AskUser):
            await self._close_stream()
            await log.mount(AskBlock(event.question, event.choices))
        elif isinstance(event, UsageUpdated):
            self.app.show_usage(event.conversation)
        elif isinstance(event, Notice):
            await log.mount(NoteLine(event.message))
        elif isinstance(event, TurnEnded):
            await self._finish_turn(message.turn, event.reason, event)

    async def _close_stream(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def _finish_turn(self, turn: int, reason: str, event: TurnEnded | None) -> None:
        if turn in self._ended:
            return
        self._ended.add(turn)
        await self._close_stream()
        self._tool_lines.clear()
        if self._staged_this_turn:
            self._staged_this_turn = False
            review = ChipButton("Review staged changes", {"kind": "openStagingPanel"})
            await self.log_view.mount(ChipRow(review))
        note = END_NOTES.get(reason)
        if reason == "error":
            text = (event.error if event and event.error else "The turn failed.") or ""
            fix = getattr(event, "fix", None) if event is not None else None
            await self.log_view.mount(NoteLine(text, level="error"))
            if fix:
                await self.log_view.mount(NoteLine(f"What to do: {fix}", level="fix"))
            self.app.notify(
                text + (f"\n{fix}" if fix else ""),
                title="The answer failed",
                severity="error",
                markup=False,
            )
        elif reason == "other" and event is not None:
            await self.log_view.mount(
                NoteLine(f"The model stopped ({event.detail}).", level="warning")
            )
        elif note is not None:
            await self.log_view.mount(NoteLine(note[0], level=note[1]))
        await self._lighten_old_answers()
        self._set_busy(False)
        self.app.refresh_staging()
        if self.app.focused is None or not self.app.focused.is_attached:
            self.composer.focus()

    async def _lighten_old_answers(self) -> None:
        """Keep the newest LIVE_ANSWERS as Markdown widgets; older ones become SavedAnswers."""
        live = list(self.log_view.query(AssistantMessage))
        for old in live[:-LIVE_ANSWERS]:
            await self.log_view.mount(SavedAnswer(old.source), before=old)
            await old.remove()

    # ----- whole-log operations -------------------------------------------------------------

    async def show_items(self, items: list[dict[str, Any]]) -> None:
        """Replace the log with a saved conversation's items (after resume or rewind).

        Only the newest RECENT_ITEMS are built; a button above them builds earlier ones on
        demand, so a long conversation opens fast and stays light.
        """
        log = self.log_view
        await log.remove_children()
        self._hidden_items = list(items[:-RECENT_ITEMS]) if len(items) > RECENT_ITEMS else []
        widgets = [item_widget(item) for item in items[-RECENT_ITEMS:]]
        if self._hidden_items:
            widgets.insert(0, self._earlier_button())
        if not items:
            widgets.append(NoteLine(self.intro()))
        if widgets:
            await log.mount_all(widgets)
        log.scroll_end(animate=False)
        log.anchor()

    def intro(self) -> str:
        """The first line of an empty chat: what to ask, what it runs on, that edits wait."""
        app_store = getattr(self.app, "store", None)  # a bare App in widget tests has none
        store = app_store.label if app_store is not None else "your database"
        model = short_model(getattr(getattr(self.app, "settings", None), "model", "") or "")
        return (
            f"Ask about the tables in {store}. Runs on Amazon Bedrock ({model}) with your AWS "
            "credentials. Edits wait in staging for your review (ctrl+s)."
        )

    def _earlier_button(self) -> Button:
        return Button(
            Content(
                f"Show {min(RECENT_ITEMS, len(self._hidden_items))} earlier of {len(self._hidden_items)}"
            ),
            id="show-earlier",
            compact=True,
        )

    @on(Button.Pressed, "#show-earlier")
    async def _show_earlier(self, event: Button.Pressed) -> None:
        event.stop()
        log = self.log_view
        batch = self._hidden_items[-RECENT_ITEMS:]
        self._hidden_items = self._hidden_items[:-RECENT_ITEMS]
        await event.button.remove()
        widgets = [item_widget(item) for item in batch]
        if self._hidden_items:
            widgets.insert(0, self._earlier_button())
        await log.mount_all(widgets, before=0 if log.children else None)

    @on(TextArea.Changed, "#composer")
    def _on_composer_changed(self, event: TextArea.Changed) -> None:
        self.query_one(ChatHint).show_completions(self.composer.completions())
