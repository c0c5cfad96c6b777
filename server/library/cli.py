"""`wherefrom add URL...` and `wherefrom import FILE`: add pages through the RUNNING server.

They speak HTTP to 127.0.0.1:<port> with the token from <data dir>/token, so that the server's
single writer, its governance (site modes) and its fetcher's rules apply exactly as they do to
the extension. Progress goes to stderr, one line per page; a summary follows (saved, already
saved, failed with reasons); the exit status is 1 when anything failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from server.settings import default_data_dir

REQUEST_TIMEOUT = 60.0  # the server's own fetch is bounded at 20 s; extraction follows


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    add = sub.add_parser("add", help="save pages to the library (the running server fetches them)")
    common(add)
    add.add_argument("urls", nargs="+", metavar="URL", help="http(s) page to save")
    add.set_defaults(func=cmd_add)
    imp = sub.add_parser("import", help="save every URL listed in FILE (one a line; # comments)")
    common(imp)
    imp.add_argument("file", metavar="FILE", help="text file of URLs, or - for standard input")
    imp.set_defaults(func=cmd_import)


def read_url_list(lines: Iterable[str]) -> list[str]:
    """One URL a line; blank lines and lines starting with # are ignored; surrounding space trimmed."""
    out = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def cmd_add(args: argparse.Namespace) -> int:
    return run(args.urls, args)


def cmd_import(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            urls = read_url_list(sys.stdin)
        else:
            urls = read_url_list(Path(args.file).read_text("utf-8").splitlines())
    except (OSError, UnicodeDecodeError) as err:
        print(f"wherefrom import: cannot read {args.file}: {err}", file=sys.stderr)
        return 1
    if not urls:
        print(f"wherefrom import: no URLs in {args.file}", file=sys.stderr)
        return 1
    return run(urls, args)


def run(urls: list[str], args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    data_dir = args.data_dir or default_data_dir()
    token_path = data_dir / "token"
    try:
        token = token_path.read_text("ascii").strip()
    except OSError:
        print(f"wherefrom: no token at {token_path}; start the server first (wherefrom serve --data-dir ...)", file=err)
        return 1
    client = Client(f"http://127.0.0.1:{args.port}", token)
    saved: list[str] = []
    already: list[str] = []
    failed: list[tuple[str, str]] = []
    width = len(str(len(urls)))
    for i, url in enumerate(urls, 1):
        print(f"[{i:>{width}}/{len(urls)}] {url} ...", end=" ", file=err, flush=True)
        try:
            status, body = client.add_url(url)
        except TimeoutError:
            print("timed out", file=err)
            failed.append((url, f"no answer within {REQUEST_TIMEOUT:g} s"))
            continue
        except OSError as exc:
            print("server unreachable", file=err)
            failed.append((url, f"server unreachable at 127.0.0.1:{args.port}: {exc}"))
            # the rest would fail the same way
            for rest in urls[i:]:
                failed.append((rest, "not tried: server unreachable"))
            break
        if status == 201:
            saved.append(url)
            print(f"saved ({_chunks(body)})", file=err)
        elif status == 200:
            already.append(url)
            outcome = body.get("outcome", "already saved") if isinstance(body, dict) else "already saved"
            print(f"already saved ({outcome})", file=err)
        else:
            reason = _reason(status, body)
            failed.append((url, reason))
            print(f"failed: {reason}", file=err)
    print(f"saved {len(saved)}, already saved {len(already)}, failed {len(failed)}", file=out)
    for url, reason in failed:
        print(f"  failed {url}: {reason}", file=out)
    return 1 if failed else 0


def _chunks(body: Any) -> str:
    try:
        return f"{body['document']['chunks']} chunks"
    except (KeyError, TypeError):
        return "ok"


def _reason(status: int, body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        e = body["error"]
        return f"HTTP {status} {e.get('code', '')}: {e.get('message', '')}".strip()
    return f"HTTP {status}"


class Client:
    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.token = token

    def add_url(self, url: str) -> tuple[int, Any]:
        req = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
            self.base + "/api/library/add_url",
            data=json.dumps({"url": url}).encode("utf-8"),
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as resp:  # noqa: S310 - fixed loopback URL
                return resp.status, _json(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, _json(exc.read())


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
