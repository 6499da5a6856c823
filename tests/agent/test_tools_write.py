"""Write tools: edits land in the staging area only; the table changes at commit, never before."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.tools.base import ToolContext
from agent.tools.write_tools import STAGED_NOTE
from tests.support.tools import err, make_ctx, ok


@pytest.fixture
def ctx(tmp_path: Path, demo_path: Path):
    context = make_ctx(demo_path, tmp_path, conversation_id="conv-1")
    store, staging = context.store, context.staging
    yield context
    staging.close()
    store.close()


def status_of(ctx: ToolContext, order_id: int) -> str:
    return ctx.store.get_item("orders", {"id": order_id})["status"]


def test_stage_update_shows_the_diff_and_writes_nothing(ctx: ToolContext) -> None:
    before = status_of(ctx, 7)
    result = ok(
        ctx, "stageItem", table="orders", op="update", key={"id": 7}, values={"status": "lost"}
    )
    assert result["staged"] == 1 and result["note"] == STAGED_NOTE
    assert result["sample"][0]["diff"] == [{"column": "status", "old": before, "new": "lost"}]
    assert status_of(ctx, 7) == before
    change = ctx.staging.get(result["ids"][0])
    assert change.origin == "chat:conv-1"
    ctx.staging.commit()
    assert status_of(ctx, 7) == "lost"


def test_stage_create_and_delete(ctx: ToolContext) -> None:
    values = {
        "customer_id": 1,
        "product_id": 1,
        "quantity": 1,
        "total": 9.5,
        "status": "pending",
        "created_at": "2026-01-01T10:00:00",
    }
    created = ok(ctx, "stageItem", table="orders", op="create", key={"id": 5001}, values=values)
    assert created["sample"][0]["op"] == "create"
    deleted = ok(ctx, "stageItem", table="orders", op="delete", key={"id": 3})
    assert deleted["sample"][0]["op"] == "delete"
    assert ctx.staging.count() == 2 and ctx.store.get_item("orders", {"id": 5001}) is None


def test_stage_item_failures_name_the_recovery(ctx: ToolContext) -> None:
    exists = err(
        ctx, "stageItem", table="orders", op="create", key={"id": 7}, values={"status": "x"}
    )
    assert "customer_id" in exists["error"]  # required columns are named before anything else
    full = {
        "customer_id": 1, "product_id": 1, "quantity": 1, "total": 1.0,
        "status": "x", "created_at": "2026-01-01",
    }  # fmt: skip
    clash = err(ctx, "stageItem", table="orders", op="create", key={"id": 7}, values=full)
    assert "already exists" in clash["error"] and "update" in clash["fix"]
    missing = err(
        ctx, "stageItem", table="orders", op="update", key={"id": 99999}, values={"status": "x"}
    )
    assert "no item" in missing["error"]
    column = err(
        ctx, "stageItem", table="orders", op="update", key={"id": 7}, values={"state": "x"}
    )
    assert "'state'" in column["error"] and "status" in column["fix"]
    table = err(ctx, "stageItem", table="order", op="delete", key={"id": 7})
    assert "orders" in table["fix"]
    no_values = err(ctx, "stageItem", table="orders", op="update", key={"id": 7})
    assert "values is required for update" in no_values["error"]
    assert ctx.staging.count() == 0


def test_staging_conflict_fix_names_a_tool_not_a_cli_command(ctx: ToolContext) -> None:
    deleted = ok(ctx, "stageItem", table="orders", op="delete", key={"id": 7})
    again = err(
        ctx, "stageItem", table="orders", op="update", key={"id": 7}, values={"status": "x"}
    )
    assert f'discardStagedChanges {{"ids": ["{deleted["ids"][0]}"]}}' in again["fix"]
    assert "tabletalk" not in again["fix"]


def test_bulk_edit_stages_35_orders_in_one_call(ctx: ToolContext) -> None:
    query = "SELECT id FROM orders WHERE status = 'pending' ORDER BY id LIMIT 35"
    ids = [row["id"] for row in ctx.store.query(query).rows]
    assert len(ids) == 35
    result = ok(ctx, "bulkEdit", table="orders", query=query, set={"status": "shipped"})
    assert result["staged"] == 35 and ctx.staging.count() == 35
    assert len(result["ids"]) == 20 and result["moreIds"] == 15
    assert len(result["sample"]) == 5
    assert result["sample"][0]["diff"] == [{"column": "status", "old": "pending", "new": "shipped"}]
    assert result["note"] == STAGED_NOTE
    assert all(status_of(ctx, i) == "pending" for i in ids), "nothing written before commit"
    report = ctx.staging.commit()
    assert len(report.committed) == 35
    assert all(status_of(ctx, i) == "shipped" for i in ids)


def test_bulk_edit_by_keys_and_delete(ctx: ToolContext) -> None:
    result = ok(
        ctx, "bulkEdit", table="orders", keys=[{"id": 1}, {"id": 2}, {"id": 2}], delete=True
    )
    assert result["staged"] == 2
    assert {s["op"] for s in result["sample"]} == {"delete"}
    assert ctx.store.get_item("orders", {"id": 1}) is not None


def test_bulk_edit_input_rules(ctx: ToolContext) -> None:
    both = err(
        ctx,
        "bulkEdit",
        table="orders",
        keys=[{"id": 1}],
        query="SELECT id FROM orders",
        delete=True,
    )
    assert "exactly one of keys or query" in both["error"]
    neither = err(ctx, "bulkEdit", table="orders", keys=[{"id": 1}])
    assert "exactly one of set" in neither["error"] and "call bulkEdit like" in neither["fix"]
    no_key = err(
        ctx, "bulkEdit", table="orders", query="SELECT status FROM orders", set={"status": "x"}
    )
    assert "key column" in no_key["error"] and "SELECT id FROM orders" in no_key["fix"]
    nothing = err(
        ctx, "bulkEdit", table="orders", query="SELECT id FROM orders WHERE 0", set={"status": "x"}
    )
    assert "nothing was staged" in nothing["error"]
    absent = err(
        ctx, "bulkEdit", table="orders", keys=[{"id": 1}, {"id": 99999}], set={"status": "x"}
    )
    assert "nothing was staged" in absent["error"]
    key_change = err(ctx, "bulkEdit", table="orders", keys=[{"id": 1}], set={"id": 5})
    assert "key" in key_change["error"]
    assert ctx.staging.count() == 0


def test_list_and_discard_staged_changes(ctx: ToolContext) -> None:
    assert ok(ctx, "listStagedChanges")["message"] == "Nothing is staged."
    ok(ctx, "bulkEdit", table="orders", keys=[{"id": i} for i in range(1, 6)], set={"status": "x"})
    ok(ctx, "stageItem", table="customers", op="update", key={"id": 1}, values={"city": "Oslo"})
    listed = ok(ctx, "listStagedChanges", limit=3)
    assert (
        listed["pending"] == 6 and len(listed["changes"]) == 3 and "3 more" in listed["truncated"]
    )
    assert listed["changes"][0]["diff"][0]["new"] == "x"
    only_customers = ok(ctx, "listStagedChanges", table="customers")
    assert [c["table"] for c in only_customers["changes"]] == ["customers"]

    unknown = err(ctx, "discardStagedChanges", ids=["nope"])
    assert "listStagedChanges" in unknown["fix"]
    one = listed["changes"][0]["id"]
    assert ok(ctx, "discardStagedChanges", ids=[one]) == {"discarded": 1, "pending": 5}
    assert ok(ctx, "discardStagedChanges", table="orders") == {"discarded": 4, "pending": 1}
    assert "exactly one" in err(ctx, "discardStagedChanges")["error"]
    assert ok(ctx, "discardStagedChanges", all=True) == {"discarded": 1, "pending": 0}


def test_listing_staged_changes_tells_the_model_which_conflicted_at_the_last_commit(
    ctx: ToolContext, demo_path: Path
) -> None:
    """A commit (here the CLI's, another process) found order 3 changed since it was staged:
    the model's listing says so, with the row as the commit read it, so it can tell the user."""
    import sqlite3

    ok(ctx, "stageItem", table="orders", op="update", key={"id": 3}, values={"status": "held"})
    ok(ctx, "stageItem", table="orders", op="update", key={"id": 4}, values={"status": "held"})
    with sqlite3.connect(demo_path) as other:
        other.execute("UPDATE orders SET status = 'lost' WHERE id = 3")
    assert not ctx.staging.commit().ok
    listed = ok(ctx, "listStagedChanges")
    by_key = {c["key"]["id"]: c for c in listed["changes"]}
    assert by_key[3]["conflict"]["current"]["status"] == "lost"
    assert "conflict" not in by_key[4]
    assert listed["in_conflict"] == 1 and "take current" in listed["conflict_hint"]


def test_the_conflict_hint_names_commands_that_reach_this_database(
    tmp_path: Path, demo_path: Path, capsys
) -> None:
    """The hint named `tabletalk staged rebase ID` without --db: pasted, it went to the demo
    database and found no such change. Run as written (ID filled in), it takes current here."""
    import re
    import shlex
    import sqlite3

    from agent.cli.main import main as cli_main
    from agent.staging import StagingArea
    from agent.stores.open import open_store

    store = open_store(demo_path)
    ctx = make_ctx(demo_path, tmp_path, store=store, staging=StagingArea(store))  # the CLI's
    ok(ctx, "stageItem", table="orders", op="update", key={"id": 3}, values={"status": "held"})
    with sqlite3.connect(demo_path) as other:
        other.execute("UPDATE orders SET status = 'lost' WHERE id = 3")
    assert not ctx.staging.commit().ok
    listed = ok(ctx, "listStagedChanges")
    commands = re.findall(r"`(tabletalk [^`]+)`", listed["conflict_hint"])
    assert len(commands) == 2 and all(" --db " in c for c in commands), commands
    rebase = commands[0].replace(" ID", " " + listed["changes"][0]["id"])
    capsys.readouterr()
    assert cli_main(shlex.split(rebase)[1:]) == 0, capsys.readouterr()
    assert "in_conflict" not in ok(ctx, "listStagedChanges")
    ctx.staging.close()
    store.close()


def test_open_staging_panel_goes_through_the_ui(ctx: ToolContext) -> None:
    ok(ctx, "stageItem", table="orders", op="delete", key={"id": 9})
    result = ok(ctx, "openStagingPanel")
    assert result["pending"] == 1 and "staging panel" in result["message"]
    assert ctx.ui.opened == [{"kind": "staging"}]
    assert "field 'now'" in err(ctx, "openStagingPanel", now=True)["error"]


def test_bulk_edit_refuses_too_many_items_at_once(ctx: ToolContext) -> None:
    from agent.staging import MAX_ITEMS_PER_CALL

    keys = [{"id": i} for i in range(1, MAX_ITEMS_PER_CALL + 2)]
    failure = err(ctx, "bulkEdit", table="orders", keys=keys, set={"status": "x"})
    assert "nothing was staged" in failure["error"] and "Narrow" in failure["fix"]
    assert ctx.staging.count() == 0
