"""What every `tabletalk` command shares: flags in any position, config, --version, help,
exit statuses, and the JSON catalog (`tools --json`)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from agent.cli.main import build_parser, main
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock

COMMANDS = (
    ["info"],
    ["conversations"],
    ["tools"],
    ["tools", "search", "export to csv"],
    ["staged", "list"],
    ["staged", "diff"],
)


def _write_config(text: str) -> Path:
    """The default config file (under the test's XDG_CONFIG_HOME)."""
    from agent import paths

    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "tabletalk"):  # type: ignore[no-untyped-def]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _subcommands(sub, f"{prefix} {name}")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_common_flags_work_before_and_after_every_command(
    command: list[str], demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('mode = "manual"\n', encoding="utf-8")
    flags = ["--db", str(demo_path), "--profile", "p", "--region", "eu-west-1"]
    flags += ["--config", str(config)]
    assert main([*flags, *command]) == 0, capsys.readouterr().err
    before = capsys.readouterr().out
    assert main([*command, *flags]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == before


def test_a_missing_db_is_the_same_error_for_every_store_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope.sqlite")
    for command in (["info"], ["conversations"], ["staged", "list"]):
        assert main([*command, "--db", missing]) == 2
        err = capsys.readouterr().err
        assert f"no database file at {missing}" in err and "fix:" in err, command


def test_info_on_a_database_without_tables_says_what_to_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()
    assert main(["info", "--db", str(empty)]) == 0
    out = capsys.readouterr().out
    assert f"{empty.resolve()} has no tables" in out
    assert "`tabletalk --db PATH`" in out and "without --db for the demo database" in out


def test_info_reads_db_from_the_config_file(
    demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = Path(shutil.copy(demo_path, tmp_path / "shop.sqlite"))
    _write_config(f'db = "{other}"\n')
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"shop.sqlite (sqlite:{other.resolve()})") or str(other) in out
    assert "customers" in out


@pytest.mark.parametrize("command", [["info"], ["conversations"], ["tools"], ["staged", "list"]])
def test_an_invalid_config_is_a_setup_error_for_every_command(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write_config('mode = "bogus"\n')
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"Config file {path} has invalid settings: mode" in err
    assert "fix:" in err and "Traceback" not in err


def test_conversations_db_lists_only_that_databases_conversations(
    scripted_bedrock: ScriptedBedrock,
    demo_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    other = Path(shutil.copy(demo_path, tmp_path / "other.sqlite"))
    scripted_bedrock.add(Reply(text="one"), Reply(text="two"))
    assert main(["ask", "about demo", "--db", str(demo_path)]) == 0
    assert main(["ask", "about other", "--db", str(other)]) == 0
    capsys.readouterr()
    assert main(["conversations", "--db", str(other), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["title"] for c in listed] == ["about other"]
    assert main(["--db", str(demo_path), "conversations"]) == 0
    out = capsys.readouterr().out
    assert "about demo" in out and "about other" not in out
    assert str(other) not in out, "with --db every line is about that database"
    # Without --db the list mixes databases, so each line names its own (the app's list
    # points here for the conversations of other databases).
    assert main(["conversations"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("about other" in line and line.endswith(f"[{other}]") for line in lines), lines
    assert any("about demo" in line and line.endswith(f"[{demo_path}]") for line in lines)


def test_version_comes_from_the_package_metadata(isolated_dirs: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui.entry", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tabletalk {metadata.version('tabletalk')}"


def test_every_subcommand_has_a_description_in_its_help() -> None:
    found = dict(_subcommands(build_parser()))
    assert {"tabletalk info", "tabletalk conversations", "tabletalk staged list"} <= set(found)
    assert {"tabletalk tools search", "tabletalk tools eval", "tabletalk mcp"} <= set(found)
    for name, parser in found.items():
        assert parser.description, f"{name} has no description"
        help_text = parser.format_help()
        assert parser.description.split()[0] in help_text, name
        assert "--db" in help_text, f"{name} --help does not show --db"


def _flag_help(parser: argparse.ArgumentParser, flag: str) -> str:
    """The `flag` entry of a parser's --help, whitespace collapsed (argparse wraps it)."""
    lines = parser.format_help().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(flag + " "))
    entry = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 6) or line.strip().startswith("-"):
            break
        entry.append(line)
    return " ".join(" ".join(entry).split())


@pytest.mark.parametrize("flag", ["--db", "--profile", "--config"])
def test_db_and_profile_read_the_same_in_every_commands_help(flag: str) -> None:
    from agent.cli import mcp_cmd
    from tui.entry import build_parser as app_parser

    root = build_parser()
    found = {"tabletalk": root, "tabletalk (app)": app_parser(), **dict(_subcommands(root))}
    standalone = argparse.ArgumentParser(prog="python -m agent.cli.mcp_cmd")
    mcp_cmd.add_arguments(standalone)
    found["python -m agent.cli.mcp_cmd"] = standalone
    helps = {
        name: _flag_help(parser, flag)
        for name, parser in found.items()
        if flag in parser.format_help()
    }
    expected = helps["tabletalk"]
    assert len(helps) > 30 and expected.startswith(f"{flag} PATH" if flag == "--db" else flag)
    assert {name for name, text in helps.items() if text != expected} == set()


def test_every_help_fits_an_80_column_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long description and example lines wrapped mid-word at 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    root = build_parser()
    found = {"tabletalk": root, **dict(_subcommands(root))}
    wide = {
        f"{name}: {line}"
        for name, parser in found.items()
        for line in parser.format_help().splitlines()
        if len(line) > 80
    }
    assert wide == set()
    assert "Without a command, opens the app" in " ".join(root.format_help().split())


def test_tools_json_includes_each_tools_input_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert len(rows) > 20
    for name, row in rows.items():
        assert row["inputSchema"]["type"] == "object", name
    stage = rows["stageItem"]["inputSchema"]
    assert {"table", "op", "key"} <= set(stage["properties"])
    assert "table" in stage["required"]
    assert "query" in rows["searchTools"]["inputSchema"]["properties"]


def test_an_empty_question_is_a_usage_error(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for prompt in ("", "   "):
        with pytest.raises(SystemExit) as exited:
            main(["ask", prompt, "--db", str(demo_path)])
        assert exited.value.code == 2
        assert "empty question" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "command", "flag"),
    [
        (["ask", "--max-steps", "2", "many"], "tabletalk ask", "--max-steps"),
        (["staged", "list", "--bogus"], "tabletalk staged list", "--bogus"),
        (["tools", "search", "x", "--nope"], "tabletalk tools search", "--nope"),
    ],
)
def test_an_unknown_flag_is_reported_with_the_usage_of_its_command(
    capsys: pytest.CaptureFixture[str], argv: list[str], command: str, flag: str
) -> None:
    """`tabletalk ask --max-steps 2 …` printed the top-level usage, which lists no `ask`
    flag; the error now comes from the command given, with its usage (--step-limit in it)."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"{command}: error: unrecognized arguments: {flag}" in err, err
    assert err.startswith(f"usage: {command} "), err


def test_model_access_denied_is_a_setup_error_and_a_rejected_request_a_failed_turn(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(Error(403, "AccessDeniedException", "You don't have access to the model"))
    assert main(["ask", "hello", "--db", str(demo_path), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["errorKind"] == "access_denied"
    scripted_bedrock.add(Error(400, "ValidationException", "messages: malformed"))
    assert main(["ask", "hello", "--db", str(demo_path)]) == 1
    assert "rejected the request" in capsys.readouterr().err


LEAN_PROBE = """
import json, sys
from tui.entry import main

HEAVY = (
    "mcp", "anyio", "boto3", "botocore", "agent.tools.registry", "agent.session", "textual",
    "pydantic", "rapidfuzz",
)
loaded = {}
for command in sys.argv[1:]:
    try:
        main(command.split())
    except SystemExit:
        pass
    loaded[command] = [name for name in HEAVY if name in sys.modules]
print(json.dumps(loaded), file=sys.stderr)
"""


EVERY_SECTION = """\
mode = "auto"
step_limit = 20
[search]
min_probability = 0.2
[tools]
always_loaded = ["exportRows"]
[dynamodb]
max_read_units = 100.0
[keys]
stop = "escape"
[eval.prices.m]
input = 0.5
output = 2.0
[history]
keep_days = 30
"""


def test_headless_commands_import_only_what_they_use(demo_path: Path) -> None:
    _write_config(EVERY_SECTION)  # a well-formed file is read without pydantic
    light = [
        "--help",
        f"staged list --db {demo_path}",
        f"info --db {demo_path}",
        f"commits --db {demo_path}",
        "mcp --help",
        "mcp token list",
        "conversations",  # none saved: nothing read, so no pydantic
        "tools",  # the schemas come from agent/tools/input_schemas.json: no tool models
        "tools --json",
    ]
    done = subprocess.run(
        [sys.executable, "-c", LEAN_PROBE, *light, "tools search export"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    for command in light:  # in one process, in order: each adds nothing heavy
        assert loaded[command] == [], f"`tabletalk {command}` imported {loaded[command]}"
    # A search needs the ranker (rapidfuzz), still no tool models, MCP SDK, boto3 or Textual.
    searched = loaded["tools search export"]
    assert "rapidfuzz" in searched
    assert not {"mcp", "boto3", "pydantic", "agent.tools.registry", "textual"} & set(searched)


def test_the_mcp_levels_offered_by_the_cli_are_the_servers() -> None:
    from agent.cli.mcp_cmd import LEVELS as CLI_LEVELS
    from agent.mcp_server.server import LEVELS

    assert tuple(CLI_LEVELS) == tuple(LEVELS)
