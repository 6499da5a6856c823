"""A DynamoDB key as tools give it, checked against the table's key attributes and types."""

from __future__ import annotations

from agent.errors import BadKeyError
from agent.stores.base import Key
from agent.stores.dynamodb.describe import KEY_TYPE_NAMES


def normalize_key(name: str, wanted: tuple[str, ...], types: dict[str, str], key: Key) -> Key:
    """`key` with exactly the key attributes `wanted` of table `name` (matched without regard
    to case), numbers given as text coerced; BadKeyError naming the right key otherwise."""
    by_lower = {str(k).lower(): v for k, v in key.items()}
    if len(key) != len(wanted) or any(k.lower() not in by_lower for k in wanted):
        raise BadKeyError(
            f"the key of {name} is {', '.join(wanted)}, not {', '.join(map(str, key)) or '(empty)'}",
            fix="Give exactly the key attributes: "
            + ", ".join(f"{k} ({KEY_TYPE_NAMES[types[k]]})" for k in wanted)
            + ".",
        )
    out: Key = {}
    for attr in wanted:
        value = by_lower[attr.lower()]
        if types[attr] == "N" and isinstance(value, str):
            try:
                value = int(value) if value.lstrip("-").isdigit() else float(value)
            except ValueError as exc:
                raise BadKeyError(
                    f"key {attr} must be a number, not {value!r}",
                    fix=f"Give {attr} as a number.",
                ) from exc
        ok = {
            "N": isinstance(value, int | float) and not isinstance(value, bool),
            "S": isinstance(value, str),
            "B": isinstance(value, dict) and "$binary" in value,
        }[types[attr]]
        if not ok:
            raise BadKeyError(
                f"key {attr} of {name} is a {KEY_TYPE_NAMES[types[attr]]}, not {value!r}",
                fix=f"Give {attr} as a {KEY_TYPE_NAMES[types[attr]]}.",
            )
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 7.0 and 7 are one DynamoDB number
        out[attr] = value
    return out
