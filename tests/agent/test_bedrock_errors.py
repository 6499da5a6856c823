"""Every Bedrock failure a user can hit becomes a BedrockCallError with the right kind and fix."""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

import botocore.exceptions
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

from agent.bedrock.client import make_client  # noqa: E402
from agent.bedrock.converse import BedrockCaller  # noqa: E402
from agent.bedrock.errors import BedrockCallError, is_cache_point_rejection, translate  # noqa: E402
from agent.bedrock.stream import TextChunk  # noqa: E402
from agent.errors import BedrockError  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import Error, Reply  # noqa: E402

scripted_bedrock = support.scripted_bedrock

NOVA = "us.amazon.nova-2-lite-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "How many orders?"}]}]


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))


def failure(
    model: str = NOVA, *, profile: str | None = None, attempts: int = 1, stream: bool = True
) -> BedrockCallError:
    """Run one step and return the error it raised."""
    client = make_client(profile, None, max_attempts=attempts)
    caller = BedrockCaller(client, model, streaming=stream, profile=profile)
    with pytest.raises(BedrockCallError) as raised:
        list(caller.step([{"text": "system"}], MESSAGES, [], inline_count=0))
    error = raised.value
    assert isinstance(error, BedrockError)
    assert support.DUMMY_SECRET_ACCESS_KEY not in error.render()
    assert support.DUMMY_ACCESS_KEY_ID not in error.render()
    return error


def test_throttling_is_retried_then_explained(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Error(429, "ThrottlingException", "Too many requests, please wait."),
        Error(429, "ThrottlingException", "Too many requests, please wait."),
    )

    started = time.monotonic()
    error = failure(attempts=2)

    assert error.kind == "throttled"
    assert len(scripted_bedrock.requests) == 2  # botocore's standard mode retried once
    assert "after 2 attempts" in error.message
    assert "quota increase" in error.fix
    assert time.monotonic() - started < 3.0


def test_throttling_recovers_when_a_retry_succeeds(scripted_bedrock) -> None:
    scripted_bedrock.add(Error(429, "ThrottlingException", "Slow down."), Reply(text="42 orders."))
    client = make_client(None, None, max_attempts=2)

    events = list(BedrockCaller(client, NOVA).step([], MESSAGES, [], inline_count=0))

    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "42 orders."


def test_throttling_inside_the_stream(scripted_bedrock) -> None:
    scripted_bedrock.add(Error(code="ThrottlingException", message="Rate exceeded", in_stream=True))

    error = failure()

    assert error.kind == "throttled" and "Rate exceeded" in error.message


def test_model_stream_error_inside_the_stream(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Error(code="ModelStreamErrorException", message="The model stopped", in_stream=True)
    )

    error = failure()

    assert error.kind == "service" and "The model stopped" in error.message


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "converse"])
def test_access_denied_names_model_region_and_console_page(scripted_bedrock, stream: bool) -> None:
    scripted_bedrock.add(
        Error(
            403,
            "AccessDeniedException",
            "You don't have access to the model with the specified model ID.",
        )
    )

    error = failure(stream=stream)

    assert error.kind == "access_denied"
    assert NOVA in error.message and "us-east-1" in error.message
    assert (
        "Model access" in error.fix and "first-use form" in error.fix and "Marketplace" in error.fix
    )


def test_bare_model_id_is_an_unknown_model_with_an_inference_profile_suggestion(
    scripted_bedrock,
) -> None:
    scripted_bedrock.add(
        Error(
            400,
            "ValidationException",
            "Invocation of model ID amazon.nova-2-lite-v1:0 with on-demand throughput isn’t supported. "
            "Retry your request with the ID or ARN of an inference profile that contains this model.",
        )
    )

    error = failure("amazon.nova-2-lite-v1:0")

    assert error.kind == "unknown_model"
    assert "us.amazon.nova-2-lite-v1:0" in error.fix


def test_resource_not_found_is_an_unknown_model(scripted_bedrock) -> None:
    scripted_bedrock.add(Error(404, "ResourceNotFoundException", "Model not found."))

    error = failure("us.amazon.nova-9-giant-v1:0")

    assert error.kind == "unknown_model" and "us.amazon.nova-9-giant-v1:0" in error.message


def test_other_validation_errors_show_bedrock_message(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Error(400, "ValidationException", "messages.1.content: text after toolUse is not allowed")
    )

    error = failure()

    assert error.kind == "validation"
    assert "text after toolUse is not allowed" in error.message


def test_expired_session_token(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Error(403, "ExpiredTokenException", "The security token included in the request is expired")
    )

    error = failure()

    assert error.kind == "expired_token" and "Refresh" in error.fix


def test_unreachable_endpoint_mentions_the_override(
    scripted_bedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{closed_port}"
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url)

    error = failure(attempts=2)

    assert error.kind == "unreachable"
    assert "AWS_ENDPOINT_URL_BEDROCK_RUNTIME" in error.fix and url in error.fix


def test_no_credentials(scripted_bedrock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("HOME", str(tmp_path))

    error = failure()

    assert error.kind == "no_credentials"
    assert (
        "aws configure" in error.fix
        and "--profile" in error.fix
        and "AWS_ACCESS_KEY_ID" in error.fix
    )
    assert scripted_bedrock.requests == []


def _sso_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, session: bool) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("HOME", str(tmp_path))
    start = "https://example.awsapps.com/start"
    if session:
        text = (
            "[profile work]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = ReadOnly\n"
            f"[sso-session corp]\nsso_start_url = {start}\nsso_region = us-east-1\n"
        )
        cache = tmp_path / ".aws" / "sso" / "cache"
        cache.mkdir(parents=True)
        expired = {
            "startUrl": start,
            "region": "us-east-1",
            "accessToken": "t",
            "expiresAt": "2020-01-01T00:00:00Z",
        }
        (cache / f"{hashlib.sha1(b'corp').hexdigest()}.json").write_text(json.dumps(expired))
    else:
        text = (
            f"[profile work]\nsso_start_url = {start}\nsso_region = us-east-1\n"
            "sso_account_id = 123456789012\nsso_role_name = ReadOnly\n"
        )
    config = tmp_path / "aws-config"
    config.write_text(text)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))


@pytest.mark.parametrize("session", [True, False], ids=["expired-sso-session", "never-logged-in"])
def test_sso_login_needed(
    scripted_bedrock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: bool
) -> None:
    _sso_profile(tmp_path, monkeypatch, session=session)

    error = failure(profile="work")

    assert error.kind == "sso_expired"
    assert "aws sso login --profile work" in error.fix
    assert scripted_bedrock.requests == []


@pytest.mark.parametrize(
    "exc",
    [
        botocore.exceptions.UnauthorizedSSOTokenError(),
        botocore.exceptions.TokenRetrievalError(provider="sso", error_msg="Token has expired"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_sso_exceptions_translate_directly(exc: Exception) -> None:
    error = translate(exc, profile="dev", model_id=NOVA, region="eu-west-1")

    assert error.kind == "sso_expired" and "aws sso login --profile dev" in error.fix


def test_unknown_profile_is_reported_when_the_client_is_made(scripted_bedrock) -> None:
    with pytest.raises(BedrockCallError) as raised:
        make_client("no-such-profile", None)

    assert raised.value.kind == "no_credentials"
    assert "no-such-profile" in raised.value.message


def test_access_keys_in_messages_are_scrubbed() -> None:
    exc = botocore.exceptions.ClientError(
        {
            "Error": {
                "Code": "InternalServerException",
                "Message": "key AKIAIOSFODNN7EXAMPLE failed",
            }
        },
        "Converse",
    )

    error = translate(exc, profile=None, model_id=NOVA, region=None)

    assert error.kind == "service" and "AKIAIOSFODNN7EXAMPLE" not in error.render()


def _client_error(code: str, message: str) -> Any:
    return botocore.exceptions.ClientError(
        {"Error": {"Code": code, "Message": message}}, "ConverseStream"
    )


def test_cache_point_rejection_is_recognised() -> None:
    assert is_cache_point_rejection(
        _client_error("ValidationException", "extraneous key [cachePoint] is not permitted")
    )
    assert is_cache_point_rejection(
        _client_error("validationException", "cachePoint is not supported for this model")
    )
    assert not is_cache_point_rejection(
        _client_error("ValidationException", "messages must alternate")
    )
    assert not is_cache_point_rejection(_client_error("ThrottlingException", "cachePoint"))


def test_throttling_at_the_start_of_a_stream_is_retried_once(scripted_bedrock) -> None:
    early = Error(
        code="ThrottlingException", message="Rate exceeded", in_stream=True, text_before=""
    )
    scripted_bedrock.add(early, Reply(text="42 orders."), early, early)
    caller = BedrockCaller(make_client(None, None, max_attempts=1), NOVA)
    caller.stream_retry_delay = 0.0

    events = list(caller.step([], MESSAGES, []))
    with pytest.raises(BedrockCallError) as raised:
        list(caller.step([], MESSAGES, []))

    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "42 orders."
    assert raised.value.kind == "throttled"
    assert len(scripted_bedrock.requests) == 4
