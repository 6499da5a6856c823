"""Embedding indexes: per-table vectors in a sqlite-vec sidecar, built through Bedrock."""
