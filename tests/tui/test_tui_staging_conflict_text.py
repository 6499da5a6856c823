"""A conflict in the staging panel's list quotes the staged value as it quotes the table's
current one (`staged 'old' → 'new', now 'current'`), each cut so three long values still read
as one short line; the change's detail shows them whole."""

from __future__ import annotations

import sqlite3

from agent.staging import StagingArea
from tests.tui.helpers import SIZE, settle
from tests.tui.test_tui_staging import open_change
from tui.widgets.staged_change import CONFLICT_VALUE_LIMIT


async def test_a_conflict_line_quotes_staged_and_current_values_and_cuts_long_ones(
    make_app, demo_store, demo_path
) -> None:
    staged_value = "[b]staged[/b] " + "s" * 300
    now_value = "external " + "n" * 300
    area = StagingArea(demo_store)
    change = area.stage("orders", "update", {"id": 7}, {"status": staged_value}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        old = conn.execute("SELECT status FROM orders WHERE id = 7").fetchone()[0]
        conn.execute("UPDATE orders SET status = ? WHERE id = 7", (now_value,))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        prompt = str(app.query_one("#staging-list").get_option(change.id).prompt)
        line = " ".join(prompt.split())  # the list wraps the line at the panel's width
        cut_staged = staged_value[: CONFLICT_VALUE_LIMIT - 1] + "…"
        cut_now = now_value[: CONFLICT_VALUE_LIMIT - 1] + "…"
        assert f"status: staged '{old}' → '{cut_staged}', now '{cut_now}'" in line, line
        card = await open_change(app, pilot, change.id)
        whole = " ".join(str(card.query_one(".conflict").render()).split())
        assert f"→ '{staged_value}', now '{now_value}'" in whole, "the detail shows them whole"
