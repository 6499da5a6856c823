"""The scripted endpoint itself: request-dependent replies and a loud failure when the script runs out."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

from agent.bedrock.client import make_client  # noqa: E402
from agent.bedrock.converse import BedrockCaller  # noqa: E402
from agent.bedrock.errors import BedrockCallError  # noqa: E402
from agent.bedrock.stream import StepEnd  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import NO_REPLY_LEFT, Reply, ToolUse  # noqa: E402

scripted_bedrock = support.scripted_bedrock

NOVA = "us.amazon.nova-2-lite-v1:0"


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))


def ask(text: str, tools: list[dict[str, Any]] | None = None, stream: bool = True) -> StepEnd:
    caller = BedrockCaller(make_client(None, None, max_attempts=1), NOVA, streaming=stream)
    messages = [{"role": "user", "content": [{"text": text}]}]
    return list(caller.step([], messages, tools or []))[-1]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "converse"])
def test_callable_reply_sees_the_request(scripted_bedrock, stream: bool) -> None:
    def decide(body: dict[str, Any]) -> Reply:
        names = [tool["toolSpec"]["name"] for tool in body.get("toolConfig", {}).get("tools", [])]
        if "countItems" in names:
            return Reply(tool_uses=[ToolUse("countItems", {"table": "orders"})])
        return Reply(text="I need the countItems tool.")

    schema = {"json": {"type": "object"}}
    count = {"name": "countItems", "description": "Count rows.", "inputSchema": schema}
    scripted_bedrock.add(decide, decide)

    without = ask("How many orders?", stream=stream)
    with_tool = ask("How many orders?", [count], stream=stream)

    assert without.message["content"] == [{"text": "I need the countItems tool."}]
    assert with_tool.stop_reason == "tool_use"
    assert with_tool.message["content"][0]["toolUse"]["input"] == {"table": "orders"}


def test_running_out_of_replies_fails_loudly(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="only one"))
    ask("first")

    with pytest.raises(BedrockCallError) as raised:
        ask("second")

    assert NO_REPLY_LEFT in raised.value.message
    assert scripted_bedrock.remaining == 0 and len(scripted_bedrock.requests) == 2


def test_env_never_points_at_a_real_aws_profile(scripted_bedrock) -> None:
    env = scripted_bedrock.env()

    assert env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] == scripted_bedrock.url
    assert env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"].startswith("http://127.0.0.1:")
    assert not Path(env["AWS_CONFIG_FILE"]).exists()
    assert not Path(env["AWS_SHARED_CREDENTIALS_FILE"]).exists()


def test_a_client_that_hangs_up_during_a_delayed_reply_leaves_no_traceback(
    scripted_bedrock, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hang-up (as Stop does) is counted, not printed into whatever test runs next."""
    scripted_bedrock.add(Reply(text="late", delay=0.3))
    host, port = scripted_bedrock.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    body = json.dumps({"messages": []})
    conn.request("POST", f"/model/{NOVA}/converse", body, {"Content-Type": "application/json"})
    assert conn.sock is not None
    # An abortive close (RST), so the server's late write fails rather than being buffered.
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
    for _ in range(100):
        if scripted_bedrock.disconnects:
            break
        time.sleep(0.05)
    assert scripted_bedrock.disconnects == 1
    assert "Traceback" not in capsys.readouterr().err
