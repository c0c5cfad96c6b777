"""THE visibility rule: a stored item is shown only while it is not forgotten and its host is
not `off` now. Every reader of the item tables says so in its SQL through `visible()`:

    f"SELECT ... FROM facts f WHERE f.source_url = ? AND {visible('facts', 'f')}"

which reads `f.invalid_at IS NULL AND wf_visible(f.source_host)` — forgotten rows (soft,
`invalid_at`) and rows of a host whose mode is `off` now (resolved by the one resolver from the
current policy snapshot, memoised per host per policy version) are never returned. Library
documents and their chunks are soft-forgotten too (when the person forgets a site's saved pages
with it); conversations are not (their turns are facts), so their clause is the host part
only. `wf_visible` is a SQL function installed on both store connections at start
(`install`). tests/test_visibility_readers.py finds every SQL reader of these tables and fails
on one that skips this rule.

The one variant is the export's `--include-off` (`visible(table, alias, include_off=True)`): it
lifts the site-mode half only, so items of `off` sites leave too while forgotten ones never do.
The readers test allows it only in the export's readers it lists.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from server.governance.policy import PolicyOwner
from server.governance.resolver import resolve

if TYPE_CHECKING:
    from server.store.db import Store

FUNCTION = "wf_visible"
# item tables -> whether they are soft-forgotten (carry invalid_at)
ITEM_TABLES: dict[str, bool] = {
    "facts": True,
    "activity": True,
    "conversations": False,
    "documents": True,
    "document_chunks": True,
}
# full-text tables are read only through a join back to their content table, which carries the rule
FTS_TABLES = {"facts_fts": "facts", "document_chunks_fts": "document_chunks"}
# index tables (no provenance of their own) are read only joined back to an item table they index
INDEX_TABLES = {
    "vectors": ("facts", "document_chunks"),
    "deep_fact_vectors": ("facts",),
    "deep_chunk_vectors": ("document_chunks",),
    "e5_fact_vectors": ("facts",),
    "e5_chunk_vectors": ("document_chunks",),
}
MEMO_MAX = 200_000  # hosts remembered per policy (~20 MB); a store of 1M items spans ~17k
_ALIAS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def visible(table: str, alias: str, *, include_off: bool = False) -> str:
    """The SQL condition under which a row `alias` of item table `table` may be shown; with
    `include_off` (the export's deliberate bypass) the host's site mode is not asked, but a
    forgotten row still never is."""
    if table not in ITEM_TABLES:
        raise ValueError(f"{table} is not an item table")
    if not _ALIAS.match(alias):
        raise ValueError("alias must be an SQL name")
    if include_off:
        return f"({alias}.invalid_at IS NULL)" if ITEM_TABLES[table] else "(1)"
    host = f"{FUNCTION}({alias}.source_host)"
    if table == "activity":
        # a row about a page (source_url) is an item; a governance row (a rule, a forget, an
        # undo: a host, no page) is the person's own action and stays in the log
        host = f"({alias}.source_url IS NULL OR {host})"
    if ITEM_TABLES[table]:
        return f"({alias}.invalid_at IS NULL AND {host})"
    return f"({host})"


class HostVisibility:
    """wf_visible(host) -> 1 / 0: is the host's mode other than `off` under the current policy?
    Memoised per host for one policy snapshot; runs in the store's connection threads (it only
    reads the owner's current snapshot, which is replaced whole, never changed in place)."""

    def __init__(self, owner: PolicyOwner) -> None:
        self.owner = owner
        self._snapshot: dict[str, Any] | None = None
        self._memo: dict[str, int] = {}

    def __call__(self, host: str | None) -> int:
        if host is None:
            return 1  # no host: nothing a site mode governs
        snapshot = self.owner.current
        if snapshot is not self._snapshot:  # a new policy (snapshots are replaced, never changed)
            self._snapshot, self._memo = snapshot, {}
        found = self._memo.get(host)
        if found is None:
            if len(self._memo) >= MEMO_MAX:
                self._memo = {}
            found = self._memo[host] = int(resolve(host, snapshot).mode != "off")
        return found


async def install(store: Store, owner: PolicyOwner) -> None:
    """Load the policy and register wf_visible on the store's connections (at start)."""
    await owner.load()
    await store.create_function(FUNCTION, 1, HostVisibility(owner))


async def govern(store: Store) -> PolicyOwner:
    """For a process that opens the store outside the server app (a CLI command, the MCP server):
    the policy owner, with wf_visible installed. Such a process does not see the server's rule
    edits as they happen: it calls `await owner.refresh()` before each read it answers."""
    owner = PolicyOwner(store)
    await install(store, owner)
    return owner
