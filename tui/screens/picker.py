"""A small modal list to choose one item from (tables, models, conversations, earlier messages)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.terminal_text import visible

HINT = "enter choose · type to jump · esc cancel"


class EndStopList(OptionList):
    """An OptionList whose cursor stops at the first and last option instead of wrapping
    (Down on the newest message must not jump to the oldest)."""

    def action_cursor_down(self) -> None:
        if self.highlighted is None or self.highlighted < self.option_count - 1:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if self.highlighted is None or self.highlighted > 0:
            super().action_cursor_up()


class PickerScreen(ModalScreen[str | None]):
    """Options as (id, label) pairs; Enter picks (dismisses with the id), Esc cancels (None).
    Typing jumps to the first option whose label starts with (else holds) what was typed.

    `highlighted` is the option the cursor starts on (the first when None)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel")]

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical {
        width: 80; max-width: 95%; height: auto; max-height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    PickerScreen OptionList { height: auto; max-height: 24; border: none; }
    PickerScreen .picker-help { color: $text-muted; }
    """

    def __init__(
        self,
        title: str,
        options: list[tuple[str, str]],
        *,
        help_text: str = "",
        empty: str = "Nothing to choose from.",
        highlighted: int | None = None,
    ) -> None:
        super().__init__()
        self.picker_title = title
        self.options = options
        self.help_text = help_text
        self.empty = empty
        self.highlighted = highlighted
        self.typed = ""

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = escape(self.picker_title)
            if self.help_text:
                yield Static(Text(self.help_text), classes="picker-help")
            if self.options:
                options = EndStopList(*(Option(Text(label), id=key) for key, label in self.options))
                if self.highlighted is not None:
                    options.highlighted = self.highlighted
                yield options
            else:
                yield Static(Text(self.empty))
            yield Static(Text(HINT), classes="picker-help", id="picker-hint")

    def on_key(self, event: events.Key) -> None:
        """Type to jump: letters extend what was typed, backspace takes one back."""
        if not self.options:
            return
        if event.key == "backspace" and self.typed:
            typed = self.typed[:-1]
        elif event.is_printable and event.character and not event.character.isspace():
            typed = self.typed + event.character
            if self._match(typed) is None:  # a fresh start when the longer text fits nothing
                typed = event.character
        else:
            return
        event.stop()
        event.prevent_default()
        self.typed = typed
        found = self._match(typed)
        if found is not None:
            self.query_one(OptionList).highlighted = found
        shown = visible(typed)
        hint = f"{HINT} · typed: {shown}" if typed else HINT
        if typed and found is None:
            hint += " (no match)"
        self.query_one("#picker-hint", Static).update(Text(hint))

    def _match(self, typed: str) -> int | None:
        """The first option whose label starts with `typed`, else the first holding it."""
        if not typed:
            return None
        wanted = typed.casefold()
        labels = [label.casefold() for _, label in self.options]
        for test in (str.startswith, str.__contains__):
            for index, label in enumerate(labels):
                if test(label, wanted):
                    return index
        return None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
