"""Model names, model families and the boto3 client settings (region, retries, user agent)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

from agent.bedrock.client import DEFAULT_MODEL, MODELS, make_client, model_family, resolve_model  # noqa: E402
from agent.bedrock.converse import BedrockCaller  # noqa: E402
from agent.errors import ConfigError  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import Reply  # noqa: E402

scripted_bedrock = support.scripted_bedrock


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))


def test_aliases_resolve_and_other_ids_pass_through() -> None:
    assert resolve_model(None) == DEFAULT_MODEL == "us.amazon.nova-2-lite-v1:0"
    assert resolve_model("") == DEFAULT_MODEL
    assert resolve_model("Haiku-4.5") == "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert resolve_model(" eu.amazon.nova-2-lite-v1:0 ") == "eu.amazon.nova-2-lite-v1:0"
    assert all(alias == alias.lower() for alias in MODELS)


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("us.amazon.nova-2-lite-v1:0", "nova"),
        ("us.amazon.nova-micro-v1:0", "nova"),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude"),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude"),
        ("us.meta.llama3-3-70b-instruct-v1:0", "other"),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", "other"),
    ],
)
def test_model_family(model_id: str, family: str) -> None:
    assert model_family(model_id) == family


def test_no_region_at_all_is_an_error_not_us_east_1(
    scripted_bedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")

    with pytest.raises(ConfigError, match="No AWS region is configured") as raised:
        make_client(None, None)
    assert "--region" in (raised.value.fix or "") and "AWS_REGION" in (raised.value.fix or "")
    assert make_client(None, "eu-central-1").meta.region_name == "eu-central-1"
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    assert make_client(None, None).meta.region_name == "ap-south-1"


def test_region_comes_from_the_environment(
    scripted_bedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-southeast-2")

    assert make_client(None, None).meta.region_name == "ap-southeast-2"


def test_region_and_credentials_come_from_the_profile(
    scripted_bedrock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    config = tmp_path / "aws-config"
    config.write_text(
        "[profile analytics]\nregion = eu-west-1\n"
        "aws_access_key_id = AKIDPROFILEKEY000000\naws_secret_access_key = profile-secret\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    scripted_bedrock.add(Reply(text="ok"))

    client = make_client("analytics", None)
    list(
        BedrockCaller(client, DEFAULT_MODEL).step(
            [], [{"role": "user", "content": [{"text": "hi"}]}], []
        )
    )

    assert client.meta.region_name == "eu-west-1"
    authorization = scripted_bedrock.requests[0].headers["Authorization"]
    assert (
        "Credential=AKIDPROFILEKEY000000/" in authorization
        and "/eu-west-1/bedrock/" in authorization
    )


def test_client_settings(scripted_bedrock) -> None:
    client = make_client(None, None, max_attempts=3)

    config = client.meta.config
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}
    assert config.read_timeout == 3600 and config.connect_timeout == 10
    assert "tabletalk" in config.user_agent_extra
