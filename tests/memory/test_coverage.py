"""The any-term stage (server.memory.coverage) against an oracle written from the stored texts:
the visible facts holding the most of the asked terms first, then the newest (or, when ranked,
bm25 within a coverage), hidden facts never, and the terms each one holds."""

from __future__ import annotations

import random
import sqlite3
import time
from functools import partial
from pathlib import Path
from typing import Any

from server import ages
from server.governance.visibility import govern
from server.memory.coverage import covered_facts
from server.memory.facts import insert_fact
from server.provenance import stamp
from server.searchtext import match_any, term_match
from server.store.db import Store

WORDS = ["amber", "basil", "cedar", "dune", "ember"]


def _covered(con: sqlite3.Connection, matches: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    return covered_facts(con, match_any(list(matches)), matches, limit, None, 0)


async def _store(tmp_path: Path) -> tuple[Store, dict[int, set[str]], set[int]]:
    """300 facts, each holding a random few of WORDS (some none); every seventh forgotten."""
    store = await Store.open(tmp_path / "db.sqlite")
    await govern(store)
    rng = random.Random(11)
    held: dict[int, set[str]] = {}
    now = time.time()
    async with store.transaction() as conn:
        for i in range(300):
            words = {w for w in WORDS if rng.random() < 0.3}
            text = " ".join(sorted(words, key=lambda _w: rng.random())) + f" filler {i}"
            fid = await insert_fact(
                conn,
                stamp(f"https://h{i % 5}.example/{i}", "t"),
                kind="note",
                title="t",
                text=text,
                valid_at=now - i,
                granularity=ages.INSTANT,
                now=now,
            )
            held[fid] = words
        hidden = {fid for fid in held if fid % 7 == 0}
        for fid in hidden:
            await conn.execute("UPDATE facts SET invalid_at = ? WHERE id = ?", (now, fid))
    return store, held, hidden


async def test_newest_first_within_a_coverage_matches_the_oracle(tmp_path: Path) -> None:
    store, held, hidden = await _store(tmp_path)
    try:
        rng = random.Random(3)
        for _ in range(20):
            asked = rng.sample(WORDS, rng.randint(2, 4))
            matches = tuple(term_match(w) for w in asked)
            limit = rng.choice([5, 20, 400])
            got = await store.read_with(partial(_covered, matches=matches, limit=limit))
            oracle = sorted(
                ((len(held[f] & set(asked)), f) for f in held if f not in hidden and held[f] & set(asked)),
                key=lambda t: (-t[0], -t[1]),
            )[:limit]
            assert [(r["covered"], r["id"]) for r in got] == oracle, asked
            for r in got:
                assert {asked[int(t)] for t in r["terms"].split(",")} == held[r["id"]] & set(asked)
            assert not {r["id"] for r in got} & hidden
        assert hidden and any(held[f] for f in hidden)  # control: hidden facts hold asked words
    finally:
        await store.close()


async def test_ranked_within_a_coverage_keeps_the_coverage_order_and_bm25_inside_it(tmp_path: Path) -> None:
    store, held, hidden = await _store(tmp_path)
    try:
        asked = ["amber", "basil", "cedar"]
        matches = tuple(term_match(w) for w in asked)
        got = await store.read_with(
            lambda con: covered_facts(con, match_any(list(matches)), matches, 500, None, 10_000)
        )
        visible = [f for f in held if f not in hidden and held[f] & set(asked)]
        assert sorted(r["id"] for r in got) == sorted(visible)  # every visible one, no hidden one
        covered = [r["covered"] for r in got]
        assert covered == sorted(covered, reverse=True) and covered[0] == 3 and covered[-1] == 1
        for n in (1, 2, 3):
            ranks = [r["rank"] for r in got if r["covered"] == n]
            assert ranks == sorted(ranks) and len(set(ranks)) > 1  # bm25 orders inside (and varies)
    finally:
        await store.close()


async def test_a_host_excluded_and_nothing_asked_found(tmp_path: Path) -> None:
    store, held, _hidden = await _store(tmp_path)
    try:
        matches = (term_match("amber"), term_match("basil"))
        both = match_any(list(matches))
        every = await store.read_with(lambda con: covered_facts(con, both, matches, 500, None, 0))
        assert {r["source_host"] for r in every} == {f"h{i}.example" for i in range(5)}  # control
        left = await store.read_with(lambda con: covered_facts(con, both, matches, 500, "h0.example", 0))
        assert {r["source_host"] for r in left} == {f"h{i}.example" for i in range(1, 5)}
        none = (term_match("zeppelin"), term_match("quokka"))
        assert await store.read_with(lambda con: covered_facts(con, match_any(list(none)), none, 20, None, 0)) == []
    finally:
        await store.close()
