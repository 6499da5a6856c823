"""A run of calls to one tool folded into one line: `✓ getItem ×40`, `✗ getItem ×40  2 failed`,
`⊘ runQuery ×5  5 denied`, `… getItem ×12  running`; it expands to the calls' own lines, each still expanding to its input
and result (imported with the first tool line, as chat_items.py).

A run is consecutive tool lines of one tool with nothing else between them (no text, chip or
note): the live chat folds the lines as they come (`add_tool_line`), a resumed conversation
folds its items the same way (`group_items`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible

from tui.widgets.chat_items import STATUS_MARKS, ToolLine, item_widget

GROUP_AT = 3
"""Consecutive calls of one tool from which they show as one group line (two stay as lines)."""


class ToolGroup(Collapsible):
    """One line for a run of calls to one tool, with their count and how many failed, were
    denied or stopped; expands to the calls' lines."""

    DEFAULT_CSS = """
    ToolGroup { margin: 0; padding: 0; border: none; background: transparent; }
    ToolGroup > Contents { padding: 0 0 0 2; }
    ToolGroup > CollapsibleTitle {
        padding: 0; color: $text-muted; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, lines: list[ToolLine]) -> None:
        self.tool_name = lines[0].tool_name
        self.lines = list(lines)
        self.counts: Counter[str | None] = Counter(line.status for line in lines)
        self.differs: Counter[str] = Counter()
        """Per input key, how many calls' values differ from the first call's."""
        self.lead: tuple[str, ...] = ()
        """The keys that differ, most often first: each line shows them first."""
        for line in lines:
            line.group = self
            self._compare(line)
        for line in lines:
            line.lead_with(self.lead)
        super().__init__(*lines, title="", collapsed=True)
        self._set_title()

    async def add(self, line: ToolLine) -> None:
        """One more call of the run (counted at once, shown once mounted)."""
        line.group = self
        self.lines.append(line)
        self.counts[line.status] += 1
        if self._compare(line):
            for each in self.lines:
                each.lead_with(self.lead)
        else:
            line.lead_with(self.lead)
        self._set_title()
        await self.query_one(Collapsible.Contents).mount(line)

    def _compare(self, line: ToolLine) -> bool:
        """Count the keys in which `line`'s input differs from the first call's; True when
        that reorders the keys the lines lead with (then every line is retitled: rare, as the
        order settles after a few calls)."""
        first, this = self.lines[0].tool_input, line.tool_input
        if not (isinstance(first, dict) and isinstance(this, dict)):
            return False
        keys = [*first, *(k for k in this if k not in first)]  # ties keep the model's order
        self.differs.update(k for k in keys if first.get(k) != this.get(k))
        lead = tuple(k for k, _ in self.differs.most_common())
        changed, self.lead = lead != self.lead, lead
        return changed

    def status_changed(self, old: str | None, new: str | None) -> None:
        """A call of the run finished (or was stopped): recount."""
        self.counts[old] -= 1
        self.counts[new] += 1
        self._set_title()

    @property
    def status(self) -> str | None:
        """None while a call runs; `stopped` if any was, `error` if any failed, `denied` if any
        was denied, else success."""
        if self.counts[None]:
            return None
        for status in ("stopped", "error", "denied"):
            if self.counts[status]:
                return status
        return "success"

    def _set_title(self) -> None:
        status = self.status
        mark, colour = STATUS_MARKS.get(status, ("?", ""))
        parts: list[Any] = [(mark, colour), " ", (self.tool_name, "bold"), f" ×{len(self.lines)}"]
        if self.counts["error"]:
            parts += ["  ", (f"{self.counts['error']} failed", "red")]
        if self.counts["denied"]:
            parts += ["  ", (f"{self.counts['denied']} denied", "magenta")]
        if self.counts["stopped"]:
            parts += ["  ", (f"{self.counts['stopped']} stopped", "yellow")]
        if status is None:
            parts += ["  ", ("running", "dim")]
        self.title = Content.assemble(*parts)  # type: ignore[assignment]


async def add_tool_line(log: Widget, line: ToolLine) -> dict[ToolLine, ToolLine]:
    """Mount a new call's line at the end of `log`: into the group it continues, or as the
    call that makes a run a group (the run's lines move into it as copies: the returned map,
    old line to its copy), or on its own."""
    last = log.children[-1] if log.children else None
    if isinstance(last, ToolGroup) and last.tool_name == line.tool_name:
        await last.add(line)
        return {}
    run: list[ToolLine] = []
    for widget in reversed(log.children):
        if not (isinstance(widget, ToolLine) and widget.tool_name == line.tool_name):
            break
        run.insert(0, widget)
        if len(run) == GROUP_AT - 1:
            break
    if len(run) < GROUP_AT - 1:
        await log.mount(line)
        return {}
    copies = {old: old.copy() for old in run}
    group = ToolGroup([*copies.values(), line])
    had_focus = any(
        old in (log.app.focused, *getattr(log.app.focused, "ancestors", ())) for old in run
    )
    await log.mount(group, before=run[0])
    for old in run:
        await old.remove()
    if had_focus:
        group.query_one("CollapsibleTitle").focus()
    return copies


def group_items(items: list[dict[str, Any]]) -> list[dict[str, Any] | list[dict[str, Any]]]:
    """A saved conversation's display items with each run of GROUP_AT or more calls of one
    tool as a list (one group line)."""
    units: list[dict[str, Any] | list[dict[str, Any]]] = []
    run: list[dict[str, Any]] = []

    def close_run() -> None:
        if len(run) >= GROUP_AT:
            units.append(list(run))
        else:
            units.extend(run)
        run.clear()

    for item in items:
        if "tool" in item and run and item["tool"] == run[0]["tool"]:
            run.append(item)
            continue
        close_run()
        if "tool" in item:
            run.append(item)
        else:
            units.append(item)
    close_run()
    return units


def unit_widget(unit: dict[str, Any] | list[dict[str, Any]]) -> Any:
    """The widget of one item, or the group line of a run (see group_items)."""
    if isinstance(unit, list):
        return ToolGroup([item_widget(item) for item in unit])
    return item_widget(unit)
