"""The boto3 bedrock-runtime client and the model ids tabletalk knows by name.

No endpoint_url is passed, so `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` keeps working (tests use it).
"""

from __future__ import annotations

import threading
from typing import Any, Literal

import boto3
import botocore.config
import botocore.exceptions
import botocore.loaders
import botocore.session

from agent.bedrock.errors import translate

DEFAULT_REGION = "us-east-1"
DEFAULT_MODEL = "us.amazon.nova-2-lite-v1:0"
DEFAULT_MAX_ATTEMPTS = 4

MODELS: dict[str, str] = {
    "nova-2-lite": DEFAULT_MODEL,
    "haiku-4.5": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "sonnet-4.5": "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "nova-lite": "us.amazon.nova-lite-v1:0",
    "nova-micro": "us.amazon.nova-micro-v1:0",
    "nova-pro": "us.amazon.nova-pro-v1:0",
}

# One loader for every client: the service model is parsed once per process, not per client.
_LOADER = botocore.loaders.create_loader()
_LOADER_LOCK = threading.Lock()

ModelFamily = Literal["claude", "nova", "other"]


def resolve_model(name_or_id: str | None) -> str:
    """A model id for an alias from MODELS (case-insensitive), any other id as given, or the default."""
    name = (name_or_id or "").strip()
    if not name:
        return DEFAULT_MODEL
    return MODELS.get(name.lower(), name)


def model_family(model_id: str) -> ModelFamily:
    """Which cache-point rules apply: "claude", "nova", or "other" (e.g. opaque profile ARNs)."""
    lowered = model_id.lower()
    if "anthropic." in lowered or "claude" in lowered:
        return "claude"
    if "amazon.nova" in lowered:
        return "nova"
    return "other"


def make_client(
    profile: str | None,
    region: str | None,
    *,
    read_timeout: int = 3600,
    connect_timeout: int = 10,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> Any:
    """A bedrock-runtime client for the profile/region (region: given, else profile/env, else us-east-1).

    `max_attempts` counts every attempt, the first included (botocore's standard retry mode);
    the long read timeout lets long answers finish.
    Raises BedrockCallError (kind "no_credentials") for a profile that does not exist.
    """
    config = botocore.config.Config(
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        read_timeout=read_timeout,
        connect_timeout=connect_timeout,
        user_agent_extra="tabletalk",
    )
    core = botocore.session.get_session()
    core.register_component("data_loader", _LOADER)
    try:
        session = boto3.Session(
            profile_name=profile or None, region_name=region or None, botocore_session=core
        )
        with _LOADER_LOCK:  # boto3.Session appends its data path to the shared loader each time
            _LOADER.search_paths[:] = list(dict.fromkeys(_LOADER.search_paths))
        return session.client(
            "bedrock-runtime", region_name=session.region_name or DEFAULT_REGION, config=config
        )
    except botocore.exceptions.BotoCoreError as exc:
        raise translate(exc, profile=profile, model_id="", region=region) from exc
