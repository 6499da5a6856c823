"""The `tabletalk` command: headless subcommands go to the CLI (no Textual import), else the app."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

VALUE_FLAGS = frozenset(
    {"--db", "--profile", "--region", "--model", "--mode", "--config", "--conversation"}
)


def first_command(argv: list[str]) -> str | None:
    """The first argument that is not an option or an option's value."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in VALUE_FLAGS:
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return None


def wants_headless(argv: list[str]) -> bool:
    """A subcommand (known or not: the CLI explains unknown ones), -h/--help or --version."""
    return first_command(argv) is not None or any(a in ("-h", "--help", "--version") for a in argv)


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from agent.cli.common import add_model_flags, add_store_flag

    parser = argparse.ArgumentParser(prog="tabletalk", description="Open the tabletalk app.")
    add_store_flag(parser)
    add_model_flags(parser)
    parser.add_argument("--conversation", metavar="ID", help="resume a saved conversation")
    return parser


def prepare(argv: list[str]) -> tuple[Any, Any, str | None, bool]:
    """Parse the app's flags: (store, settings, conversation id, whether `--model` was given:
    the conversation resumed at start then runs on it, not on the model it used). Raises
    TabletalkError. Without flags the parser is not built (nor argparse and the CLI's helpers
    imported): the flags' defaults leave the config file's settings and its `db` as they are.
    The one seam `main` opens the store through (the start-up probes wrap it)."""
    from agent.stores.open import open_store

    if not argv:
        from agent.config import load_settings

        settings = load_settings()
        return open_store(settings.db, settings), settings, None, False
    from agent.cli.common import resolve_settings, store_path

    args = build_parser().parse_args(argv)
    settings = resolve_settings(args)
    db = store_path(args, settings)
    if args.conversation:  # it opens its own store (another --db is refused), as for `ask`
        from agent.session import conversation_db

        db = conversation_db(args.conversation, db, explicit=args.db is not None)
    return open_store(db, settings), settings, args.conversation, args.model is not None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if wants_headless(argv):
        from agent.cli.main import main as cli_main

        return cli_main(argv)
    from tui import deferred_imports, startup_code, startup_gc

    startup_gc.pause()  # resumed by the app after its first frame
    startup_code.install()  # removed by the app after its first frame
    deferred_imports.install()  # likewise
    from agent.errors import TabletalkError
    from agent.logs import setup_logging

    setup_logging()
    try:
        store, settings, conversation_id, model_given = prepare(argv)
    except TabletalkError as exc:
        startup_gc.resume()
        startup_code.uninstall()
        deferred_imports.uninstall()
        from agent.cli.common import report_error

        return report_error(exc)
    from tui.app import TabletalkApp

    app = TabletalkApp(store, settings, conversation_id=conversation_id, model_given=model_given)
    try:
        app.run()
    finally:
        startup_gc.resume()  # the app may have ended before its first frame
        startup_code.uninstall()
        deferred_imports.uninstall()
        app.staging_watch.close()
        store.close()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
