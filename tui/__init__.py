"""The Textual app. Importing the package defers `textual.types`'s widget imports
(tui/textual_types.py) before anything imports Textual."""

from tui import textual_types

textual_types.install()
