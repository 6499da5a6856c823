"""Bedrock's retries told to the waiting step: botocore retries a throttled or unavailable
request on its own and sleeps in between, which looks like a model slow to answer. The
client's `RetryWatch` (agent/aws_retries.py) hands each retry to the call running on that
thread (`reporting`), so the turn's wait line can say so."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from agent.aws_retries import RetryNews, RetryWatch
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


def watch(client: Any) -> None:
    """Tell the reporter of the calling thread (if any) each time `client` retries."""
    RetryWatch(client, _tell)


def _tell(news: RetryNews) -> None:
    report: RetryReport | None = getattr(_current, "report", None)
    if report is not None:
        report(Retrying(news.code, news.attempt, news.max_attempts))
