"""`wherefrom add URL...` and `wherefrom import FILE`: add pages through the RUNNING server.

They speak HTTP to 127.0.0.1:<port> with the token from <data dir>/token, so that the server's
single writer, its governance (site modes) and its fetcher's rules apply exactly as they do to
the extension. Progress goes to stderr, one line per page; a summary follows (saved, already
saved, failed with reasons); the exit status is 1 when anything failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from server.commands.client import Client, ServerUnavailable, TimedOut, error_message, fail

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
        return fail("import", f"cannot read {args.file}: {err}")
    if not urls:
        return fail("import", f"no URLs in {args.file}")
    return run(urls, args)


def run(urls: list[str], args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    client = Client.from_args(args, timeout=REQUEST_TIMEOUT)
    try:
        client.token  # noqa: B018 - no token: nothing to try
    except ServerUnavailable as exc:
        return fail(args.command, exc, err)
    saved: list[str] = []
    already: list[str] = []
    failed: list[tuple[str, str]] = []
    width = len(str(len(urls)))
    for i, url in enumerate(urls, 1):
        print(f"[{i:>{width}}/{len(urls)}] {url} ...", end=" ", file=err, flush=True)
        try:
            status, body = client.post("/api/library/add_url", {"url": url})
        except TimedOut:
            print("timed out", file=err)
            failed.append((url, f"no answer within {REQUEST_TIMEOUT:g} s"))
            continue
        except ServerUnavailable as exc:
            print(f"failed: {exc}", file=err)
            failed.append((url, str(exc)))
            # the rest would fail the same way
            for rest in urls[i:]:
                failed.append((rest, "not tried: the server cannot be asked (above)"))
            break
        if status == 201:
            saved.append(url)
            print(f"saved ({_chunks(body)})", file=err)
        elif status == 200:
            already.append(url)
            outcome = body.get("outcome", "already saved") if isinstance(body, dict) else "already saved"
            print(f"already saved ({outcome})", file=err)
        else:
            reason = error_message(status, body)
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
