"""The key footer: the app's shown bindings on one line, drawn by one widget.

Textual's Footer mounts a widget per key (ten here, each styled with two component classes and
laid out on its own), stays empty until the first bindings signal, and then rebuilds all of
them on every such signal (five times while the app starts). This footer draws the same line
(compact style: `key description`, one space apart, the palette key on the right after a thin
bar) as one renderable, with the first frame, and redraws only when what it shows changed. A
click on a key presses it, hovering shows its tooltip, as in Textual's. Under a modal screen it
shows the modal's keys: the screen's own do nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color
from textual.screen import Screen
from textual.widget import Widget


@dataclass(frozen=True)
class FooterEntry:
    """One key as the footer shows it."""

    key: str
    """The key it presses (what a click simulates)."""
    display: str
    """How the key is written (`^s`, `f1`)."""
    description: str
    action: str
    enabled: bool
    tooltip: str


class KeyFooter(Widget, can_focus=False):
    """One line of key hints; a click on one presses its key."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {
        "key-footer--key",
        "key-footer--description",
        "key-footer--hover",
        "key-footer--bar",
    }
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        &:hover { pointer: pointer; }
        & > .key-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .key-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .key-footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        & > .key-footer--bar { color: $foreground 20%; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: tuple[FooterEntry, ...] = ()
        self.palette: FooterEntry | None = None
        self._hovered: FooterEntry | None = None
        self._spans: list[tuple[int, int, FooterEntry]] = []
        self._shown: list[str] = []
        self._modal: Screen[object] | None = None
        """The modal screen above this footer's screen, whose keys it shows."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.app.screen_change_signal.subscribe(self, self._screen_changed)
        self._read_bindings()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)
        self.app.screen_change_signal.unsubscribe(self)
        if self._modal is not None:
            self._modal.bindings_updated_signal.unsubscribe(self)
            self._modal = None

    def _screen_changed(self, screen: Screen[object]) -> None:
        """A modal above this footer's screen: its keys are the ones that work, so they are
        the ones shown (the screen's own come back when it closes)."""
        modal = screen if screen.is_modal and screen is not self.screen else None
        if modal is self._modal or not self.is_attached:
            return
        if self._modal is not None:
            self._modal.bindings_updated_signal.unsubscribe(self)
        self._modal = modal
        if modal is not None:
            modal.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._read_bindings()

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if self.is_attached and screen is (self._modal or self.screen):
            self._read_bindings()

    def _read_bindings(self) -> None:
        """The shown bindings of the focused chain (of the modal on top, if any); redraw only
        if they changed."""
        app = self.app
        active = (self._modal or self.screen).active_bindings
        seen: set[str] = set()
        entries: list[FooterEntry] = []
        for _, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in seen:  # one entry per action
                continue
            seen.add(binding.action)
            entries.append(
                FooterEntry(
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    enabled,
                    tooltip,
                )
            )
        palette = None
        found = active.get(app.COMMAND_PALETTE_BINDING) if app.ENABLE_COMMAND_PALETTE else None
        if found is not None:
            binding = found.binding
            palette = FooterEntry(
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                found.enabled,
                binding.tooltip or binding.description,
            )
        if (tuple(entries), palette) != (self.entries, self.palette):
            self.entries, self.palette = tuple(entries), palette
            self.refresh()

    def _item(self, entry: FooterEntry, *, described: bool = True) -> Text:
        """`key description` in the footer's styles (hovered: highlighted; disabled: dim)."""
        key_style = self.get_component_rich_style("key-footer--key", partial=True)
        description_style = self.get_component_rich_style("key-footer--description", partial=True)
        text = Text.assemble((entry.display, key_style))
        if entry.description and described:
            text.append(" " + entry.description, description_style)
        base = self.rich_style
        if entry is self._hovered:
            base = base + self._hover_style()
        if not entry.enabled:
            base = base + Style(dim=True)
        text.stylize_before(base)
        return text

    def _hover_style(self) -> Style:
        hover = self.get_component_styles("key-footer--hover")
        background = Color.from_rich_color(self.rich_style.bgcolor) + hover.background
        return Style(color=(background + hover.color).rich_color, bgcolor=background.rich_color)

    def _palette_text(self, *, described: bool) -> Text:
        """`▏^p palette ` on the right (`▏^p ` without its description); empty without one."""
        right = Text(end="")
        if self.palette is None:
            return right
        bar = self.get_component_styles("key-footer--bar").color
        background = Color.from_rich_color(self.rich_style.bgcolor)
        bar_style = Style(color=(background + bar).rich_color)
        if self.palette is self._hovered:  # the bar is the palette key's left border
            bar_style += Style(bgcolor=self._hover_style().bgcolor)
        right.append("▏", bar_style)
        right.append_text(self._item(self.palette, described=described))
        right.append(" ")
        return right

    def render(self) -> Text:
        """Every key with its description; when that is wider than the footer, the palette key
        drops its description first (hovering it still names it), then the keys that do not
        fit whole are left out at the right (never a cut `f2 Full cha`)."""
        width = self.size.width
        items = [self._item(entry) for entry in self.entries]
        left_width = sum(item.cell_len + 1 for item in items)
        right = self._palette_text(described=True)
        if left_width + right.cell_len > width:
            right = self._palette_text(described=False)
        line = Text(no_wrap=True, overflow="crop", end="")
        spans: list[tuple[int, int, FooterEntry]] = []
        for entry, item in zip(self.entries, items, strict=True):
            spans.append((len(line), len(line) + item.cell_len, entry))
            line.append_text(item)
            line.append(" ")
        room = max(width - right.cell_len, 0)
        whole = [(start, end, e) for start, end, e in spans if end <= room]
        line.truncate(whole[-1][1] if whole else 0)  # a key that does not fit whole is left out
        line.pad_right(room - line.cell_len)
        self._spans = whole
        self._shown = [e.action for _, _, e in whole]
        if self.palette is not None and right.cell_len <= width:
            self._spans.append((room, width, self.palette))
            self._shown.append(self.palette.action)
            line.append_text(right)
        line.stylize_before(self.rich_style)
        return line

    def shown_actions(self) -> list[str]:
        """The actions the last drawn line showed whole, key and description (the palette
        key counts with or without its description)."""
        return list(self._shown)

    def _entry_at(self, x: int) -> FooterEntry | None:
        return next((e for start, end, e in self._spans if start <= x < end), None)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        entry = self._entry_at(event.x)
        if entry is not self._hovered:
            self._hovered = entry
            self.tooltip = entry.tooltip if entry is not None and entry.tooltip else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hovered is not None:
            self._hovered = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        entry = self._entry_at(event.x)
        if entry is None:
            return
        if entry.enabled:
            self.app.simulate_key(entry.key)
        else:
            self.app.bell()
