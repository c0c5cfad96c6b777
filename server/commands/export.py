"""`wherefrom export DIR [--format markdown|json] [--site SITE] [--since DAY] [--include-off]`.

Reads everything visible from the RUNNING server (GET /api/export, page by page: forgotten
items never leave; items of `off` sites only with --include-off) and writes
  json:      DIR/wherefrom.json — one file in the shape of docs/export.schema.json, which
             `wherefrom import-chats DIR/wherefrom.json` reads back;
  markdown:  DIR/conversations/<site>/…md, DIR/notes/<host>/…md (a page's notes and clips),
             DIR/library/<host>/…md, names by server.dataio.slugs (stable across runs).
A file whose content did not change is not rewritten; one the person edited is never overwritten
(server.dataio.exportdir: the new version goes beside it, and the summary says so).
Progress on stderr, a summary on stdout.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from server.commands.client import Client, CommandError, Progress, fail
from server.dataio import exportdir, markdown, schema
from server.render import conversation as render_conversation

TIMEOUT = 120.0  # one page of the export


def add_commands(sub: Any, common: Any) -> None:
    p = sub.add_parser("export", help="write everything visible to DIR as Markdown or JSON")
    common(p)
    p.add_argument("dir", type=Path, metavar="DIR", help="the folder to write into (made when missing)")
    p.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="markdown: one file per conversation, page and document (default); json: one wherefrom.json "
        "that import-chats reads back",
    )
    p.add_argument(
        "--site",
        default=None,
        metavar="SITE",
        help="only this site: a host (and its subdomains) or a chat site id (chatgpt)",
    )
    p.add_argument("--since", default=None, metavar="DAY", help="only items dated from this day (YYYY-MM-DD)")
    p.add_argument("--include-off", action="store_true", help="also items of sites that are off (never forgotten ones)")
    p.set_defaults(func=cmd_export)


def pages(client: Client, kind: str, args: argparse.Namespace, left_out: collections.Counter[str]) -> Iterator[Any]:
    """Every item of `kind`, page by page, with a progress bar of its own (total from page one)."""
    query: dict[str, Any] = {"kind": kind}
    if args.site:
        query["site"] = args.site
    if args.since:
        query["since"] = args.since
    if args.include_off:
        query["include_off"] = "true"
    after, done = 0, 0
    progress: Progress | None = None
    while True:
        answer = client.call("GET", "/api/export", query={**query, "after": after})
        for host, n in answer["left_out"].items():
            left_out[host] += n
        if progress is None:
            progress = Progress(f"exporting {LABELS[kind]}", answer.get("total"), "items")
        for item in answer["items"]:
            yield item
            done += 1
            progress.update(done)
        if answer["next"] is None:
            progress.update(done)
            progress.finish()
            return
        after = answer["next"]


LABELS = {"conversations": "conversations", "facts": "notes and clips", "documents": "documents"}


def cmd_export(args: argparse.Namespace) -> int:
    try:
        if args.since is not None and not _is_day(args.since):
            raise CommandError(f"--since must be a day YYYY-MM-DD, not {args.since!r}")
        client = Client.from_args(args, timeout=TIMEOUT)
        client.call("GET", "/api/health")
        counts, written, left_out = (export_json if args.format == "json" else export_markdown)(client, args)
    except CommandError as err:
        return fail("export", err)
    except OSError as err:
        return fail("export", f"cannot write {args.dir}: {err}")
    print(
        f"exported to {args.dir} ({args.format}): {counts['conversations']} conversations, "
        f"{counts['facts']} notes and clips, {counts['documents']} documents; {written} files written"
    )
    if left_out:
        print(f"  left out (site off): {sum(left_out.values())} items from " + ", ".join(sorted(left_out)))
    return 0


def _is_day(text: str) -> bool:
    try:
        return len(text) == 10 and dt.date.fromisoformat(text) is not None
    except ValueError:
        return False


def export_json(
    client: Client, args: argparse.Namespace
) -> tuple[collections.Counter[str], int, collections.Counter[str]]:
    counts: collections.Counter[str] = collections.Counter()
    left_out: collections.Counter[str] = collections.Counter()
    # no export time in the file (the folder's manifest keeps it): the same store gives the same
    # bytes, so a round trip is byte-identical and an unchanged re-export rewrites nothing
    head = {
        "format": schema.FORMAT,
        "version": schema.VERSION,
        "filters": {"site": args.site, "since": args.since, "include_off": bool(args.include_off)},
    }
    # streamed into a fresh 0600 file in DIR (never through a link: private_files), then put at
    # wherefrom.json by the export folder's rules (never over a wherefrom.json the person changed)
    folder = exportdir.ExportDir.open(args.dir)
    streamed = ".wherefrom.json.partial"
    with folder.root.open_new(streamed) as raw:
        out = io.TextIOWrapper(raw, encoding="utf-8")
        out.write(json.dumps(head, ensure_ascii=False)[:-1])
        for kind in ("conversations", "facts", "documents"):
            out.write(f', "{kind}": [')
            for n, item in enumerate(pages(client, kind, args, left_out)):
                out.write(("," if n else "") + "\n" + json.dumps(item, ensure_ascii=False))
                counts[kind] += 1
            out.write("]")
        out.write("}\n")
        out.flush()
        out.detach()
    try:
        folder.place("json export", "wherefrom.json", streamed)
        folder.save()
    finally:
        folder.close()
    _report(folder)
    return counts, folder.written, left_out


def _report(out: exportdir.ExportDir) -> None:
    for rel in out.beside:
        print(f"  kept your edits to {rel}: the new version is beside it ({exportdir.BESIDE})", file=sys.stderr)
    for rel in out.kept_old:
        print(f"  kept {rel}: you edited it and its conversation was renamed", file=sys.stderr)
    if out.moved:
        print(f"  moved {out.moved} files of renamed items", file=sys.stderr)


def export_markdown(
    client: Client, args: argparse.Namespace
) -> tuple[collections.Counter[str], int, collections.Counter[str]]:
    counts: collections.Counter[str] = collections.Counter()
    left_out: collections.Counter[str] = collections.Counter()
    out = exportdir.ExportDir.open(args.dir)

    def write(identity: str, rel_path: str, text: str) -> None:
        try:
            out.write(identity, rel_path, text)
        except exportdir.ExportClash as err:
            raise CommandError(str(err)) from None

    try:
        for item in pages(client, "conversations", args, left_out):
            write(f"conversation {render_conversation.identity(item)}", *render_conversation.conversation(item))
            counts["conversations"] += 1
        by_page: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for item in pages(client, "facts", args, left_out):
            by_page[item["url"]].append(item)
            counts["facts"] += 1
        for url, facts in sorted(by_page.items()):
            write(f"page {url}", *markdown.page_notes(url, facts))
        for item in pages(client, "documents", args, left_out):
            write(f"document {item['url']}", *markdown.document(item))
            counts["documents"] += 1
    finally:
        out.save()
        out.close()
    _report(out)
    return counts, out.written, left_out
