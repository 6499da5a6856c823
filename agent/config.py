"""The optional TOML config file, validated so an error names the file and the field.

Precedence for every setting: command-line flag, then the config file, then the default.
The sections are `config_section.Section` dataclasses: reading a well-formed file (or none)
does not import pydantic; a value that needs coercing or is wrong does.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from agent import paths
from agent.config_section import Range, Section
from agent.errors import ConfigError
from agent.file_kind import special_file_kind

if TYPE_CHECKING:
    from pydantic import ValidationError as PydanticValidationError

Mode = Literal["manual", "auto", "full-auto"]


class SearchSettings(Section):
    """`[search]`: how searchTools ranks the catalog."""

    decider: str | None = None
    """Model id of a decider model; when set, search asks it to choose (decision mode)."""
    min_probability: Annotated[float, Range(ge=0.0, le=1.0)] = 0.1
    """Decision mode: tools at or above this probability are returned."""
    chunk_size: Annotated[int, Range(ge=2, le=255)] = 250
    """Decision mode: options per question; larger catalogs are split into chunks."""


class ToolsSettings(Section):
    """`[tools]`: user overrides of the inline/discoverable split (names or `*` globs)."""

    always_loaded: list[str] = field(default_factory=list)
    """These tools are inline whatever their catalog row says."""
    discoverable: list[str] = field(default_factory=list)
    """These tools are demoted to discoverable."""


class McpServerSettings(Section):
    """`[mcp_servers.NAME]`: an external MCP server whose tools join the catalog."""

    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    trusted: bool = False
    """Trusted servers' tools run without a permission prompt."""


class DynamoDBSettings(Section):
    """`[dynamodb]`: caps on what one read may cost."""

    max_scan_items: Annotated[int, Range(ge=1)] = 10_000
    """Items one call may scan (a scan or count stops there and says so)."""
    max_read_units: Annotated[float, Range(gt=0)] = 5_000.0
    """Read capacity units one call may consume."""


class ModelPrice(Section):
    """USD per million tokens of one model, for eval cost estimates."""

    input: Annotated[float, Range(ge=0)]
    output: Annotated[float, Range(ge=0)]


class EvalSettings(Section):
    """`[eval]`: what `tabletalk eval` needs beyond the run flags."""

    prices: dict[str, ModelPrice] = field(default_factory=dict)
    """Per model id: `[eval.prices."us.amazon.nova-2-lite-v1:0"] input = 0.3, output = 2.5`."""


class HistorySettings(Section):
    """`[history]`: how much commit history is kept (for `tabletalk commits` and reverts)."""

    keep_days: Annotated[int, Range(ge=1)] = 90
    """Commits older than this many days are forgotten."""
    keep_changes: Annotated[int, Range(ge=1)] = 200_000
    """At most this many committed changes are kept (the oldest commits go first)."""

    def retention(self) -> Any:
        from agent.staging.history import Retention

        return Retention(days=self.keep_days, changes=self.keep_changes)


class Settings(Section):
    """Every setting of tabletalk; the config file holds any subset of these."""

    model: str = "us.amazon.nova-2-lite-v1:0"
    """Bedrock model id (an inference profile) or an alias such as `haiku-4.5` (aliases resolve
    to the region's profile); unset, Nova 2 Lite's profile for the region is used."""
    profile: str | None = None
    """AWS profile name; default: the AWS SDK's usual lookup."""
    region: str | None = None
    """AWS region; default: AWS_REGION / AWS_DEFAULT_REGION, else the profile's region (no
    region at all is an error that says so)."""
    mode: Mode = "manual"
    """Permission mode: manual (ask before gated calls), auto (exports ask), full-auto."""
    streaming: bool = True
    """Use ConverseStream; set false for models that cannot stream tool use."""
    step_limit: Annotated[int, Range(ge=1, le=100)] = 12
    """Model requests per turn before the turn stops and says so."""
    db: str | None = None
    """Default store: a SQLite file or dynamodb://REGION; default: the demo database."""
    dynamodb: DynamoDBSettings = field(default_factory=DynamoDBSettings)
    keys: dict[str, str] = field(default_factory=dict)
    """Key remapping for the app: binding id → keys (e.g. `stop = "escape,ctrl+c"`)."""
    search: SearchSettings = field(default_factory=SearchSettings)
    tools: ToolsSettings = field(default_factory=ToolsSettings)
    mcp_servers: dict[str, McpServerSettings] = field(default_factory=dict)
    eval: EvalSettings = field(default_factory=EvalSettings)
    history: HistorySettings = field(default_factory=HistorySettings)

    @property
    def source(self) -> Path | None:
        """The config file these settings were read from (None: no file, the defaults)."""
        return self.__dict__.get("_source")


def load_settings(path: Path | None = None) -> Settings:
    """Read and validate the config file (missing file → defaults)."""
    if path is not None and not path.exists():
        raise ConfigError(
            f"Config file {path} does not exist.",
            fix="Check the path given to --config, or leave it out to use the default file.",
        )
    path = path or paths.config_file()
    if not path.exists():
        return Settings()
    if path.is_dir():
        raise ConfigError(
            f"Config file {path} is a folder, not a file.",
            fix=f"Move the folder {path} away (the config is one TOML file), "
            "or pass --config FILE.",
        )
    kind = special_file_kind(path)
    if kind is not None:
        raise ConfigError(
            f"Config file {path} is {kind}, not a regular file.",
            fix=f"Replace {path} with a TOML file, or pass --config FILE.",
        )
    import tomllib  # only when there is a file to read

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Config file {path} is not UTF-8 text (byte {exc.start} cannot be decoded).",
            fix=f"Save {path} as UTF-8 (e.g. iconv -f latin1 -t utf-8), "
            "or move it away to use the defaults.",
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"Cannot read config file {path}: {exc.strerror or exc}",
            fix=f"Check the permissions of {path} (tabletalk needs to read it).",
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"Config file {path} is not valid TOML: {exc}",
            fix=f"Fix the syntax, or move {path} away to use the defaults.",
        ) from exc
    except RecursionError as exc:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(
            f"Config file {path} is not valid TOML: its arrays or tables are nested too deep",
            fix=f"Fix the nesting, or move {path} away to use the defaults.",
        ) from exc
    try:
        settings = Settings.model_validate(data)
    except Exception as exc:
        from pydantic import ValidationError  # loaded already if it raised this

        if not isinstance(exc, ValidationError):
            raise
        raise ConfigError(
            f"Config file {path} has invalid settings: {_problems(exc)}",
            fix=f"Fix those fields in {path} (see README.md, Configuration).",
        ) from exc
    _check_model_names(settings, path)
    settings.__dict__["_source"] = path  # kept by model_copy (as `_fields_set`)
    return settings


def _check_model_names(settings: Settings, path: Path) -> None:
    """A `model` (or `[search] decider`) that is neither an alias nor shaped like a Bedrock
    model id is an error naming the file and key, before anything calls Bedrock with it."""
    from agent.bedrock.models import check_model_name

    check_model_name(
        settings.model, given=f"Config file {path}: model =", fix_start=(f"Set model in {path} to")
    )
    if settings.search.decider is not None:
        check_model_name(
            settings.search.decider,
            given=f"Config file {path}: [search] decider =",
            fix_start=f"Set decider under [search] in {path} to",
        )


def _problems(exc: PydanticValidationError) -> str:
    """`field.path: message` for each error, joined with `; `; an unknown name (a typo, most
    often) is said so, with the closest known name of its section."""
    found = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden" and err["loc"]:
            found.append(f"{where}: {_unknown(err['loc'])}")
        else:
            found.append(f"{where}: {err['msg']}")
    return "; ".join(found)


def _unknown(loc: tuple[Any, ...]) -> str:
    """`unknown setting 'modle' (did you mean 'model'?)`, naming the section's settings when
    nothing is close."""
    import difflib

    known = _section_fields(Settings, loc[:-1])
    name = str(loc[-1])
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    if close:
        return f"unknown setting '{name}' (did you mean {' or '.join(repr(c) for c in close)}?)"
    listed = ", ".join(known) if len(known) <= 12 else ", ".join(known[:12]) + ", …"
    return f"unknown setting '{name}' (known: {listed})" if known else f"unknown setting '{name}'"


def _section_fields(cls: Any, path: tuple[Any, ...]) -> list[str]:
    """The field names of the section that `path` leads to from `cls` (through nested sections
    and the values of `dict[str, Section]` fields); empty when it leads to no section."""
    import dataclasses
    import typing

    kind: Any = cls
    for part in path:
        if dataclasses.is_dataclass(kind):
            hints = typing.get_type_hints(kind, include_extras=True)
            kind = hints.get(str(part))
        elif typing.get_origin(kind) is dict:
            kind = typing.get_args(kind)[1]
        else:
            return []
        while typing.get_origin(kind) is Annotated:
            kind = typing.get_args(kind)[0]
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        return []
    return [f.name for f in dataclasses.fields(kind)]
