"""Fixtures for agent tests: the scripted Converse endpoint."""

from __future__ import annotations

from tests.support.scripted_bedrock import scripted_bedrock

__all__ = ["scripted_bedrock"]
