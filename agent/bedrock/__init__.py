"""Amazon Bedrock transport: client, Converse/ConverseStream events, errors, prompt caching."""

from __future__ import annotations

from agent.bedrock.caching import CachePointMemory, place_cache_points
from agent.bedrock.client import DEFAULT_MODEL, MODELS, make_client, model_family, resolve_model
from agent.bedrock.converse import BedrockCaller
from agent.bedrock.errors import BedrockCallError, is_cache_point_rejection, translate
from agent.bedrock.stream import (
    ModelEvent,
    StepCancelled,
    StepEnd,
    TextChunk,
    ToolUseBlock,
    converse_events,
)

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "BedrockCallError",
    "CachePointMemory",
    "BedrockCaller",
    "ModelEvent",
    "StepCancelled",
    "StepEnd",
    "TextChunk",
    "ToolUseBlock",
    "converse_events",
    "is_cache_point_rejection",
    "make_client",
    "model_family",
    "place_cache_points",
    "resolve_model",
    "translate",
]
