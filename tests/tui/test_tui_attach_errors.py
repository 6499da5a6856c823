"""An attachment refused in the app says why and what to do as two sentences: the error's
text is also written for the model (no full stops, the fix in lower case), and the toast ran
"no such file: x" and "check the path and attach it again" together."""

from __future__ import annotations

from pathlib import Path

from agent.attachments import AttachmentError
from tests.tui.helpers import SIZE, settle


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
