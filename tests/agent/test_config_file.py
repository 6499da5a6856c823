"""A config file that cannot be used gets a message saying what is wrong with it and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent import paths
from agent.cli.main import main
from agent.config import Settings, load_settings


def run_ask(demo_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["ask", "hello", "--db", str(demo_path)]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_config_path_that_is_a_folder_says_so(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.config_file().mkdir(parents=True)
    err = run_ask(demo_path, capsys)
    assert f"{paths.config_file()} is a folder, not a file" in err
    assert "permissions" not in err


def test_a_config_that_is_not_utf8_says_so(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.ensure_dir(paths.config_dir())
    paths.config_file().write_bytes(b'model = "caf\xe9"\n')
    err = run_ask(demo_path, capsys)
    assert "is not UTF-8 text" in err and "Save" in err
    assert "permissions" not in err


def test_a_config_nested_too_deep_is_named_invalid_toml(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.ensure_dir(paths.config_dir())
    paths.config_file().write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["info", "--db", str(demo_path)]) == 2
    err = capsys.readouterr().err
    assert "is not valid TOML" in err and "nested too deep" in err and "fix:" in err, err


def test_a_config_that_is_a_fifo_is_refused_without_waiting(demo_path: Path) -> None:
    paths.ensure_dir(paths.config_dir())
    os.mkfifo(paths.config_file())
    done = subprocess.run(  # in a child process: reading a FIFO would block this one forever
        [sys.executable, "-m", "agent", "ask", "hello", "--db", str(demo_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "is a FIFO (named pipe), not a regular file" in done.stderr


def _config(text: str) -> Path:
    paths.ensure_dir(paths.config_dir())
    paths.config_file().write_text(text, encoding="utf-8")
    return paths.config_file()


def test_every_invalid_field_is_named_with_its_problem_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _config(
        'step_limit = 101\nmode = "auto"\n[search]\nbogus = 1\nmin_probability = 1\n'
        '[mcp_servers.notes]\ncommand = "x"\nargs = "not-a-list"\n[eval.prices.m]\ninput = 1\n'
    )
    assert main(["info"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: Config file {path} has invalid settings: "
        "step_limit: Input should be less than or equal to 100; "
        "search.bogus: unknown setting 'bogus' (known: decider, min_probability, "
        f"{', '.join(_search_fields()[2:])}); "
        "mcp_servers.notes.args: Input should be a valid list; "
        "eval.prices.m.output: Field required",
        f"  fix: Fix those fields in {path} (see README.md, Configuration).",
    ]


def _search_fields() -> list[str]:
    import dataclasses

    from agent.config import SearchSettings

    return [f.name for f in dataclasses.fields(SearchSettings)]


def test_a_misspelt_setting_is_named_with_the_closest_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A typo read "modle: Extra inputs are not permitted" (pydantic's words): nothing said
    which name was meant."""
    _config(
        'modle = "haiku-4.5"\n[history]\nkeep_dayz = 3\n[mcp_servers.n]\ncommand = "x"\nargz = []\n'
    )
    assert main(["info"]) == 2
    err = capsys.readouterr().err
    assert "modle: unknown setting 'modle' (did you mean 'mode' or 'model'?)" in err
    assert "history.keep_dayz: unknown setting 'keep_dayz' (did you mean 'keep_days'?)" in err
    assert "mcp_servers.n.argz: unknown setting 'argz' (did you mean 'args'?)" in err
    assert "Extra inputs" not in err


def test_values_written_loosely_are_read_as_their_fields_type() -> None:
    _config(
        "step_limit = 5.0\nstreaming = false\n[search]\nmin_probability = 1\n"
        "[dynamodb]\nmax_read_units = 300\n[eval.prices.m]\ninput = 1\noutput = 2.5\n"
    )
    settings = load_settings()
    assert settings.step_limit == 5 and type(settings.step_limit) is int
    assert settings.search.min_probability == 1.0 and type(settings.search.min_probability) is float
    assert settings.dynamodb.max_read_units == 300.0
    assert settings.dynamodb.max_scan_items == 10_000
    assert (settings.eval.prices["m"].input, settings.eval.prices["m"].output) == (1.0, 2.5)
    assert settings.streaming is False


def test_only_the_settings_written_in_the_file_or_given_count_as_set() -> None:
    _config('region = "eu-west-1"\n[search]\nchunk_size = 10\n')
    settings = load_settings()
    assert settings.model_fields_set == {"region", "search"}
    assert settings.search.model_fields_set == {"chunk_size"}
    assert settings.model_copy(update={"model": "m"}).model_fields_set == {
        "region",
        "search",
        "model",
    }
    assert Settings(model="x").model_fields_set == {"model"}
    again = Settings.model_validate(settings.model_dump())
    assert again == settings and again.search.chunk_size == 10
