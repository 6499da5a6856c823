"""StopSignal: Stop runs what must happen at once (interrupt a read, close a stream) itself."""

from __future__ import annotations

import threading

from agent.stop import StopSignal, stop_signal


def test_set_runs_the_actions_registered_while_they_are_registered() -> None:
    signal = StopSignal()
    ran: list[str] = []
    with signal.when_set(lambda: ran.append("read")):
        pass
    with signal.when_set(lambda: ran.append("stream")):
        signal.set()
    signal.set()
    assert ran == ["stream"]  # the read had finished: nothing of it to stop


def test_an_action_registered_after_stop_runs_at_once() -> None:
    signal = StopSignal()
    signal.set()
    ran: list[str] = []
    with signal.when_set(lambda: ran.append("late")):
        assert ran == ["late"]


def test_a_failing_action_does_not_keep_the_others_from_running() -> None:
    signal = StopSignal()
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("socket already closed")

    with signal.when_set(broken), signal.when_set(lambda: ran.append("interrupt")):
        signal.set()
    assert signal.is_set() and ran == ["interrupt"]


def test_a_plain_event_is_followed_for_the_block() -> None:
    plain = threading.Event()
    with stop_signal(plain) as signal:
        stopped = threading.Event()
        with signal.when_set(stopped.set):
            plain.set()
            assert stopped.wait(5)
    assert signal.is_set()
