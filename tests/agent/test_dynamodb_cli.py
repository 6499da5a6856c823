"""DynamoDB end to end in real processes: demo tables, info, staged commit, a killed commit that
resumes, and throttling retried at the boto3 layer."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import botocore.awsrequest
import pytest

from agent.cli.main import main
from agent.errors import StoreError
from agent.staging import StagingArea
from agent.stores.dynamodb.store import DynamoDBStore
from agent.stores.open import open_store
from tests.agent.test_dynamodb_store import make_orders, raw_client
from tests.support.moto_dynamodb import REGION
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse

ROOT = Path(__file__).resolve().parents[2]
DB = f"dynamodb://{REGION}"


def tabletalk(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )


def test_demo_tables_then_info_then_refusal(dynamo_endpoint: str) -> None:
    made = tabletalk("demo", "dynamodb")
    assert made.returncode == 0, made.stderr
    assert "orders" in made.stdout and dynamo_endpoint in made.stderr
    orders = raw_client().describe_table(TableName="orders")["Table"]
    assert {i["IndexName"] for i in orders["GlobalSecondaryIndexes"]} == {
        "status-index",
        "customer-index",
    }
    info = tabletalk("info", "--db", DB)
    assert info.returncode == 0, info.stderr
    assert "customers" in info.stdout and "key (id)" in info.stdout
    again = tabletalk("demo", "dynamodb")
    assert again.returncode == 2
    assert "already exist" in again.stderr and "Traceback" not in again.stderr


def test_info_on_a_region_without_tables_names_region_profile_and_demo(
    dynamo_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", "--db", f"{DB}?tables=shop-*"]) == 0
    out = capsys.readouterr().out
    assert f"No DynamoDB tables matching 'shop-*' in {REGION}" in out
    assert "--profile" in out and "`tabletalk demo dynamodb`" in out


def test_cli_commit_says_how_many_transactions(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 150)
    area = StagingArea(open_store(DB))
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 151)], set={"status": "x"})
    area.close()
    done = tabletalk("staged", "commit", "--all", "--db", DB)
    assert done.returncode == 0, done.stderr
    assert "2 transactions of up to 100 changes" in done.stderr
    assert "Committed 150 changes" in done.stdout
    item = raw_client().get_item(TableName="orders", Key={"id": {"N": "150"}})["Item"]
    assert item["status"] == {"S": "x"}


CRASHING_COMMIT = textwrap.dedent(
    """
    import os
    from agent.staging import StagingArea
    from agent.stores.open import open_store

    store = open_store("DB")
    calls = []

    def die_after_first(**_):
        calls.append(1)
        os._exit(9)  # kill -9 right after the first transaction committed

    store.client.meta.events.register("after-call.dynamodb.TransactWriteItems", die_after_first)
    StagingArea(store).commit()
    """
).replace("DB", DB)


def test_a_commit_killed_between_transactions_resumes_cleanly(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 250)
    area = StagingArea(open_store(DB))
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 251)], set={"status": "x"})
    area.close()
    killed = subprocess.run(
        [sys.executable, "-c", CRASHING_COMMIT], cwd=ROOT, env=os.environ.copy(), timeout=300
    )
    assert killed.returncode == 9
    statuses = [
        raw_client().get_item(TableName="orders", Key={"id": {"N": str(i)}})["Item"]["status"]
        for i in (1, 100, 101, 250)
    ]
    assert statuses == [{"S": "x"}, {"S": "x"}, {"S": "pending"}, {"S": "shipped"}]
    area = StagingArea(open_store(DB))  # opening settles the interrupted commit
    try:
        assert area.count() == 150, "the first transaction is recognised as applied"
        report = area.commit()
        assert len(report.committed) == 150 and not report.conflicts
        assert area.list() == []
    finally:
        area.close()
    last = raw_client().get_item(TableName="orders", Key={"id": {"N": "250"}})["Item"]
    assert last["status"] == {"S": "x"}


def test_settling_a_killed_commit_reads_the_table_in_batches_not_one_item_at_a_time(
    dynamo_endpoint: str,
) -> None:
    """A commit killed with 250 changes in flight (100 of them landed) is settled when staging
    next opens: with BatchGetItem, 3 calls instead of 250 GetItems (a minute at ~10 ms each
    for a 10,000-change commit), with the same outcome."""
    make_orders(raw_client(), 250)
    area = StagingArea(open_store(DB))
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 251)], set={"status": "x"})
    changes = area.list()
    area.close()
    with sqlite3.connect(area.path) as conn:
        conn.execute(
            "INSERT INTO commits_in_progress VALUES ('killed', ?, ?, 'then')",
            (area.store.identity, json.dumps([c.id for c in changes])),
        )
    conn.close()
    landed = [c for c in changes if int(c.key["id"]) <= 100]
    assert len(area.store.apply([c.to_apply() for c in landed]).applied) == 100
    store = open_store(DB)
    assert isinstance(store, DynamoDBStore)
    calls: list[str] = []
    for operation in ("GetItem", "BatchGetItem"):
        store.client.meta.events.register(
            f"before-call.dynamodb.{operation}", lambda model, **_: calls.append(model.name)
        )
    settled = StagingArea(store)  # opening settles the interrupted commit
    try:
        assert sorted(int(c.key["id"]) for c in settled.list()) == list(range(101, 251))
        assert calls == ["BatchGetItem"] * 3, calls  # was 250 GetItems
    finally:
        settled.close()


def _throttled(
    status: int = 400, code: str = "ThrottlingException", **_: Any
) -> botocore.awsrequest.AWSResponse:
    body = f'{{"__type":"com.amazonaws.dynamodb.v20120810#{code}","message":"slow down"}}'
    raw = botocore.awsrequest.AWSResponse("http://x", status, {"x-amzn-ErrorType": code}, None)
    raw._content = body.encode()  # noqa: SLF001 - a canned reply at the HTTP boundary
    return raw


def test_throttling_is_retried_then_reported_in_one_line(dynamo_endpoint: str) -> None:
    make_orders(raw_client(), 3)
    store = open_store(DB)
    assert isinstance(store, DynamoDBStore)
    remaining = [2]

    def throttle_twice(**kwargs: Any) -> Any:
        if remaining[0] > 0:
            remaining[0] -= 1
            return _throttled()
        return None

    store.client.meta.events.register("before-send.dynamodb.GetItem", throttle_twice)
    assert store.get_item("orders", {"id": 1}) is not None  # two throttles, then success
    assert remaining == [0]
    store.client.meta.events.register("before-send.dynamodb.GetItem", lambda **_: _throttled())
    with pytest.raises(StoreError) as caught:
        store.get_item("orders", {"id": 2})
    assert "throttled" in caught.value.message and "\n" not in caught.value.render().split("\n")[0]
    assert caught.value.fix


def test_ask_stages_a_bulk_edit_of_35_orders_and_the_cli_commits_it(
    dynamo_endpoint: str,
    scripted_bedrock: ScriptedBedrock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_orders(raw_client(), 70)  # 35 pending (odd ids), 35 shipped
    query = "SELECT id FROM \"orders\" WHERE status = 'pending'"  # moto: unquoted SELECT names
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse("countItems", {"table": "orders", "query": "status = 'pending'"}),
                ToolUse("bulkEdit", {"table": "orders", "query": query, "set": {"status": "held"}}),
            ]
        ),
        Reply(text="Staged 35 orders."),
    )
    argv = ["--db", DB, "--mode", "auto", "ask", "hold the pending orders", "--json", "--no-stream"]
    assert main(argv) == 0
    transcript = json.loads(capsys.readouterr().out)
    count, bulk = transcript["steps"][0]["toolCalls"]
    assert count["status"] == "success", json.dumps(count)[-800:]
    assert bulk["status"] == "success", bulk
    assert len(transcript["staged"]) == 35
    assert transcript["readUnits"] > 0
    assert raw_client().get_item(TableName="orders", Key={"id": {"N": "1"}})["Item"]["status"] == {
        "S": "pending"
    }, "staging changes nothing in DynamoDB"
    done = tabletalk("staged", "commit", "--all", "--db", DB)
    assert done.returncode == 0, done.stderr
    held = raw_client().scan(
        TableName="orders",
        FilterExpression="#s = :h",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":h": {"S": "held"}},
    )
    assert held["Count"] == 35


def throttle_scans(
    monkeypatch: pytest.MonkeyPatch, times: int | None, status: int = 400, code: str = ""
) -> list[int]:
    """Every store the CLI opens answers its first `times` Scans (None: all) with throttling
    (or `status` and `code`)."""
    opened = DynamoDBStore.open
    sent: list[int] = []

    def open_throttled(*args: Any, **kwargs: Any) -> DynamoDBStore:
        store = opened(*args, **kwargs)

        def throttle(**_: Any) -> Any:
            sent.append(1)
            failed = _throttled(status, code) if code else _throttled()
            return failed if times is None or len(sent) <= times else None

        store.client.meta.events.register("before-send.dynamodb.Scan", throttle)
        return store

    monkeypatch.setattr(DynamoDBStore, "open", open_throttled)
    return sent


def test_the_cli_says_on_stderr_while_it_retries_and_when_it_gives_up(
    dynamo_endpoint: str,
    no_backoff: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_orders(raw_client(), 3)
    sent = throttle_scans(monkeypatch, 2)
    assert main(["info", "--db", DB]) == 0
    captured = capsys.readouterr()
    assert "orders" in captured.out and len(sent) == 3
    lines = captured.err.splitlines()
    assert [line for line in lines if "retrying" in line] == [
        "DynamoDB is throttling Scan; retrying (attempt 2 of 6)…",
        "DynamoDB is throttling Scan; retrying (attempt 3 of 6)…",
    ]
    assert "gave up" not in captured.err
    sent = throttle_scans(monkeypatch, None)
    assert main(["info", "--db", DB]) == 2
    err = capsys.readouterr().err
    assert len(sent) == 6 and err.count("retrying") == 5
    assert "DynamoDB throttled Scan 6 times; gave up." in err
    assert "Traceback" not in err


def test_a_server_error_retried_says_what_dynamodb_answered(
    dynamo_endpoint: str,
    no_backoff: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """botocore retries a 500 as it does throttling; the wait said nothing (only throttling
    codes were watched), so a slow command looked hung."""
    make_orders(raw_client(), 3)
    throttle_scans(monkeypatch, 1, status=500, code="InternalServerError")
    assert main(["info", "--db", DB]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if "retrying" in line] == [
        "DynamoDB answered InternalServerError to Scan; retrying (attempt 2 of 6)…"
    ]


@pytest.mark.parametrize(
    "command",
    [["info"], ["staged", "list"], ["commits"], ["index"], ["conversations"]],
    ids=" ".join,
)
def test_every_store_command_uses_the_profile_it_is_given(
    command: list[str],
    dynamo_endpoint: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--profile` reaches the DynamoDB client of every command that opens the store (commits,
    index and conversations opened it with the environment's credentials instead)."""
    aws_config = tmp_path / "aws-config"
    aws_config.write_text("[profile other]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(aws_config))
    assert main([*command, "--profile", "no-such-profile", "--db", DB]) == 2
    err = capsys.readouterr().err
    assert "the AWS profile 'no-such-profile' does not exist" in err
    assert "--profile" in err and "Traceback" not in err
