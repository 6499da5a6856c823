"""The app starts with Python's cyclic garbage collector paused, and resumes it after the first
frame.

Start-up allocates hundreds of thousands of objects (modules, classes, widgets, styles) and
almost none become cyclic garbage, yet they trigger some 230 collections (one of them full)
costing about a fifth of the launch's CPU time. The entry pauses the collector before the
imports; the app resumes it once the first frame is out, first freezing what start-up built
(`gc.freeze`: long-lived, never scanned again), so later collections stay cheap too. The few
thousand objects of start-up garbage frozen with them stay allocated (about 2,300 on the demo
store: less than a full collection would cost on the first frame's heels).
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collections until `resume` (called by the `tabletalk` entry)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what start-up built and collect again; nothing to do if `pause` was not called."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
