"""Stores: where the tables live (SQLite embedded default, DynamoDB)."""
