"""`wherefrom pair`: print the token to paste into the extension's Settings (created 0600 once)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from server.settings import add_arguments, default_data_dir
from server.token import load_or_create


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    pair = sub.add_parser("pair", help="print the token to paste into the extension's Settings")
    add_arguments(pair, ("data_dir",))
    pair.set_defaults(func=cmd_pair)


def cmd_pair(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    print(load_or_create(data_dir / "token"))
    return 0
