"""Which staged changes an MCP client may discard: below `full`, only those of its own origin
(stdio clients and HTTP token clients alike); at `full`, any."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.errors import TabletalkError
from agent.mcp_server.server import Caller, McpBackend
from agent.mcp_server.tokens import TokenBook
from agent.stores.sqlite import SQLiteStore
from tests.support.tools import make_ctx, ok


@pytest.fixture
def backend(demo_store: SQLiteStore, tmp_path: Path) -> Iterator[McpBackend]:
    served = McpBackend(demo_store, "full", export_dir=tmp_path)
    yield served
    served.close()


def stage(backend: McpBackend, caller: Caller, customer: int) -> str:
    arguments = {"table": "customers", "op": "update", "key": {"id": customer}}
    result = backend.call("stageItem", {**arguments, "values": {"name": caller.name}}, None, caller)
    assert not result.is_error
    [change_id] = json.loads(result.content[0].text)["ids"]
    return str(change_id)


def test_a_stage_token_client_discards_only_its_own_changes(backend: McpBackend) -> None:
    bob = Caller("bob", "stage", "mcp:bob", via_token=True)
    carol = Caller("carol", "full", "mcp:carol", via_token=True)
    mine = stage(backend, bob, 2)
    theirs = backend.staging.stage("customers", "update", {"id": 3}, {"name": "x"}, "chat:c")
    refused = backend.call("discardStagedChanges", {"ids": [theirs.id]}, None, bob)
    assert refused.is_error and "needs level full" in refused.content[0].text
    done = backend.call("discardStagedChanges", {"all": True}, None, bob)
    assert json.loads(done.content[0].text)["discarded"] == 1
    assert [c.id for c in backend.staging.list()] == [theirs.id] and mine != theirs.id
    done = backend.call("discardStagedChanges", {"ids": [theirs.id]}, None, carol)
    assert not done.is_error and backend.staging.count() == 0


def test_the_chat_model_may_discard_any_change(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    try:
        ctx.staging.stage("customers", "update", {"id": 3}, {"name": "x"}, origin="mcp:stage")
        assert ok(ctx, "discardStagedChanges", all=True)["discarded"] == 1
    finally:
        ctx.staging.close()
        ctx.store.close()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("stageItem", {"table": "customers", "op": "delete", "key": {"id": 3}}),
        (
            "stageItem",
            {"table": "customers", "op": "update", "key": {"id": 3}, "values": {"name": "bob's"}},
        ),
        ("bulkEdit", {"table": "customers", "keys": [{"id": 3}, {"id": 4}], "delete": True}),
        (
            "bulkEdit",
            {
                "table": "customers",
                "query": "SELECT id FROM customers WHERE id IN (3, 4)",
                "set": {"name": "bob's"},
            },
        ),
    ],
)
def test_a_stage_client_cannot_rewrite_anothers_staged_change(
    backend: McpBackend, tool: str, arguments: dict[str, object]
) -> None:
    """Staging on an item someone else already staged folds into their change (same id, their
    origin): below `full` that would rewrite a change it may not even discard, and the panel
    would show the result as theirs. It is refused; nothing changes."""
    bob = Caller("bob", "stage", "mcp:bob", via_token=True)
    theirs = backend.staging.stage("customers", "update", {"id": 3}, {"name": "x"}, "chat:c")
    refused = backend.call(tool, arguments, None, bob)
    assert refused.is_error and "chat:c" in refused.content[0].text
    assert backend.staging.list() == [theirs]


def test_a_stage_client_cannot_replace_a_saved_spec(backend: McpBackend) -> None:
    """The person's saved view keeps its query: below `full` a client saves under new names."""
    mine = {"name": "pending orders", "query": "status = 'pending'", "table": "orders"}
    assert not backend.call("saveSpec", mine).is_error
    bob = Caller("bob", "stage", "mcp:bob", via_token=True)
    swapped = {**mine, "query": "status = 'shipped'", "overwrite": True}
    refused = backend.call("saveSpec", swapped, None, bob)
    assert refused.is_error and "new name" in refused.content[0].text
    [spec] = backend.context.specs.list_specs()
    assert spec.query == "status = 'pending'"
    carol = Caller("carol", "full", "mcp:carol", via_token=True)
    assert not backend.call("saveSpec", swapped, None, carol).is_error


def test_a_persons_edit_folded_into_a_clients_change_is_out_of_that_clients_reach(
    backend: McpBackend,
) -> None:
    """The chat stages on an item a stage client staged first: the combined change names both,
    and the client can no longer discard it or turn it into a delete."""
    bob = Caller("bob", "stage", "mcp:bob", via_token=True)
    change_id = stage(backend, bob, 2)
    backend.staging.stage("customers", "update", {"id": 2}, {"city": "Oslo"}, "chat:c")
    [folded] = backend.staging.list()
    assert folded.id == change_id and folded.values == {"name": "bob", "city": "Oslo"}
    assert "mcp:bob" in folded.origin and "chat:c" in folded.origin
    done = backend.call("discardStagedChanges", {"all": True}, None, bob)
    assert json.loads(done.content[0].text)["discarded"] == 0
    arguments = {"table": "customers", "op": "delete", "key": {"id": 2}}
    assert backend.call("stageItem", arguments, None, bob).is_error
    assert [c.values for c in backend.staging.list()] == [{"name": "bob", "city": "Oslo"}]


@pytest.mark.parametrize("name", ["stage", "full", "read", "Stage"])
def test_a_token_client_cannot_be_named_like_the_stdio_clients_origin(
    tmp_path: Path, name: str
) -> None:
    book = TokenBook(tmp_path / "clients.sqlite")
    try:
        with pytest.raises(TabletalkError) as info:
            book.create(name, "stage")
        assert "name of an MCP level" in info.value.message
        assert book.list() == []
        book.create("desk", "stage")
        assert [client.origin for client in book.list()] == ["mcp:desk"]
    finally:
        book.close()
