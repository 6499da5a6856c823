"""Bounded reads: Scan/ExecuteStatement loops that count read units and items scanned and stop
at the configured caps, saying how far they got."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agent.stop import reads_should_stop
from agent.stores.base import stopped_error
from agent.text_plural import counted

DEFAULT_MAX_SCAN_ITEMS = 10_000
DEFAULT_MAX_READ_UNITS = 5_000.0


@dataclass
class Limits:
    """`[dynamodb]` caps per call: items scanned and read units."""

    max_scan_items: int = DEFAULT_MAX_SCAN_ITEMS
    max_read_units: float = DEFAULT_MAX_READ_UNITS


@dataclass
class ReadReport:
    """What one tool call's reads cost, and whether a cap stopped them."""

    read_units: float = 0.0
    items_scanned: int = 0
    stopped_early: str | None = None
    notes: list[str] = field(default_factory=list)

    def add(self, response: dict[str, Any]) -> None:
        """Count one response's consumed capacity and scanned items."""
        consumed = response.get("ConsumedCapacity")
        for entry in consumed if isinstance(consumed, list) else [consumed] if consumed else []:
            self.read_units += float(
                entry.get("CapacityUnits") or entry.get("ReadCapacityUnits") or 0
            )
        if "ScannedCount" in response:
            self.items_scanned += int(response["ScannedCount"])
        elif "Items" in response:
            self.items_scanned += len(response["Items"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for tool results."""
        out: dict[str, Any] = {
            "readUnits": round(self.read_units, 2),
            "itemsScanned": self.items_scanned,
        }
        if self.stopped_early:
            out["stoppedEarly"] = self.stopped_early
        return out


def over(report: ReadReport, limits: Limits) -> bool:
    """True once a cap is reached."""
    return (
        report.items_scanned >= limits.max_scan_items or report.read_units >= limits.max_read_units
    )


def stop_note(report: ReadReport, limits: Limits, table: str, hint: str) -> str:
    """The 'stopped early' sentence: how far it got and how to narrow."""
    cap = (
        f"{counted(limits.max_scan_items, 'item')} scanned"
        if report.items_scanned >= limits.max_scan_items
        else f"{limits.max_read_units:g} {'read unit' if limits.max_read_units == 1 else 'read units'}"
    )
    return (
        f"stopped early at the cap of {cap} ([dynamodb] in config.toml) after scanning "
        f"{counted(report.items_scanned, 'item')} of {table}; the answer covers only those. Narrow it "
        f"with a condition on {hint}."
    )


def scan_pages(
    client: Any,
    request: dict[str, Any],
    report: ReadReport,
    limits: Limits,
    operation: str = "scan",
) -> Iterator[dict[str, Any]]:
    """Scan (or Query) responses until the end or a cap is reached (then
    `report.stopped_early`)."""
    start: dict[str, Any] | None = None
    send = getattr(client, operation)
    while True:
        if reads_should_stop():  # Stop: no further page is asked for
            raise stopped_error()
        left = limits.max_scan_items - report.items_scanned
        kwargs = {**request, "ReturnConsumedCapacity": "TOTAL", "Limit": max(1, min(left, 1000))}
        if start:
            kwargs["ExclusiveStartKey"] = start
        response = send(**kwargs)
        report.add(response)
        yield response
        start = response.get("LastEvaluatedKey")
        if not start:
            return
        if over(report, limits):
            report.stopped_early = "cap"
            return


def statement_pages(
    client: Any, statement: str, report: ReadReport, limits: Limits, want: int
) -> Iterator[dict[str, Any]]:
    """ExecuteStatement responses (NextToken paging) until `want` items, the end, or a cap."""
    token: str | None = None
    got = 0
    while True:
        if reads_should_stop():
            raise stopped_error()
        kwargs: dict[str, Any] = {"Statement": statement, "ReturnConsumedCapacity": "TOTAL"}
        if token:
            kwargs["NextToken"] = token
        response = client.execute_statement(**kwargs)
        report.add(response)
        got += len(response.get("Items", []))
        yield response
        token = response.get("NextToken")
        if not token or got >= want:
            return
        if over(report, limits):
            report.stopped_early = "cap"
            return
