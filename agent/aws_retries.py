"""botocore's retries made visible, for any client: botocore retries a throttled or unavailable
request on its own (standard mode) and sleeps in between, which looks like a slow answer.
`RetryWatch` hooks one client and tells its callbacks each time botocore is about to retry,
and once the retried call ends; it only observes (botocore's own handler decides and waits)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RetryNews:
    """botocore goes again after a pause: `operation` (e.g. "Scan") answered `code`
    (throttling, unavailable, …; "" when it did not answer at all) and attempt `attempt` of
    `max_attempts` comes next; `throttled` says whether the code is one of throttling."""

    operation: str
    code: str
    attempt: int
    max_attempts: int
    throttled: bool


class RetryWatch:
    """Observes `needs-retry` on one client with botocore's own standard-mode conditions
    (throttling, transient errors such as 503, modeled retryable errors, under the attempt
    limit) and tells `on_retry`; `on_end(gave_up)` hears when a call that was retried ends
    (gave_up: it still failed as it did). Both run on the calling thread, between attempts:
    they must only hand the news on."""

    def __init__(
        self,
        client: Any,
        on_retry: Callable[[RetryNews], object],
        on_end: Callable[[bool], object] | None = None,
    ) -> None:
        from botocore.retries import standard  # loaded with the client, as botocore does

        retries = getattr(client.meta.config, "retries", None) or {}
        self.max_attempts = int(retries.get("total_max_attempts", standard.DEFAULT_MAX_ATTEMPTS))
        self._conditions = standard.StandardRetryConditions(max_attempts=self.max_attempts)
        self._throttling = standard.ThrottledRetryableChecker()
        self._adapter = standard.RetryEventAdapter()
        self._on_retry = on_retry
        self._on_end = on_end
        self._local = threading.local()  # whether this thread's call is being retried
        events = client.meta.events
        service = client.meta.service_model.service_id.hyphenize()
        events.register(f"needs-retry.{service}", self._needs_retry)
        if on_end is not None:
            events.register(f"after-call.{service}", self._after_call)
            events.register(f"after-call-error.{service}", self._after_error)

    def _needs_retry(self, **kwargs: Any) -> None:
        try:
            context = self._adapter.create_retry_context(**kwargs)
            if not self._conditions.is_retryable(context):
                return
            throttled = bool(self._throttling.is_retryable(context))
        except Exception:  # an observer must never break the call it watches
            return
        parsed = context.parsed_response or {}
        error = parsed.get("Error", {}) if isinstance(parsed, dict) else {}
        status = context.http_response.status_code if context.http_response is not None else 0
        code = str(error.get("Code") or "") or _status_code(status)
        operation = getattr(context.operation_model, "name", "") or "a request"
        self._local.retried = True
        self._on_retry(
            RetryNews(operation, code, context.attempt_number + 1, self.max_attempts, throttled)
        )

    def _after_call(self, http_response: Any = None, **_: Any) -> None:
        if getattr(self._local, "retried", False):
            self._local.retried = False
            status = getattr(http_response, "status_code", 200)
            if self._on_end is not None:
                self._on_end(status >= 400)

    def _after_error(self, **_: Any) -> None:
        """The call ended in a network failure: it raises, and says so itself."""
        if getattr(self._local, "retried", False):
            self._local.retried = False
            if self._on_end is not None:
                self._on_end(False)


def _status_code(status: int) -> str:
    """An error code for an answer without one (by its HTTP status), or "" (no answer)."""
    if status == 429:
        return "ThrottlingException"
    if status == 503:
        return "ServiceUnavailableException"
    return f"HTTP {status}" if status else ""
