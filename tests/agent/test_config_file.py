"""A config file that cannot be used gets a message saying what is wrong with it and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent import paths
from agent.cli.main import main


def run_ask(demo_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["ask", "hello", "--db", str(demo_path)]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_config_path_that_is_a_folder_says_so(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.config_file().mkdir(parents=True)
    err = run_ask(demo_path, capsys)
    assert f"{paths.config_file()} is a folder, not a file" in err
    assert "permissions" not in err


def test_a_config_that_is_not_utf8_says_so(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.ensure_dir(paths.config_dir())
    paths.config_file().write_bytes(b'model = "caf\xe9"\n')
    err = run_ask(demo_path, capsys)
    assert "is not UTF-8 text" in err and "Save" in err
    assert "permissions" not in err


def test_a_config_that_is_a_fifo_is_refused_without_waiting(demo_path: Path) -> None:
    paths.ensure_dir(paths.config_dir())
    os.mkfifo(paths.config_file())
    done = subprocess.run(  # in a child process: reading a FIFO would block this one forever
        [sys.executable, "-m", "agent", "ask", "hello", "--db", str(demo_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "is a FIFO (named pipe), not a regular file" in done.stderr
