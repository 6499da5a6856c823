"""The code base stays ruff clean and ruff formatted (the checks a reviewer runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["catalog", "agent", "tui", "tests", "bench"]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it comes with the test extra)")
    return subprocess.run([ruff, *args, *PACKAGES], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean() -> None:
    result = _ruff("check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    """Formatting is ruff's, so a diff shows only what changed in meaning."""
    result = _ruff("format", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
