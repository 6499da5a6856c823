"""StopSignal: Stop runs what must happen at once (interrupt a read, close a stream) itself."""

from __future__ import annotations

import threading

from agent.stop import StopSignal, reads_should_stop, reads_stop_when, stop_signal


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


def test_a_reads_stop_check_holds_for_its_own_thread_and_block_only() -> None:
    seen: list[bool] = []
    with reads_stop_when(lambda: True):
        assert reads_should_stop()
        other = threading.Thread(target=lambda: seen.append(reads_should_stop()))
        other.start()
        other.join()
        with reads_stop_when(lambda: False):
            assert reads_should_stop()  # an inner block keeps the outer check
    assert seen == [False]  # another thread's reads (a table tab, an MCP call) go on
    assert not reads_should_stop()  # after the block, reads run again
