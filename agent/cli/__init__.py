"""The headless command line: `tabletalk ask|tools|staged|conversations` (no Textual)."""
