"""`tabletalk mcp`: a real server subprocess per level, driven by the official `mcp` client
over stdio: the tools each level offers, calls, refusals, staging, exports and commit."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import catalog
from agent.cli import mcp_cmd, staged
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from agent.tools.registry import default_description, input_schema
from catalog.rows import Access

ROOT = Path(__file__).resolve().parents[2]
XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
TIMEOUT = 30.0


def server_command(*args: str) -> list[str]:
    """The `tabletalk mcp` command line (through `python -m agent` once main.py registers it)."""
    from agent.cli.main import build_parser

    try:
        build_parser().parse_args(["mcp", "--level", "read"])
    except SystemExit:
        return [sys.executable, "-m", "agent.cli.mcp_cmd", *args]
    return [sys.executable, "-m", "agent", "mcp", *args]


def xdg_env(home: Path) -> dict[str, str]:
    """The environment with every XDG base dir under `home` (never the real home)."""
    env = dict(os.environ)
    for var in XDG_VARS:
        directory = home / var.lower()
        directory.mkdir(parents=True, exist_ok=True)
        env[var] = str(directory)
    env["PYTHONPATH"] = str(ROOT)
    return env


class McpSession:
    """A connected `mcp` client on a background event loop, called synchronously by tests."""

    def __init__(
        self, params: StdioServerParameters, errlog: io.TextIOBase, mode: str = "legacy"
    ) -> None:
        self.mode = mode
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._task = asyncio.run_coroutine_threadsafe(self._hold(params, errlog), self._loop)
        if not self._ready.wait(TIMEOUT) or self._client is None:
            self._task.result(1)  # raises the reason it did not start
            raise RuntimeError("the MCP server did not start")

    async def _hold(self, params: StdioServerParameters, errlog: io.TextIOBase) -> None:
        self._stop = asyncio.Event()
        try:
            async with Client(stdio_client(params, errlog=errlog), mode=self.mode) as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        finally:
            self._ready.set()

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(TIMEOUT)

    def tools(self) -> list[types.Tool]:
        assert self._client is not None
        return self._run(self._client.list_tools()).tools

    def call(
        self, name: str, arguments: dict[str, Any] | None = None, timeout: float | None = None
    ) -> types.CallToolResult:
        assert self._client is not None
        return self._run(
            self._client.call_tool(name, arguments or {}, read_timeout_seconds=timeout)
        )

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._task.result(TIMEOUT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT)
        self._loop.close()


class Served:
    """One running server: its client, its database, its working and XDG directories."""

    def __init__(self, level: str, root: Path, template: Path) -> None:
        self.level = level
        self.root = root
        self.db = Path(shutil.copy(template, root / "demo.sqlite"))
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        self.env = xdg_env(root / "home")
        params = StdioServerParameters(
            command=server_command()[0],
            args=[*server_command("--level", level, "--db", str(self.db))[1:]],
            env=self.env,
            cwd=str(self.cwd),
        )
        self.errlog = (root / "server-stderr.txt").open("w+", encoding="utf-8")
        # the full server speaks the 2026 protocol era, the others the legacy handshake
        self.session = McpSession(params, self.errlog, "auto" if level == "full" else "legacy")

    def staging(self, monkeypatch: pytest.MonkeyPatch) -> tuple[SQLiteStore, StagingArea]:
        """The server's store and staging area, opened as `tabletalk staged` would."""
        for var in XDG_VARS:
            monkeypatch.setenv(var, self.env[var])
        store = SQLiteStore.open(self.db)
        return store, StagingArea(store)

    def close(self) -> None:
        self.session.close()
        self.errlog.seek(0)
        stderr = self.errlog.read()
        self.errlog.close()
        assert "Traceback" not in stderr, stderr


def serve(level: str, factory: pytest.TempPathFactory, template: Path) -> Iterator[Served]:
    served = Served(level, factory.mktemp(f"mcp-{level}"), template)
    yield served
    served.close()


@pytest.fixture(scope="module")
def read_server(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Iterator[Served]:
    yield from serve("read", tmp_path_factory, demo_template)


@pytest.fixture(scope="module")
def stage_server(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Iterator[Served]:
    yield from serve("stage", tmp_path_factory, demo_template)


@pytest.fixture(scope="module")
def full_server(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Iterator[Served]:
    yield from serve("full", tmp_path_factory, demo_template)


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def ok(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    data = json.loads(text(result))
    assert result.structured_content == data
    return data


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error, text(result)
    return text(result)


def audit_entries(served: Served) -> list[dict[str, Any]]:
    files = list(Path(served.env["XDG_STATE_HOME"]).rglob("audit.jsonl"))
    files += list(Path(served.env["XDG_CACHE_HOME"]).rglob("audit.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


# -- what each level offers ----------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["read_server", "stage_server", "full_server"])
def test_each_level_lists_exactly_the_catalog_tools_for_it(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    served: Served = request.getfixturevalue(fixture)
    listed = [tool.name for tool in served.session.tools()]
    expected = list(catalog.mcp_names(served.level, catalog.available_rows(frozenset())))
    if served.level == "full":
        expected.append("commitStagedChanges")
    assert listed == expected
    assert not {"searchTools", "ask", "openTable", "listOpenTabs"} & set(listed)


def test_levels_nest_and_tools_read_like_chat(
    read_server: Served, stage_server: Served, full_server: Served
) -> None:
    read = {tool.name: tool for tool in read_server.session.tools()}
    stage = {tool.name: tool for tool in stage_server.session.tools()}
    full = {tool.name: tool for tool in full_server.session.tools()}
    assert set(read) < set(stage) < set(full)
    assert "stageItem" not in read and "exportCsv" not in stage
    rows = catalog.row_by_name()
    for name, tool in full.items():
        if name == "commitStagedChanges":
            assert tool.annotations is not None and tool.annotations.read_only_hint is False
            continue
        assert tool.description == default_description(name)
        assert tool.input_schema == input_schema(name)
        hints = tool.annotations
        assert hints is not None
        if rows[name].access is Access.READ:
            assert hints.read_only_hint is True
        if rows[name].access in (Access.WRITE, Access.EXPORT):
            assert hints.read_only_hint is False and hints.destructive_hint is False


# -- calls ---------------------------------------------------------------------------------------


def test_read_level_counts_items_and_audits_the_gated_call(read_server: Served) -> None:
    data = ok(read_server.session.call("countItems", {"table": "customers"}))
    assert data["table"] == "customers"
    assert data["count"] > 0
    entries = [e for e in audit_entries(read_server) if e["tool"] == "countItems"]
    assert entries and entries[-1]["decided_by"] == "mcp-level"
    assert entries[-1]["mode"] == "read" and entries[-1]["decision"] == "allow"


def test_a_client_that_gives_up_on_a_runaway_query_gets_the_server_back(
    read_server: Served,
) -> None:
    runaway = (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
    )
    with pytest.raises(MCPError, match="timed out"):
        read_server.session.call("runQuery", {"query": runaway}, timeout=0.5)
    started = time.monotonic()
    ok(read_server.session.call("countItems", {"table": "orders"}))
    assert time.monotonic() - started < 5  # the query was stopped, not left to its 30 s limit


def test_read_level_refuses_staging_naming_the_level(read_server: Served) -> None:
    message = error_text(
        read_server.session.call(
            "stageItem",
            {"table": "customers", "op": "update", "key": {"id": 1}, "values": {"name": "X"}},
        )
    )
    assert "stageItem needs --level stage" in message
    assert "tabletalk mcp --level stage" in message


def test_refusals_for_export_and_app_only_tools(stage_server: Served) -> None:
    export = {"query": "SELECT 1", "path": "x.csv"}
    assert "exportCsv needs --level full" in error_text(
        stage_server.session.call("exportCsv", export)
    )
    assert "not offered over MCP" in error_text(
        stage_server.session.call("openTable", {"table": "orders"})
    )
    assert "unknown tool 'nope'" in error_text(stage_server.session.call("nope"))


def test_invalid_input_names_the_field_and_a_valid_call(stage_server: Served) -> None:
    message = error_text(
        stage_server.session.call(
            "stageItem", {"table": "customers", "op": "upsert", "key": {"id": 1}}
        )
    )
    assert "field 'op'" in message
    assert "fix: call stageItem like" in message


def test_stage_level_stages_for_review_without_touching_the_table(
    stage_server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ok(
        stage_server.session.call(
            "stageItem",
            {"table": "customers", "op": "update", "key": {"id": 2}, "values": {"name": "Via MCP"}},
        )
    )
    [change_id] = data["ids"]
    store, area = stage_server.staging(monkeypatch)
    try:
        change = area.get(change_id)
        assert change.origin == "mcp:stage"
        assert change.values == {"name": "Via MCP"}
        assert store.get_item("customers", {"id": 2})["name"] != "Via MCP"
    finally:
        area.close()
        store.close()
    out = io.StringIO()
    args = staged_args("list", stage_server.db)
    assert staged.run(args, out=out, err=io.StringIO()) == 0
    assert change_id in out.getvalue() and "mcp:stage" in out.getvalue()


def staged_args(command: str, db: Path, **extra: Any) -> argparse.Namespace:
    return argparse.Namespace(staged_command=command, db=str(db), config=None, **extra)


def test_full_level_exports_into_the_working_directory(full_server: Served) -> None:
    data = ok(
        full_server.session.call(
            "exportCsv", {"query": "SELECT id, name FROM customers ORDER BY id", "path": "c.csv"}
        )
    )
    written = full_server.cwd / "exports" / "c.csv"
    assert written.is_file(), data
    assert written.read_text().splitlines()[0] == "id,name"
    entries = [e for e in audit_entries(full_server) if e["tool"] == "exportCsv"]
    assert entries and entries[-1]["mode"] == "full" and entries[-1]["decided_by"] == "mcp-level"


def test_full_level_cannot_replace_a_file(full_server: Served) -> None:
    kept = full_server.cwd / "exports" / "kept.csv"
    kept.parent.mkdir(exist_ok=True)
    kept.write_text("the user's file\n")
    call = {"query": "SELECT id FROM customers", "path": "kept.csv", "overwrite": True}
    message = error_text(full_server.session.call("exportCsv", call))
    assert "an MCP client cannot replace files" in message and "kept-2.csv" in message
    assert kept.read_text() == "the user's file\n"


def test_full_level_commits_what_it_staged(
    full_server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged_change = ok(
        full_server.session.call(
            "stageItem",
            {
                "table": "customers",
                "op": "update",
                "key": {"id": 3},
                "values": {"name": "Committed"},
            },
        )
    )
    [change_id] = staged_change["ids"]
    data = ok(full_server.session.call("commitStagedChanges", {"ids": [change_id]}))
    assert data["committed"] == [change_id] and data["conflicts"] == []
    item = ok(full_server.session.call("getItem", {"table": "customers", "key": {"id": 3}}))
    assert "Committed" in json.dumps(item)
    store, area = full_server.staging(monkeypatch)
    try:
        assert area.count() == 0
        assert store.get_item("customers", {"id": 3})["name"] == "Committed"
    finally:
        area.close()
        store.close()


def test_commit_of_an_unknown_id_says_how_to_find_ids(full_server: Served) -> None:
    message = error_text(full_server.session.call("commitStagedChanges", {"ids": ["nope"]}))
    assert "nope" in message and "listStagedChanges" in message
    bad = error_text(full_server.session.call("commitStagedChanges", {"ids": "all"}))
    assert "field 'ids'" in bad


def test_commit_reports_conflicts_and_applies_nothing(full_server: Served) -> None:
    [change_id] = ok(
        full_server.session.call(
            "stageItem",
            {"table": "customers", "op": "update", "key": {"id": 4}, "values": {"name": "Mine"}},
        )
    )["ids"]
    other_program = sqlite3.connect(full_server.db)  # someone edits the item meanwhile
    with other_program:
        other_program.execute("UPDATE customers SET name = 'Theirs' WHERE id = 4")
    other_program.close()
    result = full_server.session.call("commitStagedChanges", {})
    assert "conflict" in error_text(result)
    assert result.structured_content is not None
    assert [c["id"] for c in result.structured_content["conflicts"]] == [change_id]
    item = ok(full_server.session.call("getItem", {"table": "customers", "key": {"id": 4}}))
    assert "Theirs" in json.dumps(item)
    ok(full_server.session.call("discardStagedChanges", {"ids": [change_id]}))


# -- startup -------------------------------------------------------------------------------------


def start_failure(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        server_command(*args),
        input="",
        capture_output=True,
        text=True,
        env=xdg_env(tmp_path / "home"),
        cwd=tmp_path,
        timeout=TIMEOUT,
    )


def test_a_missing_database_exits_2_before_serving(tmp_path: Path) -> None:
    done = start_failure(tmp_path, "--db", str(tmp_path / "missing.sqlite"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: ") and "fix:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_config_exits_2_before_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("mode = [unclosed\n")
    assert mcp_cmd.run(mcp_args(config=str(config))) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and "not valid TOML" in err
    assert mcp_cmd.run(mcp_args(config=str(tmp_path / "nope.toml"))) == 2
    out, err = capsys.readouterr()
    assert out == "" and "does not exist" in err and "fix:" in err


def mcp_args(**given: Any) -> argparse.Namespace:
    """Arguments as the root parser hands them to `mcp_cmd.run`."""
    parser = argparse.ArgumentParser()
    mcp_cmd.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["mcp"])
    for name, value in given.items():
        setattr(args, name, value)
    return args


def test_a_stage_client_discards_only_what_it_staged(
    stage_server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    [mine] = ok(
        stage_server.session.call(
            "stageItem",
            {"table": "customers", "op": "update", "key": {"id": 6}, "values": {"name": "Mcp"}},
        )
    )["ids"]
    store, area = stage_server.staging(monkeypatch)
    try:
        theirs = area.stage("customers", "update", {"id": 7}, {"name": "Chat"}, origin="chat:c1")
        refused = error_text(
            stage_server.session.call("discardStagedChanges", {"ids": [mine, theirs.id]})
        )
        assert f"change {theirs.id} was staged by someone else; nothing was discarded" in refused
        assert "needs level full" in refused
        assert {mine, theirs.id} <= {c.id for c in area.list()}
        result = ok(stage_server.session.call("discardStagedChanges", {"all": True}))
        assert "needs level full" in result["keptOthers"]
        left = {c.id: c.origin for c in area.list()}
        assert mine not in left and left[theirs.id] == "chat:c1"
        assert "mcp:stage" not in left.values()
        area.discard(ids=[theirs.id])
    finally:
        area.close()
        store.close()
