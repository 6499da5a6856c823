"""The app's first screen comes before anything it does not need: the chat session, the tool
models, staging, boto3, the MCP SDK and Markdown load afterwards, on a worker; table tabs,
modal screens, the staging panel, a turn's events and the chat's message widgets load on first
use; Textual's
TabbedContent and Tabs never (the tab strip is ours), nor the widget modules `textual.types`
names (tui/textual_types.py). The first frame already shows the
footer's keys; its widget classes were made with tui/textual_dom.py's `__init_subclass__`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from agent.stores.open import open_store
from tui.app import TabletalkApp

HEAVY = (
    "agent.session", "agent.conversations", "agent.tools.registry", "agent.staging",
    "agent.loop", "pydantic", "boto3", "botocore", "mcp", "anyio", "markdown_it", "rapidfuzz",
    "agent.events", "agent.attachments", "agent.transcript", "agent.mcp_server", "catalog",
    "agent.permissions", "hashlib",
    "tui.tabs", "tui.widgets.table_tab", "tui.widgets.table_view", "tui.widgets.staging_panel",
    "tui.screens.confirm", "tui.screens.error", "tui.screens.permission",
    "textual.widgets._footer", "textual.widgets._markdown", "textual.widgets._data_table",
    "textual.widgets._tabbed_content", "textual.widgets._tabs", "textual.widgets._content_switcher",
    "tui.widgets.chat_items", "textual.widgets._collapsible", "argparse", "agent.cli.common",
    "agent.stores.sqlite_apply", "agent.stores.sqlite_set_apply", "agent.stores.sqlite_guarded",
    "agent.stores.sqlite_holds", "agent.stores.sqlite_indexes", "agent.stores.references",
    "agent.stores.paging",
    "textual.widgets._directory_tree", "textual.widgets._tree", "textual.widgets._select",
    "textual.widgets._placeholder",
)


class Probe(TabletalkApp):
    def on_ready(self) -> None:  # the first frame is on screen
        loaded = [name for name in HEAVY if name in sys.modules]
        tables = self.query_one("#table-list").option_count
        keys = self.query_one("KeyFooter").shown_actions()
        from textual.dom import DOMNode
        init_subclass = DOMNode.__dict__["__init_subclass__"].__func__
        print(json.dumps({"loaded": loaded, "tables": tables, "footer": keys,
                          "focused": self.chat.composer.has_focus,
                          "class creation": init_subclass.__module__}))
        self.exit()


Probe(open_store(None), staging_poll_seconds=0).run(headless=True, size=(120, 36))
"""


def _last_json_line(code: str, timeout: int = 120) -> Any:
    """Run `code` in a fresh interpreter (it pays every import) and read its last line as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_screen_is_usable_before_the_session_and_its_imports(
    isolated_dirs: Path,
) -> None:
    first = _last_json_line(PROBE)
    assert first["tables"] >= 4 and first["focused"], first
    assert {"quit", "help", "open_staging_panel"} <= set(first["footer"]), first
    assert first["loaded"] == [], f"imported before the first screen: {first['loaded']}"
    assert first["class creation"] == "tui.textual_dom"  # widget classes made the quick way


def test_the_session_and_the_staged_changes_arrive_after_the_first_screen(
    isolated_dirs: Path,
) -> None:
    code = PROBE.replace(
        "        self.exit()\n",
        "        self.set_interval(0.05, self._wait_for_session)\n\n"
        "    def _wait_for_session(self) -> None:\n"
        "        self.ticks = getattr(self, 'ticks', 0) + 1\n"
        "        opened = self.session is not None and self.staging_watch._area is not None\n"
        "        if opened or self.ticks > 2000:  # 100 s: it never came\n"
        "            print(json.dumps({'opened': opened}))\n"
        "            self.exit()\n",
    )
    assert _last_json_line(code, timeout=180) == {"opened": True}


ENTRY_PROBE = """
import gc, json, sys
import tui.entry

opened = tui.entry.prepare
seen = {}


def prepare(argv):
    found = opened(argv)
    import tui.app

    class Probe(tui.app.TabletalkApp):
        def run(self, **_):
            return super().run(headless=True, size=(80, 24))

        def compose(self):
            seen["collecting while composing"] = gc.isenabled()
            yield from super().compose()

        def on_ready(self) -> None:  # before the app's own Ready handler starts its workers
            from tui import deferred_imports
            seen["run at the first frame"] = [  # modules imported but not run, or not imported
                name for name in ("ssl", "asyncio.sslproto", "platformdirs", "tempfile")
                if name in sys.modules and not deferred_imports.is_deferred(sys.modules[name])
            ]
            self.call_after_refresh(self._after_first_frame)

        def _after_first_frame(self) -> None:
            seen["collecting after the first frame"] = gc.isenabled()
            seen["start-up frozen"] = gc.get_freeze_count() > 0
            seen["argparse and the CLI's helpers"] = [
                name for name in ("argparse", "agent.cli.common") if name in sys.modules
            ]
            from tui import deferred_imports
            seen["imports deferred after it"] = deferred_imports.installed()
            self.exit()

    tui.app.TabletalkApp = Probe
    return found


tui.entry.prepare = prepare
status = tui.entry.main([])
seen["collecting after the app"] = gc.isenabled()
print(json.dumps(seen))
sys.exit(status)
"""


def test_tabletalk_starts_without_the_garbage_collector_and_runs_it_after_the_first_frame(
    isolated_dirs: Path,
) -> None:
    assert _last_json_line(ENTRY_PROBE) == {
        "collecting while composing": False,
        "collecting after the first frame": True,
        "start-up frozen": True,
        "argparse and the CLI's helpers": [],  # no flags: no parser to build
        "run at the first frame": [],  # TLS, platformdirs (tui/deferred_imports.py), history
        "imports deferred after it": False,
        "collecting after the app": True,
    }


SEND_AT_ONCE = PROBE.replace(
    "        self.exit()\n",
    "        for key in ('h', 'i', 'enter'):  # typed the moment the first frame is out\n"
    "            self._driver.send_message(events.Key(key, None if key == 'enter' else key))\n"
    "        self.set_interval(0.05, self._wait_for_message)\n\n"
    "    def _wait_for_message(self) -> None:\n"
    "        self.ticks = getattr(self, 'ticks', 0) + 1\n"
    "        shown = [m.text for m in self.query('UserMessage')]\n"
    "        if shown or self.ticks > 2000:  # 100 s: it never came\n"
    "            print(json.dumps({'shown': shown}))\n"
    "            self.exit()\n",
).replace(
    "from tui.app import TabletalkApp",
    "from textual import events\nfrom tui.app import TabletalkApp",
)


def test_a_message_sent_the_moment_the_first_screen_is_out_shows_in_the_chat(
    isolated_dirs: Path,
) -> None:
    """The message widgets load with the first one shown (not before the first screen)."""
    assert _last_json_line(SEND_AT_ONCE, timeout=180) == {"shown": ["hi"]}
