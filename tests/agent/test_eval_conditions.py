"""Eval check conditions over what the model sent: any JSON shape gives an answer, never a
crash of the run (a model that sends `"keys": 5` fails the check, not the harness)."""

from __future__ import annotations

import pytest

from agent.errors import TabletalkError
from agent.evals.condition import holds


@pytest.mark.parametrize(
    ("condition", "record", "expected"),
    [
        ("len(keys) >= 2", {"keys": [{"id": 1}, {"id": 2}]}, True),
        ("len(keys) >= 2", {"keys": 5}, False),
        ("len(keys) >= 2", {"keys": True}, False),
        ("len(keys) == 0", {"keys": 7.5}, True),
        ("len(query) > 3", {"query": "SELECT id"}, True),
        ("-price < 0", {"price": 3}, True),
        ("-price < 0", {"price": "3"}, False),
        ("-price < 0", {"price": True}, False),
        ("-price != 1", {"price": ["x"]}, True),
        ('status == "cancelled"', {"status": {"nested": 1}}, False),
    ],
)
def test_a_condition_answers_for_any_shape_the_model_sent(condition, record, expected) -> None:
    assert holds(condition, record) is expected


def test_a_condition_the_checks_cannot_read_is_an_error_that_shows_the_form() -> None:
    with pytest.raises(TabletalkError) as caught:
        holds("keys ** 2 > 1", {"keys": 2})
    assert "len(x)" in caught.value.fix
