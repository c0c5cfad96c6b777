"""`wherefrom import-chats FILE`: a ChatGPT or Claude data export (conversations.json, the
downloaded .zip or the folder it unzips to), or a Wherefrom JSON export, into the RUNNING server.

The whole file is read and checked first (a malformed one: exit 1 naming the line or field, and
nothing sent); then it goes in batches to POST /api/import under one import id (one activity
row). Progress on stderr; a summary on stdout: conversations, messages, skipped by reason,
refused by site mode. Re-running adds only what is new, so an import cut short (the server
stopped) is finished by running it again.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from server.commands.client import Client, CommandError, Progress, fail
from server.dataio.chats import ExportFormatError, Parsed, read_file

BATCH_BYTES = 3 * 1024 * 1024  # half the route's body limit, with room for JSON escapes
BATCH_CONVERSATIONS = 200
TIMEOUT = 120.0  # one batch of BATCH_BYTES through the server's writer


def add_commands(sub: Any, common: Any) -> None:
    p = sub.add_parser("import-chats", help="import a ChatGPT or Claude data export (or a Wherefrom JSON export)")
    common(p)
    p.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="conversations.json, the export's .zip or its unzipped folder, or a Wherefrom export's wherefrom.json",
    )
    p.set_defaults(func=cmd_import_chats)


def cmd_import_chats(args: argparse.Namespace) -> int:
    try:
        parsed = read_file(args.file)
    except ExportFormatError as err:
        return fail("import-chats", f"{args.file}: {err}; nothing was imported")
    try:
        totals = run(Client.from_args(args, timeout=TIMEOUT), parsed)
    except CommandError as err:
        code = fail("import-chats", err)
        print("  what was sent before this is stored; run the same command again to finish", file=sys.stderr)
        return code
    print(summary(parsed, totals))
    return 0


def batches(parsed: Parsed) -> Iterator[dict[str, Any]]:
    """Bodies of at most ~BATCH_BYTES; a conversation larger than that goes in pieces (its turns
    in order: the next piece appends to it)."""
    size, convs = 0, list[dict[str, Any]]()
    continued = False  # the batch's first conversation is the rest of the previous batch's last
    for conv in parsed.conversations:
        for k, (piece, n) in enumerate(_pieces(conv)):
            if convs and (size + n > BATCH_BYTES or len(convs) >= BATCH_CONVERSATIONS):
                yield {"conversations": convs, "continued": continued}
                size, convs, continued = 0, list[dict[str, Any]](), k > 0
            convs.append(piece)
            size += n
    if convs:
        yield {"conversations": convs, "continued": continued}
    for start in range(0, len(parsed.facts), 2000):
        yield {"facts": parsed.facts[start : start + 2000]}
    size, docs = 0, list[dict[str, Any]]()
    for doc in parsed.documents:
        n = _size(doc)
        if docs and (size + n > BATCH_BYTES or len(docs) >= 200):
            yield {"documents": docs}
            size, docs = 0, list[dict[str, Any]]()
        docs.append(doc)
        size += n
    if docs:
        yield {"documents": docs}


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _pieces(conv: dict[str, Any]) -> Iterator[tuple[dict[str, Any], int]]:
    """The conversation in pieces of at most ~BATCH_BYTES, each with its size as JSON: the
    conversation without turns, plus each turn, plus the ", " between turns (what json.dumps
    writes), so each turn is encoded once."""
    bare = _size({**conv, "turns": []})
    turns: list[dict[str, Any]] = []
    size = 0
    for turn in conv["turns"]:
        n = _size(turn)
        if turns and size + n > BATCH_BYTES:
            yield {**conv, "turns": turns}, bare + size + 2 * (len(turns) - 1)
            turns, size = [], 0
        turns.append(turn)
        size += n
    if turns or not conv["turns"]:
        yield {**conv, "turns": turns}, bare + size + 2 * max(len(turns) - 1, 0)


def run(client: Client, parsed: Parsed) -> collections.Counter[str]:
    client.call("GET", "/api/health")  # unreachable: stop before anything is sent
    import_id = uuid.uuid4().hex
    skipped = [{"reason": r, "count": n} for r, n in sorted(parsed.skipped.items())]
    if parsed.truncated:
        skipped.append({"reason": f"cut to the turn limit (kept, shortened): {parsed.truncated}", "count": 0})
    items = len(parsed.conversations) + len(parsed.facts) + len(parsed.documents)
    progress = Progress("importing", items, "items")
    totals: collections.Counter[str] = collections.Counter()
    sent = 0
    first = True
    seen_urls: set[str] = set()
    for batch in _ahead(batches(parsed)):
        body = {"import_id": import_id, "source": parsed.source, **batch, "skipped": skipped if first else []}
        first = False
        answer = client.call("POST", "/api/import", body)
        for group in ("conversations", "turns", "facts", "documents", "refused"):
            for key, n in answer[group].items():
                totals[f"{group}.{key}"] += n
        for conv in batch.get("conversations", []):
            if conv["url"] not in seen_urls:
                seen_urls.add(conv["url"])
                sent += 1
        sent += len(batch.get("facts", [])) + len(batch.get("documents", []))
        progress.update(sent)
    if first:  # nothing in the file: still one activity row saying so
        client.call("POST", "/api/import", {"import_id": import_id, "source": parsed.source, "skipped": skipped})
    progress.update(sent)
    progress.finish()
    return totals


def _ahead(items: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The items, the next one made in a thread while the caller sends this one (the client
    sizes the next batch while the server writes the current one); order kept."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="batches") as pool:
        pending = pool.submit(next, items, None)
        while (item := pending.result()) is not None:
            pending = pool.submit(next, items, None)
            yield item


def summary(parsed: Parsed, t: collections.Counter[str]) -> str:
    lines = [
        f"imported from {parsed.source}: {len(parsed.conversations)} conversations, "
        f"{parsed.messages + sum(parsed.skipped.values())} messages in the file: "
        f"{parsed.messages - parsed.other_versions} shown, {parsed.other_versions} other versions of a turn, "
        f"{sum(parsed.skipped.values())} skipped",
        f"  conversations: {t['conversations.new']} new, {t['conversations.updated']} with new messages, "
        f"{t['conversations.unchanged']} unchanged",
        f"  messages: {t['turns.added']} added, {t['turns.versions']} other versions kept, "
        f"{t['turns.updated']} updated, {t['turns.unchanged']} already there",
    ]
    if parsed.facts or parsed.documents:
        lines.append(f"  notes and clips: {t['facts.added']} added, {t['facts.unchanged']} already there")
        lines.append(
            f"  documents: {t['documents.saved']} added, {t['documents.updated']} updated, "
            f"{t['documents.unchanged']} unchanged"
        )
    refused = {k.split(".", 1)[1]: n for k, n in t.items() if k.startswith("refused.") and n}
    if refused:
        lines.append("  not imported (site mode): " + ", ".join(f"{n} {mode}" for mode, n in sorted(refused.items())))
    if parsed.skipped:
        lines.append("  skipped: " + ", ".join(f"{n} {r}" for r, n in sorted(parsed.skipped.items())))
    if parsed.truncated:
        lines.append(f"  {parsed.truncated} messages cut to the turn limit")
    return "\n".join(lines)
