"""Shared fixtures: every test runs with its own XDG dirs, and `demo_store` opens a fresh demo DB."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from agent.stores.demo import build_demo_db
from agent.stores.sqlite import SQLiteStore

DEMO_TODAY = date(2026, 3, 15)
XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the XDG base dirs at tmp_path subdirs, so no test touches the real home."""
    root = tmp_path / "xdg"
    for name in XDG_VARS:
        directory = root / name.removeprefix("XDG_").removesuffix("_HOME").lower()
        directory.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(directory))
    return root


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's retries without their waits (the retries themselves still happen)."""
    from botocore.retries import standard

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0.0)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One demo database per test session (built for DEMO_TODAY); tests get copies."""
    return build_demo_db(tmp_path_factory.mktemp("demo") / "demo.sqlite", today=DEMO_TODAY)


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path) -> Path:
    """A private, writable copy of the demo database."""
    return Path(shutil.copy(demo_template, tmp_path / "demo.sqlite"))


@pytest.fixture
def demo_store(demo_path: Path) -> Iterator[SQLiteStore]:
    """A SQLiteStore on a private copy of the demo database."""
    store = SQLiteStore.open(demo_path)
    yield store
    store.close()


@pytest.fixture
def read_only_demo(demo_path: Path) -> Iterator[Path]:
    """The demo copy made unwritable: chmod, plus the immutable flag when running as root."""
    demo_path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    immutable = False
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            pytest.skip("running as root without chattr: cannot make a file read-only")
        done = subprocess.run(["chattr", "+i", str(demo_path)], capture_output=True)
        if done.returncode != 0:
            pytest.skip("running as root and chattr +i is not permitted here")
        immutable = True
    yield demo_path
    if immutable:
        subprocess.run(["chattr", "-i", str(demo_path)], check=False)
    demo_path.chmod(stat.S_IRUSR | stat.S_IWUSR)
