"""Cold start of the app: `tabletalk` (tui.entry.main: flags, config, store, app) from process
start to the first usable screen: the tables listed, the footer's keys shown, and a key typed as
soon as the first frame is out landed in the focused composer (shown on a later refresh).

Runs `python -c` children so every run pays the imports; prints the median of N runs and its
ratio to the floor (`python -c pass`, whole process) measured in the same run, interleaved, and
the median CPU time the process used by then (less sensitive to a loaded machine than wall time),
all threads and the main thread alone (the session's worker starts at the first frame, so how
much of its CPU falls inside the window follows the wall time).
`--before DIR` times another source tree (`git archive REV | tar -x -C DIR`) in the same
rounds, for a before/after under the same load. `--instructions` counts instead the
instructions the main thread executes to the same point under valgrind's callgrind (one run
per tree, a minute or two each), a figure the machine's load does not move.
Target: <= 0.40 s on 2 cores.
Usage: .venv/bin/python bench/tui_startup.py [runs] [--before DIR] [--instructions]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, time, sys
started = float(sys.argv[1])
import tui.entry

opened = tui.entry.prepare


def prepare(argv):
    # `tabletalk` as a user starts it (flags, config, store, then the app's import), with the
    # app run headless at 120x36 and timed from its first frame.
    found = opened(argv)
    from textual import events
    import tui.app

    class Timed(tui.app.TabletalkApp):
        def run(self, **_):
            return super().run(headless=True, size=(120, 36))

        def on_ready(self) -> None:  # the first frame is out: type a key at once
            key = events.Key("x", "x")
            key.set_sender(self)
            self._driver.send_message(key)
            self.call_after_refresh(self._check)

        def _check(self) -> None:
            listed = self.query_one("#table-list").option_count >= 4
            keys_shown = any(f.shown_actions() for f in self.query("KeyFooter")) or bool(
                self.query("FooterKey")  # Textual's own Footer (the app before KeyFooter)
            )
            typed = self.chat.composer.has_focus and self.chat.composer.text == "x"
            if not (listed and keys_shown and typed):
                self.call_after_refresh(self._check)
                return
            self.call_after_refresh(self._done)  # a frame with the typed key has been painted

        def _done(self) -> None:
            print(
                f"first_screen={time.time() - started:.3f} cpu={time.process_time():.3f} "
                f"main={time.thread_time():.3f}",
                flush=True,
            )
            if os.environ.get("TUI_STARTUP_EXIT_AT_SCREEN"):  # count nothing after it
                os._exit(0)
            self.exit()

    tui.app.TabletalkApp = Timed
    return found


tui.entry.prepare = prepare
sys.exit(tui.entry.main([]))
"""


def one_run(env: dict[str, str], src: Path = ROOT) -> tuple[float, float, float]:
    """(wall seconds, the process's CPU seconds, the main thread's CPU seconds) from launch to
    the first usable screen."""
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(started)],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for line in done.stdout.splitlines():
        if line.startswith("first_screen="):
            wall, cpu, main = (float(part.split("=", 1)[1]) for part in line.split())
            return wall, cpu, main
    raise RuntimeError(done.stderr[-2000:])


def instructions(env: dict[str, str], code: str, src: Path) -> int:
    """Instructions the main thread executed (valgrind's callgrind) running `code` in `src`:
    a count that a loaded machine does not change, unlike times."""
    with tempfile.TemporaryDirectory() as out:
        run_env = dict(env, PYTHONHASHSEED="0", TUI_STARTUP_EXIT_AT_SCREEN="1")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes",
             f"--callgrind-out-file={out}/cg.%p", sys.executable, "-c", code, str(time.time())],
            cwd=src, env=run_env, capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        main_thread = [f for f in os.listdir(out) if f.endswith("-01")]
        if done.returncode != 0 or not main_thread:
            raise RuntimeError(done.stderr[-2000:])
        for line in Path(out, main_thread[0]).read_text().splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no summary")


def count_instructions(envs: dict[Path, dict[str, str]], sources: list[Path]) -> None:
    """One run per tree under callgrind (each takes a minute or two), against the floor."""
    floor = instructions(envs[ROOT], "pass", ROOT)
    print(f"floor (python -c pass): {floor / 1e6:.0f} M instructions (main thread)")
    for src in sources:
        count = instructions(envs[src], CHILD, src)
        print(
            f"{src}: cold start to first usable screen: {count / 1e6:.0f} M instructions "
            f"in the main thread ({count / floor:.2f}x floor)"
        )


def floor_run() -> float:
    """Seconds for a whole `python -c pass` process: the interpreter's own start-up."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description="The app's cold start: launch to the first usable screen, against "
        "`python -c pass`."
    )
    parser.add_argument("runs", nargs="?", type=int, default=5, help="runs (default 5)")
    parser.add_argument("--before", type=Path, help="another source tree, timed in the same rounds")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the main thread's instructions under valgrind (one run per tree) instead "
        "of timing: the same on a loaded machine",
    )
    parsed = parser.parse_args()
    before = parsed.before.resolve() if parsed.before else None
    runs: int = parsed.runs
    sources = [ROOT] + ([before] if before else [])
    with tempfile.TemporaryDirectory() as home:
        envs: dict[Path, dict[str, str]] = {}
        for index, src in enumerate(sources):
            # each tree its own directories: start-up's compile cache (tui/startup_code.py)
            # keeps what its own launches use, as a user's repeated launches would find it
            env = envs[src] = dict(os.environ)
            for name in ("CONFIG", "DATA", "STATE", "CACHE"):
                env[f"XDG_{name}_HOME"] = os.path.join(home, str(index), name.lower())
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # time imports from .pyc, as installed
        for src in sources:
            one_run(envs[src], src)  # creates the demo database, caches and .pyc files
        if parsed.instructions:
            count_instructions(envs, sources)
            return
        times: dict[Path, list[float]] = {src: [] for src in sources}
        cpus: dict[Path, list[float]] = {src: [] for src in sources}
        mains: dict[Path, list[float]] = {src: [] for src in sources}
        floors: list[float] = []
        for _ in range(runs):
            floors.append(floor_run())
            for src in sources:
                wall, cpu, main = one_run(envs[src], src)
                times[src].append(wall)
                cpus[src].append(cpu)
                mains[src].append(main)
    floor = statistics.median(floors)
    print(f"floor (python -c pass): median {floor:.3f} s (cpus: {os.cpu_count()})")
    for src, values in times.items():
        median = statistics.median(values)
        print(
            f"{src}: cold start to first usable screen: median {median:.3f} s "
            f"({median / floor:.2f}x floor), min {min(values):.3f} s, max {max(values):.3f} s "
            f"over {runs} runs; CPU (all threads) median {statistics.median(cpus[src]):.3f} s, "
            f"main thread {statistics.median(mains[src]):.3f} s"
        )


if __name__ == "__main__":
    main()
