"""How a turn runs: Bedrock loop, active set, search, permissions, staging, stores, tools.

Never imports `tui`: the headless CLI, the MCP server and the evals run without Textual.
"""
