"""The chat's lines on the first screen: notes (the intro) and the key hint under the
composer."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.key_hints import app_key, compact


def hints(app: object) -> tuple[str, str, str]:
    """The composer's key hint, longest first (the widest that fits is shown), naming the keys
    send, newline and stop have after `[keys]`: `⏎ send · ^j ⏎ · esc stop` by default."""
    send = compact(app_key(app, "send", "enter"))
    newline = compact(app_key(app, "newline", "ctrl+j"))
    stop = compact(app_key(app, "stop", "escape"))
    return (
        f"{send} send · {newline} ⏎ · {stop} stop",
        f"{send} send · {newline} ⏎",
        f"{send} send",
    )


class NoteLine(Static):
    """A dim one-line note: a notice, why a turn stopped, a chip that cannot open."""

    DEFAULT_CSS = """
    NoteLine { color: $text-muted; margin: 0 0 0 2; }
    NoteLine.-warning { color: $warning; }
    NoteLine.-error { color: $error; }
    NoteLine.-fix { color: $success; }
    """

    def __init__(self, text: str, *, level: str = "") -> None:
        super().__init__(Text(text), classes=f"-{level}" if level else "")


class ChatHint(Static):
    """The key hint under the composer, or the `@` completions while there are some."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.completions: list[str] = []

    def show_completions(self, options: list[str]) -> None:
        self.completions = options
        self.refresh()

    def render(self) -> Text:
        if self.completions:
            return Text("tab → " + ", ".join(self.completions[:6]), style="bold", no_wrap=True)
        width = self.size.width - 2
        shown = hints(self.app)
        return Text(next((h for h in shown if len(h) <= width), shown[-1]), no_wrap=True)
