"""Check conditions such as `status == "cancelled"` or `len(keys) >= 35`, evaluated safely.

A condition is a Python-like expression over one record's fields, parsed with `ast` and
evaluated from a small whitelist (comparisons, and/or/not, literals, names, `a.b` and `a["b"]`
lookups, `len`, `lower`); nothing is executed.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any

from agent.errors import TabletalkError

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "len": lambda value: len(value) if isinstance(value, (str, list, dict)) else 0,
    "lower": lambda value: str(value).lower(),
    "str": str,
}
MISSING = object()


def parse_condition(text: str) -> ast.Expression:
    """Parse a condition; a syntax error names the condition."""
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise TabletalkError(
            f"Condition {text!r} is not a valid expression: {exc.msg}",
            fix='Write it like `status == "cancelled"` or `len(keys) >= 2`.',
        ) from exc


def holds(text: str, record: Mapping[str, Any]) -> bool:
    """Whether the condition is true for the record (a missing field is never equal). The
    record is what the model sent, so any JSON shape evaluates: `len` of a number is 0, minus
    a string is missing."""
    return bool(_eval(parse_condition(text).body, record, text))


def _eval(node: ast.AST, record: Mapping[str, Any], text: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[node.id]
        return record.get(node.id, MISSING)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(item, record, text) for item in node.elts]
    if isinstance(node, ast.BoolOp):
        values = (_eval(value, record, text) for value in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, record, text)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _eval(node.operand, record, text)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return -value if number else MISSING  # the model's `"5"` or `true`: no number to compare
    if isinstance(node, ast.Compare):
        left = _eval(node.left, record, text)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, record, text)
            if left is MISSING or right is MISSING:
                return isinstance(op, ast.NotEq)
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:
                return False
            left = right
        return True
    if isinstance(node, ast.Attribute):
        return _lookup(_eval(node.value, record, text), node.attr)
    if isinstance(node, ast.Subscript):
        return _lookup(_eval(node.value, record, text), _eval(node.slice, record, text))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        function = _FUNCTIONS.get(node.func.id)
        if function is not None:
            value = _eval(node.args[0], record, text)
            return function(None if value is MISSING else value)
    raise TabletalkError(
        f"Condition {text!r} uses something checks do not support ({type(node).__name__})",
        fix="Use comparisons, and/or/not, field names, a.b, len(x) and lower(x).",
    )


def _lookup(value: Any, key: Any) -> Any:
    if isinstance(value, Mapping):
        return value.get(key, MISSING)
    if isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
        return value[key]
    return MISSING
