"""The import contracts in pyproject.toml hold (`lint-imports`), and they catch a violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("catalog", "agent", "tui")


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(tool).exists():
        pytest.skip("import-linter is not installed (it comes with the test extra)")
    return subprocess.run(
        [tool, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(cwd)},
    )


def test_the_import_contracts_are_kept() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("agent/errors.py", "import tui.app", "Imports point one way"),
        ("agent/stores/sqlite_schema.py", "import agent.stores.sqlite", "No import cycles"),
        ("catalog/rows.py", "import pydantic", "catalog is plain data"),
    ],
)
def test_a_violation_breaks_a_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    verdicts = [row for row in result.stdout.splitlines() if row.startswith(contract)]
    assert verdicts and " BROKEN" in verdicts[0], result.stdout
