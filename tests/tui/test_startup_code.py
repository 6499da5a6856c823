"""Start-up's compile cache (tui/startup_code.py): a second launch compiles nothing before its
first frame, and what the cache hands out is what the compiler makes of the same text."""

from __future__ import annotations

import collections
import dataclasses
import json
import marshal
import re
import subprocess
import sys
import typing
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui import startup_code

ROOT = Path(__file__).resolve().parents[2]

PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<key>[@a-zA-Z_-][a-zA-Z0-9_-]*)=(?P<value>.*)|(?P<end>;)", 0),
    (r"^\s*#(?:[0-9a-fA-F]{3}){1,2}$", re.IGNORECASE),
    (r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f]", 0),
    (r"(?<=\W)(?=\w)|(?<=\w)(?=\W)", 0),
    (rb"\x1b\[(\d+);(\d+)R", 0),
    (r"(?x) a # a verbose pattern\n  b+", 0),
    (r"(?i)café", re.UNICODE),
]


@pytest.fixture
def cache_path(tmp_path: Path) -> Iterator[Path]:
    """A cache file in tmp_path; the hooks are removed whatever the test does."""
    try:
        yield tmp_path / "startup-code.marshal"
    finally:
        startup_code.uninstall()


def _two_launches(path: Path, body: typing.Callable[[], object]) -> tuple[int, int, object]:
    """Run `body` with the cache installed twice (the first fills the file, the second reads
    it): (misses of the first, misses of the second, the second's result)."""
    startup_code.install(path)
    body()
    first = startup_code.uninstall()
    startup_code.install(path)
    result = body()
    second = startup_code.uninstall()
    return first, second, result


def test_regular_expressions_from_the_cache_equal_freshly_compiled_ones(cache_path: Path) -> None:
    def compile_all() -> list[re.Pattern[typing.Any]]:
        return [re._compiler.compile(p, f) for p, f in PATTERNS]  # type: ignore[attr-defined]

    first, second, cached = _two_launches(cache_path, compile_all)
    fresh = compile_all()  # uninstalled: the interpreter's own compiler
    assert (first, second) == (len(PATTERNS), 0)
    assert cached == fresh  # a Pattern compares its flags, text and compiled code
    assert [c.groupindex for c in cached] == [f.groupindex for f in fresh]  # type: ignore[attr-defined]
    assert cached[0].match("width=3").group("value") == "3"  # type: ignore[index]


def test_dataclasses_named_tuples_and_forward_references_compile_as_without_the_cache(
    cache_path: Path,
) -> None:
    def build() -> tuple[type, type, typing.ForwardRef]:
        point = dataclasses.make_dataclass("Point", [("x", int), ("y", int)], frozen=True)
        pair = collections.namedtuple("Pair", "left right")
        return point, pair, typing.ForwardRef("list[Point]")

    first, second, (point, pair, ref) = _two_launches(cache_path, build)
    fresh_point, fresh_pair, fresh_ref = build()
    assert first > 0 and second == 0
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__"):
        assert getattr(point, name).__code__ == getattr(fresh_point, name).__code__, name
    assert point.__init__.__annotations__ == {"x": int, "y": int, "return": None}  # type: ignore[misc]
    assert repr(point(1, 2)) == "Point(x=1, y=2)" and point(1, 2) == point(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point(1, 2).x = 3  # type: ignore[attr-defined]
    assert pair.__new__.__code__ == fresh_pair.__new__.__code__ and pair(1, 2).right == 2
    assert ref.__forward_code__ == fresh_ref.__forward_code__


def test_errors_are_raised_as_without_the_cache(cache_path: Path) -> None:
    startup_code.install(cache_path)
    with pytest.raises(SyntaxError, match="Forward reference must be an expression"):
        typing.ForwardRef("1 +")
    with pytest.raises(re.error):
        re._compiler.compile("(unclosed", 0)  # type: ignore[attr-defined]


FOREIGN = (("another python", 0), {("x", "<string>", "exec"): 1}, {})


@pytest.mark.parametrize(
    "content",
    [
        b"not a cache",
        startup_code.HEADER + (2).to_bytes(4, "big") + b"not marshal data",
        startup_code.HEADER
        + zlib.crc32(marshal.dumps(FOREIGN)).to_bytes(4, "big")
        + marshal.dumps(FOREIGN),
    ],
    ids=["damaged", "unreadable", "another-interpreter"],
)
def test_a_damaged_or_foreign_cache_is_ignored_and_replaced(
    cache_path: Path, content: bytes
) -> None:
    cache_path.write_bytes(content)
    startup_code.install(cache_path)
    point = dataclasses.make_dataclass("Point", [("x", int)])
    assert startup_code.uninstall() > 0
    assert point(1).x == 1
    assert startup_code._read(cache_path)[0] == startup_code.TAG


def _damage(path: Path) -> None:
    """One byte of the marshal data changed (the checksum no longer holds)."""
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "spoil",
    [_damage, lambda path: path.chmod(0o666)],
    ids=["checksum-fails", "writable-by-others"],
)
def test_a_cache_that_cannot_be_trusted_is_not_used(
    cache_path: Path, spoil: typing.Callable[[Path], None]
) -> None:
    """The file holds code that runs: damaged or writable by others, it is compiled anew."""

    def build() -> type:
        return dataclasses.make_dataclass("Point", [("x", int)])

    startup_code.install(cache_path)
    build()
    assert startup_code.uninstall() > 0
    spoil(cache_path)
    startup_code.install(cache_path)
    assert build()(1).x == 1
    assert startup_code.uninstall() > 0  # nothing was taken from the file
    assert cache_path.stat().st_mode & 0o777 == 0o600  # written again, the user's only
    startup_code.install(cache_path)
    build()
    assert startup_code.uninstall() == 0


def test_nothing_is_hooked_once_uninstalled(cache_path: Path) -> None:
    original = re._compiler.compile  # type: ignore[attr-defined]
    startup_code.install(cache_path)
    assert "exec" in vars(dataclasses) and re._compiler.compile is not original  # type: ignore[attr-defined]
    startup_code.uninstall()
    assert "exec" not in vars(dataclasses) and "eval" not in vars(collections)
    assert "compile" not in vars(typing) and re._compiler.compile is original  # type: ignore[attr-defined]


LAUNCH = """
import dataclasses, json, re, sys
import agent.paths, tui.entry  # what the entry imports before the cache is installed

opened = tui.entry.prepare
original_re = re._compiler.compile
parse = re._parser.parse
seen = {"regexes parsed": 0, "source texts compiled": 0}
first_frame = []


def counting_parse(*args, **kwargs):
    seen["regexes parsed"] += not first_frame
    return parse(*args, **kwargs)


def count_compiles(event, args):
    if event == "compile" and not first_frame and args[1] == "<string>":
        seen["source texts compiled"] += 1


re._parser.parse = counting_parse
sys.addaudithook(count_compiles)


def prepare(argv):
    found = opened(argv)
    import tui.app

    class Probe(tui.app.TabletalkApp):
        def run(self, **_):
            return super().run(headless=True, size=(80, 24))

        def on_ready(self) -> None:
            first_frame.append(True)
            self.call_after_refresh(self._after_first_frame)

        def _after_first_frame(self) -> None:
            seen["hooked after the first frame"] = (
                "exec" in vars(dataclasses) or re._compiler.compile is not original_re
            )
            seen["tables"] = self.query_one("#table-list").option_count
            self.exit()

    tui.app.TabletalkApp = Probe
    return found


tui.entry.prepare = prepare
status = tui.entry.main([])
print(json.dumps(seen))
sys.exit(status)
"""


def _launch() -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_launch_compiles_nothing_before_its_first_frame(isolated_dirs: Path) -> None:
    first = _launch()
    second = _launch()
    assert first["regexes parsed"] > 0 and first["source texts compiled"] > 0, first
    assert second == {
        "regexes parsed": 0,
        "source texts compiled": 0,
        "hooked after the first frame": False,
        "tables": first["tables"],
    }
    assert (isolated_dirs / "cache" / "tabletalk" / startup_code.FILE_NAME).is_file()


def test_regexes_compile_as_usual_when_pythons_private_re_internals_differ(
    cache_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache calls `re`'s private compiler steps; on a Python where they differ, every
    pattern still compiles (and a bad one still raises re.error), so the app still starts."""

    def moved(*_: object) -> object:
        raise AttributeError("module 're._compiler' has no attribute '_code'")

    monkeypatch.setattr(startup_code, "_regex_parts", moved)
    startup_code.install(cache_path)
    try:
        pattern = re._compiler.compile(r"(?P<word>\w+)-(\d+)", 0)  # type: ignore[attr-defined]
        assert pattern.match("abc-12").group("word") == "abc"
        with pytest.raises(re.error):
            re._compiler.compile(r"(unclosed", 0)  # type: ignore[attr-defined]
    finally:
        startup_code.uninstall()
