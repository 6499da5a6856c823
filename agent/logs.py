"""Where internal errors go: a log file under the platform log dir, never the terminal.

Every module logs to `logging.getLogger(__name__)`, so all of ours sit under `agent` or
`tui`; records from any other logger (libraries) reach the root logger, which gets the same
file, so Python's last-resort handler never prints a traceback on stderr.
"""

from __future__ import annotations

import logging
from pathlib import Path

from agent import paths

LOGGER_NAMES = ("agent", "tui")


def log_file() -> Path:
    return paths.log_dir() / "tabletalk.log"


def setup_logging(level: int = logging.INFO) -> Path | None:
    """Send our loggers to the log file (and nowhere else); returns the file, if writable."""
    target = log_file()
    try:
        paths.ensure_dir(target.parent)
        handler: logging.Handler = logging.FileHandler(
            target, encoding="utf-8", errors="backslashreplace", delay=True
        )
    except OSError:
        handler, target = logging.NullHandler(), None  # type: ignore[assignment]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.captureWarnings(True)  # warnings.warn (pypdf's, say) go to the log as well
    for name in LOGGER_NAMES:
        logger = logging.getLogger(name)
        if not any(getattr(h, "_tabletalk", False) for h in logger.handlers):
            handler._tabletalk = True  # type: ignore[attr-defined]
            logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    root = logging.getLogger()
    if not any(getattr(h, "_tabletalk", False) for h in root.handlers):
        handler._tabletalk = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    return target
