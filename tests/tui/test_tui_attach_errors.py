"""An attachment refused in the app says why and what to do as two sentences: the error's
text is also written for the model (no full stops, the fix in lower case), and the toast ran
"no such file: x" and "check the path and attach it again" together."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from agent.attachments import AttachmentError
from tests.tui.helpers import SIZE, settle
from tui.screens.attach import AttachScreen


def test_render_sentences_ends_each_part_and_capitalises_only_the_fix() -> None:
    error = AttachmentError("report.csv is a binary file", fix="attach a CSV file")
    assert error.render_sentences() == "report.csv is a binary file.\nAttach a CSV file."
    assert AttachmentError("done already.").render_sentences() == "done already."
    assert AttachmentError("is it?", fix="Try again!").render_sentences() == "is it?\nTry again!"


async def test_an_attachment_error_toast_reads_message_then_fix(make_app, tmp_path: Path) -> None:
    missing = tmp_path / "missing.csv"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        composer.text = f"/attach {missing}"
        await pilot.press("enter")
        await settle(app, pilot)
        toasts = [n for n in app._notifications if n.title == "Attachment error"]
        assert [n.message for n in toasts] == [
            f"no such file: {missing}.\nCheck the path and attach it again."
        ]
        assert app.chat.attachments.paths == []
        assert toasts[0].timeout >= 12, "an error toast was gone after 5 s, before its fix was read"


async def test_toasts_stay_for_their_reading_time(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.notify("Saved.", markup=False)
        app.notify(" ".join(["word"] * 60), severity="warning", markup=False)
        app.notify("Now.", timeout=2, markup=False)
        await pilot.pause()
        short, long, given = list(app._notifications)[-3:]
        assert short.timeout == 5 and long.timeout == 20 and given.timeout == 2


async def _attach_in_dialog(app, pilot, typed: str) -> None:
    """Open the attach dialog (ctrl+o), type `typed`, press Enter and wait until the dialog
    closed or shows an error (not `settle`: the dialog's tree keeps a loader worker running)."""
    if not isinstance(app.screen, AttachScreen):
        await pilot.press("ctrl+o")
        await _until(pilot, lambda: isinstance(app.screen, AttachScreen))
    dialog = app.screen
    dialog.query_one("#path", Input).value = typed
    await pilot.press("enter")
    await _until(pilot, lambda: app.screen is not dialog or bool(_dialog_error(app)))


async def _until(pilot, condition) -> None:
    for _ in range(200):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("the dialog never got there")


def _dialog_error(app) -> str:
    shown = app.screen.query_one("#attach-error", Static)
    return str(shown.render()) if shown.display else ""


@pytest.mark.parametrize("problem", ["missing", "folder", "binary", "too big"])
async def test_a_bad_path_keeps_the_dialog_open_with_the_path_and_why(
    make_app, tmp_path: Path, problem: str
) -> None:
    """The dialog closed on a bad path (a toast said why): the path had to be typed again.
    Now it stays, the path still in its box, the reason and the fix inside the dialog."""
    bad = {
        "missing": tmp_path / "[bold]missing.csv",
        "folder": tmp_path,
        "binary": tmp_path / "data.bin",
        "too big": tmp_path / "big.txt",
    }[problem]
    (tmp_path / "data.bin").write_bytes(b"\x00\x01\x02" * 100)
    with (tmp_path / "big.txt").open("wb") as big:
        big.truncate(21 * 1024 * 1024)  # sparse: over the 20 MB limit without writing it
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        await _attach_in_dialog(app, pilot, str(bad))
        assert isinstance(app.screen, AttachScreen), "the dialog stays open"
        assert app.screen.query_one("#path", Input).value == str(bad)
        error = _dialog_error(app)
        expected = {
            "missing": f"no such file: {bad}.\nCheck the path and attach it again.",
            "folder": f"{bad} is a folder.\nAttach a single file, not a folder.",
        }
        if problem in expected:
            assert error == expected[problem]
        elif problem == "too big":
            assert error == (
                "big.txt is 21.0 MB; the limit is 20 MB.\n"
                "Attach a smaller file (for example an excerpt or a filtered export)."
            )
        else:
            assert error.startswith("data.bin ") and "\n" in error, error  # why, then the fix
        assert not [n for n in app._notifications if n.title == "Attachment error"]
        assert app.chat.attachments.paths == []


async def test_the_corrected_path_attaches_and_closes_the_dialog_and_esc_still_cancels(
    make_app, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        await _attach_in_dialog(app, pilot, str(tmp_path / "nots.txt"))
        assert "no such file" in _dialog_error(app)
        await _attach_in_dialog(app, pilot, str(notes))
        assert not isinstance(app.screen, AttachScreen)
        assert app.chat.attachments.paths == [notes.resolve()]

        await _attach_in_dialog(app, pilot, str(tmp_path / "gone.txt"))
        await pilot.press("escape")
        await _until(pilot, lambda: not isinstance(app.screen, AttachScreen))
        assert app.chat.attachments.paths == [notes.resolve()]
