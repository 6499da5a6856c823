"""Decision mode of tool search, through real boto3 against the scripted Converse endpoint."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

from agent.active_set import ActiveSet  # noqa: E402
from agent.config import SearchSettings, Settings  # noqa: E402
from agent.search.decider import NO_TOOL_TEXT, Decider, parse_probabilities  # noqa: E402
from agent.search.ranker import SearchDoc  # noqa: E402
from agent.search.searcher import ToolSearcher, search_catalog, search_docs  # noqa: E402
from agent.toolset import Toolset  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock, ToolUse  # noqa: E402

scripted_bedrock = support.scripted_bedrock

OPTION = re.compile(r"^(\d+)\. (.+?)(?:: .*)?$")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def options(body: dict[str, Any]) -> dict[str, str]:
    """Option id → tool name (or the no-tool text) as the decider asked them."""
    text = body["messages"][0]["content"][0]["text"]
    found = {}
    for line in text.splitlines():
        match = OPTION.match(line)
        if match:
            found[match[1]] = match[2]
    return found


def answer(pick: Callable[[dict[str, str]], dict[str, float]]) -> Callable[[dict], Reply]:
    """A scripted reply: the forced `choose` call with probabilities chosen from the options."""

    def reply(body: dict[str, Any]) -> Reply:
        return Reply(tool_uses=[ToolUse("choose", {"probabilities": pick(options(body))})])

    return reply


def by_name(option_map: dict[str, str], weights: dict[str, float]) -> dict[str, float]:
    """Probabilities for the named tools present in these options; the rest to option 0."""
    ids = {name: option for option, name in option_map.items()}
    chosen = {ids[name]: p for name, p in weights.items() if name in ids}
    chosen["0"] = max(0.0, 1.0 - sum(chosen.values()))
    return chosen


def decider_settings(**search: Any) -> Settings:
    return Settings(search=SearchSettings(decider="nova-lite", **search))


def synthetic_docs(count: int) -> list[SearchDoc]:
    return [SearchDoc(f"tool{i:03d}", f"Does task number {i}.") for i in range(count)]


def test_one_question_over_the_catalog_ranks_by_the_stated_probabilities(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    docs = search_docs(Toolset.build())
    scripted_bedrock.add(
        answer(lambda o: by_name(o, {"exportCsv": 0.6, "exportJson": 0.25, "sampleValues": 0.05}))
    )
    decider = Decider.from_settings(decider_settings())
    assert decider is not None
    result = decider.decide("export the orders to a spreadsheet file", docs, limit=5)

    assert result.fallback_reason is None
    assert [name for name, _ in result.tools] == ["exportCsv", "exportJson"]  # 0.05 < 0.1
    assert result.tools[0][1] == pytest.approx(0.6)
    (request,) = scripted_bedrock.requests
    assert request.model_id == "us.amazon.nova-lite-v1:0" and not request.stream
    body = request.body
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "choose"}}
    assert body["inferenceConfig"]["temperature"] == 0
    asked = options(body)
    assert asked["0"] == NO_TOOL_TEXT
    assert sorted(v for k, v in asked.items() if k != "0") == sorted(d.name for d in docs)


def test_min_probability_and_limit_filter_the_answer(scripted_bedrock: ScriptedBedrock) -> None:
    docs = synthetic_docs(6)
    weights = {"tool000": 0.1, "tool001": 0.3, "tool002": 0.35, "tool003": 0.2, "tool004": 0.05}
    scripted_bedrock.add(
        answer(lambda o: by_name(o, weights)), answer(lambda o: by_name(o, weights))
    )
    decider = Decider.from_settings(decider_settings(min_probability=0.25))
    assert decider is not None
    assert [n for n, _ in decider.decide("task", docs, limit=5).tools] == ["tool002", "tool001"]
    assert [n for n, _ in decider.decide("task", docs, limit=1).tools] == ["tool002"]


def test_no_tool_fits_as_the_most_likely_answer_returns_nothing(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    scripted_bedrock.add(answer(lambda o: {"0": 0.7, "2": 0.3}))
    decider = Decider.from_settings(decider_settings())
    assert decider is not None
    result = decider.decide("what is the weather on mars", synthetic_docs(5), limit=5)
    assert result.tools == [] and result.fallback_reason is None
    assert result.no_tool_probability == pytest.approx(0.7)


def test_a_large_catalog_is_asked_in_concurrent_chunks_then_a_final_round(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    docs = synthetic_docs(600)
    chunks_together = threading.Barrier(3, timeout=10)  # all three chunks in flight at once

    def pick(option_map: dict[str, str]) -> dict[str, float]:
        if len(option_map) > 20:  # a chunk: wait for the other chunks, then answer
            chunks_together.wait()
            return by_name(option_map, {"tool010": 0.5, "tool250": 0.3, "tool251": 0.05})
        return by_name(option_map, {"tool250": 0.7, "tool010": 0.2})  # the final round

    scripted_bedrock.add(*(answer(pick) for _ in range(4)))
    decider = Decider.from_settings(decider_settings(chunk_size=250))
    assert decider is not None
    result = decider.decide("task number 250", docs, limit=5)

    assert result.fallback_reason is None
    assert [name for name, _ in result.tools] == ["tool250", "tool010"]  # the final round ranks
    assert result.requests == 4 == len(scripted_bedrock.requests)
    asked = [options(request.body) for request in scripted_bedrock.requests]
    assert all(len(option_map) <= 250 + 1 for option_map in asked)
    chunk_names = sorted(name for o in asked[:3] for k, name in o.items() if k != "0")
    assert chunk_names == sorted(doc.name for doc in docs)  # every tool asked exactly once
    final = next(o for o in asked if len(o) <= 20)
    assert sorted(v for k, v in final.items() if k != "0") == ["tool010", "tool250"]


def test_chunks_where_nothing_reaches_min_probability_return_nothing(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    scripted_bedrock.add(*(answer(lambda o: {"0": 0.95, "1": 0.05}) for _ in range(3)))
    decider = Decider.from_settings(decider_settings(chunk_size=100))
    assert decider is not None
    result = decider.decide("nothing fits", synthetic_docs(300), limit=5)
    assert result.tools == [] and result.fallback_reason is None
    assert len(scripted_bedrock.requests) == 3  # no final round


def test_an_endpoint_error_falls_back_to_the_keyword_ranker_with_its_reason(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    scripted_bedrock.add(Error(400, "AccessDeniedException", "You don't have access to the model."))
    toolset = Toolset.build()
    active = ActiveSet(toolset.inline_names())
    searcher = ToolSearcher(toolset, active, decider=Decider.from_settings(decider_settings()))
    result = searcher.search("export to csv")

    assert result["mode"] == "keyword"
    assert "access" in result["fallback_reason"].lower()
    assert result["tools"][0]["name"] == "exportCsv"
    assert "exportCsv" in result["joined"] and "exportCsv" in active


def test_an_answer_without_the_choose_call_falls_back(scripted_bedrock: ScriptedBedrock) -> None:
    scripted_bedrock.add(Reply(text="I think exportCsv."))
    decider = Decider.from_settings(decider_settings())
    assert decider is not None
    result = decider.decide("export", synthetic_docs(3), limit=5)
    assert result.tools == [] and "choose" in (result.fallback_reason or "")


def test_the_searcher_reports_decision_mode_and_schemas_on_request(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    scripted_bedrock.add(answer(lambda o: by_name(o, {"getIndexStats": 0.8, "runQuery": 0.15})))
    toolset = Toolset.build()
    active = ActiveSet(toolset.inline_names())
    searcher = ToolSearcher(toolset, active, decider=Decider.from_settings(decider_settings()))
    result = searcher.search("index statistics", schemas=True)

    assert result["mode"] == "decision" and "fallback_reason" not in result
    assert [t["name"] for t in result["tools"]] == ["getIndexStats", "runQuery"]
    assert result["tools"][0]["score"] == pytest.approx(0.8, abs=1e-3)
    assert result["tools"][0]["input_schema"]["type"] == "object"
    assert result["joined"] == ["getIndexStats"] and result["alreadyActive"] == ["runQuery"]
    assert result["budgetLeft"] == 2 and result["always"] == list(toolset.inline_names())


def test_search_catalog_names_the_mode_for_the_cli(scripted_bedrock: ScriptedBedrock) -> None:
    docs = search_docs(Toolset.build())
    keyword = search_catalog(docs, "export csv", 3, Settings())
    assert keyword["mode"] == "keyword" and keyword["tools"][0]["name"] == "exportCsv"
    assert "input_schema" not in keyword["tools"][0]

    scripted_bedrock.add(answer(lambda o: by_name(o, {"exportJson": 0.9})))
    decision = search_catalog(docs, "export json", 3, decider_settings())
    assert decision["mode"] == "decision"
    assert [t["name"] for t in decision["tools"]] == ["exportJson"]


def test_stated_probabilities_are_normalised_and_unknown_ids_ignored() -> None:
    docs = synthetic_docs(3)
    parsed = parse_probabilities(
        {"probabilities": {"1": 2, "tool002": 1, "9": 5, "x": 1, "0": 1, "3": -1}}, docs
    )
    assert parsed == pytest.approx({"1": 0.5, "3": 0.25, "0": 0.25})
