"""A message typed but not sent when the app quits is kept and comes back in the box at the
next start (once), with the files attached to it; a damaged or stale draft never costs a start."""

from __future__ import annotations

from pathlib import Path

from tests.tui.helpers import SIZE, settle
from tui.unsent_draft import UnsentDraft


async def _quit_with(app, pilot, text: str, files: list[Path] = ()) -> str:
    await settle(app, pilot)
    for path in files:
        assert app.chat.attach(path)
    app.chat.composer.text = text
    await pilot.press("ctrl+q")
    return " ".join(str(r) for r in app._exit_renderables)


async def test_an_unsent_message_and_its_file_come_back_once_after_quitting(
    make_app, tmp_path: Path
) -> None:
    report = tmp_path / "report.csv"
    report.write_text("id,total\n1,5\n", encoding="utf-8")
    question = "which orders in\nreport.csv are late?"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        said = await _quit_with(app, pilot, question, [report])
    assert "Your unsent message is kept" in said

    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat.composer.text == question
        assert again.chat.attachments.paths == [report]
        assert again.chat.composer.cursor_location == again.chat.composer.document.end
        notes = [n.message for n in again._notifications]
        assert "Your unsent message from last time is back in the box." in notes
        again.chat.composer.text = ""  # cleared, then quit: nothing is kept
        again.chat.attachments.clear()
        await pilot.press("ctrl+q")
        assert "unsent" not in " ".join(str(r) for r in again._exit_renderables)

    third = make_app()
    async with third.run_test(size=SIZE) as pilot:
        await settle(third, pilot)
        assert third.chat.composer.text == ""
        assert third.chat.attachments.paths == []


async def test_a_kept_file_that_changed_is_checked_again_and_the_text_still_comes_back(
    make_app, tmp_path: Path
) -> None:
    gone, changed = tmp_path / "gone.csv", tmp_path / "notes.txt"
    gone.write_text("a\n", encoding="utf-8")
    changed.write_text("fine\n", encoding="utf-8")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _quit_with(app, pilot, "compare these", [gone, changed])
    gone.unlink()
    changed.write_bytes(b"\x00\x01\x02 binary now" * 100)

    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat.composer.text == "compare these"
        assert again.chat.attachments.paths == []
        errors = [n.message for n in again._notifications if n.severity == "error"]
        assert len(errors) == 1 and "notes.txt" in errors[0], errors


async def test_quitting_with_an_empty_box_keeps_nothing(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        said = await _quit_with(app, pilot, "   \n ")
    assert "unsent" not in said
    assert not UnsentDraft().path.exists()


async def test_a_damaged_draft_file_starts_an_empty_box_and_is_removed(make_app) -> None:
    draft = UnsentDraft()
    draft.path.parent.mkdir(parents=True, exist_ok=True)
    for content in (b"\xff{not json", b'{"text": 5, "files": "x"}', b"[" * 100_000):
        draft.path.write_bytes(content)
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert app.chat.composer.text == ""
        assert not draft.path.exists(), content[:20]
