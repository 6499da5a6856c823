"""AppHost: the part of the app a controller uses (kept narrow so controllers never import
`tui.app`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.screen import Screen

from tui.widgets.chat import ChatPanel


class AppHost(Protocol):
    """What `pick_conversation`/`pick_rewind` need from TabletalkApp."""

    session: Any
    store: Any

    @property
    def chat(self) -> ChatPanel: ...

    def notify(self, message: str, *, severity: Any = ..., markup: bool = ...) -> None: ...

    def push_screen(self, screen: Screen[Any], callback: Callable[[Any], Any] | None) -> Any: ...

    def action_new_chat(self) -> None: ...

    def open_session(self, conversation_id: str | None) -> Any: ...

    def show_usage(self, usage: Any) -> None: ...
