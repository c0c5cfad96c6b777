"""Our own server as a subprocess (`python -m server serve`) on a free port with its own data
dir — for the crash test and the load benchmark. `start()` waits until it answers and checks that
the process answering is the one started and that its database lives in the given data dir, so a
test never talks to someone else's process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_args(port: int, data_dir: Path, *extra_args: str, log_level: str = "warning") -> list[str]:
    """The command line that starts our server on `port` with `data_dir`."""
    return [
        sys.executable,
        "-m",
        "server",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        "--log-level",
        log_level,
        *extra_args,
    ]


def identity_problem(health: dict[str, Any], pid: int, under: Path) -> str | None:
    """Why the server that answered is not the one we started (None when it is): its pid, and
    where its database lives."""
    got = health.get("build", {}).get("pid")
    if got != pid:
        return f"the server answering is pid {got}, not our subprocess {pid}"
    db = Path(health.get("db", {}).get("path", ""))
    if not db.is_absolute() or under.resolve() not in db.resolve().parents:
        return f"the server's database {db} is not under {under}"
    return None


class ServerProcess:
    def __init__(self, data_dir: Path, *extra_args: str, log_level: str = "warning") -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.args = serve_args(self.port, data_dir, *extra_args, log_level=log_level)
        self.log_path = data_dir.parent / f"server-{self.port}.log"
        self.token = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, within: float = 30.0) -> ServerProcess:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + within
        while True:
            token_file = self.data_dir / "token"
            if token_file.exists():
                self.token = token_file.read_text("ascii").strip()
                try:
                    status, health = self.call("GET", "/api/health", timeout=1)
                except OSError:
                    status, health = 0, None
                if status == 200 and isinstance(health, dict) and "build" in health:
                    break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start:\n{self.log_path.read_text(errors='replace')}")
            time.sleep(0.05)
        problem = identity_problem(health, self.proc.pid, self.data_dir)
        if problem:
            raise RuntimeError(problem)
        return self

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._log.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 10
    ) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        h = {"Authorization": f"Bearer {self.token}"}
        if data is not None:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback
                raw, status = resp.read(), resp.status
        except urllib.error.HTTPError as err:
            raw, status = err.read(), err.code
        return status, json.loads(raw) if raw else None
