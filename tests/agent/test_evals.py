"""`tabletalk eval`: the harness end to end against the scripted Converse endpoint.

The scripted "models" (tests/support/eval_model.py) pick each reply from the request itself, so
runs may go in parallel (`--jobs`) and still get the same answers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent.cli.main import main
from agent.errors import TabletalkError
from agent.evals.cost import Price, estimate, price_of
from agent.evals.scenario import BUILTIN_SUITE, load_scenario, load_suite
from tests.support.eval_model import BAD, GOOD, responder


def eval_run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["eval", "run", "--model", "nova-2-lite", "--yes", "--json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def by_scenario(saved: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["scenario"]: r for r in saved["results"]}


def test_the_builtin_suite_runs_end_to_end_and_prints_the_report(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    code = main(
        [
            "eval",
            "run",
            "--model",
            "nova-2-lite",
            "--reps",
            "1",
            "--yes",
            "--jobs",
            "2",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    out, err = capsys.readouterr()
    assert "runs" in err and "about $" in err  # the estimate comes before any call
    scenarios = load_suite()
    assert len(scenarios) >= 24
    for scenario in scenarios:
        assert f"{scenario.id[:28]:<28}   1/1" in out, (scenario.id, out)
    assert "failures:" not in out
    assert code == 0
    saved = json.loads((tmp_path / "run" / "run.json").read_text())
    assert len(saved["results"]) == len(scenarios) and all(r["passed"] for r in saved["results"])


def test_each_kind_of_check_can_fail_and_says_why(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.responder = responder(BAD)
    ids = [
        "stage-one-change",
        "bulk-status-35",
        "export-json",
        "top-city",
        "ambiguous-request",
        "joined-view",
        "impossible-request",
        "get-one-item",
    ]
    files = [str(BUILTIN_SUITE / f"{i}.toml") for i in ids]
    code, saved, _ = eval_run(capsys, *files, "--reps", "1", "--jobs", "2")
    assert code == 1
    failed = {
        (r["scenario"], c["check"].split("(")[0]): c["why"]
        for r in saved["results"]
        for c in r["checks"]
        if not c["passed"]
    }
    assert "Lisbon" in failed[("stage-one-change", "staged")]
    assert "bulkEdit was not called" in failed[("bulk-status-35", "called")]
    assert "stageItem was called" in failed[("bulk-status-35", "not_called")]
    assert "never called" in failed[("export-json", "searched")]
    assert "Evalton" in failed[("top-city", "answer")]
    assert "answered" in failed[("ambiguous-request", "ended")]
    assert "nothing of kind" in failed[("joined-view", "opened")]
    assert "steps" in failed[("impossible-request", "max_steps")]
    assert "staged" in failed[("get-one-item", "nothing_staged")]
    assert all(not r["passed"] and r["first_failure"] for r in saved["results"])


def comparable(saved: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            r["scenario"],
            r["rep"],
            r["passed"],
            r["steps"],
            r["searches"],
            json.dumps(r["checks"]),
            json.dumps(r["usage"]),
        )
        for r in saved["results"]
    ]


def test_parallel_jobs_and_repetitions_report_what_sequential_runs_report(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    only = ["--only", "s*"]  # stage-one-change, save-and-reopen-spec, show-pending, sample-values…
    _, sequential, _ = eval_run(capsys, *only, "--reps", "2", "--jobs", "1")
    _, parallel, _ = eval_run(capsys, *only, "--reps", "2", "--jobs", "3")
    assert len(sequential["results"]) == 2 * len([s for s in load_suite() if s.id.startswith("s")])
    assert comparable(sequential) == comparable(parallel)


def test_runs_are_isolated_from_each_other(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    _, saved, _ = eval_run(capsys, "--only", "st*", "--reps", "1", "--jobs", "2")
    outcome = json.loads(
        (Path(by_scenario(saved)["stage-one-change"]["run_dir"]) / "outcome.json").read_text()
    )
    assert [(c["key"], c["values"]) for c in outcome["staged"]] == [
        ({"id": 12}, {"city": "Lisbon"})
    ]
    dirs = {r["run_dir"] for r in saved["results"]}
    assert len(dirs) == len(saved["results"])


def test_a_sweep_flips_the_tools_visibility_in_the_request(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    code = main(
        [
            "eval",
            "sweep",
            "exportCsv",
            "--model",
            "nova-2-lite",
            "--reps",
            "1",
            "--yes",
            "--only",
            "export-csv",
        ]
    )
    out, _ = capsys.readouterr()
    first_steps = [
        r.body
        for r in scripted_bedrock.requests
        if r.body["messages"][0]["content"][0]["text"].startswith("Export all pending")
        and len(r.body["messages"]) == 1
    ]
    offered = sorted(
        "exportCsv" in [t["toolSpec"]["name"] for t in b["toolConfig"]["tools"] if "toolSpec" in t]
        for b in first_steps
    )
    assert offered == [False, True]
    assert "exportCsv:inline" in out and "exportCsv:discoverable" in out
    assert "[tools]" in out and "# evidence:" in out
    assert code == 0


def test_rescore_applies_edited_checks_without_calling_bedrock(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    scenario = Path(shutil.copy(BUILTIN_SUITE / "top-city.toml", tmp_path / "top-city.toml"))
    code, saved, _ = eval_run(capsys, str(scenario), "--reps", "1")
    assert code == 0
    asked = len(scripted_bedrock.requests)
    scenario.write_text(
        scenario.read_text().replace('contains = ["Evalton"]', 'contains = ["Lyon"]')
    )
    code = main(["eval", "rescore", saved["id"]])
    out, err = capsys.readouterr()
    assert code == 1 and "1 run changed verdict" in err and "Lyon" in out
    assert len(scripted_bedrock.requests) == asked


def test_replay_reruns_the_loop_offline_on_the_recorded_answers(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    _, first, _ = eval_run(capsys, "--only", "bulk-*", "--reps", "1")
    scripted_bedrock.stop()  # nothing answers live any more
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:9")
    code = main(["eval", "run", "--replay", first["id"], "--json"])
    replayed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(r["scenario"], r["passed"], r["steps"]) for r in replayed["results"]] == [
        (r["scenario"], r["passed"], r["steps"]) for r in first["results"]
    ]


def test_compare_shows_what_got_better_and_worse(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.responder = responder(BAD)
    _, bad, _ = eval_run(capsys, "--only", "top-city", "--reps", "1")
    scripted_bedrock.responder = responder(GOOD)
    _, good, _ = eval_run(capsys, "--only", "top-city", "--reps", "1")
    assert main(["eval", "compare", bad["id"], good["id"]]) == 0
    out = capsys.readouterr().out
    assert "top-city" in out and "0/1" in out and "1/1" in out and "better" in out


def test_a_typo_in_a_scenario_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "typo.toml"
    path.write_text(
        'id = "typo"\ntitle = "t"\nturns = ["hi"]\n\n[[check]]\nkind = "answer"\ncontians = ["x"]\n'
    )
    with pytest.raises(TabletalkError) as raised:
        load_scenario(path)
    assert str(path) in raised.value.message and "line 7" in raised.value.message
    assert "contians" in raised.value.message


def test_a_scenario_nested_too_deep_is_named_invalid_toml(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("setup = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(TabletalkError, match="nested too deep"):
        load_scenario(path)


def test_a_shared_scenario_cannot_reach_files_outside_its_run(tmp_path: Path) -> None:
    """Setup SQL runs on the run's private demo copy only (no ATTACH, no VACUUM INTO a path);
    attachments are files beside the scenario, not paths to the user's other files."""
    from agent.evals.worker import prepare_database

    outside = tmp_path / "outside"
    outside.mkdir()
    for number, setup in enumerate(
        (
            [f"ATTACH '{outside / 'made.sqlite'}' AS x", "CREATE TABLE x.t (a)"],
            [f"VACUUM INTO '{outside / 'copy.sqlite'}'"],
        )
    ):
        run = tmp_path / f"run{number}"
        run.mkdir()
        with pytest.raises(Exception, match="attached"):
            prepare_database(run, setup)
    assert list(outside.iterdir()) == []
    path = tmp_path / "peek.toml"
    path.write_text(
        'id = "peek"\ntitle = "t"\nturns = ["hi"]\n'
        'attachments = ["../../.ssh/id_rsa"]\n\n[[check]]\nkind = "ended"\n'
    )
    with pytest.raises(TabletalkError) as raised:
        load_scenario(path)
    assert "attachments" in raised.value.message and "beside the scenario" in raised.value.message
    (tmp_path / "secret.txt").write_text("key")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "data.txt").symlink_to(tmp_path / "secret.txt")
    path = suite / "link.toml"
    path.write_text(
        'id = "link"\ntitle = "t"\nturns = ["hi"]\n'
        'attachments = ["data.txt"]\n\n[[check]]\nkind = "ended"\nhow = "answered"\n'
    )
    with pytest.raises(TabletalkError, match="links outside"):
        load_scenario(path).attachment_paths()


def test_the_cost_estimate_is_tokens_times_prices() -> None:
    scenario = load_scenario(BUILTIN_SUITE / "list-tables.toml")
    guess = estimate([scenario], ["us.amazon.nova-2-lite-v1:0"], 2, prefix_tokens=1000)
    steps = 4  # STEPS_PER_TURN, one turn
    run_input = sum(1000 + 600 * step for step in range(steps))
    assert guess.requests == steps * 2
    assert guess.input_tokens == run_input * 2 and guess.output_tokens == 200 * steps * 2
    assert guess.dollars == pytest.approx((run_input * 0.30 + 800 * 2.50) * 2 / 1e6)
    assert price_of("eu.anthropic.claude-haiku-4-5-20251001-v1:0") == Price(1.0, 5.0)
    assert price_of("x", {"x": {"input": 2, "output": 4}}).cost(1_000_000, 0) == 2.0
    assert not price_of("some.other-model").known


def test_without_yes_and_without_a_terminal_nothing_is_spent(
    scripted_bedrock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.responder = responder(GOOD)
    code = main(["eval", "run", "--model", "nova-2-lite", "--only", "top-city"])
    _, err = capsys.readouterr()
    assert code == 2 and "--yes" in err
    assert scripted_bedrock.requests == []


def test_ctrl_c_stops_cleanly_and_keeps_what_finished(
    scripted_bedrock: Any, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    good = responder(GOOD)

    def slow(body: dict[str, Any]) -> Any:
        reply = good(body)
        reply.delay = 1.0
        return reply

    scripted_bedrock.responder = slow
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent",
            "eval",
            "run",
            "--model",
            "nova-2-lite",
            "--reps",
            "3",
            "--jobs",
            "1",
            "--yes",
            "--only",
            "list-tables",
            "--out",
            str(out),
        ],
        cwd=Path(__file__).resolve().parents[2],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As at a terminal: a shell's background job inherits SIGINT ignored, and Python then
        # never raises KeyboardInterrupt; a person pressing Ctrl+C has it at its default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    for _ in range(600):  # until the first run has finished (bounded: 60 s)
        if list(out.glob("runs/*/result.json")):
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=120)
    saved = json.loads((out / "run.json").read_text())
    assert saved["interrupted"] is True
    assert 1 <= len(saved["results"]) < 3 and all(r["passed"] for r in saved["results"])
    assert "interrupted" in stdout
