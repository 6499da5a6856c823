"""Stop and responsiveness during a long streamed answer (200,000 characters arriving at once).

Runs the real app headless against the scripted Converse endpoint (real boto3 stack) and
measures, from the moment the first text of the answer is on screen:

- Stop latency: Esc posted → the turn is over (composer free, Stop disabled), and → the
  "Stopped" note is shown; and how many characters were rendered after Esc (should be ~0).
- F1 latency: F1 posted → the help screen is the active screen and has been painted.
- For reference, the time to render the whole answer when nobody interrupts.

With `--one-line` the answer is one line of words (no line break at all), and `--at N` waits
until N characters are on screen before pressing the keys (so a widget has grown first).

Targets: Stop < 200 ms, F1 < 200 ms.
Usage: .venv/bin/python bench/tui_stop.py [--chars 200000] [--chunk 4] [--size 120x36]
       [--one-line] [--at 0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402

from agent.config import Settings  # noqa: E402
from agent.stores.demo import build_demo_db  # noqa: E402
from agent.stores.sqlite import SQLiteStore  # noqa: E402
from tests.support.scripted_bedrock import UNSET_VARS, Reply, ScriptedBedrock  # noqa: E402

POLL = 0.002


def one_line_answer(chars: int) -> str:
    """Words with inline Markdown and no line break, as a model that never breaks lines."""
    words = ("orders", "**pending**", "customer", "`status`", "42", "returns", "grew")
    return " ".join(words[n % len(words)] for n in range(chars // 5))[:chars]


def long_answer(chars: int) -> str:
    """Markdown as a model writes it: headings, paragraphs, lists, a table now and then."""
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < chars:
        n += 1
        parts.append(
            f"## Section {n}\n\nCustomer **{n}** placed orders across several months; the "
            "totals below compare `status` values and the share of returns.\n\n"
            f"- pending: {n * 3}\n- shipped: {n * 5}\n- delivered: {n * 7}\n\n"
            "| month | orders | returns |\n| --- | --- | --- |\n"
            f"| Jan | {n} | {n % 4} |\n| Feb | {n + 2} | {n % 3} |\n\n"
        )
    return "".join(parts)[:chars]


async def wait_for(condition: Callable[[], bool], limit: float = 300.0) -> float:
    """Seconds until `condition()` holds (polled on the app's own event loop)."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > limit:
            raise TimeoutError("condition not met")
        await asyncio.sleep(POLL)
    return time.perf_counter() - started


AT = 0
"""Characters on screen before the keys are pressed (`--at`)."""


async def start_answer(app: object, pilot: object) -> None:
    from tui.widgets.chat_items import AssistantMessage

    await wait_for(lambda: app.session is not None)  # type: ignore[attr-defined]
    app.chat.composer.text = "write a very long report"  # type: ignore[attr-defined]
    app.chat.composer.focus()  # type: ignore[attr-defined]
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_for(lambda: bool(app.query(AssistantMessage)))  # type: ignore[attr-defined]
    await wait_for(lambda: rendered(app) >= AT)


def rendered(app: object) -> int:
    """Characters of answer text on screen (live Markdown and light segments)."""
    pieces = app.query("SavedAnswer, AssistantMessage")  # type: ignore[attr-defined]
    return sum(len(w.source) for w in pieces)


async def measure_stop(make_app: Callable[[], object], size: tuple[int, int]) -> dict[str, float]:
    try:
        from tui.widgets.chat_lines import NoteLine
    except ImportError:  # a tree from before chat_lines.py
        from tui.widgets.chat_items import NoteLine  # type: ignore[attr-defined,no-redef]

    app = make_app()
    async with app.run_test(size=size) as pilot:  # type: ignore[attr-defined]
        await start_answer(app, pilot)
        at_esc = rendered(app)
        app.post_message(events.Key("escape", None))  # type: ignore[attr-defined]
        ended = await wait_for(lambda: not app.chat.busy)  # type: ignore[attr-defined]
        noted = await wait_for(
            lambda: any("Stopped" in str(n.render()) for n in app.query(NoteLine))  # type: ignore[attr-defined]
        )
        await asyncio.sleep(1.0)
        after = rendered(app)
    return {"ended": ended, "noted": ended + noted, "at_esc": at_esc, "after": after}


async def measure_f1(make_app: Callable[[], object], size: tuple[int, int]) -> dict[str, float]:
    from tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=size) as pilot:  # type: ignore[attr-defined]
        await start_answer(app, pilot)
        painted = asyncio.Event()
        started = time.perf_counter()
        app.post_message(events.Key("f1", None))  # type: ignore[attr-defined]
        await wait_for(lambda: isinstance(app.screen, HelpScreen))  # type: ignore[attr-defined]
        app.call_after_refresh(painted.set)  # type: ignore[attr-defined]
        await painted.wait()
        opened = time.perf_counter() - started
        was_busy = bool(app.chat.busy)  # type: ignore[attr-defined]
        await pilot.press("escape")  # type: ignore[attr-defined]
        whole = await wait_for(lambda: not app.chat.busy)  # type: ignore[attr-defined]
    return {"opened": opened, "while_busy": float(was_busy), "rest": whole}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=200_000)
    parser.add_argument("--chunk", type=int, default=4, help="characters per stream event")
    parser.add_argument("--size", default="120x36")
    parser.add_argument("--one-line", action="store_true", help="an answer without line breaks")
    parser.add_argument("--at", type=int, default=0, help="characters shown before the keys")
    args = parser.parse_args()
    global AT
    AT = args.at
    width, height = (int(v) for v in args.size.split("x"))
    text = one_line_answer(args.chars) if args.one_line else long_answer(args.chars)
    with tempfile.TemporaryDirectory() as home:
        for name in ("CONFIG", "DATA", "STATE", "CACHE"):
            os.environ[f"XDG_{name}_HOME"] = os.path.join(home, name.lower())
        endpoint = ScriptedBedrock(text_chunk_size=args.chunk).start()
        for name in UNSET_VARS:
            os.environ.pop(name, None)
        os.environ.update(endpoint.env())
        db = build_demo_db(Path(home) / "demo.sqlite")

        def make_app() -> object:
            from tui.app import TabletalkApp

            endpoint.add(Reply(text=text))
            return TabletalkApp(
                SQLiteStore.open(db), Settings(mode="manual"), staging_poll_seconds=0
            )

        stop = asyncio.run(measure_stop(make_app, (width, height)))
        f1 = asyncio.run(measure_f1(make_app, (width, height)))
        endpoint.stop()
    print(f"answer: {len(text):,} characters in {args.chunk}-character stream events, {args.size}")
    print(
        f"Stop: turn over {stop['ended'] * 1000:.0f} ms after Esc, 'Stopped' shown after "
        f"{stop['noted'] * 1000:.0f} ms; rendered {stop['at_esc']:,.0f} chars at Esc, "
        f"{stop['after']:,.0f} one second later"
    )
    print(
        f"F1: help open and painted {f1['opened'] * 1000:.0f} ms after the key "
        f"(answer still streaming: {bool(f1['while_busy'])}); the rest of the answer took "
        f"{f1['rest']:.1f} s more"
    )


if __name__ == "__main__":
    main()
