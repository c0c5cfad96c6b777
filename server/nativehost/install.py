"""Where each browser reads a user's native messaging host manifests, and writing ours there.

Chrome, Chromium, Edge and Brave read `<user data dir>/NativeMessagingHosts/<name>.json` for the
current user (Linux and macOS). The manifest names the launcher next to it (an absolute path,
as Chrome requires) and lists one allowed origin: the pinned extension id. The launcher is a
small shell script (0700) that execs this installation's Python on `wherefrom native-host`
(`-m server.nativehost`: the same command without the rest of the command line's imports).
Windows reads the manifest's path from the registry instead
(HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\<name>, docs/threat-model.md).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from server.nativehost.host import ALLOWED_ORIGIN

HOST_NAME = "org.wherefrom.companion"
LAUNCHER_NAME = "wherefrom-native-host"

# browser -> (Linux dir under $XDG_CONFIG_HOME, macOS dir under ~/Library/Application Support)
BROWSERS: dict[str, tuple[str, str]] = {
    "chrome": ("google-chrome", "Google/Chrome"),
    "chromium": ("chromium", "Chromium"),
    "edge": ("microsoft-edge", "Microsoft Edge"),
    "brave": ("BraveSoftware/Brave-Browser", "BraveSoftware/Brave-Browser"),
}


class Unsupported(Exception):
    pass


def user_data_dir(browser: str) -> Path:
    """The browser's default user data dir for this user (where it looks for host manifests)."""
    linux, mac = BROWSERS[browser]
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / mac
    if sys.platform == "win32":
        raise Unsupported(
            "on Windows the manifest is found through the registry: write it anywhere and set "
            f"HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\{HOST_NAME} to its path"
        )
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / linux


def manifest_dir(browser: str, profile_root: Path | None = None) -> Path:
    return (profile_root or user_data_dir(browser)) / "NativeMessagingHosts"


def manifest(launcher: Path) -> dict[str, object]:
    return {
        "name": HOST_NAME,
        "description": "Wherefrom: tells the extension where its local server is, and starts it",
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [ALLOWED_ORIGIN],
    }


def launcher_text(python: str, extra: list[str]) -> str:
    argv = [python, "-m", "server.nativehost", *extra]  # `wherefrom native-host`, lighter to start
    return (
        "#!/bin/sh\n"
        "# written by `wherefrom install-browser-link`: the browser runs this for the Wherefrom extension\n"
        f'exec {" ".join(shlex.quote(a) for a in argv)} "$@"\n'
    )


def install(where: Path, data_dir: Path | None = None, port: int | None = None) -> tuple[Path, Path]:
    """Write the launcher (0700) and the manifest into `where`; their paths."""
    where.mkdir(parents=True, exist_ok=True)
    extra: list[str] = []
    if data_dir is not None:
        extra += ["--data-dir", str(data_dir.absolute())]
    if port is not None:
        extra += ["--port", str(port)]
    # the venv's own interpreter path, not its symlink target (that would leave the venv)
    python = os.path.abspath(sys.executable)
    launcher = where / LAUNCHER_NAME
    fd = os.open(launcher, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o700)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(launcher_text(python, extra))
    os.chmod(launcher, 0o700)
    path = where / f"{HOST_NAME}.json"
    path.write_text(json.dumps(manifest(launcher.absolute()), indent=2) + "\n", "utf-8")
    return path, launcher


def uninstall(where: Path) -> list[Path]:
    """Remove our manifest and launcher from `where` (nothing else); what was removed."""
    gone = []
    for path in (where / f"{HOST_NAME}.json", where / LAUNCHER_NAME):
        if path.exists():
            path.unlink()
            gone.append(path)
    return gone
