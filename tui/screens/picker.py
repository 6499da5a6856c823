"""A small modal list to choose one item from (tables, models, conversations, earlier messages)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


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
            yield Static(Text("enter choose · esc cancel"), classes="picker-help")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
