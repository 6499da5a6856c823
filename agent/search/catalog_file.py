"""Loading tool catalogs and labelled queries from files, for `tabletalk tools search/eval`.

A catalog file is a JSON list of `{"name", "description", "keywords"?}` objects or an MCP
`tools/list` result `{"tools": [{"name", "description", "inputSchema", ...}]}`; a queries file
is JSON lines of `{"query": str, "gold": [tool names]}` (an empty `gold` means no tool fits).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.errors import ConfigError
from agent.search.ranker import SearchDoc

CATALOG_FIX = (
    'Give a JSON list of {"name": ..., "description": ..., "keywords": [...]} objects, '
    'or an MCP tools/list result {"tools": [...]}.'
)
QUERIES_FIX = 'Give one JSON object per line: {"query": "...", "gold": ["toolName", ...]}.'


@dataclass(frozen=True)
class LabelledQuery:
    """A request and the tool names that would answer it (empty: no tool fits)."""

    query: str
    gold: tuple[str, ...]


def _read_text(path: Path, fix: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found.", fix=fix) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the file ({error}).", fix=fix) from None


def _text_field(path: Path, where: str, entry: dict[str, Any], key: str, *, required: bool) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ConfigError(
            f"{path}: {where} field '{key}' must be a non-empty string.", fix=CATALOG_FIX
        )
    return value


def docs_from_data(data: Any, path: Path | str = "<catalog>") -> list[SearchDoc]:
    """SearchDocs from already-parsed catalog JSON (either accepted shape)."""
    path = Path(path)
    if isinstance(data, dict) and "tools" in data:
        entries = data["tools"]
        prefix = "tools"
    else:
        entries = data
        prefix = "entry"
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: expected a list of tools.", fix=CATALOG_FIX)
    docs: list[SearchDoc] = []
    for position, entry in enumerate(entries):
        where = f"{prefix}[{position}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: {where} is not an object.", fix=CATALOG_FIX)
        name = _text_field(path, where, entry, "name", required=True)
        description = _text_field(path, where, entry, "description", required=False)
        keywords = entry.get("keywords", [])
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise ConfigError(
                f"{path}: {where} ({name}) field 'keywords' must be a list of strings.",
                fix=CATALOG_FIX,
            )
        docs.append(SearchDoc(name, description, tuple(keywords)))
    return docs


def load_catalog(path: Path | str) -> list[SearchDoc]:
    """The tools of a catalog file, in file order (which breaks score ties)."""
    path = Path(path)
    text = _read_text(path, CATALOG_FIX)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}).",
            fix=CATALOG_FIX,
        ) from None
    return docs_from_data(data, path)


def load_queries(path: Path | str) -> list[LabelledQuery]:
    """The labelled queries of a JSON-lines file, in file order; blank lines are skipped."""
    path = Path(path)
    text = _read_text(path, QUERIES_FIX)
    queries: list[LabelledQuery] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"{path}: line {line_no} is not valid JSON ({error.msg}).", fix=QUERIES_FIX
            ) from None
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: line {line_no} is not a JSON object.", fix=QUERIES_FIX)
        query = entry.get("query")
        if not isinstance(query, str):
            raise ConfigError(
                f"{path}: line {line_no} field 'query' must be a string.", fix=QUERIES_FIX
            )
        gold = entry.get("gold")
        if not isinstance(gold, list) or not all(isinstance(name, str) for name in gold):
            raise ConfigError(
                f"{path}: line {line_no} field 'gold' must be a list of tool names.",
                fix=QUERIES_FIX,
            )
        queries.append(LabelledQuery(query, tuple(gold)))
    return queries
