"""Reaching DynamoDB: `dynamodb://REGION?tables=GLOB` URLs, the boto3 client, the store's
identity (account + region + endpoint), and AWS errors as one line with the fix."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import boto3
import botocore.config
import botocore.exceptions

from agent.errors import StoreError
from agent.stores.dynamodb.retries import THROTTLE_CODES

SCHEME = "dynamodb://"
ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB"
T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """What a `dynamodb://` URL names: a region (None: the profile's) and a table glob."""

    region: str | None
    tables: str | None


def parse_url(db: str) -> Target:
    """`dynamodb://us-east-1?tables=shop-*` → Target; a malformed URL raises with the form."""
    parts = urlsplit(db)
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = set(query) - {"tables"}
    if parts.scheme != "dynamodb" or parts.path not in ("", "/") or unknown:
        raise StoreError(
            f"{db!r} is not a DynamoDB address",
            fix="Use dynamodb://REGION (e.g. dynamodb://us-east-1), dynamodb:// for the "
            "profile's region, optionally ?tables=GLOB (e.g. ?tables=shop-*).",
        )
    tables = query.get("tables", [None])[-1] or None
    return Target(parts.hostname or None, tables)


def make_client(region: str | None, profile: str | None) -> tuple[Any, Any, str]:
    """(dynamodb client, boto3 session, region). `AWS_ENDPOINT_URL_DYNAMODB` is honoured by boto3."""
    config = botocore.config.Config(
        retries={"mode": "standard", "total_max_attempts": 6},
        connect_timeout=10,
        read_timeout=60,
        user_agent_extra="tabletalk",
    )
    try:
        session = boto3.Session(profile_name=profile or None, region_name=region or None)
    except botocore.exceptions.ProfileNotFound as exc:
        raise StoreError(
            f"the AWS profile {profile!r} does not exist",
            fix="Pass --profile with a profile from ~/.aws/config, or leave it out.",
        ) from exc
    chosen = region or session.region_name
    if not chosen:
        raise StoreError(
            "no AWS region for DynamoDB",
            fix="Name it in the address (dynamodb://us-east-1) or set a region in your profile.",
        )
    return session.client("dynamodb", region_name=chosen, config=config), session, chosen


def endpoint_of(client: Any) -> str | None:
    """The custom endpoint in use (DynamoDB Local, moto), or None for AWS itself."""
    url = str(client.meta.endpoint_url)
    return url if os.environ.get(ENDPOINT_ENV) or ".amazonaws.com" not in url else None


def account_of(session: Any, region: str, endpoint: str | None) -> str:
    """The AWS account id (STS GetCallerIdentity; a local endpoint answers STS too, or "local")."""
    try:
        sts = session.client("sts", region_name=region, endpoint_url=endpoint)
        return str(sts.get_caller_identity()["Account"])
    except botocore.exceptions.ClientError as exc:
        if endpoint is not None:
            return "local"
        raise translate(exc, action="sts:GetCallerIdentity", region=region) from exc
    except botocore.exceptions.BotoCoreError as exc:
        if endpoint is not None:
            return "local"
        raise translate(exc, action="sts:GetCallerIdentity", region=region) from exc


def translate(
    exc: Exception, *, action: str, table: str | None = None, region: str | None = None
) -> StoreError:
    """An AWS error as one StoreError line with the fix (never a traceback)."""
    where = f" on table {table}" if table else ""
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        text = str(error.get("Message", ""))
        if code in ("AccessDeniedException", "AccessDenied", "UnrecognizedClientException"):
            return StoreError(
                f"AWS denied {action}{where}: {text}",
                fix=f"Grant the IAM action {action}{where} to your role, or use another --profile.",
            )
        if code == "ResourceNotFoundException":
            return StoreError(
                f"DynamoDB has no table {table or '(unknown)'} in {region or 'this region'}",
                fix="Check the table name (listTables) and the region in --db dynamodb://REGION.",
            )
        if code in THROTTLE_CODES:
            return StoreError(
                f"DynamoDB throttled {action}{where} after several retries",
                fix="Wait a moment and retry, or narrow the read; nothing was lost.",
            )
        if code in ("ExpiredTokenException", "ExpiredToken"):
            return StoreError(
                "your AWS credentials have expired",
                fix="Run `aws sso login` (or refresh your credentials) and retry.",
            )
        lowered = text.lower()
        if (
            code == "ValidationException"
            and "size" in lowered
            and ("400" in text or "maximum allowed size" in lowered)
        ):
            return StoreError(
                f"an item is over DynamoDB's 400 KB limit{where}",
                fix="Make the item smaller (move large values elsewhere); the change stays staged.",
            )
        if code == "ValidationException" and not action.endswith("TransactWriteItems"):
            return StoreError(
                f"DynamoDB rejected {action}{where}: {text}",
                fix="Check the statement: PartiQL names are in double quotes, strings in single "
                "quotes; see describeTable for attribute names.",
            )
        if code == "ValidationException":
            return StoreError(
                f"DynamoDB rejected {action}{where}: {text}",
                fix="Check the staged values and key types against describeTable; nothing "
                "was written, and the changes stay staged.",
            )
        return StoreError(f"DynamoDB {code}{where}: {text}", fix="Check the request and retry.")
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return StoreError(
            "no AWS credentials found", fix="Configure credentials (aws configure) or --profile."
        )
    if isinstance(exc, botocore.exceptions.TokenRetrievalError | botocore.exceptions.SSOError):
        return StoreError("your AWS SSO session has expired", fix="Run `aws sso login` and retry.")
    if isinstance(exc, botocore.exceptions.EndpointConnectionError):
        return StoreError(
            f"cannot reach DynamoDB: {exc}",
            fix=f"Check your network, the region, or {ENDPOINT_ENV} if you set it.",
        )
    return StoreError(f"DynamoDB {action} failed: {exc}", fix="Retry; check your network.")


def call(fn: Callable[..., T], action: str, table: str | None, region: str, **kwargs: Any) -> T:
    """Call a client method, translating AWS errors."""
    try:
        return fn(**kwargs)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise translate(exc, action=action, table=table, region=region) from exc
