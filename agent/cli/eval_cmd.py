"""`tabletalk eval`: run scenario suites on real models, compare runs, sweep the tool split."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path
from typing import Any

from agent.cli.common import HelpFormatter, resolve_settings
from agent.cli.status_line import StatusLine
from agent.errors import TabletalkError
from agent.text_plural import counted

DESCRIPTION = """\
Measure whether a model, with a given inline/discoverable split of the tools, does the jobs
tabletalk exists for. Each run of a scenario gets its own copy of the demo database, staging
area, conversations and audit log, and runs the real loop against the Bedrock of your profile.
Results are kept under the data dir; `eval compare` shows two runs side by side.
"""

RUN_HELP = """\
examples:
  tabletalk eval run --model nova-2-lite --reps 3     the built-in suite
  tabletalk eval run my-scenarios/ --model haiku-4.5 --only 'bulk-*'
  tabletalk eval run --discoverable bulkEdit --yes    measure a demotion
  tabletalk eval run --replay RUN_ID                  offline, recorded answers
"""


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register `eval` and its subcommands."""
    parser = subparsers.add_parser(
        "eval",
        help="run eval scenarios on real models, compare runs, sweep the tool split",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    commands = parser.add_subparsers(dest="eval_command", metavar="SUBCOMMAND", required=True)
    run = commands.add_parser(
        "run",
        help="run a suite (default: the built-in one)",
        description=DESCRIPTION,
        epilog=RUN_HELP,
        formatter_class=HelpFormatter,
    )
    run.add_argument(
        "suite",
        nargs="*",
        metavar="SUITE|FILE",
        help="scenario files or folders (default: the built-in suite)",
    )
    _add_run_flags(run)
    run.add_argument(
        "--inline",
        action="append",
        default=[],
        metavar="TOOL",
        help="send this tool from the first step (repeatable)",
    )
    run.add_argument(
        "--discoverable",
        action="append",
        default=[],
        metavar="TOOL",
        help="make this tool wait for searchTools (repeatable)",
    )
    run.add_argument(
        "--replay",
        metavar="RUN",
        help="re-run a saved run against its recorded answers (offline, no cost)",
    )
    compare = commands.add_parser("compare", help="two saved runs side by side")
    compare.add_argument("runs", nargs=2, metavar="RUN")
    sweep = commands.add_parser(
        "sweep",
        help="run the suite once per setting (inline / discoverable) of each tool",
    )
    sweep.add_argument("tools", nargs="+", metavar="TOOL")
    sweep.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="SUITE|FILE",
        help="scenario files or folders (default: the built-in suite)",
    )
    _add_run_flags(sweep)
    rescore = commands.add_parser(
        "rescore", help="judge a saved run again with the (edited) checks, without Bedrock"
    )
    rescore.add_argument("run", metavar="RUN")
    rescore.add_argument("--json", action="store_true", help="print the whole result as JSON")
    return parser


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="ID",
        help="model id or alias (nova-2-lite, haiku-4.5); repeatable",
    )
    parser.add_argument("--reps", type=int, default=3, help="runs per scenario (default 3)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("--only", metavar="PATTERN", help="only scenarios whose id matches")
    parser.add_argument("--out", metavar="DIR", help="save the run here instead of the data dir")
    parser.add_argument("--yes", action="store_true", help="do not ask before spending")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    parser.add_argument(
        "--config", metavar="FILE", default=argparse.SUPPRESS, help="config file to use"
    )
    parser.add_argument(
        "--profile", metavar="NAME", default=argparse.SUPPRESS, help="AWS profile for Bedrock"
    )
    parser.add_argument("--region", default=argparse.SUPPRESS, help="AWS region for Bedrock")


def run(args: argparse.Namespace) -> int:
    """Dispatch `eval SUBCOMMAND`."""
    from agent.evals import harness, report

    command = args.eval_command
    if command == "compare":
        (_, first), (_, second) = (harness.load_run(r) for r in args.runs)
        print(report.render_compare(first, second))
        return 0
    if command == "rescore":
        root, saved = harness.load_run(args.run)
        saved = report.rescore(root, saved)
        (root / "run.json").write_text(json.dumps(saved, indent=1, default=str), "utf-8")
        print(json.dumps(saved, default=str) if args.json else report.render_run(saved))
        print(f"{counted(saved['rescored'], 'run')} changed verdict.", file=sys.stderr)
        return 0 if all(r["passed"] for r in saved["results"]) else 1
    plan = _plan(args)
    if command == "sweep":
        plan.variants = [
            harness.Setting(
                f"{tool}:{where}", *(((tool,), ()) if where == "inline" else ((), (tool,)))
            )
            for tool in args.tools
            for where in ("inline", "discoverable")
        ]
    if not plan.replay_of and not _confirm(plan, args):
        return 2
    status = StatusLine(sys.stderr)  # runs done, over itself, on a terminal only
    runner = harness.Runner(
        plan,
        jobs=args.jobs,
        out=Path(args.out) if args.out else None,
        prices=plan.settings.get("eval", {}).get("prices"),
        on_progress=lambda progress: status.show(progress.line()),
    )
    saved = runner.run()
    status.end()
    if args.json:
        print(json.dumps(saved, default=str))
    elif command == "sweep":
        print(report.render_sweep(saved, args.tools))
    else:
        print(report.render_run(saved))
    return 0 if saved["results"] and all(r["passed"] for r in saved["results"]) else 1


def _plan(args: argparse.Namespace) -> Any:
    from agent.bedrock.client import resolve_model
    from agent.bedrock.models import check_model_name
    from agent.evals import harness
    from agent.evals.scenario import load_suite

    settings = resolve_settings(args)
    for name in args.models or []:
        check_model_name(name, given="--model", fix_start="Use --model")
    data = settings.model_dump(exclude={"keys", "mcp_servers", "db"})
    if getattr(args, "replay", None):
        return _replay_plan(args, data)
    targets = getattr(args, "suite", None) or None
    scenarios = load_suite(targets)
    if args.only:
        scenarios = [s for s in scenarios if fnmatch.fnmatchcase(s.id, args.only)]
        if not scenarios:
            raise TabletalkError(
                f"No scenario id matches {args.only!r}",
                fix="Check the pattern (globs like 'bulk-*').",
            )
    if args.reps < 1 or args.jobs < 1:
        raise TabletalkError("--reps and --jobs must be at least 1", fix="Pass --reps 1 or more.")
    models = [resolve_model(m) for m in (args.models or [settings.model])]
    variant = harness.Setting(
        "configured", tuple(getattr(args, "inline", [])), tuple(getattr(args, "discoverable", []))
    )
    return harness.Plan(scenarios, models, args.reps, data, [variant])


def _replay_plan(args: argparse.Namespace, data: dict[str, Any]) -> Any:
    from agent.evals import harness
    from agent.evals.scenario import load_scenario

    _, saved = harness.load_run(args.replay)
    scenarios = [load_scenario(Path(path)) for path in saved["scenarios"].values()]
    variants = [
        harness.Setting(s["label"], tuple(s["inline"]), tuple(s["discoverable"]))
        for s in saved["settings"]
    ]
    replay_of = {
        (r.get("setting", "configured"), r["model"], r["scenario"], r["rep"]): str(
            Path(r["run_dir"]) / "responses.json"
        )
        for r in saved["results"]
        if (Path(r["run_dir"]) / "responses.json").is_file()
    }
    if not replay_of:
        raise TabletalkError(
            f"Run {saved['id']} has no recorded answers to replay",
            fix="Replay a run that finished at least one scenario.",
        )
    plan = harness.Plan(scenarios, saved["models"], saved["reps"], data, variants, replay_of)
    return plan


def _confirm(plan: Any, args: argparse.Namespace) -> bool:
    """Say what the plan will cost; ask unless --yes."""
    from agent.evals.cost import estimate

    prices = plan.settings.get("eval", {}).get("prices")
    reps = plan.reps * len(plan.variants)
    guess = estimate(plan.scenarios, plan.models, reps, _prefix_tokens(), prices)
    print(f"This eval: {guess.describe()}.", file=sys.stderr)
    if args.yes:
        return True
    if not sys.stdin.isatty():
        print(
            "error: not starting without confirmation\n  fix: pass --yes to go on.", file=sys.stderr
        )
        return False
    answer = input("Go on? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def _prefix_tokens() -> int:
    """Tokens of what every request re-sends: the inline tools' specs and the system prompt."""
    import catalog
    from agent.evals.cost import prompt_tokens
    from agent.prompt import system_prompt
    from agent.tools.registry import default_description, input_schema

    specs: list[dict[str, object]] = [
        {"name": name, "description": default_description(name), "schema": input_schema(name)}
        for name in catalog.names(catalog.inline_rows())
    ]
    system = json.dumps(system_prompt("sqlite", "demo.sqlite", ["customers", "orders"]))
    return prompt_tokens(specs, system)
