"""`wherefrom` command line: one parser, each subcommand registered by its own module here."""

from __future__ import annotations

import argparse
import sys

from server.commands import (
    add,
    backup,
    export,
    import_chats,
    install_browser_link,
    mcp,
    native_host,
    pair,
    search,
    serve,
    status,
)
from server.settings import add_arguments

# the order of `wherefrom --help`
COMMANDS = (serve, pair, status, add, import_chats, export, backup, search, mcp, install_browser_link, native_host)


def common(p: argparse.ArgumentParser) -> None:
    """The options of every command that finds the server: --data-dir and --port."""
    add_arguments(p, ("data_dir", "port"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wherefrom", description="Wherefrom companion server")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_commands(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
