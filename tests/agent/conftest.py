"""Fixtures for agent tests: the scripted Converse endpoint."""

from __future__ import annotations

from tests.support.scripted_bedrock import scripted_bedrock

__all__ = ["scripted_bedrock"]

from tests.support.moto_dynamodb import dynamo_endpoint, moto_server  # noqa: E402

__all__ += ["dynamo_endpoint", "moto_server"]
