"""Recorded model responses served back as a Converse endpoint on 127.0.0.1 (`eval --replay`).

A replayed run goes through the real boto3 client and the real loop; only the model's answers
come from the recording, in order, so the run is offline and deterministic. Replays use the
non-streaming Converse operation, whose answer is plain JSON.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLAY_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIDREPLAYEVAL000000",
    "AWS_SECRET_ACCESS_KEY": "replay-not-a-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


class ReplayServer:
    """Answers each Converse request with the next recorded response."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses: deque[dict[str, Any]] = deque(responses)
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.replay = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """Environment that sends boto3 here."""
        return {**REPLAY_ENV, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.url}

    def next(self) -> dict[str, Any] | None:
        with self.lock:
            return self.responses.popleft() if self.responses else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        replay: ReplayServer = self.server.replay  # type: ignore[attr-defined]
        response = replay.next() if self.path.endswith("/converse") else None
        if response is None:
            reason = (
                "the recording has no more responses"
                if self.path.endswith("/converse")
                else "replays use Converse, not ConverseStream"
            )
            self._send(400, {"message": f"replay: {reason}"}, "ValidationException")
            return
        self._send(200, response)

    def _send(self, status: int, payload: dict[str, Any], error: str | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if error:
            self.send_header("x-amzn-ErrorType", error)
        self.end_headers()
        self.wfile.write(data)
