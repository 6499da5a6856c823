"""The one-line header: store, model, permission mode, token counts (and the turn's read
units on a store that counts them), staged changes, and a store's retrying notice."""

from __future__ import annotations

import re

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


def short_units(units: float) -> str:
    """Read units as DynamoDB bills them (halves): 0.5, 12, 1.2k."""
    if units >= 1_000:
        return short_count(int(units))
    return f"{units:.1f}".removesuffix(".0")


def short_model(model_id: str) -> str:
    """A model id as a person names it: its alias when it is a known model (as the picker,
    --model and the notices name it: `haiku-4.5`), else the id without region prefix,
    provider, date or version suffix (`us.meta.llama3-1-70b-instruct-v1:0` →
    `llama3-1-70b-instruct`)."""
    from agent.bedrock.models import alias_of

    alias = alias_of(model_id)
    if alias is not None:
        return alias
    if model_id.startswith("arn:"):  # an inference profile or provisioned model ARN
        return model_id.rsplit("/", 1)[-1]
    name = model_id.split(":", 1)[0]
    parts = name.split(".")
    if len(parts) >= 3 and parts[0] in REGION_PREFIXES:
        parts = parts[1:]
    if len(parts) >= 2:
        parts = parts[1:]  # the provider (anthropic., amazon., meta., …)
    name = ".".join(parts)
    name = re.sub(r"-\d{8}(?=-|$)", "", name)
    return re.sub(r"-v\d+$", "", name) or model_id


REGION_PREFIXES = frozenset({"us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"})
"""Inference-profile prefixes in front of a model id."""

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
    streaming: reactive[int] = reactive(0)
    """Output tokens of the answer streaming in, estimated from its text until the model
    reports them (shown added to the out count, marked `~`)."""
    estimated: reactive[bool] = reactive(False)
    """The out count includes an estimate (steps stopped before the model reported usage)."""
    staged: reactive[int] = reactive(0)
    busy: reactive[bool] = reactive(False)
    read_units: reactive[float | None] = reactive(None)
    """Read units the current (or last) turn consumed; None: the store does not count them."""
    notice: reactive[str] = reactive("")
    """A passing store status (DynamoDB throttling: retrying), shown first while set."""

    def render(self) -> Text:
        """The widest layout that fits, from labelled to terse; the store name is the last
        thing to go (its full label, then its file name, then the end of that).

        Busy marker first and tokens last, both kept whole.
        """
        width = max(self.size.width - 2, 1)
        store = self.store_label
        names = [store]
        if "/" in store or "\\" in store:
            names.append(re.split(r"[/\\]", store)[-1])
        styles: tuple[str, ...] = ("wide", "compact", "terse", "bare")
        if width < COMPACT_BELOW:
            styles = styles[1:]
        for style in styles:
            head, tail = self._parts(style)
            for name in names:
                if head.cell_len + len(name) + tail.cell_len <= width:
                    return self._join(head, name, tail)
        room = width - head.cell_len - tail.cell_len
        name = names[-1]
        if len(name) > room:  # keep the end: the file name says the most
            name = "…" + name[len(name) - room + 1 :] if room > 1 else ""
        return self._join(head, name, tail)

    def _parts(self, style: str) -> tuple[Text, Text]:
        """The text before and after the store name in one layout style."""
        wide = style == "wide"
        tokens_in, tokens_out, cached = self.tokens
        out = ("~" if self.streaming or self.estimated else "") + short_count(
            tokens_out + self.streaming
        )
        mode_style = {"manual": "green", "auto": "yellow", "full-auto": "bold red"}.get(
            self.mode, ""
        )
        head = Text(no_wrap=True)
        if self.notice:
            head.append(f"⟳ {self.notice}  ", style="bold yellow")
        if self.busy:
            head.append("● working  " if wide else "● ", style="bold cyan")
        if style != "bare":  # the app's own name goes before the store's
            head.append("tabletalk", style="bold")
            head.append("  ▸ " if wide else " ▸ ", style="dim")
        tail = Text(no_wrap=True)
        tail.append("  model " if wide else "  ", style="dim")
        tail.append(short_model(self.model) or "…")
        tail.append("  mode " if wide else "  ", style="dim")
        tail.append(self.mode, style=mode_style)
        tail.append("  staged ", style="dim")
        tail.append(f"{self.staged:,}", style="bold yellow" if self.staged else "")
        if wide:
            tail.append("  tokens ", style="dim")
            tail.append(f"{short_count(tokens_in)} in / {out} out / {short_count(cached)} cached")
        else:
            tail.append("  tokens " if style == "compact" else "  tok ", style="dim")
            tail.append(f"{short_count(tokens_in)}/{out}")
        if self.read_units is not None:
            tail.append("  read units " if wide else "  RU ", style="dim")
            tail.append(short_units(self.read_units))
        return head, tail

    @staticmethod
    def _join(head: Text, store: str, tail: Text) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(head)
        text.append(store)
        text.append_text(tail)
        return text
