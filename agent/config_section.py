"""Config sections: plain dataclasses that validate like pydantic models, importing pydantic late.

Every command and the app's first screen need the settings, and importing pydantic costs more
than the rest of a light command. So a section is a keyword-only dataclass; `model_validate`
takes data whose values already have their field's exact type and range as they are (what a
well-formed TOML file holds), and hands anything else to a pydantic model generated from the
same fields, which coerces it (1 for a float, "false" for a bool) or raises pydantic's
ValidationError naming each field. Both paths give the same result: the fast one only accepts
what pydantic would return unchanged.

The names follow pydantic's (`model_validate`, `model_copy`, `model_dump`, `model_fields_set`)
so callers read a section as they would a model.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Self, Union, dataclass_transform

_MISSING: Any = object()
"""Returned by `_exact` when a value is not exactly of its type (pydantic decides then)."""


@dataclasses.dataclass(frozen=True)
class Range:
    """Bounds of a number field, as `Annotated[int, Range(ge=1)]` (pydantic's ge/le/gt)."""

    ge: float | None = None
    le: float | None = None
    gt: float | None = None

    def admits(self, value: float) -> bool:
        """True when `value` is inside the bounds (NaN never is, as in pydantic)."""
        return (
            (self.ge is None or value >= self.ge)
            and (self.le is None or value <= self.le)
            and (self.gt is None or value > self.gt)
        )

    def field_kwargs(self) -> dict[str, float]:
        """The bounds as pydantic `Field` keyword arguments."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
class Section:
    """Base of every config section: subclasses become keyword-only dataclasses."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(kw_only=True)(cls)
        generated = cls.__init__

        def __init__(self: Section, **values: Any) -> None:
            generated(self, **values)
            self.__dict__["_fields_set"] = frozenset(values)

        __init__.__doc__ = generated.__doc__
        cls.__init__ = __init__  # type: ignore[method-assign,assignment]

    @property
    def model_fields_set(self) -> frozenset[str]:
        """The fields given explicitly (as keyword or in the validated data), not defaulted."""
        fields_set: frozenset[str] = self.__dict__["_fields_set"]
        return fields_set

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """A section from plain data (a TOML table); raises pydantic's ValidationError."""
        if isinstance(data, cls):
            return data
        built = _build(cls, data)
        if built is not _MISSING:
            return typing.cast(Self, built)
        coerced = _pydantic_model(cls).model_validate(data).model_dump(exclude_unset=True)
        built = _build(cls, coerced)
        if built is _MISSING:  # pydantic's output always has the exact types
            raise AssertionError(f"{cls.__name__}: pydantic returned {coerced!r}")
        return typing.cast(Self, built)

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with `update` applied as is (not validated, as in pydantic)."""
        new = copy.copy(self)
        new.__dict__.update(update or {})
        new.__dict__["_fields_set"] = self.model_fields_set | frozenset(update or ())
        return new

    def model_dump(self, *, exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
        """Plain data (nested sections as dicts) that `model_validate` turns back into this."""
        return {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(typing.cast(Any, self))
            if f.name not in exclude
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Section):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


_HINTS: dict[type, dict[str, Any]] = {}
_MODELS: dict[type, Any] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The field types of a section, with their `Annotated` bounds (resolved once)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, include_extras=True)
    return _HINTS[cls]


def _build(cls: type[Section], data: Any) -> Any:
    """The section when every value in `data` has exactly its field's type, else _MISSING."""
    if not isinstance(data, dict):
        return _MISSING
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(typing.cast(Any, cls))}
    if not names.issuperset(data):
        return _MISSING
    values = {}
    for name, raw in data.items():
        value = _exact(hints[name], raw)
        if value is _MISSING:
            return _MISSING
        values[name] = value
    try:
        return cls(**values)
    except TypeError:  # a required field is missing
        return _MISSING


def _exact(hint: Any, value: Any) -> Any:
    """`value` (lists, dicts and sections rebuilt) if it is exactly of type `hint`, else _MISSING."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        inner = _exact(args[0], value)
        ranges = [m for m in hint.__metadata__ if isinstance(m, Range)]
        return inner if inner is _MISSING or all(r.admits(inner) for r in ranges) else _MISSING
    if origin in (Union, types.UnionType):
        for option in args:
            found = _exact(option, value)
            if found is not _MISSING:
                return found
        return _MISSING
    if origin is Literal:
        return value if any(type(value) is type(a) and value == a for a in args) else _MISSING
    if origin is list:
        if type(value) is not list:
            return _MISSING
        items = [_exact(args[0], v) for v in value]
        return _MISSING if any(v is _MISSING for v in items) else items
    if origin is dict:
        if type(value) is not dict:
            return _MISSING
        entries = {k: _exact(args[1], v) for k, v in value.items()}
        keys_ok = all(_exact(args[0], k) is not _MISSING for k in entries)
        return entries if keys_ok and _MISSING not in entries.values() else _MISSING
    if isinstance(hint, type) and issubclass(hint, Section):
        return value if isinstance(value, hint) else _build(hint, value)
    if hint is type(None):
        return value if value is None else _MISSING
    if hint in (str, int, float, bool):
        return value if type(value) is hint else _MISSING
    raise TypeError(f"config fields cannot have type {hint!r}")


def _pydantic_model(cls: type) -> Any:
    """A pydantic model with the section's fields, bounds, defaults and name (for its errors)."""
    if cls not in _MODELS:
        _MODELS[cls] = _make_pydantic_model(cls)
    return _MODELS[cls]


def _make_pydantic_model(cls: type) -> Any:
    from pydantic import ConfigDict, Field, create_model

    make_field: Any = Field  # one call for every mix of default and bounds

    definitions: dict[str, Any] = {}
    for f in dataclasses.fields(typing.cast(Any, cls)):
        hint = _hints(cls)[f.name]
        bounds: dict[str, float] = {}
        if typing.get_origin(hint) is typing.Annotated:
            for meta in hint.__metadata__:
                if isinstance(meta, Range):
                    bounds.update(meta.field_kwargs())
            hint = typing.get_args(hint)[0]
        options: dict[str, Any] = dict(bounds)
        if f.default_factory is not dataclasses.MISSING:
            options["default_factory"] = f.default_factory
        elif f.default is not dataclasses.MISSING:
            options["default"] = f.default
        definitions[f.name] = (_pydantic_type(hint), make_field(**options))
    return create_model(cls.__name__, __config__=ConfigDict(extra="forbid"), **definitions)


def _pydantic_type(hint: Any) -> Any:
    """`hint` with every Section class in it replaced by its pydantic model."""
    if isinstance(hint, type) and issubclass(hint, Section):
        return _pydantic_model(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return Union[tuple(_pydantic_type(a) for a in args)]  # noqa: UP007
    if origin in (list, dict):
        return origin[tuple(_pydantic_type(a) for a in args)]
    return hint
