"""Thread workers owned by the app, so every failure reaches its one Worker.StateChanged handler.

(`Worker.StateChanged` does not bubble: a worker started on a widget would report to that
widget only.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.dom import DOMNode
from textual.worker import Worker


def run_in_thread(
    node: DOMNode, work: Callable[[], Any], *, group: str, name: str = ""
) -> Worker[Any]:
    """Run `work` on a thread worker of the app; it must only post messages, never touch widgets."""
    return node.app.run_worker(
        work, thread=True, exit_on_error=False, group=group, name=name or group
    )
