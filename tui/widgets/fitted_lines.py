"""Text laid out for the width it is drawn at: a heading with an aside (who, when) in the longest
form that fits beside it, or on a line of its own when none does, and lines that wrap under their own text (a hanging
indent) instead of back at the left edge.

A Textual Visual, so an OptionList or a Static lays it out again at every width it is given
(the staging panel is ~44 columns at 80, ~66 at 120).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

ASIDE_GAP = "   "
"""Between a heading and its aside when they share a line."""
ASIDE_INDENT = "  "
"""Before an aside on its own line."""


@dataclass(frozen=True)
class Line:
    """One logical line: `lead` (e.g. `  status: `), then `body`, which wraps under itself."""

    body: Content
    lead: Content = field(default_factory=Content)


class FittedLines(Visual):
    """A heading with an aside, then lines with hanging indents. `asides` are the aside's forms,
    longest first: the first that fits beside the heading is drawn there; when none does, the
    first goes on the next line."""

    def __init__(self, heading: Content, asides: tuple[Content, ...], lines: list[Line]) -> None:
        self.heading = heading
        self.asides = asides
        self.lines = lines
        self._laid_out: tuple[int, Content] | None = None

    def __str__(self) -> str:
        """The text on unlimited width (what tests and logs read)."""
        return self.layout(10**6).plain

    def layout(self, width: int) -> Content:
        """The lines for `width` cells, joined by newlines (cached for the last width)."""
        if self._laid_out is not None and self._laid_out[0] == width:
            return self._laid_out[1]
        out = self._heading_lines(width)
        for line in self.lines:
            out += hang(line, width)
        laid_out = Content("\n").join(out)
        self._laid_out = (width, laid_out)
        return laid_out

    def _heading_lines(self, width: int) -> list[Content]:
        if not self.heading:
            return []
        heading = hang(Line(self.heading), width)
        if not self.asides:
            return heading
        room = width - self.heading.cell_length - len(ASIDE_GAP)
        beside = next((a for a in self.asides if a.cell_length <= room), None)
        if beside is not None:
            return [Content.assemble(self.heading, ASIDE_GAP, beside)]
        return heading + hang(Line(self.asides[0], Content(ASIDE_INDENT)), width)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self.layout(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max((line.cell_length for line in self.layout(container_width).split()), default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.layout(width).get_height(rules, width)


def hang(line: Line, width: int) -> list[Content]:
    """`line` wrapped to `width`: its lead, then its body wrapped under the body's first
    character (under the lead's start plus 2 when the lead takes more than half the width)."""
    lead = line.lead
    if lead.cell_length + line.body.cell_length <= width:
        return [Content.assemble(lead, line.body)]
    indent = lead.cell_length
    if indent > width // 2:
        indent = len(lead.plain) - len(lead.plain.lstrip(" ")) + 2
    first_width = max(1, width - lead.cell_length)
    rest_width = max(1, width - indent)
    body = line.body
    first = body.wrap(first_width)[0]
    start = len(first.plain)
    start += len(body.plain[start:]) - len(body.plain[start:].lstrip(" "))
    rest = body[start:]
    wrapped = rest.wrap(rest_width) if rest else []
    pad = " " * indent
    return [Content.assemble(lead, first), *(Content.assemble(pad, piece) for piece in wrapped)]


class CutLine(Visual):
    """One line cut to the width it is drawn at, ending in `…` when cut (a bulk group's line
    where the staging panel is short of rows)."""

    def __init__(self, content: Content) -> None:
        self.content = content

    def __str__(self) -> str:
        return self.content.plain

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        cut = self.content.truncate(width, ellipsis=True)
        return cut.render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return min(self.content.cell_length, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return 1
