"""Reports of saved eval runs: per model, two runs side by side, and the sweep matrix."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.evals.checks import Outcome, judge
from agent.evals.scenario import load_scenario
from agent.text_plural import counted
from agent.text_safety import printable

Key = tuple[str, str, str]  # (setting, model, scenario)


@dataclass
class Cell:
    """The runs of one scenario for one model and setting."""

    runs: int = 0
    passed: int = 0
    steps: int = 0
    searches: int = 0
    input: int = 0
    output: int = 0
    cached: int = 0
    cost: float = 0.0
    wall: float = 0.0

    def add(self, result: dict[str, Any]) -> None:
        usage = result.get("usage") or {}
        self.runs += 1
        self.passed += bool(result["passed"])
        self.steps += result.get("steps", 0)
        self.searches += result.get("searches", 0)
        self.input += usage.get("input", 0)
        self.output += usage.get("output", 0)
        self.cached += usage.get("cache_read", 0)
        self.cost += result.get("cost", 0.0)
        self.wall += result.get("wall_seconds", 0.0)

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0


def cells(results: Iterable[dict[str, Any]]) -> dict[Key, Cell]:
    """Results grouped by (setting, model, scenario), in first-seen order."""
    grouped: dict[Key, Cell] = defaultdict(Cell)
    for result in results:
        grouped[(result.get("setting", "configured"), result["model"], result["scenario"])].add(
            result
        )
    return dict(grouped)


def render_run(saved: dict[str, Any]) -> str:
    """The report of one run: a table per model (and setting), totals, and every failure."""
    lines: list[str] = []
    grouped = cells(saved["results"])
    for setting, model in dict.fromkeys((s, m) for s, m, _ in grouped):
        heading = f"model {model}" + (f" · setting {setting}" if setting != "configured" else "")
        lines += ["", heading, _header()]
        total = Cell()
        for (s, m, scenario), cell in grouped.items():
            if (s, m) != (setting, model):
                continue
            lines.append(_row(scenario, cell))
            for name in Cell.__dataclass_fields__:
                setattr(total, name, getattr(total, name) + getattr(cell, name))
        lines.append(_row("TOTAL", total))
    failures = [r for r in saved["results"] if not r["passed"]]
    if failures:
        lines += ["", "failures:"]
        for result in failures:
            lines.append(
                f"  {result['scenario']} ({result['model']}, rep {result['rep']}): "
                f"{printable(str(result.get('first_failure')))}"
            )
            lines.append(f"    transcript: {result.get('transcript')}")
    if saved.get("interrupted"):
        lines += ["", "interrupted: the table shows the runs that finished."]
    lines += ["", f"saved as {saved['id']} ({counted(len(saved['results']), 'run')})"]
    return "\n".join(lines).lstrip("\n")


def _header() -> str:
    return (
        f"  {'scenario':<28} {'pass':>6} {'steps':>6} {'search':>6} {'tok in':>8} "
        f"{'tok out':>8} {'cached':>7} {'cost $':>8} {'wall s':>7}"
    )


def _row(name: str, cell: Cell) -> str:
    runs = max(cell.runs, 1)
    return (
        f"  {printable(name)[:28]:<28} {cell.passed:>3}/{cell.runs:<2} {cell.steps / runs:>6.1f} "
        f"{cell.searches / runs:>6.1f} {cell.input:>8} {cell.output:>8} {cell.cached:>7} "
        f"{cell.cost:>8.4f} {cell.wall:>7.1f}"
    )


def render_compare(first: dict[str, Any], second: dict[str, Any]) -> str:
    """Two runs side by side: pass rates per scenario and model, what got better or worse."""
    before, after = cells(first["results"]), cells(second["results"])
    keys = list(dict.fromkeys([*before, *after]))
    lines = [
        f"{'scenario':<28} {'model':<34} {first['id'][:18]:>18} {second['id'][:18]:>18}  change"
    ]
    better = worse = 0
    for key in keys:
        old, new = before.get(key), after.get(key)
        change = ""
        if old and new and new.rate > old.rate:
            change, better = "better", better + 1
        elif old and new and new.rate < old.rate:
            change, worse = "WORSE", worse + 1
        lines.append(
            f"{key[2][:28]:<28} {key[1][:34]:<34} {_rate(old):>18} {_rate(new):>18}  {change}"
        )
    lines.append(f"\n{counted(better, 'scenario')} better, {worse:,} worse.")
    return "\n".join(lines)


def _rate(cell: Cell | None) -> str:
    return f"{cell.passed}/{cell.runs}" if cell else "—"


def render_sweep(saved: dict[str, Any], tools: list[str]) -> str:
    """Scenarios × settings with moved cells marked, then a suggested [tools] block."""
    grouped = cells(saved["results"])
    settings = [s["label"] for s in saved["settings"]]
    scenarios = list(dict.fromkeys(key[2] for key in grouped))
    models = list(dict.fromkeys(key[1] for key in grouped))
    lines = []
    for model in models:
        lines.append(f"model {model}")
        lines.append(f"  {'scenario':<28} " + " ".join(f"{s[:22]:>22}" for s in settings))
        for scenario in scenarios:
            rates = [grouped.get((s, model, scenario)) for s in settings]
            values = {round(c.rate, 3) for c in rates if c}
            moved = len(values) > 1
            row = " ".join(f"{(_rate(c) + (' *' if moved else '')):>22}" for c in rates)
            lines.append(f"  {scenario[:28]:<28} {row}")
        lines.append("")
    lines.append("* the pass rate moved between settings")
    lines += ["", "suggested config (config.toml):", "[tools]"]
    inline, discoverable, evidence = [], [], []
    for tool in tools:
        scores = {}
        for label in (f"{tool}:inline", f"{tool}:discoverable"):
            runs = [c for (s, _, _), c in grouped.items() if s == label]
            scores[label] = (sum(c.passed for c in runs), sum(c.runs for c in runs))
        up, down = scores[f"{tool}:inline"], scores[f"{tool}:discoverable"]
        choice = "inline" if up[0] > down[0] else "discoverable" if down[0] > up[0] else "either"
        if choice == "inline":
            inline.append(tool)
        elif choice == "discoverable":
            discoverable.append(tool)
        evidence.append(
            f"#   {tool}: inline passed {up[0]}/{up[1]}, discoverable {down[0]}/{down[1]}"
            + (" → no difference; keep the catalog's default" if choice == "either" else "")
        )
    lines.append(f"always_loaded = {inline!r}".replace("'", '"'))
    lines.append(f"discoverable = {discoverable!r}".replace("'", '"'))
    lines += ["# evidence:", *evidence]
    return "\n".join(lines)


def rescore(root: Path, saved: dict[str, Any]) -> dict[str, Any]:
    """Judge every saved run again with its scenario file's current checks (no Bedrock call)."""
    files = saved.get("scenarios", {})
    changed = 0
    for result in saved["results"]:
        outcome_file = Path(result["run_dir"]) / "outcome.json"
        source = files.get(result["scenario"])
        if not outcome_file.is_file() or not source:
            continue
        outcome = Outcome.from_dict(json.loads(outcome_file.read_text("utf-8")))
        scenario = load_scenario(Path(source))
        verdicts = judge(scenario.checks, outcome)
        failed = next((v for v in verdicts if not v.passed), None)
        passed = failed is None
        changed += passed != result["passed"]
        result.update(
            passed=passed,
            checks=[v.__dict__ for v in verdicts],
            first_failure=f"{failed.check}: {failed.why}" if failed else None,
        )
    saved["rescored"] = changed
    return saved
