"""DynamoDB staging and commit against moto's server, next to bare-boto3 floors.

Stage one update on 1,000 items of a 1,000-item table (selected by a PartiQL query), then
commit (10 transactions). Floors measured in the same run: a bare paged read of the same items
(ExecuteStatement + BatchGetItem) for staging, the same TransactWriteItems calls with the same
conditions from a bare client for the commit. Also: the first table-tab page of a large table
vs one bare Scan page. Targets: commit ≤ 1.5× its floor, staging ≤ 2× its floor, first page
≤ floor + 300 ms, peak memory < 250 MB. Each figure is the median of RUNS (default 3) runs.
Usage: [RUNS=N] .venv/bin/python bench/dynamodb_commit.py [big]
"""

from __future__ import annotations

import atexit
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import boto3  # noqa: E402

from agent.staging import StagingArea  # noqa: E402
from agent.stores.base import ChangeToApply  # noqa: E402
from agent.stores.dynamodb.apply import batches, request_token, write_of  # noqa: E402
from agent.stores.open import open_store  # noqa: E402

REGION = "us-east-1"
N = 1000
QUERY = "SELECT id FROM \"orders\" WHERE status = 'pending'"  # moto: quoted SELECT names fail


def start_server() -> str:
    """moto's server in its own process, so peak memory below is tabletalk's alone."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    binary = Path(sys.executable).with_name("moto_server")
    server = subprocess.Popen(
        [str(binary), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(server.terminate)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/moto-api/", timeout=1).close()
            return url
        except OSError:
            time.sleep(0.1)
    raise SystemExit("moto_server did not start")


def reset(url: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST")).close()


def fill(client: Any, count: int) -> None:
    client.create_table(
        TableName="orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for start in range(1, count + 1, 25):
        client.batch_write_item(
            RequestItems={
                "orders": [
                    {
                        "PutRequest": {
                            "Item": {
                                "id": {"N": str(i)},
                                "status": {"S": "pending"},
                                "total": {"N": f"{i}.25"},
                            }
                        }
                    }
                    for i in range(start, min(start + 25, count + 1))
                ]
            }
        )


def stage_and_commit(url: str, client: Any, tmp: Path, run: int) -> dict[str, float]:
    """One measured round on a fresh 1,000-item table: the read floor, staging and commit
    through tabletalk, then (on another fresh table) the commit floor."""
    reset(url)
    fill(client, N)
    t0 = time.perf_counter()
    keys = client.execute_statement(Statement=QUERY)["Items"]
    for start in range(0, len(keys), 100):
        client.batch_get_item(
            RequestItems={"orders": {"Keys": keys[start : start + 100], "ConsistentRead": True}}
        )
    read_floor = time.perf_counter() - t0

    store = open_store(f"dynamodb://{REGION}")  # a fresh store: its first reads are timed too
    area = StagingArea(store, tmp / f"staging-{run}.sqlite")
    t0 = time.perf_counter()
    staged = area.stage_many("orders", query=QUERY, set={"status": "shipped"})
    stage_s = time.perf_counter() - t0
    changes = [ChangeToApply(c.id, c.table, c.key, c.op, c.values, c.pre_image) for c in staged]
    t0 = time.perf_counter()
    report = area.commit()
    commit_s = time.perf_counter() - t0
    assert len(report.committed) == N, report.conflicts[:3]
    area.close()

    reset(url)
    fill(client, N)
    fresh = open_store(f"dynamodb://{REGION}")
    plan = [([write_of(fresh, c) for c in b], request_token(b)) for b in batches(changes)]
    t0 = time.perf_counter()
    for writes, token in plan:
        client.transact_write_items(TransactItems=writes, ClientRequestToken=token)
    commit_floor = time.perf_counter() - t0
    return {
        "stage": stage_s,
        "read_floor": read_floor,
        "commit": commit_s,
        "commit_floor": commit_floor,
    }


def first_page(client: Any) -> tuple[float, float]:
    """(one bare Scan page, the app's first page through a fresh store's row source)."""
    t0 = time.perf_counter()
    client.scan(TableName="orders", Limit=200)
    scan_floor = time.perf_counter() - t0
    store = open_store(f"dynamodb://{REGION}")
    t0 = time.perf_counter()
    source = store.pages("orders")
    source.page(0)
    return scan_floor, time.perf_counter() - t0


def main() -> None:
    big = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = int(os.environ.get("RUNS", "3"))
    url = start_server()
    tmp = Path(tempfile.mkdtemp())
    os.environ.update(
        AWS_ENDPOINT_URL_DYNAMODB=url,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION=REGION,
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_DATA_HOME=str(tmp / "data"),
    )
    client = boto3.client("dynamodb", region_name=REGION)
    rounds = [stage_and_commit(url, client, tmp, run) for run in range(runs)]

    def med(name: str) -> float:
        return statistics.median(r[name] for r in rounds)

    reset(url)
    fill(client, big)
    pages = [first_page(client) for _ in range(max(runs, 5))]  # moto's Scan time varies a lot
    scan_floor = statistics.median(p[0] for p in pages)
    page_s = statistics.median(p[1] for p in pages)
    page_over = statistics.median(p[1] - p[0] for p in pages)  # each against its own floor

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stage, read_floor = med("stage"), med("read_floor")
    commit, commit_floor = med("commit"), med("commit_floor")
    print(f"medians of {runs} runs; load {os.getloadavg()[0]:.1f} at the end")
    print(
        f"stage {N} items (PartiQL-selected)   {stage:8.3f} s   floor {read_floor:.3f} s   "
        f"ratio {stage / read_floor:.2f} (target ≤ 2)"
    )
    print(
        f"commit {N} changes (10 transactions) {commit:8.3f} s   floor {commit_floor:.3f} s   "
        f"ratio {commit / commit_floor:.2f} (target ≤ 1.5)"
    )
    print(
        f"first page of {big:,} items           {page_s:8.3f} s   floor {scan_floor:.3f} s   "
        f"over floor {1000 * page_over:.0f} ms (median of paired runs; target < 300)"
    )
    print(f"peak memory of tabletalk's process {peak_mb:.0f} MB (target < 250)")


if __name__ == "__main__":
    main()
