"""The typed errors of tabletalk: each carries a title and the fix a person (or model) can apply."""

from __future__ import annotations


class TabletalkError(Exception):
    """Base error; `str()` is the message, `fix` says what to do about it."""

    title = "Error"

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def render(self) -> str:
        """Message plus fix, on one or two lines, for a terminal or a notification."""
        return f"{self.message}\n{self.fix}" if self.fix else self.message


class ConfigError(TabletalkError):
    """The config file is unreadable or has an invalid field."""

    title = "Config error"


class StoreError(TabletalkError):
    """A store could not be opened or answered with an error."""

    title = "Store error"


class InDoubtError(StoreError):
    """A commit unit whose request may have been applied although it failed (its answer was
    lost, or an earlier attempt of a retried request timed out): `ids` are its changes, which
    the staging area settles from the store instead of keeping them staged as never sent."""

    def __init__(self, message: str, *, fix: str | None = None, ids: list[str]) -> None:
        super().__init__(message, fix=fix)
        self.ids = ids


class UnknownTableError(StoreError):
    """A table name that the store does not have."""

    title = "Unknown table"


class UnknownColumnError(StoreError):
    """A column name that the table does not have."""

    title = "Unknown column"


class BadKeyError(StoreError):
    """A malformed key, or a key that does not match the operation."""

    title = "Bad key"


class ReadOnlyQueryError(StoreError):
    """A statement other than a read-only SELECT/WITH query."""

    title = "Not a read-only query"


class StagingError(TabletalkError):
    """A change could not be staged, found, or committed."""

    title = "Staging error"


class StagedSetMoved(StagingError):
    """Changes to commit are no longer as the user was shown them (another process committed,
    discarded or changed them): nothing was committed."""


class BedrockError(TabletalkError):
    """A Bedrock call failed in a way the user can act on."""

    title = "Bedrock error"
