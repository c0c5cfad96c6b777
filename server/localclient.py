"""A client of the RUNNING Wherefrom server, for commands that ask it (search, mcp).

It speaks HTTP to 127.0.0.1:<port> with the token from <data dir>/token, so the server stays
the one writer and the one authority (governance, visibility, ranking). Every failure to reach
it, or to be let in, is a `ServerUnavailable` whose message says what to do.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from server.settings import default_data_dir

TIMEOUT = 30.0


class ServerUnavailable(Exception):
    """The server is not running, or does not accept our token (not paired)."""


class LocalClient:
    def __init__(self, port: int, data_dir: Path | None = None, *, timeout: float = TIMEOUT) -> None:
        self.port = port
        self.data_dir = data_dir or default_data_dir()
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout
        self._token: str | None = None

    @property
    def token(self) -> str:
        if self._token is None:
            path = self.data_dir / "token"
            try:
                self._token = path.read_text("ascii").strip()
            except OSError:
                raise ServerUnavailable(
                    f"no token at {path}: the Wherefrom server has never run with this data dir; "
                    f"start it with `wherefrom serve --data-dir {self.data_dir} --port {self.port}`"
                ) from None
        return self._token

    def get(self, path: str, **query: Any) -> tuple[int, Any]:
        params = {k: v for k, v in query.items() if v is not None}
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        return self._send(urllib.request.Request(url, method="GET"))  # noqa: S310 - loopback only

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        req = urllib.request.Request(  # noqa: S310 - loopback only
            self.base + path,
            data=json.dumps(body).encode("utf-8"),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        return self._send(req)

    def _send(self, req: urllib.request.Request) -> tuple[int, Any]:
        req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - loopback only
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        except (OSError, ValueError) as err:
            raise ServerUnavailable(
                f"the Wherefrom server is not reachable at {self.base} ({_reason(err)}); "
                f"start it with `wherefrom serve --port {self.port}` (and the same --data-dir)"
            ) from None
        if status == 401:
            raise ServerUnavailable(
                f"the server at {self.base} did not accept the token in {self.data_dir / 'token'} "
                f"(not paired with this data dir): pass the --data-dir the server runs with"
            )
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, None


def error_message(status: int, body: Any) -> str:
    """The server's own words for a refused request (`{"error": {"code", "message"}}`)."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return f"{err.get('message', '')} (HTTP {status} {err.get('code', '')})".strip()
    return f"HTTP {status}"


def _reason(err: BaseException) -> str:
    inner = getattr(err, "reason", None)
    return str(inner if inner is not None else err) or type(err).__name__
