"""A model name that cannot be a model is refused before anything runs, naming the known aliases
(and the closest one); any id shaped like a Bedrock model id, profile id or ARN is taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import paths
from agent.cli.main import main
from tests.support.scripted_bedrock import Reply, ScriptedBedrock

ALIASES = ("nova-2-lite", "haiku-4.5", "sonnet-4.5", "nova-lite", "nova-micro", "nova-pro")


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_ask_with_a_made_up_model_lists_the_known_names_and_calls_nothing(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(["ask", "hi", "--db", str(demo_path), "--model", "bogus"], capsys)
    assert 'error: --model "bogus" is not a model name tabletalk knows' in err
    assert all(alias in err for alias in ALIASES), err
    assert "full Bedrock model id or inference profile id" in err and "arn:aws:bedrock:" in err
    assert "did you mean" not in err
    assert scripted_bedrock.requests == []


def test_a_typo_of_an_alias_suggests_the_alias(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(["ask", "hi", "--db", str(demo_path), "--model", "haiku-4.6"], capsys)
    assert "(did you mean haiku-4.5?)" in err and "fix: Use --model haiku-4.5" in err
    err = refused(["ask", "hi", "--db", str(demo_path), "--model", "nova"], capsys)
    assert "did you mean nova-2-lite, nova-lite, nova-micro or nova-pro?" in err
    assert scripted_bedrock.requests == []


def test_the_app_refuses_a_made_up_model_before_it_opens(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.entry import main as app_main

    assert app_main(["--db", str(demo_path), "--model", "sonet"]) == 2
    err = capsys.readouterr().err
    assert '--model "sonet" is not a model name' in err and "did you mean sonnet-4.5?" in err
    assert "Traceback" not in err


def test_a_made_up_model_in_the_config_file_names_the_file_and_key(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.ensure_dir(paths.config_dir())
    paths.config_file().write_text('model = "bogus"\n')
    err = refused(["ask", "hi", "--db", str(demo_path)], capsys)
    assert f'Config file {paths.config_file()}: model = "bogus" is not a model name' in err
    assert f"fix: Set model in {paths.config_file()} to one of the known names" in err
    paths.config_file().write_text('[search]\ndecider = "haiku"\n')
    err = refused(["info", "--db", str(demo_path)], capsys)
    assert '[search] decider = "haiku"' in err and "did you mean haiku-4.5?" in err
    assert scripted_bedrock.requests == []


def test_eval_refuses_a_made_up_model(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(["eval", "run", "--model", "bogus", "--yes"], capsys)
    assert '--model "bogus" is not a model name' in err


@pytest.mark.parametrize(
    "model_id",
    [
        "meta.llama3-1-70b-instruct-v1:0",
        "us.deepseek.r1-v1:0",
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "cohere.command-r-plus-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
    ],
)
def test_model_ids_we_do_not_list_are_called_as_given(
    model_id: str,
    scripted_bedrock: ScriptedBedrock,
    demo_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scripted_bedrock.add(Reply(text="Hello."))
    assert main(["ask", "hi", "--db", str(demo_path), "--model", model_id]) == 0, (
        capsys.readouterr().err
    )
    assert scripted_bedrock.requests[0].model_id == model_id
