"""Textual's widget classes created without re-reading every base class's attributes: the
first screen creates ~55 of them (Textual's containers, screens, widgets and ours), and
`DOMNode.__init_subclass__` spent ~1.7 M instructions on each listing every attribute of the
class and its bases (`dir`, sorted) for its compute methods, testing every attribute of
every base for a reactive, and parsing every base's BINDINGS again.

While `install`ed (the `tui` package does it on import), `textual.dom` gets, right after its
body runs, an `__init_subclass__` that sets the same class attributes in the same order, the
reactives and compute names read from each base's own attributes once (kept per class, read
again when a base gained or lost attributes), and a `_merge_bindings` that parses each base's
BINDINGS once (parsed again when they are not the same bindings). Each is used only when
Textual's own method is the one this was written against (its code's names, constants and
locals: textual is pinned to 8.2.8), and the new `__init_subclass__` only when the class's
metaclass lists attributes as `type` does; otherwise Textual's own runs. Nothing here imports Textual before `textual.dom` is imported.
"""

from __future__ import annotations

import sys
import weakref
import zlib
from types import CodeType, ModuleType
from typing import Any

from tui import import_hooks
from tui.import_hooks import PatchingLoader

NAME = "textual.dom"
COMPUTE_PREFIXES = ("_compute_", "compute_")
TYPE_DIR = type.__dict__["__dir__"]
EXPECTED_FINGERPRINT = 0xE5AC36C1
"""`fingerprint` of textual 8.2.8's `DOMNode.__init_subclass__`."""
EXPECTED_MERGE_FINGERPRINT = 0x13907F28
"""`fingerprint` of textual 8.2.8's `DOMNode._merge_bindings`."""

_own_attributes: weakref.WeakKeyDictionary[type, tuple[int, dict[str, Any], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)
"""class -> (its number of attributes then, its own reactives, its own compute names)."""
_own_bindings: weakref.WeakKeyDictionary[
    type, tuple[tuple[Any, ...], dict[str, tuple[Any, ...]]]
] = weakref.WeakKeyDictionary()
"""class -> (its own BINDINGS then, as a tuple; them parsed: key -> bindings)."""


def _code_parts(code: CodeType) -> tuple[Any, ...]:
    """What a function's code refers to and holds, nested code included (no bytecode, which
    each Python version writes differently)."""
    consts = tuple(
        _code_parts(const) if isinstance(const, CodeType) else repr(const)
        for const in code.co_consts
    )
    return (code.co_name, code.co_names, code.co_varnames, code.co_freevars, consts)


def fingerprint(function: Any) -> int:
    """CRC-32 of `_code_parts` of a function's code and its defaults."""
    parts = (_code_parts(function.__code__), repr(function.__defaults__))
    return zlib.crc32(repr(parts).encode())


def _own(klass: type, reactive_type: type) -> tuple[dict[str, Any], frozenset[str]]:
    """`klass`'s own reactives and the compute names its own attributes give."""
    attributes = klass.__dict__
    kept = _own_attributes.get(klass)
    if kept is not None and kept[0] == len(attributes):
        return kept[1], kept[2]
    reactives = {
        name: value for name, value in attributes.items() if isinstance(value, reactive_type)
    }
    computes = frozenset(
        name.lstrip("_")[8:] for name in attributes if name.startswith(COMPUTE_PREFIXES)
    )
    try:
        _own_attributes[klass] = (len(attributes), reactives, computes)
    except TypeError:  # a class that cannot be weakly referenced: read it each time
        pass
    return reactives, computes


def _parsed_bindings(klass: type, bindings_map: Any) -> dict[str, Any]:
    """`klass`'s own BINDINGS as `BindingsMap` parses them: key -> its bindings (Binding is
    frozen, so classes can share them; each class's merged map gets lists of its own)."""
    source = klass.__dict__.get("BINDINGS", [])
    if type(source) not in (list, tuple):  # anything else is parsed as it is, every time
        parsed: dict[str, Any] = bindings_map(source).key_to_bindings
        return parsed
    kept = _own_bindings.get(klass)
    if kept is not None and kept[0] == tuple(source):
        return kept[1]
    found = {key: tuple(each) for key, each in bindings_map(source).key_to_bindings.items()}
    try:
        _own_bindings[klass] = (tuple(source), found)
    except TypeError:  # a class that cannot be weakly referenced: parse it each time
        pass
    return found


def _make_merge_bindings(dom_node: Any, bindings_map: Any) -> Any:
    """A `_merge_bindings` for `dom_node` doing what Textual's does."""

    def _merge_bindings(cls: Any) -> Any:
        merged: list[dict[str, Any]] = []
        for base in reversed(cls.__mro__):
            if issubclass(base, dom_node):
                if not base._inherit_bindings:
                    merged.clear()
                merged.append(_parsed_bindings(base, bindings_map))
        keys: dict[str, Any] = {}
        for parsed in merged:
            for key, key_bindings in parsed.items():
                keys[key] = key_bindings
        return bindings_map.from_keys({key: list(each) for key, each in keys.items()})

    return _merge_bindings


def _make_init_subclass(dom_node: Any, reactive_type: type, original: Any) -> Any:
    """An `__init_subclass__` for `dom_node` doing what `original` (Textual's) does."""

    def __init_subclass__(
        cls: Any,
        inherit_css: bool = True,
        inherit_bindings: bool = True,
        inherit_component_classes: bool = True,
    ) -> None:
        if type(cls).__dir__ is not TYPE_DIR:  # `dir` would list something else
            original(cls, inherit_css, inherit_bindings, inherit_component_classes)
            return
        super(dom_node, cls).__init_subclass__()
        reactives: dict[str, Any] = {}
        cls._reactives = reactives
        computes: set[str] = set()
        for base in reversed(cls.__mro__):
            own_reactives, own_computes = _own(base, reactive_type)
            reactives.update(own_reactives)
            computes.update(own_computes)
        cls._inherit_css = inherit_css
        cls._inherit_bindings = inherit_bindings
        cls._inherit_component_classes = inherit_component_classes
        css_type_names: set[str] = set()
        bases = cls._css_bases(cls)
        cls._css_type_name = bases[0].__name__
        for base in bases:
            css_type_names.add(base.__name__)
        cls._merged_bindings = cls._merge_bindings()
        cls._css_type_names = frozenset(css_type_names)
        cls._computes = frozenset(computes)

    return __init_subclass__


def _textual_method(dom_node: Any, name: str, expected: int) -> Any:
    """DOMNode's classmethod `name`'s function, if it is the one this was written against."""
    method = getattr(dom_node, "__dict__", {}).get(name)
    function: Any = getattr(method, "__func__", None)
    if not isinstance(method, classmethod) or getattr(function, "__code__", None) is None:
        return None
    return function if fingerprint(function) == expected else None


def _replace(dom_node: Any, original: Any, replacement: Any) -> None:
    replacement.__qualname__ = original.__qualname__
    replacement.__doc__ = original.__doc__
    replacement.__wrapped__ = original
    setattr(dom_node, original.__name__, classmethod(replacement))


def patch(module: ModuleType) -> bool:
    """Give `module` (`textual.dom`)'s DOMNode the faster `__init_subclass__` and
    `_merge_bindings`, each only where Textual's is the one this was written against; False
    when neither was replaced."""
    dom_node: Any = getattr(module, "DOMNode", None)
    reactive_type: Any = getattr(module, "Reactive", None)
    bindings_map: Any = getattr(module, "BindingsMap", None)
    replaced = False
    original = _textual_method(dom_node, "__init_subclass__", EXPECTED_FINGERPRINT)
    if original is not None and isinstance(reactive_type, type):
        _replace(dom_node, original, _make_init_subclass(dom_node, reactive_type, original))
        replaced = True
    original = _textual_method(dom_node, "_merge_bindings", EXPECTED_MERGE_FINGERPRINT)
    if original is not None and isinstance(bindings_map, type):
        _replace(dom_node, original, _make_merge_bindings(dom_node, bindings_map))
        replaced = True
    return replaced


def install() -> None:
    """Patch `textual.dom` when it is imported (at once when it already is)."""
    loaded = sys.modules.get(NAME)
    if loaded is not None:
        patch(loaded)
    else:
        import_hooks.hook(NAME, _patching)


def _patching(real: Any) -> PatchingLoader | None:
    return PatchingLoader(real, patch) if hasattr(real, "exec_module") else None
