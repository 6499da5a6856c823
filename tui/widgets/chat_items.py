"""The pieces of the chat a conversation adds: user and assistant messages, tool lines,
chips, questions (imported with the first one shown: the first screen has none; its notes and
key hint are in chat_lines.py).

Everything untrusted (model text, tool input and results) goes in as plain Text/Content or
Markdown, never as Textual markup.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Collapsible, Static

from agent.text_safety import printable_line
from tui.key_hints import app_key, compact
from tui.messages import ChipClicked
from tui.widgets.chat_notes import failure_notes

STATUS_MARKS = {
    None: ("…", "cyan"),
    "success": ("✓", "green"),
    "error": ("✗", "red"),
    "denied": ("⊘", "magenta"),
    "stopped": ("■", "yellow"),
}
"""A tool line's mark and colour by status: running, done, failed, denied (a gated call
refused at the permission prompt or by the mode: it never ran), stopped."""


def short_input(tool_input: Any, width: int = 60, first: Sequence[str] = ()) -> str:
    """A tool input squeezed onto one line: `key=value, …`, cut to `width` characters; the keys
    in `first` lead, in that order (in a group of calls, those that tell the calls apart)."""
    if isinstance(tool_input, dict):
        keys = [k for k in first if k in tool_input]
        keys += [k for k in tool_input if k not in keys]
        text = ", ".join(
            f"{k}={json.dumps(tool_input[k], default=str, ensure_ascii=False)}" for k in keys
        )
    else:
        text = json.dumps(tool_input, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def pretty_json(value: Any, limit: int = 4000) -> str:
    """Indented JSON for the expanded tool line, cut at `limit` characters."""
    text = json.dumps(value, indent=2, default=str, ensure_ascii=False)
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )


class UserMessage(Static):
    """What the user sent, with the names of the files attached to it."""

    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 4; padding: 0 1; background: $primary 15%; border-left: thick $primary; }
    """

    def __init__(
        self, text: str, attachments: list[str] | None = None, *, index: int | None = None
    ) -> None:
        body = Text(text)
        for name in attachments or []:
            body.append(f"\n📎 {name}", style="dim")
        super().__init__(body)
        self.text = text
        self.message_index = index


class AssistantMessage(Static):
    """Model text as Markdown, streamed in with `append`. One widget (not a widget per
    Markdown block), so laying out even a very long answer stays cheap; the chat starts a new
    one every few thousand characters, so each append re-renders a bounded text."""

    DEFAULT_CSS = """
    AssistantMessage { margin: 1 0 0 0; padding: 0 1; background: transparent; }
    AssistantMessage.-continued { margin: 0; }
    """

    def __init__(self, source: str = "", continued: bool = False) -> None:
        """`continued`: the answer's previous widget ended mid-paragraph (no gap above)."""
        from tui.widgets.answer_markdown import AnswerMarkdown

        super().__init__(AnswerMarkdown(source), classes="-continued" if continued else "")
        self.source = source

    def append(self, text: str) -> None:
        """Add streamed text and re-render."""
        from tui.widgets.answer_markdown import AnswerMarkdown

        self.source += text
        self.update(AnswerMarkdown(self.source))


class SavedAnswer(Static):
    """An answer from a resumed conversation: Rich Markdown in one widget (far lighter than
    a Markdown widget per message, which matters for long histories)."""

    DEFAULT_CSS = """
    SavedAnswer { margin: 1 0 0 0; padding: 0 1; }
    """

    def __init__(self, source: str) -> None:
        from tui.widgets.answer_markdown import AnswerMarkdown

        super().__init__(AnswerMarkdown(source))
        self.source = source


ERROR_WORDS = 80
"""The most of a failed call's error its line shows (the whole error is inside)."""


def error_words(result: Any) -> str:
    """The first line of a failed call's error, cut to ERROR_WORDS, or "" when it has none."""
    error = result.get("error") if isinstance(result, dict) else None
    if not isinstance(error, str) or not error.strip():
        return ""
    first = printable_line(error.strip().splitlines()[0])
    return first if len(first) <= ERROR_WORDS else first[: ERROR_WORDS - 1].rstrip() + "…"


class ToolLine(Collapsible):
    """A compact line `✓ name  input`; expands to the full input and result."""

    DEFAULT_CSS = """
    ToolLine { margin: 0; padding: 0; border: none; background: transparent; }
    ToolLine > Contents { padding: 0 0 0 2; }
    ToolLine CollapsibleTitle {
        padding: 0; color: $text-muted; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis;
    }
    ToolLine .tool-detail { color: $text-muted; }
    """

    def __init__(
        self, tool_use_id: str, name: str, tool_input: Any, *, collapsed: bool = True
    ) -> None:
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.tool_input = tool_input
        self.status: str | None = None
        self.result: Any = None
        self.group: Any = None
        """The ToolGroup this call's line is folded into, if any (told when it finishes)."""
        self.lead: tuple[str, ...] = ()
        """Input keys shown first on the line (set by its group: those that differ)."""
        self._input_view = Static(Text(pretty_json(tool_input)), classes="tool-detail")
        self._result_view = Static(Text("(running)"), classes="tool-detail")
        super().__init__(
            Static(Text("input", style="bold")),
            self._input_view,
            Static(Text("result", style="bold")),
            self._result_view,
            title="",
            collapsed=collapsed,
        )
        self._set_title()

    def _set_title(self) -> None:
        mark, colour = STATUS_MARKS.get(self.status, ("?", ""))
        said: list[str | tuple[str, str]] = []
        if self.status == "denied":  # ⊘ alone is cryptic
            said = [" ", ("denied", colour)]
        elif self.status == "error" and (why := error_words(self.result)):
            said = ["  ", (why, colour)]  # why it failed, without opening the line
        self.title = Content.assemble(
            (mark, colour),
            " ",
            (self.tool_name, "bold"),
            *said,
            "  ",
            (short_input(self.tool_input, first=self.lead), "dim"),
        )  # type: ignore[assignment]

    def lead_with(self, keys: tuple[str, ...]) -> None:
        """Show these input keys first on the line, in this order."""
        if keys != self.lead:
            self.lead = keys
            self._set_title()

    def finish(self, status: str | None, result: Any) -> None:
        """Show the outcome: ✓, ✗ or ⊘ (denied) on the line, the result inside."""
        old, self.status, self.result = self.status, status, result
        self._set_title()
        self._result_view.update(Text(pretty_json(result)))
        if self.group is not None and old != status:
            self.group.status_changed(old, status)

    def copy(self) -> ToolLine:
        """A new line showing the same call the same way (to move it into a group)."""
        line = ToolLine(self.tool_use_id, self.tool_name, self.tool_input, collapsed=self.collapsed)
        line.lead_with(self.lead)
        if self.status is not None:
            line.finish(self.status, self.result)
        return line


class ChipButton(Button):
    """A proposed action; nothing happens until it is pressed (mouse or Enter). Once
    pressed it shows as done (`✓`, disabled)."""

    DEFAULT_CSS = """
    ChipButton {
        margin: 0 1 0 0; min-width: 8; max-width: 100%; height: 1; border: none;
        background: $accent 30%; text-wrap: nowrap; text-overflow: ellipsis;
    }
    ChipButton:hover { background: $accent 60%; }
    ChipButton:focus { background: $accent; text-style: bold; }
    ChipButton.-done, ChipButton.-done:disabled { background: $success 20%; color: $text-muted; }
    """

    def __init__(self, label: str, action: dict[str, Any]) -> None:
        super().__init__(Content("▶ " + label), compact=True)
        self.tooltip = label  # the whole label, when the chat is too narrow to show it
        self.chip_label = label
        self.chip_action = action

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.has_class("-done"):
            return
        self.post_message(ChipClicked(self.chip_label, self.chip_action))
        self.label = Content("✓ " + self.chip_label)
        self.add_class("-done")
        self.disabled = True


class AnswerChip(Button):
    """One of the choices of an `ask` question; pressing it sends the choice as the answer."""

    DEFAULT_CSS = """
    AnswerChip {
        margin: 0 1 0 0; min-width: 6; height: auto; border: none; background: $secondary 35%;
        text-wrap: wrap; text-align: left;
    }
    AnswerChip:focus { background: $secondary; text-style: bold; }
    """

    def __init__(self, choice: str) -> None:
        super().__init__(Content(choice), compact=True)
        self.choice = choice


class ChipRow(Horizontal):
    """A row of chips."""

    DEFAULT_CSS = "ChipRow { height: auto; margin: 0 0 0 2; }"


class AskBlock(Vertical):
    """The model's question, with its choices as chips, one per line (a blank line apart, so
    two wrapped choices do not read as one) so every choice shows whole however narrow the
    chat; the composer takes a free answer."""

    DEFAULT_CSS = """
    AskBlock { height: auto; margin: 1 0 0 0; padding: 0 1; border-left: thick $secondary; }
    AskBlock > .ask-choices { height: auto; margin: 0 0 0 2; }
    AskBlock AnswerChip { width: auto; max-width: 100%; margin: 0 0 1 0; content-align: left top; }
    AskBlock AnswerChip:last-of-type { margin: 0; }
    """

    def __init__(self, question: str, choices: tuple[str, ...]) -> None:
        super().__init__()
        self.question = question
        self.choices = choices

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("? ", "bold"), self.question))
        if self.choices:
            with Vertical(classes="ask-choices"):
                for choice in self.choices:
                    yield AnswerChip(choice)
        hint = "…or type your own answer below"
        if self.choices:  # the choices can be reached without the mouse
            key = compact(app_key(self.app, "focus_chip", "ctrl+g"))
            hint += f" ({key} goes to the choices)"
        yield Static(Text(hint + ".", style="dim"))


class WaitLine(Static):
    """`waiting for the model… 12 s · esc stops` under the last message, while a step's
    answer has not started (the model can take a while to say its first word); while the
    model writes tool calls, `the model is writing getItem (call 12)… 8 s` (`writing`); while
    a refused request waits to go again, `Bedrock is throttling; retrying (attempt 2 of 4)…`
    (`retrying`)."""

    DEFAULT_CSS = "WaitLine { color: $text-muted; margin: 1 0 0 2; }"

    def __init__(self) -> None:
        super().__init__()
        self.started = time.monotonic()
        self.tool: str | None = None
        self.calls = 0
        self.characters = 0
        self.retry: str | None = None

    def on_mount(self) -> None:
        self.set_interval(1, self.refresh)

    def retrying(self, message: str) -> None:
        """A request was refused for now and goes again (`Retrying.message`), until the
        answer or a tool call starts."""
        self.retry = message
        self.refresh()

    def writing(self, name: str, characters: int) -> None:
        """The model is writing a call of `name`, its input `characters` long so far (0: a
        new call)."""
        if characters == 0:
            self.calls += 1
        self.tool, self.characters = name, characters
        self.retry = None
        self.refresh()

    def render(self) -> Text:
        seconds = int(time.monotonic() - self.started)
        if self.retry is not None:
            text = self.retry
        elif self.tool is None:
            text = "waiting for the model…"
        else:
            name = self.tool if len(self.tool) <= 40 else self.tool[:39] + "…"
            text = f"the model is writing {name}" + (
                f" (call {self.calls})" if self.calls > 1 else ""
            )
            if self.characters >= 1024:
                text += f", {self.characters // 1024:,} KB"
            text += "…"
        text += f" {seconds} s" if seconds else ""
        hint = " · esc stops"
        return Text(text + hint if len(text + hint) <= self.size.width else text)


class FailedTurn(Vertical):
    """A resumed chat's turn that failed before any answer (`Conversation.failed`): the
    user's message and the notes the live chat put under it (the error, what to do)."""

    DEFAULT_CSS = "FailedTurn { height: auto; }"

    def __init__(self, text: str, error: str, fix: str | None) -> None:
        super().__init__(UserMessage(text), *failure_notes(error or "The turn failed.", fix))
        self.text = text


def item_widget(item: dict[str, Any]) -> Any:
    """The widget for one saved display item (see ChatSession.display_items)."""
    if "failed" in item:
        failed = item["failed"]
        return FailedTurn(failed.get("text", ""), failed.get("error", ""), failed.get("fix"))
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
