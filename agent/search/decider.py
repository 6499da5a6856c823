"""Decision mode of tool search: a decider model chooses among the catalog's tools.

Converse returns no log-probabilities, so the decider asks the model to *state* its
distribution: one multiple-choice question (option "0" = "No tool in this list fits the
task", options "1".."N" = each tool's name and one-sentence description), answered by a
forced call of the tool `choose` (toolChoice `{"tool": {"name": "choose"}}`, temperature 0)
whose input is `{"probabilities": {option id: number}}`. Ids we did not offer and values
that are not non-negative numbers are ignored, missing options count 0, and the rest is
divided by its sum. The result is the model's stated (verbalised) distribution, not token
probabilities; an answer with nothing positive is treated as a failed call.

Catalogs larger than `chunk_size` are split into balanced chunks asked concurrently; every
tool reaching `min_probability` in its own chunk meets the others in a final question,
which sets the ranking. Any failed call makes the whole decision report `fallback_reason`,
and the caller falls back to the keyword ranker.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.bedrock.errors import translate
from agent.config import Settings
from agent.errors import TabletalkError

if TYPE_CHECKING:
    from agent.search.ranker import SearchDoc

NO_TOOL_ID = "0"
NO_TOOL_TEXT = "No tool in this list fits the task"
CHOOSE_TOOL = "choose"
MAX_DESCRIPTION_CHARS = 300
DECIDER_READ_TIMEOUT = 60
DECIDER_MAX_ATTEMPTS = 2

SYSTEM_PROMPT = (
    "You route a user's task to a software tool. You are given the task and a numbered list "
    "of options: each option is a tool (name: description), and option 0 means that no tool "
    "in the list fits the task. Estimate, for each option, the probability that it is the "
    "right choice for the task, so that the probabilities sum to 1. Answer only by calling "
    "`choose` with those probabilities keyed by option number; leave out options whose "
    "probability is 0."
)

CHOOSE_SPEC: dict[str, Any] = {
    "toolSpec": {
        "name": CHOOSE_TOOL,
        "description": "Report the probability of each option being the right choice.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {
                    "probabilities": {
                        "type": "object",
                        "description": 'Option number (as a string, e.g. "0", "3") → '
                        "probability between 0 and 1; the values sum to 1.",
                        "additionalProperties": {"type": "number"},
                    }
                },
                "required": ["probabilities"],
            }
        },
    }
}


class DeciderFailure(Exception):
    """The decider's answer could not be used; the message becomes `fallback_reason`."""


@dataclass(frozen=True)
class DecisionResult:
    """Chosen tools (name, probability), most likely first; `fallback_reason` when it failed."""

    tools: list[tuple[str, float]] = field(default_factory=list)
    no_tool_probability: float | None = None
    fallback_reason: str | None = None
    requests: int = 0


def option_text(query: str, docs: Sequence[SearchDoc]) -> str:
    """The question: the task, then option 0 and one numbered line per tool."""
    lines = [f"Task: {query.strip()}", "", "Options:", f"{NO_TOOL_ID}. {NO_TOOL_TEXT}"]
    for number, doc in enumerate(docs, start=1):
        description = " ".join(doc.description.split())
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
        lines.append(f"{number}. {doc.name}: {description}")
    return "\n".join(lines)


def parse_probabilities(tool_input: Any, docs: Sequence[SearchDoc]) -> dict[str, float]:
    """Normalised probabilities keyed by option id ("0" = no tool) from a `choose` input."""
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except ValueError as exc:
            raise DeciderFailure("the decider's answer was not valid JSON") from exc
    raw = tool_input.get("probabilities") if isinstance(tool_input, dict) else None
    if not isinstance(raw, dict):
        raise DeciderFailure("the decider's answer had no 'probabilities' object")
    by_name = {doc.name: str(number) for number, doc in enumerate(docs, start=1)}
    weights: dict[str, float] = {}
    for key, value in raw.items():
        option = str(key).strip().rstrip(".")
        option = by_name.get(option, option)
        if not option.isdigit() or int(option) > len(docs):
            continue
        option = str(int(option))
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value) or value <= 0:
            continue
        weights[option] = weights.get(option, 0.0) + float(value)
    total = sum(weights.values())
    if total <= 0:
        raise DeciderFailure("the decider gave no positive probability to any option")
    return {option: weight / total for option, weight in weights.items()}


def chunked(docs: Sequence[SearchDoc], chunk_size: int) -> list[list[SearchDoc]]:
    """Balanced chunks of at most `chunk_size` docs, in catalog order."""
    count = max(1, math.ceil(len(docs) / chunk_size))
    size, extra = divmod(len(docs), count)
    chunks, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        chunks.append(list(docs[start:end]))
        start = end
    return chunks


class Decider:
    """Asks a decider model (Converse, forced `choose` call) which tools fit a query."""

    def __init__(
        self,
        client_factory: Callable[[], Any],
        model_id: str,
        *,
        min_probability: float = 0.1,
        chunk_size: int = 250,
        max_workers: int = 4,
        profile: str | None = None,
        region: str | None = None,
    ) -> None:
        self.client_factory = client_factory
        self.model_id = model_id
        self.min_probability = min_probability
        self.chunk_size = max(2, min(int(chunk_size), 255))
        self.max_workers = max(1, max_workers)
        self.profile = profile
        self.region = region
        self._client: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> Decider | None:
        """The decider a Settings object configures (`[search] decider`), or None."""
        search = settings.search
        if not search.decider:
            return None
        from agent.bedrock.client import configured_region, make_client, resolve_model

        profile, region = settings.profile, settings.region
        return cls(
            lambda: make_client(
                profile,
                region,
                read_timeout=DECIDER_READ_TIMEOUT,
                max_attempts=DECIDER_MAX_ATTEMPTS,
            ),
            resolve_model(search.decider, configured_region(profile, region)),
            min_probability=search.min_probability,
            chunk_size=search.chunk_size,
            profile=profile,
            region=region,
        )

    def _bedrock(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self.client_factory()
            return self._client

    def ask(self, query: str, docs: Sequence[SearchDoc]) -> dict[str, float]:
        """One question over `docs`: normalised probabilities by option id ("0" = no tool)."""
        request = {
            "modelId": self.model_id,
            "system": [{"text": SYSTEM_PROMPT}],
            "messages": [{"role": "user", "content": [{"text": option_text(query, docs)}]}],
            "toolConfig": {"tools": [CHOOSE_SPEC], "toolChoice": {"tool": {"name": CHOOSE_TOOL}}},
            "inferenceConfig": {"temperature": 0, "maxTokens": 1024},
        }
        try:
            response = self._bedrock().converse(**request)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a fallback reason
            raise translate(
                exc, profile=self.profile, model_id=self.model_id, region=self.region
            ) from exc
        content = response.get("output", {}).get("message", {}).get("content", [])
        for block in content:
            use = block.get("toolUse") if isinstance(block, dict) else None
            if use and use.get("name") == CHOOSE_TOOL:
                return parse_probabilities(use.get("input"), docs)
        raise DeciderFailure(f"the decider model did not call `{CHOOSE_TOOL}`")

    def decide(self, query: str, docs: Sequence[SearchDoc], limit: int = 5) -> DecisionResult:
        """Tools at or above `min_probability`, most likely first, at most `limit`; never raises."""
        docs = list(docs)
        if not docs or limit <= 0:
            return DecisionResult([], 1.0 if not docs else None)
        try:
            return self._decide(query, docs, limit)
        except TabletalkError as exc:
            return DecisionResult(fallback_reason=f"decider call failed: {exc.message}")
        except DeciderFailure as exc:
            return DecisionResult(fallback_reason=str(exc))
        except Exception as exc:  # noqa: BLE001 - search must keep working
            return DecisionResult(fallback_reason=f"decider failed: {type(exc).__name__}: {exc}")

    def _decide(self, query: str, docs: list[SearchDoc], limit: int) -> DecisionResult:
        requests = 0
        while len(docs) > self.chunk_size:
            chunks = chunked(docs, self.chunk_size)
            workers = min(self.max_workers, len(chunks))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="decider") as pool:
                answers = list(pool.map(lambda chunk: self.ask(query, chunk), chunks))
            requests += len(chunks)
            position = {id(doc): index for index, doc in enumerate(docs)}
            survivors: list[tuple[float, int, SearchDoc]] = []
            for chunk, probabilities in zip(chunks, answers, strict=True):
                for number, doc in enumerate(chunk, start=1):
                    p = probabilities.get(str(number), 0.0)
                    if p > 0 and p >= self.min_probability:
                        survivors.append((p, position[id(doc)], doc))
            if not survivors:
                no_tool = min(answer.get(NO_TOOL_ID, 0.0) for answer in answers)
                return DecisionResult([], no_tool, requests=requests)
            if len(survivors) >= len(docs):  # no progress: keep the best chunk_size
                survivors = sorted(survivors, key=lambda s: (-s[0], s[1]))[: self.chunk_size]
            docs = [doc for _, _, doc in sorted(survivors, key=lambda s: s[1])]
        probabilities = self.ask(query, docs)
        requests += 1
        return self._ranking(probabilities, docs, limit, requests)

    def _ranking(
        self, probabilities: dict[str, float], docs: list[SearchDoc], limit: int, requests: int
    ) -> DecisionResult:
        no_tool = probabilities.get(NO_TOOL_ID, 0.0)
        scored = [
            (doc.name, probabilities.get(str(number), 0.0), number)
            for number, doc in enumerate(docs, start=1)
        ]
        best = max((p for _, p, _ in scored), default=0.0)
        if no_tool >= best:
            return DecisionResult([], no_tool, requests=requests)
        chosen = sorted(
            (item for item in scored if item[1] > 0 and item[1] >= self.min_probability),
            key=lambda item: (-item[1], item[2]),
        )[:limit]
        return DecisionResult([(name, p) for name, p, _ in chosen], no_tool, requests=requests)
