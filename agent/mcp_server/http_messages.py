"""What a POST to the MCP endpoint carries, read before the app reads it and then given back.

The HTTP guard counts a client's requests in flight. A JSON-RPC notification (such as
`notifications/cancelled`, the way a client gives up a call) or a JSON-RPC response (a reply to
a request the server sent) gets no result and runs no tool: the SDK answers it 202 at once. A
client at its limit must still be able to send one, so the guard reads such a POST's body
(`peek_body`, a small one only), decides what it is (`answers_nothing`) and lets the app read
the very same body (`replaying`).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.types import Message, Receive, Scope

PEEK_BYTES = 64 * 1024
"""The largest body the guard reads to decide what it is; a larger one counts as a request."""


@dataclass(frozen=True)
class Peeked:
    """The ASGI messages read from a request, in order, and the body they make up."""

    messages: tuple[Message, ...]
    body: bytes | None
    """The whole body; None when it is over the cap or the client left before sending it all."""


async def peek_body(scope: Scope, receive: Receive, cap: int = PEEK_BYTES) -> Peeked:
    """Read a request's body from `receive` while it is at most `cap` bytes.

    A body declared (Content-Length) or found larger than `cap` is not read to its end: its
    `body` is None, and the messages read so far are still to be given to whoever reads next.
    """
    declared = Headers(scope=scope).get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        return Peeked((), None)
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":  # the client left (http.disconnect)
            return Peeked(tuple(messages), None)
        size += len(message.get("body", b""))
        if size > cap:
            return Peeked(tuple(messages), None)
        if not message.get("more_body", False):
            body = b"".join(part.get("body", b"") for part in messages)
            return Peeked(tuple(messages), body)


def replaying(peeked: Peeked, receive: Receive) -> Receive:
    """A `receive` that gives the messages already read, in order, then reads on from `receive`."""
    waiting: deque[Message] = deque(peeked.messages)

    async def replay() -> Message:
        if waiting:
            return waiting.popleft()
        return await receive()

    return replay


def answers_nothing(body: bytes) -> bool:
    """Whether `body` is one JSON-RPC notification (a "method", no "id") or one JSON-RPC
    response (an "id" with a "result" or an "error", no "method"): a message the server
    acknowledges (202) without running anything for it. A batch (array), a request, or
    anything that is not a JSON object is not."""
    try:
        message: Any = json.loads(body)
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested past Python's limit
        return False
    if not isinstance(message, dict):
        return False
    if "method" in message:
        return "id" not in message
    return "id" in message and ("result" in message or "error" in message)
