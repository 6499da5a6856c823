"""Scenario files: one TOML file per scenario (a job a user gives the agent, and its checks).

Unknown fields are errors that name the file and the line, so a typo never silently drops a
check. The format is documented in README.md ("Evals").
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.errors import TabletalkError

BUILTIN_SUITE = Path(__file__).with_name("suites") / "builtin"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StagedCheck(_Strict):
    """Changes staged in the run: table, op, how many, and a condition each must meet."""

    kind: Literal["staged"]
    table: str | None = None
    op: Literal["create", "update", "delete"] | None = None
    count: int | None = Field(None, ge=0)
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)
    where: str | None = None


class NothingStagedCheck(_Strict):
    """The run staged nothing."""

    kind: Literal["nothing_staged"]


class CalledCheck(_Strict):
    """A tool was (or, for not_called, was never) called, optionally with a condition on input."""

    kind: Literal["called", "not_called"]
    tool: str
    where: str | None = None
    min: int = Field(1, ge=1)


class SearchedCheck(_Strict):
    """The model used searchTools (optionally: and found `finds`)."""

    kind: Literal["searched"]
    finds: str | None = None


class AnswerCheck(_Strict):
    """The final answer contains (or must not contain) words, or matches a regex."""

    kind: Literal["answer"]
    contains: list[str] = Field(default_factory=list)
    any_of: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    regex: str | None = None


class EndedCheck(_Strict):
    """How the last turn ended: the model answered, or asked the user a question."""

    kind: Literal["ended"]
    how: Literal["answered", "asked"]


class OpenedCheck(_Strict):
    """A tab the model opened, or a chip it proposed (table, joined view, staging panel)."""

    kind: Literal["opened"]
    what: Literal["table", "joined", "staging", "spec", "chip", "any"] = "any"
    table: str | None = None


class MaxStepsCheck(_Strict):
    """The run took at most this many model requests (over all its turns)."""

    kind: Literal["max_steps"]
    steps: int = Field(ge=1)


Check = Annotated[
    StagedCheck
    | NothingStagedCheck
    | CalledCheck
    | SearchedCheck
    | AnswerCheck
    | EndedCheck
    | OpenedCheck
    | MaxStepsCheck,
    Field(discriminator="kind"),
]


class Scenario(_Strict):
    """One job: the user's message(s), the world before it, and what must hold after."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    title: str
    turns: list[str] = Field(min_length=1)
    attachments: list[str] = Field(default_factory=list)
    setup: list[str] = Field(default_factory=list)
    mode: Literal["manual", "auto", "full-auto"] = "auto"
    step_limit: int = Field(12, ge=1, le=100)
    exercises: list[str] = Field(default_factory=list)
    checks: list[Check] = Field(alias="check", min_length=1)
    path: Path = Field(default=Path(), exclude=True)

    @field_validator("attachments")
    @classmethod
    def _beside_the_scenario(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name or name in (".", "..") or "/" in name or "\\" in name:
                raise ValueError(
                    f"{name!r} must be the name of a file beside the scenario (no folders)"
                )
        return names

    def attachment_paths(self) -> list[Path]:
        """Attached files, shipped beside the scenario file (a link leading elsewhere, as a
        checked-out suite may carry, is refused)."""
        folder = self.path.parent.resolve()
        paths = [self.path.parent / name for name in self.attachments]
        for path in paths:
            if not path.resolve().is_relative_to(folder):
                raise TabletalkError(
                    f"Scenario {self.path}: attachment {path.name} links outside its folder",
                    fix="Put the file itself beside the scenario.",
                )
        return paths


def _line_of(text: str, key: str) -> int | None:
    """The first line where `key` is assigned or opens a table, for error messages."""
    pattern = re.compile(rf"^\s*(\[\[?)?\s*{re.escape(key)}\s*(=|\]\]?)", re.MULTILINE)
    found = pattern.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def load_scenario(path: Path) -> Scenario:
    """Parse and validate one scenario file; errors name the file, the line and the field."""
    try:
        text = path.read_text(encoding="utf-8")
        data: dict[str, Any] = tomllib.loads(text)
    except OSError as exc:
        raise TabletalkError(
            f"Cannot read scenario {path}: {exc.strerror or exc}", fix="Check the path."
        ) from exc
    except UnicodeDecodeError as exc:
        raise TabletalkError(f"Scenario {path} is not UTF-8 text", fix="Save it as UTF-8.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TabletalkError(f"{path}: not valid TOML: {exc}", fix="Fix the TOML syntax.") from exc
    except RecursionError as exc:  # tomllib parses nested arrays and tables recursively
        raise TabletalkError(
            f"{path}: not valid TOML: its arrays or tables are nested too deep",
            fix="Fix the nesting.",
        ) from exc
    try:
        scenario = Scenario.model_validate({**data, "path": path})
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = [str(part) for part in error["loc"]]
            named = next(
                (
                    p
                    for p in reversed(location)
                    if not p.isdigit() and "[" not in p and p not in {"check", "StagedCheck"}
                ),
                location[-1] if location else "",
            )
            leaf = location[-1] if location else ""
            line = _line_of(text, leaf) or _line_of(text, named)
            where = f"line {line}: " if line else ""
            field = ".".join(location) or "(top level)"
            message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
            problems.append(f"{where}{field}: {message}")
        raise TabletalkError(
            f"Scenario {path} is invalid: " + "; ".join(problems),
            fix="See the eval section of README.md for the scenario format.",
        ) from exc
    return scenario


def load_suite(targets: list[str] | None = None) -> list[Scenario]:
    """Scenarios from files and folders (a folder: every *.toml in it); default the built-in."""
    files: list[Path] = []
    for target in targets or [str(BUILTIN_SUITE)]:
        path = Path(target)
        if target == "builtin":
            path = BUILTIN_SUITE
        if path.is_dir():
            files += sorted(path.glob("*.toml"))
        elif path.is_file():
            files.append(path)
        else:
            raise TabletalkError(
                f"No scenario file or folder at {target}",
                fix="Pass a .toml scenario, a folder of them, or leave it out for the built-in suite.",
            )
    scenarios = [load_scenario(file) for file in files]
    seen: dict[str, Path] = {}
    for scenario in scenarios:
        if scenario.id in seen:
            raise TabletalkError(
                f"Scenario id {scenario.id!r} is used by {seen[scenario.id]} and {scenario.path}",
                fix="Give each scenario its own id.",
            )
        seen[scenario.id] = scenario.path
    if not scenarios:
        raise TabletalkError("No scenarios found", fix="Check the folder holds *.toml files.")
    return scenarios
