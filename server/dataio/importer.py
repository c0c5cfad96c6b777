"""The import route's writer: conversations, notes, clips and documents from an export, each at
its own time, through the same writers as the live paths (captures.write_turns, insert_fact,
pipeline.store_document) and so through the one provenance stamp.

One batch is one transaction. The placed conversations of a batch that are new to the store
(an import's common case) are written together: their rows in one statement
(captures.new_conversations), their turns as versions.new_thread places them, in the few
multi-row statements of facts.insert_facts; the others one by one as below.

Governance decides per item: a host that is not `collect` is not imported, and counted by its
mode. Re-importing adds only what is new: turns match by the service's message id (then by place
and content: server.memory.versions.write_thread for turns that carry their place,
captures.plan for those that do not; another version of a turn is kept at its place), notes and
clips by (kind, page, text, time), documents by page (a copy no newer than the stored one changes
nothing). One activity row per import: every batch of one `import_id` adds to the same row.
"""

from __future__ import annotations

import collections
import json
import time
from typing import Any

import aiosqlite

from server import activity
from server.governance.policy import PolicyOwner
from server.library.extract import Extracted
from server.library.pipeline import store_document
from server.memory import captures, versions
from server.memory.facts import MAX_TITLE_CHARS, insert_fact, insert_facts
from server.probe_cache import ProbeCache
from server.provenance import Provenance, restamp, stamp
from server.store.db import Store
from server.textcaps import cap

SOURCES = {"chatgpt": "ChatGPT", "claude": "Claude", "wherefrom": "a Wherefrom export"}


async def import_batch(store: Store, cache: ProbeCache, policy: PolicyOwner, body: dict[str, Any]) -> dict[str, Any]:
    """POST /api/import: one batch of an import (see module doc)."""
    counts: collections.Counter[str] = collections.Counter()
    refused: collections.Counter[str] = collections.Counter()
    refused_hosts: collections.Counter[str] = collections.Counter()
    modes: dict[str, str] = {}
    touched: set[str] = set()

    stamped: dict[str, Provenance] = {}

    async def allowed(url: str, *, count: bool = True) -> bool:
        if url not in stamped:
            stamped[url] = stamp(url, None)
        host = stamped[url].source_host
        if host not in modes:
            modes[host] = (await policy.mode_for(host)).mode
        if modes[host] != "collect":
            refused[modes[host]] += count
            refused_hosts[host] += count
            return False
        return True

    # validate every URL (400 naming the field) and decide governance before the transaction;
    # `continued`: the batch's first conversation is the rest of the previous batch's last one
    # (a long conversation sent in pieces), so it is not counted again
    continued = bool(body.get("continued"))
    conversations = [
        (n == 0 and continued, c)
        for n, c in enumerate(body.get("conversations", []))
        if await allowed(c["url"], count=not (n == 0 and continued))
    ]
    facts = [f for f in body.get("facts", []) if await allowed(f["url"])]
    documents = [d for d in body.get("documents", []) if await allowed(d["url"])]
    now = time.time()
    async with store.transaction() as conn:
        known = await _stored(conn, [(stamped[c["url"]].source_url, _site(c)) for _, c in conversations])
        # a placed conversation new to the store (and first in this batch) is written together
        # with the other new ones: its row in one statement, its turns in the batch's few
        fresh = {}
        for _, conv in conversations:
            key = (stamped[conv["url"]].source_url, _site(conv))
            if key not in known and key not in fresh and conv["turns"] and _placed(conv):
                fresh[key] = (restamp(stamped[conv["url"]], conv["title"]), key[1], conv.get("created_at"))
        ids = await captures.new_conversations(
            conn, [(p, site, now if at is None else at) for p, site, at in fresh.values()], now
        )
        rows: list[tuple[Provenance, dict[str, Any]]] = []
        done: set[tuple[str, str]] = set()
        for piece, conv in conversations:
            prov = restamp(stamped[conv["url"]], conv["title"])
            title = cap(conv["title"].strip(), MAX_TITLE_CHARS, ellipsis=True)
            site = _site(conv)
            key = (prov.source_url, site)
            existed = key in known or key in done
            incoming = [
                captures.Incoming(
                    t["role"],
                    t["text"],
                    t.get("native_id") or None,
                    t["valid_at"],
                    t["granularity"],
                    markdown=t.get("markdown") or None,
                    position=t.get("position"),
                    shown=t.get("shown", True),
                )
                for t in conv["turns"]
            ]
            if key in ids and not existed:
                turn_counts, new_rows = versions.new_thread(prov, ids[key], title, incoming, now)
                rows += new_rows
            else:
                if key in done:  # the same conversation again in this batch: its turns are stored first
                    await insert_facts(conn, rows)
                    rows = []
                cid, title = await captures.conversation_row(
                    conn, prov, site, title, now, created_at=conv.get("created_at")
                )
                placed = bool(incoming) and all(t.position is not None for t in incoming)
                writer = versions.write_thread if placed else captures.write_turns
                turn_counts, _ = await writer(conn, prov, cid, title, incoming, now)
            done.add(key)
            for action, n in turn_counts.items():
                counts[f"turns_{action}"] += n
            changed = any(turn_counts[k] for k in ("add", "update", "version", "show"))
            if not piece:
                outcome = "updated" if existed and changed else "new" if not existed else "unchanged"
                counts["conversations_" + outcome] += 1
            touched.add(prov.source_url)
        await insert_facts(conn, rows)
        for fact in facts:
            prov = restamp(stamped[fact["url"]], fact["title"])
            title = cap(fact["title"].strip(), MAX_TITLE_CHARS, ellipsis=True)
            dup = await (
                await conn.execute(
                    "SELECT 1 FROM facts WHERE kind = ? AND source_url = ? AND text = ? AND valid_at = ? "
                    "AND conversation_id IS NULL LIMIT 1",
                    (fact["kind"], prov.source_url, fact["text"], fact["valid_at"]),
                )
            ).fetchone()
            if dup is not None:
                counts["facts_unchanged"] += 1
                continue
            await insert_fact(
                conn,
                prov,
                kind=fact["kind"],
                title=title,
                text=fact["text"],
                valid_at=fact["valid_at"],
                granularity=fact["granularity"],
                now=now,
                via=fact.get("via"),
            )
            counts["facts_add"] += 1
            touched.add(prov.source_url)
        for doc in documents:
            prov = restamp(stamped[doc["url"]], doc["title"] or None)
            extracted = Extracted(
                title=doc["title"],
                author=doc.get("author"),
                date=doc.get("published"),
                sitename=doc.get("sitename"),
                language=doc.get("language"),
                canonical_url=doc.get("canonical_url"),
                text=doc["text"],
                extractor=doc["extractor"],
                markdown=doc.get("markdown") or None,
            )
            _, outcome, _ = await store_document(
                conn,
                prov,
                given_url=doc["given_url"],
                title=doc["title"],
                extracted=extracted,
                lane=doc["lane"],
                created_at=doc["created_at"],
                updated_at=doc["updated_at"],
                only_if_newer=True,
            )
            counts[f"documents_{outcome}"] += 1
            touched.add(prov.source_url)
        await _record(conn, body, counts, refused)
    for url in touched:
        cache.invalidate_url(url)
    return {
        "conversations": {k: counts[f"conversations_{k}"] for k in ("new", "updated", "unchanged")},
        "turns": {
            "added": counts["turns_add"],
            "updated": counts["turns_update"],
            "unchanged": counts["turns_unchanged"],
            "versions": counts["turns_version"],
            "switched": counts["turns_show"],
        },
        "facts": {"added": counts["facts_add"], "unchanged": counts["facts_unchanged"]},
        "documents": {k: counts[f"documents_{k}"] for k in ("saved", "updated", "unchanged")},
        "refused": dict(refused),
        "refused_hosts": dict(refused_hosts),
    }


def _site(conv: dict[str, Any]) -> str:
    return str(conv["site"]).strip().lower()


def _placed(conv: dict[str, Any]) -> bool:
    return all(t.get("position") is not None for t in conv["turns"])


async def _stored(conn: aiosqlite.Connection, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of these (source_url, site) conversations are stored: one query for the batch."""
    if not keys:
        return set()
    rows = await conn.execute_fetchall(
        "SELECT source_url, site FROM conversations "
        "WHERE (source_url, site) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))",
        (json.dumps(keys),),
    )
    return {(r[0], r[1]) for r in rows}


async def _record(
    conn: aiosqlite.Connection,
    body: dict[str, Any],
    counts: collections.Counter[str],
    refused: collections.Counter[str],
) -> None:
    """One activity row per import_id: the first batch writes it, the next ones add to it."""
    import_id = body["import_id"]
    row = await (
        await conn.execute(
            "SELECT id, detail FROM activity WHERE kind = 'import' AND json_extract(detail, '$.import_id') = ? "
            "ORDER BY id DESC LIMIT 1",
            (import_id,),
        )
    ).fetchone()
    detail: dict[str, Any] = (
        json.loads(row["detail"])
        if row is not None
        else {"import_id": import_id, "source": body["source"], "counts": {}, "refused": {}, "skipped": {}}
    )
    for key, n in counts.items():
        detail["counts"][key] = detail["counts"].get(key, 0) + n
    for key, n in refused.items():
        detail["refused"][key] = detail["refused"].get(key, 0) + n
    for item in body.get("skipped", []):
        detail["skipped"][item["reason"]] = detail["skipped"].get(item["reason"], 0) + item["count"]
    c = detail["counts"]
    conversations = sum(c.get(f"conversations_{k}", 0) for k in ("new", "updated", "unchanged"))
    summary = (
        f"Imported from {SOURCES.get(detail['source'], detail['source'])}: {conversations} conversations, "
        f"{c.get('turns_add', 0)} new messages"
    )
    if c.get("turns_version"):
        summary += f" and {c['turns_version']} other versions of a message"
    if c.get("facts_add") or c.get("documents_saved"):
        summary += f", {c.get('facts_add', 0)} notes and clips, {c.get('documents_saved', 0)} documents"
    if detail["refused"]:
        summary += f" ({sum(detail['refused'].values())} refused by site mode)"
    if row is None:
        await activity.record(conn, "import", summary, detail=detail)
    else:
        await conn.execute(
            "UPDATE activity SET at = ?, summary = ?, detail = ? WHERE id = ?",
            (time.time(), cap(summary, 200, ellipsis=True), json.dumps(detail), row["id"]),
        )
