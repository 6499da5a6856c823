"""Modules start-up imports but does not use, run on first use: `ssl` and
`asyncio.sslproto` (asyncio's event loop modules import both, `import ssl` and
`from . import sslproto`, only to use them in the methods that open TLS connections, which
the first screen never calls), and `platformdirs` with the `tempfile`, `shutil`, `bz2` and
`lzma` it imports (`textual.app` takes `user_downloads_path` from it, called only when the
app saves a file).

While `install`ed (`tabletalk` does it before its imports, the app removes it on its first
frame), importing one of `NAMES` gives a module whose body has not run: it runs, into the
same module object, the first time any attribute its body would set is asked for (from any
thread: one lock), and from then on it is the plain module. Only the import statement is
deferred; any use of the module (`ssl.SSLContext`, `from ssl import ...`) runs it first,
except the functions `FORWARDED` names: taken before the body has run, such a name gives a
function that runs the body when called and calls the module's own.
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

NAMES = frozenset({"ssl", "asyncio.sslproto", "platformdirs"})
FORWARDED = {"platformdirs": frozenset({"user_downloads_path"})}
"""module -> functions taken from it at import (`from platformdirs import ...` in
`textual.app`) and called later."""
LOADER_KEY = "_tabletalk_deferred_loader"

_lock = threading.RLock()


class _Deferred(ModuleType):
    """A module before its body has run."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and name != "__all__":
            raise AttributeError(name)  # `__path__`, `__wrapped__`: a plain module has none
        if name in FORWARDED.get(self.__name__, ()):
            return _forwarder(self, name)
        return getattr(run_body(self), name)


def _forwarder(module: ModuleType, name: str) -> Any:
    """A function that runs `module`'s body and calls its function `name`."""

    def forward(*args: Any, **kwargs: Any) -> Any:
        return getattr(run_body(module), name)(*args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = module.__name__
    return forward


def run_body(module: ModuleType) -> ModuleType:
    """Run a deferred module's body in `module` (once) and make it a plain module."""
    with _lock:
        if isinstance(module, _Deferred):
            changed: Any = module  # a module's class can be swapped; mypy says not
            loader = module.__dict__.pop(LOADER_KEY)
            changed.__class__ = ModuleType
            try:
                loader.exec_module(module)
            except BaseException:
                changed.__class__ = _Deferred
                module.__dict__[LOADER_KEY] = loader
                raise
    return module


def is_deferred(module: ModuleType | None) -> bool:
    """Whether `module`'s body is still waiting for its first use."""
    return isinstance(module, _Deferred)


class _Loader:
    """Creates the module as usual but leaves its body for its first use."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.real.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__[LOADER_KEY] = self.real
        module.__class__ = _Deferred


class _Finder:
    """Finds `NAMES` as the path finder does, with the deferring loader."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in NAMES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec  # only plain source modules: their body is all there is to defer
        spec.loader = cast("Loader", _Loader(spec.loader))
        return spec


def install() -> None:
    """Defer `NAMES` imported from now on (a module already imported stays as it is)."""
    if not any(f is _Finder for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder)


def uninstall() -> None:
    """Import as usual from now on; the modules already deferred still run on first use."""
    while _Finder in sys.meta_path:
        sys.meta_path.remove(_Finder)
