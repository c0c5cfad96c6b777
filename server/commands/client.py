"""The one client of the RUNNING Wherefrom server, for every command that asks it (status, add,
import, search, mcp, import-chats, export, restore's check, the browser link's host).

It speaks HTTP to 127.0.0.1:<port> with the token from <data dir>/token, so the server stays
the one writer and the one authority (governance, visibility, ranking). The token is sent only
to a server that proved it holds it (server/proof.py), on the connection the proof came over:
another local user listening on the port while the server is down never receives it. Every failure is one
line: `ServerUnavailable` (not running, never paired, token refused) says what to do,
`error_message()` gives a refused request in the server's own words, and `fail()` prints either
as `wherefrom <command>: <message>` and returns the exit code. `Progress` is the progress
display on stderr (a drawn bar on a terminal, plain lines otherwise).
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any, TextIO

from server import proof
from server.settings import default_data_dir

TIMEOUT = 30.0

# exit codes of every command
OK = 0
FAILED = 1  # could not do it, or could not tell
UNHEALTHY = 2  # the server answered that it is not healthy (status only)


class CommandError(Exception):
    """A failure the command reports on stderr in one line and exits FAILED for."""


class ServerUnavailable(CommandError):
    """The server is not running, or does not accept our token (not paired)."""


class TimedOut(ServerUnavailable):
    """The server accepted the request but gave no answer within the client's timeout."""


class Client:
    def __init__(self, port: int, data_dir: Path | None = None, *, timeout: float = TIMEOUT) -> None:
        self.port = port
        self.data_dir = data_dir or default_data_dir()
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout
        self._token: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, timeout: float = TIMEOUT) -> Client:
        """The client for a command's `--port` and `--data-dir`."""
        return cls(args.port, args.data_dir, timeout=timeout)

    @property
    def token_path(self) -> Path:
        return self.data_dir / "token"

    @property
    def token(self) -> str:
        if self._token is None:
            try:
                self._token = self.token_path.read_text("ascii").strip()
            except OSError:
                raise ServerUnavailable(
                    f"no token at {self.token_path}: the Wherefrom server has never run with this data dir; "
                    f"start it with `wherefrom serve --data-dir {self.data_dir} --port {self.port}`"
                ) from None
        return self._token

    def get(self, path: str, **query: Any) -> tuple[int, Any]:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        return self.request("POST", path, body)

    def call(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None) -> Any:
        """The answer's body when the server accepts the request, else CommandError with its words."""
        status, answer = self.request(method, path, body, query)
        if not 200 <= status < 300:
            raise CommandError(error_message(status, answer))
        return answer

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: dict[str, Any] | None = None,
        *,
        paired: bool = True,
    ) -> tuple[int, Any]:
        """(status, parsed JSON body or None). `paired=False` asks without insisting on the
        token: it is sent when there is one, and a 401 is returned rather than raised."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"} if data is not None else {}
        token = self.token if paired or self.token_path.exists() else None
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            conn.connect()
            conn.auto_open = 0  # never reconnect behind our back: the token goes where the proof came from
            if token is not None:
                self._prove(conn, token)
                headers["Authorization"] = f"Bearer {token}"
            conn.request(method, target, body=data, headers=headers)
            resp = conn.getresponse()
            status, raw = resp.status, resp.read()
        except TimeoutError:
            raise TimedOut(f"no answer from {self.base} within {self.timeout:g} s") from None
        except (OSError, ValueError, http.client.HTTPException) as err:
            raise ServerUnavailable(
                f"the Wherefrom server is not reachable at {self.base} ({_reason(err)}); "
                f"start it with `wherefrom serve --port {self.port}` (and the same --data-dir)"
            ) from None
        finally:
            conn.close()
        if status == 401 and paired:
            raise ServerUnavailable(
                f"the server at {self.base} did not accept the token in {self.token_path} "
                f"(not paired with this data dir): pass the --data-dir the server runs with"
            )
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, None

    def _prove(self, conn: http.client.HTTPConnection, token: str) -> None:
        """The listener proves it holds the token (server/proof.py), on this connection, before
        the token is sent; else ServerUnavailable and nothing of the token leaves."""
        nonce = proof.new_nonce()
        conn.request("GET", "/api/proof?nonce=" + nonce)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            answer = json.loads(raw).get("proof") if resp.status == 200 else None
        except (ValueError, AttributeError):
            answer = None
        if not proof.is_proof(token, nonce, answer) or resp.will_close:
            raise ServerUnavailable(
                f"the program at {self.base} did not prove it holds the token in {self.token_path} "
                "(a server of another data dir, or another user's program); the token was not sent: "
                "pass the --data-dir the server runs with"
            )


def error_message(status: int, body: Any) -> str:
    """A refused request in the server's own words (`{"error": {"code", "message", "field"}}`)."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        field = f" ({err['field']})" if err.get("field") else ""
        return f"HTTP {status} {err.get('code', '')}: {err.get('message', '')}{field}".strip()
    return f"HTTP {status}"


def fail(command: str, err: BaseException | str, stream: TextIO | None = None) -> int:
    """Print `wherefrom <command>: <err>` on stderr; the FAILED exit code."""
    print(f"wherefrom {command}: {err}", file=stream or sys.stderr)
    return FAILED


def _reason(err: BaseException) -> str:
    inner = getattr(err, "reason", None)
    return str(inner if inner is not None else err) or type(err).__name__


class Progress:
    """`update(done)`; on a terminal a bar redrawn at most 10 times a second, else a plain line
    at most every 2 seconds (and at the end)."""

    def __init__(self, label: str, total: int | None, unit: str, stream: TextIO | None = None) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.done = 0
        self._last = 0.0
        self._shown = -1

    def update(self, done: int, *, final: bool = False) -> None:
        self.done = done
        now = time.monotonic()
        if not final and now - self._last < (0.1 if self.tty else 2.0):
            return
        if final and not self.tty and self._shown == done:
            return
        self._shown = done
        self._last = now
        if self.tty:
            if self.total:
                width = 30
                filled = int(width * min(done, self.total) / self.total)
                bar = "█" * filled + "░" * (width - filled)
                line = f"\r{self.label} [{bar}] {done}/{self.total} {self.unit}"
            else:
                line = f"\r{self.label}: {done} {self.unit}"
            self.stream.write(line + ("\n" if final else ""))
        else:
            of = f"/{self.total}" if self.total else ""
            self.stream.write(f"{self.label}: {done}{of} {self.unit}\n")
        self.stream.flush()

    def finish(self) -> None:
        self.update(self.done, final=True)
