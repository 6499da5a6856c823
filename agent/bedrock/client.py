"""The bedrock-runtime client and the model ids tabletalk knows by name.

The client is botocore's (what boto3 returns too, without importing boto3 and its s3transfer,
a third of a headless turn's start-up). No endpoint_url is passed, so
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME` keeps working (tests use it).
"""

from __future__ import annotations

import os
from typing import Any, Literal

import botocore.config
import botocore.exceptions
import botocore.loaders
import botocore.session

from agent.bedrock import endpoint_data, retries
from agent.bedrock.errors import translate
from agent.bedrock.models import KNOWN_MODELS, configured_region, resolve_model
from agent.errors import ConfigError

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "ModelFamily",
    "configured_region",
    "make_client",
    "model_family",
    "resolve_model",
]

DEFAULT_MODEL = "us.amazon.nova-2-lite-v1:0"
DEFAULT_MAX_ATTEMPTS = 4

MODELS: dict[str, str] = {
    model.alias: model.profile(model.geographies[0]) for model in KNOWN_MODELS
}
"""Alias → the model's first-listed profile; `resolve_model(alias, region)` picks per region."""

NO_REGION_FIX = (
    "Pass --region (e.g. --region eu-central-1), set `region` in config.toml, set AWS_REGION, "
    "or give your AWS profile a region (`aws configure set region REGION`)."
)


class _ServiceNames:
    """The services botocore has data of `type_name` for, answering `in` from one folder."""

    def __init__(self, loader: botocore.loaders.Loader, type_name: str) -> None:
        self._loader = loader
        self._type_name = type_name

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            return bool(self._loader.list_api_versions(name, self._type_name))
        except botocore.exceptions.DataNotFoundError:
            return False

    def __iter__(self) -> Any:
        every = botocore.loaders.Loader.list_available_services(self._loader, self._type_name)
        return iter(every)


class _OneServiceLoader(botocore.loaders.Loader):
    """botocore's loader for clients of one service, without two costs of a headless turn's
    start-up: the scan of every service folder botocore ships (~400, two directory reads each)
    that `load_service_model` makes to check a name exists (the check looks in the named
    service's folder), and parsing the endpoint data of every AWS service to place one client
    (`endpoint_data`: the same data cut to this service, cached on disk)."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service
        self._endpoints: tuple[Any, str] | None = None

    def list_available_services(self, type_name: str) -> Any:
        return _ServiceNames(self, type_name)

    def load_data_with_path(self, name: str) -> Any:
        if name != endpoint_data.NAME:
            return super().load_data_with_path(name)
        if self._endpoints is None:
            self._endpoints = endpoint_data.service_endpoints(
                self, self.service, super().load_data_with_path
            )
        return self._endpoints


SERVICE = "bedrock-runtime"
# One loader for every client: the service model is parsed once per process, not per client.
_LOADER = _OneServiceLoader(SERVICE)

ModelFamily = Literal["claude", "nova", "other"]


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
    parameter_validation: bool = True,
) -> Any:
    """A bedrock-runtime client for the profile and region (given, else AWS_REGION /
    AWS_DEFAULT_REGION, else the profile's); with no region at all, a ConfigError says so.

    `max_attempts` counts every attempt, the first included (botocore's standard retry mode);
    the long read timeout lets long answers finish. `parameter_validation=False` leaves
    validation to the caller (`request_check.RequestCheck` checks each part once). Each retry
    botocore makes goes to the reporter of the calling thread (`retries.reporting`).
    Raises BedrockCallError (kind "no_credentials") for a profile that does not exist.
    """
    config = botocore.config.Config(
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        read_timeout=read_timeout,
        connect_timeout=connect_timeout,
        user_agent_extra="tabletalk",
        parameter_validation=parameter_validation,
    )
    region = region or os.environ.get("AWS_REGION") or None
    try:
        core = botocore.session.Session(profile=profile or None)
        core.register_component("data_loader", _LOADER)
        where = region or core.get_config_variable("region")
        if not where:
            raise ConfigError(
                "No AWS region is configured"
                + (f" (profile {profile!r} has none)." if profile else "."),
                fix=NO_REGION_FIX,
            )
        client = core.create_client(SERVICE, region_name=where, config=config)
        retries.watch(client)
        return client
    except botocore.exceptions.BotoCoreError as exc:
        raise translate(exc, profile=profile, model_id="", region=region) from exc
