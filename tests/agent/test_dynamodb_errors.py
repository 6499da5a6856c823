"""AWS errors become one line with the fix (the IAM action, the table and region, ...)."""

from __future__ import annotations

import botocore.exceptions
import pytest

from agent.stores.dynamodb.client import parse_url, translate


def client_error(code: str, message: str) -> botocore.exceptions.ClientError:
    return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": message}}, "Scan")


@pytest.mark.parametrize(
    ("exc", "in_message", "in_fix"),
    [
        (
            client_error("AccessDeniedException", "not authorized"),
            "dynamodb:Scan",
            "dynamodb:Scan on table orders",
        ),
        (
            client_error("ResourceNotFoundException", "no table"),
            "orders in eu-west-1",
            "listTables",
        ),
        (
            client_error(
                "ValidationException", "Item size has exceeded the maximum allowed size of 400 KB"
            ),
            "400 KB",
            "stays staged",
        ),
        (client_error("ValidationException", "Unexpected token"), "Unexpected token", "PartiQL"),
        (client_error("ExpiredTokenException", "expired"), "expired", "aws sso login"),
        (
            botocore.exceptions.TokenRetrievalError(provider="sso", error_msg="x"),
            "SSO",
            "aws sso login",
        ),
    ],
)
def test_each_error_is_one_line_with_its_fix(exc: Exception, in_message: str, in_fix: str) -> None:
    error = translate(exc, action="dynamodb:Scan", table="orders", region="eu-west-1")
    assert in_message in error.message and "\n" not in error.message
    assert error.fix is not None and in_fix in error.fix


def test_addresses() -> None:
    assert parse_url("dynamodb://us-east-1?tables=shop-*").tables == "shop-*"
    assert parse_url("dynamodb://").region is None
