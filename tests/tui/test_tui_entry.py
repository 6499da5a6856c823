"""The `tabletalk` command: headless commands never import Textual; flags reach the app."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent.stores.open import SQLITE_PREFIX
from tui.entry import first_command, wants_headless

ROOT = Path(__file__).resolve().parents[2]


def test_subcommands_and_help_go_headless_and_flags_do_not() -> None:
    assert wants_headless(["ask", "how many orders?"])
    assert wants_headless(["--db", "x.sqlite", "staged", "list"])
    assert wants_headless(["--help"])
    assert not wants_headless([])
    assert not wants_headless(["--db", "ask", "--mode", "auto"]), "option values are not commands"
    assert first_command(["--model", "haiku-4.5", "tools"]) == "tools"


def test_headless_command_runs_without_importing_textual(
    tmp_path: Path, isolated_dirs: Path
) -> None:
    code = (
        "import sys; from tui.entry import main; status = main(['info']); "
        "assert 'textual' not in sys.modules, 'textual was imported'; sys.exit(status)"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "XDG_DATA_HOME": str(isolated_dirs / "data"),
        "XDG_STATE_HOME": str(isolated_dirs / "state"),
        "XDG_CONFIG_HOME": str(isolated_dirs / "config"),
        "XDG_CACHE_HOME": str(isolated_dirs / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "customers" in done.stdout


def test_a_bad_db_path_is_an_error_with_a_fix_not_a_traceback(tmp_path: Path, capsys) -> None:
    from tui.entry import main

    status = main(["--db", str(tmp_path / "missing.sqlite")])
    err = capsys.readouterr().err
    assert status == 2
    assert "missing.sqlite" in err and "fix:" in err and "Traceback" not in err


def test_app_flags_override_the_config_file(tmp_path: Path, demo_path: Path) -> None:
    from tui.entry import prepare

    config = tmp_path / "config.toml"
    config.write_text('mode = "auto"\nmodel = "haiku-4.5"\n[keys]\nstop = "ctrl+c"\n')
    saved_conversation(SQLITE_PREFIX + str(demo_path), "20260101-120000-abcdef")
    store, settings, conversation, _ = prepare(
        [
            "--db",
            str(demo_path),
            "--config",
            str(config),
            "--mode",
            "full-auto",
            "--conversation",
            "20260101-120000-abcdef",
        ]
    )
    try:
        assert store.label == "demo.sqlite"
        assert settings.mode == "full-auto" and settings.model == "haiku-4.5"
        assert settings.keys == {"stop": "ctrl+c"}
        assert conversation == "20260101-120000-abcdef"
    finally:
        store.close()


def saved_conversation(store_identity: str, conversation_id: str) -> None:
    """Save a one-message conversation held about the store with that identity."""
    from agent.conversations import Conversation, ConversationStore

    conversation = Conversation(id=conversation_id, store=store_identity, model="m")
    conversation.append_user([{"text": "how many rows?"}])
    ConversationStore().save(conversation)


def test_a_continued_conversation_opens_its_own_database(tmp_path: Path, demo_path: Path) -> None:
    """`tabletalk --conversation ID` opened the default (demo) store whatever database the
    conversation was about, and then ran its history (and staged its edits) against that one;
    like `ask`, it opens the conversation's own store, and refuses another explicit --db."""
    from agent.errors import TabletalkError
    from tui.entry import prepare

    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)").connection.close()
    saved_conversation(SQLITE_PREFIX + str(other), "20260101-120000-a0b1c2")
    store, _, conversation, _ = prepare(["--conversation", "20260101-120000-a0b1c2"])
    try:
        assert store.label == "other.sqlite" and conversation == "20260101-120000-a0b1c2"
    finally:
        store.close()
    with pytest.raises(TabletalkError, match="belongs to") as refused:
        prepare(["--db", str(demo_path), "--conversation", "20260101-120000-a0b1c2"])
    assert f"--db {other}" in refused.value.fix


def test_no_flags_open_what_the_parser_defaults_would_open(
    tmp_path: Path, demo_path: Path, isolated_dirs: Path
) -> None:
    """`tabletalk` alone skips building the parser; the config file's settings and `db` are
    what the parsed defaults would give."""
    from agent import paths
    from agent.cli.common import resolve_settings, store_path
    from tui.entry import build_parser, prepare

    paths.ensure_dir(paths.config_dir())
    paths.config_file().write_text(f'db = "{demo_path}"\nmode = "auto"\nmodel = "haiku-4.5"\n')
    args = build_parser().parse_args([])
    parsed = resolve_settings(args)
    store, settings, conversation, _ = prepare([])
    try:
        assert settings == parsed and settings.mode == "auto"
        assert store.label == "demo.sqlite" and store_path(args, parsed) == str(demo_path)
        assert conversation is None
    finally:
        store.close()
