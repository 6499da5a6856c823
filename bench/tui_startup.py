"""Cold start of the app: process start to the first usable screen (tables listed, composer focused).

Runs `python -c` children so every run pays the imports; prints the median of N runs and its
ratio to the floor (`python -c pass`, whole process) measured in the same run, interleaved.
Target: <= 0.40 s on 2 cores.  Usage: .venv/bin/python bench/tui_startup.py [runs]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time, sys
started = float(sys.argv[1])
from agent.stores.open import open_store
from tui.app import TabletalkApp

class Timed(TabletalkApp):
    def on_ready(self) -> None:
        self.call_after_refresh(self._done)

    def _done(self) -> None:
        assert self.chat.composer.has_focus
        print(f"first_screen={time.time() - started:.3f}")
        self.exit()

Timed(open_store(None), staging_poll_seconds=0).run(headless=True, size=(120, 36))
"""


def one_run(env: dict[str, str]) -> float:
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(started)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for line in done.stdout.splitlines():
        if line.startswith("first_screen="):
            return float(line.split("=", 1)[1])
    raise RuntimeError(done.stderr[-2000:])


def floor_run() -> float:
    """Seconds for a whole `python -c pass` process: the interpreter's own start-up."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        for name in ("CONFIG", "DATA", "STATE", "CACHE"):
            env[f"XDG_{name}_HOME"] = os.path.join(home, name.lower())
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # time imports from .pyc, as installed
        one_run(env)  # creates the demo database and .pyc files; not counted
        times: list[float] = []
        floors: list[float] = []
        for _ in range(runs):
            floors.append(floor_run())
            times.append(one_run(env))
    median, floor = statistics.median(times), statistics.median(floors)
    print(
        f"cold start to first usable screen: median {median:.3f} s, "
        f"min {min(times):.3f} s, max {max(times):.3f} s over {runs} runs (cpus: {os.cpu_count()})"
    )
    print(f"floor (python -c pass): median {floor:.3f} s; first screen = {median / floor:.2f}x floor")


if __name__ == "__main__":
    main()
