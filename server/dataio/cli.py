"""Registers the data commands (import-chats, export, backup, restore) on the `wherefrom` CLI."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from server.dataio import cli_backup, cli_export, cli_import


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    cli_import.add_command(sub, common)
    cli_export.add_command(sub, common)
    cli_backup.add_commands(sub, common)
