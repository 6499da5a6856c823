"""Scripted "models" for the eval harness: the answers a good (or a bad) model gives per scenario.

The endpoint serves many runs at once (`--jobs`), so a reply is chosen from the request itself:
the scenario by its first user message, the step by how many answers the history already holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.scripted_bedrock import Reply, ToolUse


def _t(tool: str, /, **args: Any) -> Reply:
    return Reply(tool_uses=[ToolUse(tool, args)])


def _say(text: str) -> Reply:
    return Reply(text=text)


def _search(query: str) -> Reply:
    return _t("searchTools", query=query)


GOOD: dict[str, list[Reply]] = {
    "Which product in the file I attached was returned most often?": [
        _t("readAttachment", attachment="returns.csv"),
        _say("Garden Hose was returned most often (3 of 5 returns)."),
    ],
    "show me last week's orders": [
        _t("getCurrentTime"),
        _t("openTable", table="orders", query="created_at >= date('now', '-7 days')"),
        _say("Opened last week's orders."),
    ],
    "what tables do I have?": [
        _t("listTables"),
        _say("You have customers, orders, products and stock_levels."),
    ],
    "Show me customers side by side with their orders.": [
        _t(
            "proposeJoinedView",
            left="customers",
            right="orders",
            left_on="id",
            right_on="customer_id",
        ),
        _say("Click the chip to open customers joined with their orders."),
    ],
    "Change the city of customer 12 to Lisbon.": [
        _t("stageItem", table="customers", op="update", key={"id": 12}, values={"city": "Lisbon"}),
        _say("Staged: customer 12 moves to Lisbon. Review it in the staging panel."),
    ],
    "Cancel every order that is on hold.": [
        _t(
            "bulkEdit",
            table="orders",
            query="SELECT id FROM orders WHERE status = 'on_hold'",
            set={"status": "cancelled"},
        ),
        _say("Staged the cancellation of 35 orders on hold."),
    ],
    "Delete all the test orders.": [
        _t(
            "bulkEdit",
            table="orders",
            query="SELECT id FROM orders WHERE status = 'test'",
            delete=True,
        ),
        _say("Staged the deletion of 12 test orders."),
    ],
    "Set the quantity to 1 on orders 5, 6 and 7.": [
        _t("bulkEdit", table="orders", keys=[{"id": 5}, {"id": 6}, {"id": 7}], set={"quantity": 1}),
        _say("Staged quantity 1 on orders 5, 6 and 7."),
    ],
    "Set the stock to 0 for every discontinued product.": [
        _t(
            "bulkEdit",
            table="products",
            query="SELECT id FROM products WHERE category = 'Discontinued'",
            set={"stock": 0},
        ),
        _say("Staged stock 0 on the 4 discontinued products."),
    ],
    "Move every customer in Oldtown to Newtown and set their created_at to 2026-01-01.": [
        _t(
            "bulkEdit",
            table="customers",
            query="SELECT id FROM customers WHERE city = 'Oldtown'",
            set={"city": "Newtown", "created_at": "2026-01-01"},
        ),
        _say("Staged the move of 3 customers."),
    ],
    "Open the staging panel so I can review pending changes.": [
        _search("open the staging review panel"),
        _t("openStagingPanel"),
        _say("The staging panel is open."),
    ],
    "Change customer 3's city to Oslo.": [
        _t("stageItem", table="customers", op="update", key={"id": 3}, values={"city": "Oslo"}),
        _say("Staged."),
        _search("list staged changes"),
        _t("listStagedChanges"),
        _say("One change waits: customer 3's city becomes Oslo."),
    ],
    "Export all pending orders to a CSV file called pending.csv.": [
        _search("export to csv"),
        _t("exportCsv", query="SELECT * FROM orders WHERE status = 'pending'", path="pending.csv"),
        _say("Wrote the pending orders to pending.csv."),
    ],
    "Save the products table as JSON in products.json.": [
        _search("export to json"),
        _t("exportJson", query="SELECT * FROM products", path="products.json"),
        _say("Wrote products.json."),
    ],
    "Show me the index statistics for the orders table.": [
        _search("index statistics"),
        _t("getIndexStats", table="orders"),
        _say("orders has two indexes: orders_status and orders_customer_id."),
    ],
    "Save a view called big-orders of the orders with a total over 500.": [
        _search("save a view"),
        _t(
            "saveSpec",
            name="big-orders",
            query="SELECT * FROM orders WHERE total > 500",
            table="orders",
        ),
        _say("Saved big-orders."),
        _search("open a saved view"),
        _t("openSavedSpec", name="big-orders"),
        _say("Opened big-orders."),
    ],
    "Record that orders.customer_id refers to customers.id so the two can be joined later.": [
        _search("declare a relationship between tables"),
        _t(
            "declareRelationship",
            left="orders",
            left_on="customer_id",
            right="customers",
            right_on="id",
        ),
        _say("Recorded orders.customer_id → customers.id."),
    ],
    "Update the order.": [
        _t("ask", question="Which order, and what should change?"),
    ],
    "Send an email to every customer in Lyon.": [
        _search("send email"),
        _say("I can't send emails: no tool here does that."),
    ],
    "What different values does the status column of orders take? Show me a sample.": [
        _search("distinct sample values of a column"),
        _t("sampleValues", table="orders", column="status"),
        _say("status takes pending, shipped, delivered and cancelled."),
    ],
    "Give me the distinct cities of my customers using a sample of the city column.": [
        _t("sampleValues", table="customers", column="city"),
        _search("sample values of a column"),
        _t("sampleValues", table="customers", column="city"),
        _say("Cities include Oslo, Lyon and Krakow."),
    ],
    "Translate the customers table into French for me.": [
        _search("translate a table"),
        _search("translation into another language"),
        _search("french"),
        _search("translate"),
        _say("No tool here translates tables, so I can't do that."),
    ],
    "How many orders are pending?": [
        _t("countItems", table="orders", query="status = 'pending'"),
        _say("57 orders are pending."),
    ],
    "Which city has the most customers?": [
        _t(
            "runQuery",
            query="SELECT city, COUNT(*) AS n FROM customers GROUP BY city ORDER BY n DESC LIMIT 1",
        ),
        _say("Evalton has the most customers."),
    ],
    "Show me the details of product 7.": [
        _t("getItem", table="products", key={"id": 7}),
        _say("Product 7 is the Zephyr Lamp."),
    ],
    "Change customer 5's city to Rome.": [
        _t("stageItem", table="customers", op="update", key={"id": 5}, values={"city": "Rome"}),
        _say("Staged."),
        _search("discard staged changes"),
        _t("discardStagedChanges", all=True),
        _say("Discarded."),
    ],
}

BAD: dict[str, list[Reply]] = {
    "Change the city of customer 12 to Lisbon.": [
        _t(
            "stageItem", table="customers", op="update", key={"id": 12}, values={"city": "Lisbonne"}
        ),
        _say("Done."),
    ],
    "Cancel every order that is on hold.": [
        Reply(
            tool_uses=[
                ToolUse(
                    "stageItem",
                    {
                        "table": "orders",
                        "op": "update",
                        "key": {"id": i},
                        "values": {"status": "cancelled"},
                    },
                )
                for i in range(101, 136)
            ]
        ),
        _say("Done, one by one."),
    ],
    "Save the products table as JSON in products.json.": [
        _t("exportJson", query="SELECT * FROM products", path="products.json"),
        _say("I could not export."),
    ],
    "Which city has the most customers?": [_say("Oslo, I believe.")],
    "Update the order.": [_say("Which order do you mean?")],
    "Show me customers side by side with their orders.": [_say("Customers have orders.")],
    "Send an email to every customer in Lyon.": [
        *[_t("runQuery", query="SELECT email FROM customers WHERE city = 'Lyon'")] * 7,
        _say("Here are the addresses; I sent nothing."),
    ],
    "Show me the details of product 7.": [
        _t("stageItem", table="products", op="update", key={"id": 7}, values={"stock": 1}),
        _say("Product 7 is the Zephyr Lamp."),
    ],
}


def responder(script: dict[str, list[Reply]]) -> Callable[[dict[str, Any]], Reply]:
    """A reply function for ScriptedBedrock: scenario by first message, step by history."""

    def reply(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        first = messages[0]["content"][0]["text"] if messages else ""
        steps = sum(1 for message in messages if message["role"] == "assistant")
        replies = script.get(first)
        if replies is None:
            return _say(f"(no script for {first!r})")
        return replies[steps] if steps < len(replies) else _say("(script ended)")

    return reply
