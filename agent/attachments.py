"""Files attached to a conversation: validated on attach, read lazily in pages of lines/rows.

File content is data for the model to read; nothing here interprets it.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent.errors import TabletalkError
from agent.file_kind import open_regular, special_file_kind
from agent.text_plural import counted

AttachmentKind = Literal["text", "csv", "json", "pdf"]
MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
SUPPORTED_TYPES = "text files (.txt, .md, .log, source code …), CSV/TSV, JSON/JSON Lines and PDF"
MAX_CELL_CHARS = 500
MAX_LINE_CHARS = 2000
MAX_RESULT_CHARS = 40_000
DEFAULT_LIMITS = {"text": 200, "csv": 50, "json": 50, "pdf": 5}
MAX_LIMITS = {"text": 1000, "csv": 500, "json": 500, "pdf": 20}
_SNIFF_BYTES = 8192
_CSV_SUFFIXES = {".csv", ".tsv"}
_JSON_SUFFIXES = {".json", ".geojson"}
_JSON_LINES_SUFFIXES = {".jsonl", ".ndjson"}


class AttachmentError(TabletalkError):
    """A file that cannot be attached or read."""

    title = "Attachment error"


@dataclass(frozen=True)
class Attachment:
    """One attached file, as validated when it was attached."""

    id: str
    name: str
    path: Path
    size: int
    kind: AttachmentKind

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for tool results and saved conversations)."""
        return {
            "id": self.id,
            "name": self.name,
            "path": str(self.path),
            "size": self.size,
            "kind": self.kind,
        }


def detect_kind(path: Path) -> AttachmentKind:
    """The kind of a file from its extension and first bytes; binary non-PDF files are refused."""
    with open_regular(path, follow_links=False) as handle:
        head = handle.read(_SNIFF_BYTES)
    suffix = path.suffix.lower()
    if head.startswith(b"%PDF-"):
        return "pdf"
    if suffix == ".pdf":
        raise AttachmentError(
            f"{path.name} is named .pdf but is not a PDF file", fix="attach the original PDF file"
        )
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        binary = b"\x00" in head
    except UnicodeDecodeError:
        binary = True
    if binary:
        raise AttachmentError(
            f"{path.name} is a binary file, which cannot be attached",
            fix=f"attach one of the supported types: {SUPPORTED_TYPES}",
        )
    if suffix in _CSV_SUFFIXES:
        return "csv"
    if suffix in _JSON_SUFFIXES | _JSON_LINES_SUFFIXES:
        return "json"
    return "text"


class AttachmentSet:
    """The ordered attachments of one conversation, addressed by id ("att1") or file name."""

    def __init__(self, items: Iterable[Attachment] = ()) -> None:
        self._items: list[Attachment] = list(items)

    def __iter__(self) -> Iterator[Attachment]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, path: str | Path) -> Attachment:
        """Validate and attach a file (attaching the same file twice returns the first one)."""
        path = Path(path).expanduser()
        if not path.exists():
            raise AttachmentError(f"no such file: {path}", fix="check the path and attach it again")
        if path.is_dir():
            raise AttachmentError(f"{path} is a folder", fix="attach a single file, not a folder")
        kind = special_file_kind(path)
        if kind is not None or not path.is_file():
            raise AttachmentError(
                f"{path} is {kind}, not a regular file"
                if kind
                else f"{path} is not a regular file",
                fix="attach a regular file (save the data to a file first)",
            )
        path = path.resolve()
        for existing in self._items:
            if existing.path == path:
                return existing
        size = path.stat().st_size
        if size > MAX_ATTACHMENT_BYTES:
            raise AttachmentError(
                f"{path.name} is {size / 1_048_576:.1f} MB; the limit is {MAX_ATTACHMENT_BYTES // 1_048_576} MB",
                fix="attach a smaller file (for example an excerpt or a filtered export)",
            )
        numbers = [int(a.id[3:]) for a in self._items if a.id[3:].isdigit()]
        try:
            kind = detect_kind(path)
        except OSError as exc:
            raise _unreadable(path, exc, "attach a file you can read") from exc
        attachment = Attachment(f"att{max(numbers, default=0) + 1}", path.name, path, size, kind)
        self._items.append(attachment)
        return attachment

    def find(self, id_or_name: str) -> Attachment:
        """The attachment with this id or file name (case-insensitive on names)."""
        wanted = id_or_name.strip()
        for test in (
            lambda a: a.id == wanted,
            lambda a: a.name == wanted,
            lambda a: a.name.lower() == wanted.lower(),
            lambda a: str(a.path) == wanted,
        ):
            for attachment in self._items:
                if test(attachment):
                    return attachment
        listed = ", ".join(f"{a.id} ({a.name})" for a in self._items) or "none attached"
        raise AttachmentError(
            f"no attachment '{id_or_name}'", fix=f"use an id or name from listAttachments: {listed}"
        )

    def to_list(self) -> list[dict[str, Any]]:
        """The attachments as JSON-ready dicts, for saving with a conversation."""
        return [a.to_dict() for a in self._items]

    @classmethod
    def from_list(cls, data: Iterable[dict[str, Any]]) -> AttachmentSet:
        """Rebuild from `to_list()` output (files are not re-validated until read)."""
        return cls(
            Attachment(str(d["id"]), str(d["name"]), Path(d["path"]), int(d["size"]), d["kind"])
            for d in data
        )

    def read(
        self, id_or_name: str, offset: int = 0, limit: int | None = None, as_text: bool = False
    ) -> dict[str, Any]:
        """A page of an attachment: lines of text, rows of CSV/JSON, or pages of a PDF."""
        attachment = self.find(id_or_name)
        special = special_file_kind(attachment.path)
        if special is not None:
            raise AttachmentError(
                f"{attachment.name} at {attachment.path} is now {special}, not a regular file",
                fix="ask the user to attach the file again",
            )
        if not attachment.path.is_file():
            raise AttachmentError(
                f"{attachment.name} is no longer at {attachment.path}",
                fix="ask the user to attach it again",
            )
        size = attachment.path.stat().st_size
        if size > MAX_ATTACHMENT_BYTES:
            raise AttachmentError(
                f"{attachment.name} has grown to {size / 1_048_576:.1f} MB since it was "
                f"attached; the limit is {MAX_ATTACHMENT_BYTES // 1_048_576} MB",
                fix="ask the user to attach a smaller file (for example an excerpt)",
            )
        kind: AttachmentKind = "text" if as_text and attachment.kind != "pdf" else attachment.kind
        limit = max(1, min(limit or DEFAULT_LIMITS[kind], MAX_LIMITS[kind]))
        offset = max(0, offset)
        reader = {"text": read_text, "csv": read_csv, "json": read_json, "pdf": read_pdf}[kind]
        try:
            page = reader(attachment.path, offset, limit)
        except OSError as exc:
            raise _unreadable(attachment.path, exc, "ask the user to attach it again") from exc
        return {"id": attachment.id, "name": attachment.name, "kind": kind, **page}


def _unreadable(path: Path, exc: OSError, fix: str) -> AttachmentError:
    """A file the system refuses to read (permissions, an I/O error), named with the reason."""
    return AttachmentError(
        f"cannot read {path}: {exc.strerror or exc}",
        fix=f"check the file's permissions, or {fix}",
    )


class _Capped(io.RawIOBase):
    """A file read no further than `cap` bytes: one that keeps growing while it is read
    still costs bounded memory and time."""

    def __init__(self, path: Path, cap: int) -> None:
        self._file = open_regular(path, follow_links=False)
        self._cap = cap

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer: Any) -> int:
        room = min(len(buffer), self._cap - self._file.tell())
        if room <= 0:
            return 0
        return self._file.readinto(memoryview(buffer)[:room]) or 0

    def close(self) -> None:
        self._file.close()
        super().close()


def open_text(path: Path, newline: str | None = None) -> io.TextIOWrapper:
    """An attachment opened as UTF-8 text, read no further than MAX_ATTACHMENT_BYTES."""
    raw = io.BufferedReader(_Capped(path, MAX_ATTACHMENT_BYTES))
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline=newline)


def _lines(handle: io.TextIOBase) -> Iterator[str]:
    """Lines of a text stream, each cut to MAX_LINE_CHARS without reading a long one whole."""
    while line := handle.readline(MAX_LINE_CHARS + 1):
        if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
            while (rest := handle.readline(65536)) and not rest.endswith("\n"):
                pass
        yield line


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[:size] + "…"


def _page(total: int, offset: int, shown: int) -> dict[str, Any]:
    following = offset + shown
    return {"offset": offset, "nextOffset": following if following < total else None}


def read_text(path: Path, offset: int, limit: int) -> dict[str, Any]:
    """Lines `offset`..`offset+limit` of a text file, streamed; long lines are cut."""
    lines: list[str] = []
    budget = MAX_RESULT_CHARS
    total = 0
    with open_text(path) as handle:
        for number, line in enumerate(_lines(handle)):
            total = number + 1
            if number >= offset and len(lines) < limit and budget > 0:
                line = _cut(line.rstrip("\n"), MAX_LINE_CHARS)
                lines.append(line)
                budget -= len(line)
    return {"lines": lines, "totalLines": total, **_page(total, offset, len(lines))}


def _csv_reader(path: Path, handle: io.TextIOBase) -> csv.DictReader[str]:
    sample = handle.read(_SNIFF_BYTES)
    handle.seek(0)
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.excel
    return csv.DictReader(handle, dialect=dialect)


def read_csv(path: Path, offset: int, limit: int) -> dict[str, Any]:
    """Rows of a CSV file as dicts keyed by its header row, streamed, with the total count."""
    rows: list[dict[str, Any]] = []
    total = 0
    budget = MAX_RESULT_CHARS
    with open_text(path, newline="") as handle:
        reader = _csv_reader(path, handle)
        try:
            for number, record in enumerate(reader):
                total = number + 1
                if number >= offset and len(rows) < limit and budget > 0:
                    row = {
                        (k if k is not None else "_extra"): (
                            _cut(v, MAX_CELL_CHARS) if isinstance(v, str) else v
                        )
                        for k, v in record.items()
                    }
                    budget -= len(json.dumps(row, ensure_ascii=False))
                    rows.append(row)
        except csv.Error as exc:
            raise AttachmentError(
                f"{path.name} is not valid CSV near row {total + 1}: {exc}",
                fix="read it as plain text with as_text=true",
            ) from exc
        columns = list(reader.fieldnames or [])
    return {"columns": columns, "rows": rows, "totalRows": total, **_page(total, offset, len(rows))}


def _iter_json_array(handle: io.TextIOBase) -> Iterator[Any]:
    """Items of a top-level JSON array, decoded one by one without loading the whole file."""
    decoder = json.JSONDecoder()
    buffer = handle.read(65536).lstrip()[1:]  # drop the opening [
    position = 0
    while True:
        while True:
            stripped = buffer[position:].lstrip(" \t\r\n,")
            position = len(buffer) - len(stripped)
            if stripped or not (more := handle.read(65536)):
                break
            buffer, position = buffer[position:] + more, 0
        if not stripped or stripped[0] == "]":
            return
        try:
            item, end = decoder.raw_decode(buffer, position)
        except json.JSONDecodeError:
            more = handle.read(65536)
            if not more:
                raise
            buffer, position = buffer[position:] + more, 0
            continue
        if end == len(buffer) and isinstance(item, int | float):  # a number may continue
            more = handle.read(65536)
            if more:
                buffer, position = buffer[position:] + more, 0
                continue
        yield item
        position = end


def _shrink(value: Any, depth: int = 0) -> Any:
    """A huge JSON value made readable: long strings cut, long lists and objects shortened,
    nothing nested deeper than 7 levels (deeper values are named by their size)."""
    if isinstance(value, str):
        return _cut(value, MAX_CELL_CHARS)
    if isinstance(value, list):
        if depth > 6:
            return f"[list of {counted(len(value), 'item')}]"
        head = [_shrink(v, depth + 1) for v in value[:20]]
        return head + ([f"… {counted(len(value) - 20, 'more item')}"] if len(value) > 20 else [])
    if isinstance(value, dict):
        if depth > 6:
            return f"{{object with {counted(len(value), 'key')}}}"
        items = list(itertools.islice(value.items(), 50))
        out = {str(k): _shrink(v, depth + 1) for k, v in items}
        if len(value) > 50:
            out["…"] = f"{len(value) - 50} more keys"
        return out
    return value


def read_json(path: Path, offset: int, limit: int) -> dict[str, Any]:
    """A top-level JSON list (or JSON Lines) as rows with offset/limit; an object as itself."""
    json_lines = path.suffix.lower() in _JSON_LINES_SUFFIXES
    with open_text(path) as handle:
        first = handle.read(4096).lstrip()[:1]
        handle.seek(0)
        try:
            if json_lines or first == "[":
                items: Iterable[Any] = (
                    (json.loads(line) for line in handle if line.strip())
                    if json_lines
                    else _iter_json_array(handle)
                )
                rows: list[Any] = []
                total = 0
                budget = MAX_RESULT_CHARS
                for number, item in enumerate(items):
                    total = number + 1
                    if number >= offset and len(rows) < limit and budget > 0:
                        row = _shrink(item)
                        budget -= len(json.dumps(row, ensure_ascii=False))
                        rows.append(row)
                return {"rows": rows, "totalRows": total, **_page(total, offset, len(rows))}
            document = json.load(handle)
        except json.JSONDecodeError as exc:
            raise AttachmentError(
                f"{path.name} is not valid JSON: {exc.msg} at line {exc.lineno}",
                fix="read it as plain text with as_text=true",
            ) from exc
        except RecursionError as exc:  # json raises it, not ValueError, past the recursion limit
            raise AttachmentError(
                f"{path.name} is JSON nested too deeply to read as values",
                fix="read it as plain text with as_text=true",
            ) from exc
    shrunk = _shrink(document)
    out: dict[str, Any] = {"value": shrunk}
    if shrunk != document:
        out["note"] = (
            "The value was shortened (long strings, lists and objects cut); use as_text=true for the raw file."
        )
    return out


def read_pdf(path: Path, offset: int, limit: int) -> dict[str, Any]:
    """The extracted text of PDF pages `offset`..`offset+limit` (0-based), page by page."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    with open_regular(path, follow_links=False) as handle:
        data = handle.read(MAX_ATTACHMENT_BYTES + 1)
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise AttachmentError(
            f"{path.name} has grown past {MAX_ATTACHMENT_BYTES // 1_048_576} MB since it was attached",
            fix="ask the user to attach a smaller file",
        )
    try:
        reader = PdfReader(io.BytesIO(data))
        total = len(reader.pages)
        pages = []
        budget = MAX_RESULT_CHARS
        for number in range(offset, min(offset + limit, total)):
            if budget <= 0:
                break
            text = _cut((reader.pages[number].extract_text() or "").strip(), max(budget, 1000))
            budget -= len(text)
            pages.append({"page": number + 1, "text": text})
    except (PyPdfError, ValueError, KeyError, OSError) as exc:
        raise AttachmentError(
            f"{path.name} could not be read as a PDF: {exc}",
            fix="ask the user for an unencrypted PDF or a text version",
        ) from exc
    if pages and not any(p["text"] for p in pages):
        raise AttachmentError(
            f"pages {offset + 1}-{offset + len(pages)} of {path.name} (of {total}) have no extractable text; "
            "it may be scanned images",
            fix="try other pages with offset, or ask the user for a text version",
        )
    return {"pages": pages, "totalPages": total, **_page(total, offset, len(pages))}
