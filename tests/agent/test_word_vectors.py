from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from agent.search.word_vectors import (
    MAGIC,
    CatalogVectors,
    WordVectorTable,
    general_vectors,
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
    for floor in (-1.0, -0.3, 0.0, 0.2, 0.5, 0.99, 1.5):  # a cosine floor, not a spread
        want = [i for i, value in enumerate(got) if value > floor and i < 3]
        assert [i for i, _ in catalog.standout(query, -100.0, floor)] == want


def test_same_and_opposite_meanings_side_by_side_read_back_exactly(tmp_path):
    # The packed arithmetic holds each tool's dot product in a 16-bit field: the largest ones
    # (a text equal or opposite to the request), next to each other, must not spill over.
    north = [127] + [0] * 255
    table = load_table(
        write_table(tmp_path / "t.bin", {"north": north, "south": [-v for v in north]})
    )
    assert table is not None
    texts = [["north"], ["south"], ["north"], [], ["south"], ["south"]]
    catalog = CatalogVectors(texts, table)
    assert catalog.similarities(["north"]) == [1.0, -1.0, 1.0, 0.0, -1.0, -1.0]
    assert catalog.similarities(["south"]) == [-1.0, 1.0, -1.0, 0.0, 1.0, 1.0]
    assert [i for i, _ in catalog.standout(["north"], 0.0)] == [0, 2]
    assert [i for i, _ in catalog.standout(["south"], -100.0, -1.0)] == [1, 4, 5]


def test_a_table_too_wide_for_the_packed_arithmetic_is_refused(tmp_path):
    assert load_table(write_table(tmp_path / "ok.bin", {"a": [1] * 4096})) is not None
    assert load_table(write_table(tmp_path / "wide.bin", {"a": [1] * 12_000})) is None


def test_standout_measures_each_text_against_the_catalogs_own_spread(tmp_path):
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(12)]
    table = load_table(
        write_table(
            tmp_path / "t.bin", {t: [rng.randint(-127, 127) for _ in range(24)] for t in vocabulary}
        )
    )
    assert table is not None
    texts = [rng.sample(vocabulary, 3) for _ in range(30)] + [["unknownword"]]
    catalog = CatalogVectors(texts, table)
    query = ["w1", "w5", "w7"]
    cosines = reference(table, catalog, texts, query)[:30]  # the last text has no vector
    mean = sum(cosines) / len(cosines)
    spread = math.sqrt(sum((value - mean) ** 2 for value in cosines) / len(cosines))
    expected = {i: (value - mean) / spread for i, value in enumerate(cosines)}
    for floor in (-1.0, 0.0, 0.5, 1.0, 2.0):
        got = catalog.standout(query, floor)
        found = [i for i, _ in got]
        assert found == sorted(found)  # catalog order
        assert {i for i, z in expected.items() if z > floor + 0.05} <= set(found)
        assert set(found) <= {i for i, z in expected.items() if z > floor - 0.05}
        for i, z in got:
            assert z > floor and abs(z - expected[i]) < 0.05
    assert catalog.standout(["zzz"], 0.0) == []  # no known word: nothing stands out
    assert CatalogVectors([["w1"], ["zzz"]], table).standout(["w1"], -5.0) == []  # one vector


def test_a_query_with_no_known_word_has_no_similarities(tmp_path):
    table = load_table(write_table(tmp_path / "t.bin", {"rain": [1, 2, 3], "sun": [3, 2, 1]}))
    assert table is not None
    catalog = CatalogVectors([["rain"], ["sun"]], table)
    assert catalog.similarities(["zzz", "the"]) is None
    assert catalog.standout(["zzz", "the"], 0.0) == []
    assert catalog.similarities(["rain"])[0] > 0.99


def test_a_made_up_request_word_has_no_vector_unless_the_catalog_uses_it(tmp_path):
    table = load_table(
        write_table(
            tmp_path / "t.bin",
            {"rain": [1, 2, 3], "sun": [3, 2, 1], "pay": [2, 2, 1], "##ment": [1, 3, 2]},
        )
    )
    assert table is not None
    # 'payment' splits into known pieces, but neither the table nor this catalog has the word.
    assert CatalogVectors([["rain"], ["sun"]], table).similarities(["payment"]) is None
    assert CatalogVectors([["rain"], ["sun"]], table).standout(["payment"], -5.0) == []
    # A catalog that uses the word gives it its pieces' vector.
    with_it = CatalogVectors([["rain"], ["payment", "due"]], table).similarities(["payment"])
    assert with_it is not None and with_it[1] > 0.99


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


def test_a_request_word_no_tool_uses_weighs_the_share_it_is_given(tmp_path):
    # 'umbrella' is near 'rain' but no tool uses it: at half weight the catalog's own word
    # 'sun' says more about which tool the request means.
    table = load_table(
        write_table(
            tmp_path / "t.bin", {"rain": [100, 0, 0], "sun": [0, 100, 0], "umbrella": [60, 0, 40]}
        )
    )
    assert table is not None
    texts = [["rain"], ["sun"]]
    query = ["sun", "umbrella"]
    full = CatalogVectors(texts, table).similarities(query)
    half = CatalogVectors(texts, table, unseen=0.5)
    got = half.similarities(query)
    assert full is not None and got is not None
    assert full[0] > full[1] and got[1] > got[0]
    assert half._unseen_weight == round(half._weight(0) / 2)
    for value, want in zip(got, reference(table, half, texts, query), strict=True):
        assert abs(value - want) < 0.02


def test_the_general_table_knows_the_world_the_software_table_does_not():
    # Requests that need everyday knowledge, read as WordLlama reads them (cased, every
    # token): the nearest tool is the one a person means.
    table = general_vectors()
    assert table is not None
    tools = {
        "surf_report": "Swell height and wind at Australian surf spots.",
        "city_weather": "Current conditions and forecast for a city.",
        "stock_quote": "Latest price of a stock.",
        "recipe_finder": "Recipes by ingredient.",
        "company_facts": "Financial statements and key figures of listed firms.",
        "flight_status": "Departure and arrival times of a flight.",
        "movie_times": "Showtimes at cinemas near you.",
        "book_lookup": "Find a book by title or author.",
        "pet_care": "Advice on caring for dogs, cats and other pets.",
    }
    catalog = CatalogVectors([text.split() for text in tools.values()], table)
    names = list(tools)
    for request, tool in [
        ("how big are the waves at the beach", "surf_report"),
        ("What are the liabilities of GlaxoSmithKline?", "company_facts"),
        ("Should I take a jacket to Rome?", "city_weather"),
        ("Who wrote Pride and Prejudice?", "book_lookup"),
        ("Is the new Batman film on tonight?", "movie_times"),
        ("My kitten will not eat", "pet_care"),
    ]:
        similarities = catalog.similarities(request.split())
        assert similarities is not None
        assert names[similarities.index(max(similarities))] == tool, request


def test_a_byte_pair_table_reads_every_token_of_a_text_once(tmp_path):
    # Mean pooling: stop words and repeated words count like any token, no IDF weighting.
    path = tmp_path / "bpe.bin"
    header = json.dumps(
        {"dims": 2, "split": "bpe", "merges": ["▁ a", "▁ b"], "tokens": ["▁", "a", "b", "▁a", "▁b"]}
    )
    rows = bytes([0, 0, 0, 0, 0, 0, 100, 0, 0, 100])
    path.write_bytes(MAGIC + b"\n" + header.encode() + b"\n" + rows)
    table = load_table(path)
    assert table is not None and table.mean_pooled
    assert table.pieces("a") == ["▁a"]
    catalog = CatalogVectors([["a"], ["b"]], table)
    similarities = catalog.similarities(["a", "a", "b"])  # (200, 100) against (1,0) and (0,1)
    assert similarities is not None
    assert similarities[0] == pytest.approx(2 / 5**0.5, abs=0.02)
    assert similarities[1] == pytest.approx(1 / 5**0.5, abs=0.02)
