"""The header's token count after Stop: the stopped step's streamed output is billed though
Converse never reported it, so it stays counted (an estimate, marked `~`), with the
conversation, after the next step's real usage and when the conversation is opened again."""

from __future__ import annotations

from agent.conversations import Conversation
from tests.support.scripted_bedrock import Reply, Usage
from tests.tui.helpers import SIZE, send, settle
from tui.widgets.chat_items import AssistantMessage


async def test_a_stopped_steps_estimated_output_stays_in_the_header(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(
        Reply(text="word " * 400, chunk_delay=0.01),
        Reply(text="Still here.", usage=Usage(input=30, output=7)),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "write a lot"
        await pilot.press("enter")
        while not app.query(AssistantMessage):
            await pilot.pause()
        await pilot.press("escape")
        assert app.status.tokens[1] + app.status.streaming > 0, "the shown estimate stays"
        await settle(app, pilot)
        usage = app.session.usage
        assert usage.output == 0 and usage.estimated_output > 0
        assert app.status.tokens[1] == usage.estimated_output and app.status.estimated
        assert f"/ ~{usage.estimated_output} out" in str(app.status.render())
        saved = Conversation.from_dict(app.session.conversation.to_dict()).usage
        assert saved.estimated_output == usage.estimated_output, "kept with the conversation"
        await send(app, pilot, "are you there?")
        assert app.status.tokens[1] == 7 + usage.estimated_output, "the real usage adds to it"
        assert f"/ ~{7 + usage.estimated_output} out" in str(app.status.render())
