"""An Input whose placeholder is the longest of its forms that fits the box, so at 80 columns
the staging and table filters still say how to apply them instead of being cut mid-hint."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class FittingInput(Input):
    """`hints` are the placeholder's forms, longest first; the first that fits is shown (the
    last, cut with …, when none does)."""

    def __init__(self, hints: tuple[str, ...], **kwargs: object) -> None:
        super().__init__(placeholder=hints[0], **kwargs)  # type: ignore[arg-type]
        self.hints = hints

    def show_hints(self, hints: tuple[str, ...]) -> None:
        """Offer other forms (e.g. what a chosen bulk group shows) and pick one for the width."""
        self.hints = hints
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        room = self.content_region.width - 1  # the cursor's cell after the text
        if room <= 0:
            self.placeholder = self.hints[0]
            return
        fits = next((h for h in self.hints if len(h) <= room), None)
        self.placeholder = fits or self.hints[-1][: max(1, room - 1)] + "…"
