"""Memory and time to show a resumed 500-message conversation (text, tables in Markdown, tool calls).

Prints RSS before the app starts, after the conversation is on screen, and the time to render it.
Usage: .venv/bin/python bench/tui_memory.py [messages]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def rss_mb() -> float:
    """Resident set size now (Linux /proc), in MB."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


ANSWER = (
    "Here are the **top products** this week:\n\n| product | units |\n|---|---|\n"
    "| Teapot | 42 |\n| Lamp | 17 |\n\nWant me to open `orders` filtered by product?"
)


def build_conversation(store_identity: str, messages: int) -> str:
    from agent.conversations import Conversation, ConversationStore, new_conversation_id

    conversation = Conversation(new_conversation_id(), store_identity, "us.amazon.nova-2-lite-v1:0")
    for n in range(messages // 2):
        conversation.append_user([{"text": f"Question {n}: which products sold best in week {n}?"}])
        conversation.append_assistant({"content": [{"text": ANSWER}]})
    ConversationStore().save(conversation)
    return conversation.id


async def measure(messages: int) -> None:
    from agent.config import Settings
    from agent.stores.open import open_store
    from tui.app import TabletalkApp
    from tui.widgets.chat_items import SavedAnswer

    store = open_store(None)
    conversation_id = build_conversation(store.identity, messages)
    before = rss_mb()
    app = TabletalkApp(store, Settings(), conversation_id=conversation_id, staging_poll_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        started = time.perf_counter()
        while len(app.query(SavedAnswer)) < min(messages // 2, 30):
            await pilot.pause(0.01)
        shown = time.perf_counter() - started
        await pilot.pause()
        after = rss_mb()
        started = time.perf_counter()
        app.chat.log_view.scroll_home(animate=False)
        await pilot.pause()
        scroll = time.perf_counter() - started
        started = time.perf_counter()
        while app.chat.query("#show-earlier"):
            await pilot.click("#show-earlier")
            await pilot.pause()
        all_shown = time.perf_counter() - started
        everything = rss_mb()
    print(
        f"{messages} messages: on screen in {shown:.2f} s; RSS {before:.0f} MB before the app, "
        f"{after:.0f} MB with the conversation shown (+{after - before:.0f} MB); "
        f"scroll to top {scroll * 1000:.0f} ms; every earlier message built on demand in "
        f"{all_shown:.1f} s, RSS then {everything:.0f} MB"
    )


def main() -> None:
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with tempfile.TemporaryDirectory() as home:
        for name in ("CONFIG", "DATA", "STATE", "CACHE"):
            os.environ[f"XDG_{name}_HOME"] = os.path.join(home, name.lower())
        asyncio.run(measure(messages))


if __name__ == "__main__":
    main()
