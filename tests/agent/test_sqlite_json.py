"""SQLite renders a row's JSON text (agent/stores/sqlite_json.py) exactly as staging's `dumps`
writes the row read in Python: a set-based stage stores that text as the pre-image, and a commit
compares it with the row's text now, so one character of difference is a false conflict (or
a staged value that reads back different)."""

from __future__ import annotations

import math
import random
import sqlite3
import struct

import pytest

from agent.staging.encoding import dumps
from agent.stores import sqlite_json
from agent.stores.sqlite_json import JSON_OBJECT_COLUMNS, register, row_json_sql
from agent.stores.sqlite_readonly import json_value, quote_ident

AWKWARD = 'quote " back \\ ctrl \x01\x1f\x7f tab \t é € 😀 \u2028 end'
VALUES = [
    0,
    -1,
    2**63 - 1,
    -(2**63),
    0.1 + 0.2,
    -0.0,
    1e300,
    -2.5e-308,
    5e-324,
    1e22,
    123.45,
    5.0,
    "",
    AWKWARD,
    "'single'",
    "12",
    None,
    b"",
    b"\x00\xffblob",
]


def rendered(columns: list[str], rows: list[tuple[object, ...]]) -> list[tuple[str, str]]:
    """(SQLite's text, Python's text) of each row of a table with these columns."""
    conn = sqlite3.connect(":memory:")
    register(conn)
    conn.execute(f"CREATE TABLE t ({', '.join(map(quote_ident, columns))})")
    marks = ", ".join("?" * len(columns))
    conn.executemany(f"INSERT INTO t VALUES ({marks})", rows)
    out = []
    for row in conn.execute(f"SELECT {row_json_sql('t', columns)}, * FROM t"):
        item = {name: json_value(value) for name, value in zip(columns, row[1:], strict=True)}
        out.append((row[0], dumps(item)))
    conn.close()
    return out


@pytest.mark.parametrize("width", [1, 3, JSON_OBJECT_COLUMNS, JSON_OBJECT_COLUMNS + 7])
def test_sqlite_writes_every_kind_of_value_as_python_does(width: int) -> None:
    columns = ["id", 'na"me', "it's", "é", "b c", *(f"c{i}" for i in range(width))][:width]
    rows = [
        tuple(VALUES[(start + i) % len(VALUES)] for i in range(width))
        for start in range(len(VALUES))
    ]
    for sql_text, python_text in rendered(columns, rows):
        assert sql_text == python_text


def test_without_json_object_the_text_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQLite whose json_object would quote a json() result as a string renders part by part."""
    assert sqlite_json.json_object_embeds_json()  # this build takes the json_object path
    columns = ["id", "r", "s", "b"]
    rows = [(1, 0.1 + 0.2, AWKWARD, b"\x00"), (2, 1e300, None, None)]
    fast = rendered(columns, rows)
    monkeypatch.setattr(sqlite_json, "json_object_embeds_json", lambda: False)
    assert rendered(columns, rows) == fast
    assert all(sql_text == python_text for sql_text, python_text in fast)


def test_a_value_json_cannot_hold_fails_the_statement() -> None:
    with pytest.raises(sqlite3.OperationalError):
        rendered(["r"], [(float("inf"),)])


def _reals(count: int) -> list[float]:
    """Doubles of every shape: short decimals (prices, rates), long ones, any bit pattern, and
    the neighbours of where SQLite's text and Python's repr switch notation."""
    rng = random.Random(15)
    reals: list[float] = []
    for _ in range(count):
        digits = rng.randint(1, 17)
        mantissa = rng.randrange(10 ** (digits - 1), 10**digits)
        reals.append(float(f"{rng.choice('-+')}{mantissa}e{rng.randint(-22, 18)}"))
        reals.append(round(rng.uniform(-1e6, 1e6), rng.randint(0, 6)))
        bits = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(bits):
            reals.append(bits)
    for edge in (1e-4, 1e15, 1e16, 0.1, 1.0):
        below, above = math.nextafter(edge, 0.0), math.nextafter(edge, math.inf)
        reals += [edge, below, above, -edge, -below, -above]
    return reals


@pytest.mark.parametrize("width", [1, JSON_OBJECT_COLUMNS + 1])
def test_every_real_is_written_as_pythons_repr(width: int) -> None:
    """SQLite writes a REAL itself where its 15-digit text is Python's repr, and through repr
    elsewhere: either way the text is repr's, for tens of thousands of doubles of every shape."""
    assert sqlite_json.reals_written_as_cast()  # this build takes SQLite's own text where it can
    columns = [f"c{i}" for i in range(width)]
    rows = [(x, *([None] * (width - 1))) for x in _reals(10_000)]
    mismatches = [(s, p) for s, p in rendered(columns, rows) if s != p]
    assert mismatches == []
