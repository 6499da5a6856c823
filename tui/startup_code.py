"""Code start-up compiles on every launch, compiled once and kept between launches: the
methods `dataclasses` writes for every dataclass, named tuples' constructors, typing's
forward references and regular expressions (parsed and compiled to `_sre` code in pure
Python). Compiling them took about a tenth of the launch's CPU time.

The `tabletalk` entry installs the hooks before its imports and the app removes them on its
first frame (`uninstall`), so only start-up uses them. The cache holds what the compiler made
of the same text on the same interpreter (it is keyed by the exact Python version and
`_sre.MAGIC`, and the hooks compile as the hooked modules would: no inherited `__future__`
flags). The file holds code, so it is used only when it is the user's own, writable by no one
else, and its checksum holds; one that cannot be read or is for another interpreter is
ignored, and writing it is best effort.
"""

from __future__ import annotations
import __future__

import builtins
import importlib
import marshal
import os
import stat
import sys
import zlib
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

FILE_NAME = "startup-code.marshal"
HEADER = b"tabletalk startup code 1\n"
"""The file: this line, the CRC-32 of the rest (4 bytes, big-endian), then the marshal data."""
MAX_BYTES = 64 * 1024 * 1024
"""A larger file is not read (the cache of a launch is well under a megabyte)."""
HOOKS = (("dataclasses", "exec"), ("collections", "eval"), ("typing", "compile"))
"""(module, builtin it calls on generated source): the module's global of that name is
shadowed by a caching one while installed."""

_sre: Any = importlib.import_module("_sre")
_re_compiler: Any = importlib.import_module("re._compiler")
_re_parser: Any = importlib.import_module("re._parser")
_original_re_compile = _re_compiler.compile

TAG = (sys.version, _sre.MAGIC)

CodeKey = tuple[str, str, str]
RegexKey = tuple[str | bytes, int]
RegexParts = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


class _Cache:
    """What this launch loaded from the file and what it compiled or used."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stored_code: dict[CodeKey, Any] = {}
        self.stored_regexes: dict[RegexKey, RegexParts] = {}
        self.used_code: dict[CodeKey, Any] = {}
        self.used_regexes: dict[RegexKey, RegexParts] = {}
        self.missed = 0
        self.hooked: list[ModuleType] = []


_cache: _Cache | None = None


def cache_file() -> Path:
    """Where the compiled code is kept."""
    from agent import paths

    return paths.cache_dir() / FILE_NAME


def compiled(source: str, filename: str, mode: str) -> Any:
    """The code object `compile(source, filename, mode, dont_inherit=True)` returns."""
    cache = _cache
    if cache is None:
        return builtins.compile(source, filename, mode, dont_inherit=True)
    key = (source, filename, mode)
    code = cache.used_code.get(key)
    if code is None:
        code = cache.stored_code.get(key)
        if code is None:
            code = builtins.compile(source, filename, mode, dont_inherit=True)
            cache.missed += 1
        cache.used_code[key] = code
    return code


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec`, with source text compiled through the cache."""
    if globals is None:
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    if type(source) is str:
        source = compiled(source, "<string>", "exec")
    builtins.exec(source, globals, locals)


def _eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
    """`eval`, with source text compiled through the cache."""
    if globals is None:
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    if type(source) is str:
        source = compiled(source, "<string>", "eval")
    return builtins.eval(source, globals, locals)


def _compile(
    source: Any,
    filename: Any,
    mode: str,
    flags: int = 0,
    dont_inherit: bool = False,
    optimize: int = -1,
    **kwargs: Any,
) -> Any:
    """`compile`: plain source text through the cache, anything else as it is."""
    if type(source) is str and type(filename) is str and not flags and optimize == -1:
        if not kwargs:
            return compiled(source, filename, mode)
    return builtins.compile(source, filename, mode, flags, dont_inherit, optimize, **kwargs)


SHADOWS = {"exec": _exec, "eval": _eval, "compile": _compile}


def _regex_parts(pattern: str | bytes, flags: int) -> RegexParts:
    """What `re._compiler.compile` passes to `_sre.compile` after the pattern."""
    parsed = _re_parser.parse(pattern, flags)
    code = _re_compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        int(flags | parsed.state.flags),
        [int(op) for op in code],  # the opcodes are int subclasses marshal refuses
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


def _re_compile(pattern: Any, flags: Any = 0) -> Any:
    """`re._compiler.compile`, with the compiled code of a pattern string taken from the cache."""
    cache = _cache
    if (
        cache is None
        or type(pattern) not in (str, bytes)
        or not isinstance(flags, int)
        or flags & _re_compiler.SRE_FLAG_DEBUG
    ):
        return _original_re_compile(pattern, flags)
    key = (pattern, int(flags))
    try:
        parts = cache.used_regexes.get(key)
        if parts is None:
            parts = cache.stored_regexes.get(key)
            if parts is None:
                parts = _regex_parts(*key)
                cache.missed += 1
            cache.used_regexes[key] = parts
        return _sre.compile(pattern, *parts)
    except Exception:  # noqa: BLE001 - a bad pattern raises again below; anything else (another
        # Python's private `re` internals) must never stop the app: compile as usual
        cache.used_regexes.pop(key, None)
        return _original_re_compile(pattern, flags)


def _without_future_flags(module: ModuleType) -> bool:
    """True when the module's own compiles inherit no `__future__` flags (as ours do not)."""
    return not any(isinstance(value, __future__._Feature) for value in vars(module).values())


def _is_code_key(key: object) -> bool:
    """True for a (source, filename, mode) key of strings."""
    return type(key) is tuple and len(key) == 3 and all(type(part) is str for part in key)


def install(path: Path | None = None) -> None:
    """Compile through the cache in `path` (default `cache_file()`) until `uninstall`."""
    global _cache
    if _cache is not None:
        return
    cache = _Cache(path or cache_file())
    stored = _read(cache.path) if cache.path else None
    if (
        isinstance(stored, tuple)
        and len(stored) == 3
        and stored[0] == TAG
        and isinstance(stored[1], dict)
        and isinstance(stored[2], dict)
    ):
        cache.stored_code = {
            key: code
            for key, code in stored[1].items()
            if type(code) is CodeType and _is_code_key(key)
        }
        cache.stored_regexes = stored[2]  # a wrong entry fails `_sre.compile`: compiled anew
    _cache = cache
    _re_compiler.compile = _re_compile  # first: importing the hooked modules compiles some
    for name, builtin in HOOKS:
        module = importlib.import_module(name)
        if builtin not in vars(module) and _without_future_flags(module):
            setattr(module, builtin, SHADOWS[builtin])
            cache.hooked.append(module)


def uninstall() -> int:
    """Compile as usual again and keep what this launch used when it compiled anything new;
    returns how many compilations missed the cache (0 when not installed)."""
    global _cache
    cache = _cache
    if cache is None:
        return 0
    _cache = None
    _re_compiler.compile = _original_re_compile
    for module in cache.hooked:
        for _name, builtin in HOOKS:
            if vars(module).get(builtin) is SHADOWS[builtin]:
                delattr(module, builtin)
    if cache.missed and cache.path is not None:
        _write(cache.path, (TAG, cache.used_code, cache.used_regexes))
    return cache.missed


def _read(path: Path) -> Any:
    """What the file holds, or None: no file, not a regular file of at most MAX_BYTES, not the
    user's own or writable by others, a failed checksum, or data marshal cannot read (then
    start-up compiles as usual). Opened without blocking, so a FIFO there cannot stall start-up."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            getuid = getattr(os, "getuid", None)
            if (
                not stat.S_ISREG(status.st_mode)
                or status.st_size > MAX_BYTES
                or (getuid is not None and status.st_uid != getuid())
                or status.st_mode & 0o022
            ):
                return None
            data = handle.read(MAX_BYTES + 1)
        payload = data[len(HEADER) + 4 :]
        checksum = int.from_bytes(data[len(HEADER) : len(HEADER) + 4], "big")
        if len(data) > MAX_BYTES or not data.startswith(HEADER) or zlib.crc32(payload) != checksum:
            return None
        return marshal.loads(payload)
    except Exception:  # noqa: BLE001 - whatever the file holds, start-up compiles as usual
        return None


def _write(path: Path, data: Any) -> None:
    """Replace the file at once (a reader sees the old or the new one), readable and writable
    by the user only; errors are ignored."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        payload = marshal.dumps(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(HEADER + zlib.crc32(payload).to_bytes(4, "big") + payload)
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
