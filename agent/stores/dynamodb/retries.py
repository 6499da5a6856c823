"""Throttling made visible: botocore retries a throttled request on its own (standard mode);
these event hooks tell a listener while it does, and once it recovers or gives up."""

from __future__ import annotations

import threading
from typing import Any

from agent.stores.base import RetryListener
from agent.text_plural import counted

THROTTLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "Throttling",
    }
)


def _code(parsed: Any) -> str:
    error = parsed.get("Error", {}) if isinstance(parsed, dict) else {}
    return str(error.get("Code", ""))


class RetryWatch:
    """Hooks on one client: `needs-retry` (a throttled attempt), `after-call` (the call's end,
    success or error) and `after-call-error` (a network failure ends it)."""

    def __init__(self, client: Any) -> None:
        self.listener: RetryListener | None = None
        retries = getattr(client.meta.config, "retries", None) or {}
        self.max_attempts = int(retries.get("total_max_attempts", 3))
        self._local = threading.local()  # which call of this thread is being retried
        events = client.meta.events
        events.register("needs-retry.dynamodb", self._needs_retry)
        events.register("after-call.dynamodb", self._after_call)
        events.register("after-call-error.dynamodb", self._after_error)

    def _tell(self, text: str, state: str) -> None:
        listener = self.listener
        if listener is not None:
            listener(text, state)

    def _needs_retry(
        self, attempts: int = 0, response: Any = None, operation: Any = None, **_: Any
    ) -> None:
        """Observe only (returns None: botocore's own handler decides and waits)."""
        parsed = response[1] if isinstance(response, tuple) and len(response) > 1 else None
        if _code(parsed) not in THROTTLE_CODES:
            return
        name = getattr(operation, "name", "a request")
        self._local.retrying = (name, attempts)
        if attempts < self.max_attempts:
            self._tell(
                f"DynamoDB is throttling {name}; retrying (attempt {attempts + 1} of "
                f"{self.max_attempts})…",
                "retrying",
            )

    def _after_call(self, parsed: Any = None, **_: Any) -> None:
        retrying = getattr(self._local, "retrying", None)
        if retrying is None:
            return
        self._local.retrying = None
        name, attempts = retrying
        if _code(parsed) in THROTTLE_CODES:
            self._tell(
                f"DynamoDB throttled {name} {counted(attempts, 'time')}; gave up. Wait a moment and retry, "
                "or narrow the read; nothing was lost.",
                "gave-up",
            )
        else:
            self._tell("", "recovered")

    def _after_error(self, **_: Any) -> None:
        if getattr(self._local, "retrying", None) is not None:
            self._local.retrying = None
            self._tell("", "recovered")
