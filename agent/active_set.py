"""The active set: the tools sent to the model at each step.

Inline tools in catalog order, then discovered tools in discovery order. Append-only, so
the request prefix stays stable for prompt caching; discoveries last the conversation (saved
by what each tool is, `Toolset.identity`, and resolved to its current name when resumed).
"""

from __future__ import annotations

from collections.abc import Iterable


class ActiveSet:
    """Ordered, append-only set of tool names."""

    def __init__(self, inline: Iterable[str], discovered: Iterable[str] = ()) -> None:
        self._inline = list(dict.fromkeys(inline))
        self._discovered: list[str] = []
        for name in discovered:
            self.add(name)

    @property
    def inline(self) -> tuple[str, ...]:
        return tuple(self._inline)

    @property
    def discovered(self) -> tuple[str, ...]:
        return tuple(self._discovered)

    def names(self) -> tuple[str, ...]:
        """The toolConfig order: inline, then discovered."""
        return (*self._inline, *self._discovered)

    def add(self, name: str) -> bool:
        """Activate a discovered tool; False when it was already active."""
        if name in self:
            return False
        self._discovered.append(name)
        return True

    def __contains__(self, name: object) -> bool:
        return name in self._inline or name in self._discovered

    def unavailable_text(self, name: str) -> str:
        """The exact tool-result text for a call outside the active set."""
        return (
            f"Model tried to call unavailable tool '{name}'. "
            f"Available tools: {', '.join(self.names())}."
        )
