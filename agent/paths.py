"""Where tabletalk keeps its files: the platformdirs directories for "tabletalk".

On Linux, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME relocate them
(tests rely on it).
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "tabletalk"


def config_dir() -> Path:
    """Directory of `config.toml`."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """Directory of the demo database and saved conversations."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def state_dir() -> Path:
    """Directory of the staging database and other app state."""
    return Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))


def log_dir() -> Path:
    """Directory of the audit log and app logs."""
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Directory of caches (nothing tabletalk needs to keep)."""
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


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
