"""A tool call a client gives up before it ran never runs and gives its place back: given up
before a worker thread took it (anyio drops the job, so the thread's own clean-up never
runs), or after the call was on its way to the backend but before it got the lock. The real
backend on the demo database and the HTTP guard's own in-flight slot."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from agent.mcp_server.http import _Slot
from agent.mcp_server.server import McpBackend
from agent.mcp_server.threaded_call import call_on_thread
from agent.stores.sqlite import SQLiteStore

COUNT = ("countItems", {"table": "orders"})


@pytest.fixture
def backend(demo_store: SQLiteStore, tmp_path: Path) -> Iterator[McpBackend]:
    served = McpBackend(demo_store, "full", export_dir=tmp_path)
    yield served
    served.close()


async def settle(counts: dict[str, int]) -> None:
    """Let the slot's releases (posted to the loop from threads) land."""
    for _ in range(100):
        if not counts:
            return
        await asyncio.sleep(0.01)


def test_a_call_given_up_before_any_thread_took_it_never_runs_and_frees_its_place(
    backend: McpBackend,
) -> None:
    async def main() -> dict[str, int]:
        counts = {"client": 1}
        slot = _Slot(counts, "client", asyncio.get_running_loop())
        with anyio.CancelScope() as scope:
            scope.cancel()  # the client's cancel lands before the call reaches a thread
            await call_on_thread(backend, *COUNT, backend.own_caller, slot.hold())
        slot.drop()  # the HTTP exchange ends
        await settle(counts)
        return counts

    assert anyio.run(main) == {}, "the client's place was never given back"
    assert list(backend.recent) == [] and not backend._waiting and not backend._given_up


def test_a_call_given_up_while_it_waits_for_a_worker_thread_never_runs(
    backend: McpBackend,
) -> None:
    async def main() -> dict[str, int]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = 1  # one worker thread, kept busy below
        counts = {"client": 1}
        slot = _Slot(counts, "client", asyncio.get_running_loop())
        busy = threading.Event()
        ended = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, busy.wait)
            scope = anyio.CancelScope()
            group.start_soon(call_and_note, scope, slot, ended)
            with anyio.fail_after(10):
                while limiter.statistics().tasks_waiting < 1:  # the call waits for the thread
                    await anyio.sleep(0.01)
                scope.cancel()
                await ended.wait()  # given up before the thread is free
            busy.set()
        slot.drop()
        await settle(counts)
        return counts

    async def call_and_note(scope: anyio.CancelScope, slot: _Slot, ended: anyio.Event) -> None:
        try:
            with scope:
                await call_on_thread(backend, *COUNT, backend.own_caller, slot.hold())
        finally:
            ended.set()

    assert anyio.run(main) == {}, "the client's place was never given back"
    assert list(backend.recent) == [], "the cancelled call ran anyway"


def test_a_call_given_up_on_its_way_to_the_backend_returns_unrun(backend: McpBackend) -> None:
    token = object()
    backend.expect(token)  # its thread has not reached `call` yet
    backend.interrupt(token)
    result = backend.call(*COUNT, token)
    assert result.is_error and "cancelled this call before it ran" in result.content[0].text
    assert list(backend.recent) == [] and not backend._waiting and not backend._given_up
    assert not backend.call(*COUNT, object()).is_error  # the next call runs


def test_a_call_that_ran_gives_its_place_back_once(backend: McpBackend) -> None:
    async def main() -> tuple[bool, dict[str, int]]:
        counts = {"client": 2}  # this request and another of the same client
        slot = _Slot(counts, "client", asyncio.get_running_loop())
        result = await call_on_thread(backend, *COUNT, backend.own_caller, slot.hold())
        slot.drop()
        for _ in range(20):
            await asyncio.sleep(0.01)
        return result.is_error, counts

    failed, counts = anyio.run(main)
    assert not failed and counts == {"client": 1}, counts
    assert [record.tool for record in backend.recent] == ["countItems"]


RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_a_call_given_up_before_its_query_started_stops_it_and_not_another_read(
    backend: McpBackend, demo_store: SQLiteStore
) -> None:
    """The client gives up while the call runs but its query waits for the store's read
    connection (another part of the app holds it): that query never runs, the other read
    goes on."""
    import time

    from agent.errors import StoreError
    from agent.stop import reads_stop_when

    other_stop, other_failed = threading.Event(), []

    def other_read() -> None:
        with reads_stop_when(other_stop.is_set):
            try:
                demo_store.query(RUNAWAY)
            except StoreError as exc:
                other_failed.append(exc.message)

    other = threading.Thread(target=other_read)
    other.start()
    token, results = object(), []
    call = threading.Thread(
        target=lambda: results.append(
            backend.call("runQuery", {"query": "SELECT count(*) AS n FROM orders"}, token)
        )
    )
    try:
        while not demo_store._reader._lock.locked():  # the other read holds the connection
            time.sleep(0.01)
        call.start()
        while backend._running is not token:  # the call runs (its query waits)
            time.sleep(0.01)
        time.sleep(0.1)
        backend.interrupt(token)
        call.join(10)
        assert not call.is_alive()
        (result,) = results
        assert result.is_error and "the query was stopped" in result.content[0].text
        assert other.is_alive() and not other_failed
        assert not backend._given_up  # nothing of the call is left behind
    finally:
        other_stop.set()
        other.join(10)
        call.join(10)
    assert other_failed == ["the query was stopped"]
