"""One commit's changes (Enter or a click on a commit in the history, F9): per change its
table and key, then each attribute's value before → after, as the staging panel draws a
staged change (only values longer than DETAIL_VALUE_LIMIT cut with `…`), in a scrollable
modal; Esc goes back to the list.

Every name and value is untrusted text: it reaches the screen as Content, never as markup.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from agent.staging.history import CommitEntry, LoggedChange, revert_words
from agent.staging.model import AttributeDiff
from agent.staging.review import show_value
from agent.text_plural import counted
from tui.widgets.fitted_lines import FittedLines, Line
from tui.widgets.staged_change import NAME_LIMIT, OP_STYLE, diff_lines, key_text

CHANGES_SHOWN = 200
"""Changes drawn (one widget each); a larger commit ends with how many more and where to
read them all (`tabletalk commits show ID`)."""


def logged_diffs(change: LoggedChange) -> list[AttributeDiff]:
    """What the commit did to each attribute: an update's changed attributes (old → new), a
    create's values, a delete's last values (as `tabletalk commits show` lists them)."""
    before, after = change.pre_image or {}, change.post_image or {}
    diffs = []
    for attribute in dict.fromkeys([*before, *after]):
        if change.op == "update" and attribute not in change.values:
            continue
        diffs.append(AttributeDiff(str(attribute), before.get(attribute), after.get(attribute)))
    return diffs


DETAIL_VALUE_LIMIT = 2000
"""Characters of a value shown here (far more than the staging list's VALUE_LIMIT: this is
where a commit is read); a longer value is cut, and the screen ends naming the command that
prints it whole."""


def cuts_a_value(change: LoggedChange, limit: int = DETAIL_VALUE_LIMIT) -> bool:
    """Whether a value of `change` is longer than the screen shows."""
    return any(
        len(show_value(value)) > limit
        for diff in logged_diffs(change)
        for value in (diff.old, diff.new)
    )


def logged_change_text(change: LoggedChange, limit: int = DETAIL_VALUE_LIMIT) -> FittedLines:
    """`UPDATE orders id=5` and one line per attribute (old and new on their own lines when
    long), values cut at `limit` characters."""
    heading = Content.assemble(
        (change.op.upper(), f"bold {OP_STYLE.get(change.op, '')}"),
        " ",
        f"{show_value(change.table, NAME_LIMIT)} ",
        (key_text(change.key), "bold"),
    )
    lines: list[Line] = []
    for diff in logged_diffs(change):
        lines += diff_lines(change.op, diff, limit)
    if not lines:
        lines.append(Line(Content.styled("(no attribute changed)", "dim"), Content("  ")))
    return FittedLines(heading, (), lines)


class CommitDetailScreen(ModalScreen[None]):
    """The changes of one commit, scrollable; Esc or q closes it (back to the history)."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="commit_detail.close")]

    DEFAULT_CSS = """
    CommitDetailScreen { align: center middle; }
    CommitDetailScreen > VerticalScroll {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    CommitDetailScreen .logged-change { margin-bottom: 1; }
    """

    def __init__(self, entry: CommitEntry, changes: list[LoggedChange]) -> None:
        super().__init__()
        self.entry = entry
        self.changes = changes

    def compose(self) -> ComposeResult:
        entry = self.entry
        with VerticalScroll() as box:
            box.border_title = Content(f"Commit {entry.id}")
            box.border_subtitle = "esc: back"
            when = entry.committed_at.replace("T", " ")[:19]
            undo = revert_words(entry)
            yield Static(
                Content.styled(
                    f"{when} UTC by {show_value(entry.committed_by, NAME_LIMIT)}: "
                    f"{counted(len(self.changes), 'change')}" + (f" · {undo}" if undo else ""),
                    "dim",
                ),
                id="commit-summary",
            )
            shown = self.changes[:CHANGES_SHOWN]
            for change in shown:
                yield Static(logged_change_text(change), classes="logged-change")
            more = len(self.changes) - CHANGES_SHOWN
            command = f"`tabletalk commits show {entry.id}` "
            if more > 0:
                hint = f"… {counted(more, 'more change')}: {command}lists them all."
            elif any(map(cuts_a_value, shown)):
                hint = f"Values longer than {DETAIL_VALUE_LIMIT:,} characters end in …: {command}"
                hint += "prints them whole."
            else:
                return
            from agent.store_hints import for_store  # the command must reach this store

            store = getattr(self.app, "store", None)
            text = for_store(hint, store) if store is not None else hint
            yield Static(Content.styled(text, "dim"), id="commit-more")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()  # arrows and page keys scroll the changes
