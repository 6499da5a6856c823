"""`tabletalk staged ...`: output, JSON shape, exit codes, and --db before or after the command."""

from __future__ import annotations

import argparse
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import staged
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="tabletalk")
    root.add_argument("--db", default=None)
    commands = root.add_subparsers(dest="command")
    staged.add_parser(commands)
    return root


def cli(*argv: str) -> tuple[int, str, str]:
    """Parse like the real root parser, run, and capture (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        args = parser().parse_args(list(argv))
    except SystemExit as stop:
        return int(stop.code or 0), "", ""
    return staged.run(args, out, err), out.getvalue(), err.getvalue()


@pytest.fixture
def area(demo_path: Path) -> StagingArea:
    """The staging area the CLI uses for demo_path (default staging path, in the XDG state dir)."""
    staging = StagingArea(SQLiteStore.open(demo_path))
    yield staging
    staging.close()


def test_list_empty_and_with_changes(area: StagingArea, demo_path: Path) -> None:
    code, out, _ = cli("staged", "list", "--db", str(demo_path))
    assert code == 0 and "No staged changes" in out
    change = area.stage("orders", "update", {"id": 1}, {"status": "cancelled"})
    before = area.store.get_item("orders", {"id": 1})["status"]
    code, out, _ = cli("--db", str(demo_path), "staged", "list")
    assert code == 0
    assert change.id in out and "orders" in out
    assert f'status: "{before}" → "cancelled"' in out


def test_list_json_shape_and_table_filter(area: StagingArea, demo_path: Path) -> None:
    a = area.stage("orders", "update", {"id": 1}, {"quantity": 3}, origin="chat")
    area.stage("customers", "delete", {"id": 2})
    code, out, _ = cli("staged", "list", "--json", "--table", "orders", "--db", str(demo_path))
    assert code == 0
    listed = json.loads(out)
    assert len(listed) == 1
    entry = listed[0]
    assert set(entry) == {"id", "table", "key", "op", "values", "pre_image", "origin", "time"}
    assert entry["id"] == a.id and entry["key"] == {"id": 1} and entry["origin"] == "chat"
    code, out, _ = cli("staged", "--db", str(demo_path), "list", "--json")
    assert len(json.loads(out)) == 2


def test_diff_one_and_all(area: StagingArea, demo_path: Path) -> None:
    a = area.stage("orders", "update", {"id": 1}, {"quantity": 3})
    area.stage("orders", "delete", {"id": 2})
    code, out, _ = cli("staged", "diff", a.id, "--db", str(demo_path))
    assert code == 0 and "quantity:" in out and "→ 3" in out
    code, out, _ = cli("staged", "diff", "--db", str(demo_path))
    assert code == 0 and "delete orders id=2" in out and "→ ∅" in out


def test_show_is_diff_as_in_commits_show(area: StagingArea, demo_path: Path) -> None:
    """`staged show ID` does what `commits show ID` does for a commit, instead of an error."""
    change = area.stage("orders", "update", {"id": 1}, {"quantity": 3})
    code, out, _ = cli("staged", "show", change.id, "--db", str(demo_path))
    assert code == 0 and "quantity:" in out and "→ 3" in out


def test_commit_all_then_nothing_left(area: StagingArea, demo_path: Path) -> None:
    area.stage("orders", "update", {"id": 1}, {"quantity": 33})
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 0 and "Committed 1 change" in out
    assert area.count() == 0
    assert area.store.get_item("orders", {"id": 1})["quantity"] == 33
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 0 and "Nothing to commit" in out


def test_commit_conflict_exits_1_and_keeps_changes(area: StagingArea, demo_path: Path) -> None:
    good = area.stage("orders", "update", {"id": 1}, {"quantity": 33})
    bad = area.stage("orders", "update", {"id": 2}, {"quantity": 44})
    conn = sqlite3.connect(demo_path)
    conn.execute("UPDATE orders SET status = 'lost' WHERE id = 2")
    conn.commit()
    conn.close()
    code, out, _ = cli("staged", "commit", good.id, bad.id, "--db", str(demo_path))
    assert code == 1
    assert f"conflict {bad.id}" in out and '"status": "lost"' in out
    assert "Nothing was committed" in out
    assert area.count() == 2
    assert area.store.get_item("orders", {"id": 1})["quantity"] != 33


def test_a_conflict_report_cuts_long_values_of_the_current_row(
    area: StagingArea, demo_path: Path
) -> None:
    """Each conflict printed the current row whole: a row with a 5,000-character text made
    a screenful per conflict; its values are cut as in `staged list`."""
    bad = area.stage("customers", "update", {"id": 2}, {"city": "Oslo"})
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE customers SET name = ? WHERE id = 2", ("long note " * 500,))
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 1 and f"conflict {bad.id}" in out
    line = next(line for line in out.splitlines() if "current value" in line)
    assert '"name": "long note long note' in line and "…" in line
    assert len(line) < 600, line
    assert '"id": 2' in line


def test_commit_skip_conflicts_commits_the_others(area: StagingArea, demo_path: Path) -> None:
    """The panel offers "Commit the N without conflict"; the CLI could only say nothing was
    committed, so one changed row held back every other change."""
    good = area.stage("orders", "update", {"id": 1}, {"quantity": 33})
    bad = area.stage("orders", "update", {"id": 2}, {"quantity": 44})
    also = area.stage("orders", "update", {"id": 3}, {"quantity": 55})
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 2")
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 1 and "--skip-conflicts" in out and area.count() == 3
    code, out, err = cli("staged", "commit", "--all", "--skip-conflicts", "--db", str(demo_path))
    assert code == 1, "a conflict is still left to settle"
    assert "Committed 2 changes: 1 conflict; 1 change is still staged." in out, out
    assert f"conflict {bad.id}" in out and "committing the other 2" in err
    assert [c.id for c in area.list()] == [bad.id]
    assert area.store.get_item("orders", {"id": 1})["quantity"] == 33
    assert area.store.get_item("orders", {"id": 3})["quantity"] == 55
    assert good.id not in out.split("conflict", 1)[1] and also.id not in out


def _orders_of(path: Path, customer: int) -> int:
    with sqlite3.connect(path) as conn:
        query = "SELECT count(*) FROM orders WHERE customer_id = ?"
        return conn.execute(query, (customer,)).fetchone()[0]


def test_a_delete_that_orphans_rows_is_not_committed_without_allow_orphans(
    area: StagingArea, demo_path: Path
) -> None:
    """`staged commit --all` deleted a customer and left its orders pointing at nothing,
    silently, where the panel asks first."""
    orders = _orders_of(demo_path, 2)
    assert orders > 0
    area.stage("customers", "delete", {"id": 2})
    area.stage("orders", "update", {"id": 1}, {"quantity": 33})
    code, out, err = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 3
    assert f"{orders} rows of orders still point at 1 deleted item" in err, err
    assert "Nothing was committed" in out and "--allow-orphans" in out
    assert area.count() == 2 and area.store.get_item("customers", {"id": 2}) is not None
    update = next(c.id for c in area.list() if c.op == "update")
    code, out, _ = cli("staged", "commit", update, "--db", str(demo_path))
    assert code == 0 and "Committed 1 change" in out, "a commit without the delete goes on"
    code, out, _ = cli("staged", "commit", "--all", "--allow-orphans", "--db", str(demo_path))
    assert code == 0 and "Committed 1 change" in out
    assert area.store.get_item("customers", {"id": 2}) is None


def test_list_sums_up_a_bulk_edit_and_shows_a_page(area: StagingArea, demo_path: Path) -> None:
    """A bulk edit of 1,403 rows printed 1,403 lines; the list now says what the edit does
    in one line and shows the first 50 changes, with how to see the rest."""
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 121)], set={"quantity": 7})
    code, out, _ = cli("staged", "list", "--db", str(demo_path))
    assert code == 0
    head, _, rest = out.partition("Bulk edits:")
    assert "120 staged changes" in head
    assert rest.splitlines()[1].strip().startswith("120 orders: quantity (")
    assert "→ 7" in rest.splitlines()[1]
    assert sum(" update " in line for line in out.splitlines()) == staged.LIST_LIMIT
    assert "… and 70 more" in out and "--limit 0" in out
    assert "… and 70 more" in cli("staged", "--db", str(demo_path))[1], "bare `staged` pages too"
    code, out, _ = cli("staged", "list", "--limit", "0", "--db", str(demo_path))
    assert sum(" update " in line for line in out.splitlines()) == 120 and "more" not in out
    code, out, _ = cli(
        "staged", "list", "--limit", "5", "--table", "orders", "--db", str(demo_path)
    )
    assert sum(" update " in line for line in out.splitlines()) == 5 and "115 more" in out
    assert cli("staged", "list", "--limit", "-1", "--db", str(demo_path))[0] == 2


def test_staged_alone_lists(area: StagingArea, demo_path: Path) -> None:
    change = area.stage("orders", "update", {"id": 1}, {"quantity": 3})
    code, out, _ = cli("staged", "--db", str(demo_path))
    assert code == 0 and change.id in out and "1 staged change" in out


def test_discard_ids_and_all(area: StagingArea, demo_path: Path) -> None:
    a = area.stage("orders", "update", {"id": 1}, {"quantity": 3})
    area.stage("orders", "update", {"id": 2}, {"quantity": 4})
    code, out, _ = cli("staged", "discard", a.id, "--db", str(demo_path))
    assert code == 0 and "Discarded 1" in out
    code, out, _ = cli("staged", "discard", "--all", "--db", str(demo_path))
    assert code == 0 and "Discarded 1" in out and area.count() == 0


def test_usage_errors_exit_2(demo_path: Path) -> None:
    assert cli("staged", "commit", "--db", str(demo_path))[0] == 2
    assert cli("staged", "discard", "--all", "abc", "--db", str(demo_path))[0] == 2
    assert staged.run(argparse.Namespace(staged_command="commit", all=False, ids=[])) == 2


def test_errors_print_message_and_fix_without_traceback(
    area: StagingArea, demo_path: Path, tmp_path: Path
) -> None:
    code, out, err = cli("staged", "commit", "deadbeef", "--db", str(demo_path))
    assert code == 2 and out == ""
    assert "deadbeef" in err and "tabletalk staged list" in err and "Traceback" not in err
    code, _, err = cli("staged", "list", "--db", str(tmp_path / "missing.sqlite"))
    assert code == 2 and "missing.sqlite" in err and "--db" in err


def test_without_db_uses_the_demo_database(isolated_dirs: Path) -> None:
    code, out, _ = cli("staged", "list", "--json")
    assert code == 0 and json.loads(out) == []


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_goes_to_stderr_only_on_a_terminal(area: StagingArea, demo_path: Path) -> None:
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 6)], set={"quantity": 1})
    args = parser().parse_args(["staged", "commit", "--all", "--db", str(demo_path)])
    out, err = io.StringIO(), Terminal()
    assert staged.run(args, out, err) == 0
    assert "committing 5/5" in err.getvalue()
    assert "committing" not in out.getvalue()


def test_the_list_cuts_very_long_table_and_column_names(tmp_path: Path) -> None:
    """A 1 MB column name was printed whole on every line naming it; the panel wrapped it into
    thousands of lines per change."""
    db = tmp_path / "odd.sqlite"
    table, column = "t" * 100_000, "c" * 1_000_000
    with sqlite3.connect(db) as conn:
        conn.execute(f'CREATE TABLE "{table}" (id INTEGER PRIMARY KEY, "{column}" TEXT)')
        conn.execute(f"INSERT INTO \"{table}\" VALUES (1, 'a')")
    area = StagingArea(SQLiteStore.open(db))
    change = area.stage(table, "update", {"id": 1}, {column: "b"})
    code, out, _ = cli("staged", "list", "--db", str(db))
    assert code == 0 and change.id in out
    assert max(map(len, out.splitlines())) < 400
    assert "Names and values longer than 80 characters are cut" in out
    code, out, _ = cli("staged", "diff", change.id, "--db", str(db))
    assert column in out  # the diff shows it whole


def test_a_conflict_the_commit_found_is_marked_by_a_later_list(
    area: StagingArea, demo_path: Path
) -> None:
    """A conflict was known only to the process whose commit found it: `staged list` afterwards
    (another process) did not mark it."""
    good = area.stage("orders", "update", {"id": 1}, {"quantity": 33})
    bad = area.stage("orders", "update", {"id": 2}, {"quantity": 44})
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 2")
    command = [sys.executable, "-m", "agent", "staged", "commit", "--all", "--db", str(demo_path)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1 and f"conflict {bad.id}" in done.stdout, done
    code, out, _ = cli("staged", "list", "--db", str(demo_path))
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if bad.id in line)
    assert "⚠ conflict" in lines[at + 1] and '"status": "lost"' in lines[at + 2], out
    assert not any("⚠ conflict" in line for line in lines[:at]), "the good change is not marked"
    assert "1 change conflicted at the last commit" in out
    code, out, _ = cli("staged", "list", "--json", "--db", str(demo_path))
    listed = {entry["id"]: entry for entry in json.loads(out)}
    assert "conflict" not in listed[good.id]
    conflict = listed[bad.id]["conflict"]
    assert conflict["current"]["status"] == "lost" and conflict["reason"] and conflict["found_at"]


def test_rebase_discard_and_a_clean_commit_unmark_conflicts_in_the_list(
    area: StagingArea, demo_path: Path
) -> None:
    first = area.stage("orders", "update", {"id": 1}, {"quantity": 33})
    second = area.stage("orders", "update", {"id": 2}, {"quantity": 44})
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id IN (1, 2)")
    assert cli("staged", "commit", "--all", "--db", str(demo_path))[0] == 1

    def marked() -> set[str]:
        out = cli("staged", "list", "--json", "--db", str(demo_path))[1]
        return {entry["id"] for entry in json.loads(out) if "conflict" in entry}

    assert marked() == {first.id, second.id}
    assert cli("staged", "rebase", first.id, "--db", str(demo_path))[0] == 0
    assert marked() == {second.id}
    assert cli("staged", "discard", second.id, "--db", str(demo_path))[0] == 0
    assert marked() == set()
    third = area.stage("orders", "update", {"id": 3}, {"quantity": 55})
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 3")
    assert cli("staged", "commit", "--all", "--db", str(demo_path))[0] == 1
    assert marked() == {third.id}
    assert cli("staged", "commit", "--all", "--skip-conflicts", "--db", str(demo_path))[0] == 1
    assert marked() == {third.id}, "the others committed; the conflict stays marked"
    with sqlite3.connect(demo_path) as conn:
        conn.execute(
            "UPDATE orders SET status = ? WHERE id = 3", (area.get(third.id).pre_image["status"],)
        )
    assert cli("staged", "commit", "--all", "--db", str(demo_path))[0] == 0
    assert marked() == set() and area.count() == 0


def _hinted(text: str, command: str) -> list[str]:
    """The arguments of the `tabletalk staged COMMAND …` hint in `text`, as a person would
    copy it (without the leading `tabletalk`)."""
    import re
    import shlex

    found = re.search(rf"`tabletalk (staged {command}[^`]*)`", text)
    assert found, text
    return shlex.split(found.group(1))


def test_the_commands_a_hint_names_reach_the_same_store_when_pasted(
    area: StagingArea, demo_path: Path
) -> None:
    """Hints said `tabletalk staged commit --allow-orphans` (no --db, so the demo database,
    and no --all, so a usage error): each now runs as printed, on this store."""
    area.stage("customers", "delete", {"id": 2})
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 3
    pasted = _hinted(out, "commit")
    assert "--db" in pasted and "--all" in pasted
    code, out, _ = cli(*pasted)
    assert code == 0 and "Committed 1 change" in out, out
    assert area.store.get_item("customers", {"id": 2}) is None

    area.stage_many("orders", keys=[{"id": i} for i in range(1, 80)], set={"quantity": 9})
    code, out, _ = cli("staged", "list", "--db", str(demo_path))
    code, out, _ = cli(*_hinted(out.split("… and", 1)[1], "list"))
    assert code == 0 and out.count(" update ") == 79, "every change, of this store"


def test_the_progress_line_ends_before_the_conflict_message(
    area: StagingArea, demo_path: Path
) -> None:
    """`committing 5998/6001` was left open when a conflict stopped the commit short, so the
    next message ran into it ("committing 5998/60013 changes in conflict")."""
    err = Terminal()
    with staged._progress(err) as progress:
        assert progress is not None
        progress(5998, 6001)  # and then the store found a conflict
    print("3 changes in conflict; committing the other 5,998.", file=err)
    assert err.getvalue().split("\n")[1] == "3 changes in conflict; committing the other 5,998."
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 2001)], set={"quantity": 9})
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 2000")
    argv = ["staged", "commit", "--all", "--skip-conflicts", "--db", str(demo_path)]
    out, err = io.StringIO(), Terminal()
    assert staged.run(parser().parse_args(argv), out, err) == 1
    assert err.getvalue().endswith("\rcommitting 1,999/1,999\n"), err.getvalue()


def _customers_with_orders(path: Path, count: int) -> list[int]:
    with sqlite3.connect(path) as conn:
        query = "SELECT DISTINCT customer_id FROM orders ORDER BY customer_id LIMIT ?"
        return [row[0] for row in conn.execute(query, (count,))]


def test_the_orphan_stop_names_the_deletes_to_drop_by_id(
    area: StagingArea, demo_path: Path
) -> None:
    """It said to drop the deletes with `staged discard ID` as `staged list` shows them, but
    that list showed the first 50 changes, all orders: the customers' deletes were not there.
    The message names their ids, a handful, and how to list the rest of that table's."""
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 61)], set={"quantity": 9})
    deletes = [
        area.stage("customers", "delete", {"id": customer})
        for customer in _customers_with_orders(demo_path, 7)
    ]
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 3
    named = [d.id for d in deletes if d.id in out]
    assert named == [d.id for d in deletes[:5]], out
    assert "and 2 more" in out
    code, listed, _ = cli(*_hinted(out, "list"))
    assert code == 0, listed
    assert all(d.id in listed for d in deletes), "the hinted list shows every one of them"
    _, first_page, _ = cli("staged", "list", "--db", str(demo_path))
    assert not any(d.id in first_page for d in deletes), "the plain list does not"


def test_a_few_orphaning_deletes_are_dropped_by_the_command_the_stop_prints(
    area: StagingArea, demo_path: Path
) -> None:
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 61)], set={"quantity": 9})
    deletes = [
        area.stage("customers", "delete", {"id": customer})
        for customer in _customers_with_orders(demo_path, 2)
    ]
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 3 and all(d.id in out for d in deletes), out
    code, _, _ = cli(*_hinted(out, "discard"))
    assert code == 0
    assert {c.op for c in area.list()} == {"update"}
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 0 and "Committed 60 changes" in out, out
