"""Embedding indexes against the scripted endpoint: real boto3, real SQLite, real sqlite-vec."""

from __future__ import annotations

import io
import json
import math
import sqlite3
from pathlib import Path

import pytest

from agent.bedrock.client import make_client
from agent.cli.main import main
from agent.errors import TabletalkError
from agent.staging import StagingArea
from agent.stores.open import open_store
from agent.vectors.embedder import Embedder, model_format
from agent.vectors.index import VectorIndex
from agent.vectors.location import sidecar_path
from agent.vectors.search import search
from agent.vectors.sidecar import open_sidecar
from tests.support.scripted_bedrock import Error, ScriptedBedrock

NAMES = [
    "wireless earbuds with charging case",
    "wired studio headphones",
    "ceramic coffee mug",
    "stainless steel coffee grinder",
    "wool winter blanket",
    "bluetooth wireless speaker",
]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A small products table whose names make the nearest rows obvious."""
    path = tmp_path / "shop.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL)"
    )
    conn.executemany(
        "INSERT INTO products VALUES (?, ?, ?, ?)",
        [
            (i, name, "audio" if i in (1, 2, 6) else "home", 10.0 * i)
            for i, name in enumerate(NAMES, start=1)
        ],
    )
    conn.commit()
    conn.close()
    return path


def status(db: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    """`tabletalk index status --json` as data."""
    capsys.readouterr()
    assert main(["index", "status", "--db", str(db), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def build(db: Path, *args: str) -> int:
    return main(["index", "build", "products", "--db", str(db), "--yes", *args])


def test_build_then_search_ranks_by_meaning(scripted_bedrock: ScriptedBedrock, shop: Path) -> None:
    assert build(shop, "--columns", "name,category") == 0
    assert len(scripted_bedrock.invocations) == len(NAMES)  # Titan: one text per request
    model, body = scripted_bedrock.invocations[0]
    assert model == "amazon.titan-embed-text-v2:0"
    assert body["dimensions"] == 1024 and body["normalize"] is True
    texts = {body["inputText"] for _, body in scripted_bedrock.invocations}
    assert "name: wireless earbuds with charging case\ncategory: audio" in texts
    store = open_store(shop)
    try:
        result = search(store, "products", "wireless earbuds", limit=3)
    finally:
        store.close()
    hits = result["results"]
    assert [h["key"] for h in hits][:2] == [{"id": 1}, {"id": 6}]
    assert hits[0]["row"]["name"] == NAMES[0] and hits[0]["text"].startswith("name: wireless")
    assert hits[0]["distance"] <= hits[1]["distance"] <= hits[2]["distance"]


def test_rebuild_embeds_only_new_or_changed_rows_and_drops_deleted(
    scripted_bedrock: ScriptedBedrock, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build(shop, "--columns", "name") == 0
    assert len(scripted_bedrock.invocations) == 6
    conn = sqlite3.connect(shop)
    conn.execute("UPDATE products SET name = 'heated wool blanket' WHERE id = 5")
    conn.execute("UPDATE products SET price = 99 WHERE id = 3")  # not an indexed column
    conn.execute("DELETE FROM products WHERE id = 4")
    conn.execute("INSERT INTO products VALUES (7, 'noise cancelling earbuds', 'audio', 80)")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert build(shop) == 0  # the columns are the index's own
    assert "2 rows to embed, 1 to drop, 4 unchanged" in capsys.readouterr().out
    texts = [body["inputText"] for _, body in scripted_bedrock.invocations[6:]]
    assert sorted(texts) == ["name: heated wool blanket", "name: noise cancelling earbuds"]
    shown = status(shop, capsys)
    assert shown["indexes"][0]["rows"] == 6 and shown["indexes"][0]["columns"] == ["name"]
    assert shown["sizeBytes"] > 0
    assert build(shop) == 0
    assert len(scripted_bedrock.invocations) == 8  # nothing changed: nothing embedded


def test_commit_marks_rows_stale_and_the_next_search_refreshes_them(
    scripted_bedrock: ScriptedBedrock, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build(shop, "--columns", "name") == 0
    store = open_store(shop)
    area = StagingArea(store)
    try:
        area.stage("products", "update", {"id": 3}, {"name": "wireless gaming earbuds"})
        area.stage("products", "delete", {"id": 1}, {})
        report = area.commit()
        assert len(report.committed) == 2
        assert status(shop, capsys)["indexes"][0]["stale"] == 2
        before = len(scripted_bedrock.invocations)
        result = search(store, "products", "wireless earbuds", limit=2)
        # one re-embedded row and the query; the deleted row is gone from the index
        assert len(scripted_bedrock.invocations) == before + 2
        assert result["refreshed"] == 2
        assert [h["key"] for h in result["results"]][0] == {"id": 3}
        assert {"id": 1} not in [h["key"] for h in result["results"]]
        entry = status(shop, capsys)["indexes"][0]
        assert entry["stale"] == 0 and entry["rows"] == 5
    finally:
        area.close()
        store.close()


def test_commit_without_an_index_creates_no_sidecar(demo_path: Path) -> None:
    store = open_store(demo_path)
    area = StagingArea(store)
    try:
        area.stage("products", "update", {"id": 3}, {"name": "x"})
        assert area.commit().committed
        assert not sidecar_path(store.identity).exists()
    finally:
        area.close()
        store.close()


def test_search_without_an_index_names_the_build_command(
    scripted_bedrock: ScriptedBedrock, shop: Path
) -> None:
    store = open_store(shop)
    try:
        with pytest.raises(TabletalkError) as raised:
            search(store, "products", "earbuds")
        assert "no embedding index" in raised.value.message
        assert "tabletalk index build products --columns" in (raised.value.fix or "")
    finally:
        store.close()
    assert scripted_bedrock.invocations == []


def test_cohere_batches_96_texts_per_request(scripted_bedrock: ScriptedBedrock) -> None:
    embedder = Embedder("cohere.embed-english-v3", profile=None, region=None)
    texts = [f"item number {i}" for i in range(200)]
    vectors = embedder.embed(texts)
    assert len(vectors) == 200 and all(len(v) == 1024 for v in vectors)
    sizes = sorted(len(body["texts"]) for _, body in scripted_bedrock.invocations)
    assert sizes == [8, 96, 96]  # ceil(200 / 96) requests
    assert {body["input_type"] for _, body in scripted_bedrock.invocations} == {"search_document"}
    # vectors come back in the texts' order
    again = embedder.embed([texts[150]], "query")
    assert math.isclose(
        sum(a * b for a, b in zip(again[0], vectors[150], strict=True)), 1.0, rel_tol=1e-6
    )


def test_a_throttled_request_is_retried(scripted_bedrock: ScriptedBedrock) -> None:
    client = make_client(None, None, max_attempts=1)  # botocore does not retry: we must
    embedder = Embedder("amazon.titan-embed-text-v2:0", 512, client=client, backoff=lambda _: 0)
    scripted_bedrock.invoke_errors.extend([Error(), Error()])
    vectors = embedder.embed(["wool blanket"])
    assert len(vectors[0]) == 512
    assert len(scripted_bedrock.invocations) == 3


def test_unsupported_model_and_dims_name_the_fix() -> None:
    with pytest.raises(TabletalkError) as raised:
        model_format("amazon.titan-embed-text-v1")
    assert "amazon.titan-embed-text-v2:0" in (raised.value.fix or "")
    assert model_format("us.cohere.embed-multilingual-v3:0").batch == 96
    with pytest.raises(TabletalkError) as raised:
        Embedder("amazon.titan-embed-text-v2:0", 300, client=object())
    assert "--dims 1024" in (raised.value.fix or "")


def test_build_asks_before_spending_and_a_no_embeds_nothing(
    scripted_bedrock: ScriptedBedrock,
    shop: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code = main(["index", "build", "products", "--db", str(shop), "--columns", "name"])
    out = capsys.readouterr().out
    assert code == 1 and "6 rows to embed" in out and "$" in out and "Go on?" in out
    assert scripted_bedrock.invocations == []


def test_drop_removes_the_index(
    scripted_bedrock: ScriptedBedrock, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build(shop, "--columns", "name") == 0
    assert main(["index", "drop", "products", "--db", str(shop)]) == 0
    assert status(shop, capsys)["indexes"] == []
    assert main(["index", "drop", "products", "--db", str(shop)]) == 2


def test_sqlite_vec_loads_into_a_new_sidecar(demo_path: Path) -> None:
    store = open_store(demo_path)
    try:
        conn = open_sidecar(store.identity)
        assert conn is not None
        (version,) = next(conn.execute("SELECT vec_version()"))
        assert str(version).startswith("v0.1")
        conn.close()
        index = VectorIndex.open(store)
        assert index.status() == []
        index.close()
    finally:
        store.close()


@pytest.mark.parametrize("content", [b"\x00garbage" * 700, b"SQLite format 3\x00" + b"\xff" * 5000])
def test_a_damaged_sidecar_is_named_with_a_fix(
    shop: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    """`index status|build|drop` on a damaged vector file: one line naming it and what to do,
    exit 2, not 'unexpected NotADBError'; the chat still starts (no vectorSearch offered)."""
    path = sidecar_path(open_store(shop).identity)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    assert main(["index", "status", "--db", str(shop)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "damaged" in err and "fix:" in err, err
    assert "unexpected" not in err
    assert path.read_bytes() == content  # the file is the user's to move, never deleted


def test_a_build_that_did_not_finish_says_so_until_a_build_finishes(
    scripted_bedrock: ScriptedBedrock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build stops after its first 256 rows were written (killed, or Bedrock failing on). The
    index looked built (a built time, vectorSearch offered) while 344 of its 600 rows were never
    embedded and no search could find them."""
    from tests.support.scripted_bedrock import Error

    db = tmp_path / "big.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany(
        "INSERT INTO products VALUES (?, ?)", [(i, f"{NAMES[i % 6]} {i}") for i in range(600)]
    )
    conn.commit()
    conn.close()
    store = open_store(db)
    index = VectorIndex.open(store)
    plan = index.plan(store.schema("products"), ["name"], "amazon.titan-embed-text-v2:0", 256)
    client = make_client(None, None, max_attempts=1)
    embedder = Embedder("amazon.titan-embed-text-v2:0", 256, client=client, backoff=lambda _: 0)
    done: list[int] = []

    def bedrock_fails_after_the_first_chunk(count: int) -> None:
        done.append(count)
        if len(done) == 256:
            refused = Error(400, "ValidationException", "refused")
            scripted_bedrock.invoke_errors.extend([refused] * 400)

    with pytest.raises(TabletalkError):
        index.build(plan, embedder, bedrock_fails_after_the_first_chunk)
    index.close()
    (shown,) = status(db, capsys)["indexes"]
    assert shown["rows"] == 256 and shown["finished"] is False
    assert main(["index", "status", "--db", str(db)]) == 0
    assert "build not finished" in capsys.readouterr().out
    scripted_bedrock.invoke_errors.clear()
    result = search(store, "products", "wireless earbuds", limit=3)
    assert "tabletalk index build products" in result["unfinished"]
    assert build(db) == 0
    assert status(db, capsys)["indexes"][0] | {"builtAt": None} == {
        **shown,
        "rows": 600,
        "finished": True,
        "builtAt": None,
    }
    assert "unfinished" not in search(store, "products", "wireless earbuds", limit=3)
    store.close()
