"""The catalog's rows: one per tool, the single source every tool list is derived from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum


class Visibility(StrEnum):
    """Whether a tool is sent from the first step or only after `searchTools` finds it."""

    INLINE = "inline"
    DISCOVERABLE = "discoverable"


class Tier(StrEnum):
    """Whether a call runs at once (`silent`) or passes the permission check (`gated`)."""

    SILENT = "silent"
    GATED = "gated"
    NONE = "none"  # agent-loop tools (searchTools, ask) have no tier


class Access(StrEnum):
    """What a tool does to the world."""

    READ = "read"
    PROPOSE = "propose"
    OPEN = "open"
    WRITE = "write"
    EXPORT = "export"
    AGENT = "agent"


class McpLevel(StrEnum):
    """Lowest MCP access level allowed to call a tool; `none` keeps it off the MCP server."""

    READ = "read"
    STAGE = "stage"
    FULL = "full"
    NONE = "none"


class Effect(StrEnum):
    """What a successful call does to the turn (declared here, so the loop never matches names)."""

    FINDS_TOOLS = "finds_tools"  # adds tools to the active set; budgeted; lists what it can find
    ENDS_TURN = "ends_turn"  # the turn ends until the user answers (ask)
    PROPOSES_CHIP = "proposes_chip"  # the result's chip (success or error) becomes a button
    STAGES = "stages"  # stages changes: the turn ends with a "review staged changes" chip


class Requirement(StrEnum):
    """Something a store must have for a tool to work; a tool is offered only where it holds."""

    VECTOR_INDEX = "vector_index"  # at least one table of the store has an embedding index


@dataclass(frozen=True)
class ToolRow:
    """A tool's catalog identity: what the model sees and how the app treats it."""

    name: str
    description: str
    visibility: Visibility
    tier: Tier
    access: Access
    mcp: McpLevel
    keywords: tuple[str, ...] = field(default=())
    effects: frozenset[Effect] = field(default=frozenset())
    requires: frozenset[Requirement] = field(default=frozenset())

    def to_dict(self) -> dict[str, object]:
        """The row as plain JSON-ready data (enums as their values)."""
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, Enum):
                data[key] = value.value
        data["keywords"] = list(self.keywords)
        data["effects"] = sorted(effect.value for effect in self.effects)
        data["requires"] = sorted(need.value for need in self.requires)
        return data


INL, DSC = Visibility.INLINE, Visibility.DISCOVERABLE
S, G, N = Tier.SILENT, Tier.GATED, Tier.NONE

ROWS: tuple[ToolRow, ...] = (
    ToolRow(
        "searchTools",
        "Find more tools by describing one capability you need; matching tools become callable on your next step.",
        INL,
        N,
        Access.AGENT,
        McpLevel.NONE,
        ("find tool", "capability", "discover", "more tools"),
        frozenset({Effect.FINDS_TOOLS}),
    ),
    ToolRow(
        "ask",
        "Ask the user a clarifying question, optionally with choices, and end this turn until they answer.",
        INL,
        N,
        Access.AGENT,
        McpLevel.NONE,
        ("clarify", "question", "confirm", "which one"),
        frozenset({Effect.ENDS_TURN}),
    ),
    ToolRow(
        "getCurrentTime",
        "Current date, time and time zone, for requests about today, yesterday, last week or recent items.",
        INL,
        S,
        Access.READ,
        McpLevel.READ,
        ("today", "now", "date", "clock", "yesterday", "last week", "recent", "timezone"),
    ),
    ToolRow(
        "listTables",
        "List the tables in the active store.",
        INL,
        S,
        Access.READ,
        McpLevel.READ,
        ("tables", "schema", "what data", "collections"),
    ),
    ToolRow(
        "describeTable",
        "Describe a table: key columns, indexes, columns with their types, and row count.",
        INL,
        S,
        Access.READ,
        McpLevel.READ,
        ("schema", "columns", "attributes", "fields", "structure", "primary key", "row count"),
    ),
    ToolRow(
        "listOpenTabs",
        "List the tabs currently open in the app.",
        INL,
        S,
        Access.READ,
        McpLevel.NONE,
        ("tabs", "open views", "screen"),
    ),
    ToolRow(
        "listAttachments",
        "List the files attached to this conversation.",
        INL,
        S,
        Access.READ,
        McpLevel.NONE,
        ("files", "attached", "uploads", "documents"),
    ),
    ToolRow(
        "readAttachment",
        "Read an attached file: text, or CSV/JSON as rows, with offset and limit.",
        INL,
        S,
        Access.READ,
        McpLevel.NONE,
        ("file", "csv", "json", "pdf", "document", "upload", "spreadsheet", "read file"),
    ),
    ToolRow(
        "runQuery",
        "Run a read-only query (SQLite SQL or DynamoDB PartiQL; SELECT only) and return rows.",
        INL,
        G,
        Access.READ,
        McpLevel.READ,
        (
            "sql",
            "select",
            "partiql",
            "filter",
            "search rows",
            "find",
            "report",
            "aggregate",
            "group by",
        ),
    ),
    ToolRow(
        "getItem",
        "Fetch one item by its key.",
        INL,
        G,
        Access.READ,
        McpLevel.READ,
        ("lookup", "by id", "record", "row", "fetch"),
    ),
    ToolRow(
        "countItems",
        "Count the items of a table, optionally only those matching a condition.",
        INL,
        G,
        Access.READ,
        McpLevel.READ,
        ("how many", "count", "number of", "total rows"),
    ),
    ToolRow(
        "openTable",
        "Open a table, optionally filtered, in a tab of the app right away.",
        INL,
        G,
        Access.OPEN,
        McpLevel.NONE,
        ("show", "display", "view", "browse", "open tab"),
    ),
    ToolRow(
        "proposeOpenTable",
        "Offer the user a chip that opens a table (optionally filtered) in a tab; nothing opens until they click it.",
        INL,
        S,
        Access.PROPOSE,
        McpLevel.NONE,
        ("suggest", "show", "view", "chip", "button"),
        frozenset({Effect.PROPOSES_CHIP}),
    ),
    ToolRow(
        "proposeJoinedView",
        "Offer the user a chip that opens a joined view of two tables on matching columns.",
        INL,
        S,
        Access.PROPOSE,
        McpLevel.NONE,
        ("join", "combine", "related", "merge tables", "lookup across"),
        frozenset({Effect.PROPOSES_CHIP}),
    ),
    ToolRow(
        "stageItem",
        "Stage one create, update or delete of an item for the user to review and commit.",
        INL,
        S,
        Access.WRITE,
        McpLevel.STAGE,
        ("edit", "change", "update", "insert", "add", "delete", "remove", "modify", "set", "write"),
        frozenset({Effect.STAGES}),
    ),
    ToolRow(
        "bulkEdit",
        "Stage one change (set columns, or delete) on many items selected by keys or a read-only query.",
        INL,
        S,
        Access.WRITE,
        McpLevel.STAGE,
        ("bulk", "mass update", "all rows", "batch", "every", "mark all"),
        frozenset({Effect.STAGES}),
    ),
    ToolRow(
        "sampleValues",
        "Distinct sample values of a column, with counts.",
        DSC,
        S,
        Access.READ,
        McpLevel.READ,
        ("distinct", "unique values", "examples", "enum", "categories", "possible values"),
    ),
    ToolRow(
        "getIndexStats",
        "Index statistics of a table: indexes, their columns, sizes and key usage.",
        DSC,
        S,
        Access.READ,
        McpLevel.READ,
        ("index", "indexes", "performance", "statistics", "stats", "keys"),
    ),
    ToolRow(
        "listSavedSpecs",
        "List saved queries and views.",
        DSC,
        S,
        Access.READ,
        McpLevel.READ,
        ("saved", "bookmarks", "favorites", "saved queries", "views", "specs"),
    ),
    ToolRow(
        "openSavedSpec",
        "Open a saved query or view in a tab.",
        DSC,
        G,
        Access.OPEN,
        McpLevel.NONE,
        ("saved", "bookmark", "open saved", "saved query", "view"),
    ),
    ToolRow(
        "saveSpec",
        "Save a query or table view under a name for later.",
        DSC,
        S,
        Access.WRITE,
        McpLevel.STAGE,
        ("save", "bookmark", "remember", "keep query", "favorite"),
    ),
    ToolRow(
        "listRelationships",
        "List the declared relationships (joins) between tables.",
        DSC,
        S,
        Access.READ,
        McpLevel.READ,
        ("relationships", "foreign key", "joins", "references", "links"),
    ),
    ToolRow(
        "declareRelationship",
        "Declare a relationship between two tables on matching columns, for joined views.",
        DSC,
        S,
        Access.WRITE,
        McpLevel.STAGE,
        ("relationship", "foreign key", "link", "join", "references"),
    ),
    ToolRow(
        "listStagedChanges",
        "List the pending writes in the staging area, waiting for review and commit.",
        DSC,
        S,
        Access.READ,
        McpLevel.READ,
        ("pending", "staged", "uncommitted", "drafts", "changes", "review"),
    ),
    ToolRow(
        "discardStagedChanges",
        "Discard staged changes: all, those of one table, or by id.",
        DSC,
        S,
        Access.WRITE,
        McpLevel.STAGE,
        ("discard", "undo", "cancel", "drop", "revert", "clear pending"),
    ),
    ToolRow(
        "openStagingPanel",
        "Open the staging review panel where the user reviews and commits pending writes.",
        DSC,
        G,
        Access.OPEN,
        McpLevel.NONE,
        ("review", "commit", "pending", "staging", "panel"),
    ),
    ToolRow(
        "exportCsv",
        "Write the results of a read-only query to a CSV file.",
        DSC,
        G,
        Access.EXPORT,
        McpLevel.FULL,
        ("csv", "export", "download", "spreadsheet", "excel", "save file"),
    ),
    ToolRow(
        "exportJson",
        "Write the results of a read-only query to a JSON file.",
        DSC,
        G,
        Access.EXPORT,
        McpLevel.FULL,
        ("json", "export", "download", "dump", "save file"),
    ),
    ToolRow(
        "vectorSearch",
        "Semantic search over a table's text columns by meaning rather than exact words.",
        DSC,
        G,
        Access.READ,
        McpLevel.READ,
        ("semantic", "similar", "meaning", "embedding", "fuzzy", "like this"),
        effects=frozenset({Effect.PROPOSES_CHIP}),  # a table without an index: "build it"
        requires=frozenset({Requirement.VECTOR_INDEX}),
    ),
)
