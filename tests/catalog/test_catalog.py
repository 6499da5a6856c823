"""The catalog: rows complete, derived lists consistent with the rows."""

from __future__ import annotations

import re

import catalog
from catalog import Access, McpLevel, Tier, Visibility

STARTING_CATALOG = {
    # name: (visibility, tier, access, mcp) — DESIGN.md's starting catalog
    "searchTools": ("inline", "none", "agent", "none"),
    "ask": ("inline", "none", "agent", "none"),
    "getCurrentTime": ("inline", "silent", "read", "read"),
    "listTables": ("inline", "silent", "read", "read"),
    "describeTable": ("inline", "silent", "read", "read"),
    "listOpenTabs": ("inline", "silent", "read", "none"),
    "listAttachments": ("inline", "silent", "read", "none"),
    "readAttachment": ("inline", "silent", "read", "none"),
    "runQuery": ("inline", "gated", "read", "read"),
    "getItem": ("inline", "gated", "read", "read"),
    "countItems": ("inline", "gated", "read", "read"),
    "openTable": ("inline", "gated", "open", "none"),
    "proposeOpenTable": ("inline", "silent", "propose", "none"),
    "proposeJoinedView": ("inline", "silent", "propose", "none"),
    "stageItem": ("inline", "silent", "write", "stage"),
    "bulkEdit": ("inline", "silent", "write", "stage"),
    "sampleValues": ("discoverable", "silent", "read", "read"),
    "getIndexStats": ("discoverable", "silent", "read", "read"),
    "listSavedSpecs": ("discoverable", "silent", "read", "read"),
    "openSavedSpec": ("discoverable", "gated", "open", "none"),
    "saveSpec": ("discoverable", "silent", "write", "stage"),
    "listRelationships": ("discoverable", "silent", "read", "read"),
    "declareRelationship": ("discoverable", "silent", "write", "stage"),
    "listStagedChanges": ("discoverable", "silent", "read", "read"),
    "discardStagedChanges": ("discoverable", "silent", "write", "stage"),
    "openStagingPanel": ("discoverable", "gated", "open", "none"),
    "exportCsv": ("discoverable", "gated", "export", "full"),
    "exportJson": ("discoverable", "gated", "export", "full"),
    "vectorSearch": ("discoverable", "gated", "read", "read"),
}


def test_every_starting_tool_has_its_row() -> None:
    rows = {row.name: row for row in catalog.ROWS}
    assert set(rows) == set(STARTING_CATALOG)
    for name, (visibility, tier, access, mcp) in STARTING_CATALOG.items():
        row = rows[name]
        assert (row.visibility.value, row.tier.value, row.access.value, row.mcp.value) == (
            visibility,
            tier,
            access,
            mcp,
        ), name


def test_rows_have_valid_bedrock_names_and_one_sentence_descriptions() -> None:
    names = [row.name for row in catalog.ROWS]
    assert len(names) == len(set(names))
    for row in catalog.ROWS:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", row.name)
        assert row.description.endswith(".")
        assert row.description.count(". ") == 0, row.name
        assert row.keywords, f"{row.name} has no keywords"


def test_derived_sets_follow_the_rows() -> None:
    rows = catalog.ROWS
    assert catalog.names(catalog.inline_rows()) == tuple(
        r.name for r in rows if r.visibility is Visibility.INLINE
    )
    assert set(catalog.names(catalog.inline_rows())) | set(
        catalog.names(catalog.discoverable_rows())
    ) == {r.name for r in rows}
    assert catalog.silent_names() == {r.name for r in rows if r.tier is Tier.SILENT}
    assert catalog.gated_names() == {r.name for r in rows if r.tier is Tier.GATED}
    assert not catalog.silent_names() & catalog.gated_names()
    assert {"searchTools", "ask"}.isdisjoint(catalog.silent_names() | catalog.gated_names())
    assert catalog.write_names() == {r.name for r in rows if r.access is Access.WRITE}
    assert {"stageItem", "bulkEdit"} <= catalog.write_names()


def test_mcp_levels_nest_and_exclude_agent_and_ui_tools() -> None:
    read = set(catalog.mcp_names("read"))
    stage = set(catalog.mcp_names("stage"))
    full = set(catalog.mcp_names("full"))
    assert read < stage < full
    assert read == {r.name for r in catalog.ROWS if r.mcp is McpLevel.READ}
    assert stage - read == {r.name for r in catalog.ROWS if r.mcp is McpLevel.STAGE}
    assert full - stage == {"exportCsv", "exportJson"}
    excluded = {"searchTools", "ask", "openTable", "proposeOpenTable", "listOpenTabs"}
    assert excluded.isdisjoint(full)
    assert catalog.mcp_names("none") == ()


def test_search_description_lists_every_discoverable_tool_and_no_inline_one() -> None:
    text = catalog.search_description()
    for row in catalog.discoverable_rows():
        assert row.name in text
    for row in catalog.inline_rows():
        if row.name != "searchTools":
            assert f" {row.name}," not in text and f" {row.name}." not in text


def test_derived_lists_change_when_rows_change() -> None:
    import dataclasses

    rows = tuple(
        dataclasses.replace(r, visibility=Visibility.DISCOVERABLE) if r.name == "getItem" else r
        for r in catalog.ROWS
    )
    assert "getItem" not in catalog.names(catalog.inline_rows(rows))
    assert "getItem" in catalog.search_description(rows)
