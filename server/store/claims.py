"""Idempotency claims, recorded with the write they belong to.

The HTTP middleware (server.idempotency) sets CLAIM for a request carrying an Idempotency-Key;
Store.transaction calls `claim_in` before COMMIT, so the key commits together with the write:
after a crash between the commit and the answer, a retry finds the claim and is not written twice.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable

import aiosqlite


class Claim:
    """A key to record with the request's first write. `fingerprint` gives the hash of the
    request body (read by then), so that a key reused with another body can be told apart."""

    def __init__(self, key: str, route: str, fingerprint: Callable[[], str | None]) -> None:
        self.key, self.route, self.fingerprint, self.claimed = key, route, fingerprint, False


CLAIM: contextvars.ContextVar[Claim | None] = contextvars.ContextVar("idempotency_claim", default=None)


async def claim_in(conn: aiosqlite.Connection) -> None:
    """Called by Store.transaction before COMMIT: record the request's key with its write."""
    claim = CLAIM.get()
    if claim is not None and not claim.claimed:
        await conn.execute(
            "INSERT OR IGNORE INTO idempotency(key, route, status, response, at, body_sha256) "
            "VALUES (?, ?, 0, '', ?, ?)",
            (claim.key, claim.route, time.time(), claim.fingerprint()),
        )
        claim.claimed = True
