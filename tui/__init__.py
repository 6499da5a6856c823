"""The Textual app. Importing the package, before anything imports Textual, defers
`textual.types`'s widget imports (tui/textual_types.py) and gives Textual's DOMNode a faster
`__init_subclass__` (tui/textual_dom.py)."""

from tui import textual_dom, textual_types

textual_types.install()
textual_dom.install()
