"""One eval run in its own process: a private demo database, staging area, conversations and
audit log (its own XDG dirs and working folder), the real loop, then the checks.

`python -m agent.evals.worker SPEC.json` writes `outcome.json` (what the checks see),
`responses.json` (the model's answers, for `--replay`) and `result.json` into the run folder.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.evals.checks import Outcome, judge
from agent.evals.scenario import load_scenario


@dataclass
class RunSpec:
    """Everything a worker needs to run one scenario once."""

    scenario_path: str
    model: str
    rep: int
    run_dir: str
    settings: dict[str, Any] = field(default_factory=dict)
    replay: str | None = None  # responses.json of an earlier run
    template: str | None = None  # a demo database built once per eval, copied per run

    def to_json(self) -> str:
        return json.dumps(self.__dict__)


def isolate(run_dir: Path) -> Path:
    """Point every tabletalk directory into the run folder; return the working folder."""
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        path = run_dir / "xdg" / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        os.environ[f"XDG_{name}_HOME"] = str(path)
    work = run_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(work)
    return work


def prepare_database(run_dir: Path, setup: list[str], template: str | None = None) -> Path:
    """A fresh demo database (dated today) with the scenario's setup statements applied; they
    reach that database only (a shared scenario file must not write elsewhere)."""
    from agent.stores.demo import build_demo_db

    target = run_dir / "demo.sqlite"
    path = shutil.copy(template, target) if template else build_demo_db(target)
    if setup:
        connection = sqlite3.connect(path)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)  # no ATTACH, no VACUUM INTO a path
        try:
            for statement in setup:
                connection.execute(statement)
            connection.commit()
        finally:
            connection.close()
    return Path(path)


class Recorder:
    """Collects what the checks look at from the loop's events."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.pending: dict[str, dict[str, Any]] = {}
        self.step_usage: list[dict[str, int]] = []
        self._turn_usage: dict[str, int] = {}

    def __call__(self, event: Any) -> None:
        from agent import events

        if isinstance(event, events.ToolCallStarted):
            started: dict[str, Any] = {
                "tool": event.name,
                "input": event.input,
                "status": None,
                "result": None,
            }
            self.pending[event.tool_use_id] = started
            self.outcome.calls.append(started)
        elif isinstance(event, events.ToolCallFinished):
            finished = self.pending.pop(event.tool_use_id, None) or {
                "tool": event.name,
                "input": {},
            }
            finished["status"], finished["result"] = event.status, event.result
            if finished not in self.outcome.calls:
                self.outcome.calls.append(finished)
        elif isinstance(event, events.ChipProposed):
            self.outcome.opened.append(
                {"kind": "chip", "label": event.chip.label, "action": event.chip.action}
            )
        elif isinstance(event, events.AskUser):
            self.outcome.question = event.question
        elif isinstance(event, events.UsageUpdated):
            now = _usage_dict(event.turn)
            self.step_usage.append({k: now[k] - self._turn_usage.get(k, 0) for k in now})
            self._turn_usage = now
        elif isinstance(event, events.TurnEnded):
            self._turn_usage = {}
            self.outcome.ended = event.reason
            self.outcome.answer = event.text
            self.outcome.steps += event.steps
            for key, value in _usage_dict(event.usage).items():
                self.outcome.usage[key] = self.outcome.usage.get(key, 0) + value
            if event.reason == "error":
                self.outcome.error = f"{event.error}" + (f" ({event.fix})" if event.fix else "")


def _usage_dict(usage: Any) -> dict[str, int]:
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
    }


def recorded_responses(messages: list[dict[str, Any]], usage: list[dict[str, int]]) -> list[Any]:
    """Each assistant message as the Converse answer that produced it (for replays)."""
    answers = []
    assistant = [message for message in messages if message["role"] == "assistant"]
    for index, message in enumerate(assistant):
        step = usage[index] if index < len(usage) else {}
        uses_tools = any("toolUse" in block for block in message["content"])
        answers.append(
            {
                "output": {"message": message},
                "stopReason": "tool_use" if uses_tools else "end_turn",
                "usage": {
                    "inputTokens": step.get("input", 0),
                    "outputTokens": step.get("output", 0),
                    "totalTokens": step.get("input", 0) + step.get("output", 0),
                    "cacheReadInputTokens": step.get("cache_read", 0),
                    "cacheWriteInputTokens": step.get("cache_write", 0),
                },
                "metrics": {"latencyMs": 0},
            }
        )
    return answers


def run(spec: RunSpec) -> dict[str, Any]:
    """Run the scenario once and judge it; returns the result (also written to the run dir)."""
    run_dir = Path(spec.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    work = isolate(run_dir)
    scenario = load_scenario(Path(spec.scenario_path))
    outcome = Outcome(scenario=scenario.id, model=spec.model, rep=spec.rep)
    replay_server = None
    settings_data = {**spec.settings, "model": spec.model, "mode": scenario.mode}
    settings_data["step_limit"] = scenario.step_limit
    if spec.replay:
        from agent.evals.replay import ReplayServer

        responses = json.loads(Path(spec.replay).read_text(encoding="utf-8"))
        replay_server = ReplayServer(responses).__enter__()
        os.environ.update(replay_server.env())
        for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN"):
            os.environ.pop(name, None)
        settings_data.update(streaming=False, profile=None)
    started = time.monotonic()
    recorder = Recorder(outcome)
    session = None
    try:
        from agent.config import Settings
        from agent.session import ChatSession
        from agent.staging import StagingArea
        from agent.stores.sqlite import SQLiteStore
        from agent.ui_port import HeadlessUi

        database = prepare_database(run_dir, scenario.setup, spec.template)
        files = [Path(shutil.copy(path, work / path.name)) for path in scenario.attachment_paths()]
        store = SQLiteStore.open(database)
        ui = HeadlessUi()
        session = ChatSession.open(Settings.model_validate(settings_data), store, ui=ui)
        for number, text in enumerate(scenario.turns):
            session.run_turn(text, attachments=files if number == 0 else (), on_event=recorder)
            if outcome.error:
                break
        outcome.opened = [*ui.opened, *outcome.opened]
        staging = StagingArea(store)
        outcome.staged = [
            {"table": c.table, "op": c.op, "key": c.key, "values": c.values} for c in staging.list()
        ]
        responses = recorded_responses(session.conversation.messages, recorder.step_usage)
        (run_dir / "responses.json").write_text(json.dumps(responses, default=str), "utf-8")
        transcript = session.conversations.path(session.conversation_id)
    except Exception as exc:  # a run that breaks is a failed run, with the reason
        outcome.error = f"{type(exc).__name__}: {exc}"
        transcript = None
    finally:
        if replay_server is not None:
            replay_server.__exit__()
    outcome.wall_seconds = round(time.monotonic() - started, 3)
    (run_dir / "outcome.json").write_text(json.dumps(outcome.to_dict(), default=str), "utf-8")
    result = result_of(scenario, outcome, run_dir, transcript)
    partial = run_dir / "result.json.part"  # renamed into place: never read half-written
    partial.write_text(json.dumps(result, default=str), "utf-8")
    os.replace(partial, run_dir / "result.json")
    return result


def result_of(scenario: Any, outcome: Outcome, run_dir: Path, transcript: Any) -> dict[str, Any]:
    """The run's verdict: every check, the first failure, and the figures of the report."""
    verdicts = judge(scenario.checks, outcome)
    failed = next((v for v in verdicts if not v.passed), None)
    return {
        "scenario": scenario.id,
        "model": outcome.model,
        "rep": outcome.rep,
        "passed": failed is None,
        "checks": [v.__dict__ for v in verdicts],
        "first_failure": f"{failed.check}: {failed.why}" if failed else None,
        "steps": outcome.steps,
        "searches": len(outcome.searches),
        "usage": outcome.usage,
        "wall_seconds": outcome.wall_seconds,
        "error": outcome.error,
        "throttled": bool(outcome.error and "throttl" in outcome.error.lower()),
        "run_dir": str(run_dir),
        "transcript": str(transcript) if transcript else str(run_dir / "xdg"),
    }


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    spec = RunSpec(**json.loads(Path(args[0]).read_text(encoding="utf-8")))
    result = run(spec)
    print(json.dumps({"passed": result["passed"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
