"""Per-step overhead of the turn loop itself, the model excluded.

A caller that replays pre-built events stands in for Bedrock, so what is timed is the loop:
building the active set's toolConfig, consuming events, running a cheap tool (listTables),
answering it, emitting events and saving the conversation. A second figure runs the same
turn through real boto3 against the scripted endpoint on 127.0.0.1 (adds HTTP, signing and
event-stream parsing, still no model).

    python bench/loop_overhead.py [--steps 10] [--turns 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings  # noqa: E402
from agent.session import ChatSession  # noqa: E402
from agent.stores.demo import build_demo_db  # noqa: E402
from agent.stores.open import open_store  # noqa: E402
from tests.support.replay import repeating  # noqa: E402


def run_replay(db: Path, steps: int, turns: int) -> list[float]:
    per_step = []
    for _ in range(turns):
        session = ChatSession.open(Settings(), open_store(db), caller=repeating(steps))
        start = time.perf_counter()
        ended = session.run_turn("bench")
        elapsed = time.perf_counter() - start
        assert ended.reason == "end_turn", ended
        per_step.append(elapsed / steps)
    return per_step


def run_scripted(db: Path, steps: int, turns: int) -> list[float]:
    from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse

    per_step = []
    with ScriptedBedrock() as server:
        os.environ.update(server.env())
        for _ in range(turns):
            server.add(*[Reply(tool_uses=[ToolUse("listTables", {})]) for _ in range(steps - 1)])
            server.add(Reply(text="done"))
            session = ChatSession.open(Settings(), open_store(db))
            start = time.perf_counter()
            ended = session.run_turn("bench")
            per_step.append((time.perf_counter() - start) / steps)
            assert ended.reason == "end_turn", ended
    return per_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for var in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
            os.environ[var] = str(Path(tmp) / var.lower())
        db = build_demo_db(Path(tmp) / "demo.sqlite")
        for label, runner in (
            ("loop only (replayed model)", run_replay),
            ("loop + boto3 + scripted HTTP endpoint", run_scripted),
        ):
            samples = runner(db, args.steps, args.turns)
            print(
                f"{label:40s} median {statistics.median(samples) * 1000:7.2f} ms/step   "
                f"p95 {sorted(samples)[int(len(samples) * 0.95) - 1] * 1000:7.2f} ms/step   "
                f"({args.turns} turns x {args.steps} steps)"
            )


if __name__ == "__main__":
    main()
