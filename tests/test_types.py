"""The type gate: mypy (pydantic plugin; strict on catalog and agent) finds no error."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error() -> None:
    mypy = shutil.which("mypy") or str(Path(sys.executable).with_name("mypy"))
    if not Path(mypy).exists():
        pytest.skip("mypy is not installed (it comes with the test extra)")
    # Configuration (files, strictness per package, plugins) is [tool.mypy] in pyproject.toml.
    result = subprocess.run([mypy], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
