"""Turn boto3/botocore failures into BedrockCallError: a kind, a plain message and the fix.

Messages name the model, region and profile but never credentials; anything that looks like
an access key is scrubbed from text that Bedrock or botocore produced.
"""

from __future__ import annotations

import os
import re
from typing import Literal

import botocore.exceptions

from agent.bedrock.models import suggested_models
from agent.errors import BedrockError, TabletalkError

ErrorKind = Literal[
    "no_credentials",
    "sso_expired",
    "expired_token",
    "access_denied",
    "unknown_model",
    "throttled",
    "validation",
    "too_long",
    "unreachable",
    "service",
]

_TITLES: dict[str, str] = {
    "no_credentials": "No AWS credentials",
    "sso_expired": "AWS SSO session expired",
    "expired_token": "AWS credentials expired or invalid",
    "access_denied": "Bedrock access denied",
    "unknown_model": "Unknown Bedrock model",
    "throttled": "Bedrock is throttling requests",
    "validation": "Bedrock rejected the request",
    "too_long": "The conversation is too long for the model",
    "unreachable": "Bedrock endpoint unreachable",
    "service": "Bedrock error",
}

_SSO_ERRORS = (
    botocore.exceptions.TokenRetrievalError,
    botocore.exceptions.SSOError,  # SSOTokenLoadError, UnauthorizedSSOTokenError
    botocore.exceptions.NoAuthTokenError,
)
_UNREACHABLE_ERRORS = (
    botocore.exceptions.ConnectionError,  # EndpointConnectionError, ConnectTimeoutError, proxy, SSL
    botocore.exceptions.ReadTimeoutError,
    botocore.exceptions.ConnectionClosedError,
)
_EXPIRED_CODES = {
    "ExpiredToken",
    "ExpiredTokenException",
    "RequestExpired",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "InvalidClientTokenId",
}
_THROTTLING_CODES = {
    "ThrottlingException",
    "TooManyRequestsException",
    "ServiceQuotaExceededException",
}
_UNKNOWN_MODEL_HINTS = (
    "model identifier",
    "on-demand throughput",
    "inference profile",
)
_TOO_LONG_HINTS = (
    "too long",
    "context length",
    "context window",
    "model_context_window_exceeded",
    "too many tokens",
    "maximum context",
)
_ACCESS_KEY = re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA)[A-Z0-9]{12,}\b")


class BedrockCallError(BedrockError):
    """A failed Bedrock call; `kind` is one of ErrorKind, `code` the AWS error code if any."""

    def __init__(self, kind: ErrorKind, message: str, *, fix: str, code: str = "") -> None:
        super().__init__(message, fix=fix)
        self.kind = kind
        self.code = code
        self.title = _TITLES[kind]


def _scrub(text: str) -> str:
    return _ACCESS_KEY.sub("[access key]", text)


def error_code(exc: BaseException) -> str:
    """The AWS error code, normalised (stream exception members start lower-case)."""
    if not isinstance(exc, botocore.exceptions.ClientError):
        return ""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    return code[:1].upper() + code[1:]


def error_message(exc: BaseException) -> str:
    if isinstance(exc, botocore.exceptions.ClientError):
        return _scrub(str(exc.response.get("Error", {}).get("Message", "")).strip())
    return _scrub(str(exc).strip())


def _attempts(exc: BaseException) -> int:
    if not isinstance(exc, botocore.exceptions.ClientError):
        return 1
    return int(exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)) + 1


def _profile_flag(profile: str | None) -> str:
    name = profile or os.environ.get("AWS_PROFILE")
    return f" --profile {name}" if name else ""


def _endpoint_override() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_BEDROCK_RUNTIME") or os.environ.get("AWS_ENDPOINT_URL")


def is_cache_point_rejection(exc: BaseException) -> bool:
    """True for a ValidationException whose message names cachePoint (the request had one Bedrock refused)."""
    if isinstance(exc, BedrockCallError):
        return exc.kind == "validation" and "cachepoint" in exc.message.lower()
    return error_code(exc) == "ValidationException" and "cachepoint" in error_message(exc).lower()


def translate(
    exc: BaseException, *, profile: str | None, model_id: str, region: str | None
) -> TabletalkError:
    """The BedrockCallError for a boto3/botocore exception (HTTP or mid-stream); ours pass through."""
    if isinstance(exc, TabletalkError):
        return exc
    where = f"region {region}" if region else "your AWS region"
    model = model_id or "the model"
    flag = _profile_flag(profile)

    if isinstance(exc, botocore.exceptions.ProfileNotFound):
        return BedrockCallError(
            "no_credentials",
            f"The AWS profile {exc.kwargs.get('profile') or profile!r} is not in your AWS config.",
            fix="Check the name with `aws configure list-profiles`, or create it with "
            "`aws configure --profile NAME` (or `aws configure sso`).",
        )
    if isinstance(
        exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError
    ):
        return BedrockCallError(
            "no_credentials",
            "No AWS credentials were found" + (f" for profile {profile!r}." if profile else "."),
            fix="Run `aws configure` (or `aws configure sso`), choose a profile with --profile NAME, "
            "or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.",
        )
    if isinstance(exc, _SSO_ERRORS):
        return BedrockCallError(
            "sso_expired",
            "Your AWS SSO session has expired or was never started"
            + (f" for profile {profile!r}." if profile else "."),
            fix=f"Run `aws sso login{flag}` and try again.",
        )
    if isinstance(exc, botocore.exceptions.CredentialRetrievalError):
        return BedrockCallError(
            "expired_token",
            f"AWS credentials could not be loaded: {error_message(exc)}",
            fix=f"Refresh the credentials of the profile (for SSO: `aws sso login{flag}`), then retry.",
        )
    if isinstance(exc, _UNREACHABLE_ERRORS):
        override = _endpoint_override()
        detail = (
            f" AWS_ENDPOINT_URL_BEDROCK_RUNTIME is set to {override}; unset it or start that endpoint."
            if override
            else f" Check your network and proxy settings, and that {where} is right (--region)."
        )
        timed_out = isinstance(exc, botocore.exceptions.ReadTimeoutError)
        return BedrockCallError(
            "unreachable",
            ("Bedrock did not answer in time" if timed_out else "Could not reach Bedrock")
            + f": {error_message(exc)}",
            fix="Try again." + detail,
        )

    code = error_code(exc)
    message = error_message(exc)
    lowered = message.lower()
    if code in _EXPIRED_CODES:
        return BedrockCallError(
            "expired_token",
            f"AWS rejected your credentials ({code}): {message}",
            fix=f"Refresh your credentials (`aws sso login{flag}`, or new keys / session token "
            "from your administrator) and retry.",
            code=code,
        )
    if code == "AccessDeniedException":
        return BedrockCallError(
            "access_denied",
            f"Access to {model} in {where} was denied: {message}",
            fix=f"In the AWS console open Bedrock → Model access ({where}) and enable {model}; for "
            "Anthropic models submit the first-use form; check the AWS Marketplace subscription "
            "and that your IAM policy allows bedrock:InvokeModel and "
            "bedrock:InvokeModelWithResponseStream; or use another region with --region.",
            code=code,
        )
    if code == "ResourceNotFoundException" or (
        code == "ValidationException" and any(hint in lowered for hint in _UNKNOWN_MODEL_HINTS)
    ):
        return BedrockCallError(
            "unknown_model",
            f"Bedrock does not know the model {model} in {where}: {message}",
            fix="Use an inference profile id "
            + (f"that {region} can call, " if region else "")
            + "such as "
            + " or ".join(suggested_models(region))
            + " (bare model ids often fail with 'on-demand throughput isn't supported').",
            code=code,
        )
    if code in _THROTTLING_CODES:
        attempts = _attempts(exc)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return BedrockCallError(
            "throttled",
            f"Bedrock is throttling requests to {model}{tries}: {message}",
            fix="Wait a minute and retry, or request a quota increase (Service Quotas → Amazon "
            "Bedrock) or use a cross-region inference profile.",
            code=code,
        )
    if code == "ValidationException" and any(hint in lowered for hint in _TOO_LONG_HINTS):
        return BedrockCallError(
            "too_long",
            f"The conversation is too long for {model}: {message}",
            fix="Start a new conversation (ctrl+n, or leave out --conversation), or rewind to "
            "an earlier message.",
            code=code,
        )
    if code == "ValidationException":
        return BedrockCallError(
            "validation",
            f"Bedrock rejected the request to {model}: {message}",
            fix="This is usually a problem in the conversation sent; start a new conversation "
            "or report the message above.",
            code=code,
        )
    detail = message or type(exc).__name__
    return BedrockCallError(
        "service",
        f"Bedrock failed ({code or type(exc).__name__}): {detail}",
        fix="Retry in a moment; if it keeps failing, try another model or region.",
        code=code,
    )
