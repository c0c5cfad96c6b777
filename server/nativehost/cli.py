"""The two subcommands of the browser link (registered by the command line like every other):
`wherefrom install-browser-link` writes the host manifest; `wherefrom native-host` is the host."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.nativehost import install
from server.nativehost.host import ALLOWED_ORIGIN
from server.settings import DEFAULT_PORT, default_data_dir


def add_install_command(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "install-browser-link",
        help="let the browser find and start the server (writes its native messaging host manifest)",
    )
    p.add_argument(
        "--browser", choices=sorted(install.BROWSERS), default="chrome", help="which browser (default chrome)"
    )
    p.add_argument(
        "--user-data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the browser's profile root when it runs with --user-data-dir (default: the browser's own)",
    )
    p.add_argument("--uninstall", action="store_true", help="remove the manifest and the launcher")
    common(p)
    p.set_defaults(func=cmd_install_browser_link)


def cmd_install_browser_link(args: argparse.Namespace) -> int:
    try:
        where = install.manifest_dir(args.browser, args.user_data_dir)
    except install.Unsupported as err:
        print(f"wherefrom: {err}")
        return 1
    if args.uninstall:
        gone = install.uninstall(where)
        print("\n".join(f"removed {p}" for p in gone) or f"nothing to remove in {where}")
        return 0
    port = None if args.port == DEFAULT_PORT else args.port
    path, launcher = install.install(where, args.data_dir, port)
    print(f"wrote {path}\n  it runs {launcher}\n  and answers only {ALLOWED_ORIGIN}")
    print(f"open Wherefrom's side panel in {args.browser}: it finds the server, or starts it, by itself")
    return 0


def add_host_command(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("native-host", help="the browser link's host (the browser runs it; not for a terminal)")
    p.add_argument("origin", nargs="?", default=None, help="the caller's origin (the browser passes it)")
    p.add_argument("--parent-window", default=None, help=argparse.SUPPRESS)  # Windows passes it
    common(p)
    p.set_defaults(func=cmd_native_host)


def cmd_native_host(args: argparse.Namespace) -> int:
    from server.nativehost import host

    return host.main(args.origin, args.data_dir or default_data_dir(), args.port)


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    add_install_command(sub, common)
    add_host_command(sub, common)
