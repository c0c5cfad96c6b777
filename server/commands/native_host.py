"""`wherefrom native-host`: the browser link's host. The browser runs it (through the launcher
`install-browser-link` wrote), never a person; the protocol is in server/nativehost/host.py."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from server.settings import default_data_dir


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("native-host", help="the browser link's host (the browser runs it; not for a terminal)")
    p.add_argument("origin", nargs="?", default=None, help="the caller's origin (the browser passes it)")
    p.add_argument("--parent-window", default=None, help=argparse.SUPPRESS)  # Windows passes it
    common(p)
    p.set_defaults(func=cmd_native_host)


def cmd_native_host(args: argparse.Namespace) -> int:
    from server.nativehost import host

    return host.main(args.origin, args.data_dir or default_data_dir(), args.port)
