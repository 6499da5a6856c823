"""Plan and run an eval: scenarios × models × settings × repetitions, each run in its own process.

Runs go to a thread pool that starts `python -m agent.evals.worker` per run (so every run has its
own directories and nothing leaks between them); throttled runs back off and are retried;
Ctrl+C stops starting runs, ends the running ones and keeps what finished. Everything is saved
under the data dir (`evals/RUN_ID/run.json` plus one folder per run).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent import paths
from agent.errors import TabletalkError
from agent.evals.cost import price_of
from agent.evals.scenario import Scenario
from agent.evals.worker import RunSpec

THROTTLE_RETRIES = 3
WORKER_TIMEOUT = 1800


def evals_dir() -> Path:
    """Where eval runs are kept."""
    return paths.data_dir() / "evals"


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


@dataclass(frozen=True)
class Setting:
    """One tool split to measure: the names pushed inline and to discoverable on top of config."""

    label: str = "configured"
    inline: tuple[str, ...] = ()
    discoverable: tuple[str, ...] = ()


@dataclass
class Plan:
    """What to run: every scenario for every model and setting, `reps` times."""

    scenarios: list[Scenario]
    models: list[str]
    reps: int
    settings: dict[str, Any]
    variants: list[Setting] = field(default_factory=lambda: [Setting()])
    replay_of: dict[tuple[str, str, str, int], str] = field(default_factory=dict)

    def specs(self, root: Path) -> list[tuple[Setting, RunSpec]]:
        out = []
        for variant in self.variants:
            for model in self.models:
                for scenario in self.scenarios:
                    for rep in range(1, self.reps + 1):
                        name = f"{variant.label}__{_safe(model)}__{scenario.id}__{rep}"
                        tools = dict(self.settings.get("tools") or {})
                        inline = [*tools.get("always_loaded", []), *variant.inline]
                        demoted = [*tools.get("discoverable", []), *variant.discoverable]
                        inline = [n for n in inline if n not in variant.discoverable]
                        demoted = [n for n in demoted if n not in variant.inline]
                        settings = {
                            **self.settings,
                            "tools": {"always_loaded": inline, "discoverable": demoted},
                        }
                        replay = self.replay_of.get((variant.label, model, scenario.id, rep))
                        spec = RunSpec(
                            str(scenario.path), model, rep, str(root / name), settings, replay
                        )
                        out.append((variant, spec))
        return out


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text)


@dataclass
class Progress:
    """Counts for the progress line."""

    total: int
    done: int = 0
    passed: int = 0
    failed: int = 0
    dollars: float = 0.0

    def line(self) -> str:
        return (
            f"runs {self.done}/{self.total} · passed {self.passed} · failed {self.failed} · "
            f"spent ~${self.dollars:.4f}"
        )


class Runner:
    """Executes a plan with `jobs` runs at a time."""

    def __init__(
        self,
        plan: Plan,
        *,
        jobs: int = 2,
        out: Path | None = None,
        prices: dict[str, dict[str, float]] | None = None,
        on_progress: Callable[[Progress], None] = lambda progress: None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.plan = plan
        self.jobs = max(1, jobs)
        self.run_id = new_run_id()
        self.root = out or evals_dir() / self.run_id
        self.prices = prices or {}
        self.on_progress = on_progress
        self.env = env
        self._stop = threading.Event()
        self._procs: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()

    def run(self) -> dict[str, Any]:
        """Run everything (or until Ctrl+C); save and return the whole result."""
        from agent.stores.demo import build_demo_db

        self.root.mkdir(parents=True, exist_ok=True)
        template = str(build_demo_db(self.root / "demo-template.sqlite"))
        specs = self.plan.specs(self.root / "runs")
        for _, spec in specs:
            spec.template = template
        progress = Progress(total=len(specs))
        results: list[dict[str, Any]] = []
        interrupted = False
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        futures: dict[Future[dict[str, Any] | None], Setting] = {}
        try:
            pending = list(specs)
            while pending or futures:
                while pending and len(futures) < self.jobs and not self._stop.is_set():
                    variant, spec = pending.pop(0)
                    futures[pool.submit(self._run_one, spec)] = variant
                if not futures:
                    break
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    variant = futures.pop(future)
                    result = future.result()
                    if result is None:
                        continue
                    result["setting"] = variant.label
                    result["cost"] = self._cost(result)
                    results.append(result)
                    progress.done += 1
                    progress.passed += result["passed"]
                    progress.failed += not result["passed"]
                    progress.dollars += result["cost"]
                    self.on_progress(progress)
        except KeyboardInterrupt:
            interrupted = True
            self.stop()
            for future in list(futures):
                try:
                    result = future.result()
                except Exception:
                    result = None
                if result is not None:
                    result["setting"] = futures[future].label
                    result["cost"] = self._cost(result)
                    results.append(result)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        results.sort(key=_order(specs))
        saved = {
            "id": self.run_id,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "models": self.plan.models,
            "reps": self.plan.reps,
            "settings": [v.__dict__ for v in self.plan.variants],
            "scenarios": {s.id: str(s.path) for s in self.plan.scenarios},
            "interrupted": interrupted,
            "results": results,
        }
        (self.root / "run.json").write_text(json.dumps(saved, indent=1, default=str), "utf-8")
        return saved

    def stop(self) -> None:
        """Start nothing more and end the runs in flight."""
        self._stop.set()
        with self._lock:
            for proc in self._procs:
                proc.terminate()

    def _cost(self, result: dict[str, Any]) -> float:
        usage = result.get("usage") or {}
        price = price_of(result["model"], self.prices)
        return price.cost(usage.get("input", 0), usage.get("output", 0), usage.get("cache_read", 0))

    def _run_one(self, spec: RunSpec) -> dict[str, Any] | None:
        """One run in a worker process, retried with backoff while Bedrock throttles."""
        for attempt in range(THROTTLE_RETRIES + 1):
            if self._stop.is_set():
                return None
            result = self._spawn(spec)
            if result is None or not result.get("throttled") or attempt == THROTTLE_RETRIES:
                return result
            self._stop.wait(2 ** (attempt + 1))
        return None

    def _spawn(self, spec: RunSpec) -> dict[str, Any] | None:
        run_dir = Path(spec.run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        spec_file = run_dir / "spec.json"
        spec_file.write_text(spec.to_json(), "utf-8")
        env = dict(self.env if self.env is not None else os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent.evals.worker", str(spec_file)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        with self._lock:
            self._procs.add(proc)
        try:
            _, stderr = proc.communicate(timeout=WORKER_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
        finally:
            with self._lock:
                self._procs.discard(proc)
        result_file = run_dir / "result.json"
        if result_file.exists():  # finished, even if stopped while exiting
            return dict(json.loads(result_file.read_text("utf-8")))
        if self._stop.is_set():
            return None
        reason = (stderr or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return {
            "scenario": Path(spec.scenario_path).stem,
            "model": spec.model,
            "rep": spec.rep,
            "passed": False,
            "checks": [],
            "first_failure": f"the run crashed: {reason[0]}",
            "steps": 0,
            "searches": 0,
            "usage": {},
            "wall_seconds": 0.0,
            "error": reason[0],
            "throttled": False,
            "run_dir": str(run_dir),
            "transcript": str(run_dir),
        }


def _order(specs: list[tuple[Setting, RunSpec]]) -> Callable[[dict[str, Any]], int]:
    """Sort results in plan order, whatever order they finished in."""
    position = {spec.run_dir: number for number, (_, spec) in enumerate(specs)}
    return lambda result: position.get(result.get("run_dir", ""), len(position))


def load_run(run: str) -> tuple[Path, dict[str, Any]]:
    """A saved eval run by id (under the data dir) or by folder path."""
    for candidate in (Path(run), evals_dir() / run):
        if (candidate / "run.json").is_file():
            return candidate, json.loads((candidate / "run.json").read_text("utf-8"))
    known = sorted(p.name for p in evals_dir().glob("*") if (p / "run.json").is_file())
    raise TabletalkError(
        f"No saved eval run {run!r}",
        fix="Pass a run id from "
        + (", ".join(known[-5:]) if known else "`tabletalk eval run`")
        + " or a run folder.",
    )
