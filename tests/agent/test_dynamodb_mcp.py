"""`tabletalk mcp --db dynamodb://...` serves the same tools on DynamoDB (official MCP SDK)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp import StdioServerParameters

from tests.agent.test_dynamodb_store import make_orders, raw_client
from tests.agent.test_mcp_server import McpSession, ok, server_command, xdg_env
from tests.support.moto_dynamodb import REGION


def test_the_mcp_server_reads_and_stages_on_dynamodb(dynamo_endpoint: str, tmp_path: Path) -> None:
    make_orders(raw_client(), 20)
    env = {
        **xdg_env(tmp_path / "home"),
        **{k: v for k, v in os.environ.items() if k.startswith("AWS_")},
    }
    params = StdioServerParameters(
        command=server_command()[0],
        args=[*server_command("--level", "stage", "--db", f"dynamodb://{REGION}")[1:]],
        env=env,
        cwd=str(tmp_path),
    )
    errlog = (tmp_path / "server-stderr.txt").open("w+", encoding="utf-8")
    session = McpSession(params, errlog)
    try:
        listed = ok(session.call("listTables"))
        assert listed["tables"] == ["orders"] and listed["kind"] == "dynamodb"
        got = ok(session.call("getItem", {"table": "orders", "key": {"id": 4}}))
        assert got["item"]["status"] == "shipped" and got["capacity"]["readUnits"] >= 0
        staged = session.call(
            "stageItem",
            {
                "table": "orders",
                "op": "update",
                "key": {"id": 4},
                "values": {"tags": {"$set": ["a"]}},
            },
        )
        assert '"$set": ["a"]' in json.dumps(ok(staged))
    finally:
        session.close()
        errlog.seek(0)
        stderr = errlog.read()
        errlog.close()
    assert "Traceback" not in stderr, stderr
    item = raw_client().get_item(TableName="orders", Key={"id": {"N": "4"}})["Item"]
    assert "tags" not in item, "staged, not written"
