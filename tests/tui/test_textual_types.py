"""`textual.types` deferred by the `tui` package (tui/textual_types.py): the app imports none
of the widget modules it names, yet every name it exports is the real object once asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NAMED = ("textual.widgets._directory_tree", "textual.widgets._select",
         "textual.widgets._placeholder", "textual.widgets._tree")  # fmt: skip

EXPORTS = """
import json, sys
{prelude}
import textual.app
loaded = [name for name in {named!r} if name in sys.modules]
from textual.types import *
import textual.types as types
exported = {{
    name: f"{{getattr(value, '__module__', '')}}.{{getattr(value, '__qualname__', repr(value))}}"
    for name in types.__all__ for value in [getattr(types, name)]
}}
print(json.dumps({{"loaded": loaded, "exported": exported, "plain": type(types).__name__}}))
"""


def _run(prelude: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", EXPORTS.format(prelude=prelude, named=NAMED)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_textual_app_imported_after_tui_loads_no_widget_module_that_textual_types_names() -> None:
    deferred = _run("import tui")
    assert deferred["loaded"] == []
    plain = _run("")
    assert sorted(plain["loaded"]) == sorted(NAMED)  # what Textual itself imports


def test_every_name_textual_types_exports_is_the_real_one_once_asked_for() -> None:
    deferred = _run("import tui")
    plain = _run("")
    assert deferred["exported"] == plain["exported"]
    assert len(deferred["exported"]) >= 20
    assert deferred["plain"] == "module"  # the real module's body has run
