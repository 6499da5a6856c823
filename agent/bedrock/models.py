"""The models tabletalk knows by alias, and which inference profile to call from a region.

A cross-region inference profile is named `<geography>.<model id>` and can only be called from
a source region inside its geography (`global.` from any commercial region). So an alias
resolves per region, and an explicit profile id is checked against the region before a call.
Profiles per model, from the Bedrock model cards (late 2026): see `KNOWN_MODELS`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from agent.errors import ConfigError

GEOGRAPHIES: dict[str, str] = {
    "us": "US",
    "eu": "EU",
    "apac": "Asia Pacific",
    "jp": "Japan",
    "au": "Australia",
    "ca": "Canada",
    "us-gov": "AWS GovCloud (US)",
    "global": "global",
}
"""Profile prefixes and the geography each names."""

_REGION_PREFIXES: dict[str, str] = {
    "us-gov-": "us-gov",
    "us-": "us",
    "eu-": "eu",
    "ca-": "ca",
    "ap-": "apac",
}
_JAPAN = frozenset({"ap-northeast-1", "ap-northeast-3"})
_AUSTRALIA = frozenset({"ap-southeast-2", "ap-southeast-4"})


@dataclass(frozen=True)
class KnownModel:
    """A model with an alias; `geographies` lists its profiles in order of preference."""

    alias: str
    base_id: str
    geographies: tuple[str, ...]

    def profile(self, geography: str) -> str:
        return f"{geography}.{self.base_id}"

    def usable_from(self, region: str) -> list[str]:
        """This model's profile ids that `region` can call, most local first."""
        mine = [g for g in region_geographies(region) if g in self.geographies]
        if "global" in self.geographies and is_commercial(region):
            mine.append("global")
        return [self.profile(g) for g in mine]


_CLAUDE = ("us", "eu", "apac", "jp", "au", "global")
_NOVA_V1 = ("us", "eu", "apac")
KNOWN_MODELS: tuple[KnownModel, ...] = (
    KnownModel("nova-2-lite", "amazon.nova-2-lite-v1:0", ("us", "eu", "apac", "jp", "global")),
    KnownModel("haiku-4.5", "anthropic.claude-haiku-4-5-20251001-v1:0", _CLAUDE),
    KnownModel("sonnet-4.5", "anthropic.claude-sonnet-4-5-20250929-v1:0", _CLAUDE),
    KnownModel("nova-lite", "amazon.nova-lite-v1:0", _NOVA_V1),
    KnownModel("nova-micro", "amazon.nova-micro-v1:0", _NOVA_V1),
    KnownModel("nova-pro", "amazon.nova-pro-v1:0", _NOVA_V1),
)
DEFAULT_ALIAS = "nova-2-lite"
_BY_ALIAS = {model.alias: model for model in KNOWN_MODELS}
_BY_BASE = {model.base_id: model for model in KNOWN_MODELS}


def region_geographies(region: str) -> tuple[str, ...]:
    """The geographies whose profiles `region` may call, most specific first (no `global`)."""
    region = region.strip().lower()
    if region in _JAPAN:
        return ("jp", "apac")
    if region in _AUSTRALIA:
        return ("au", "apac")
    for prefix, geography in _REGION_PREFIXES.items():
        if region.startswith(prefix):
            return (geography,)
    return ()


def is_commercial(region: str) -> bool:
    """False for GovCloud and China regions, which cannot call `global.` profiles."""
    return not region.strip().lower().startswith(("us-gov-", "cn-"))


def configured_region(profile: str | None, region: str | None) -> str | None:
    """The region a client would use: given, else AWS_REGION / AWS_DEFAULT_REGION, else the
    profile's (read with botocore, loaded only then); None when there is none. Never raises."""
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        return region
    import botocore.exceptions
    import botocore.session

    try:
        found = botocore.session.Session(profile=profile or None).get_config_variable("region")
    except botocore.exceptions.BotoCoreError:
        return None
    return str(found) if found else None


def resolve_model(name_or_id: str | None, region: str | None = None) -> str:
    """The model id to call: an alias (case-insensitive) becomes the profile for `region`
    (the first listed when the region is unknown or has none); any other id is kept as given."""
    name = (name_or_id or "").strip() or DEFAULT_ALIAS
    known = _BY_ALIAS.get(name.lower())
    if known is None:
        return name
    usable = known.usable_from(region) if region else []
    return usable[0] if usable else known.profile(known.geographies[0])


_PROVIDER_AND_NAME = r"[a-z][a-z0-9]+\.[a-z0-9][a-z0-9.:-]*[a-z0-9]"
"""`provider.name-version` as Bedrock names foundation models (`amazon.nova-lite-v1:0`,
`anthropic.claude-v2:1:200k`, `cohere.embed-english-v3`, `deepseek.r1-v1:0`)."""
_ARN = r"arn:aws(?:-[a-z]+)*:(?:bedrock|sagemaker):[a-z0-9-]*:[0-9]*:[a-z-]+/\S+"
"""A foundation model, inference profile (system or application), provisioned, custom or
imported model ARN, or a Bedrock Marketplace (SageMaker) endpoint."""


def looks_like_model_id(text: str) -> bool:
    """Whether `text` is shaped like something Bedrock's modelId takes: `provider.name-version`,
    optionally behind a profile prefix (`us.`, `global.`, …), or an ARN. Not whether Bedrock
    has that model: an id we do not list (a newer model, another provider) is never refused."""
    if re.fullmatch(_ARN, text):
        return True
    prefix, _, rest = text.partition(".")
    if prefix in GEOGRAPHIES:
        text = rest
    return bool(re.fullmatch(_PROVIDER_AND_NAME, text)) and re.search(r"[-:]", text) is not None


def check_model_name(name: str | None, *, given: str, fix_start: str) -> None:
    """Raise ConfigError when `name` is neither an alias nor shaped like a model id (empty:
    the default). `given` says where it came from (`--model`, `model in FILE`); `fix_start`
    begins the fix (`Use --model`, `Set model in FILE to`)."""
    name = (name or "").strip()
    if not name or name.lower() in _BY_ALIAS or looks_like_model_id(name):
        return
    import difflib

    aliases = [model.alias for model in KNOWN_MODELS]
    close = [a for a in aliases if a.startswith(name.lower())] or difflib.get_close_matches(
        name.lower(), aliases, n=1, cutoff=0.6
    )
    quoted = json.dumps(name, ensure_ascii=False)
    example = KNOWN_MODELS[0].profile(KNOWN_MODELS[0].geographies[0])
    ids = f"a full Bedrock model id or inference profile id (such as {example}) or ARN (arn:aws:bedrock:…)"
    if close:
        fix = f"{fix_start} {close[0]}; known names: {', '.join(aliases)}; {ids} also works."
    else:
        fix = f"{fix_start} one of the known names ({', '.join(aliases)}), or {ids}."
    listed = " or ".join(close) if len(close) < 3 else f"{', '.join(close[:-1])} or {close[-1]}"
    guess = f" (did you mean {listed}?)" if close else ""
    raise ConfigError(
        f"{given} {quoted} is not a model name tabletalk knows, nor a Bedrock model id{guess}.",
        fix=fix,
    )


def alias_of(model_id: str) -> str | None:
    """The alias of the known model that `model_id` (a profile or base id) calls, if any."""
    prefix, _, rest = model_id.partition(".")
    known = _BY_BASE.get(rest if prefix in GEOGRAPHIES else model_id)
    return known.alias if known else None


def resumed_model(saved: str, region: str | None) -> str | None:
    """The model to continue a saved conversation on: the one it recorded, or that known
    model's profile for `region` when the recorded profile cannot be called from there;
    None when it records no model id or nothing `region` can call."""
    saved = saved.strip()
    if not saved or not (saved.lower() in _BY_ALIAS or looks_like_model_id(saved)):
        return None
    model_id = resolve_model(saved, region)
    if region is None:
        return model_id
    try:
        check_model(model_id, region)
    except ConfigError:
        prefix, _, base = model_id.partition(".")
        known = _BY_BASE.get(base)
        usable = known.usable_from(region) if known else []
        return usable[0] if usable else None
    return model_id


def check_model(model_id: str, region: str) -> None:
    """Raise ConfigError when `model_id` is a geography's profile that `region` cannot call;
    the error names the profiles of that model that it can."""
    prefix, _, base = model_id.partition(".")
    if prefix not in GEOGRAPHIES or prefix in region_geographies(region):
        return
    if prefix == "global" and is_commercial(region):
        return
    known = _BY_BASE.get(base)
    where = f"{GEOGRAPHIES[prefix]} inference profile"
    message = f"{model_id} is a {where}; it cannot be called from {region}."
    if known is None:
        guesses = [f"{g}.{base}" for g in region_geographies(region)] + [f"global.{base}"]
        raise ConfigError(
            message,
            fix=f"Use that model's profile for {region} if it has one ({' or '.join(guesses)}), "
            "pick another region with --region, or another model with --model.",
        )
    usable = known.usable_from(region)
    if usable:
        raise ConfigError(
            message, fix=f"Use --model {known.alias} (or --model {' or '.join(usable)})."
        )
    listed = ", ".join(f"{known.profile(g)} ({GEOGRAPHIES[g]})" for g in known.geographies)
    alternatives = [m.alias for m in KNOWN_MODELS if m.usable_from(region)]
    other = f", or another model (--model {' / '.join(alternatives)})" if alternatives else ""
    raise ConfigError(
        f"{known.alias} has no inference profile that {region} can call; it has {listed}.",
        fix=f"Use a region in one of those geographies (--region){other}.",
    )


def suggested_models(region: str | None) -> list[str]:
    """Profile ids to suggest for `region`: the default model's and Claude Haiku's."""
    return [resolve_model(alias, region) for alias in (DEFAULT_ALIAS, "haiku-4.5")]
