"""`textual.types` loads the widget modules it names (the directory tree, tree, select,
placeholder: ~25 M instructions at start-up) only when one of those names is used.

`textual.app` imports `textual.command`, which takes a single type alias from
`textual.types`; that module re-exports names from across Textual, among them types defined
in widget modules the first screen never shows. While `install`ed (the `tui` package does it
on import), importing `textual.types` gives a module that serves the names `textual._types`
defines (the same objects the real module re-exports) and runs the real module, into the same
module object, the first time any other name (or `__all__`) is asked for. After that it is
the real module. Nothing here imports Textual; the hook is tui/import_hooks.py's.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from tui import import_hooks
from tui.import_hooks import NOT_SERVED

NAME = "textual.types"
CHEAP_SOURCE = "textual._types"


def _cheap(module: ModuleType, name: str) -> Any:
    """A public name `textual._types` defines (the object the real module re-exports)."""
    if not name.startswith("_"):
        cheap = sys.modules.get(CHEAP_SOURCE)
        if cheap is not None and name in vars(cheap):
            return vars(cheap)[name]
    return NOT_SERVED


def install() -> None:
    """Defer `textual.types`'s body from its next import on (nothing when already imported)."""
    if NAME not in sys.modules:
        import_hooks.defer([NAME], _cheap)
