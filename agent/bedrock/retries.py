"""Bedrock's retries made visible: botocore retries a throttled or unavailable request on its
own (standard mode) and sleeps in between, which looks like a model slow to answer. A
`needs-retry` hook on the client tells the call running on that thread (`reporting`) each time
botocore is about to retry, so the turn's wait line can say so."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from agent.events import Retrying

RetryReport = Callable[[Retrying], object]

_current = threading.local()  # the reporter of the call running on this thread, if any


@contextlib.contextmanager
def reporting(report: RetryReport) -> Iterator[None]:
    """While the block runs, the retries of calls made on this thread go to `report`
    (called on this thread, between attempts: it must only hand the news on)."""
    previous = getattr(_current, "report", None)
    _current.report = report
    try:
        yield
    finally:
        _current.report = previous


class RetryWatch:
    """Observes `needs-retry` on one client with botocore's own standard-mode conditions
    (throttling, transient errors such as 503, modeled retryable errors, under the attempt
    limit); returns None, so botocore's handler still decides and waits."""

    def __init__(self, client: Any) -> None:
        from botocore.retries import standard  # loaded with the client, as botocore does

        retries = getattr(client.meta.config, "retries", None) or {}
        self.max_attempts = int(retries.get("total_max_attempts", standard.DEFAULT_MAX_ATTEMPTS))
        self._conditions = standard.StandardRetryConditions(max_attempts=self.max_attempts)
        self._adapter = standard.RetryEventAdapter()
        service = client.meta.service_model.service_id.hyphenize()
        client.meta.events.register(f"needs-retry.{service}", self._needs_retry)

    def _needs_retry(self, **kwargs: Any) -> None:
        report: RetryReport | None = getattr(_current, "report", None)
        if report is None:
            return
        try:
            context = self._adapter.create_retry_context(**kwargs)
            if not self._conditions.is_retryable(context):
                return
        except Exception:  # an observer must never break the call it watches
            return
        parsed = context.parsed_response or {}
        error = parsed.get("Error", {}) if isinstance(parsed, dict) else {}
        status = context.http_response.status_code if context.http_response is not None else 0
        code = str(error.get("Code") or "") or _status_code(status)
        report(Retrying(code, context.attempt_number + 1, self.max_attempts))


def _status_code(status: int) -> str:
    """An error code for an answer without one (by its HTTP status), or "" (no answer)."""
    if status == 429:
        return "ThrottlingException"
    if status == 503:
        return "ServiceUnavailableException"
    return f"HTTP {status}" if status else ""
