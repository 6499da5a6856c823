"""botocore's parameter validation of Converse requests, applied once to each part.

A client validates the whole request on every call: the whole history at every step, which
grows with the conversation. The caller's client skips that (`parameter_validation=False`)
and `RequestCheck` runs the same validator only on what is new since the last request: the
messages after those already checked (a history only grows, except a rewind, which shortens
it, or a compaction, which writes plain text blocks), and the system blocks, toolConfig and
inference settings when they are other objects than last time.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ParamValidationError
from botocore.model import Shape
from botocore.validate import ParamValidator


class RequestCheck:
    """Validates requests for one operation's input shape, part by part, each part once."""

    def __init__(self, input_shape: Shape) -> None:
        self._shape = input_shape
        self._validator = ParamValidator()
        self._fixed: dict[str, Any] = {}
        """The non-message members last checked (kept so their identities stay valid)."""
        self._count = 0
        self._last: dict[str, Any] | None = None
        self._last_blocks = 0

    @classmethod
    def for_client(cls, client: Any) -> RequestCheck | None:
        """A check for the client's ConverseStream input (same members as Converse); None for
        a client without botocore's service model."""
        try:
            shape = client.meta.service_model.operation_model("ConverseStream").input_shape
        except AttributeError:
            return None
        return cls(shape)

    def check(self, request: dict[str, Any]) -> None:
        """Raise botocore's ParamValidationError for a request it would refuse."""
        part = {
            name: value
            for name, value in request.items()
            if name != "messages" and self._fixed.get(name) is not value
        }
        messages: list[dict[str, Any]] = request.get("messages") or []
        start = self._first_unchecked(messages)
        part["messages"] = messages[start:]
        part.setdefault("modelId", request.get("modelId"))
        report = self._validator.validate(part, self._shape)
        if report.has_errors():
            raise ParamValidationError(report=report.generate_report())
        self._fixed = {name: value for name, value in request.items() if name != "messages"}
        self._count = len(messages)
        self._last = messages[-1] if messages else None
        self._last_blocks = len(self._last.get("content") or []) if self._last else 0

    def _first_unchecked(self, messages: list[dict[str, Any]]) -> int:
        """Index of the first message not checked yet (0: check them all)."""
        count = self._count
        if not count or len(messages) < count:
            return 0
        last = messages[count - 1]
        if last is not self._last:
            return 0
        if len(last.get("content") or []) != self._last_blocks:
            return count - 1  # content added to the last message checked: check it again
        return count
