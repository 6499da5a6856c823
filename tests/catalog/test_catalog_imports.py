"""`catalog` stays free of runtime imports beyond typing/enum/dataclasses."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CATALOG_DIR = Path(__file__).resolve().parents[2] / "catalog"
ALLOWED = {"__future__", "typing", "enum", "dataclasses", "catalog"}
GUARDS = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def forbidden_imports(source: str) -> list[str]:
    """Top-level module names imported outside `if TYPE_CHECKING:` that are not allowed."""
    tree = ast.parse(source)
    type_checking_nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in GUARDS:
            for statement in node.body:  # only the guarded body, never `else:`
                for child in ast.walk(statement):
                    type_checking_nodes.add(id(child))
    found = []
    for node in ast.walk(tree):
        if id(node) in type_checking_nodes:
            continue
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = ["." if node.level else (node.module or "")]
        else:
            continue
        for module in modules:
            if module != "." and module.split(".")[0] not in ALLOWED:
                found.append(module)
    return found


def test_catalog_sources_import_only_the_allowed_modules() -> None:
    sources = sorted(CATALOG_DIR.glob("*.py"))
    assert sources
    for path in sources:
        assert forbidden_imports(path.read_text()) == [], path.name


def test_the_import_check_catches_an_added_import() -> None:
    source = (CATALOG_DIR / "rows.py").read_text()
    assert forbidden_imports(source) == []
    assert forbidden_imports(source + "\nimport json\n") == ["json"]
    assert forbidden_imports("from collections.abc import Iterable\n") == ["collections.abc"]
    assert forbidden_imports("import boto3\n") == ["boto3"]
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import boto3\n"
    assert forbidden_imports(guarded) == []
    in_else = guarded.replace("    import boto3\n", "    pass\nelse:\n    import boto3\n")
    assert forbidden_imports(in_else) == ["boto3"]
    negated = "from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    import boto3\n"
    assert forbidden_imports(negated) == ["boto3"]


def test_importing_catalog_loads_no_third_party_or_project_module() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import catalog\n"
        "new = sorted(set(sys.modules) - before)\n"
        "print('\\n'.join(new))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    stdlib = set(sys.stdlib_module_names)
    offenders = [m for m in out if m.split(".")[0] not in stdlib and m.split(".")[0] != "catalog"]
    assert offenders == []
    assert not any(m.split(".")[0] in {"agent", "tui"} for m in out)
