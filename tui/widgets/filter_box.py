"""A table tab's filter box: it knows the condition the tab applied, so while its text is
something else (typed, not applied yet, or rejected as not valid) the tab can say so."""

from __future__ import annotations

from textual.actions import SkipAction
from textual.binding import Binding

from tui.key_hints import app_key, compact
from tui.widgets.fitting_input import FittingInput

REVERT_ID = "table.revert"
"""The binding id of Esc in the box (back to the applied condition), remappable in `[keys]`."""


class FilterBox(FittingInput):
    """The `/` box of a table tab. `applied` is the condition the rows show ("" for none);
    `rejected` the last text Enter could not apply. Esc puts the applied condition back."""

    BINDINGS = [
        Binding("escape", "revert", "Applied filter", id=REVERT_ID, show=False),
    ]

    def __init__(
        self, applied: str = "", *, example: str = "", language: str = "SQL", **kwargs: object
    ) -> None:
        super().__init__(placeholders(example, language), value=applied, **kwargs)
        self.applied = applied.strip()
        self.rejected: str | None = None

    @property
    def pending(self) -> bool:
        """The box shows a condition the rows do not: Enter has not applied it (or could not)."""
        return self.value.strip() != self.applied

    def mark_applied(self, condition: str | None) -> None:
        """The tab now shows `condition` (None: all rows)."""
        self.applied = (condition or "").strip()
        self.rejected = None

    def mark_rejected(self, typed: str) -> None:
        """Enter could not apply `typed`: the rows stay as they were."""
        self.rejected = typed.strip()

    def action_revert(self) -> None:
        """Esc: the text back to the applied condition; when it already is, Esc does what it
        does elsewhere (stop the answer)."""
        if not self.pending:
            raise SkipAction()
        self.value = self.applied
        self.cursor_position = len(self.value)

    def notes(self) -> tuple[str, ...]:
        """What the tab says while the box is pending, longest first (the widest that fits is
        shown): that the text is not applied, and the keys to apply it or go back."""
        esc = compact(app_key(self.app, REVERT_ID, "escape"))
        invalid = self.value.strip() == self.rejected
        state = "not valid, not applied" if invalid else "not applied"
        back = "restores the applied filter" if self.applied else "clears the box"
        forms = [
            f"Filter {state}: enter applies, {esc} {back}",
            f"{state.capitalize()}: enter applies, {esc} reverts",
            f"{'Not valid' if invalid else 'Not applied'}: enter applies, {esc} reverts",
            "Filter not applied",
        ]
        return tuple(dict.fromkeys(forms))  # the same form once


def placeholders(example: str, language: str) -> tuple[str, ...]:
    """The box's placeholder forms, longest first: the example, then the language and keys."""
    lead = f"/ filter, e.g. {example}" if example else f"/ {language} filter"
    return tuple(
        dict.fromkeys(
            [
                f"{lead}  ({language} condition; Enter applies, empty clears)",
                f"{lead}  ({language}; Enter applies)",
                f"{lead}  ({language})",
                lead,
            ]
        )
    )
