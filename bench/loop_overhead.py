"""Per-step cost of the turn loop beyond what a bare boto3 client needs for the same requests.

For each conversation length (prior steps already in the history), one sample is:

- **loop**: a `ChatSession` runs a turn of `--steps` requests (each answer but the last calls
  `listTables`) through real boto3 against the scripted Converse endpoint on 127.0.0.1;
  timed from the first `StepStarted` to `TurnEnded` (so the client's creation and the first
  save of the prompt are outside, the steps are inside: toolConfig, events, the tool, the
  results message, saving the conversation, and boto3's own work);
- **floor**: a fresh bare `boto3.client("bedrock-runtime")` sends the very request bodies the
  endpoint recorded for that turn (`converse_stream(**body)`, every event read) against the
  same endpoint answering the same replies;
- **replayed**: the same turn with a replayed model (no HTTP, no boto3), the loop alone.

Overhead per step = (loop - floor) / steps. Samples of the three are interleaved; medians are
printed per length, so flatness shows as the same overhead at every length.

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


class StepClock:
    """Times a turn from its first StepStarted to TurnEnded."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.end: float | None = None

    def __call__(self, event: TurnEvent) -> None:
        if isinstance(event, StepStarted) and self.first is None:
            self.first = time.perf_counter()
        elif isinstance(event, TurnEnded):
            self.end = time.perf_counter()

    @property
    def elapsed(self) -> float:
        assert self.first is not None and self.end is not None
        return self.end - self.first


def run_loop(
    server: ScriptedBedrock, store: Store, conversation_id: str, steps: int
) -> tuple[float, list[dict[str, Any]]]:
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


def run_floor(server: ScriptedBedrock, bodies: list[dict[str, Any]]) -> float:
    """The same request bodies through a bare boto3 client, every event read."""
    import boto3

    server.add(*_replies(len(bodies)))
    client = boto3.client("bedrock-runtime")
    start = time.perf_counter()
    for body in bodies:
        for _event in client.converse_stream(**body)["stream"]:
            pass
    return time.perf_counter() - start


def run_replayed(store: Store, conversation_id: str, steps: int) -> float:
    session = ChatSession.open(
        SETTINGS, store, conversation_id=conversation_id, caller=repeating(steps)
    )
    clock = StepClock()
    ended = session.run_turn("bench", on_event=clock)
    assert ended.reason == "end_turn", ended
    return clock.elapsed


def measure(steps: int, lengths: list[int], samples: int) -> list[dict[str, Any]]:
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
            loop, floor, replayed = [], [], []
            for number in range(samples + 1):  # the first round warms caches, not counted
                seconds, bodies = run_loop(server, store, copy_of(base, 2 * number), steps)
                floor_seconds = run_floor(server, bodies)
                replay_seconds = run_replayed(store, copy_of(base, 2 * number + 1), steps)
                if number:
                    loop.append(seconds / steps)
                    floor.append(floor_seconds / steps)
                    replayed.append(replay_seconds / steps)
            overhead = [a - b for a, b in zip(loop, floor, strict=True)]
            messages = len(ConversationStore().load(base).messages)
            rows.append(
                {
                    "prior_steps": length,
                    "prior_messages": messages,
                    "loop_ms": statistics.median(loop) * 1000,
                    "floor_ms": statistics.median(floor) * 1000,
                    "overhead_ms": statistics.median(overhead) * 1000,
                    "overhead_range_ms": [min(overhead) * 1000, max(overhead) * 1000],
                    "replayed_ms": statistics.median(replayed) * 1000,
                    "ratio": statistics.median(loop) / statistics.median(floor),
                }
            )
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
        f"{args.steps}-request turns, median of {args.samples} samples per length, "
        f"load {load:.2f} (ms per step)"
    )
    print(
        f"{'prior steps':>11} {'messages':>8} {'replayed':>9} {'loop':>8} {'floor':>8} "
        f"{'overhead':>9} {'(min-max)':>15} {'loop/floor':>10}"
    )
    for row in rows:
        low, high = row["overhead_range_ms"]
        print(
            f"{row['prior_steps']:>11} {row['prior_messages']:>8} {row['replayed_ms']:>9.2f} "
            f"{row['loop_ms']:>8.2f} {row['floor_ms']:>8.2f} {row['overhead_ms']:>9.2f} "
            f"{f'{low:.2f}-{high:.2f}':>15} {row['ratio']:>10.2f}"
        )


if __name__ == "__main__":
    main()
