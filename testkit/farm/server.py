"""An isolated companion server per test: its own data dir, its own free port, checked to be ours.

`CompanionServer(root).start()` runs `python -m server serve --port P --data-dir <root>/server-data`
as a subprocess; `await ready()` waits for the token and a healthy answer and then checks, with the
token, that GET /api/health reports *this* subprocess's pid and a database under `root`.
The Python client talks to the server directly (never through the tap): the tap sees only browser
traffic. Every call of the harness's own carries `X-Wherefrom-Harness: 1`.

The server runs with `--ledger <root>/ledger.jsonl` (one JSON line per request it received);
`ledger()` reads it and `ledger_mismatch()` cross-checks it against the tap: the requests the tap
forwarded to this server and the ledger's entries without the harness header must be the same
multiset of (method, path, query).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

from testkit.server_process import free_port, identity_problem, serve_args

REPO = Path(__file__).resolve().parents[2]
HARNESS_HEADER = "X-Wherefrom-Harness"


class FarmError(RuntimeError):
    """The farm could not be set up: the test is invalid (an error, never a pass or a skip)."""


class CompanionServer:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.data_dir = self.root / "server-data"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.token = ""
        self.health: dict[str, Any] = {}
        self.log_path = self.root / "server.log"
        self.ledger_path = self.root / "ledger.jsonl"
        self._session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> CompanionServer:
        """Launch the subprocess (non-blocking: call `await ready()` next). A stopped server starts
        again on the same port, data dir and ledger."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        log = self.log_path.open("ab")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            serve_args(self.port, self.data_dir, "--ledger", str(self.ledger_path)),
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        log.close()
        return self

    async def ready(self, within: float = 20.0) -> None:
        deadline = time.monotonic() + within
        token_path = self.data_dir / "token"
        assert self.proc is not None
        while True:
            if self.proc.poll() is not None:
                raise FarmError(f"companion server exited with {self.proc.returncode}: {self.log_tail()}")
            if token_path.exists():
                tok = token_path.read_text("ascii").strip()
                if tok:
                    self.token = tok
                    try:
                        status, body = await self.call("GET", "/api/health")
                    except aiohttp.ClientError:
                        status, body = 0, None
                    if status == 200 and isinstance(body, dict) and "build" in body:
                        self.health = body
                        break
            if time.monotonic() > deadline:
                raise FarmError(f"companion server not healthy on {self.url} after {within}s: {self.log_tail()}")
            await asyncio.sleep(0.05)
        self.check_identity(self.health)

    def check_identity(self, health: dict[str, Any]) -> None:
        """The answering process is the one we started, and its database lives under our dir."""
        assert self.proc is not None
        problem = identity_problem(health, self.proc.pid, self.root)
        if problem:
            raise FarmError(f"{self.url}: {problem}")

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text("utf-8", errors="replace")[-n:]
        except OSError:
            return ""

    async def restart(self) -> None:
        """Start a stopped server again: same port, same data dir, same ledger; checked as at first."""
        if self.proc is not None and self.proc.poll() is None:
            raise FarmError("restart() of a server that is still running")
        self.start()
        await self.ready()

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            for _ in range(50):
                if self.proc.poll() is not None:
                    break
                await asyncio.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)

    # ------------------------------------------------------------------ client
    async def call(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        auth: bool = True,
    ) -> tuple[int, Any]:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15))
        headers = {HARNESS_HEADER: "1"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        async with self._session.request(
            method, self.url + path, json=json_body, params=params, headers=headers
        ) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text) if text else None
            except ValueError:
                return resp.status, text

    async def get(self, path: str, **params: Any) -> Any:
        status, body = await self.call("GET", path, params=params or None)
        if status != 200:
            raise FarmError(f"GET {path} {params} -> {status} {body}")
        return body

    async def set_site_mode(self, host: str, mode: str) -> Any:
        status, body = await self.call("PUT", "/api/site-mode", json_body={"host": host, "mode": mode})
        if status not in (200, 201):
            raise FarmError(f"PUT /api/site-mode {host}={mode} -> {status} {body}")
        return body

    async def conversation(self, url: str) -> list[dict[str, str]]:
        body = await self.get("/api/conversations", url=url)
        return [{"role": t["role"], "text": t["text"]} for t in body.get("turns", [])]

    async def activity(self, limit: int = 200) -> list[dict[str, Any]]:
        body = await self.get("/api/activity", limit=limit)
        return body.get("activity", []) if isinstance(body, dict) else body

    # ------------------------------------------------------------------ ledger
    def ledger(self) -> list[dict[str, Any]]:
        """The server's own record of every request it received (complete lines only)."""
        try:
            text = self.ledger_path.read_text("utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line being written
        return out

    def browser_ledger(self) -> list[dict[str, Any]]:
        """Ledger entries not made by the harness itself."""
        h = HARNESS_HEADER.lower()
        return [e for e in self.ledger() if h not in {k.lower() for k in e.get("headers", [])}]


def ledger_key(entry: dict[str, Any]) -> tuple[str, str, str]:
    return (entry["method"], entry["path"], entry.get("query") or "")
