"""How staged changes are stored: compact JSON, canonical item keys, short ids, row decoding."""

from __future__ import annotations

import functools
import gc
import json
import json.encoder
import json.scanner
import secrets
from collections.abc import Callable
from typing import Any, TypeVar, cast

from agent.staging.model import StagedChange
from agent.stores.base import Item, Key

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_DECODER = json.JSONDecoder()


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder/scanner called directly: a bulk edit encodes and decodes ten thousand small
# objects, and `json.dumps`/`json.loads` spend half their time in per-call Python set-up.
# (Private to CPython's json and absent from typeshed, hence getattr.)
_make_encoder: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)
_make_scanner: Callable[..., Any] | None = getattr(json.scanner, "c_make_scanner", None)
_C_ENCODE = _make_encoder and _make_encoder(
    None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, True
)
_C_SCAN = _make_scanner and _make_scanner(_DECODER)


F = TypeVar("F", bound=Callable[..., Any])


def gc_paused(func: F) -> F:
    """Run `func` with the cyclic garbage collector paused (then restore it).

    A bulk edit allocates some 100k short-lived dicts, tuples and strings, none in cycles; the
    collector would otherwise run dozens of passes over them (about 5% of a 10k-item commit).
    """

    @functools.wraps(func)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused  # type: ignore[return-value]


def dumps(value: Any) -> str:
    """Compact, deterministic JSON (keys keep their order: key columns are already ordered)."""
    if _C_ENCODE:
        return "".join(_C_ENCODE(value, 0))
    return _ENCODER.encode(value)


def loads(text: str) -> Any:
    """Decode JSON that `dumps` wrote."""
    if _C_SCAN:
        return _C_SCAN(text, 0)[0]
    return _DECODER.decode(text)


def loads_many(texts: list[str | None]) -> list[Any]:
    """Decode many JSON texts that `dumps` wrote (None stays None) in one scanner call."""
    return cast(
        "list[Any]", loads("[" + ",".join([t if t is not None else "null" for t in texts]) + "]")
    )


def row_to_change(row: tuple[Any, ...], memo: dict[str, Item] | None = None) -> StagedChange:
    """A staged_changes row (in COLUMNS order) as a StagedChange.

    `memo` caches decoded `values` across rows (a bulk edit repeats the same values).
    """
    id_, store, table, key_json, op, values_json, pre_json, origin, created_at = row
    if memo is None:
        values = loads(values_json)
    else:
        if values_json not in memo:
            memo[values_json] = loads(values_json)
        values = dict(memo[values_json])
    return StagedChange(
        id=id_,
        store=store,
        table=table,
        key=loads(key_json),
        op=op,
        values=values,
        pre_image=None if pre_json is None else loads(pre_json),
        origin=origin,
        created_at=created_at,
    )


def take_ids(count: int, taken: Callable[[list[str]], set[str]]) -> list[str]:
    """`count` short random ids (8 hex digits); `taken(candidates)` says which already exist."""
    ids: list[str] = []
    chosen: set[str] = set()
    while len(ids) < count:
        pool = secrets.token_hex(4 * (count - len(ids)))
        candidates = [pool[i : i + 8] for i in range(0, len(pool), 8)]
        candidates = [c for c in dict.fromkeys(candidates) if c not in chosen]
        clashes = taken(candidates)
        fresh = [c for c in candidates if c not in clashes]
        ids.extend(fresh)
        chosen.update(fresh)
    return ids


def key_json(key: Key) -> str:
    """The canonical JSON text of a normalized key (the staging DB's item identity)."""
    if len(key) == 1:
        ((name, value),) = key.items()
        if type(value) is int and name.isidentifier():
            return f'{{"{name}":{value}}}'
    return dumps(key)


def maybe_json(value: Item | None) -> str | None:
    """JSON text, or None for None."""
    return None if value is None else dumps(value)
