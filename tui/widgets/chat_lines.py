"""The chat's lines on the first screen: notes (the intro) and the key hint under the
composer."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.key_hints import app_key, compact


def below_hints(app: object, shown: tuple[str, ...]) -> tuple[str, ...]:
    """`shown` led by what says the chat goes on below the view (it is scrolled up, and an
    answer streaming there showed nothing new), longest first."""
    end = compact(app_key(app, "chat.end", "ctrl+end"))
    return (
        f"↓ more below ({end}) · {shown[0]}",
        f"↓ more below ({end}) · {shown[-1]}",
        f"↓ more below · {shown[-1]}",
        f"↓ more · {shown[-1]}",
        f"↓ {end} · {shown[-1]}",
        "↓ more below",
        shown[-1],
    )


def hints(app: object, *, busy: bool = False, away: bool = False) -> tuple[str, ...]:
    """The composer's key hint, longest first (the widest that fits is shown), naming the keys
    send, newline, attach and stop have after `[keys]`: `⏎ send · ^j new line · ^o attach`
    while idle, `… · esc stop` while a turn runs (stop does nothing idle, so it is not offered
    then). Narrower, what works now comes first: stop leads while a turn runs (Enter does not
    send then). `away`: the keyboard is elsewhere (a tool row, the chat, a
    table), so the hint names the key back to the message box instead of send and new line."""
    stop = compact(app_key(app, "stop", "escape"))
    if away:
        back = compact(app_key(app, "focus_composer", "alt+m"))
        if busy:
            return (
                f"{back} back to the message box · {stop} stop",
                f"{stop} stop · {back} message box",
                f"{stop} stop · {back}",
                f"{stop} stop",
            )
        return (f"{back} back to the message box", f"{back} message box", back)
    send = compact(app_key(app, "send", "enter"))
    newline = compact(app_key(app, "newline", "ctrl+j"))
    if busy:
        return (
            f"{send} send · {newline} new line · {stop} stop",
            f"{stop} stop · {newline} new line",
            f"{stop} stop {newline} newline",
            f"{stop} stop",
        )
    attach = compact(app_key(app, "attach", "ctrl+o"))
    return (
        f"{send} send · {newline} new line · {attach} attach",
        f"{send} send · {newline} new line",
        f"{send} send {newline} newline",
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

    def __init__(self, text: str, *, level: str = "", classes: str = "") -> None:
        level_class = f"-{level}" if level else ""
        super().__init__(Text(text), classes=f"{level_class} {classes}".strip())


DIALOG_HINT = "↑ answer the dialog first"
"""The hint while a dialog is up (a permission prompt's Esc denies: `esc stop` misled)."""


class ChatHint(Static):
    """The key hint under the composer, or the `@` completions while there are some."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.completions: list[str] = []
        self.busy = False
        """A turn is running: the hint names the stop key first."""
        self.away = False
        """The keyboard is not in the composer: the hint names the key back to it."""
        self.below = False
        """The chat is scrolled up from its end: the hint says more is below."""

    def on_mount(self) -> None:
        self.app.screen_change_signal.subscribe(self, lambda screen: self.refresh())

    def show_busy(self, busy: bool) -> None:
        self.busy = busy
        self.refresh()

    def show_away(self, away: bool) -> None:
        if away != self.away:
            self.away = away
            self.refresh()

    def show_below(self, below: bool) -> None:
        if below != self.below:
            self.below = below
            self.refresh()

    def show_completions(self, options: list[str]) -> None:
        self.completions = options
        self.refresh()

    def render(self) -> Text:
        if self.app.screen is not self.screen:  # a dialog is up: its keys, not these, work
            return Text(DIALOG_HINT, style="dim", no_wrap=True)
        if self.completions:
            return Text("tab → " + ", ".join(self.completions[:6]), style="bold", no_wrap=True)
        width = self.size.width
        shown = hints(self.app, busy=self.busy, away=self.away)
        if self.below:
            shown = below_hints(self.app, shown)
        return Text(next((h for h in shown if len(h) <= width), shown[-1]), no_wrap=True)
