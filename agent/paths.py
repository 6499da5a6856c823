"""Where tabletalk keeps its files: the platformdirs directories for "tabletalk" (on Linux
worked out here the same way, tests/test_paths_platformdirs.py compares them).

On Linux, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME relocate them
(tests rely on it).
"""

from __future__ import annotations

import os
import posixpath
import sys
from pathlib import Path

APP_NAME = "tabletalk"

XDG = {
    "user_config_dir": ("XDG_CONFIG_HOME", "/.config"),
    "user_data_dir": ("XDG_DATA_HOME", "/.local/share"),
    "user_state_dir": ("XDG_STATE_HOME", "/.local/state"),
    "user_cache_dir": ("XDG_CACHE_HOME", "/.cache"),
}
"""platformdirs' user directory on Linux: (the variable that relocates it, its place in HOME)."""


def _plain_linux() -> bool:
    """Linux that platformdirs treats as Unix (not an Android app)."""
    return sys.platform == "linux" and not (
        hasattr(sys, "getandroidapilevel")
        or (os.getenv("ANDROID_DATA") == "/data" and os.getenv("ANDROID_ROOT") == "/system")
    )


def _user_dir(kind: str) -> Path:
    """platformdirs' `kind` directory for tabletalk. On Linux with an absolute XDG variable or
    HOME (every usual case) it is worked out here as platformdirs does, without importing it
    (with tempfile, ~24 M instructions of the app's start); anything else asks platformdirs."""
    if _plain_linux():
        variable, in_home = XDG[kind]
        base = os.environ.get(variable, "")
        if posixpath.isabs(base):
            return Path(os.path.join(base, APP_NAME))
        home = os.environ.get("HOME", "")
        if posixpath.isabs(home):
            return Path(os.path.join((home.rstrip("/") + in_home) or "/", APP_NAME))
    import platformdirs

    return Path(getattr(platformdirs, kind)(APP_NAME, appauthor=False))


def config_dir() -> Path:
    """Directory of `config.toml`."""
    return _user_dir("user_config_dir")


def data_dir() -> Path:
    """Directory of the demo database and saved conversations."""
    return _user_dir("user_data_dir")


def state_dir() -> Path:
    """Directory of the staging database and other app state."""
    return _user_dir("user_state_dir")


def log_dir() -> Path:
    """Directory of the audit log and app logs (platformdirs' log directory: `log` in the
    state directory)."""
    if _plain_linux():
        return state_dir() / "log"
    import platformdirs

    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Directory of caches (nothing tabletalk needs to keep)."""
    return _user_dir("user_cache_dir")


def own_dirs() -> list[Path]:
    """Every directory tabletalk keeps its own files in (exports never write there)."""
    return [config_dir(), data_dir(), state_dir(), cache_dir(), log_dir()]


def config_file() -> Path:
    """The optional TOML config file."""
    return config_dir() / "config.toml"


def demo_db_path() -> Path:
    """The embedded demo database, created on first use."""
    return data_dir() / "demo.sqlite"


def staging_db_path() -> Path:
    """The staging area's database (SQLite, WAL)."""
    return state_dir() / "staging.sqlite"


def conversations_dir() -> Path:
    """One JSON file per conversation."""
    return data_dir() / "conversations"


def audit_log_path() -> Path:
    """JSON lines, one per gated decision."""
    return log_dir() / "audit.jsonl"


def ensure_dir(path: Path) -> Path:
    """Create `path` (and parents) if missing; return it."""
    path.mkdir(parents=True, exist_ok=True)
    return path
