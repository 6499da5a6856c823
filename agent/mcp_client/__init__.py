"""External MCP servers as tool sources: their tools join the catalog as discoverable rows."""
