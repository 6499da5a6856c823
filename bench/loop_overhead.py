"""Per-step cost of the turn loop beyond what a bare boto3 client needs for the same requests.

For each conversation length (prior steps already in the history), one sample is:

- **loop**: a `ChatSession` runs a turn of `--steps` requests (each answer but the last calls
  `listTables`) through real boto3 against the scripted Converse endpoint on 127.0.0.1;
  timed from the first `StepStarted` to `TurnEnded` (so the client's creation and the first
  save of the prompt are outside, the steps are inside: toolConfig, events, the tool, the
  results message, saving the conversation, and boto3's own work);
- **floor**: a fresh bare `boto3.client("bedrock-runtime")` sends the very request bodies the
  endpoint recorded for that turn (`converse_stream(**body)`, every event read) against the
  same endpoint answering the same replies; **floor-nv** does the same with botocore's
  parameter validation off (the loop validates each part of a request once instead, so this
  floor is the boto3 work the loop still does);
- **replayed**: the same turn with a replayed model (no HTTP, no boto3), the loop alone.

Overhead per step = median over samples of (loop - floor) / steps, in wall time and in CPU
time of the process (every thread, the endpoint's included; far less disturbed by other
processes on a loaded machine). The ways are interleaved in each sample; flatness shows as
the same overhead at every length.

    python bench/loop_overhead.py [--steps 41] [--lengths 0 40 160 400] [--samples 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings  # noqa: E402
from agent.conversations import ConversationStore  # noqa: E402
from agent.events import StepStarted, TurnEnded, TurnEvent  # noqa: E402
from agent.session import ChatSession  # noqa: E402
from agent.stores.base import Store  # noqa: E402
from agent.stores.demo import build_demo_db  # noqa: E402
from agent.stores.open import open_store  # noqa: E402
from tests.support.replay import repeating  # noqa: E402
from tests.support.scripted_bedrock import UNSET_VARS, Reply, ScriptedBedrock, ToolUse  # noqa: E402

SETTINGS = Settings(step_limit=100)


def _replies(steps: int) -> list[Reply]:
    return [Reply(tool_uses=[ToolUse("listTables", {})]) for _ in range(steps - 1)] + [
        Reply(text="done")
    ]


def prefilled(store: Store, prior_steps: int) -> str:
    """A saved conversation holding `prior_steps` listTables steps (replayed, no HTTP)."""
    session = ChatSession.open(SETTINGS, store, caller=repeating(1))
    session.run_turn("start")
    left = prior_steps
    while left > 0:
        chunk = min(left, 90)
        more = ChatSession.open(
            SETTINGS, store, conversation_id=session.conversation_id, caller=repeating(chunk + 1)
        )
        ended = more.run_turn("more")
        assert ended.reason == "end_turn", ended
        left -= chunk
    return session.conversation_id


def copy_of(conversation_id: str, number: int) -> str:
    """A copy of a saved conversation under a new id (each sample starts at the same length)."""
    conversations = ConversationStore()
    original = conversations.load(conversation_id)
    copy = replace(original, id=f"{conversation_id}-{number}")
    conversations.save(copy)
    return copy.id


Times = tuple[float, float]
"""(wall seconds, CPU seconds of this process: every thread, the endpoint's included)."""


def now() -> Times:
    return time.perf_counter(), time.process_time()


def since(start: Times) -> Times:
    wall, cpu = now()
    return wall - start[0], cpu - start[1]


class StepClock:
    """Times a turn from its first StepStarted to TurnEnded."""

    def __init__(self) -> None:
        self.first: Times | None = None
        self.elapsed: Times = (0.0, 0.0)

    def __call__(self, event: TurnEvent) -> None:
        if isinstance(event, StepStarted) and self.first is None:
            self.first = now()
        elif isinstance(event, TurnEnded):
            assert self.first is not None
            self.elapsed = since(self.first)


def run_loop(
    server: ScriptedBedrock, store: Store, conversation_id: str, steps: int
) -> tuple[Times, list[dict[str, Any]]]:
    """One turn through the real Bedrock caller; (seconds, the request bodies it sent)."""
    server.add(*_replies(steps))
    before = len(server.requests)
    session = ChatSession.open(SETTINGS, store, conversation_id=conversation_id)
    clock = StepClock()
    ended = session.run_turn("bench", on_event=clock)
    assert ended.reason == "end_turn" and ended.steps == steps, ended
    bodies = [request.body for request in server.requests[before:]]
    model = server.requests[-1].model_id
    return clock.elapsed, [dict(body, modelId=model) for body in bodies]


def run_floor(server: ScriptedBedrock, bodies: list[dict[str, Any]], validate: bool) -> Times:
    """The same request bodies through a bare boto3 client, every event read (`validate`:
    botocore's parameter validation, on by default)."""
    import boto3
    from botocore.config import Config

    server.add(*_replies(len(bodies)))
    client = boto3.client("bedrock-runtime", config=Config(parameter_validation=validate))
    start = now()
    for body in bodies:
        for _event in client.converse_stream(**body)["stream"]:
            pass
    return since(start)


def run_replayed(store: Store, conversation_id: str, steps: int) -> Times:
    session = ChatSession.open(
        SETTINGS, store, conversation_id=conversation_id, caller=repeating(steps)
    )
    clock = StepClock()
    ended = session.run_turn("bench", on_event=clock)
    assert ended.reason == "end_turn", ended
    return clock.elapsed


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(steps: int, lengths: list[int], samples: int) -> list[dict[str, Any]]:
    """Per length: medians (ms per step) of wall and CPU time for each way, and of the
    per-sample differences loop - floor."""
    rows = []
    with ScriptedBedrock() as server:
        for name in UNSET_VARS:
            os.environ.pop(name, None)
        os.environ.update(server.env())
        data = Path(os.environ["XDG_DATA_HOME"])
        data.mkdir(parents=True, exist_ok=True)
        store = open_store(build_demo_db(data / "demo.sqlite"))
        for length in lengths:
            base = prefilled(store, length)
            runs: dict[str, list[Times]] = {"loop": [], "floor": [], "floor_nv": [], "replayed": []}
            for number in range(samples + 1):  # the first round warms caches, not counted
                loop, bodies = run_loop(server, store, copy_of(base, 2 * number), steps)
                sample = {
                    "loop": loop,
                    "floor": run_floor(server, bodies, validate=True),
                    "floor_nv": run_floor(server, bodies, validate=False),
                    "replayed": run_replayed(store, copy_of(base, 2 * number + 1), steps),
                }
                if number:
                    for name, times in sample.items():
                        runs[name].append((times[0] / steps, times[1] / steps))
            row: dict[str, Any] = {
                "prior_steps": length,
                "prior_messages": len(ConversationStore().load(base).messages),
            }
            for kind, index in (("wall", 0), ("cpu", 1)):
                for name, times in runs.items():
                    row[f"{name}_{kind}_ms"] = _median_ms([t[index] for t in times])
                for floor in ("floor", "floor_nv"):
                    differences = [
                        a[index] - b[index] for a, b in zip(runs["loop"], runs[floor], strict=True)
                    ]
                    row[f"over_{floor}_{kind}_ms"] = _median_ms(differences)
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=41, help="requests per measured turn")
    parser.add_argument("--lengths", type=int, nargs="+", default=[0, 40, 160, 400])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for var in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[var] = str(Path(tmp) / var.lower())
        rows = measure(args.steps, args.lengths, args.samples)
    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"load": load, "steps": args.steps, "rows": rows}, indent=1))
        return
    print(
        f"{args.steps}-request turns, medians of {args.samples} samples per length, "
        f"load {load:.2f}; ms per step. floor: bare boto3 client; floor-nv: the same without "
        "botocore's parameter validation; over: median of per-sample (loop - floor)"
    )
    for kind in ("wall", "cpu"):
        print(
            f"\n{kind:>4} {'prior steps':>11} {'messages':>8} {'replayed':>9} {'loop':>8} "
            f"{'floor':>8} {'floor-nv':>9} {'over floor':>11} {'over nv':>8} {'loop/floor':>10}"
        )
        for row in rows:
            ratio = row[f"loop_{kind}_ms"] / row[f"floor_{kind}_ms"]
            print(
                f"{'':>4} {row['prior_steps']:>11} {row['prior_messages']:>8} "
                f"{row[f'replayed_{kind}_ms']:>9.2f} {row[f'loop_{kind}_ms']:>8.2f} "
                f"{row[f'floor_{kind}_ms']:>8.2f} {row[f'floor_nv_{kind}_ms']:>9.2f} "
                f"{row[f'over_floor_{kind}_ms']:>11.2f} {row[f'over_floor_nv_{kind}_ms']:>8.2f} "
                f"{ratio:>10.2f}"
            )


if __name__ == "__main__":
    main()
