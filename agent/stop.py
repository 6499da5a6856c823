"""Stop for a running turn without a watcher thread per step: `StopSignal.set()` itself runs
what must happen at once (interrupt a store read, close a model stream).

Front ends create a `StopSignal` and pass it as the turn's `cancel`; a plain
`threading.Event` still works through `stop_signal`, which follows it with one polling thread
for the whole turn. `reads_stop_when` covers what an interrupt cannot: a Stop that lands
before a read has started (while a tool validates its input, waits for the store's lock, or
between two of its reads).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05

_checks = threading.local()


class StopSignal(threading.Event):
    """An Event whose `set` also runs the actions registered with `when_set` (on the thread
    that sets it; each action must be quick and safe from any thread)."""

    def __init__(self) -> None:
        super().__init__()
        self._actions: dict[int, Callable[[], object]] = {}
        # Re-entrant: Ctrl+C's handler (`agent.cli.ask`) sets the signal on the main thread,
        # between two bytecodes of the turn, which may be holding it in `when_set`.
        self._actions_lock = threading.RLock()
        self._next_key = 0

    def set(self) -> None:
        super().set()
        with self._actions_lock:
            actions = list(self._actions.values())
        for action in actions:
            _run_quietly(action)

    @contextlib.contextmanager
    def when_set(self, action: Callable[[], object]) -> Iterator[None]:
        """Run `action` if the signal is set while the block runs (at once if it already is)."""
        with self._actions_lock:
            key = self._next_key
            self._next_key += 1
            self._actions[key] = action
        try:
            if self.is_set():
                _run_quietly(action)
            yield
        finally:
            with self._actions_lock:
                self._actions.pop(key, None)


def _run_quietly(action: Callable[[], object]) -> None:
    try:
        action()
    except Exception:  # a stop action failing must not break the Stop itself
        log.exception("a stop action failed")


@contextlib.contextmanager
def stop_signal(cancel: threading.Event | None) -> Iterator[StopSignal]:
    """`cancel` as a StopSignal while the block runs: itself, a fresh one for None, or one that
    follows a plain Event (set within `POLL_SECONDS` of it, by one thread for the block)."""
    if isinstance(cancel, StopSignal):
        yield cancel
        return
    signal = StopSignal()
    if cancel is None:
        yield signal
        return
    if cancel.is_set():
        signal.set()
    done = threading.Event()

    def follow() -> None:
        while not done.is_set():
            if cancel.wait(POLL_SECONDS):
                if not done.is_set():
                    signal.set()
                return

    threading.Thread(target=follow, name="tabletalk-stop-follow", daemon=True).start()
    try:
        yield signal
    finally:
        done.set()


@contextlib.contextmanager
def reads_stop_when(check: Callable[[], bool]) -> Iterator[None]:
    """While the block runs, a store read that this thread starts or runs stops once `check()`
    is true (the stores ask `reads_should_stop` before a read and while it runs)."""
    stack: list[Callable[[], bool]] = getattr(_checks, "stack", None) or []
    _checks.stack = [*stack, check]
    try:
        yield
    finally:
        _checks.stack = stack


def reads_should_stop() -> bool:
    """Whether a `reads_stop_when` check of this thread says its reads must stop (quick: a
    store asks it every few thousand steps of a query)."""
    return any(check() for check in getattr(_checks, "stack", ()))
