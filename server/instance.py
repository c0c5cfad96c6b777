"""One server per data dir: `wherefrom serve` holds an exclusive lock on `<data dir>/serve.lock`
for its whole life, and writes `<data dir>/server.json` (its pid, host and port) once it holds
it. A second `serve` on the same data dir — typed by a person, or started by the browser link
while another start is under way — finds the lock taken and exits without touching the database
or the port. The lock is the operating system's (flock / msvcrt), so it is released when the
process ends however it ends (SIGKILL included); `server.json` may then be stale, which is why
readers confirm it with the server's own health answer (server/nativehost/companion.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from server.private_files import FILE_MODE, make_private_dir

LOCK_NAME = "serve.lock"
RUNTIME_NAME = "server.json"


class AlreadyRunning(Exception):
    """Another server holds this data dir; `runtime` is what it announced (may be empty)."""

    def __init__(self, data_dir: Path, runtime: dict[str, Any]) -> None:
        where = f" (pid {runtime.get('pid')}, port {runtime.get('port')})" if runtime else ""
        super().__init__(f"a server already runs on {data_dir}{where}")
        self.runtime = runtime


def read_runtime(data_dir: Path) -> dict[str, Any]:
    """What the last server on this data dir announced ({} when nothing readable)."""
    try:
        value = json.loads((data_dir / RUNTIME_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


class Claim:
    """`with Claim(data_dir) as claim:` holds the data dir (raises AlreadyRunning when another
    process does); `claim.announce(host, port)` writes server.json; leaving removes it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._fd: int | None = None

    def __enter__(self) -> Claim:
        make_private_dir(self.data_dir)
        fd = os.open(self.data_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, FILE_MODE)
        if not _try_lock(fd):
            os.close(fd)
            raise AlreadyRunning(self.data_dir, read_runtime(self.data_dir))
        self._fd = fd
        return self

    def announce(self, host: str, port: int) -> None:
        path = self.data_dir / RUNTIME_NAME
        tmp = path.with_suffix(".json.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"pid": os.getpid(), "host": host, "port": port}, fh)
        os.replace(tmp, path)

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        if read_runtime(self.data_dir).get("pid") == os.getpid():
            (self.data_dir / RUNTIME_NAME).unlink(missing_ok=True)
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
