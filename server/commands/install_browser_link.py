"""`wherefrom install-browser-link`: let the browser find the server and start it (no token to
paste) — writes the native messaging host manifest and its launcher (server/nativehost/install.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.nativehost import install
from server.nativehost.host import ALLOWED_ORIGIN
from server.settings import DEFAULT_PORT


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "install-browser-link",
        help="let the browser find and start the server (writes its native messaging host manifest)",
    )
    p.add_argument("--browser", choices=sorted(install.BROWSERS), default="chrome", help="default chrome")
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
