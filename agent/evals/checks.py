"""What one run did (its Outcome) and the checks that judge it.

An Outcome is plain JSON, saved with every run, so `eval rescore` can judge a saved run again
with edited checks without calling Bedrock.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from agent.evals.condition import holds
from agent.evals.scenario import (
    AnswerCheck,
    CalledCheck,
    Check,
    EndedCheck,
    MaxStepsCheck,
    NothingStagedCheck,
    OpenedCheck,
    SearchedCheck,
    StagedCheck,
)
from agent.text_plural import counted


@dataclass
class Outcome:
    """What a run did, as the checks see it."""

    scenario: str
    model: str
    rep: int
    ended: str = ""
    answer: str = ""
    question: str | None = None
    steps: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    opened: list[dict[str, Any]] = field(default_factory=list)
    staged: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    @property
    def searches(self) -> list[dict[str, Any]]:
        return [call for call in self.calls if call["tool"] == "searchTools"]


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict, with the reason when it failed."""

    check: str
    passed: bool
    why: str = ""


def judge(checks: list[Check], outcome: Outcome) -> list[CheckResult]:
    """Every check's verdict, in the scenario's order (a run error fails them all)."""
    if outcome.error:
        return [
            CheckResult(check.kind, False, f"the run failed: {outcome.error}") for check in checks
        ]
    return [_judge(check, outcome) for check in checks]


def _label(check: Check) -> str:
    detail = {k: v for k, v in check.model_dump(exclude_none=True).items() if k != "kind" and v}
    inner = ", ".join(f"{k}={v!r}" for k, v in detail.items())
    return f"{check.kind}({inner})" if inner else check.kind


def _judge(check: Check, outcome: Outcome) -> CheckResult:
    label = _label(check)
    why = _failure(check, outcome)
    return CheckResult(label, why is None, why or "")


def _failure(check: Check, outcome: Outcome) -> str | None:
    """None when the check holds; otherwise why it does not."""
    if isinstance(check, StagedCheck):
        return _staged(check, outcome)
    if isinstance(check, NothingStagedCheck):
        return None if not outcome.staged else f"{counted(len(outcome.staged), 'change')} staged"
    if isinstance(check, CalledCheck):
        return _called(check, outcome)
    if isinstance(check, SearchedCheck):
        return _searched(check, outcome)
    if isinstance(check, AnswerCheck):
        return _answer(check, outcome)
    if isinstance(check, EndedCheck):
        ended = (
            "asked"
            if outcome.ended == "ask"
            else ("answered" if outcome.ended == "end_turn" else outcome.ended)
        )
        return None if ended == check.how else f"the turn ended {ended!r}, not {check.how!r}"
    if isinstance(check, OpenedCheck):
        return _opened(check, outcome)
    if isinstance(check, MaxStepsCheck):
        if outcome.steps <= check.steps:
            return None
        return f"took {counted(outcome.steps, 'step')} (at most {check.steps})"
    return f"unknown check {check.kind}"  # pragma: no cover - the scenario model forbids it


def _staged(check: StagedCheck, outcome: Outcome) -> str | None:
    matching = [
        change
        for change in outcome.staged
        if (check.table is None or change["table"] == check.table)
        and (check.op is None or change["op"] == check.op)
    ]
    what = " ".join(p for p in (check.op, check.table) if p) or "any"
    count = len(matching)
    if check.count is not None and count != check.count:
        return f"{counted(count, what + ' change')} staged, expected {check.count}"
    if check.min is not None and count < check.min:
        return f"{counted(count, what + ' change')} staged, expected at least {check.min}"
    if check.max is not None and count > check.max:
        return f"{counted(count, what + ' change')} staged, expected at most {check.max}"
    if check.count is None and check.min is None and not matching:
        return f"no {what} change was staged"
    if check.where:
        for change in matching:
            record = {**change.get("key", {}), **change.get("values", {}), **change}
            if not holds(check.where, record):
                return f"staged change {change.get('key')} fails {check.where!r}"
    return None


def _called(check: CalledCheck, outcome: Outcome) -> str | None:
    calls = [call for call in outcome.calls if call["tool"] == check.tool]
    if check.kind == "called":  # a refused call (withheld, invalid, denied) did not run
        calls = [call for call in calls if call.get("status") == "success"]
    if check.where:
        calls = [call for call in calls if holds(check.where, call.get("input") or {})]
    condition = f" with {check.where!r}" if check.where else ""
    if check.kind == "not_called":
        return None if not calls else f"{check.tool} was called{condition} ({len(calls)}×)"
    if len(calls) >= check.min:
        return None
    counts: dict[str, int] = {}
    for call in outcome.calls:
        counts[call["tool"]] = counts.get(call["tool"], 0) + 1
    seen = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in counts.items()) or "none"
    return f"{check.tool} was not called{condition} at least {check.min}× (calls: {seen})"


def _searched(check: SearchedCheck, outcome: Outcome) -> str | None:
    searches = outcome.searches
    if not searches:
        return "searchTools was never called"
    if check.finds is None:
        return None
    for search in searches:
        result = search.get("result") or {}
        names = [str(hit.get("name")) for hit in result.get("tools", []) if isinstance(hit, dict)]
        if check.finds in names:
            return None
    return f"no search returned {check.finds}"


def _answer(check: AnswerCheck, outcome: Outcome) -> str | None:
    text = outcome.answer
    lowered = text.lower()
    missing = [word for word in check.contains if word.lower() not in lowered]
    if missing:
        return f"the answer lacks {missing}: {text[:200]!r}"
    if check.any_of and not any(word.lower() in lowered for word in check.any_of):
        return f"the answer has none of {check.any_of}: {text[:200]!r}"
    present = [word for word in check.not_contains if word.lower() in lowered]
    if present:
        return f"the answer contains {present}"
    if check.regex and not re.search(check.regex, text, re.IGNORECASE | re.DOTALL):
        return f"the answer does not match /{check.regex}/: {text[:200]!r}"
    return None


def _opened(check: OpenedCheck, outcome: Outcome) -> str | None:
    for item in outcome.opened:
        kind = item.get("kind")
        if check.what not in ("any", kind):
            continue
        if check.table and check.table not in _tables_of(item):
            continue
        return None
    seen = [item.get("kind") for item in outcome.opened]
    target = f" of {check.table}" if check.table else ""
    return f"nothing of kind {check.what!r}{target} was opened or proposed (saw {seen or 'none'})"


def _tables_of(item: dict[str, Any]) -> set[str]:
    """Table names an opened tab or chip refers to (chip actions carry their spec)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in ("table", "left", "right") and isinstance(inner, str):
                    found.add(inner)
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(item)
    return found
