"""Settings, declared once: the `Settings` dataclass below. Each field carries its help text and
its command-line flag; `SETTINGS` (the docs' table) and `wherefrom serve`'s argparse options
(`add_arguments` / `from_args`) are built from these fields, never written out again."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import platformdirs

DEFAULT_PORT = 37711
DEFAULT_HOST = "127.0.0.1"

# The id Chrome derives from the "key" in extension/manifest.json (pinned, see docs/architecture.md).
PINNED_EXTENSION_ID = "gidncpejkfcnakpojbbbhocinihfkjmj"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("wherefrom", appauthor=False))


def _setting(default: Any, help_text: str, *, flag: str = "", **argparse_kw: Any) -> Any:
    """A field with its help text and how argparse spells it (`flag` defaults to --field-name)."""
    meta = {"help": help_text, "flag": flag, "argparse": argparse_kw}
    if callable(default):
        return dataclasses.field(default_factory=default, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class Settings:
    port: int = _setting(DEFAULT_PORT, "TCP port on the loopback interface", type=int)
    host: str = _setting(DEFAULT_HOST, "bind address; must be loopback unless --force-bind is given")
    data_dir: Path = _setting(
        default_data_dir, "directory holding wherefrom.db and token (default: the user data dir)", type=Path
    )
    log_level: str = _setting("info", "logging level: debug, info, warning, error")
    extension_ids: tuple[str, ...] = _setting(
        (),
        "extra chrome-extension ids allowed as Origin (the pinned id is always allowed)",
        flag="--extension-id",
        action="append",
        metavar="ID",
    )
    allow_private_fetch: bool = _setting(
        False, "tests only: let add_url fetch loopback/private addresses", action="store_true"
    )
    settle_s: float = _setting(
        0.5,
        "how long a search waits for items written just before it to be embedded (tests: longer)",
        type=float,
        metavar="SECONDS",
    )
    no_second_model: bool = _setting(
        False,
        "do not run the second embedding model (all-MiniLM-L6-v2): no core is spent building its "
        "vectors, and a paraphrase is found less often",
        action="store_true",
    )
    ledger: Path | None = _setting(
        None, "append one JSON line per request received to this file (for the test farm)", type=Path
    )

    @property
    def db_path(self) -> Path:
        return self.data_dir / "wherefrom.db"

    @property
    def token_path(self) -> Path:
        return self.data_dir / "token"

    @property
    def allowed_extension_ids(self) -> frozenset[str]:
        return frozenset((PINNED_EXTENSION_ID, *self.extension_ids))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Settings:
        """The settings a parsed command line gives; options the command did not declare, or left
        unset, keep their defaults."""
        given: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            value = getattr(args, f.name, None)
            if value is None:
                continue
            given[f.name] = tuple(value) if isinstance(value, list) else value
        return cls(**given)


def _doc_default(f: dataclasses.Field[Any]) -> object:
    return None if f.default is dataclasses.MISSING else f.default


# name -> (default, help): the docs' settings table (docs/api.md), built from the fields above.
SETTINGS: dict[str, tuple[object, str]] = {
    f.name: (_doc_default(f), f.metadata["help"]) for f in dataclasses.fields(Settings)
}


def add_arguments(parser: argparse.ArgumentParser, names: Iterable[str] | None = None) -> None:
    """Add the options for `names` (all settings when None) to `parser`, as the fields declare
    them. Values left unset parse as the field's default (None for a computed one, which
    `from_args` then computes)."""
    wanted = None if names is None else set(names)
    for f in dataclasses.fields(Settings):
        if wanted is not None and f.name not in wanted:
            continue
        kw = dict(f.metadata["argparse"])
        flag = f.metadata["flag"] or "--" + f.name.replace("_", "-")
        if kw.get("action") == "append":
            kw["default"] = []
        elif kw.get("action") != "store_true":
            kw["default"] = _doc_default(f)  # a computed default (the data dir) parses as None
        parser.add_argument(flag, dest=f.name, help=f.metadata["help"], **kw)
