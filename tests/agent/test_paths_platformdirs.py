"""tabletalk's directories (agent/paths.py, worked out without platformdirs on Linux) are
exactly the ones platformdirs gives, whatever HOME and the XDG variables hold."""

from __future__ import annotations

import itertools
from pathlib import Path

import platformdirs
import pytest

from agent import paths

XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
HOMES = (None, "", "/home/ada", "/home/ada/", "/", "relative/home")
XDG_VALUES = (None, "", "/srv/xdg", "/srv/xdg/", "relative/xdg", "  /srv/spaced")


def _platformdirs() -> dict[str, Path]:
    name = paths.APP_NAME
    return {
        "config": Path(platformdirs.user_config_dir(name, appauthor=False)),
        "data": Path(platformdirs.user_data_dir(name, appauthor=False)),
        "state": Path(platformdirs.user_state_dir(name, appauthor=False)),
        "cache": Path(platformdirs.user_cache_dir(name, appauthor=False)),
        "log": Path(platformdirs.user_log_dir(name, appauthor=False)),
    }


def _ours() -> dict[str, Path]:
    return {
        "config": paths.config_dir(),
        "data": paths.data_dir(),
        "state": paths.state_dir(),
        "cache": paths.cache_dir(),
        "log": paths.log_dir(),
    }


@pytest.mark.parametrize(("home", "xdg"), list(itertools.product(HOMES, XDG_VALUES)))
def test_every_directory_is_the_one_platformdirs_gives(
    monkeypatch: pytest.MonkeyPatch, home: str | None, xdg: str | None
) -> None:
    for name, value in [("HOME", home)] + [(var, xdg) for var in XDG_VARS]:
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        expected: dict[str, Path] | type[Exception] = _platformdirs()
    except RuntimeError:  # no home directory platformdirs can find: neither can we
        expected = RuntimeError
    if expected is RuntimeError:
        with pytest.raises(RuntimeError):
            _ours()
    else:
        assert _ours() == expected


def test_one_variable_relocates_only_its_own_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ada")
    for var in XDG_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", "/srv/state")
    assert _ours() == _platformdirs()
    assert paths.log_dir() == Path("/srv/state/tabletalk/log")
    assert paths.config_dir() == Path("/home/ada/.config/tabletalk")


def test_on_linux_the_directories_come_without_importing_platformdirs(isolated_dirs: Path) -> None:
    """(textual.app imports it later anyway; the app's start-up compile cache, whose file is in
    the cache directory, is installed before it then, so its code comes from the cache.)"""
    import subprocess
    import sys

    code = (
        "import sys; from agent import paths; "
        "[f() for f in (paths.config_dir, paths.data_dir, paths.state_dir, paths.cache_dir, "
        "paths.log_dir)]; print(sorted(m for m in ('platformdirs', 'tempfile') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"
