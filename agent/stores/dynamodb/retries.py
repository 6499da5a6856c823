"""DynamoDB's retries told to the store's listener: botocore retries a throttled request on
its own (standard mode); the client's `RetryWatch` (agent/aws_retries.py) says so while it
does, and once the call recovers or gives up."""

from __future__ import annotations

import threading
from typing import Any

from agent.aws_retries import RetryNews, RetryWatch
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
"""The codes a call that failed after its retries is reported as throttled by (client.py)."""


class StoreRetries:
    """The store's end of its client's `RetryWatch`: one-line statuses for `listener`."""

    def __init__(self, client: Any) -> None:
        self.listener: RetryListener | None = None
        self._local = threading.local()  # this thread's last retry, for the gave-up line
        RetryWatch(client, self._retrying, self._ended)

    def _tell(self, text: str, state: str) -> None:
        listener = self.listener
        if listener is not None:
            listener(text, state)

    def _retrying(self, news: RetryNews) -> None:
        self._local.news = news
        cause = "is throttling" if news.throttled else f"answered {news.code[:60]} to"
        self._tell(
            f"DynamoDB {cause} {news.operation}; retrying (attempt {news.attempt} of "
            f"{news.max_attempts})…",
            "retrying",
        )

    def _ended(self, gave_up: bool) -> None:
        news: RetryNews | None = getattr(self._local, "news", None)
        self._local.news = None
        if not gave_up or news is None:
            self._tell("", "recovered")
            return
        how = "throttled" if news.throttled else "failed"
        self._tell(
            f"DynamoDB {how} {news.operation} {counted(news.attempt, 'time')}; gave up. Wait a "
            "moment and retry, or narrow the read; nothing was lost.",
            "gave-up",
        )
