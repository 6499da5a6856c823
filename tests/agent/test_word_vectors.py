from __future__ import annotations

import json
import math
import random
from pathlib import Path

from agent.search.word_vectors import (
    MAGIC,
    CatalogVectors,
    WordVectorTable,
    load_table,
    word_vectors,
)


def write_table(path: Path, vectors: dict[str, list[int]]) -> Path:
    dims = len(next(iter(vectors.values())))
    header = json.dumps({"dims": dims, "scale": 0.01, "tokens": list(vectors)})
    rows = b"".join(bytes(value & 0xFF for value in row) for row in vectors.values())
    path.write_bytes(MAGIC + b"\n" + header.encode() + b"\n" + rows)
    return path


def reference(table: WordVectorTable, catalog: CatalogVectors, texts, query) -> list[float]:
    """The same similarities in plain floats: IDF-weighted sums, cosine."""

    def vector(words: list[str]) -> list[float]:
        total = [0.0] * table.dims
        for token in catalog._pieces(words):
            row = table.index[token]
            weight = catalog._weights.get(token, catalog._unseen_weight)
            for j in range(table.dims):
                total[j] += weight * (table.rows[row * table.dims + j] - 128)
        return total

    def cosine(a: list[float], b: list[float]) -> float:
        norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(x * x for x in b))
        return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0

    q = vector(query)
    return [cosine(vector(text), q) for text in texts]


def test_catalog_similarities_match_plain_float_cosines(tmp_path):
    rng = random.Random(7)
    vocabulary = ["rain", "weather", "city", "stock", "price", "##s", "pay", "##ment", "sun"]
    table = load_table(
        write_table(
            tmp_path / "t.bin", {t: [rng.randint(-127, 127) for _ in range(16)] for t in vocabulary}
        )
    )
    assert table is not None
    texts = [["weather", "city"], ["stock", "prices"], ["payment"], ["unknownword"], []]
    catalog = CatalogVectors(texts, table)
    query = ["rain", "sun", "city"]
    got = catalog.similarities(query)
    assert got is not None
    expected = reference(table, catalog, texts, query)
    for value, want in zip(got, expected, strict=True):
        assert abs(value - want) < 0.02
    assert got[3] == 0.0 and got[4] == 0.0  # no known token: no vector, no similarity
    for floor in (-1.0, -0.3, 0.0, 0.2, 0.5, 0.99, 1.5):
        want = [(i, value) for i, value in enumerate(got) if value > floor and texts[i]]
        want = [(i, value) for i, value in want if i != 3]
        assert catalog.above(query, floor) == want


def test_a_query_with_no_known_word_has_no_similarities(tmp_path):
    table = load_table(write_table(tmp_path / "t.bin", {"rain": [1, 2, 3], "sun": [3, 2, 1]}))
    assert table is not None
    catalog = CatalogVectors([["rain"], ["sun"]], table)
    assert catalog.similarities(["zzz", "the"]) is None
    assert catalog.above(["zzz", "the"], 0.0) == []
    assert catalog.similarities(["rain"])[0] > 0.99


def test_words_split_into_known_pieces_or_not_at_all(tmp_path):
    table = load_table(
        write_table(tmp_path / "t.bin", {"pay": [1], "##ment": [2], "##s": [3], "payments": [4]})
    )
    assert table is not None
    assert table.pieces("payments") == ["payments"]
    assert table.pieces("payment") == ["pay", "##ment"]
    assert table.pieces("paymentx") == []
    assert table.pieces("x" * 100) == []


def test_a_damaged_or_foreign_file_is_no_table(tmp_path):
    good = write_table(tmp_path / "good.bin", {"rain": [1, 2], "sun": [2, 1]})
    assert load_table(good) is not None
    raw = good.read_bytes()
    (tmp_path / "short.bin").write_bytes(raw[:-1])
    (tmp_path / "foreign.bin").write_bytes(b"PK\x03\x04" + raw)
    (tmp_path / "header.bin").write_bytes(MAGIC + b"\n{not json\n")
    for name in ("short.bin", "foreign.bin", "header.bin", "missing.bin"):
        assert load_table(tmp_path / name) is None


def test_the_shipped_table_relates_words_by_meaning():
    table = word_vectors()
    assert table is not None
    catalog = CatalogVectors(
        [["weather", "forecast"], ["stock", "price"], ["recipes", "ingredient"]], table
    )
    rainy = catalog.similarities(["will", "it", "rain", "tomorrow"])
    assert rainy is not None and max(rainy) == rainy[0]
    cooking = catalog.similarities(["dinner", "ideas", "with", "salmon"])
    assert cooking is not None and max(cooking) == cooking[2]
