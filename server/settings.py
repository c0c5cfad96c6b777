"""Settings, declared once as data with help text (the CLI and the docs read this)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import platformdirs

DEFAULT_PORT = 37711
DEFAULT_HOST = "127.0.0.1"

# name -> (default, help). `wherefrom serve --help` and docs/settings are built from this.
SETTINGS: dict[str, tuple[object, str]] = {
    "port": (DEFAULT_PORT, "TCP port on the loopback interface"),
    "host": (DEFAULT_HOST, "bind address; must be loopback unless --force-bind is given"),
    "data_dir": (None, "directory holding wherefrom.db and token (default: the user data dir)"),
    "log_level": ("info", "logging level: debug, info, warning, error"),
    "extension_ids": ((), "extra chrome-extension ids allowed as Origin (the pinned id is always allowed)"),
    "allow_private_fetch": (False, "tests only: let add_url fetch loopback/private addresses"),
    "ledger": (None, "append one JSON line per request received to this file (for the test farm)"),
}

# The id Chrome derives from the "key" in extension/manifest.json (pinned, see docs/architecture.md).
PINNED_EXTENSION_ID = "gidncpejkfcnakpojbbbhocinihfkjmj"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("wherefrom", appauthor=False))


@dataclasses.dataclass(frozen=True)
class Settings:
    data_dir: Path
    port: int = DEFAULT_PORT
    host: str = DEFAULT_HOST
    log_level: str = "info"
    extension_ids: tuple[str, ...] = ()
    allow_private_fetch: bool = False
    ledger: Path | None = None

    @property
    def db_path(self) -> Path:
        return self.data_dir / "wherefrom.db"

    @property
    def token_path(self) -> Path:
        return self.data_dir / "token"

    @property
    def allowed_extension_ids(self) -> frozenset[str]:
        return frozenset((PINNED_EXTENSION_ID, *self.extension_ids))
