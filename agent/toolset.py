"""The effective catalog of a session: catalog rows after user overrides, plus external tools.

Every list the loop needs (inline, discoverable, gated, the search tool's description) is
derived here from the effective rows, exactly as `catalog` derives them from its own. Built-in
and external (MCP) tools are both a `Tool`: a row, a toolSpec and a run function.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

import catalog
from agent.tools.context import ToolContext
from agent.tools.input_schemas import spec_entry, stored_schema
from catalog import Effect, Requirement, Tier, ToolRow, Visibility

RunResult = tuple[Literal["success", "error"], dict[str, Any]]
Runner = Callable[[ToolContext, dict[str, Any] | None], RunResult]
LOOP_TOOLS = catalog.loop_names()


@functools.lru_cache(maxsize=256)
def _builtin_spec(name: str, description: str) -> dict[str, Any]:
    """A built-in tool's spec, built once per process from its stored schema; the tools and
    pydantic load only for a tool the stored file does not list (or when a tool runs)."""
    schema = stored_schema(name)
    if schema is None:
        from agent.tools.registry import input_schema

        schema = input_schema(name)
    return spec_entry(name, description, schema)


def _run_builtin(ctx: ToolContext, name: str, raw_input: dict[str, Any] | None) -> RunResult:
    """Validate and run a built-in tool (agent.tools.registry.run_tool), loading the tools."""
    from agent.tools.registry import run_tool

    return run_tool(ctx, name, raw_input)


def _builtin_input_problem(name: str, raw_input: dict[str, Any] | None) -> dict[str, Any] | None:
    """Why a built-in tool would reject `raw_input` (agent.tools.registry.input_problem)."""
    from agent.tools.registry import input_problem

    return input_problem(name, raw_input)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def apply_overrides(
    rows: Sequence[ToolRow], always_loaded: Sequence[str], discoverable: Sequence[str]
) -> tuple[ToolRow, ...]:
    """Rows with the user's split applied: `always_loaded` wins over `discoverable`."""
    result = []
    for row in rows:
        if row.effects & {Effect.FINDS_TOOLS, Effect.ENDS_TURN}:
            result.append(row)
        elif _matches(row.name, always_loaded):
            result.append(dataclasses.replace(row, visibility=Visibility.INLINE))
        elif _matches(row.name, discoverable):
            result.append(dataclasses.replace(row, visibility=Visibility.DISCOVERABLE))
        else:
            result.append(row)
    return tuple(result)


class Tool(Protocol):
    """One callable tool, built-in or external: what it is, and how to run it."""

    row: ToolRow

    def spec(self, description: str) -> dict[str, Any]: ...

    def run(self, ctx: ToolContext, raw_input: dict[str, Any] | None) -> RunResult: ...


@dataclasses.dataclass
class BuiltinTool:
    """A tool implemented in `agent.tools` (validated with its pydantic model)."""

    row: ToolRow

    def spec(self, description: str) -> dict[str, Any]:
        return _builtin_spec(self.row.name, description)

    def run(self, ctx: ToolContext, raw_input: dict[str, Any] | None) -> RunResult:
        return _run_builtin(ctx, self.row.name, raw_input)


@dataclasses.dataclass
class ExternalTool:
    """A tool from outside the built-in catalog (an MCP server): its row, schema and runner.

    `identity` names what the tool is independently of its model-facing name (which can
    shift when servers are added): permission grants and saved discoveries are bound to it.
    `server` and `server_tool` are the server's config name and the tool's own name there,
    which a permission prompt shows (both untrusted text)."""

    row: ToolRow
    input_schema: dict[str, Any]
    runner: Runner
    identity: str = ""
    server: str = ""
    server_tool: str = ""

    def spec(self, description: str) -> dict[str, Any]:
        return spec_entry(self.row.name, description, self.input_schema)

    def run(self, ctx: ToolContext, raw_input: dict[str, Any] | None) -> RunResult:
        return self.runner(ctx, raw_input)


class Toolset:
    """Effective rows plus a way to describe (toolSpec) and run each of them."""

    def __init__(
        self,
        rows: Sequence[ToolRow],
        external: Mapping[str, ExternalTool] | None = None,
    ) -> None:
        self.rows = tuple(rows)
        self.external = dict(external or {})
        self._by_name = {row.name: row for row in self.rows}
        self._tools: dict[str, Tool] = {
            row.name: self.external.get(row.name) or BuiltinTool(row) for row in self.rows
        }
        self._specs: dict[str, dict[str, Any]] = {}
        self._last_specs: tuple[tuple[str, ...], list[dict[str, Any]]] | None = None

    @classmethod
    def build(
        cls,
        always_loaded: Sequence[str] = (),
        discoverable: Sequence[str] = (),
        external: Sequence[ExternalTool] = (),
    ) -> Toolset:
        """Built-in rows (then external rows) with the user's overrides applied."""
        rows = [*catalog.ROWS, *(tool.row for tool in external)]
        return cls(
            apply_overrides(rows, always_loaded, discoverable),
            {tool.row.name: tool for tool in external},
        )

    def available(self, met: frozenset[Requirement]) -> Toolset:
        """This toolset without the tools whose requirements `met` does not cover."""
        rows = catalog.available_rows(met, self.rows)
        if len(rows) == len(self.rows):
            return self
        return Toolset(rows, {n: t for n, t in self.external.items() if t.row in rows})

    def row(self, name: str) -> ToolRow | None:
        return self._by_name.get(name)

    def inline_names(self) -> tuple[str, ...]:
        return catalog.names(catalog.inline_rows(self.rows))

    def discoverable_names(self) -> tuple[str, ...]:
        return catalog.names(catalog.discoverable_rows(self.rows))

    def input_problem(self, name: str, raw_input: dict[str, Any] | None) -> dict[str, Any] | None:
        """The error result a built-in tool would give `raw_input` without running it, or None
        (also for external tools: their server checks their input)."""
        if isinstance(self._tools.get(name), BuiltinTool):
            return _builtin_input_problem(name, raw_input)
        return None

    def identity(self, name: str) -> str:
        """What a permission grant for `name` covers and a saved discovery names: an external
        tool's `identity` (its server, own name and server config), a built-in tool's name
        (stable across runs)."""
        external = self.external.get(name)
        if external is not None:
            return external.identity or f"external:{name}"
        return name

    def named(self, identities: Iterable[str]) -> list[str]:
        """The names the tools saved as `identities` (see `identity`) have now, in order. One
        that no tool has now (its server gone or reconfigured; an older file's plain name of an
        external tool, which may now be another server's) is left out, never guessed."""
        by_identity: dict[str, str] = {}
        for name in self._by_name:
            by_identity.setdefault(self.identity(name), name)
        return [by_identity[identity] for identity in identities if identity in by_identity]

    def source(self, name: str) -> tuple[str, str] | None:
        """(server, the tool's own name there) of an external tool; None for a built-in one."""
        external = self.external.get(name)
        if external is None:
            return None
        return external.server, external.server_tool or name

    def is_gated(self, name: str) -> bool:
        row = self._by_name.get(name)
        return row is not None and row.tier is Tier.GATED

    def effects(self, name: str) -> frozenset[Effect]:
        """What a successful call of `name` does to the turn (none for an unknown name)."""
        row = self._by_name.get(name)
        return row.effects if row is not None else frozenset()

    def description(self, name: str) -> str:
        return catalog.description(self._by_name[name], self.rows)

    def spec(self, name: str) -> dict[str, Any]:
        """The Bedrock toolSpec of a tool (built once per toolset)."""
        if name not in self._specs:
            self._specs[name] = self._tools[name].spec(self.description(name))
        return self._specs[name]

    def specs(self, names: tuple[str, ...]) -> list[dict[str, Any]]:
        """The toolSpecs of `names`, in order: the same list object while the names are the
        same, so a request's toolConfig is built again only when the active set changes."""
        if self._last_specs is None or self._last_specs[0] != names:
            self._last_specs = (names, [self.spec(name) for name in names])
        return self._last_specs[1]

    def run(self, ctx: ToolContext, name: str, raw_input: dict[str, Any] | None) -> RunResult:
        """Run a tool (built-in or external); never raises."""
        tool = self._tools.get(name)
        if tool is None:
            return _run_builtin(ctx, name, raw_input)  # answers "unknown tool" with the fix
        return tool.run(ctx, raw_input)
