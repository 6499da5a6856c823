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
function that runs the body when called and calls the module's own. The hook itself is
tui/import_hooks.py's.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from tui import import_hooks
from tui.import_hooks import NOT_SERVED, is_deferred, run_body

__all__ = ["FORWARDED", "NAMES", "install", "installed", "is_deferred", "uninstall"]

NAMES = frozenset({"ssl", "asyncio.sslproto", "platformdirs"})
FORWARDED = {"platformdirs": frozenset({"user_downloads_path"})}
"""module -> functions taken from it at import (`from platformdirs import ...` in
`textual.app`) and called later."""


def _forwarder(module: ModuleType, name: str) -> Any:
    """For a name in FORWARDED: a function that runs `module`'s body and calls its `name`."""
    if name not in FORWARDED.get(module.__name__, ()):
        return NOT_SERVED

    def forward(*args: Any, **kwargs: Any) -> Any:
        return getattr(run_body(module), name)(*args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = module.__name__
    return forward


def install() -> None:
    """Defer `NAMES` imported from now on (a module already imported stays as it is)."""
    import_hooks.defer(NAMES, _forwarder)


def uninstall() -> None:
    """Import as usual from now on; the modules already deferred still run on first use."""
    import_hooks.unhook(NAMES)


def installed() -> bool:
    """Whether an import of `NAMES` would be deferred now."""
    return any(import_hooks.hooked(name) for name in NAMES)
