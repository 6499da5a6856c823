"""Pytest plugin that makes `Pilot.pause()` return after one turn of the event loop.

Textual's pause waits for the CPU to look idle but gives up after a second, so on a loaded
CI machine a test that assumes one pause lets a refresh or a posted message land can fail at
random. This plugin makes every pause give up at once, which turns such latent flakes into
failures that happen every time:

    pytest -p tests.support.impatient_pilot tests/tui
"""

from __future__ import annotations

import asyncio

import textual.pilot


async def _one_loop_turn(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
    """Stand-in for `textual._wait.wait_for_idle` that waits for nothing."""
    await asyncio.sleep(0)


textual.pilot.wait_for_idle = _one_loop_turn  # type: ignore[assignment]
