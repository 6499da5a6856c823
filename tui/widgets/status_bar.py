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


COMPACT_BELOW = 100
"""Header width (columns) under which labels are dropped so every value still fits."""


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
        """Busy marker first and tokens last, both kept whole; the store label is what gets cut.

        Below COMPACT_BELOW columns the labels go and tokens read `84↑ 49↓ 0c`.
        """
        width = max(self.size.width - 2, 1)
        compact = width < COMPACT_BELOW
        tokens_in, tokens_out, cached = self.tokens
        mode_style = {"manual": "green", "auto": "yellow", "full-auto": "bold red"}.get(
            self.mode, ""
        )
        head = Text(no_wrap=True)
        if self.busy:
            head.append("● " if compact else "● working  ", style="bold cyan")
        head.append("tabletalk", style="bold")
        head.append(" ▸ " if compact else "  ▸ ", style="dim")
        tail = Text(no_wrap=True)
        tail.append("  " if compact else "  model ", style="dim")
        tail.append(short_model(self.model) or "…")
        tail.append("  " if compact else "  mode ", style="dim")
        tail.append(self.mode, style=mode_style)
        tail.append("  staged ", style="dim")
        tail.append(str(self.staged), style="bold yellow" if self.staged else "")
        tail.append("  " if compact else "  tokens ", style="dim")
        if compact:
            tail.append(
                f"{short_count(tokens_in)}↑ {short_count(tokens_out)}↓ {short_count(cached)}c"
            )
        else:
            tail.append(
                f"{short_count(tokens_in)} in / {short_count(tokens_out)} out / "
                f"{short_count(cached)} cached"
            )
        room = width - head.cell_len - tail.cell_len
        store = self.store_label
        if len(store) > room:  # keep the end of a path: the file name says the most
            store = "…" + store[len(store) - room + 1 :] if room > 1 else ""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(head)
        text.append(store)
        text.append_text(tail)
        return text
