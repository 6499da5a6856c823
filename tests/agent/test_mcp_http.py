"""`tabletalk mcp --http`: a real server process on a free loopback port, the official client.

Each test shares one server (started once per module) and issues its own tokens through the CLI,
so what a user does (create a token, connect, revoke) is what runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import catalog
from agent.mcp_server.offer import offered_names

TIMEOUT = 60
ROOT = Path(__file__).resolve().parents[2]


def xdg_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        path = home / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(path)
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


class HttpServer:
    """A `tabletalk mcp --http --port 0` process and what it printed."""

    def __init__(self, home: Path, db: Path) -> None:
        self.env = xdg_env(home)
        self.db = db
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent", "mcp", "--http", "--port", "0", "--db", str(db)],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", first)
        if not found:
            self.process.kill()
            raise RuntimeError(f"server did not start: {first!r} {self.process.stderr.read()}")
        self.url = found.group(1)

    def token(self, name: str, level: str) -> str:
        done = cli(self.env, "mcp", "token", "create", name, "--level", level)
        assert done.returncode == 0, done.stderr
        return re.search(r"(tt_\S+)", done.stdout).group(1)  # type: ignore[union-attr]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(TIMEOUT)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Iterator[HttpServer]:
    home = tmp_path_factory.mktemp("mcp-http")
    db = Path(shutil.copy(demo_template, home / "shop.sqlite"))
    served = HttpServer(home, db)
    yield served
    served.stop()


async def _with_client(url: str, token: str, work: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return await work(client)


def session(url: str, token: str, work: Any) -> Any:
    return asyncio.run(_with_client(url, token, work))


def list_names(server: HttpServer, token: str) -> list[str]:
    async def work(client: Client) -> list[str]:
        return [tool.name for tool in (await client.list_tools()).tools]

    return session(server.url, token, work)


def call(server: HttpServer, token: str, name: str, args: dict[str, Any]) -> types.CallToolResult:
    async def work(client: Client) -> types.CallToolResult:
        return await client.call_tool(name, args)

    return session(server.url, token, work)


def raw_post(
    server: HttpServer, headers: dict[str, str], body: bytes | None = None
) -> httpx2.Response:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    sent.update(headers)
    return httpx2.post(
        server.url, content=body or json.dumps(init).encode(), headers=sent, timeout=TIMEOUT
    )


def test_each_token_level_lists_exactly_its_catalog_tools(server: HttpServer) -> None:
    for level in ("read", "stage", "full"):
        token = server.token(f"lister-{level}", level)
        offered = offered_names(level, catalog.available_rows(frozenset()))  # no vector index
        assert list_names(server, token) == list(offered)
    assert "stageItem" not in catalog.mcp_names("read")


def test_a_call_above_the_tokens_level_is_refused_naming_the_level(server: HttpServer) -> None:
    token = server.token("reader", "read")
    result = call(
        server,
        token,
        "stageItem",
        {"table": "customers", "op": "update", "key": {"id": 1}, "values": {"city": "X"}},
    )
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "needs level stage" in text and "token create" in text
    counted = call(server, token, "countItems", {"table": "orders"})
    assert not counted.is_error


@pytest.mark.parametrize("authorization", [None, "Bearer tt_not-a-real-token", "Basic abc"])
def test_requests_without_a_valid_token_get_401(
    server: HttpServer, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = raw_post(server, headers)
    assert response.status_code == 401
    assert "token create" in response.json()["fix"]
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_revoked_token_is_refused_on_its_next_request(server: HttpServer) -> None:
    token = server.token("short-lived", "read")
    assert list_names(server, token)
    done = cli(server.env, "mcp", "token", "revoke", "short-lived")
    assert done.returncode == 0, done.stderr
    response = raw_post(server, {"Authorization": f"Bearer {token}"})
    assert response.status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Host": "evil.example"},
        {"Origin": "http://127.0.0.1.evil.example:8765"},
        {"Host": "attacker.test:8765"},
    ],
)
def test_a_foreign_origin_or_host_gets_403(server: HttpServer, headers: dict[str, str]) -> None:
    token = server.token(f"rebind-{abs(hash(json.dumps(headers)))}", "full")
    response = raw_post(server, {"Authorization": f"Bearer {token}", **headers})
    assert response.status_code == 403


def test_an_oversized_request_is_refused(server: HttpServer) -> None:
    token = server.token("big-sender", "read")
    response = raw_post(server, {"Authorization": f"Bearer {token}"}, b"x" * (5 * 1024 * 1024))
    assert response.status_code == 413


def test_two_clients_staging_at_once_lose_nothing(server: HttpServer) -> None:
    tokens = [server.token("writer-a", "stage"), server.token("writer-b", "stage")]

    async def stage_fifty(token: str, offset: int) -> list[bool]:
        async def work(client: Client) -> list[bool]:
            results = []
            for index in range(50):
                result = await client.call_tool(
                    "stageItem",
                    {
                        "table": "customers",
                        "op": "update",
                        "key": {"id": offset + index},
                        "values": {"city": f"City {offset + index}"},
                    },
                )
                results.append(not result.is_error)
            return results

        return await _with_client(server.url, token, work)

    async def both() -> list[list[bool]]:
        return list(await asyncio.gather(stage_fifty(tokens[0], 1), stage_fifty(tokens[1], 101)))

    outcomes = asyncio.run(both())
    assert all(all(batch) for batch in outcomes)
    listed = cli(server.env, "staged", "list", "--json", "--db", str(server.db))
    changes = [c for c in json.loads(listed.stdout) if c["origin"].startswith("mcp:writer-")]
    assert len(changes) == 100
    assert {c["origin"] for c in changes} == {"mcp:writer-a", "mcp:writer-b"}


def test_the_audit_log_and_token_list_name_the_client(server: HttpServer) -> None:
    token = server.token("auditor", "read")
    assert not call(server, token, "countItems", {"table": "customers"}).is_error
    entries = []
    for path in Path(server.env["XDG_STATE_HOME"]).parent.rglob("audit.jsonl"):
        entries += [json.loads(line) for line in path.read_text().splitlines()]
    mine = [e for e in entries if e.get("client") == "auditor"]
    assert mine and mine[-1]["tool"] == "countItems" and mine[-1]["mode"] == "read"
    listed = json.loads(cli(server.env, "mcp", "token", "list", "--json").stdout)
    auditor = next(c for c in listed if c["name"] == "auditor")
    assert auditor["calls"] == 1 and auditor["last_used"]
    clients = sqlite3.connect(
        Path(server.env["XDG_STATE_HOME"]) / "tabletalk" / "mcp_clients.sqlite"
    )
    stored = [row[0] for row in clients.execute("SELECT token_hash FROM clients")]
    clients.close()
    assert token not in stored and all(len(h) == 64 for h in stored)


def test_tokens_file_is_private_and_tokens_are_shown_once(tmp_path: Path) -> None:
    env = xdg_env(tmp_path)
    created = cli(env, "mcp", "token", "create", "desk", "--level", "stage")
    assert created.returncode == 0 and "tt_" in created.stdout
    again = cli(env, "mcp", "token", "create", "desk", "--level", "read")
    assert again.returncode == 2 and "already exists" in again.stderr
    listed = cli(env, "mcp", "token", "list")
    assert "desk" in listed.stdout and "tt_" not in listed.stdout and "never" in listed.stdout
    path = next(Path(env["XDG_STATE_HOME"]).rglob("mcp_clients.sqlite"))
    assert path.stat().st_mode & 0o777 == 0o600
    gone = cli(env, "mcp", "token", "revoke", "nobody")
    assert gone.returncode == 2 and "No client named" in gone.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.com"])
def test_binding_anything_but_loopback_is_refused(tmp_path: Path, host: str) -> None:
    done = cli(xdg_env(tmp_path), "mcp", "--http", "--host", host, "--port", "0")
    assert done.returncode == 2
    assert "only binds to this machine" in done.stderr


def test_a_port_out_of_range_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    done = cli(xdg_env(tmp_path), "mcp", "--http", "--port", "99999")
    assert done.returncode == 2, done.stderr
    assert "99999 is not a port number (0 to 65535)" in done.stderr
    assert "--port 0 for any free one" in done.stderr and "unexpected" not in done.stderr


def test_ctrl_c_stops_the_server_cleanly(tmp_path: Path, demo_template: Path) -> None:
    db = Path(shutil.copy(demo_template, tmp_path / "shop.sqlite"))
    served = HttpServer(tmp_path / "home", db)
    token = served.token("brief", "read")
    assert list_names(served, token)
    served.process.send_signal(signal.SIGINT)
    assert served.process.wait(TIMEOUT) == 0
    assert "stopped" in served.process.stderr.read()  # type: ignore[union-attr]
