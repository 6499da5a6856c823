"""Read-only PartiQL: a small tokenizer that lets through exactly one SELECT statement.

DynamoDB's ExecuteStatement also runs INSERT/UPDATE/DELETE, so read-only is ours to enforce.
Quotes are honoured ('text' with '' escapes, "identifiers" with "" escapes); comments and
`Ion literals` are refused outright, so nothing can hide behind one (a FROM inside a literal
would otherwise name the table the guard checks while DynamoDB reads another).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.errors import ReadOnlyQueryError, StoreError

_WRITE_WORDS = {"INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "REMOVE", "EXISTS", "SET"}
READ_ONLY_FIX = (
    'Send one PartiQL SELECT, e.g. SELECT * FROM "orders" WHERE "status" = \'pending\'. '
    "To change items, stage the change with stageItem or bulkEdit; a person reviews and commits it."
)


@dataclass(frozen=True)
class Token:
    """A word, a quoted string ('...'), a quoted identifier ("..."), or one symbol."""

    kind: str  # "word", "string", "ident", "symbol"
    text: str


def tokenize(statement: str) -> list[Token]:
    """Split PartiQL into tokens; unterminated quotes and comments raise."""
    tokens: list[Token] = []
    i, n = 0, len(statement)
    while i < n:
        ch = statement[i]
        if ch.isspace():
            i += 1
        elif statement.startswith(("--", "/*", "//"), i):
            raise ReadOnlyQueryError("comments are not allowed in a query", fix=READ_ONLY_FIX)
        elif ch == "`":
            raise ReadOnlyQueryError(
                "Ion literals (`...`) are not allowed in a query",
                fix="Write values as 'text' strings and plain numbers. " + READ_ONLY_FIX,
            )
        elif ch in "'\"":
            end, text = _quoted(statement, i, ch)
            tokens.append(Token("string" if ch == "'" else "ident", text))
            i = end
        elif ch.isalnum() or ch in "_$":
            j = i
            while j < n and (statement[j].isalnum() or statement[j] in "_$."):
                j += 1
            tokens.append(Token("word", statement[i:j]))
            i = j
        else:
            tokens.append(Token("symbol", ch))
            i += 1
    return tokens


def _quoted(text: str, start: int, quote: str) -> tuple[int, str]:
    out: list[str] = []
    i = start + 1
    while i < len(text):
        if text[i] == quote:
            if i + 1 < len(text) and text[i + 1] == quote:
                out.append(quote)
                i += 2
                continue
            return i + 1, "".join(out)
        out.append(text[i])
        i += 1
    raise StoreError(
        f"the query has an unterminated {quote} quote",
        fix="Close every quoted string ('text') and identifier (\"name\").",
    )


def check_select(statement: str) -> list[Token]:
    """The tokens of `statement` when it is a single read-only SELECT; else ReadOnlyQueryError."""
    tokens = tokenize(statement)
    while tokens and tokens[-1] == Token("symbol", ";"):
        tokens.pop()
    if not tokens:
        raise StoreError("the query is empty", fix=READ_ONLY_FIX)
    if any(t == Token("symbol", ";") for t in tokens):
        raise ReadOnlyQueryError("only one statement per query is allowed", fix=READ_ONLY_FIX)
    first = tokens[0]
    if first.kind != "word" or first.text.upper() != "SELECT":
        raise ReadOnlyQueryError(
            f"only read-only SELECT statements are allowed, not {first.text[:20]!r}",
            fix=READ_ONLY_FIX,
        )
    for token in tokens[1:]:
        if token.kind == "word" and token.text.upper() in _WRITE_WORDS:
            raise ReadOnlyQueryError(
                f"{token.text.upper()} is not allowed in a read-only query", fix=READ_ONLY_FIX
            )
    return tokens


def table_of(tokens: list[Token]) -> tuple[str, str | None] | None:
    """(table, index) named after FROM (`"t"`, `t`, `"t"."i"`), or None when not found."""
    for i, token in enumerate(tokens):
        if token.kind == "word" and token.text.upper() == "FROM" and i + 1 < len(tokens):
            name = tokens[i + 1]
            if name.kind == "ident":
                index = None
                if (
                    i + 3 < len(tokens)
                    and tokens[i + 2].text == "."
                    and tokens[i + 3].kind == "ident"
                ):
                    index = tokens[i + 3].text
                return name.text, index
            if name.kind == "word":
                table, _, index = name.text.partition(".")
                return table, index or None
    return None


def quote_name(name: str) -> str:
    """A PartiQL identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'
