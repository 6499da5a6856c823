"""`tabletalk mcp`: the catalog's tools served over MCP (stdio, or loopback HTTP in http.py).

Re-exports nothing: importing a light module such as `tokens` or `levels` must not load the
MCP SDK (seconds of imports) for the app or a CLI command that does not serve.
"""
