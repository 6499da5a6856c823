"""DynamoDB values without loss, and the plain-JSON convention the model and staging see.

DynamoDB → plain: S/BOOL/NULL/L/M as JSON; N as an int when integral, else a float when the
float's shortest form is the same number, else `{"$decimal": "<digits>"}`; B as
`{"$binary": "<base64>"}`; SS/NS/BS as `{"$set": [...]}` (members in the same forms); a map
whose one key is one of these tags as `{"$map": {...}}`, so it reads back as a map. Plain →
DynamoDB reverses it: numbers become Decimals from their text (0.1 stays 0.1), `$set` a set.
"""

from __future__ import annotations

import base64
from decimal import Decimal, DecimalException, InvalidOperation
from typing import Any, cast

from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary, TypeDeserializer, TypeSerializer

from agent.errors import StagingError

_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()
TAGS = ("$set", "$binary", "$decimal", "$map")
_DIGITS = 38
TYPE_NAMES = {
    "S": "String",
    "N": "Number",
    "B": "Binary",
    "BOOL": "Boolean",
    "NULL": "Null",
    "L": "List",
    "M": "Map",
    "SS": "String Set",
    "NS": "Number Set",
    "BS": "Binary Set",
}
"""DynamoDB's data type names, by type descriptor."""


def number_to_plain(value: Decimal) -> int | float | dict[str, str]:
    """A DynamoDB number as JSON: exact int, a float that reads back the same, or $decimal."""
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    if Decimal(repr(as_float)) == value:
        return as_float
    return {"$decimal": str(value)}


def to_plain(value: Any) -> Any:
    """A deserialised DynamoDB value (Decimal, set, Binary, ...) in the plain-JSON convention."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return number_to_plain(value)
    if isinstance(value, Binary | bytes | bytearray):
        raw = cast(bytes, value.__bytes__()) if isinstance(value, Binary) else bytes(value)
        return {"$binary": base64.b64encode(raw).decode("ascii")}
    if isinstance(value, set | frozenset):
        members = [to_plain(v) for v in value]
        return {"$set": sorted(members, key=_sort_key)}
    if isinstance(value, dict):
        plain = {str(k): to_plain(v) for k, v in value.items()}
        # A map whose one key is a tag would read back as that type: it is wrapped in $map.
        return {"$map": plain} if len(plain) == 1 and next(iter(plain)) in TAGS else plain
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value


def _sort_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, dict):
        return (2, str(value))
    if isinstance(value, str):
        return (1, value)
    return (0, Decimal(str(value)))


def check_plain(name: str, value: Any) -> None:
    """Raise StagingError when `value` is not a DynamoDB value in the plain convention."""
    from_plain(value, name)


def from_plain(value: Any, where: str = "value") -> Any:
    """A plain-JSON value as DynamoDB takes it (Decimal, set, Binary); bad tags raise."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return _fit(Decimal(value), where)
    if isinstance(value, float):
        return _decimal(repr(value), where)
    if isinstance(value, list):
        return [from_plain(v, where) for v in value]
    if isinstance(value, dict):
        tag = next((t for t in TAGS if t in value), None)
        if tag is not None and len(value) == 1:
            return _tagged(tag, value[tag], where)
        return {str(k): from_plain(v, f"{where}.{k}") for k, v in value.items()}
    raise StagingError(
        f"{where}: {type(value).__name__} is not a DynamoDB value",
        fix='Use JSON: strings, numbers, booleans, null, lists, maps, {"$set": [...]}, '
        '{"$binary": "<base64>"} or {"$decimal": "<digits>"}.',
    )


def _tagged(tag: str, body: Any, where: str) -> Any:
    if tag == "$map":
        if not isinstance(body, dict):
            raise StagingError(
                f"{where}: $map needs an object", fix='Give {"$map": {"name": value, ...}}.'
            )
        return {str(k): from_plain(v, f"{where}.{k}") for k, v in body.items()}
    if tag == "$decimal":
        return _decimal(str(body), where)
    if tag == "$binary":
        try:
            return Binary(base64.b64decode(str(body), validate=True))
        except ValueError as exc:
            raise StagingError(
                f"{where}: $binary is not base64", fix='Give {"$binary": "<base64 text>"}.'
            ) from exc
    members = [from_plain(v, where) for v in body] if isinstance(body, list) else None
    kinds = {type(m) for m in members or []}
    if not members or len(kinds) != 1 or not kinds <= {str, Decimal, Binary}:
        raise StagingError(
            f"{where}: a $set needs a non-empty list of strings, numbers or binaries, all one kind",
            fix='Give e.g. {"$set": ["red", "blue"]}; to remove a set, set the attribute to null '
            "or leave it out.",
        )
    return set(members)


def _decimal(text: str, where: str) -> Decimal:
    try:
        number = Decimal(text)
    except InvalidOperation as exc:
        raise StagingError(
            f"{where}: {text!r} is not a number", fix="Give a decimal number."
        ) from exc
    if not number.is_finite():
        raise StagingError(f"{where}: {text} is not a finite number", fix="Give a finite number.")
    return _fit(number, where)


def _fit(number: Decimal, where: str) -> Decimal:
    """`number` as DynamoDB takes it: trailing zeros past 38 digits become the exponent (an
    int read back from 9.9E+125 has 126 digits); StagingError when it cannot be held."""
    sign, digits, exponent = number.as_tuple()
    if len(digits) > _DIGITS and isinstance(exponent, int):
        kept = len(digits)
        while kept > _DIGITS and digits[kept - 1] == 0:
            kept -= 1
        number = Decimal((sign, digits[:kept], exponent + len(digits) - kept))
    try:
        DYNAMODB_CONTEXT.create_decimal(number)
    except DecimalException as exc:
        raise StagingError(
            f"{where}: the number does not fit DynamoDB (at most {_DIGITS} significant "
            "digits, magnitude 1E-130 to 9.99…E+125)",
            fix="Round it to 38 significant digits, or store it as a string.",
        ) from exc
    return number


def same_value(plain: Any, other: Any) -> bool:
    """Whether two plain values are one DynamoDB value, as a condition's `=` compares: typed
    (true is not 1, "1" is not 1), numbers by value (3 is 3.0 is {"$decimal": "3.00"}), sets
    as sets; a value DynamoDB cannot take equals nothing."""
    try:
        return _same(from_plain(plain), from_plain(other))
    except StagingError:
        return False


def _same(one: Any, other: Any) -> bool:
    if type(one) is not type(other):
        return False
    if isinstance(one, dict):
        return one.keys() == other.keys() and all(_same(v, other[k]) for k, v in one.items())
    if isinstance(one, list):
        return len(one) == len(other) and all(map(_same, one, other))
    if isinstance(one, set):  # one kind of member per set (from_plain checks it)
        return {type(m) for m in one} == {type(m) for m in other} and one == other
    return bool(one == other)


def item_to_plain(raw: dict[str, Any]) -> dict[str, Any]:
    """A low-level item ({"name": {"S": "x"}}) in the plain convention."""
    return {k: to_plain(_DESERIALIZER.deserialize(v)) for k, v in raw.items()}


def item_to_wire(item: dict[str, Any]) -> dict[str, Any]:
    """A plain item as the low-level API takes it ({"name": {"S": "x"}})."""
    return {k: _SERIALIZER.serialize(from_plain(v, k)) for k, v in item.items()}


def value_to_wire(value: Any, where: str = "value") -> dict[str, Any]:
    """One plain value as a low-level attribute value."""
    return dict(_SERIALIZER.serialize(from_plain(value, where)))


def type_name(wire: dict[str, Any]) -> str:
    """The DynamoDB type letter(s) of a low-level value: S, N, B, SS, NS, BS, M, L, BOOL, NULL."""
    return next(iter(wire))
