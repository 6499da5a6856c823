"""Model versus region: aliases resolve to the inference profile the region can call, a profile
the region cannot call is refused naming those it can, and no region at all is said plainly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.bedrock.models import check_model, region_geographies, resolve_model
from agent.cli.main import main
from agent.errors import ConfigError
from tests.support.scripted_bedrock import Reply, ScriptedBedrock


@pytest.mark.parametrize(
    ("alias", "region", "expected"),
    [
        ("nova-2-lite", "us-east-1", "us.amazon.nova-2-lite-v1:0"),
        ("nova-2-lite", "eu-central-1", "eu.amazon.nova-2-lite-v1:0"),
        ("nova-2-lite", "eu-west-1", "eu.amazon.nova-2-lite-v1:0"),
        ("nova-2-lite", "ap-northeast-1", "jp.amazon.nova-2-lite-v1:0"),
        ("nova-2-lite", "ap-southeast-1", "apac.amazon.nova-2-lite-v1:0"),
        ("nova-2-lite", "ap-southeast-2", "apac.amazon.nova-2-lite-v1:0"),
        ("nova-2-lite", "sa-east-1", "global.amazon.nova-2-lite-v1:0"),
        ("haiku-4.5", "eu-west-3", "eu.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("Haiku-4.5", "ap-southeast-2", "au.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("haiku-4.5", "ap-northeast-3", "jp.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("nova-pro", "ap-south-1", "apac.amazon.nova-pro-v1:0"),
    ],
)
def test_aliases_resolve_per_region(alias: str, region: str, expected: str) -> None:
    assert resolve_model(alias, region) == expected
    check_model(expected, region)  # callable from there: no error


def test_explicit_ids_are_kept_and_japan_and_australia_also_reach_apac() -> None:
    assert resolve_model("eu.amazon.nova-2-lite-v1:0", "us-east-1") == "eu.amazon.nova-2-lite-v1:0"
    assert region_geographies("ap-northeast-1") == ("jp", "apac")
    assert region_geographies("ap-southeast-2") == ("au", "apac")
    check_model("apac.amazon.nova-2-lite-v1:0", "ap-northeast-1")
    check_model("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu-north-1")
    check_model("arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/x", "x")


def test_a_profile_outside_the_regions_geography_names_the_ones_that_work() -> None:
    with pytest.raises(ConfigError) as raised:
        check_model("us.amazon.nova-2-lite-v1:0", "eu-central-1")
    error = raised.value
    assert "US inference profile" in error.message and "eu-central-1" in error.message
    assert "eu.amazon.nova-2-lite-v1:0" in (error.fix or "")
    assert "global.amazon.nova-2-lite-v1:0" in (error.fix or "")
    assert "us.amazon" not in (error.fix or "")


def test_a_model_without_a_profile_for_the_region_lists_where_it_has_them() -> None:
    with pytest.raises(ConfigError) as raised:
        check_model(resolve_model("nova-pro", "ca-central-1"), "ca-central-1")
    error = raised.value
    assert "nova-pro has no inference profile that ca-central-1 can call" in error.message
    for profile in ("us.amazon.nova-pro-v1:0", "eu.amazon.nova-pro-v1:0", "apac."):
        assert profile in error.message
    assert "nova-2-lite" in (error.fix or "")  # has a global profile: callable from there


def test_ask_in_an_eu_region_calls_the_eu_profile_by_default(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(Reply(text="Hallo."), Reply(text="Hei."))
    assert main(["ask", "hi", "--db", str(demo_path), "--region", "eu-central-1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "eu.amazon.nova-2-lite-v1:0"
    assert scripted_bedrock.requests[0].model_id == "eu.amazon.nova-2-lite-v1:0"
    assert "/eu-central-1/bedrock/" in scripted_bedrock.requests[0].headers["Authorization"]
    main(
        ["ask", "hi", "--db", str(demo_path), "--region", "ap-northeast-1", "--model", "haiku-4.5"]
    )
    assert scripted_bedrock.requests[1].model_id == "jp.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_ask_with_a_profile_the_region_cannot_call_is_a_setup_error(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["ask", "hi", "--db", str(demo_path), "--region", "eu-west-1"]
    assert main([*command, "--model", "us.amazon.nova-2-lite-v1:0"]) == 2
    err = capsys.readouterr().err
    assert "us.amazon.nova-2-lite-v1:0 is a US inference profile" in err
    assert "eu.amazon.nova-2-lite-v1:0" in err and "Traceback" not in err
    assert scripted_bedrock.requests == []


def test_ask_with_no_region_anywhere_says_so(
    scripted_bedrock: ScriptedBedrock,
    demo_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert "AWS_REGION" not in os.environ
    assert main(["ask", "hi", "--db", str(demo_path)]) == 2
    err = capsys.readouterr().err
    assert "No AWS region is configured" in err
    assert "--region" in err and "us-east-1" not in err
    assert scripted_bedrock.requests == []
