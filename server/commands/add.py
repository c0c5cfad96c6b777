"""`wherefrom add URL...` and `wherefrom import FILE`: add pages through the RUNNING server.

They speak HTTP to 127.0.0.1:<port> with the token from <data dir>/token, so that the server's
single writer, its governance (site modes) and its fetcher's rules apply exactly as they do to
the extension. Progress goes to stderr, one line per page; a summary follows (saved, already
saved, failed with reasons); the exit status is 1 when anything failed, 0 otherwise.

`import` takes a list of URLs; given a chat export instead (conversations.json, the export's
.zip or its unzipped folder, a Wherefrom JSON export) it sends nothing and names the command
that reads it, `import-chats`.
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from server.commands.client import Client, ServerUnavailable, TimedOut, error_message, fail
from server.dataio.chats import ZIP_MEMBERS

REQUEST_TIMEOUT = 60.0  # the server's own fetch is bounded at 20 s; extraction follows


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    add = sub.add_parser("add", help="save pages to the library (the running server fetches them)")
    common(add)
    add.add_argument("urls", nargs="+", metavar="URL", help="http(s) page to save")
    add.set_defaults(func=cmd_add)
    imp = sub.add_parser(
        "import", help="save every URL listed in FILE (one a line; # comments); chat exports: import-chats"
    )
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


def chat_export(name: str, raw: bytes) -> str | None:
    """What kind of chat export `raw` (a file's bytes) is, or None when it is not one: JSON (an
    array or object, where a URL list has URLs) or a zip that holds an export's JSON."""
    if raw[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as zf:
                names = {Path(n).name for n in zf.namelist()}
        except zipfile.BadZipFile:
            return "a zip file"
        found = [m for m in ZIP_MEMBERS if m in names]
        return f"a zip holding {found[0]}" if found else "a zip file"
    head = raw[:4096].decode("utf-8-sig", errors="replace").lstrip()
    if head[:1] in ("[", "{") or Path(name).name in ZIP_MEMBERS:
        return "JSON (a chat or Wherefrom export)"
    return None


def cmd_import(args: argparse.Namespace) -> int:
    hint = "import it with: wherefrom import-chats {}"
    try:
        if args.file == "-":
            raw = sys.stdin.buffer.read()
        else:
            path = Path(args.file)
            if path.is_dir():
                held = [m for m in ZIP_MEMBERS if (path / m).is_file()]
                if held:
                    return fail(
                        "import", f"{args.file} is an export folder holding {held[0]}; {hint.format(args.file)}"
                    )
                return fail("import", f"{args.file} is a folder; give a text file of URLs, one a line")
            raw = path.read_bytes()
    except OSError as err:
        return fail("import", f"cannot read {args.file}: {err.strerror or err}")
    kind = chat_export(args.file, raw)
    if kind is not None:
        what = "standard input" if args.file == "-" else args.file
        target = "FILE" if args.file == "-" else args.file
        then = "" if kind == "a zip file" else f" — {hint.format(target)}"
        return fail("import", f"{what} is {kind}, not a list of URLs; nothing was sent{then}")
    try:
        urls = read_url_list(raw.decode("utf-8-sig").splitlines())
    except UnicodeDecodeError as err:
        return fail("import", f"cannot read {args.file}: not UTF-8 text (byte {err.start})")
    if not urls:
        return fail("import", f"no URLs in {args.file}")
    return run(urls, args)


def run(urls: list[str], args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    client = Client.from_args(args, timeout=REQUEST_TIMEOUT)
    try:
        client.request("GET", "/api/health")  # no token, no server: one line, nothing tried
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
