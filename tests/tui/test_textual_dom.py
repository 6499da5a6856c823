"""Textual's DOMNode given a faster `__init_subclass__` by the `tui` package
(tui/textual_dom.py): every widget, screen and app class gets the class attributes Textual's
own method gives, and Textual's own stays when it is not the one the patch was written for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

COMPARE = """
import importlib, json, pkgutil, sys
{prelude}
import tui
import textual.dom, textual.widgets, textual.app
from textual.dom import DOMNode
from textual.reactive import reactive
import tui.app, tui.widgets, tui.screens

for package in (tui.widgets, tui.screens):
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{{package.__name__}}.{{info.name}}")
for name in textual.widgets.__all__:
    getattr(textual.widgets, name)


class Mixin:  # not a DOMNode: its reactive and compute method still count
    mixed = reactive(1)

    def compute_mixed(self) -> int:
        return 2


class Mixed(Mixin, textual.widgets.Static):
    own = reactive("")

    def _compute_own(self) -> str:
        return ""


method = DOMNode.__dict__["__init_subclass__"].__func__
original = getattr(method, "__wrapped__", method)
merge = DOMNode.__dict__["_merge_bindings"].__func__
original_merge = getattr(merge, "__wrapped__", merge)
NAMES = ("_reactives", "_computes", "_css_type_name", "_css_type_names", "_inherit_css",
         "_inherit_bindings", "_inherit_component_classes")


def attributes(cls):
    found = {{name: repr(sorted(value.items()) if isinstance(value, dict) else value)
             for name in NAMES for value in [cls.__dict__[name]]}}
    found["_computes"] = sorted(cls._computes)
    found["_css_type_names"] = sorted(cls._css_type_names)
    found["bindings"] = repr(sorted(cls._merged_bindings.key_to_bindings.items()))
    return found


classes, stack = [], [DOMNode]
while stack:
    for sub in stack.pop().__subclasses__():
        if sub not in classes:
            classes.append(sub)
            stack.append(sub)
differing = []
for cls in classes:
    patched = attributes(cls)
    DOMNode._merge_bindings = classmethod(original_merge)
    original(cls, cls._inherit_css, cls._inherit_bindings, cls._inherit_component_classes)
    DOMNode._merge_bindings = classmethod(merge)
    if attributes(cls) != patched:
        differing.append(cls.__qualname__)


class Base(textual.widgets.Static):
    pass


Base.compute_later = lambda self: 0  # a base gains a compute method after it was made


class Later(Base):
    pass


class Bound(textual.widgets.Static):
    BINDINGS = [("x", "one", "One"), ("y,z", "two")]


class AlsoBound(Bound):
    pass


Bound.BINDINGS.append(("w", "three"))  # changed in place after a subclass was made


class Rebound(Bound):
    pass


Bound._merged_bindings.key_to_bindings["x"].append("mutated")  # one class's own list


print(json.dumps({{
    "patched": [method is not original, merge is not original_merge],
    "classes": len(classes), "differing": differing,
    "rebound": sorted(Rebound._merged_bindings.key_to_bindings),
    "shared": len(AlsoBound._merged_bindings.key_to_bindings["x"]),
    "mixed": sorted(Mixed._computes), "mixed reactives": sorted(Mixed._reactives),
    "later": "later" in Later._computes,
}}))
"""


def _run(prelude: str = "") -> Any:
    done = subprocess.run(
        [sys.executable, "-c", COMPARE.format(prelude=prelude)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_widget_class_gets_the_attributes_textuals_own_init_subclass_gives() -> None:
    found = _run()
    assert found["patched"] == [True, True] and found["classes"] > 150, found
    assert found["differing"] == []
    assert found["mixed"] == ["mixed", "own"]  # from a mixin and its own
    assert {"mixed", "own"} <= set(found["mixed reactives"])
    assert found["later"]
    assert found["rebound"] == ["w", "x", "y", "z"]  # BINDINGS changed in place: parsed again
    assert found["shared"] == 1  # another class's merged list is not changed with it


def test_textuals_own_init_subclass_stays_when_it_is_not_the_one_patched() -> None:
    found = _run(
        "import tui.textual_dom\n"
        "tui.textual_dom.EXPECTED_FINGERPRINT = tui.textual_dom.EXPECTED_MERGE_FINGERPRINT = 0"
    )
    assert found["patched"] == [False, False] and found["differing"] == [], found


def test_a_changed_or_missing_method_is_left_alone() -> None:
    from tui import textual_dom

    class DOMNode:
        def __init_subclass__(cls) -> None:
            super().__init_subclass__()

    module = ModuleType("textual.dom")
    module.DOMNode = DOMNode  # type: ignore[attr-defined]
    module.Reactive = object  # type: ignore[attr-defined]
    before = DOMNode.__dict__["__init_subclass__"]
    assert textual_dom.patch(module) is False
    assert DOMNode.__dict__["__init_subclass__"] is before
    assert textual_dom.patch(ModuleType("textual.dom")) is False


def test_a_metaclass_listing_its_own_attributes_gets_textuals_own_method() -> None:
    from textual.message_pump import _MessagePumpMeta
    from textual.widget import Widget

    class Listing(_MessagePumpMeta):
        def __dir__(cls) -> list[str]:
            return [*super().__dir__(), "compute_listed"]

    class Listed(Widget, metaclass=Listing):
        pass

    assert "listed" in Listed._computes
