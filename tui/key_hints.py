"""The keys the app's own text names (the chat intro, the home tab, the composer's hint,
notices): the key a binding is bound to after `[keys]` in config.toml remapped it, so a hint
never names a key that no longer does what it says."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COMPACT = {"enter": "⏎", "escape": "esc"}
"""Keys the composer's one-line hint writes shorter (ctrl+X is written ^X)."""


def bound_key(keymap: Mapping[str, str], binding_id: str, default: str) -> str:
    """The first key `[keys]` gives `binding_id`, as the user wrote it; `default` (the
    binding's own key, spelled as the text around it spells it, e.g. `F1`) when not remapped."""
    keys = [key.strip() for key in keymap.get(binding_id, "").split(",") if key.strip()]
    return keys[0] if keys else default


def app_key(app: Any, binding_id: str, default: str) -> str:
    """`bound_key` with the app's `[keys]` (none for a bare App, as in widget tests)."""
    keymap = getattr(getattr(app, "settings", None), "keys", None) or {}
    return bound_key(keymap, binding_id, default)


def compact(key: str) -> str:
    """A key as the composer's hint writes it: `⏎`, `esc`, `^j`."""
    if key in COMPACT:
        return COMPACT[key]
    if key.startswith("ctrl+") and len(key) > len("ctrl+"):
        return "^" + key[len("ctrl+") :]
    return key
