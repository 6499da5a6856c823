"""`textual.types` loads the widget modules it names (the directory tree, tree, select,
placeholder: ~25 M instructions at start-up) only when one of those names is used.

`textual.app` imports `textual.command`, which takes a single type alias from
`textual.types`; that module re-exports names from across Textual, among them types defined
in widget modules the first screen never shows. While `install`ed (the `tui` package does it
on import), importing `textual.types` gives a module that serves the names `textual._types`
defines (the same objects the real module re-exports) and runs the real module, into the same
module object, the first time any other name (or `__all__`) is asked for. After that it is
the real module. Nothing here imports Textual.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

NAME = "textual.types"
CHEAP_SOURCE = "textual._types"

_lock = threading.RLock()


class _Deferred(ModuleType):
    """`textual.types` before its body has run."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)  # `__path__` and the like: a plain module has none
        if not name.startswith("_"):
            cheap = sys.modules.get(CHEAP_SOURCE)
            if cheap is not None and name in vars(cheap):
                return vars(cheap)[name]
        return getattr(_run_body(self), name)


def _run_body(module: ModuleType) -> ModuleType:
    """Run the real module's code in `module` (once) and make it a plain module."""
    with _lock:
        if isinstance(module, _Deferred):
            changed: Any = module  # a module's class can be swapped; mypy says not
            loader = module.__dict__.pop("_textual_types_loader")
            changed.__class__ = ModuleType
            try:
                loader.exec_module(module)
            except BaseException:
                changed.__class__ = _Deferred
                module.__dict__["_textual_types_loader"] = loader
                raise
    return module


class _Loader:
    """Creates the module as usual but leaves its body for the first name asked for."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.real.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__["_textual_types_loader"] = self.real
        module.__class__ = _Deferred


class _Finder:
    """Finds `textual.types` as the path finder does, with the deferring loader."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != NAME:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = cast("Loader", _Loader(spec.loader))
        return spec


def install() -> None:
    """Defer `textual.types`'s body from its next import on (nothing when already imported)."""
    if NAME not in sys.modules and not any(f is _Finder for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder)
