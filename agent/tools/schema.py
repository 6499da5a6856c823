"""Turn a pydantic input model into the compact JSON schema Bedrock's toolSpec accepts."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

_NOISE = {"title", "additionalProperties"}
"""Keywords left out: titles repeat the field names; extra fields are refused by validation
(with the field named), so the schema need not say so."""


def bedrock_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with $defs inlined, noise dropped and `X | None` flattened."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    schema: dict[str, Any] = _clean(raw, defs)
    schema.pop("description", None)  # the toolSpec carries the tool's description
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOISE:
            continue
        if key == "properties":
            out[key] = {name: _clean(prop, defs) for name, prop in value.items()}
        else:
            out[key] = _clean(value, defs)
    options = out.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(options):
            out.pop("anyOf")
            out = {**kept[0], **out}
            if out.get("default", "missing") is None:
                out.pop("default")
    return out
