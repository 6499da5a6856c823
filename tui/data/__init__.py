"""Data access for the TUI that the Store protocol is too coarse for (paged table reads)."""
