"""Tool implementations: one pydantic input model and one run function per catalog row."""
