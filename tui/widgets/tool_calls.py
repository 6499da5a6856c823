"""The chat's tool lines by call: those of the running turn, and those of tools still running
when their turn ended (Stop, or a tool that crashed), where a result that still comes shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded with the first tool line, after the first screen
    from textual.widget import Widget

    from tui.widgets.chat_items import ToolLine

UNFINISHED = {
    "stopped": "The turn ended (Stop, or an error) before this tool's result came; "
    "if the tool still ends, its result replaces this."
}
"""What a tool line shows when its turn ended while it ran."""


class ToolCalls:
    """Which line shows which call (by toolUseId), in the running turn and after Stop."""

    def __init__(self) -> None:
        self.running: dict[str, ToolLine] = {}
        self.late: dict[str, ToolLine] = {}
        """Lines of tools still running when their turn ended: a result that still comes shows
        there (a tool that staged changes after Stop must not look as if it did nothing)."""

    async def start(self, log: Widget, event: Any) -> None:
        """A call's line at the end of the log (folded into a group when it continues a run
        of the same tool: see tool_group.py)."""
        from tui.widgets.chat_items import ToolLine
        from tui.widgets.tool_group import add_tool_line

        line = ToolLine(event.tool_use_id, event.name, event.input)
        self.running[event.tool_use_id] = line
        moved = await add_tool_line(log, line)
        for calls in (self.running, self.late):  # the lines a new group took in, as copies
            for tool_use_id, shown in list(calls.items()):
                if shown in moved:
                    calls[tool_use_id] = moved[shown]

    def finish(self, event: Any) -> None:
        """A result (ToolCallFinished) on its call's line."""
        line = self.running.get(event.tool_use_id)
        if line is not None:
            line.finish(event.status, event.result)

    def late_result(self, event: Any) -> bool:
        """The result of a call whose turn had ended on its line (a failure, such as
        "stopped", keeps ■); False if no line waits for it."""
        line = self.late.pop(event.tool_use_id, None)
        if line is None or not line.is_attached:
            return False
        line.finish("success" if event.status == "success" else "stopped", event.result)
        return True

    def clear(self) -> None:
        """A new conversation: no line waits for a result any more."""
        self.running.clear()
        self.late.clear()

    def end_turn(self) -> None:
        """The turn ended: a call still running shows as stopped, and waits for a late result."""
        for tool_use_id, line in self.running.items():
            if line.status is None:
                line.finish("stopped", UNFINISHED)
                self.late[tool_use_id] = line
        self.running.clear()
