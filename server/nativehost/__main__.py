"""`python -m server.nativehost ORIGIN [--data-dir D] [--port P]`: `wherefrom native-host` without
the rest of the command line's imports (what the launcher runs: the browser starts the host for
every message, so its start-up is the link's latency). Same parser, same host."""

from __future__ import annotations

import argparse
import sys

from server.commands import native_host
from server.settings import add_arguments


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wherefrom")
    sub = parser.add_subparsers(dest="command", required=True)
    native_host.add_commands(sub, lambda p: add_arguments(p, ("data_dir", "port")))
    args = parser.parse_args(["native-host", *argv])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
