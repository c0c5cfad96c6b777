"""`wherefrom` command line: one parser, each subcommand registered by its own module here.

It behaves as a Unix tool: `--version`; output cut short by a closed pipe
(`wherefrom search x --json | head -1`) ends quietly with the status of a process killed by
SIGPIPE (141), never a traceback; Ctrl-C ends with 130 and one line; a file the command cannot
read or write is one line naming it.
"""

from __future__ import annotations

import argparse
import os
import sys

import server
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
CLOSED_PIPE = 128 + 13  # as a process ended by SIGPIPE
INTERRUPTED = 128 + 2  # as a process ended by SIGINT


def common(p: argparse.ArgumentParser) -> None:
    """The options of every command that finds the server: --data-dir and --port."""
    add_arguments(p, ("data_dir", "port"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wherefrom",
        description="Wherefrom: a local memory of the web. The companion server and the commands that ask it.",
        epilog="`wherefrom COMMAND --help` tells what a command does and takes.",
    )
    parser.add_argument("--version", action="version", version=f"wherefrom {server.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_commands(sub, common)
    for name, p in sub.choices.items():
        if p.description is None:  # `wherefrom X --help` opens with what the list says of X
            p.description = next((a.help for a in sub._choices_actions if a.dest == name), None)
    return parser


def _quiet_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so the interpreter's last flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    except BrokenPipeError:
        _quiet_stdout()
        return CLOSED_PIPE
    except KeyboardInterrupt:
        print(f"wherefrom {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except OSError as err:
        where = f" {err.filename}" if err.filename else ""
        print(f"wherefrom {args.command}: cannot use{where}: {err.strerror or err}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
