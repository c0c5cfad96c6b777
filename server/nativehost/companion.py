"""Finding the companion server of a data dir, and starting it detached when it is not running.

`locate` reads the port the server announced (server/instance.py, else the configured port),
asks that port's /api/health with the data dir's token and accepts the answer only when it is
*this* data dir's server (its database under the data dir): a port answered by anything else
is never taken for ours. `start` runs `python -m server serve` in its own session (it outlives
the host, which Chrome ends after each answer), output appended to `<data dir>/server.log`, and
waits until `locate` finds it. Two starts at once are safe: the second server finds the data
dir's lock taken and exits; both starts then find the one that runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.commands.client import Client, ServerUnavailable
from server.instance import read_runtime
from server.private_files import FILE_MODE, make_private_dir

LOG_NAME = "server.log"
START_WITHIN_S = 25.0
HEALTH_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Found:
    running: bool
    url: str
    token: str = ""
    pid: int = 0
    problem: str = ""  # why a server that answered is not ours


def _health(port: int, data_dir: Path) -> tuple[int, Any]:
    """GET /api/health with the data dir's token, through the one client of the running server."""
    try:
        return Client(port, data_dir, timeout=HEALTH_TIMEOUT_S).request("GET", "/api/health", paired=False)
    except ServerUnavailable:
        return 0, None


def _ours(answer: Any, data_dir: Path) -> bool:
    if not isinstance(answer, dict):
        return False
    db = Path(str(answer.get("db", {}).get("path", "")))
    return db.is_absolute() and db.resolve().parent == data_dir.resolve()


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    if sys.platform == "win32":
        return True  # no cheap check: the health answer decides
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def locate(data_dir: Path, port: int) -> Found:
    """The server of `data_dir`: on the port it announced while its process lives, else `port`."""
    runtime = read_runtime(data_dir)
    announced = runtime.get("port")
    if isinstance(announced, int) and 0 < announced < 65536 and _alive(runtime.get("pid")):
        port = announced
    url = f"http://127.0.0.1:{port}"
    try:
        token = (data_dir / "token").read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        token = ""
    if not token:
        return Found(False, url)
    status, answer = _health(port, data_dir)
    if status == 0:
        return Found(False, url)
    if status != 200 or not _ours(answer, data_dir):
        return Found(False, url, problem=f"port {port} is answered by another program or another data dir")
    return Found(True, url, token, int(answer.get("build", {}).get("pid", 0)))


def _open_log(data_dir: Path) -> int:
    return os.open(data_dir / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)


def spawn(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """`wherefrom serve` for this data dir, detached: its own session, no terminal, no pipes to us."""
    make_private_dir(data_dir)
    log = _open_log(data_dir)
    args = [sys.executable, "-m", "server", "serve", "--port", str(port), "--data-dir", str(data_dir)]
    extra: dict[str, Any] = {}
    if sys.platform == "win32":
        extra["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        extra["start_new_session"] = True
    try:
        return subprocess.Popen(  # noqa: S603 - our own interpreter and module, fixed arguments
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=data_dir, close_fds=True, **extra
        )
    finally:
        os.close(log)


def _let_go(proc: subprocess.Popen[bytes], within: float = 20.0) -> None:
    """Wait for a server that lost the data dir's lock to exit (ending it if it does not)."""
    try:
        proc.wait(within)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait(5)


def start(data_dir: Path, port: int, within: float = START_WITHIN_S) -> tuple[Found, bool]:
    """The running server (started now when none was): (found, started_by_us)."""
    found = locate(data_dir, port)
    if found.running or found.problem:
        return found, False
    proc = spawn(data_dir, port)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = locate(data_dir, port)
        if found.running:
            if found.pid != proc.pid:
                _let_go(proc)  # the second of two starts: it finds the lock taken and exits
            return found, found.pid == proc.pid
        if found.problem:
            break
        proc.poll()
        time.sleep(0.1)
    return found, False
