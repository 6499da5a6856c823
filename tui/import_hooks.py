"""Import hooks for start-up: modules whose body waits for its first use (`defer`), and
modules patched right after their body runs (`hook` with a `PatchingLoader`).

One finder at the front of `sys.meta_path` serves every hooked name; it finds a module as the
path finder does and wraps its loader. A deferred module is created as usual but its body
runs, into the same module object, the first time an attribute its body would set is asked
for (from any thread: one lock); from then on it is a plain module. A `Serve` function may
answer some names before the body has run (names another, already loaded module defines, or
functions that run the body when called). The standard library's `importlib.util.LazyLoader`
does the first part, but on Python 3.11 it is not thread-safe and it cannot answer a name
without running the body, which `from platformdirs import user_downloads_path` needs.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

LOADER_KEY = "_tabletalk_deferred_loader"
NOT_SERVED: Any = object()
"""What a `Serve` function returns for a name it does not answer."""

Serve = Callable[[ModuleType, str], Any]
"""(deferred module, attribute name) -> the value, or NOT_SERVED to run the body."""
Wrap = Callable[[Any], Any]
"""A module's loader -> the loader to use instead (None: keep it)."""

_lock = threading.RLock()
_hooks: dict[str, Wrap] = {}
_served: dict[str, Serve] = {}


class _Deferred(ModuleType):
    """A module before its body has run."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and name != "__all__":
            raise AttributeError(name)  # `__path__`, `__wrapped__`: a plain module has none
        serve = _served.get(self.__name__)
        if serve is not None:
            value = serve(self, name)
            if value is not NOT_SERVED:
                return value
        with _lock:  # another thread running the body holds it until the body is done
            if isinstance(self, _Deferred) and LOADER_KEY not in self.__dict__:
                # The body is running in this thread (an import cycle): as any module
                # part-way through its import, it lacks what it has not set yet.
                raise AttributeError(
                    f"partially initialized module {self.__name__!r} has no attribute {name!r}"
                )
            run_body(self)
        return getattr(self, name)


def run_body(module: ModuleType) -> ModuleType:
    """Run a deferred module's body in `module` (once) and make it a plain module. The module
    stays deferred while its body runs, so another thread asking it for a name waits on the
    lock for the whole module instead of finding a half-built plain one."""
    with _lock:
        if isinstance(module, _Deferred) and LOADER_KEY in module.__dict__:
            loader = module.__dict__.pop(LOADER_KEY)
            try:
                loader.exec_module(module)
            except BaseException:
                module.__dict__[LOADER_KEY] = loader
                raise
            changed: Any = module  # a module's class can be swapped; mypy says not
            changed.__class__ = ModuleType
    return module


def is_deferred(module: ModuleType | None) -> bool:
    """Whether `module`'s body is still waiting for its first use."""
    return isinstance(module, _Deferred)


class _Wrapper:
    """A loader that creates the module as `real` does."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.real.create_module(spec)
        return created


class DeferringLoader(_Wrapper):
    """Creates the module as usual but leaves its body for its first use."""

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__[LOADER_KEY] = self.real
        module.__class__ = _Deferred


class PatchingLoader(_Wrapper):
    """Runs the module as usual, then `patch(module)`."""

    def __init__(self, real: Any, patch: Callable[[ModuleType], object]) -> None:
        super().__init__(real)
        self.patch = patch

    def exec_module(self, module: ModuleType) -> None:
        self.real.exec_module(module)
        self.patch(module)


class _Finder:
    """Finds hooked modules as the path finder does, with their wrapped loader."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        wrap = _hooks.get(fullname)
        if wrap is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        wrapped = wrap(spec.loader)
        if wrapped is not None:
            spec.loader = cast("Loader", wrapped)
        return spec


def hook(name: str, wrap: Wrap) -> None:
    """Load `name` with the loader `wrap` gives, from its next import on."""
    _hooks[name] = wrap
    if not any(f is _Finder for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder)


def unhook(names: Iterable[str]) -> None:
    """Import `names` as usual from now on (modules already deferred still run on first use)."""
    for name in names:
        _hooks.pop(name, None)
    if not _hooks:
        while _Finder in sys.meta_path:
            sys.meta_path.remove(_Finder)


def hooked(name: str) -> bool:
    """Whether the next import of `name` goes through a hook."""
    return name in _hooks and _Finder in sys.meta_path


def _deferring(real: Any) -> DeferringLoader | None:
    # Only plain source modules: their body is all there is to defer.
    return DeferringLoader(real) if type(real) is importlib.machinery.SourceFileLoader else None


def defer(names: Iterable[str], serve: Serve | None = None) -> None:
    """Defer the bodies of `names` imported from now on; `serve` answers names before."""
    for name in names:
        if serve is not None:
            _served[name] = serve
        hook(name, _deferring)
