"""One staged change, drawn two ways: a few lines in the panel's list (long values cut with
`…`) and in full in a detail screen, with its commit/reject buttons."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent.staging import AttributeDiff, StagedChange
from agent.staging.merge import ORIGIN_JOIN
from agent.staging.review import show_value
from agent.text_plural import counted
from tui.local_time import local_time
from tui.widgets.fitted_lines import FittedLines, Line

OP_STYLE = {"create": "ansi_green", "update": "ansi_yellow", "delete": "ansi_red"}
"""Terminal colours, as the rest of the change is drawn in."""
VALUE_LIMIT = 160
"""Characters of a value shown in the list; the detail shows all of it."""
NAME_LIMIT = 40
"""Characters of a table or attribute name shown in the list (a name may be very long)."""
ATTRIBUTES_SHOWN = 6
"""Attributes shown per change in the list; the detail shows every one."""
CONFLICT_VALUE_LIMIT = 60
"""Characters of each value a conflict line quotes in the list (three values share a line)."""


def origin_text(origin: str) -> str:
    """`chat:20261130-…` → `chat`, `mcp:client` → `mcp client`: who staged it, briefly (each
    of them for a change several origins staged: `mcp client + chat`)."""
    shown = []
    for part in origin.split(ORIGIN_JOIN):
        kind, _, detail = part.partition(":")
        shown.append(kind if kind == "chat" or not detail else f"{kind} {detail}")
    return ORIGIN_JOIN.join(shown)


def short_origin(origin: str, width: int | None) -> str:
    """`origin_text` cut to `width` (None: whole), so a list heading keeps its time on its line;
    the change in full shows the whole origin."""
    text = origin_text(origin)
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def key_text(key: dict[str, Any]) -> str:
    return ", ".join(f"{show_value(k, NAME_LIMIT)}={show_value(v, 60)}" for k, v in key.items())


def quoted(value: Any, limit: int | None) -> str:
    """A value as a conflict line shows it: a string in quotes, each cut to `limit` with `…`
    (None: whole), so the staged and the current value read alike."""
    text = show_value(value, limit)
    return f"'{text}'" if isinstance(value, str) else text


def conflict_parts(
    change: StagedChange, conflict: Any, limit: int | None = CONFLICT_VALUE_LIMIT
) -> tuple[str, list[tuple[str, str]]]:
    """What conflicts: a heading, then per attribute `staged 'pending' → 'shipped', now
    'cancelled'` (the value it was staged on, the staged value, the table's value now)."""
    current = conflict.current
    if current is None:
        return f"⚠ conflict: the item is gone now ({conflict.reason})", []
    if change.op == "create":
        return f"⚠ conflict: an item with this key exists now ({conflict.reason})", []
    before = change.pre_image or {}
    parts = []
    for attribute in sorted(set(before) | set(current)):
        old, now = before.get(attribute), current.get(attribute)
        if old == now:
            continue
        if change.op == "update" and attribute in change.values:
            new = change.values[attribute]
            staged = f"staged {quoted(old, limit)} → {quoted(new, limit)}"
        else:
            staged = f"was {quoted(old, limit)}"
        parts.append((attribute, f"{staged}, now {quoted(now, limit)}"))
    if not parts:
        return f"⚠ conflict: {conflict.reason}", []
    return "⚠ conflict: changed in the table since it was staged", parts


def conflict_lines(
    change: StagedChange, conflict: Any, limit: int | None = CONFLICT_VALUE_LIMIT
) -> list[str]:
    """`conflict_parts` as plain lines: the heading, then `  status: staged … , now …`."""
    heading, parts = conflict_parts(change, conflict, limit)
    return [heading, *(f"  {attribute}: {detail}" for attribute, detail in parts)]


def conflict_text(
    change: StagedChange, conflict: Any, limit: int | None, style: str = ""
) -> list[Line]:
    """The conflict as lines that wrap under their own text (after `⚠ `, after `  status: `),
    so a long value never runs back to the left edge."""
    heading, parts = conflict_parts(change, conflict, limit)
    mark = "⚠ "
    lines = [Line(Content.styled(heading.removeprefix(mark), style), Content.styled(mark, style))]
    for attribute, detail in parts:
        name = attribute if limit is None else show_value(attribute, NAME_LIMIT)
        lines.append(Line(Content.styled(detail, style), Content(f"  {name}: ")))
    found_at = getattr(conflict, "found_at", None)  # recorded: perhaps by another process
    if limit is None and found_at:
        when = local_time(found_at, "%Y-%m-%d %H:%M")
        note = f"found by the commit at {when}; Take current reads the table again"
        lines.append(Line(Content.styled(note, "dim"), Content("  ")))
    return lines


def head_text(
    change: StagedChange, *, table: bool = True, origin_width: int | None = 24
) -> FittedLines:
    """`UPDATE orders id=5   chat · 2026-11-30 16:00`; where that would not fit on one line,
    `chat · 11-30 16:00` beside it, else who and when on a line of their own."""
    heading = Content.assemble(
        (change.op.upper(), f"bold {OP_STYLE.get(change.op, '')}"),
        " ",
        f"{show_value(change.table, NAME_LIMIT)} " if table else "",
        (key_text(change.key), "bold"),
    )
    who = short_origin(change.origin, origin_width)
    when = change.created_at[:16].replace("T", " ")
    asides = (
        Content.styled(f"{who} · {when}", "dim"),
        Content.styled(f"{who} · {when[5:]}", "dim"),
    )
    return FittedLines(heading, asides, [])


def diff_lines(op: str, diff: AttributeDiff, limit: int | None) -> list[Line]:
    """One attribute: `status: delivered → cancelled`; old and new on their own lines when
    either is long, so both stay readable at any width; each wraps under its own text."""
    name = diff.attribute if limit is None else show_value(diff.attribute, NAME_LIMIT)
    lead = Content.assemble("  ", (name, "bold"), ": ")
    if op == "create":
        return [Line(Content.styled(show_value(diff.new, limit), "ansi_green"), lead)]
    if op == "delete":
        return [Line(Content.styled(show_value(diff.old, limit), "ansi_red strike"), lead)]
    old, new = show_value(diff.old, limit), show_value(diff.new, limit)
    wide = len(name) + len(old) + len(new) + len(diff.old_type or "") * 2 > 40
    before = Content.assemble(
        (old, "dim strike"), (f" ({diff.old_type})", "dim") if diff.old_type else ""
    )
    after = Content.assemble(
        (new, "bold ansi_yellow"), (f" ({diff.new_type})", "ansi_yellow") if diff.new_type else ""
    )
    if wide:
        return [Line(before, lead), Line(after, Content("    → "))]
    return [Line(Content.assemble(before, " → ", after), lead)]


def change_text(
    change: StagedChange, diffs: list[AttributeDiff], conflict: Any | None
) -> FittedLines:
    """The change as a few lines for the panel's list, laid out for the list's width."""
    head = head_text(change)
    lines: list[Line] = []
    for diff in diffs[:ATTRIBUTES_SHOWN]:
        lines += diff_lines(change.op, diff, VALUE_LIMIT)
    if len(diffs) > ATTRIBUTES_SHOWN:
        more = len(diffs) - ATTRIBUTES_SHOWN
        text = f"… {counted(more, 'more attribute')} (enter: all)"
        lines.append(Line(Content.styled(text, "dim"), Content("  ")))
    if conflict is not None:
        lines += conflict_text(change, conflict, CONFLICT_VALUE_LIMIT, "bold ansi_red")
    return FittedLines(head.heading, head.asides, lines)


class SmallButton(Button):
    """A one-line button carrying the change (and attribute) it acts on."""

    DEFAULT_CSS = "SmallButton { height: 1; min-width: 4; margin: 0 0 0 1; border: none; }"

    def __init__(
        self,
        label: str,
        action: str,
        change_id: str,
        attribute: str | None = None,
        variant: str = "default",
    ) -> None:
        super().__init__(Content(label), compact=True, variant=variant)  # type: ignore[arg-type]
        self.action_name = action
        self.change_id = change_id
        self.attribute = attribute


class ChangeCard(Vertical):
    """One staged change in full: op, key, origin; every attribute (wrapped); its buttons."""

    DEFAULT_CSS = """
    ChangeCard { height: auto; padding: 0 1; border-left: wide $warning; }
    ChangeCard.-create { border-left: wide $success; }
    ChangeCard.-delete { border-left: wide $error; }
    ChangeCard.-conflict { background: $error 15%; }
    ChangeCard Horizontal { height: auto; }
    ChangeCard .card-head { width: 1fr; }
    ChangeCard .attr { width: 1fr; height: auto; }
    ChangeCard .conflict { color: $error; width: 1fr; height: auto; }
    """

    def __init__(
        self, change: StagedChange, diffs: list[AttributeDiff], conflict: Any | None
    ) -> None:
        super().__init__(
            classes=f"-{change.op}" + (" -conflict" if conflict else ""), id=f"change-{change.id}"
        )
        self.change = change
        self.diffs = diffs
        self.conflict = conflict

    def compose(self) -> ComposeResult:
        change = self.change
        with Horizontal():
            yield Static(head_text(change, origin_width=None), classes="card-head")
            if self.conflict is None:  # a known conflict would only fail again: Take current
                yield SmallButton("Commit this", "commit", change.id, variant="success")
            yield SmallButton("Reject", "reject", change.id, variant="error")
        for diff in self.diffs:
            with Horizontal():
                lines = diff_lines(change.op, diff, None)
                yield Static(FittedLines(Content(), (), lines), classes="attr")
                if change.op != "delete" and diff.attribute in change.values:
                    button = SmallButton("✕", "reject_attribute", change.id, diff.attribute)
                    button.tooltip = Content(f"Reject the change to {diff.attribute}")
                    yield button
        if self.conflict is not None:
            with Horizontal():
                lines = conflict_text(change, self.conflict, None)
                yield Static(FittedLines(Content(), (), lines), classes="conflict")
                button = SmallButton("Take current", "take_current", change.id, variant="warning")
                button.tooltip = "Stage this change on top of the item as it is now"
                yield button


class ChangeDetailScreen(ModalScreen[tuple[str, str, str | None] | None]):
    """Every attribute of one staged change, in full; dismisses with the button's action
    `(action, change id, attribute)`, or None on Esc."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="change_detail.close")]

    DEFAULT_CSS = """
    ChangeDetailScreen { align: center middle; }
    ChangeDetailScreen > VerticalScroll {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, change: StagedChange, diffs: list[AttributeDiff], conflict: Any) -> None:
        super().__init__()
        self.change = change
        self.diffs = diffs
        self.conflict = conflict

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = escape(f"Staged change {self.change.id}")
            box.border_subtitle = "tab: its buttons · esc: close"
            yield ChangeCard(self.change, self.diffs, self.conflict)

    def on_mount(self) -> None:
        # The change itself has the focus, not a button: the Enter that opened it, pressed
        # twice, must not commit or reject it (Tab reaches the buttons, arrows scroll).
        self.query_one(VerticalScroll).focus()

    @on(Button.Pressed, "SmallButton")
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button = event.button
        assert isinstance(button, SmallButton)
        self.dismiss((button.action_name, button.change_id, button.attribute))
