"""The any-term stage of the words lane: the visible facts holding the most of the asked terms.

Each term's rowids are read whole from the full-text index as one JSON array (a term asked here
is in at most search.COMMON facts), counted in numpy, and put in order: the most terms held
first, then the newest (rowid order, which is write order). The visibility rule is asked of
the best SCAN of them, in that order, until WINDOW are visible; when that leaves fewer than
`limit`, of all of them. Within a coverage, bm25 orders when the any-term MATCH has at most
`rank_cap` hits (bm25 of every hit, read once: FTS5 cannot rank a given set of rowids cheaply),
else the newest first (and then only the first `limit` visible ones are needed). Last, the
chosen facts' rows are read, through the rule.

Counting in SQL (the terms' rowids UNION ALL, GROUP BY rowid, ORDER BY the count) cost 4-8 ms a
query at 1M items; this costs 1-2 ms. It is synchronous: the server runs it on one of the
store's readers in one hop (Store.read_with), the bench on its own connection.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np

from server.governance.visibility import visible
from server.memory.facts import ANSWER_COLUMNS

VISIBLE_FACT = visible("facts", "f")
WINDOW = 400  # most hits ranked by bm25 for one MATCH (ranking costs ~20 us a hit)
SCAN = 4 * WINDOW  # candidates the rule is asked of first
HOST = "(:host IS NULL OR f.source_host != :host)"

COUNT_SQL = "SELECT COUNT(*) FROM (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? LIMIT ?)"
# one term's rowids, to count and order by coverage: no item is read here (the candidates and
# rows below are read through the rule)
_TERM_IDS_SQL = "SELECT json_group_array(rowid) FROM facts_fts WHERE facts_fts MATCH ?"
# the visible ones among the candidates, in the candidates' order (json_each reads its array in
# order, facts are looked up by id for each), the first :window
_CANDIDATES_SQL = f"""
SELECT top.key AS pos, f.valid_at AS valid_at
FROM json_each(:ids) top JOIN facts f ON f.id = top.value
WHERE {VISIBLE_FACT} AND {HOST}
LIMIT :window
"""  # noqa: S608 - built by visible()
_RANKS_SQL = "SELECT rowid, bm25(facts_fts) FROM facts_fts WHERE facts_fts MATCH ?"
_ROWS_SQL = f"""
SELECT {ANSWER_COLUMNS} FROM facts f WHERE f.id IN (SELECT value FROM json_each(:ids)) AND {VISIBLE_FACT}
"""  # noqa: S608 - built by visible()


def count_matches(con: sqlite3.Connection, match: str, cap: int) -> int:
    """How many facts (live or not) a MATCH finds, counted up to `cap` (cheap: no ranking)."""
    return int(con.execute(COUNT_SQL, (match, cap)).fetchone()[0])


def covered_facts(
    con: sqlite3.Connection, match: str, any_of: tuple[str, ...], limit: int, host: str | None, rank_cap: int
) -> list[dict[str, Any]]:
    """The best `limit` visible facts for an any-term stage (`match`: the OR of `any_of`), best
    first: each a fact row as a dict with `rank` (bm25, or 0.0 when newest first), `covered`
    (how many of `any_of` it holds) and `terms` (their indexes in `any_of`, comma-separated)."""
    n = count_matches(con, match, rank_cap + 1)
    if n == 0 or limit <= 0:
        return []
    lists = [np.sort(np.asarray(json.loads(con.execute(_TERM_IDS_SQL, (m,)).fetchone()[0]), np.int64)) for m in any_of]
    ids, counts = np.unique(np.concatenate(lists), return_counts=True)
    order = np.lexsort((-ids, -counts))  # the most terms held, then the newest
    ranked = n <= rank_cap
    window = WINDOW if ranked else limit
    found = _candidates(con, ids[order[:SCAN]], window, host)
    if len(found) < limit and len(order) > SCAN:  # hidden items among the best SCAN: all of them
        found = _candidates(con, ids[order], window, host)
    if ranked:
        ranks = dict(con.execute(_RANKS_SQL, (match,)).fetchall())
        picked = sorted(found, key=lambda c: (-counts[order[c[0]]], ranks.get(int(ids[order[c[0]]]), 0.0), -c[1]))
    else:
        ranks, picked = {}, found
    chosen = [int(ids[order[pos]]) for pos, _valid_at in picked[:limit]]
    cursor = con.cursor()
    cursor.row_factory = sqlite3.Row
    rows = {r["id"]: r for r in cursor.execute(_ROWS_SQL, {"ids": json.dumps(chosen)}).fetchall()}
    out = []
    for i in chosen:
        row = rows.get(i)
        if row is None:  # hidden between the two reads
            continue
        held = [str(t) for t, held_ids in enumerate(lists) if _holds(held_ids, i)]
        out.append({**dict(row), "rank": float(ranks.get(i, 0.0)), "covered": len(held), "terms": ",".join(held)})
    return out


def _candidates(con: sqlite3.Connection, ids: np.ndarray[Any, Any], window: int, host: str | None) -> list[Any]:
    """(position in `ids`, valid_at) of the first `window` visible facts of `ids`, in order."""
    params = {"ids": json.dumps(ids.tolist()), "window": window, "host": host}
    return [(int(pos), valid_at) for pos, valid_at in con.execute(_CANDIDATES_SQL, params).fetchall()]


def _holds(sorted_ids: np.ndarray[Any, Any], item: int) -> bool:
    at = int(np.searchsorted(sorted_ids, item))
    return at < len(sorted_ids) and int(sorted_ids[at]) == item
