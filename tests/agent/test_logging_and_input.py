"""Internal errors go to the log file, never stderr; invalid Unicode in tool input is refused."""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.conversations import Conversation, ConversationStore
from agent.logs import setup_logging
from agent.tools.base import ToolContext
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse, stage_update
from tests.support.tools import err, opened_ctx

ROOT = Path(__file__).resolve().parents[2]


def _drop_our_handlers() -> None:
    for logger in (logging.getLogger("agent"), logging.getLogger("tui"), logging.getLogger()):
        for handler in [h for h in logger.handlers if getattr(h, "_tabletalk", False)]:
            logger.removeHandler(handler)
            handler.close()


@pytest.fixture
def fresh_logging() -> Iterator[None]:
    """setup_logging attaches handlers once per process; each test here gets its own file."""
    _drop_our_handlers()
    yield
    _drop_our_handlers()


@pytest.fixture
def ctx(tmp_path: Path, demo_path: Path) -> Iterator[ToolContext]:
    with opened_ctx(demo_path, tmp_path) as context:
        yield context


def _ours_or_a_library(name: str) -> bool:
    top = name.split(".")[0]
    return top in ("agent", "tui") or importlib.util.find_spec(top) is not None


def test_every_module_logs_under_its_own_module_name() -> None:
    """One hierarchy (agent.*, tui.*), which setup_logging routes to the file; a constant
    name is only for quieting a library's own logger."""
    stray = []
    for package in ("agent", "tui"):
        for source in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "attr", None) == "getLogger"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and not _ours_or_a_library(str(node.args[0].value))
                ):
                    stray.append(f"{source.relative_to(ROOT)}:{node.lineno}")
    assert stray == []


def test_a_tool_crash_goes_to_the_log_file_not_stderr(
    fresh_logging: None, ctx: ToolContext, capfd: pytest.CaptureFixture[str]
) -> None:
    log_path = setup_logging()
    assert log_path is not None
    logger = logging.getLogger("agent.tools.registry")
    try:
        raise RuntimeError("boom \ud800")
    except RuntimeError:
        logger.exception("tool %s failed", "exportCsv")
    logging.getLogger("some.library").warning("a library's warning")
    out, err_text = capfd.readouterr()
    assert out == "" and err_text == ""
    logged = log_path.read_text(encoding="utf-8")
    assert "Traceback" in logged and "RuntimeError: boom \\ud800" in logged
    assert "a library's warning" in logged


def test_ask_with_crashing_tool_inputs_prints_no_traceback(
    scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    """In its own process: pytest's log capture would otherwise hide Python's last resort."""
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "export to csv"})]),
        Reply(
            tool_uses=[
                ToolUse("exportCsv", {"query": "SELECT 1", "path": "bad\x00name.csv"}),
                ToolUse("exportCsv", {"query": "SELECT 1", "path": "n" * 300 + ".csv"}),
                ToolUse("getItem", {"table": "orders", "key": {"id\ud800": 1}}),
            ]
        ),
        Reply(text="Done."),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tui.entry import main; sys.exit(main())",
            "ask",
            "export",
            "--db",
            str(demo_path),
            "--mode",
            "full-auto",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **scripted_bedrock.env()},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Done." in done.stdout
    assert "unavailable tool" not in done.stderr


# -- lone surrogates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (
            {"table": "orders", "op": "update", "key": {"id\ud800": 1}, "values": {"status": "x"}},
            "key.id\\ud800",
        ),
        (
            {"table": "orders", "op": "update", "key": {"id": 1}, "values": {"status": "x\ud800"}},
            "values.status",
        ),
    ],
)
def test_lone_surrogates_are_refused_at_validation(
    ctx: ToolContext, args: dict[str, object], field: str
) -> None:
    failure = err(ctx, "stageItem", **args)
    assert f"field '{field}'" in failure["error"] and "not valid Unicode" in failure["error"]
    assert json.dumps(failure, ensure_ascii=False).encode("utf-8")  # the result itself is clean
    assert ctx.staging.count() == 0


def test_a_surrogate_in_any_tool_is_refused_nested_too(ctx: ToolContext) -> None:
    failure = err(ctx, "runQuery", query="SELECT '\udfff'")
    assert "field 'query'" in failure["error"]
    failure = err(ctx, "proposeOpenTable", table="orders", query="status = '\ud83d'")
    assert "not valid Unicode" in failure["error"]


def test_ask_with_a_surrogate_key_saves_the_conversation(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(stage_update({"id\ud800": 1}, {"status": "x"}), Reply(text="Sorry."))
    assert main(["ask", "cancel order 1", "--db", str(demo_path), "--mode", "full-auto"]) == 0
    err_text = capsys.readouterr().err
    assert "not valid Unicode" in err_text and "Traceback" not in err_text
    assert main(["conversations", "--json"]) == 0
    saved = json.loads(capsys.readouterr().out)
    assert saved[0]["title"] == "cancel order 1"


def test_a_conversation_with_a_lone_surrogate_saves_and_loads(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    conversation = Conversation("c-1", "demo", "m")
    conversation.append_user([{"text": "hi"}])
    conversation.append_assistant(
        {
            "content": [
                {"toolUse": {"toolUseId": "t1", "name": "stageItem", "input": {"k\ud800": 1}}}
            ]
        }
    )
    store.save(conversation)
    assert store.load("c-1").messages == conversation.messages
