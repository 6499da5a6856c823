"""A row of buttons that wraps onto more lines when it does not fit, so at 80 columns every
button of a bar stays visible and clickable instead of running off the panel's edge."""

from __future__ import annotations

from textual.geometry import Region, Size
from textual.layout import ArrangeResult, Layout
from textual.layouts.horizontal import HorizontalLayout
from textual.widget import Widget


class FlowLayout(Layout):
    """Children left to right at their own widths (as `horizontal` sizes them), starting a new
    line where the next would cross the right edge."""

    name = "flow"

    def arrange(
        self, parent: Widget, children: list[Widget], size: Size, greedy: bool = True
    ) -> ArrangeResult:
        natural = HorizontalLayout().arrange(parent, children, Size(10**5, size.height), False)
        placements = []
        x = y = line_height = 0
        for placement in natural:
            region, margin = placement.region, placement.margin
            width = region.width + margin.right
            if x and x + region.width > size.width:
                x, y, line_height = 0, y + line_height, 0
            moved = Region(x + margin.left, y + margin.top, region.width, region.height)
            placements.append(placement._replace(region=moved))
            x += margin.left + width
            line_height = max(line_height, region.height + margin.top + margin.bottom)
        return placements


class FlowBar(Widget):
    """A container laid out by `FlowLayout`; give it `height: auto`."""

    DEFAULT_CSS = "FlowBar { height: auto; }"

    _flow = FlowLayout()

    @property
    def layout(self) -> Layout:
        return self._flow
