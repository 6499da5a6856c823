"""Where internal errors go: a log file under the platform log dir, never the terminal."""

from __future__ import annotations

import logging
from pathlib import Path

from agent import paths

LOGGER_NAMES = ("agent", "tui", "pypdf", "py.warnings")
"""Ours, pypdf's (a malformed PDF logs thousands of warnings) and Python warnings."""


def log_file() -> Path:
    return paths.log_dir() / "tabletalk.log"


def setup_logging(level: int = logging.INFO) -> Path | None:
    """Send our loggers to the log file (and nowhere else); returns the file, if writable."""
    target = log_file()
    try:
        paths.ensure_dir(target.parent)
        handler: logging.Handler = logging.FileHandler(target, encoding="utf-8", delay=True)
    except OSError:
        handler, target = logging.NullHandler(), None  # type: ignore[assignment]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.captureWarnings(True)
    for name in LOGGER_NAMES:
        logger = logging.getLogger(name)
        if not any(getattr(h, "_tabletalk", False) for h in logger.handlers):
            handler._tabletalk = True  # type: ignore[attr-defined]
            logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    return target
