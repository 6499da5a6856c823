"""The one-line header: store, model, permission mode, token counts and staged changes."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static


def short_count(n: int) -> str:
    """1234 → 1.2k, 1234567 → 1.2M; small numbers as they are."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


def short_model(model_id: str) -> str:
    """A model id without its region prefix and version suffix, for the header."""
    name = model_id.split(".", 1)[1] if model_id.count(".") >= 2 else model_id
    return name.split(":", 1)[0]


class StatusBar(Static):
    """Shows the session's state; every field is a reactive set by the app."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    store_label: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    mode: reactive[str] = reactive("manual")
    tokens: reactive[tuple[int, int, int]] = reactive((0, 0, 0))
    staged: reactive[int] = reactive(0)
    busy: reactive[bool] = reactive(False)

    def render(self) -> Text:
        tokens_in, tokens_out, cached = self.tokens
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("tabletalk", style="bold")
        text.append("  ▸ ", style="dim")
        text.append(self.store_label)
        text.append("  model ", style="dim")
        text.append(short_model(self.model) or "…")
        text.append("  mode ", style="dim")
        mode_style = {"manual": "green", "auto": "yellow", "full-auto": "bold red"}.get(
            self.mode, ""
        )
        text.append(self.mode, style=mode_style)
        text.append("  staged ", style="dim")
        text.append(str(self.staged), style="bold yellow" if self.staged else "")
        text.append("  tokens ", style="dim")
        text.append(
            f"{short_count(tokens_in)} in / {short_count(tokens_out)} out / {short_count(cached)} cached"
        )
        if self.busy:
            text.append("  ● working", style="italic cyan")
        return text
