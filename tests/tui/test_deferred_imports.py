"""Imports deferred while `tabletalk` starts (tui/deferred_imports.py): the module's body runs
on its first use, once, from any thread, and what uses it sees the real module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DEFERRED = """
import json, sys, threading
from tui import deferred_imports
deferred_imports.install()
import asyncio
import textual.app
deferred_imports.uninstall()
found = {"deferred": [name for name in sorted(deferred_imports.NAMES)
                      if deferred_imports.is_deferred(sys.modules.get(name))]}
import ssl
found["still deferred after uninstall"] = deferred_imports.is_deferred(ssl)
found["downloads"] = str(textual.app.user_downloads_path())  # the forwarder runs platformdirs
import platformdirs
found["platformdirs ran"] = not deferred_imports.is_deferred(platformdirs)
found["same downloads"] = found["downloads"] == str(platformdirs.user_downloads_path())
results = []
threads = [threading.Thread(target=lambda: results.append(ssl.SSLContext)) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
from ssl import SSLContext
found["one class"] = len({id(r) for r in results}) == 1 and results[0] is SSLContext
found["sslproto"] = hasattr(sys.modules["asyncio.sslproto"], "SSLProtocol")
found["plain"] = [type(sys.modules[n]).__name__ for n in ("ssl", "asyncio.sslproto")]
print(json.dumps(found))
"""


def test_deferred_modules_run_on_first_use_and_are_the_real_modules_then() -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEFERRED], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {
        "deferred": ["asyncio.sslproto", "platformdirs", "ssl"],
        "still deferred after uninstall": True,
        "downloads": found["downloads"],
        "platformdirs ran": True,
        "same downloads": True,
        "one class": True,
        "plain": ["module", "module"],
        "sslproto": True,
    }


def test_a_failing_body_stays_deferred_and_raises_again() -> None:
    from types import ModuleType

    from tui import import_hooks

    class Failing:
        calls = 0

        def exec_module(self, module: ModuleType) -> None:
            Failing.calls += 1
            raise ImportError("broken")

    module = ModuleType("broken_module")
    import_hooks.DeferringLoader(Failing()).exec_module(module)
    for _ in range(2):
        try:
            module.anything  # noqa: B018
        except ImportError:
            pass
        else:
            raise AssertionError("the body's error was swallowed")
    assert Failing.calls == 2 and import_hooks.is_deferred(module)
    try:
        module.__wrapped__  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("a dunder name ran the body")
    assert Failing.calls == 2


def test_a_thread_asking_while_the_body_runs_waits_for_the_whole_module(tmp_path) -> None:
    """Thread A starts a deferred module's slow body; thread B asks for a name the body sets
    last. B got AttributeError from a half-built module (urllib3 would then have taken ssl
    for missing); it now waits and gets the value."""
    import importlib
    import sys
    import threading

    from tui import import_hooks

    (tmp_path / "tt_slow_body.py").write_text(
        "import time\nfirst = 1\ntime.sleep(0.5)\nsecond = 2\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import_hooks.defer(["tt_slow_body"])
        module = importlib.import_module("tt_slow_body")
        assert import_hooks.is_deferred(module)
        got: dict[str, object] = {}

        def ask(name: str) -> None:
            try:
                got[name] = getattr(module, name)
            except AttributeError as exc:
                got[name] = exc

        a = threading.Thread(target=ask, args=("first",))
        a.start()
        while "first" not in module.__dict__:  # A's body is running
            threading.Event().wait(0.01)
        b = threading.Thread(target=ask, args=("second",))
        b.start()
        a.join(10)
        b.join(10)
        assert got == {"first": 1, "second": 2}
        assert not import_hooks.is_deferred(module)
    finally:
        import_hooks.unhook(["tt_slow_body"])
        sys.modules.pop("tt_slow_body", None)
        sys.path.remove(str(tmp_path))
