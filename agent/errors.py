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

    def render_sentences(self) -> str:
        """`render` as `message.` then `Fix.`, for errors whose text is also written for the
        model (no full stops, a fix in lower case: "no such file: x", "check the path"), so a
        notification does not read as one run-on phrase. The message keeps its first letter: it
        may start with a file name."""
        message = full_stop(self.message)
        if not self.fix:
            return message
        fix = self.fix.strip()
        return f"{message}\n{full_stop(fix[:1].upper() + fix[1:])}"


def full_stop(text: str) -> str:
    """`text` ending a sentence (a full stop added unless it ends in . ! ? or …)."""
    text = text.strip()
    return text if not text or text[-1] in ".!?…" else text + "."


class ConfigError(TabletalkError):
    """The config file is unreadable or has an invalid field."""

    title = "Config error"


class StoreError(TabletalkError):
    """A store could not be opened or answered with an error."""

    title = "Store error"


class ReadStopped(StoreError):
    """A read ended on request (Stop), not because the query or the store is wrong: callers
    that reword a store error as the caller's mistake let this one through as it is."""


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


class QueryFailed(StoreError):
    """SQLite refused a statement's text or failed running it; `detail` is SQLite's own words
    (they may quote the statement, so callers that built it reword them)."""

    def __init__(self, message: str, *, fix: str | None = None, detail: str) -> None:
        super().__init__(message, fix=fix)
        self.detail = detail


class FilterError(StoreError):
    """A table filter (a condition) that does not work, worded about what was written."""

    title = "Filter not valid"


class StagingError(TabletalkError):
    """A change could not be staged, found, or committed."""

    title = "Staging error"


class StagedSetMoved(StagingError):
    """Changes to commit are no longer as the user was shown them (another process committed,
    discarded or changed them): nothing was committed."""


class BedrockError(TabletalkError):
    """A Bedrock call failed in a way the user can act on."""

    title = "Bedrock error"
