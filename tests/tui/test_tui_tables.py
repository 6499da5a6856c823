"""Table tabs: typed columns, lazy pages of a large table, filter, row detail, staged tints."""

from __future__ import annotations

import io
import sqlite3
import tracemalloc
import unicodedata
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from agent.config import Settings
from agent.staging import StagingArea
from agent.stores.paging import PAGE_SIZE
from agent.stores.sqlite import SQLiteStore
from agent.stores.sqlite_paging import CELL_CHARS, SQLiteRowSource
from tests.tui.helpers import SIZE, settle
from tui.app import TabletalkApp
from tui.screens.error import ErrorScreen
from tui.screens.row_detail import RowDetailScreen
from tui.widgets.table_tab import TableTab


@pytest.fixture
def big_db(tmp_path: Path) -> Path:
    path = tmp_path / "big.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT, amount REAL)")
        conn.executemany(
            "INSERT INTO events VALUES (?, ?, ?)",
            ((i, f"event {i}", i / 2) for i in range(1, 20_001)),
        )
    return path


def test_row_source_pages_by_key_and_never_writes(big_db: Path) -> None:
    source = SQLiteRowSource(big_db, "events", where="amount > 100")
    assert source.count() == 20_000 - 200
    first, second = source.page(0), source.page(1)
    assert first.rows[0][0] == 201 and second.rows[0][0] == 201 + PAGE_SIZE
    assert [c.type for c in source.columns] == ["INTEGER", "TEXT", "REAL"]
    with pytest.raises(sqlite3.OperationalError):
        source._conn.execute("DELETE FROM events")
    source.close()


def test_a_page_of_large_documents_holds_what_a_tab_shows_not_the_documents(
    tmp_path: Path,
) -> None:
    """A table tab of 5 MB documents read each page whole (200 rows: a gigabyte in the app);
    a page now holds each blob's size and the start of each long text, keys untouched."""
    path = tmp_path / "docs.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE docs (name TEXT PRIMARY KEY, body BLOB, notes TEXT)")
        conn.executemany(
            "INSERT INTO docs VALUES (?, zeroblob(5000000), ?)",
            ((f"doc {i}", "é" * 1_000_000) for i in range(20)),
        )
    source = SQLiteRowSource(path, "docs", where="length(body) > 1000")
    tracemalloc.start()
    try:
        page = source.page(0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        source.close()
    assert peak < 10_000_000, f"a page took {peak:,} bytes"
    name, body, notes = page.rows[0]
    assert name == "doc 0" and page.keys[0] == {"name": "doc 0"}
    assert body == "<5000000 bytes>" and notes == "é" * CELL_CHARS + "…"


async def test_the_row_detail_shows_a_long_text_whole_though_the_page_holds_its_start(
    tmp_path: Path,
) -> None:
    """Pages cut long texts to CELL_CHARS; Enter on the row reads it whole for the detail,
    and a blob shows as its size and first bytes there, not as a Python bytes literal."""
    path = tmp_path / "docs.sqlite"
    story = "".join(f"line {i} of the story. " for i in range(1000))  # ~24,000 characters
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE docs (name TEXT PRIMARY KEY, body BLOB, notes TEXT)")
        conn.execute("INSERT INTO docs VALUES ('readme', x'00ff10', ?)", (story,))
        conn.execute("INSERT INTO docs VALUES ('tiny', x'07', 'short')")
    app = TabletalkApp(SQLiteStore(path), Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("docs")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        assert view.row_at(0)[0] == ("readme", "<3 bytes>", story[:CELL_CHARS] + "…")
        assert view.row_at(1)[0] == ("tiny", "<1 byte>", "short")
        view.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        assert app.screen.values == {"name": "readme", "body": b"\x00\xff\x10", "notes": story}
        console = Console(width=100, record=True, file=io.StringIO())
        for static in app.screen.query(Static):
            console.print(static.content)
        shown = console.export_text()
        assert "line 999 of the story." in shown and "<3 bytes> 00 ff 10" in shown


def _dividers_on_a_terminal(line: str) -> list[int]:
    """Columns where `│` lands on a terminal that gives each code point its own width (tmux
    3.3, xterm): east-asian wide and emoji 2, combining marks and format characters 0."""
    column, found = 0, []
    for char in line:
        if char == "│":
            found.append(column)
        if unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        column += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return found


async def test_emoji_sequences_leave_every_column_divider_in_place(tmp_path: Path) -> None:
    """A skin-tone modifier, a joined family, a heart with its emoji selector: terminals
    disagree on their width, so a row holding one had its dividers shifted on screen."""
    path = tmp_path / "faces.sqlite"
    values = [
        "thumbs \U0001f44d\U0001f3fd up",
        "family \U0001f468\u200d\U0001f469\u200d\U0001f467",
        "love \u2764\ufe0f",
        "wave \U0001f44b\U0001f3ff",
        "中文 wide",
        "עברית rtl",
        "plain",
    ]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE faces (id INTEGER PRIMARY KEY, face TEXT, note TEXT)")
        conn.executemany(
            "INSERT INTO faces VALUES (?, ?, 'after')", list(enumerate(values, start=1))
        )
    app = TabletalkApp(SQLiteStore(path), Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("faces")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        lines = [view.render_line(y).text for y in range(view.size.height)]
        rows = [line for line in lines if "after" in line or "note" in line]
        assert len(rows) == len(values) + 1, lines
        assert "\U0001f44d" in "".join(rows), "the emoji itself still shows"
        header = _dividers_on_a_terminal(rows[0])
        assert len(header) >= 2
        moved = {row: at for row in rows[1:] if (at := _dividers_on_a_terminal(row)) != header}
        assert moved == {}, f"dividers at {header} in the header"


async def test_the_row_detail_shows_every_value_beside_a_very_long_column_name(
    tmp_path: Path,
) -> None:
    """One 5,000-character column name made the name column take the whole width, so no
    value of the row showed."""
    path = tmp_path / "odd.sqlite"
    long_name = "n" * 5_000
    with sqlite3.connect(path) as conn:
        conn.execute(f'CREATE TABLE t (id INTEGER PRIMARY KEY, price REAL, "{long_name}" TEXT)')
        conn.execute("INSERT INTO t VALUES (1, 42.5, 'odd')")
    app = TabletalkApp(SQLiteStore(path), Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("t")
        await settle(app, pilot)
        app.query_one(TableTab).view.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        console = Console(width=100, record=True, file=io.StringIO())
        for static in app.screen.query(Static):
            console.print(static.content)
        shown = console.export_text()
        assert "42.5" in shown and "odd" in shown and "…" in shown


async def test_a_large_table_opens_at_once_and_loads_pages_as_you_scroll(big_db: Path) -> None:
    store = SQLiteStore.open(big_db)
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("events")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        assert view.total_rows == 20_000
        assert set(view._pages) == {0}, "only the first page is read at open"
        await pilot.press("end")
        await settle(app, pilot)
        values, _ = view.row_at(19_999)
        assert values[0] == 20_000
        assert len(view._pages) <= 3
    store.close()


async def test_filter_and_row_detail(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        await pilot.click("#filter")
        tab.query_one("#filter").value = "status = 'pending'"
        await pilot.press("enter")
        await settle(app, pilot)
        view = tab.view
        assert view.total_rows == 86
        label = app.query_one("#tabs").get_tab(tab.id).label
        assert str(label) == "orders (status = 'pending')", "the tab title follows the filter"
        view.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        assert app.screen.values["status"] == "pending"


async def test_a_bad_filter_says_why_and_keeps_the_rows(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        await pilot.click("#filter")
        tab.query_one("#filter").value = "no_such_column = 1"
        await pilot.press("enter")
        await settle(app, pilot)
        assert tab.view.total_rows == 2000
        assert any("no_such_column" in n.message for n in app._notifications)


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        (
            "status = '[b]open",
            """The filter `status = '[b]open` is not valid SQLite: unrecognized token: "'[b]open".""",
        ),
        ("status = ", "The filter `status =` is not valid SQLite: incomplete input"),
        (
            "nosuchcolumn > 3",
            "The filter `nosuchcolumn > 3` names a column orders does not have: nosuchcolumn.",
        ),
    ],
)
async def test_a_bad_filter_names_what_was_typed_and_the_fix_never_our_sql(
    make_app, typed: str, said: str
) -> None:
    """The toast quotes the filter as typed (markup and all, shown as text) and says what to
    write, without the paging query's aliases, ORDER BY or LIMIT/OFFSET."""
    from textual.widgets._toast import Toast

    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        await pilot.click("#filter")
        tab.query_one("#filter").value = typed
        await pilot.press("enter")
        await settle(app, pilot)
        assert tab.view.total_rows == 2000, "the rows stay as they were"
        (toast,) = [n for n in app._notifications if n.severity == "error"]
        assert toast.title == "Filter not valid" and not toast.markup
        assert toast.message.startswith(said)
        assert "Write a condition such as `" in toast.message
        for internal in ("__order_", "OFFSET", "LIMIT 200", "?"):
            assert internal not in toast.message
        if "nosuchcolumn" in typed:
            assert "Columns of orders: id, customer_id, product_id" in toast.message
        await pilot.pause()
        shown = "\n".join(str(t.render()) for t in app.screen.query(Toast))
        assert typed.strip() in shown, "markup in the filter shows as typed"


async def test_staged_changes_are_tinted_in_place(make_app, demo_store) -> None:
    area = StagingArea(demo_store)
    area.stage("products", "update", {"id": 1}, {"price": 1.5}, origin="test")
    area.stage("products", "delete", {"id": 2}, origin="test")
    area.stage(
        "products",
        "create",
        {"id": 999},
        {"name": "New thing", "category": "x", "price": 2, "stock": 1},
        origin="test",
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("products")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        created, change = view.row_at(0)
        assert change.op == "create" and created[0] == 999
        updated, change = view.row_at(1)
        assert updated[0] == 1 and change.op == "update"
        assert "1.5" in view.render_line(3).text  # header lines, the created row, then id 1
        _, change = view.row_at(2)
        assert change.op == "delete"
        info = app.query_one(TableTab).query_one(".tab-info")
        assert "3 staged here" in str(info.render())

        # filtered: the count is the table's, and says so (two of them are not shown here)
        tab = app.query_one(TableTab)
        await pilot.click("#filter")
        tab.query_one("#filter").value = "id = 1"
        await pilot.press("enter")
        await settle(app, pilot)
        assert tab.view.total_rows == 1
        text = str(tab.query_one(".tab-info").render())
        assert "3 staged in products" in text and "staged here" not in text
        assert text.startswith("1 row ·")


async def test_unknown_table_is_reported_not_raised(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.run_chip({"kind": "openTable", "table": "gone_table", "query": None})
        await pilot.pause()
        assert not app.query(TableTab)
        assert any("gone_table" in n.message for n in app._notifications)


async def test_tables_whose_names_read_alike_once_cleaned_open_in_their_own_tabs(
    tmp_path: Path,
) -> None:
    """Tab ids keep letters, digits, - and _ of the name plus a short check number: `q182
    x1274` and `q182:x1274` got the same id, so opening the second re-showed the first."""
    path = tmp_path / "alike.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute('CREATE TABLE "q182 x1274" (id INTEGER PRIMARY KEY, v TEXT)')
        conn.execute('CREATE TABLE "q182:x1274" (id INTEGER PRIMARY KEY, w TEXT)')
    app = TabletalkApp(SQLiteStore(path), Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("q182 x1274")
        await app.open_table("q182:x1274")
        await settle(app, pilot)
        tabs = list(app.query(TableTab))
        assert [t.table for t in tabs] == ["q182 x1274", "q182:x1274"]
        assert [c.name for c in tabs[1].view.columns] == ["id", "w"]


async def test_every_demo_table_opens_without_an_error(make_app) -> None:
    """A new user's first look: each demo table (stock_levels has a composite key and no row
    id) opens in a tab with its row count, and no error modal."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for table in app.store.list_tables():
            await app.open_table(table)
            await settle(app, pilot)
            assert not isinstance(app.screen, ErrorScreen), table
            tab = next(t for t in app.query(TableTab) if t.table == table)
            assert tab.view.source.count() == app.store.count(table) > 0


async def test_each_table_of_the_home_list_stays_on_one_line_at_80_columns(
    tmp_path: Path,
) -> None:
    """One 21-character table name made every count of the list wrap onto a line of its own
    at 80 columns ("big    5,000" / "rows"); long names are cut instead, counts stay whole."""
    from tests.tui.test_tui_polish import widget_lines

    path = tmp_path / "long.sqlite"
    long_name = "customer_addresses_history_archive_2025"
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE {long_name} (id INTEGER PRIMARY KEY)")
        conn.execute("CREATE TABLE big (id INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO big VALUES (?)", [(i,) for i in range(5000)])
    store = SQLiteStore.open(path)
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    try:
        for size in ((80, 24), (120, 36)):
            async with app.run_test(size=size) as pilot:
                await settle(app, pilot)
                options = app.query_one("#table-list")
                lines = [line for line in widget_lines(app, options) if line.strip("▊▎▔▁ ")]
                assert len(lines) == 2, (size, lines)
                assert any("big" in line and "5,000 rows" in line for line in lines), lines
                assert any("customer_addr" in line and "0 rows" in line for line in lines), lines
            app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    finally:
        store.close()


async def test_a_staged_value_wider_than_its_column_is_shown_whole(make_app, demo_store) -> None:
    """A staged status longer than any stored one was cut to the column's width in the tinted
    row (`archiv` for `archived`); the column grows to fit what is staged into it."""
    area = StagingArea(demo_store)
    wanted = "cancelled by the customer"
    area.stage("orders", "update", {"id": 1}, {"status": wanted}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await settle(app, pilot)
        view = app.query_one(TableTab).view
        view.scroll_to(x=view.virtual_size.width, animate=False)  # the status column in view
        await pilot.pause()
        rows = [view.render_line(y).text for y in range(2, 4)]
        assert wanted in rows[0], rows
