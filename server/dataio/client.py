"""What every data command shares: the running server's address and token, JSON calls, and a
progress display on stderr (a drawn bar on a terminal, plain lines otherwise)."""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, TextIO

from server.settings import default_data_dir

TIMEOUT = 120.0


class CliError(Exception):
    """A failure the command reports on stderr and exits 1 for."""


class Client:
    def __init__(self, args: argparse.Namespace) -> None:
        self.data_dir = args.data_dir or default_data_dir()
        self.base = f"http://127.0.0.1:{args.port}"
        token_path = self.data_dir / "token"
        try:
            self.token = token_path.read_text("ascii").strip()
        except OSError:
            raise CliError(
                f"no token at {token_path}; start the server first (wherefrom serve --data-dir ...)"
            ) from None

    def call(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None) -> Any:
        url = self.base + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(  # noqa: S310 - loopback only
            url,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 - loopback only
                return json.loads(resp.read())
        except urllib.error.HTTPError as err:
            raise CliError(_reason(err.code, err.read())) from None
        except (OSError, ValueError) as err:
            raise CliError(f"server unreachable at {self.base}: {err}") from None


def _reason(status: int, raw: bytes) -> str:
    try:
        e = json.loads(raw)["error"]
        field = f" ({e['field']})" if e.get("field") else ""
        return f"HTTP {status} {e.get('code', '')}: {e.get('message', '')}{field}"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {status}"


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
