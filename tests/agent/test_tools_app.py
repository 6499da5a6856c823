"""App tools: chips and tabs, search and ask, saved specs and relationships, files and exports."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from agent.specs import Relationship, SavedSpec, SpecBook, SpecError
from agent.tools.base import ToolContext
from tests.support.tools import err, make_ctx, ok


@pytest.fixture
def ctx(tmp_path: Path, demo_path: Path):
    context = make_ctx(demo_path, tmp_path)
    store, staging = context.store, context.staging
    yield context
    staging.close()
    store.close()


class RecordingSearch:
    """A minimal SearchPort: answers with the query it got (the loop provides the real one)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, limit: int, schemas: bool = False) -> dict[str, Any]:
        self.calls.append((query, limit))
        return {"tools": [{"name": "exportCsv"}], "joined": ["exportCsv"]}


def test_propose_open_table_returns_a_chip_and_opens_nothing(ctx: ToolContext) -> None:
    result = ok(ctx, "proposeOpenTable", table="orders", query="status = 'pending'")
    assert result["chip"] == {
        "label": "Open orders (status = 'pending')",
        "action": {"kind": "openTable", "table": "orders", "query": "status = 'pending'"},
    }
    assert "nothing opens until they click" in result["message"]
    assert result["matchingRows"] == ctx.store.count("orders", "status = 'pending'") > 0
    assert ctx.ui.opened == []
    plain = ok(ctx, "proposeOpenTable", table="Customers")["chip"]
    assert plain["label"] == "Open customers" and plain["action"]["query"] is None


def test_chips_are_never_dead(ctx: ToolContext) -> None:
    assert "orders" in err(ctx, "proposeOpenTable", table="ordrs")["fix"]
    bad_filter = err(ctx, "proposeOpenTable", table="orders", query="stat = 'x'")
    unknown = "The filter `stat = 'x'` names a column orders does not have: stat"
    assert unknown in bad_filter["error"]
    assert "describeTable" in bad_filter["fix"] and "status = '" in bad_filter["fix"]
    bad_column = err(
        ctx,
        "proposeJoinedView",
        left="orders",
        right="customers",
        left_on="customer",
        right_on="id",
    )
    assert "'customer'" in bad_column["error"] and "customer_id" in bad_column["fix"]
    err(
        ctx,
        "proposeJoinedView",
        left="orders",
        right="clients",
        left_on="customer_id",
        right_on="id",
    )


def test_propose_joined_view(ctx: ToolContext) -> None:
    result = ok(
        ctx,
        "proposeJoinedView",
        left="orders",
        right="customers",
        left_on="customer_id",
        right_on="id",
    )
    action = result["chip"]["action"]
    assert action == {
        "kind": "openJoinedView",
        "left": "orders",
        "right": "customers",
        "left_on": "customer_id",
        "right_on": "id",
        "label": result["chip"]["label"],
    }
    assert "orders.customer_id = customers.id" in result["chip"]["label"]
    upper = ok(
        ctx,
        "proposeJoinedView",
        left="orders",
        right="customers",
        left_on="Customer_ID",
        right_on="ID",
    )
    assert upper["chip"]["action"]["left_on"] == "customer_id", "columns get their real names"


def test_open_table_and_tabs_go_through_the_ui(ctx: ToolContext) -> None:
    result = ok(ctx, "openTable", table="orders", query="WHERE status = 'shipped'")
    assert "orders" in result["message"]
    assert ctx.ui.opened == [{"kind": "table", "table": "orders", "query": "status = 'shipped'"}]
    err(ctx, "openTable", table="orders", query="SELECT * FROM orders")
    assert ok(ctx, "listOpenTabs") == {"tabs": [], "count": 0}


def test_ask_returns_the_question_and_choices(ctx: ToolContext) -> None:
    result = ok(ctx, "ask", question="Which status?", choices=["pending", " shipped ", ""])
    assert result == {"question": "Which status?", "choices": ["pending", "shipped"]}
    assert ok(ctx, "ask", question="Sure?")["choices"] == []
    assert "field 'question'" in err(ctx, "ask", choices=["a"])["error"]


def test_search_tools_delegates_to_the_loop(ctx: ToolContext) -> None:
    assert "not available" in err(ctx, "searchTools", query="csv")["error"]
    ctx.search = RecordingSearch()
    assert ok(ctx, "searchTools", query="export to csv")["joined"] == ["exportCsv"]
    ok(ctx, "searchTools", query="stats", limit=10)
    assert ctx.search.calls == [("export to csv", 5), ("stats", 10)]
    assert "field 'limit'" in err(ctx, "searchTools", query="x", limit=11)["error"]


def test_saved_specs_round_trip(ctx: ToolContext) -> None:
    assert ok(ctx, "listSavedSpecs")["specs"] == []
    ok(ctx, "saveSpec", name="pending", table="orders", query="WHERE status = 'pending'")
    ok(
        ctx,
        "saveSpec",
        name="big spenders",
        query="SELECT customer_id, sum(total) FROM orders GROUP BY 1",
    )
    names = [s["name"] for s in ok(ctx, "listSavedSpecs")["specs"]]
    assert names == ["big spenders", "pending"]
    duplicate = err(ctx, "saveSpec", name="pending", table="orders", query="status = 'shipped'")
    assert "overwrite" in duplicate["fix"]
    ok(ctx, "saveSpec", name="pending", table="orders", query="status = 'shipped'", overwrite=True)
    opened = ok(ctx, "openSavedSpec", name="Pending")
    assert opened["spec"]["query"] == "status = 'shipped'"
    assert ctx.ui.opened[-1]["kind"] == "spec" and ctx.ui.opened[-1]["name"] == "pending"
    assert "big spenders" in err(ctx, "openSavedSpec", name="nope")["fix"]


def test_save_spec_refuses_what_would_not_run(ctx: ToolContext) -> None:
    assert "needs a table" in err(ctx, "saveSpec", name="x", query="status = 'x'")["error"]
    assert (
        "does not run" in err(ctx, "saveSpec", name="x", query="SELECT nope FROM orders")["error"]
    )
    err(ctx, "saveSpec", name="x", query="DELETE FROM orders")
    err(ctx, "saveSpec", name="x", table="ordrs", query="status = 'x'")
    assert ok(ctx, "listSavedSpecs")["specs"] == []


def test_specs_are_scoped_per_store(tmp_path: Path) -> None:
    book_a = SpecBook(tmp_path / "specs.sqlite", "sqlite:/a")
    book_b = SpecBook(tmp_path / "specs.sqlite", "sqlite:/b")
    book_a.save_spec(SavedSpec("p", "status = 'p'", "orders"))
    assert book_b.list_specs() == []
    book_b.save_spec(SavedSpec("p", "SELECT 1"))
    assert book_a.get_spec("p").table == "orders"
    with pytest.raises(SpecError):
        book_a.save_spec(SavedSpec("p", "SELECT 2"))
    assert book_a.delete_spec("p") and book_a.list_specs() == []


def test_relationships(ctx: ToolContext) -> None:
    assert "declareRelationship" in ok(ctx, "listRelationships")["message"]
    first = ok(
        ctx,
        "declareRelationship",
        left="orders",
        left_on="customer_id",
        right="customers",
        right_on="id",
    )
    assert first["created"] and first["relationship"]["name"] == "orders.customer_id->customers.id"
    again = ok(
        ctx,
        "declareRelationship",
        left="customers",
        left_on="id",
        right="orders",
        right_on="customer_id",
    )
    assert again["created"] is False
    ok(
        ctx,
        "declareRelationship",
        left="orders",
        left_on="product_id",
        right="products",
        right_on="id",
        name="product",
    )
    assert len(ok(ctx, "listRelationships")["relationships"]) == 2
    assert [r["name"] for r in ok(ctx, "listRelationships", table="products")["relationships"]] == [
        "product"
    ]
    bad = err(
        ctx, "declareRelationship", left="orders", left_on="cust", right="customers", right_on="id"
    )
    assert "customer_id" in bad["fix"]
    with pytest.raises(SpecError):
        ctx.specs.declare_relationship(Relationship("product", "orders", "id", "customers", "id"))


def test_attachment_tools(ctx: ToolContext, tmp_path: Path) -> None:
    assert "No files" in ok(ctx, "listAttachments")["message"]
    (tmp_path / "prices.csv").write_text("sku,price\na,1\nb,2\n")
    ctx.attachments.add(tmp_path / "prices.csv")
    listed = ok(ctx, "listAttachments")["attachments"]
    assert listed == [{"id": "att1", "name": "prices.csv", "kind": "csv", "size": 18}]
    page = ok(ctx, "readAttachment", attachment="prices.csv", offset=1)
    assert page["rows"] == [{"sku": "b", "price": "2"}] and page["totalRows"] == 2
    missing = err(ctx, "readAttachment", attachment="other.csv")
    assert "att1 (prices.csv)" in missing["fix"]


def test_export_csv_and_json(ctx: ToolContext) -> None:
    query = "SELECT id, status FROM orders WHERE id <= 3 ORDER BY id"
    folder = ctx.export_dir / "exports"
    result = ok(ctx, "exportCsv", query=query, path="orders.csv")
    assert result["rows"] == 3 and Path(result["path"]) == folder / "orders.csv"
    with (folder / "orders.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["id"] for r in rows] == ["1", "2", "3"]
    ok(ctx, "exportJson", query=query, path="orders.json")
    data = json.loads((folder / "orders.json").read_text())
    assert [r["id"] for r in data] == [1, 2, 3] and set(data[0]) == {"id", "status"}


def test_exports_refuse_overwrite_and_bad_paths(ctx: ToolContext) -> None:
    target = ctx.export_dir / "exports" / "keep.csv"
    target.parent.mkdir()
    target.write_text("precious\n")
    refused = err(ctx, "exportCsv", query="SELECT 1 AS one", path="keep.csv")
    assert "already exists" in refused["error"] and "overwrite=true" in refused["fix"]
    assert target.read_text() == "precious\n"
    refused = err(ctx, "exportCsv", query="SELECT 1 AS one", path="keep.csv", overwrite=True)
    assert "no terminal to ask" in refused["error"]  # nobody to confirm the replace
    assert target.read_text() == "precious\n"
    assert "does not exist" in err(ctx, "exportJson", query="SELECT 1", path="sub/x.json")["error"]
    assert not (ctx.export_dir / "sub").exists()
    err(ctx, "exportJson", query="SELECT 1", path="../escape.json")
    err(ctx, "exportJson", query="SELECT 1", path="/tmp/abs.json")
    err(ctx, "exportCsv", query="DELETE FROM orders", path="x.csv")
    assert not (ctx.export_dir / "exports" / "x.csv").exists()


def test_a_damaged_specs_file_is_named_with_a_fix(ctx: ToolContext) -> None:
    ctx.specs.path.write_bytes(b"\x00not a database" * 500)
    for tool, args in [("listSavedSpecs", {}), ("listRelationships", {})]:
        result = err(ctx, tool, **args)
        assert str(ctx.specs.path) in result["error"] and "internal error" not in result["error"]
        assert "Move it aside" in result["fix"]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("openTable", {"table": "orders", "query": "status = 'pending'"}),
        ("proposeOpenTable", {"table": "orders", "query": "status = 'pending'"}),
        ("saveSpec", {"name": "pending", "table": "orders", "query": "status = 'pending'"}),
    ],
)
def test_a_stopped_check_of_a_filter_says_stopped_not_that_the_filter_is_wrong(
    ctx: ToolContext, tool: str, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the model reads after a Stop must not send it to rewrite a condition that works."""
    import threading

    from agent.stop import reads_stop_when

    stop, count = threading.Event(), type(ctx.store).count

    def pressed(self: Any, table: str, condition: str | None = None) -> int:
        if condition:  # Stop lands as the filter's check starts; the real read runs
            stop.set()
        return count(self, table, condition)

    monkeypatch.setattr(type(ctx.store), "count", pressed)
    with reads_stop_when(stop.is_set):
        failure = err(ctx, tool, **args)
    assert stop.is_set()
    assert "stopped" in failure["error"] and "Stop" in failure["fix"]
    assert "condition" not in failure["error"] and "does not run" not in failure["error"]
    assert ok(ctx, tool, **args)  # the same call, not stopped, works
